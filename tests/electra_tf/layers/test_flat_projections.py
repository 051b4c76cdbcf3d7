import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers.flat_projections import (FlatEinsumDense, flatten_attention_projections,
                                                split_projection_equation)


@pytest.mark.parametrize("equation, expected", [
    ("abc,cde->abde", ("ab", "c", "de")),    # Keras' query/key/value projection
    ("abcd,cde->abe", ("ab", "cd", "e")),    # its output projection
    ("ab,bc->ac", ("a", "b", "c")),
    ("aecd,abcd->acbe", None),               # attention scores: batch axes on both sides
    ("abc,dce->abde", None),                 # contracted axis not leading in the kernel
    ("abc,cd->adb", None),                   # output axes reordered
])
def test_split_projection_equation(equation, expected):
    assert split_projection_equation(equation) == expected


@pytest.mark.parametrize("equation, input_shape, output_shape, bias_axes", [
    ("abc,cde->abde", (3, 5, 8), (None, 2, 4), "de"),
    ("abcd,cde->abe", (3, 5, 2, 4), (None, 8), "e"),
])
def test_flat_layer_equals_stock_einsum_dense_with_gradients(equation, input_shape, output_shape, bias_axes):
    stock = keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes,
                                     bias_initializer="random_normal")
    stock.build(input_shape)
    flat = FlatEinsumDense(equation, output_shape, bias_axes=bias_axes)
    flat.build(input_shape)
    flat.set_weights(stock.get_weights())
    inputs = tf.random.stateless_normal(input_shape, seed=[1, 2])
    outputs = {}
    for name, layer in (("stock", stock), ("flat", flat)):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            result = layer(inputs)
            loss = tf.reduce_sum(result * tf.cos(result))
        outputs[name] = [result] + tape.gradient(loss, [inputs, layer.kernel, layer.bias])
    for stock_value, flat_value in zip(outputs["stock"], outputs["flat"]):
        np.testing.assert_allclose(flat_value.numpy(), stock_value.numpy(), rtol=1e-5, atol=1e-5)


def test_unsupported_equations_take_the_stock_path():
    layer = FlatEinsumDense("abc,dce->abde", (None, 2, 4))
    layer.build((3, 5, 8))
    kernel = layer.kernel.numpy()
    inputs = np.random.default_rng(0).normal(size=(3, 5, 8)).astype(np.float32)
    np.testing.assert_allclose(layer(inputs).numpy(), np.einsum("abc,dce->abde", inputs, kernel), rtol=1e-5,
                               atol=1e-5)


def test_attention_projections_become_flat_and_keep_outputs_and_variables():
    stock = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    flat = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    query = tf.random.stateless_normal((2, 6, 8), seed=[3, 4])
    stock(query, query)
    flat(query, query)
    flat.set_weights(stock.get_weights())
    names = [variable.path for variable in flat.weights]
    flatten_attention_projections(flat)
    projections = [flat._query_dense, flat._key_dense, flat._value_dense, flat._output_dense]
    assert all(type(projection) is FlatEinsumDense for projection in projections)
    assert [variable.path for variable in flat.weights] == names
    np.testing.assert_allclose(flat(query, query).numpy(), stock(query, query).numpy(), rtol=1e-5, atol=1e-6)
