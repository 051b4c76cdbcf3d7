import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers.dropout import ElectraDropout, dropout_multiplier, use_electra_dropout

SEED = tf.constant([7, 11], tf.int32)


def test_multiplier_equals_a_numpy_reading_of_the_same_random_bits():
    shape, rate = (3, 5, 7), 0.1   # 105 elements: an odd count, so the last 32-bit draw is half used
    multiplier = dropout_multiplier(tf.constant(shape), rate, SEED, tf.float32).numpy()
    bits = tf.random.stateless_uniform([53], seed=SEED, minval=None, maxval=None, dtype=tf.uint32).numpy()
    halves = bits.astype("<u4").view("<u2")[:105].reshape(shape)
    expected = np.where(halves >= 6554, 1 / 0.9, 0.0).astype(np.float32)
    np.testing.assert_array_equal(multiplier, expected)


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_drop_fraction_and_mean(rate):
    multiplier = dropout_multiplier(tf.constant([1000, 1000]), rate, SEED, tf.float32).numpy()
    dropped = np.mean(multiplier == 0)
    assert abs(dropped - rate) < 5 * np.sqrt(rate * (1 - rate) / 1e6)
    assert set(np.unique(multiplier)) == {0.0, np.float32(1 / (1 - rate))}
    assert abs(multiplier.mean() - 1.0) < 0.01


def test_multiplier_follows_the_seed_and_the_dtype():
    first = dropout_multiplier(tf.constant([64, 64]), 0.1, SEED, tf.bfloat16)
    assert first.dtype == tf.bfloat16
    again = dropout_multiplier(tf.constant([64, 64]), 0.1, SEED, tf.bfloat16)
    other = dropout_multiplier(tf.constant([64, 64]), 0.1, SEED + 1, tf.bfloat16)
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert not np.array_equal(first.numpy(), other.numpy())


def test_layer_is_identity_at_inference_and_draws_new_masks_per_call():
    layer = ElectraDropout(0.1, seed=3)
    inputs = tf.ones((32, 64))
    np.testing.assert_array_equal(layer(inputs, training=False).numpy(), inputs.numpy())
    first, second = layer(inputs, training=True).numpy(), layer(inputs, training=True).numpy()
    assert set(np.unique(first)) == {0.0, np.float32(1 / 0.9)}
    assert not np.array_equal(first, second)
    assert ElectraDropout.from_config(layer.get_config()).rate == 0.1


def test_noise_shape_keeps_keras_semantics():
    layer = ElectraDropout(0.5, noise_shape=(None, 1), seed=1)
    outputs = layer(tf.ones((8, 16)), training=True).numpy()
    assert all(len(set(row)) == 1 for row in outputs)  # one decision per row


def test_transformer_layer_dropouts_are_replaced_in_place():
    layer = keras_hub.layers.TransformerEncoder(intermediate_dim=16, num_heads=2, dropout=0.1)
    layer.build((None, None, 8))
    config = layer.get_config()
    assert use_electra_dropout(layer) == 3  # attention probabilities, attention output, feed-forward output
    assert layer.get_config() == config
    assert not [sublayer for sublayer in layer._flatten_layers() if type(sublayer) is keras.layers.Dropout]
    inputs = tf.random.stateless_normal((2, 5, 8), seed=[1, 1])
    np.testing.assert_allclose(layer(inputs, training=False).numpy(), layer(inputs, training=False).numpy())
