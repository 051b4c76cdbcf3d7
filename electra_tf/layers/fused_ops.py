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
Dropout takes a key (`ElectraDropout.dropout_key`) and makes its decisions inside the kernel, forward and again
backward, as `ElectraDropout` does (`dropout.keep_decisions`): no mask or uniforms pass between the kernels.
"""

import tensorflow as tf

from electra_tf.layers.activations import standard_normal_cdf, standard_normal_pdf
from electra_tf.layers.dropout import dropped_out


def _dropout(values, dropout_key, rate):
    return values if dropout_key is None else dropped_out(values, dropout_key, rate)


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
def _residual_layer_norm_forward(x, bias, residual, gamma, beta, dropout_key, rate, epsilon):
    summed = _dropout(tf.cast(x, tf.float32) + tf.cast(bias, tf.float32), dropout_key, rate)
    summed += tf.cast(residual, tf.float32)
    centred = summed - tf.reduce_mean(summed, axis=-1, keepdims=True)
    inverse_std = tf.math.rsqrt(tf.reduce_mean(tf.square(centred), axis=-1, keepdims=True) + epsilon)
    normalized = centred * inverse_std
    outputs = normalized * tf.cast(gamma, tf.float32) + tf.cast(beta, tf.float32)
    return tf.cast(outputs, x.dtype), normalized, inverse_std


@tf.function(jit_compile=True, reduce_retracing=True)
def _residual_layer_norm_backward(upstream, normalized, inverse_std, gamma, dropout_key, rate):
    upstream = tf.cast(upstream, tf.float32)
    gamma_gradient = tf.reduce_sum(upstream * normalized, axis=0)
    beta_gradient = tf.reduce_sum(upstream, axis=0)
    scaled = upstream * tf.cast(gamma, tf.float32)
    summed_gradient = inverse_std * (
        scaled
        - tf.reduce_mean(scaled, axis=-1, keepdims=True)
        - normalized * tf.reduce_mean(scaled * normalized, axis=-1, keepdims=True)
    )
    x_gradient = _dropout(summed_gradient, dropout_key, rate)
    return x_gradient, tf.reduce_sum(x_gradient, axis=0), summed_gradient, gamma_gradient, beta_gradient


def bias_dropout_residual_layer_norm(x, bias, residual, gamma, beta, epsilon, dropout_key=None, rate=0.0):
    """LayerNorm(dropout(x + bias) + residual) * gamma + beta over the last axis: a sub-layer's output projection
    `x` [tokens, hidden] (before its bias), followed by the post-LayerNorm residual block.

    `dropout_key` (uint32 [2], `ElectraDropout.dropout_key`) keys the dropout's decisions (`dropout.keep_decisions`
    over `x`'s shape), None for no dropout.
    """

    @tf.custom_gradient
    def forward(x, bias, residual, gamma, beta):
        outputs, normalized, inverse_std = _residual_layer_norm_forward(
            x, bias, residual, gamma, beta, dropout_key, rate, epsilon
        )

        def backward(upstream):
            gradients = _residual_layer_norm_backward(upstream, normalized, inverse_std, gamma, dropout_key, rate)
            return tuple(
                tf.cast(gradient, tensor.dtype) for gradient, tensor in zip(gradients, (x, bias, residual, gamma, beta))
            )

        return outputs, backward

    return forward(x, bias, residual, gamma, beta)


@tf.function(jit_compile=True, reduce_retracing=True)
def _attention_probs_forward(scores, attention_bias, dropout_key, rate, scale):
    logits = tf.cast(scores, tf.float32) * scale + tf.cast(attention_bias, tf.float32)
    probs = tf.nn.softmax(logits, axis=-1)
    return tf.cast(_dropout(probs, dropout_key, rate), scores.dtype), probs


@tf.function(jit_compile=True, reduce_retracing=True)
def _attention_probs_backward(upstream, probs, dropout_key, rate, scale):
    probs_gradient = _dropout(tf.cast(upstream, tf.float32), dropout_key, rate)
    return (probs_gradient - tf.reduce_sum(probs_gradient * probs, axis=-1, keepdims=True)) * probs * scale


def attention_probs(scores, attention_bias, scale, dropout_key=None, rate=0.0):
    """dropout(softmax(`scores` x `scale` + `attention_bias`)) over the last axis: a self-attention's probabilities
    from its query-key products `scores` [batch, heads, queries, keys] and the additive `attention_bias` (broadcast to
    them). `dropout_key` as `bias_dropout_residual_layer_norm`'s. The bias is a constant of the inputs (padding, causal
    or ALiBi): it gets no gradient."""

    @tf.custom_gradient
    def forward(scores):
        outputs, probs = _attention_probs_forward(scores, attention_bias, dropout_key, rate, scale)

        def backward(upstream):
            gradient = _attention_probs_backward(upstream, probs, dropout_key, rate, scale)
            return tf.cast(gradient, scores.dtype)

        return outputs, backward

    return forward(scores)
