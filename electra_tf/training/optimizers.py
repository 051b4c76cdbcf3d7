"""Optimizers: the reference's Adam with decoupled weight decay (no bias correction by default), Keras AdamW, LAMB.

Every optimizer here decays exactly the variables `weight_decay_applies` names: the project's one weight-decay rule.
"""

import keras
import tensorflow as tf
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.training.choices import OPTIMIZERS
from electra_tf.training.replica_updates import clip_summed_gradients, global_norm_clip_scale

# Last parts of the variable paths of LayerNormalization's scale and offset.
LAYER_NORM_PARAMETERS = ("gamma", "beta")


def weight_decay_applies(variable_path):
    """Whether the variable at `variable_path` gets weight decay: the reference's rule, no decay for LayerNorm and
    bias parameters.

    On paths: a variable is exempt when the last part of its path is `gamma` or `beta` (a LayerNormalization's scale
    and offset) or is `bias` or ends in `_bias` (every dense layer's bias, the generator's `output_bias`). Everything
    else decays: kernels and embedding tables.
    """
    name = variable_path.rsplit("/", 1)[-1]
    return name not in LAYER_NORM_PARAMETERS and name != "bias" and not name.endswith("_bias")


def _adam_weight_decay_step(
    variable, m, v, gradient, gradient_scale, learning_rate, weight_decay, m_scale, v_scale, beta_1, beta_2, epsilon
):
    """The reference's update of `variable` and its slots `m` and `v` (backend variables) from `gradient` times
    `gradient_scale` (the clipping factor, or 1), compiled per optimizer.

    XLA fuses the element-wise terms into passes that update the three variables in place; as separate TensorFlow
    ops each term would materialise a full-size temporary, which makes the optimizer several times slower on CPU.
    """
    gradient = gradient * gradient_scale
    m.assign(beta_1 * m + (1.0 - beta_1) * gradient)
    v.assign(beta_2 * v + (1.0 - beta_2) * tf.square(gradient))
    variable.assign_sub(learning_rate * ((m * m_scale) / (tf.sqrt(v * v_scale) + epsilon) + weight_decay * variable))


