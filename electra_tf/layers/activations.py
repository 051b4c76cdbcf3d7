"""The exact (erf) GELU with a hand-written gradient, and the tanh approximation some ports use."""

import math

import keras
import tensorflow as tf


def standard_normal_cdf(x):
    """Phi(x) = erfc(-x / sqrt(2)) / 2, in `x`'s dtype: the factor of the exact GELU x * Phi(x)."""
    return 0.5 * tf.math.erfc(x * tf.constant(-1.0 / math.sqrt(2.0), x.dtype))


def standard_normal_pdf(x):
    """phi(x) = exp(-x^2 / 2) / sqrt(2 pi), in `x`'s dtype: with Phi(x), the exact GELU's derivative
    Phi(x) + x * phi(x)."""
    return tf.exp(tf.square(x) * tf.constant(-0.5, x.dtype)) * tf.constant(1.0 / math.sqrt(2.0 * math.pi), x.dtype)


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu(x):
    """x * Phi(x), Phi the standard normal CDF (the reference's erf form): the forward is `tf.nn.gelu(x,
    approximate=False)` itself, whose expression the LiteRT converter turns into its builtin GELU (the same values
    written as `x * standard_normal_cdf(x)` leave an Erfc op no LiteRT runtime has).

    The gradient, Phi(x) + x * phi(x), is written out: TensorFlow's automatic gradient of the erfc expression
    re-derives it through a chain of element-wise ops, about 9 % of an ELECTRA-Small step on the CPU.
    (`fused_ops.bias_gelu` is the same function and gradient as one XLA kernel, for training steps.)
    """

    @tf.custom_gradient
    def forward(x):
        def backward(upstream):
            return upstream * (standard_normal_cdf(x) + x * standard_normal_pdf(x))

        return tf.nn.gelu(x, approximate=False), backward

    return forward(tf.convert_to_tensor(x))


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu_approximate(x):
    """The tanh approximation of GELU (keras-hub's ELECTRA, Hugging Face's "gelu_new"): not the reference's, offered
    so that models converted from those ports give their outputs exactly."""
    return keras.activations.gelu(x, approximate=True)


ACTIVATIONS = {"gelu": gelu, "gelu_approximate": gelu_approximate}


def get_activation(name):
    """The activation function called `name` ("gelu", the reference's exact form, or "gelu_approximate")."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown hidden_activation {name!r}; choose one of {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]
