import keras
import numpy as np
import pytest
import tensorflow as tf
from scipy.special import erf

from electra_tf.layers.activations import gelu


def _reference(x):
    """x Phi(x) and its derivative Phi(x) + x phi(x), in float64 (SciPy's erf)."""
    cdf = 0.5 * (1.0 + erf(x / np.sqrt(2.0)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


def test_forward_is_tf_exact_gelu_and_gradient_matches_float64_reference():
    x = tf.constant(np.linspace(-8.0, 8.0, 2001), tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        outputs = gelu(x)
    np.testing.assert_array_equal(outputs.numpy(), tf.nn.gelu(x, approximate=False).numpy())
    values, derivatives = _reference(x.numpy().astype(np.float64))
    np.testing.assert_allclose(outputs.numpy(), values, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tape.gradient(outputs, x).numpy(), derivatives, rtol=1e-5, atol=1e-6)


def test_upstream_gradient_is_chained_and_bfloat16_stays_bfloat16():
    x = tf.constant([[-1.5, 0.0, 0.7], [2.0, -0.2, 3.0]], tf.bfloat16)
    upstream = tf.constant([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], tf.bfloat16)
    with tf.GradientTape() as tape:
        tape.watch(x)
        outputs = gelu(x)
    gradient = tape.gradient(outputs, x, output_gradients=upstream)
    assert outputs.dtype == gradient.dtype == tf.bfloat16
    _, derivatives = _reference(tf.cast(x, tf.float64).numpy())
    np.testing.assert_allclose(
        tf.cast(gradient, tf.float32).numpy(), tf.cast(upstream, tf.float32).numpy() * derivatives, rtol=2e-2, atol=2e-2
    )


def test_serialises_by_name():
    assert keras.activations.get(keras.activations.serialize(gelu)) is gelu
    layer = keras.layers.Dense(3, activation=gelu)
    assert keras.layers.Dense.from_config(layer.get_config()).activation is gelu


@pytest.mark.parametrize("shape", [(4,), (2, 3, 5)])
def test_shapes_are_kept(shape):
    assert gelu(tf.zeros(shape)).shape == shape
