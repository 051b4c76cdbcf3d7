"""Attention projections as one 2-D matmul each.

Keras' MultiHeadAttention projects with `EinsumDense` equations such as "abc,cde->abde" (query/key/value) and
"abcd,cde->abe" (output). On the TensorFlow backend Keras evaluates these as a 3-D by 2-D `tf.matmul`, i.e. a
broadcast `BatchMatMulV2`, which oneDNN runs as one small GEMM per sequence: measured 5.4 ms against 3.2 ms for the
same projection (forward and backward, [32, 128, 256] x [256, 256], float32, 2 cores) as a single [4096, 256] x
[256, 256] GEMM. The layers here keep every variable, name, config and checkpoint of the stock layers and only change
how the contraction is evaluated.
"""

import math

import keras
import tensorflow as tf


def split_projection_equation(equation):
    """(free, contracted, kept) axis letters when `equation` is `free+contracted, contracted+kept -> free+kept`, else
    None: the equations that a reshape, one 2-D matmul and a reshape evaluate exactly."""
    inputs, output = equation.split("->")
    lhs, kernel = inputs.split(",")
    contracted = "".join(letter for letter in lhs if letter in kernel)
    if not contracted or not lhs.endswith(contracted) or not kernel.startswith(contracted):
        return None
    free, kept = lhs[:-len(contracted)], kernel[len(contracted):]
    if output != free + kept or set(free) & set(kept):
        return None
    return free, contracted, kept


@keras.saving.register_keras_serializable(package="electra_tf")
class FlatEinsumDense(keras.layers.EinsumDense):
    """`EinsumDense` that evaluates a projection equation (see `split_projection_equation`) as one 2-D matmul.

    Other equations, and LoRA or quantized layers, take the stock path.
    """

    def call(self, inputs, training=None):
        split = split_projection_equation(self.equation)
        if split is None or self.lora_enabled or self.quantization_mode is not None:
            return super().call(inputs, training=training)
        free, contracted, kept = split
        kernel = self.kernel
        kept_shape = list(kernel.shape[len(contracted):])
        contracted_size = math.prod(kernel.shape[:len(contracted)])
        flat = tf.reshape(inputs, [-1, contracted_size])
        outputs = tf.matmul(flat, tf.reshape(kernel, [contracted_size, math.prod(kept_shape)]))
        outputs = tf.reshape(outputs, tf.concat([tf.shape(inputs)[:len(free)], kept_shape], axis=0))
        if self.bias is not None:
            outputs = outputs + self.bias
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


def flatten_attention_projections(attention):
    """Makes the query, key, value and output projections of a built Keras `MultiHeadAttention` `FlatEinsumDense`s.

    The instances are kept (with their variables and tracking); only their class changes, to the subclass whose
    `call` is the flat evaluation. Projections that are not plain `EinsumDense` are left alone.
    """
    for name in ("_query_dense", "_key_dense", "_value_dense", "_output_dense"):
        projection = getattr(attention, name, None)
        if type(projection) is keras.layers.EinsumDense:
            projection.__class__ = FlatEinsumDense
