"""The exact (erf) GELU with a hand-written gradient, and the tanh approximation some ports use."""

import math

import keras
import tensorflow as tf


def standard_normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2, in `x`'s dtype: the factor of the exact GELU x * Phi(x), in the
    reference's form. (The erfc form, erfc(-x / sqrt(2)) / 2, keeps Phi's relative precision far into the negative
    tail, where x * Phi(x) is below 1e-6 anyway; XLA computes it about three times slower than erf on CPU.)"""
    return 0.5 * (1.0 + tf.math.erf(x * tf.constant(1.0 / math.sqrt(2.0), x.dtype)))


def standard_normal_pdf(x):
    """phi(x) = exp(-x^2 / 2) / sqrt(2 pi), in `x`'s dtype: with Phi(x), the exact GELU's derivative
    Phi(x) + x * phi(x)."""
    return tf.exp(tf.square(x) * tf.constant(-0.5, x.dtype)) * tf.constant(1.0 / math.sqrt(2.0 * math.pi), x.dtype)


@keras.saving.register_keras_serializable(package="electra_tf")
def gelu(x):
    """x * Phi(x), Phi the standard normal CDF (the reference's erf form): the forward is `tf.nn.gelu(x,
    approximate=False)` itself (TensorFlow writes it with erfc), whose expression the LiteRT converter turns into its
    builtin GELU.

    The gradient, Phi(x) + x * phi(x), is written out: TensorFlow's automatic gradient of its expression re-derives
    it through a chain of element-wise ops, about 9 % of an ELECTRA-Small step on the CPU.
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
