import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers.dropout import ElectraDropout

RATE = 0.1


def drop_fraction(outputs):
    return float(tf.reduce_mean(tf.cast(tf.equal(outputs, 0), tf.float64)))


def test_float32_masks_are_keras_own():
    inputs = tf.random.stateless_normal([64, 33, 17], seed=[1, 2]) + 5.0  # no zeros of its own
    ours, theirs = ElectraDropout(RATE, seed=7), keras.layers.Dropout(RATE, seed=7)
    for _ in range(3):  # and the two seed streams advance alike
        np.testing.assert_array_equal(ours(inputs, training=True).numpy(), theirs(inputs, training=True).numpy())


def test_bfloat16_drops_the_reference_rate_where_keras_drops_13_of_128():
    inputs = tf.ones([2_000_000], tf.bfloat16)
    sigma = math.sqrt(RATE * (1 - RATE) / 2_000_000)
    ours = ElectraDropout(RATE, seed=3, dtype="mixed_bfloat16")(inputs, training=True)
    keras_rate = drop_fraction(keras.layers.Dropout(RATE, seed=3, dtype="mixed_bfloat16")(inputs, training=True))
    assert abs(drop_fraction(ours) - RATE) < 5 * sigma
    assert abs(keras_rate - 13 / 128) < 5 * sigma  # what this layer exists to avoid (bfloat16 uniforms are k / 128)
    assert ours.dtype == tf.bfloat16
    kept = tf.boolean_mask(ours, ours != 0)
    np.testing.assert_array_equal(kept.numpy(), np.full(kept.shape, tf.cast(1 / (1 - RATE), tf.bfloat16).numpy()))


def test_bfloat16_masks_are_seeded_and_fresh_per_call():
    inputs = tf.ones([4096], tf.bfloat16)
    first, second = (ElectraDropout(RATE, seed=11, dtype="mixed_bfloat16") for _ in range(2))
    a, b = first(inputs, training=True), first(inputs, training=True)
    np.testing.assert_array_equal(a.numpy(), second(inputs, training=True).numpy())
    assert not np.array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_inference_and_rate_zero_pass_inputs_through(policy):
    inputs = tf.cast(tf.reshape(tf.range(12), [3, 4]), keras.DTypePolicy(policy).compute_dtype)
    for rate, training in ((RATE, False), (0.0, True)):
        outputs = ElectraDropout(rate, dtype=policy)(inputs, training=training)
        assert outputs.dtype == inputs.dtype
        np.testing.assert_array_equal(outputs.numpy(), inputs.numpy())


def test_config_round_trip_and_serialization():
    layer = ElectraDropout(RATE, seed=5, name="drop")
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is ElectraDropout and restored.get_config() == layer.get_config()
