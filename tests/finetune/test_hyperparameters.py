"""Reference fine-tuning settings per size and task, and the configs/glue_*.flags files that spell them out."""

import dataclasses

import pytest

from electra_tf.errors import ConfigError
from finetune import hyperparameters
from finetune.finetuning_spec import FinetuningJob
from finetune.glue.tasks import TASKS
from finetune.registry import reference_hyperparameters
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize(
    "size,learning_rate,decay",
    [("small", 3e-4, 0.8), ("small++", 3e-4, 0.8), ("tiny", 3e-4, 0.8), ("base", 1e-4, 0.8), ("large", 5e-5, 0.9)],
)
def test_size_defaults(size, learning_rate, decay):
    settings = reference_hyperparameters("MRPC", size)
    assert (settings.learning_rate, settings.layerwise_lr_decay) == (learning_rate, decay)
    assert (settings.num_train_epochs, settings.max_seq_length, settings.train_batch_size) == (3, 128, 32)


def test_task_defaults_and_overrides():
    assert reference_hyperparameters("RTE", "base").num_train_epochs == 10
    assert reference_hyperparameters("stsb", "base").num_train_epochs == 10
    overridden = reference_hyperparameters("RTE", "base", learning_rate=1e-3, num_train_epochs=1, max_seq_length=64)
    assert (overridden.learning_rate, overridden.num_train_epochs, overridden.max_seq_length) == (1e-3, 1, 64)
    with pytest.raises(ConfigError, match="^unknown model_size='medium'; choose one of "):
        reference_hyperparameters("RTE", "medium")


def _flags(path):
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("--"):
            name, _, value = line[2:].partition("=")
            values[name] = value
    return values


@pytest.mark.parametrize("task", sorted(TASKS))
def test_glue_flagfile_holds_the_reference_settings(task):
    path = REPO_ROOT / "configs" / f"glue_{task.replace('-', '').lower()}.flags"
    flags = _flags(path)
    expected = reference_hyperparameters(task, "small")
    assert flags["task"] == task
    assert int(flags["num_train_epochs"]) == expected.num_train_epochs == TASKS[task].epochs
    assert int(flags["max_seq_length"]) == 128 and int(flags["train_batch_size"]) == 32
    assert (float(flags["weight_decay"]), float(flags["warmup_fraction"]), float(flags["adam_epsilon"])) == (
        0.01,
        0.1,
        1e-6,
    )
    assert "learning_rate" not in flags, "the learning rate follows --model_size"
    # Every flag in the file is a FinetuningJob field, i.e. a run_finetuning.py flag.
    assert set(flags) <= {field for field in FinetuningJob.__dataclass_fields__}


def test_reference_constants_shared_by_all_tasks():
    assert hyperparameters.REFERENCE_LEARNING_RATES == {"small": 3e-4, "base": 1e-4, "large": 5e-5}
    assert hyperparameters.LAYERWISE_LR_DECAY == {"small": 0.8, "base": 0.8, "large": 0.9}
    assert (hyperparameters.WARMUP_FRACTION, hyperparameters.ADAM_EPSILON, hyperparameters.TRAIN_BATCH_SIZE) == (
        0.1,
        1e-6,
        32,
    )
    assert hyperparameters.WEIGHT_DECAY == {"paper": 0.0, "reference": 0.01}


def test_squad_defaults_and_overrides():
    settings = reference_hyperparameters("squad", "large")
    assert (
        settings.learning_rate,
        settings.layerwise_lr_decay,
        settings.num_train_epochs,
        settings.max_seq_length,
        settings.train_batch_size,
    ) == (5e-5, 0.9, 2, 512, 32)
    overridden = reference_hyperparameters("squadv1", "small", max_seq_length=384, train_batch_size=8)
    assert (overridden.learning_rate, overridden.max_seq_length, overridden.train_batch_size) == (3e-4, 384, 8)
    assert overridden.overridden(learning_rate=None, num_train_epochs=3) == dataclasses.replace(
        overridden, num_train_epochs=3
    )


def test_the_model_size_is_read_from_the_architecture():
    import dataclasses

    from electra_tf.config import PRESETS
    from finetune.hyperparameters import model_size_of

    assert [model_size_of(PRESETS[name]) for name in ("tiny", "cpu", "small", "small++", "base", "large")] == [
        "tiny",
        "cpu",
        "small",
        "small",
        "base",
        "large",
    ]
    # Architectures of no preset take the published size nearest their width.
    assert model_size_of(dataclasses.replace(PRESETS["base"], num_layers=6)) == "base"
    assert model_size_of(dataclasses.replace(PRESETS["small"], hidden_size=384, num_heads=6)) == "base"
    assert model_size_of(dataclasses.replace(PRESETS["large"], num_layers=12)) == "large"


def test_the_size_family_of_a_width_is_the_published_size_nearest_it():
    assert [hyperparameters.size_family_of_width(width) for width in (128, 256, 257, 768, 769, 1024)] == [
        "small",
        "small",
        "base",
        "base",
        "large",
        "large",
    ]
