"""The reference's fine-tuning hyperparameters per model size and task, with the user's overrides applied."""

import dataclasses

from electra_tf.config import PRESETS
from electra_tf.errors import ConfigError
from finetune.glue.tasks import LAYERWISE_LR_DECAY, TRAIN_BATCH_SIZE, get_task

# Sizes with no published fine-tuning settings borrow those of the nearest published size.
_SIZE_FAMILY = {"tiny": "small", "small": "small", "small++": "small", "base": "base", "large": "large"}


def size_family(model_size):
    """"small", "base" or "large": the published size whose settings `model_size` uses."""
    if model_size not in _SIZE_FAMILY:
        raise ConfigError(f"unknown --model_size={model_size!r}; choose one of {', '.join(PRESETS)}")
    return _SIZE_FAMILY[model_size]


@dataclasses.dataclass(frozen=True)
class FinetuningHyperparameters:
    learning_rate: float
    num_train_epochs: int
    max_seq_length: int
    layerwise_lr_decay: float
    train_batch_size: int


def reference_hyperparameters(task, model_size, learning_rate=None, num_train_epochs=None, max_seq_length=None,
                              layerwise_lr_decay=None, train_batch_size=None):
    """The paper/reference settings for `task` and `model_size`; arguments that are not None override them.

    Learning rate 3e-4 small, 1e-4 base, 5e-5 large; layer-wise decay 0.8 (0.9 large); 3 epochs (RTE, STS-B 10);
    max length 128; batch 32.
    """
    spec, family = get_task(task), size_family(model_size)
    return FinetuningHyperparameters(
        learning_rate=spec.learning_rate(family) if learning_rate is None else learning_rate,
        num_train_epochs=spec.epochs if num_train_epochs is None else num_train_epochs,
        max_seq_length=spec.max_seq_length if max_seq_length is None else max_seq_length,
        layerwise_lr_decay=LAYERWISE_LR_DECAY[family] if layerwise_lr_decay is None else layerwise_lr_decay,
        train_batch_size=TRAIN_BATCH_SIZE if train_batch_size is None else train_batch_size)


def check_positive(**values):
    for name, value in values.items():
        if value is None or value <= 0:
            raise ConfigError(f"--{name} must be positive, got {value}")


