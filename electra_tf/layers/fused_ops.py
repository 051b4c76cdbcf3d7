"""The element-wise chains of a Transformer layer's training step as single XLA kernels with hand-written gradients.

Between its matmuls a Transformer layer runs chains of small element-wise ops: bias, GELU; bias, dropout, residual,
LayerNorm. As TensorFlow ops each is a pass over memory and a dispatch to the thread pool, forward and again (twice as
many) backward, which at fine-tuning's short widths costs as much as the matmuls they sit between. Here each chain is
one `tf.function(jit_compile=True)` forward and one backward (`tf.custom_gradient`), traced once for every shape
(`reduce_retracing`: eager calls at many batch widths do not retrace), compiled by XLA once per shape and dtype, and
shared by every layer.

Only training steps use them (`ElectraTransformerLayer` with `training=True`): inference, evaluation and export run the
Keras sub-layers, so a SavedModel holds no function that must be compiled by XLA (TF Serving's CPU build refuses those).
Both compute in float32 whatever the input dtype (LayerNorm does so in Keras too) and return the input dtype.
Dropout keeps a unit where its float32 uniform is >= `rate` and scales it by 1 / (1 - rate), as `ElectraDropout`.
"""

import tensorflow as tf

from electra_tf.layers.activations import standard_normal_cdf, standard_normal_pdf


def _dropout(values, keep_uniforms, rate):
    if keep_uniforms is None:
        return values
    return tf.where(keep_uniforms >= rate, values * (1.0 / (1.0 - rate)), tf.zeros_like(values))


@tf.function(jit_compile=True, reduce_retracing=True)
def _bias_gelu_forward(x, bias):
    pre_activation = tf.cast(x, tf.float32) + tf.cast(bias, tf.float32)
    return tf.cast(pre_activation * standard_normal_cdf(pre_activation), x.dtype), pre_activation


@tf.function(jit_compile=True, reduce_retracing=True)
def _bias_gelu_backward(upstream, pre_activation):
    derivative = standard_normal_cdf(pre_activation) + pre_activation * standard_normal_pdf(pre_activation)
    gradient = tf.cast(upstream, tf.float32) * derivative
    return gradient, tf.reduce_sum(gradient, axis=0)


def bias_gelu(x, bias):
    """Exact (erf) GELU of `x + bias`: `x` [tokens, units], `bias` [units]."""

    @tf.custom_gradient
    def forward(x, bias):
        outputs, pre_activation = _bias_gelu_forward(x, bias)

        def backward(upstream):
            gradient, bias_gradient = _bias_gelu_backward(upstream, pre_activation)
            return tf.cast(gradient, x.dtype), tf.cast(bias_gradient, bias.dtype)

        return outputs, backward

    return forward(x, bias)


@tf.function(jit_compile=True, reduce_retracing=True)
def _residual_layer_norm_forward(x, bias, residual, gamma, beta, keep_uniforms, rate, epsilon):
    summed = _dropout(tf.cast(x, tf.float32) + tf.cast(bias, tf.float32), keep_uniforms, rate)
    summed += tf.cast(residual, tf.float32)
    centred = summed - tf.reduce_mean(summed, axis=-1, keepdims=True)
    inverse_std = tf.math.rsqrt(tf.reduce_mean(tf.square(centred), axis=-1, keepdims=True) + epsilon)
    normalized = centred * inverse_std
    outputs = normalized * tf.cast(gamma, tf.float32) + tf.cast(beta, tf.float32)
    return tf.cast(outputs, x.dtype), normalized, inverse_std


@tf.function(jit_compile=True, reduce_retracing=True)
def _residual_layer_norm_backward(upstream, normalized, inverse_std, gamma, keep_uniforms, rate):
    upstream = tf.cast(upstream, tf.float32)
    gamma_gradient = tf.reduce_sum(upstream * normalized, axis=0)
    beta_gradient = tf.reduce_sum(upstream, axis=0)
    scaled = upstream * tf.cast(gamma, tf.float32)
    summed_gradient = inverse_std * (
        scaled
        - tf.reduce_mean(scaled, axis=-1, keepdims=True)
        - normalized * tf.reduce_mean(scaled * normalized, axis=-1, keepdims=True)
    )
    x_gradient = _dropout(summed_gradient, keep_uniforms, rate)
    return x_gradient, tf.reduce_sum(x_gradient, axis=0), summed_gradient, gamma_gradient, beta_gradient


def bias_dropout_residual_layer_norm(x, bias, residual, gamma, beta, epsilon, keep_uniforms=None, rate=0.0):
    """LayerNorm(dropout(x + bias) + residual) * gamma + beta over the last axis: a sub-layer's output projection
    `x` [tokens, hidden] (before its bias), followed by the post-LayerNorm residual block.

    `keep_uniforms` (float32, the shape of `x`) are the dropout's uniforms, None for no dropout.
    """

    @tf.custom_gradient
    def forward(x, bias, residual, gamma, beta):
        outputs, normalized, inverse_std = _residual_layer_norm_forward(
            x, bias, residual, gamma, beta, keep_uniforms, rate, epsilon
        )

        def backward(upstream):
            gradients = _residual_layer_norm_backward(upstream, normalized, inverse_std, gamma, keep_uniforms, rate)
            return tuple(
                tf.cast(gradient, tensor.dtype) for gradient, tensor in zip(gradients, (x, bias, residual, gamma, beta))
            )

        return outputs, backward

    return forward(x, bias, residual, gamma, beta)
