"""Optimizers: the reference's Adam with decoupled weight decay (no bias correction by default), Keras AdamW, LAMB."""

import re

import keras
import tensorflow as tf
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.training.choices import OPTIMIZERS  # noqa: F401  (part of this module's interface)

# Variables matching this (on their path) get no weight decay: LayerNorm parameters and biases, as the reference.
NO_DECAY_PATTERN = r"(layer_norm|LayerNorm|bias)"


@keras.saving.register_keras_serializable(package="electra_tf")
class AdamWeightDecay(keras.optimizers.Optimizer):
    """The reference's `AdamWeightDecayOptimizer`.

    m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  w -= lr (m / (sqrt(v) + eps) + wd w)

    with no bias correction of m and v unless `bias_correction=True` (then m/(1-b1^t) and v/(1-b2^t) are used). Weight
    decay is decoupled (scaled by the learning rate, not added to the gradient) and skipped for variables whose path
    matches `no_decay_pattern`. Clipping is not done here: `ElectraPretrainer` clips the cross-replica gradient.
    """

    def __init__(self, learning_rate=1e-4, weight_decay=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 bias_correction=False, no_decay_pattern=NO_DECAY_PATTERN, name="adam_weight_decay", **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay or None, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.bias_correction = bias_correction
        self.no_decay_pattern = no_decay_pattern

    def build(self, var_list):
        if self.built:
            return
        pattern = re.compile(self.no_decay_pattern) if self.no_decay_pattern else None
        if pattern is not None:
            self.exclude_from_weight_decay(var_list=[v for v in var_list if pattern.search(v.path)])
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["adam_m", "adam_v"])

    def update_step(self, gradient, variable, learning_rate):
        learning_rate = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        m = self._momentums[self._get_variable_index(variable)]
        v = self._velocities[self._get_variable_index(variable)]
        if not self.bias_correction and not isinstance(gradient, tf.IndexedSlices):
            # The reference's update is TensorFlow's fused Adam kernel with beta powers 0 (so lr_t = lr): one pass over
            # m, v and the variable instead of a dozen element-wise ops, each materialising a full-size temporary.
            tf.raw_ops.ResourceApplyAdam(
                var=_resource(variable), m=_resource(m), v=_resource(v), beta1_power=tf.zeros([], variable.dtype),
                beta2_power=tf.zeros([], variable.dtype), lr=learning_rate,
                beta1=tf.constant(self.beta_1, variable.dtype), beta2=tf.constant(self.beta_2, variable.dtype),
                epsilon=tf.constant(self.epsilon, variable.dtype), grad=gradient, use_locking=False)
            return
        self.assign(m, ops.add(ops.multiply(m, self.beta_1), ops.multiply(gradient, 1.0 - self.beta_1)))
        self.assign(v, ops.add(ops.multiply(v, self.beta_2), ops.multiply(ops.square(gradient), 1.0 - self.beta_2)))
        m_used, v_used = m, v
        if self.bias_correction:
            step = ops.cast(self.iterations + 1, variable.dtype)
            m_used = ops.divide(m, 1.0 - ops.power(ops.cast(self.beta_1, variable.dtype), step))
            v_used = ops.divide(v, 1.0 - ops.power(ops.cast(self.beta_2, variable.dtype), step))
        self.assign_sub(variable, ops.multiply(learning_rate,
                                               ops.divide(m_used, ops.add(ops.sqrt(v_used), self.epsilon))))

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon,
                      bias_correction=self.bias_correction, no_decay_pattern=self.no_decay_pattern)
        return config


def _resource(variable):
    """The resource handle of a Keras or TensorFlow variable (the per-device one inside a strategy's update)."""
    if isinstance(variable, keras.Variable):
        variable = variable.value
    return variable.handle


def create_optimizer(name, learning_rate, weight_decay=0.01, epsilon=1e-6, beta_1=0.9, beta_2=0.999,
                     bias_correction=False):
    """One of OPTIMIZERS with the reference's defaults. `learning_rate` may be a schedule."""
    if name == "adam_weight_decay":
        return AdamWeightDecay(learning_rate, weight_decay=weight_decay, beta_1=beta_1, beta_2=beta_2,
                               epsilon=epsilon, bias_correction=bias_correction)
    if name in ("keras_adamw", "lamb"):
        if name == "keras_adamw":
            optimizer = keras.optimizers.AdamW(learning_rate, weight_decay=weight_decay, beta_1=beta_1,
                                               beta_2=beta_2, epsilon=epsilon)
        else:
            optimizer = keras.optimizers.Lamb(learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                                              weight_decay=weight_decay or None)
        optimizer.exclude_from_weight_decay(var_names=["gamma", "beta", "bias"])
        return optimizer
    raise ConfigError(f"unknown optimizer {name!r}; choose one of {list(OPTIMIZERS)}")
