"""Dropout whose keep-or-drop decisions are a keyed hash of each unit's position, computed where they are applied.

A unit of a tensor is kept when the 32-bit hash of its position (its index in row-major order) under a 64-bit key is
at least `rate` x 2^32, and a kept unit is scaled by 1 / (1 - rate). The key is drawn from the dropout layer's seed
generator once per call, so that masks are fresh at every call and reproducible from the seed.

Why not TensorFlow's random ops: on a CPU their Philox draws about 3 ns per number (a fine-tuning step of ELECTRA-Small
draws about 1.5 million for a micro-batch of 16 examples 14 tokens long), and the uniforms they return are one more
tensor to write, keep for the backward pass and read again. The hash is a few integer operations per unit, which XLA
vectorises inside the kernels that apply the mask (`fused_ops`): forward and backward recompute the same decisions
from the key, and no mask is stored. Being 32-bit integers, the decisions drop the rate asked for within 2^-32
whatever the compute dtype (a bfloat16 uniform, Keras' draw under mixed_bfloat16, takes one of 128 values and drops
13/128 of the units at rate 0.1).

The hash is Wellons' `lowbias32` (https://nullprogram.com/blog/2018/07/31/), a bijection of 32-bit words with a
low avalanche bias, applied three times with the two key words mixed in: hash(hash(hash(position + k0) ^ k1)). The
first key word enters before any mixing, so that no part of the hash is a constant of the shape (XLA would fold it
into a constant as large as the tensor); the second between mixing rounds, so that masks under keys with different
second words are not shifts of one another (keys are random: two calls share a second word with probability 2^-32).
Positions are 32-bit: tensors of up to 2^31 units.
"""

import keras
import tensorflow as tf

# `lowbias32`'s multipliers and shifts.
_MULTIPLIERS = (0x7FEB352D, 0x846CA68B)
_SHIFTS = (16, 15, 16)


def mix32(words):
    """`lowbias32` of each of `words` (uint32): x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b;
    x ^= x >> 16, all modulo 2^32."""
    for shift, multiplier in zip(_SHIFTS, _MULTIPLIERS + (None,), strict=True):
        words = tf.bitwise.bitwise_xor(words, tf.bitwise.right_shift(words, tf.constant(shift, tf.uint32)))
        if multiplier is not None:
            words = words * tf.constant(multiplier, tf.uint32)
    return words


def keep_decisions(shape, key, rate):
    """Boolean tensor of `shape`: True where a unit is kept by dropout at `rate` under `key`.

    Args:
        shape: the shape of the tensor dropped out (a list or a 1-D int32 tensor), fewer than 2^31 units.
        key: uint32 [2], from `ElectraDropout.dropout_key`.
        rate: the fraction of units dropped, in [0, 1).

    The unit at row-major position i is kept when mix32(mix32(mix32(i + key[0]) ^ key[1])) >= round(rate x 2^32)
    (additions modulo 2^32): the same decisions on every device and inside or outside XLA.
    """
    bits = mix32(mix32(tf.bitwise.bitwise_xor(mix32(_offset_positions(shape, key[0])), key[1])))
    threshold = min(round(rate * 2**32), 2**32 - 1)
    return bits >= tf.constant(threshold, tf.uint32)


def _offset_positions(shape, offset):
    """uint32 tensor of `shape`: each unit's row-major position plus the uint32 scalar `offset` (modulo 2^32).

    Made of a range over the rows (every axis but the last), offset, and one over the last axis, which XLA vectorises
    (a range over every unit reshaped to `shape` costs a division per unit in a fused kernel). The offset enters the
    rows' range: with it the positions depend on a kernel's input, and XLA cannot fold them into a constant as large as
    the tensor for every shape it compiles.
    """
    shape = tf.cast(tf.convert_to_tensor(shape), tf.int32)
    columns = tf.concat([[1], shape], axis=0)[-1]  # 1 for a scalar
    row_starts = tf.cast(tf.range(tf.reduce_prod(shape[:-1])), tf.uint32) * tf.cast(columns, tf.uint32) + offset
    positions = row_starts[:, tf.newaxis] + tf.cast(tf.range(columns), tf.uint32)
    return tf.reshape(positions, shape)


def dropped_out(values, key, rate):
    """`values` with the units `keep_decisions` drops set to 0 and the others scaled by 1 / (1 - rate), in
    `values`' dtype."""
    scaled = values * tf.constant(1.0 / (1.0 - rate), values.dtype)
    return tf.where(keep_decisions(tf.shape(values), key, rate), scaled, tf.zeros([], values.dtype))


@tf.function(jit_compile=True, reduce_retracing=True)
def _compiled_dropout(values, key, rate):
    @tf.custom_gradient
    def forward(values):
        def backward(upstream):  # the same decisions, recomputed from the key
            return dropped_out(upstream, key, rate)

        return dropped_out(values, key, rate), backward

    return forward(values)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` whose training-time masks are `keep_decisions` under a key drawn from the layer's seed
    generator at each call (see the module's docstring): one XLA kernel forward and one backward, whatever the
    compute dtype. Outside training, at rate 0, or with a `noise_shape`, the layer is Keras' own.
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0 or self.rate >= 1 or self.noise_shape is not None:
            return super().call(inputs, training=training)
        return _compiled_dropout(tf.convert_to_tensor(inputs), self.dropout_key(), self.rate)

    def dropout_key(self):
        """A fresh uint32 [2] key for `keep_decisions` from this layer's seed generator, or None when the layer drops
        nothing (rate 0): for callers that apply the dropout inside a fused kernel of their own."""
        if self.rate == 0:
            return None
        words = keras.random.randint([2], -(2**31), 2**31 - 1, dtype="int32", seed=self.seed_generator)
        return tf.bitcast(words, tf.uint32)