@keras.saving.register_keras_serializable(package="electra_tf")
class AdamWeightDecay(keras.optimizers.Optimizer):
    """The reference's `AdamWeightDecayOptimizer`.

    m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  w -= lr (m / (sqrt(v) + eps) + wd w)

    with no bias correction of m and v unless `bias_correction=True` (then m/(1-b1^t) and v/(1-b2^t) are used). Weight
    decay is decoupled (scaled by the learning rate, not added to the gradient) and applied only where
    `weight_decay_applies`. With `clip_norm`, `apply` first clips the cross-replica sum of the gradients to that
    global norm, as the reference's `create_optimizer` does for fine-tuning (`ElectraPretrainer` clips in its own step
    and leaves it None). Subclasses scale each variable's learning rate through `learning_rate_multipliers`.
    """

    def __init__(
        self,
        learning_rate=1e-4,
        weight_decay=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        bias_correction=False,
        clip_norm=None,
        name="adam_weight_decay",
        **kwargs,
    ):
        # The decay is part of update_step's single pass (the reference's formula), so Keras' own stays off.
        super().__init__(learning_rate=learning_rate, weight_decay=None, name=name, **kwargs)
        if clip_norm is not None and clip_norm <= 0:
            raise ConfigError(f"clip_norm must be positive or None, got {clip_norm}", arguments=("clip_norm",))
        self.decoupled_weight_decay = float(weight_decay or 0.0)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.bias_correction = bias_correction
        self.clip_norm = clip_norm
        self.gradient_scale = None  # while `apply` runs without a strategy: the clipping factor, a scalar tensor

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.momentums, self.velocities = self.add_optimizer_variables(var_list, ["adam_m", "adam_v"])
        self.weight_decay_rates = [
            self.decoupled_weight_decay if weight_decay_applies(variable.path) else 0.0 for variable in var_list
        ]
        self.lr_multipliers = self.learning_rate_multipliers(var_list)
        # One compiled function per optimizer: its traces hold this model's variables, and die with them (a function
        # shared by every optimizer of the process could hand a later model a trace of an earlier, deleted one).
        self.compiled_update = tf.function(_adam_weight_decay_step, jit_compile=True)
        # update_step receives the backend variable (under a strategy, one replica's copy), not the Keras variable:
        # each of those maps to the position of its slots and its replica (the index of the slots' copy to update).
        strategy = tf.distribute.get_strategy()
        self.slot_positions = {}
        for position, variable in enumerate(var_list):
            backend_variable = variable.value if isinstance(variable, keras.Variable) else variable
            for replica, local in enumerate(strategy.experimental_local_results(backend_variable)):
                self.slot_positions[id(local)] = (position, replica)

    def learning_rate_multipliers(self, var_list):
        """The factor of each variable's learning rate (of its whole update, decay included): 1 here."""
        return [1.0] * len(var_list)

    def apply(self, grads, trainable_variables=None):
        if not self.clip_norm:
            return super().apply(grads, trainable_variables)
        if tf.distribute.has_strategy():
            return super().apply(clip_summed_gradients(list(grads), self.clip_norm), trainable_variables)
        # Without replicas each compiled update scales its gradient as it reads it: no pass writing a clipped copy of
        # every gradient. Embedding gradients are made dense first, for the norm of the sum of their rows.
        grads = [None if gradient is None else tf.convert_to_tensor(gradient) for gradient in grads]
        self.gradient_scale = global_norm_clip_scale(grads, self.clip_norm)
        try:
            return super().apply(grads, trainable_variables)
        finally:
            self.gradient_scale = None

    def update_step(self, gradient, variable, learning_rate):
        position, replica = self.slot_positions[id(variable)]
        strategy = tf.distribute.get_strategy()
        m, v = (
            strategy.experimental_local_results(slots[position].value)[replica]
            for slots in (self.momentums, self.velocities)
        )
        dtype = variable.dtype
        # Embedding gradients may come as IndexedSlices: the reference's update is dense (m and v of every row decay).
        gradient = ops.cast(tf.convert_to_tensor(gradient), dtype)
        learning_rate = ops.multiply(ops.cast(learning_rate, dtype), ops.cast(self.lr_multipliers[position], dtype))
        m_scale = v_scale = ops.ones((), dtype)
        if self.bias_correction:
            # In float64: 1 - b2^t is a small difference, and float32's rounding of b2 would shift it by 1e-5.
            step = tf.cast(self.iterations + 1, tf.float64)
            m_scale = tf.cast(1.0 / (1.0 - tf.pow(tf.constant(self.beta_1, tf.float64), step)), dtype)
            v_scale = tf.cast(1.0 / (1.0 - tf.pow(tf.constant(self.beta_2, tf.float64), step)), dtype)
        gradient_scale = ops.ones((), dtype) if self.gradient_scale is None else ops.cast(self.gradient_scale, dtype)
        self.compiled_update(
            variable,
            m,
            v,
            gradient,
            gradient_scale,
            learning_rate,
            ops.cast(self.weight_decay_rates[position], dtype),
            m_scale,
            v_scale,
            self.beta_1,
            self.beta_2,
            self.epsilon,
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            weight_decay=self.decoupled_weight_decay,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            epsilon=self.epsilon,
            bias_correction=self.bias_correction,
            clip_norm=self.clip_norm,
        )
        return config


class _ProjectWeightDecayRule:
    """Mixin for Keras optimizers with built-in weight decay: exempts what `weight_decay_applies` exempts."""

    def build(self, var_list):
        if not self.built:
            self.exclude_from_weight_decay(var_list=[v for v in var_list if not weight_decay_applies(v.path)])
        super().build(var_list)


@keras.saving.register_keras_serializable(package="electra_tf")
class AdamW(_ProjectWeightDecayRule, keras.optimizers.AdamW):
    """Keras' AdamW (with bias correction) decaying the variables `weight_decay_applies` names."""


@keras.saving.register_keras_serializable(package="electra_tf")
class Lamb(_ProjectWeightDecayRule, keras.optimizers.Lamb):
    """Keras' LAMB decaying the variables `weight_decay_applies` names."""


def create_optimizer(
    name, learning_rate, weight_decay=0.01, epsilon=1e-6, beta_1=0.9, beta_2=0.999, bias_correction=False
):
    """One of OPTIMIZERS with the reference's defaults. `learning_rate` may be a schedule."""
    if name == "adam_weight_decay":
        return AdamWeightDecay(
            learning_rate,
            weight_decay=weight_decay,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            bias_correction=bias_correction,
        )
    if name == "keras_adamw":
        return AdamW(learning_rate, weight_decay=weight_decay, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon)
    if name == "lamb":
        return Lamb(learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, weight_decay=weight_decay or None)
    raise ConfigError(f"unknown optimizer {name!r}; choose one of {list(OPTIMIZERS)}")
