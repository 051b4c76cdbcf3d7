"""The fused training kernels against the same computation in plain TensorFlow and Keras ops (values and gradients),
and the Transformer layer's training step against its inference path."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers import ElectraTransformerLayer
from electra_tf.layers.fused_ops import bias_dropout_residual_layer_norm, bias_gelu

TOKENS, HIDDEN, RATE, EPSILON = 37, 48, 0.1, 1e-12


def normal(shape, seed, scale=1.0):
    return tf.random.stateless_normal(shape, seed=[seed, 1]) * scale


def values_and_gradients(function, inputs, upstream):
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        outputs = function(*inputs)
    return outputs, tape.gradient(outputs, inputs, output_gradients=upstream)


def assert_close(ours, theirs, tolerance):
    for mine, reference in zip(tf.nest.flatten(ours), tf.nest.flatten(theirs)):
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=tolerance, atol=tolerance)


def test_bias_gelu_matches_tensorflows_exact_gelu_and_its_gradient():
    inputs = [normal([TOKENS, 4 * HIDDEN], 1, 2.0), normal([4 * HIDDEN], 2)]
    upstream = normal([TOKENS, 4 * HIDDEN], 3)
    ours = values_and_gradients(bias_gelu, inputs, upstream)
    theirs = values_and_gradients(lambda x, bias: tf.nn.gelu(x + bias, approximate=False), inputs, upstream)
    assert_close(ours, theirs, 1e-5)


@pytest.mark.parametrize("rate", [0.0, RATE])
def test_residual_layer_norm_matches_dropout_residual_and_keras_layer_norm(rate):
    layer_norm = keras.layers.LayerNormalization(epsilon=EPSILON)
    layer_norm.build((None, HIDDEN))
    layer_norm.gamma.assign(normal([HIDDEN], 4) + 1.0)
    layer_norm.beta.assign(normal([HIDDEN], 5))
    uniforms = tf.random.stateless_uniform([TOKENS, HIDDEN], seed=[6, 1]) if rate else None
    inputs = [normal([TOKENS, HIDDEN], 7), normal([HIDDEN], 8), normal([TOKENS, HIDDEN], 9),
              tf.convert_to_tensor(layer_norm.gamma), tf.convert_to_tensor(layer_norm.beta)]
    upstream = normal([TOKENS, HIDDEN], 10)

    def fused(x, bias, residual, gamma, beta):
        return bias_dropout_residual_layer_norm(x, bias, residual, gamma, beta, EPSILON, uniforms, rate)

    def plain(x, bias, residual, gamma, beta):
        projected = x + bias
        if rate:
            projected = tf.where(uniforms >= rate, projected / (1.0 - rate), 0.0)
        summed = projected + residual
        mean, variance = tf.nn.moments(summed, axes=[-1], keepdims=True)
        return (summed - mean) * tf.math.rsqrt(variance + EPSILON) * gamma + beta

    ours = values_and_gradients(fused, inputs, upstream)
    theirs = values_and_gradients(plain, inputs, upstream)
    assert_close(ours, theirs, 2e-5)
    # The plain reference is Keras' own LayerNormalization.
    np.testing.assert_allclose(layer_norm(plain(*inputs[:3], 1.0, 0.0)).numpy(), theirs[0].numpy(), atol=2e-5)
    if rate:  # dropped units pass no gradient to the projection or its bias
        assert np.all(ours[1][0].numpy()[uniforms.numpy() < rate] == 0)


def test_bfloat16_inputs_give_bfloat16_outputs_and_gradients_near_float32():
    inputs = [normal([TOKENS, HIDDEN], 11), normal([HIDDEN], 12), normal([TOKENS, HIDDEN], 13),
              tf.ones([HIDDEN]), tf.zeros([HIDDEN])]
    upstream = normal([TOKENS, HIDDEN], 14)
    low = [tf.cast(tensor, tf.bfloat16) for tensor in inputs[:3]] + inputs[3:]
    for function in (lambda *a: bias_dropout_residual_layer_norm(*a, EPSILON),
                     lambda x, bias, *_: bias_gelu(x, bias)):
        high_out, high_grads = values_and_gradients(function, inputs, upstream)
        low_out, low_grads = values_and_gradients(function, low, tf.cast(upstream, tf.bfloat16))
        assert low_out.dtype == tf.bfloat16
        assert low_grads[0].dtype == low_grads[1].dtype == tf.bfloat16
        np.testing.assert_allclose(tf.cast(low_out, tf.float32).numpy(), high_out.numpy(), atol=0.1)


def test_training_step_without_dropout_equals_the_inference_path_and_its_gradients():
    layer = ElectraTransformerLayer(HIDDEN, 4, 4 * HIDDEN, hidden_dropout=0.0, attention_dropout=0.0)
    hidden = normal([3, 11, HIDDEN], 15)
    mask = tf.constant([[1] * 11, [1] * 7 + [0] * 4, [1] * 2 + [0] * 9])
    bias = (1.0 - tf.cast(mask[:, None, None, :], tf.float32)) * -10000.0
    layer(hidden, bias)
    upstream = normal([3, 11, HIDDEN], 16)
    results = {}
    for training in (True, False):
        with tf.GradientTape() as tape:
            tape.watch(hidden)
            outputs = layer(hidden, bias, training=training)
        results[training] = (outputs, tape.gradient(outputs, [hidden] + layer.trainable_weights,
                                                    output_gradients=upstream))
    assert len(results[True][1]) == 1 + 16 and all(gradient is not None for gradient in results[True][1])
    assert_close(results[True], results[False], 2e-5)


def _xla_functions(function, *specs):
    library = tf.function(function).get_concrete_function(*specs).graph.as_graph_def().library
    return [f.signature.name for f in library.function if f.attr["_XlaMustCompile"].b]


def test_only_training_graphs_hold_xla_functions():
    layer = ElectraTransformerLayer(HIDDEN, 4, 4 * HIDDEN)
    layer.build((None, None, HIDDEN))
    specs = tf.TensorSpec([None, None, HIDDEN]), tf.TensorSpec([None, 1, 1, None])
    assert _xla_functions(lambda h, b: layer(h, b, training=False), *specs) == []  # what export traces
    assert _xla_functions(lambda h, b: layer(h, b, training=True), *specs)
