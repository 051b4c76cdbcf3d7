"""One registry for every fine-tuning task; each task's defaults come from the task-neutral hyperparameters."""

import pytest

from electra_tf.errors import ConfigError
from finetune import hyperparameters
from finetune.glue.task import GlueTask
from finetune.own_data.task import OwnDataTask
from finetune.registry import get_task, tasks
from finetune.squad.task import SquadTask
from finetune.tagging.task import TaggingTask
from finetune.task import Task

GLUE_TASKS = ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI"]


def test_registry_knows_every_glue_task_both_squad_versions_tagging_and_own_files():
    assert list(tasks()) == GLUE_TASKS + [
        "squadv1",
        "squad",
        "chunk",
        "ner",
        "pos",
        "ged",
        "tagging",
        "classification",
        "regression",
    ]
    assert all(isinstance(task, Task) for task in tasks().values())
    assert [type(get_task(name)) for name in GLUE_TASKS] == [GlueTask] * 9
    assert (get_task("squad").version, get_task("squadv1").version) == ("2.0", "1.1")
    assert isinstance(get_task("SQuAD"), SquadTask)
    assert isinstance(get_task("NER"), TaggingTask) and isinstance(get_task("classification"), OwnDataTask)


def test_names_are_case_and_hyphen_insensitive():
    assert get_task("sst2") is get_task("SST-2") is get_task("sst-2")
    assert get_task("stsb").name == "STS-B" and get_task("SQuADv1").name == "squadv1"


@pytest.mark.parametrize("name", ["SST-5", "squadv3", "", None])
def test_unknown_names_list_the_known_tasks(name):
    with pytest.raises(ConfigError) as raised:
        get_task(name)
    problem = f"unknown task={name!r}" if name else "task is required"
    assert str(raised.value) == (
        f"{problem}; choose one of CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, "
        "RTE, WNLI, squadv1, squad, chunk, ner, pos, ged, tagging, "
        "classification, regression"
    )
    assert raised.value.arguments == ("task",)


def test_squad_defaults_come_from_the_neutral_module(monkeypatch):
    monkeypatch.setattr(hyperparameters, "REFERENCE_LEARNING_RATES", {"small": 1.0, "base": 2.0, "large": 3.0})
    monkeypatch.setattr(hyperparameters, "LAYERWISE_LR_DECAY", {"small": 0.5, "base": 0.6, "large": 0.7})
    monkeypatch.setattr(hyperparameters, "TRAIN_BATCH_SIZE", 7)
    for name in ("squad", "squadv1"):
        settings = get_task(name).default_hyperparameters("base")
        assert (settings.learning_rate, settings.layerwise_lr_decay, settings.train_batch_size) == (2.0, 0.6, 7)
        assert (settings.num_train_epochs, settings.max_seq_length) == (2, 512)


def test_glue_defaults_use_the_task_epochs_and_the_neutral_size_settings():
    settings = get_task("RTE").default_hyperparameters("large")
    assert (settings.learning_rate, settings.layerwise_lr_decay, settings.train_batch_size) == (
        hyperparameters.REFERENCE_LEARNING_RATES["large"],
        hyperparameters.LAYERWISE_LR_DECAY["large"],
        hyperparameters.TRAIN_BATCH_SIZE,
    )
    assert (settings.num_train_epochs, settings.max_seq_length) == (10, 128)
    with pytest.raises(ConfigError, match="^unknown model_size='huge'"):
        get_task("RTE").default_hyperparameters("huge")
