import math
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers.dropout import ElectraDropout, dropped_out, keep_decisions, mix32

RATE = 0.1


def drop_fraction(outputs):
    return float(tf.reduce_mean(tf.cast(tf.equal(outputs, 0), tf.float64)))


def lowbias32(word):
    """Wellons' lowbias32 in Python integers: the reference the tensor version is checked against."""
    word ^= word >> 16
    word = (word * 0x7FEB352D) & 0xFFFFFFFF
    word ^= word >> 15
    word = (word * 0x846CA68B) & 0xFFFFFFFF
    return word ^ (word >> 16)


def test_mix32_is_lowbias32():
    words = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 123456789]
    np.testing.assert_array_equal(
        mix32(tf.constant(words, tf.uint32)).numpy(), np.array([lowbias32(word) for word in words], np.uint32)
    )


def _python_decisions(shape, key, rate):
    positions = range(int(np.prod(shape)))
    bits = [lowbias32(lowbias32(lowbias32((position + key[0]) % 2**32) ^ key[1])) for position in positions]
    return (np.array(bits, np.int64) >= round(rate * 2**32)).reshape(shape)


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_keep_decisions_follow_the_keyed_hash_inside_and_outside_xla(rate):
    key = [0x9E3779B9, 12345]
    decisions = tf.function(keep_decisions, jit_compile=True)
    for function in (keep_decisions, decisions):
        np.testing.assert_array_equal(
            function([3, 4, 5], tf.constant(key, tf.uint32), rate).numpy(), _python_decisions([3, 4, 5], key, rate)
        )


def test_keep_decisions_of_tensors_of_every_rank_in_one_compiled_function():
    """As a compiled dropout traces them: after a few shapes the trace is of a tensor of unknown rank."""
    key = [7, 0xDEADBEEF]
    decisions = tf.function(
        lambda values: keep_decisions(tf.shape(values), tf.constant(key, tf.uint32), RATE),
        jit_compile=True,
        reduce_retracing=True,
    )
    for shape in ([3, 4, 5], [2, 3, 2, 5], [60], [4, 15], [1, 2, 3, 2, 5], []):
        np.testing.assert_array_equal(decisions(tf.zeros(shape)).numpy(), _python_decisions(shape, key, RATE))


def test_compiled_decisions_hold_no_constant_of_the_tensor_size():
    """XLA folds whatever depends on the shape alone into constants: the positions must depend on the key."""
    compiled = tf.function(lambda values, key: dropped_out(values, key, RATE), jit_compile=True)
    for shape in ([224, 256], [16, 4, 14, 14]):
        hlo = compiled.experimental_get_compiler_ir(tf.zeros(shape), tf.constant([1, 2], tf.uint32))("optimized_hlo")
        constant_shapes = re.findall(r"= \w+\[([\d,]*)\]\S* constant\(", hlo)
        assert constant_shapes and all(not dims for dims in constant_shapes), constant_shapes


def test_masks_drop_the_rate_independently_of_position_and_key():
    shape, count = [512, 2048], 512 * 2048
    first, second = (keep_decisions(shape, tf.constant(key, tf.uint32), RATE).numpy() for key in ([1, 2], [1, 3]))
    sigma = math.sqrt(RATE * (1 - RATE) / count)
    assert abs((1 - first.mean()) - RATE) < 5 * sigma
    # Units dropped under both keys, and dropped next to a dropped unit: the rate squared, as for independent draws.
    both_sigma = math.sqrt(RATE**2 * (1 - RATE**2) / count)
    assert abs(np.mean(~first & ~second) - RATE**2) < 5 * both_sigma
    assert abs(np.mean(~first[:, 1:] & ~first[:, :-1]) - RATE**2) < 5 * both_sigma
    assert abs(np.mean(~first[1:] & ~first[:-1]) - RATE**2) < 5 * both_sigma
    # No row or column is favoured: the drop rates of the rows spread as binomial counts do.
    row_rates = 1 - first.mean(axis=1)
    assert abs(row_rates.std() - math.sqrt(RATE * (1 - RATE) / 2048)) < 0.15 * math.sqrt(RATE * (1 - RATE) / 2048)


def test_float32_masks_are_seeded_fresh_per_call_and_pass_the_gradient_of_kept_units():
    inputs = tf.random.stateless_normal([64, 33, 17], seed=[1, 2]) + 5.0  # no zeros of its own
    first, second = ElectraDropout(RATE, seed=7), ElectraDropout(RATE, seed=7)
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        outputs = first(inputs, training=True)
    gradient = tape.gradient(outputs, inputs, output_gradients=tf.ones_like(inputs))
    np.testing.assert_array_equal(outputs.numpy(), second(inputs, training=True).numpy())
    assert not np.array_equal(outputs.numpy(), first(inputs, training=True).numpy())
    kept = outputs.numpy() != 0
    np.testing.assert_allclose(outputs.numpy()[kept], inputs.numpy()[kept] / (1 - RATE), rtol=1e-6)
    np.testing.assert_allclose(gradient.numpy(), np.where(kept, 1 / (1 - RATE), 0.0), rtol=1e-6)
    assert abs(drop_fraction(outputs) - RATE) < 5 * math.sqrt(RATE * (1 - RATE) / outputs.shape.num_elements())


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
