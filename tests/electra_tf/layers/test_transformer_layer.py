"""`ElectraTransformerLayer(..., output_length=n)`: the first n positions of the whole layer's output, computed from
their own queries only, on every path (Keras sub-layers, the fused training kernels, int8 projections)."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers import ElectraTransformerLayer
from electra_tf.layers.transformer_layer import attention_bias_from_padding_mask

HIDDEN, HEADS, INTERMEDIATE = 32, 4, 64
PADDING_MASK = tf.constant([[1] * 7, [1] * 5 + [0] * 2, [1] * 3 + [0] * 4])


def _layer(quantized=False):
    layer = ElectraTransformerLayer(HIDDEN, HEADS, INTERMEDIATE, hidden_dropout=0.0, attention_dropout=0.0)
    layer.build((None, None, HIDDEN))
    rng = np.random.default_rng(0)
    for variable in layer.weights:  # biases, gammas and betas away from their 0 and 1, so that each one counts
        variable.assign(variable + rng.normal(0, 0.1, variable.shape).astype("float32"))
    if quantized:
        for dense in layer.dense_layers():
            dense.quantize("int8")
    return layer


@pytest.mark.parametrize("direction", [None, "left_to_right"])
@pytest.mark.parametrize("training", [False, True])
def test_the_first_positions_equal_the_whole_outputs_and_their_gradients(direction, training):
    layer = _layer()
    hidden = tf.random.stateless_normal([3, 7, HIDDEN], seed=[1, 2])
    bias = attention_bias_from_padding_mask(PADDING_MASK, tf.float32, direction)
    weights = tf.random.stateless_normal([3, 2, HIDDEN], seed=[3, 4])

    def outputs_and_gradients(output_length):
        with tf.GradientTape() as tape:
            tape.watch(hidden)
            outputs = layer(hidden, bias, training=training, output_length=output_length)[:, :2]
            loss = tf.reduce_sum(outputs * weights)
        return outputs, tape.gradient(loss, [hidden] + layer.trainable_weights)

    whole, whole_gradients = outputs_and_gradients(None)
    first, first_gradients = outputs_and_gradients(2)
    assert first.shape == (3, 2, HIDDEN)
    np.testing.assert_allclose(first, whole, atol=2e-6)
    for ours, reference in zip(first_gradients, whole_gradients, strict=True):
        np.testing.assert_allclose(ours, reference, atol=2e-5)


def test_int8_projections_give_the_first_positions_too():
    layer = _layer(quantized=True)
    hidden = tf.random.stateless_normal([3, 7, HIDDEN], seed=[5, 6])
    bias = attention_bias_from_padding_mask(PADDING_MASK, tf.float32)
    np.testing.assert_allclose(layer(hidden, bias, output_length=1), layer(hidden, bias)[:, :1], atol=2e-6)


@pytest.mark.parametrize("training", [False, True])
def test_only_the_key_and_value_projections_see_every_position(training):
    layer = _layer()
    function = tf.function(lambda hidden, bias: layer(hidden, bias, training=training, output_length=1))
    graph = function.get_concrete_function(
        tf.TensorSpec([3, 7, HIDDEN], tf.float32), tf.TensorSpec([3, 1, 1, 7], tf.float32)
    ).graph
    rows = sorted(
        (op.outputs[0].shape[0], op.outputs[0].shape[1]) for op in graph.get_operations() if op.type == "MatMul"
    )
    # query, attention output, intermediate, output for the 3 [CLS] tokens; key and value for all 21 tokens.
    expected = [(3, HIDDEN), (3, HIDDEN), (3, HIDDEN), (3, INTERMEDIATE), (21, 2 * HIDDEN)]
    assert rows == sorted(expected)
