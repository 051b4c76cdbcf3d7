"""The exact (erf) GELU with a hand-written gradient."""

import math

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu(x):
    """x * Phi(x), Phi the standard normal CDF (the reference's erf form); forward identical to `tf.nn.gelu(x,
    approximate=False)`.

    The gradient, Phi(x) + x * phi(x), reuses the forward's Phi(x): TensorFlow's automatic gradient of the erfc
    expression re-derives it through a chain of element-wise ops, about 9 % of an ELECTRA-Small step on the CPU.
    """

    @tf.custom_gradient
    def forward(x):
        cdf = 0.5 * tf.math.erfc(x * tf.constant(-1.0 / math.sqrt(2.0), x.dtype))
        outputs = x * cdf

        def backward(upstream):
            pdf = tf.exp(tf.square(x) * tf.constant(-0.5, x.dtype)) * tf.constant(1.0 / math.sqrt(2.0 * math.pi),
                                                                                  x.dtype)
            return upstream * (cdf + x * pdf)

        return outputs, backward

    return forward(tf.convert_to_tensor(x))
