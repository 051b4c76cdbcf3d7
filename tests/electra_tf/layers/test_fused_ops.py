"""The fused training kernels against the same computation in plain TensorFlow and Keras ops (values and gradients),
and the Transformer layer's training step against its inference path."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers import ElectraTransformerLayer
from electra_tf.layers.dropout import keep_decisions
from electra_tf.layers.fused_ops import attention_probs, bias_dropout_residual_layer_norm, bias_gelu

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
    key = tf.constant([6, 1], tf.uint32) if rate else None
    keep = keep_decisions([TOKENS, HIDDEN], key, rate) if rate else None
    inputs = [
        normal([TOKENS, HIDDEN], 7),
        normal([HIDDEN], 8),
        normal([TOKENS, HIDDEN], 9),
        tf.convert_to_tensor(layer_norm.gamma),
        tf.convert_to_tensor(layer_norm.beta),
    ]
    upstream = normal([TOKENS, HIDDEN], 10)

    def fused(x, bias, residual, gamma, beta):
        return bias_dropout_residual_layer_norm(x, bias, residual, gamma, beta, EPSILON, key, rate)

    def plain(x, bias, residual, gamma, beta):
        projected = x + bias
        if rate:
            projected = tf.where(keep, projected / (1.0 - rate), 0.0)
        summed = projected + residual
        mean, variance = tf.nn.moments(summed, axes=[-1], keepdims=True)
        return (summed - mean) * tf.math.rsqrt(variance + EPSILON) * gamma + beta

    ours = values_and_gradients(fused, inputs, upstream)
    theirs = values_and_gradients(plain, inputs, upstream)
    assert_close(ours, theirs, 2e-5)
    # The plain reference is Keras' own LayerNormalization.
    np.testing.assert_allclose(layer_norm(plain(*inputs[:3], 1.0, 0.0)).numpy(), theirs[0].numpy(), atol=2e-5)
    if rate:  # dropped units pass no gradient to the projection or its bias
        assert np.all(ours[1][0].numpy()[~keep.numpy()] == 0)


@pytest.mark.parametrize("rate", [0.0, RATE])
def test_attention_probs_match_softmax_and_dropout_and_their_gradient(rate):
    scores = normal([3, 4, 11, 11], 21, 3.0)
    padding = tf.constant([[1] * 11, [1] * 7 + [0] * 4, [1] * 2 + [0] * 9], tf.float32)
    bias = (1.0 - padding[:, None, None, :]) * -10000.0
    key = tf.constant([3, 9], tf.uint32) if rate else None
    upstream = normal([3, 4, 11, 11], 22)
    scale = 0.125

    def plain(scores):
        probs = tf.nn.softmax(scores * scale + bias, axis=-1)
        return tf.where(keep_decisions(tf.shape(probs), key, rate), probs / (1.0 - rate), 0.0) if rate else probs

    ours = values_and_gradients(lambda s: attention_probs(s, bias, scale, key, rate), [scores], upstream)
    assert_close(ours, values_and_gradients(plain, [scores], upstream), 2e-5)
    assert np.all(ours[0].numpy()[np.broadcast_to(padding.numpy()[:, None, None, :] == 0, scores.shape)] == 0)
    low_out, (low_gradient,) = values_and_gradients(
        lambda s: attention_probs(s, bias, scale, key, rate),
        [tf.cast(scores, tf.bfloat16)],
        tf.cast(upstream, tf.bfloat16),
    )
    assert low_out.dtype == low_gradient.dtype == tf.bfloat16
    np.testing.assert_allclose(tf.cast(low_out, tf.float32).numpy(), ours[0].numpy(), atol=0.05)


def test_bfloat16_inputs_give_bfloat16_outputs_and_gradients_near_float32():
    inputs = [
        normal([TOKENS, HIDDEN], 11),
        normal([HIDDEN], 12),
        normal([TOKENS, HIDDEN], 13),
        tf.ones([HIDDEN]),
        tf.zeros([HIDDEN]),
    ]
    upstream = normal([TOKENS, HIDDEN], 14)
    low = [tf.cast(tensor, tf.bfloat16) for tensor in inputs[:3]] + inputs[3:]
    for function in (lambda *a: bias_dropout_residual_layer_norm(*a, EPSILON), lambda x, bias, *_: bias_gelu(x, bias)):
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
        results[training] = (
            outputs,
            tape.gradient(outputs, [hidden] + layer.trainable_weights, output_gradients=upstream),
        )
    assert len(results[True][1]) == 1 + 16 and all(gradient is not None for gradient in results[True][1])
    assert_close(results[True], results[False], 2e-5)


def _keras_sublayers_step(layer, hidden, bias):
    """The layer's training step written with its Keras sub-layers (Dense, Dropout, LayerNormalization) in turn."""
    batch, length = hidden.shape[0], hidden.shape[1]

    def heads(dense):
        split = tf.reshape(dense(hidden), [batch, length, layer.num_heads, layer.head_size])
        return tf.transpose(split, [0, 2, 1, 3])

    scores = tf.matmul(heads(layer.query_dense), heads(layer.key_dense), transpose_b=True) * layer.head_size**-0.5
    probs = layer.attention_probs_dropout(tf.nn.softmax(scores + bias, axis=-1), training=True)
    context = tf.reshape(tf.transpose(tf.matmul(probs, heads(layer.value_dense)), [0, 2, 1, 3]), hidden.shape)
    attended = layer.attention_output_dropout(layer.attention_output_dense(context), training=True)
    attended = layer.attention_layer_norm(attended + hidden)
    transformed = layer.output_dropout(layer.output_dense(layer.intermediate_dense(attended)), training=True)
    return layer.output_layer_norm(transformed + attended)


