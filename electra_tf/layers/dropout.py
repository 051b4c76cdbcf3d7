"""Dropout whose random numbers are 16 bits per decision, independent of the compute dtype."""

import keras
import tensorflow as tf

_LEVELS = 1 << 16


def dropout_multiplier(shape, rate, seed, dtype):
    """The inverted-dropout multiplier: 0 with probability `rate`, else 1 / (1 - rate), of `shape` and `dtype`.

    Each 32-bit Philox output gives two decisions (its two 16-bit halves compared with round(rate * 65536)), so `rate`
    is quantised to 1/65536 (0.1 -> 0.100006). Keras' dropout draws one uniform of the compute dtype per element,
    twice the random bits, and its bfloat16 uniforms cost 3x its float32 ones on this CPU (docs/PERFORMANCE.md).

    Args:
        shape: int32 shape of the output.
        rate: drop probability in [0, 1).
        seed: int32 [2] stateless seed.
        dtype: dtype of the multiplier (the activations').
    """
    size = tf.reduce_prod(shape)
    bits = tf.random.stateless_uniform([(size + 1) // 2], seed=seed, minval=None, maxval=None, dtype=tf.uint32)
    halves = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])[:size]
    keep = tf.reshape(halves >= tf.constant(round(rate * _LEVELS), tf.uint16), shape)
    return tf.where(keep, tf.constant(1.0 / (1.0 - rate), dtype), tf.constant(0.0, dtype))


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` drawing its mask with `dropout_multiplier` (same seed generator, same config).

    A `noise_shape` or a rate of 1 takes Keras' path.
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.noise_shape is not None or self.rate >= 1:
            return super().call(inputs, training=training)
        seed = tf.cast(tf.math.floormod(self.seed_generator.next(), tf.int32.max - 1), tf.int32)
        return inputs * dropout_multiplier(tf.shape(inputs), self.rate, seed, inputs.dtype)


def use_electra_dropout(layer):
    """Makes every plain `keras.layers.Dropout` inside `layer` (e.g. a keras-hub TransformerEncoder and its
    attention) an `ElectraDropout`, keeping the instances and their seed generators; returns how many."""
    count = 0
    for sublayer in layer._flatten_layers(include_self=True, recursive=True):
        if type(sublayer) is keras.layers.Dropout:
            sublayer.__class__ = ElectraDropout
            count += 1
    return count
