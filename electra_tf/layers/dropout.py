"""Dropout whose keep-or-drop decisions come from float32 uniforms whatever the compute dtype."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` that draws its uniforms in float32 under a 16-bit compute dtype.

    Keras draws them in the compute dtype. A bfloat16 uniform takes one of 128 values (k / 128), so under
    mixed_bfloat16 rate 0.1 drops 13/128 = 10.16 % of the units instead of the reference's 10 %, and bfloat16 uniforms
    cost more CPU to generate than float32 ones (docs/PERFORMANCE.md). Here the decision `u >= rate` is taken on a
    float32 `u` drawn from the layer's seed generator, and the kept units are scaled by 1 / (1 - rate) in the compute
    dtype, as Keras does. In float32, with a `noise_shape`, or outside training the layer is exactly Keras' (same
    seed stream, same masks).
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0 or self.rate >= 1 or self.noise_shape is not None:
            return super().call(inputs, training=training)
        inputs = tf.convert_to_tensor(inputs)
        if inputs.dtype == tf.float32 or inputs.dtype == tf.float64:
            return super().call(inputs, training=training)
        uniform = self.keep_uniforms(tf.shape(inputs))
        scaled = inputs * tf.constant(1.0 / (1.0 - self.rate), inputs.dtype)
        return tf.where(uniform >= self.rate, scaled, tf.zeros([], inputs.dtype))

    def keep_uniforms(self, shape):
        """Float32 uniforms of `shape` from this layer's seed generator: a unit is kept where its uniform is >=
        `rate` (and scaled by 1 / (1 - rate)). For callers that apply the dropout inside a fused kernel."""
        return keras.random.uniform(shape, dtype="float32", seed=self.seed_generator)
