"""The fine-tuning optimizer: the reference's Adam with weight decay, with a learning rate per variable from its depth.

`create_finetuning_optimizer` gives the reference's setup: peak learning rate with warm-up over the first 10 % of
steps multiplied by linear decay to 0, the gradient clipped to global norm 1.0, Adam (no bias correction) with epsilon
1e-6, decoupled weight decay 0.01 except on LayerNorm and bias variables
(`electra_tf.training.optimizers.weight_decay_applies`), and layer-wise learning-rate decay (`finetune.layerwise_lr`).
"""

import keras

from electra_tf.errors import ConfigError
from electra_tf.training.optimizers import AdamWeightDecay
from electra_tf.training.schedules import WarmupLinearDecay
from finetune.hyperparameters import (
    ADAM_EPSILON,
    CLIP_NORM,
    LAYERWISE_LR_DECAY,
    REFERENCE_LEARNING_RATES,
    WARMUP_FRACTION,
    WEIGHT_DECAY,
    size_family_of_width,
)
from finetune.layerwise_lr import layerwise_lr_multipliers


@keras.saving.register_keras_serializable(package="electra_tf")
class LayerwiseAdamWeightDecay(AdamWeightDecay):
    """`AdamWeightDecay` whose whole update of each variable (Adam step and weight decay) is scaled by the variable's
    layer-wise multiplier, as the reference does by giving each layer its own learning rate.

    Multipliers come from the variables' paths when the optimizer is built (`layerwise_lr_multipliers`), so the
    optimizer is serialisable by its hyperparameters alone. `layerwise_lr_decay=1.0` gives plain `AdamWeightDecay`.

    Args:
        num_layers: the encoder's number of Transformer layers.
        layerwise_lr_decay: the decay d per layer (0.8 for small and base, 0.9 for large).
        layerwise_lr_variant: "reference" (embeddings d^(L+2)) or "paper" (embeddings d^(L+1)).
        Other arguments: as `AdamWeightDecay`.
    """

    def __init__(
        self,
        learning_rate=1e-4,
        num_layers=12,
        layerwise_lr_decay=0.8,
        layerwise_lr_variant="reference",
        weight_decay=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        bias_correction=False,
        clip_norm=None,
        name="layerwise_adam_weight_decay",
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            bias_correction=bias_correction,
            clip_norm=clip_norm,
            name=name,
            **kwargs,
        )
        layerwise_lr_multipliers([], num_layers, layerwise_lr_decay, layerwise_lr_variant)  # validates the settings
        self.num_layers = num_layers
        self.layerwise_lr_decay = layerwise_lr_decay
        self.layerwise_lr_variant = layerwise_lr_variant

    def learning_rate_multipliers(self, var_list):
        multipliers = layerwise_lr_multipliers(
            [variable.path for variable in var_list],
            self.num_layers,
            self.layerwise_lr_decay,
            self.layerwise_lr_variant,
        )
        return [multipliers[variable.path] for variable in var_list]

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers,
            layerwise_lr_decay=self.layerwise_lr_decay,
            layerwise_lr_variant=self.layerwise_lr_variant,
        )
        return config


def create_finetuning_optimizer(
    num_layers,
    learning_rate,
    train_steps,
    layerwise_lr_decay=0.8,
    layerwise_lr_variant="reference",
    warmup_fraction=WARMUP_FRACTION,
    weight_decay=WEIGHT_DECAY["reference"],
    epsilon=ADAM_EPSILON,
    bias_correction=False,
    clip_norm=CLIP_NORM,
):
    """The reference's fine-tuning optimizer for a model with `num_layers` Transformer layers.

    The schedule is peak `learning_rate` x linear decay to 0 over `train_steps` x min(1, step / warm-up steps), with
    warm-up over `warmup_fraction` of the steps (the reference multiplies the two).
    """
    if learning_rate <= 0:
        raise ConfigError(f"learning_rate must be positive, got {learning_rate}", arguments=("learning_rate",))
    if not 0.0 <= warmup_fraction < 1.0:
        raise ConfigError(f"warmup_fraction must be in [0, 1), got {warmup_fraction}", arguments=("warmup_fraction",))
    schedule = WarmupLinearDecay(learning_rate, train_steps, int(warmup_fraction * train_steps), mode="multiply")
    return LayerwiseAdamWeightDecay(
        schedule,
        num_layers=num_layers,
        layerwise_lr_decay=layerwise_lr_decay,
        layerwise_lr_variant=layerwise_lr_variant,
        weight_decay=weight_decay,
        epsilon=epsilon,
        bias_correction=bias_correction,
        clip_norm=clip_norm,
    )


def reference_finetuning_optimizer(backbone, num_train_steps=None):
    """The reference's fine-tuning optimizer for `backbone`'s size (`ElectraTextClassifier.compile()`'s default):
    learning rate 3e-4 up to hidden size 256, 1e-4 up to 768, else 5e-5; layer-wise decay 0.9 from 24 layers, else 0.8;
    warm-up and linear decay over `num_train_steps` when given, a constant rate otherwise."""
    size = size_family_of_width(backbone.hidden_size)
    decay = LAYERWISE_LR_DECAY["large"] if backbone.num_layers >= 24 else LAYERWISE_LR_DECAY[size]
    learning_rate = REFERENCE_LEARNING_RATES[size]
    if num_train_steps:
        return create_finetuning_optimizer(
            backbone.num_layers, learning_rate, num_train_steps, layerwise_lr_decay=decay
        )
    return LayerwiseAdamWeightDecay(
        learning_rate,
        num_layers=backbone.num_layers,
        layerwise_lr_decay=decay,
        epsilon=ADAM_EPSILON,
        clip_norm=CLIP_NORM,
    )