def test_training_step_with_dropout_equals_keras_sublayers_with_the_same_seeds():
    hidden = normal([3, 11, HIDDEN], 17)
    bias = tf.zeros([3, 1, 1, 11])
    upstream = normal([3, 11, HIDDEN], 18)
    results = []
    for step in (
        lambda layer: layer(hidden, bias, training=True),
        lambda layer: _keras_sublayers_step(layer, hidden, bias),
    ):
        keras.utils.set_random_seed(5)  # the same weights and dropout seed generators for both layers
        layer = ElectraTransformerLayer(HIDDEN, 4, 4 * HIDDEN, hidden_dropout=0.3, attention_dropout=0.3)
        layer.build((None, None, HIDDEN))
        with tf.GradientTape() as tape:
            tape.watch(hidden)
            outputs = step(layer)
        results.append((outputs, tape.gradient(outputs, [hidden] + layer.trainable_weights, output_gradients=upstream)))
    # The fused kernels draw their keys from the same seed generators as the Dropout layers: the same masks.
    assert_close(results[0], results[1], 2e-5)
    plain = ElectraTransformerLayer(HIDDEN, 4, 4 * HIDDEN, hidden_dropout=0.0, attention_dropout=0.0)
    plain.build((None, None, HIDDEN))
    plain.set_weights(layer.get_weights())
    # Dropout did drop units: without it the outputs move by far more than the tolerance above.
    assert np.abs(plain(hidden, bias).numpy() - results[0][0].numpy()).max() > 1e-2


def test_quantized_projections_are_computed_by_their_own_layers():
    keras.utils.set_random_seed(7)
    layer = ElectraTransformerLayer(HIDDEN, 4, 4 * HIDDEN, hidden_dropout=0.0, attention_dropout=0.0)
    hidden = normal([2, 5, HIDDEN], 19)
    bias = tf.zeros([2, 1, 1, 5])
    float_outputs = layer(hidden, bias).numpy()
    for dense in layer.dense_layers():
        dense.quantize("int8")  # an int8 kernel and per-unit scales: reading `kernel` alone would be wrong
    for training in (False, True):
        # int8 rounding moves the outputs a little; an int8 kernel taken for a float one moves them by units.
        np.testing.assert_allclose(layer(hidden, bias, training=training).numpy(), float_outputs, atol=0.05)


def _xla_functions(function, *specs):
    library = tf.function(function).get_concrete_function(*specs).graph.as_graph_def().library
    return [f.signature.name for f in library.function if f.attr["_XlaMustCompile"].b]


def test_only_training_graphs_hold_xla_functions():
    layer = ElectraTransformerLayer(HIDDEN, 4, 4 * HIDDEN)
    layer.build((None, None, HIDDEN))
    specs = tf.TensorSpec([None, None, HIDDEN]), tf.TensorSpec([None, 1, 1, None])
    assert _xla_functions(lambda h, b: layer(h, b, training=False), *specs) == []  # what export traces
    assert _xla_functions(lambda h, b: layer(h, b, training=True), *specs)
