"""Every token-wise projection is one 2-D GEMM over all tokens: CPU TensorFlow runs a broadcast batch matmul as one
small GEMM per sequence, measured 1.7x slower for the attention projections (docs/PERFORMANCE.md)."""

import keras_hub
import tensorflow as tf

from electra_tf.layers import DiscriminatorHead, ElectraMaskedLMHead, ElectraTransformerLayer


def _matmuls(function, *specs):
    graph = tf.function(function).get_concrete_function(*specs).graph
    return sorted(op.type for op in graph.get_operations() if "MatMul" in op.type)


def test_projections_are_2d_gemms_and_only_attention_is_batched():
    hidden = tf.TensorSpec([None, None, 32], tf.float32)
    layer = ElectraTransformerLayer(32, 4, 64)
    layer.build((None, None, 32))
    bias = tf.TensorSpec([None, 1, 1, None], tf.float32)
    # query, key and value as one, attention output, intermediate, output; the scores and the weighted sum per head.
    assert _matmuls(layer, hidden, bias) == ["BatchMatMulV2"] * 2 + ["MatMul"] * 4

    detector = DiscriminatorHead(32)
    detector.build((None, None, 32))
    assert _matmuls(detector, hidden) == ["MatMul"] * 2

    table = keras_hub.layers.ReversibleEmbedding(50, 16)
    table.build()
    generator_head = ElectraMaskedLMHead(table)
    generator_head.build((None, None, 32))
    assert _matmuls(generator_head, hidden, tf.TensorSpec([None, None], tf.int32)) == ["MatMul"] * 2
