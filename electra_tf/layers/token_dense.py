"""A dense layer applied token by token as one 2-D matmul."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="electra_tf")
class TokenDense(keras.layers.Dense):
    """`keras.layers.Dense` that flattens the leading axes of its input to one before the matmul: the dense layer of
    every token-wise projection (encoder, embedding projection, heads), whose variables map onto the reference's
    `.../dense` scopes.

    Keras' Dense multiplies a [batch, length, in] input by its [in, out] kernel as a broadcast batch matmul, which
    TensorFlow runs as one small GEMM per sequence on the CPU; one [batch * length, in] GEMM is faster (1.7x for the
    attention projections of ELECTRA-Small, see docs/PERFORMANCE.md). A 2-D input is Dense's own path. Variables,
    config and checkpoints are Dense's.
    """

    def call(self, inputs, training=None):
        if len(inputs.shape) <= 2:
            return super().call(inputs, training=training)
        leading = tf.shape(inputs)[:-1]
        outputs = super().call(tf.reshape(inputs, [-1, inputs.shape[-1]]), training=training)
        return tf.reshape(outputs, tf.concat([leading, [self.units]], axis=0))
