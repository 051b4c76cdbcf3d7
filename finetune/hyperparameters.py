"""The reference's fine-tuning hyperparameters, shared by every task: defaults per model size, the user's overrides.

A task picks its own epochs and sequence length (`finetune.task.Task.default_hyperparameters`); the learning rate and
layer-wise decay per model size, the batch size, warm-up, Adam epsilon, weight decay and gradient clipping are the
same for all of them.
"""

import dataclasses

from electra_tf.config import PRESETS
from electra_tf.errors import ConfigError

# Peak fine-tuning learning rate per model size (ELECTRA paper, Table 7). The reference code's default for small
# is 1e-4; the paper's 3e-4 is used here.
REFERENCE_LEARNING_RATES = {"small": 3e-4, "base": 1e-4, "large": 5e-5}
LAYERWISE_LR_DECAY = {"small": 0.8, "base": 0.8, "large": 0.9}
WARMUP_FRACTION = 0.1
ADAM_EPSILON = 1e-6
# The global norm the reference clips the gradient to before every update (its `optimization.create_optimizer`).
CLIP_NORM = 1.0
TRAIN_BATCH_SIZE = 32
# The paper fine-tunes without weight decay; the reference code uses 0.01.
WEIGHT_DECAY = {"paper": 0.0, "reference": 0.01}

# Sizes with no published fine-tuning settings borrow those of the nearest published size.
_SIZE_FAMILY = {"tiny": "small", "cpu": "small", "small": "small", "small++": "small", "base": "base", "large": "large"}


def size_family(model_size):
    """ "small", "base" or "large": the published size whose settings `model_size` uses."""
    if model_size not in _SIZE_FAMILY:
        raise ConfigError(
            f"unknown model_size={model_size!r}; choose one of {', '.join(PRESETS)}", arguments=("model_size",)
        )
    return _SIZE_FAMILY[model_size]


def size_family_of_width(hidden_size):
    """ "small", "base" or "large": the published size nearest an encoder `hidden_size` wide (small up to 256, base up
    to 768)."""
    return "small" if hidden_size <= 256 else "base" if hidden_size <= 768 else "large"


# The fields in which the presets' encoders differ; vocabulary, positions and dropout do not choose fine-tuning
# settings.
SIZE_FIELDS = ("embedding_size", "hidden_size", "num_layers", "num_heads", "intermediate_size")


def model_size_of(config):
    """The preset whose architecture `config` (an `ElectraConfig` or `ElectraArchitecture`) has ("small++" shares
    "small"'s and is reported as "small"), else the published size nearest its hidden size: the size whose
    fine-tuning settings suit the checkpoint."""
    shape = tuple(getattr(config, name) for name in SIZE_FIELDS)
    for name, preset in PRESETS.items():
        if tuple(getattr(preset, field) for field in SIZE_FIELDS) == shape:
            return name
    return size_family_of_width(config.hidden_size)


@dataclasses.dataclass(frozen=True)
class FinetuningHyperparameters:
    learning_rate: float
    num_train_epochs: int
    max_seq_length: int
    layerwise_lr_decay: float
    train_batch_size: int

    def overridden(self, **values):
        """A copy with the `values` that are not None in place of the defaults."""
        return dataclasses.replace(self, **{name: value for name, value in values.items() if value is not None})


def size_defaults(model_size, num_train_epochs, max_seq_length, learning_rates=None):
    """The reference's settings for a task trained `num_train_epochs` on `max_seq_length` tokens with a model of
    `model_size`: learning rate 3e-4 small, 1e-4 base, 5e-5 large (or the task's own `learning_rates` by size family);
    layer-wise decay 0.8 (0.9 large); batch 32."""
    family = size_family(model_size)
    return FinetuningHyperparameters(
        learning_rate=(learning_rates or REFERENCE_LEARNING_RATES)[family],
        num_train_epochs=num_train_epochs,
        max_seq_length=max_seq_length,
        layerwise_lr_decay=LAYERWISE_LR_DECAY[family],
        train_batch_size=TRAIN_BATCH_SIZE,
    )


def check_positive(**values):
    """ConfigError naming the first of `values` (argument name -> value) that is None or not positive."""
    for name, value in values.items():
        if value is None or value <= 0:
            raise ConfigError(f"{name} must be positive, got {value}", arguments=(name,))
