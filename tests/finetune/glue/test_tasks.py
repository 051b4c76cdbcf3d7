"""The GLUE task specs: labels, metrics, splits and the reference's epochs, lengths and learning rates."""

import pytest

from electra_tf.errors import ConfigError
from finetune.glue.tasks import TASKS, glue_task_spec

GLUE_TASKS = ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI"]


def test_registry_holds_the_nine_glue_tasks():
    assert list(TASKS) == GLUE_TASKS


@pytest.mark.parametrize(
    "name,metrics,primary",
    [
        ("CoLA", ("mcc",), "mcc"),
        ("SST-2", ("accuracy",), "accuracy"),
        ("MRPC", ("accuracy", "f1"), "accuracy"),
        ("STS-B", ("pearson", "spearman"), "spearman"),
        ("QQP", ("accuracy", "f1"), "accuracy"),
        ("MNLI", ("accuracy",), "accuracy"),
        ("QNLI", ("accuracy",), "accuracy"),
        ("RTE", ("accuracy",), "accuracy"),
        ("WNLI", ("accuracy",), "accuracy"),
    ],
)
def test_metrics_as_the_paper_reports_them(name, metrics, primary):
    spec = glue_task_spec(name)
    assert (spec.metric_names, spec.primary_metric) == (metrics, primary)


def test_labels_and_regression():
    assert glue_task_spec("STS-B").is_regression and glue_task_spec("STS-B").num_labels == 1
    assert glue_task_spec("MNLI").labels == ("contradiction", "entailment", "neutral")
    assert glue_task_spec("RTE").labels == glue_task_spec("QNLI").labels == ("entailment", "not_entailment")
    for name in ("CoLA", "SST-2", "MRPC", "QQP", "WNLI"):
        assert glue_task_spec(name).labels == ("0", "1")
    assert glue_task_spec("MRPC").positive_label == glue_task_spec("QQP").positive_label == "1"
    assert [spec.name for spec in TASKS.values() if not spec.is_pair_task] == ["CoLA", "SST-2"]


def test_reference_defaults():
    epochs = {spec.name: spec.epochs for spec in TASKS.values()}
    assert epochs == {name: (10 if name in ("RTE", "STS-B") else 3) for name in GLUE_TASKS}
    assert {spec.max_seq_length for spec in TASKS.values()} == {128}
    assert [spec.name for spec in TASKS.values() if spec.swap_augment] == ["MRPC", "STS-B"]
    assert [spec.name for spec in TASKS.values() if spec.skip_malformed_lines] == ["QQP"]
    spec = glue_task_spec("CoLA")
    assert (spec.learning_rate("small"), spec.learning_rate("base"), spec.learning_rate("large")) == (3e-4, 1e-4, 5e-5)
    with pytest.raises(ConfigError, match="unknown model size 'huge'"):
        spec.learning_rate("huge")


def test_split_files_and_aliases():
    mnli = glue_task_spec("MNLI")
    assert {name: split.file_name for name, split in mnli.splits.items()} == {
        "train": "train.tsv",
        "dev_matched": "dev_matched.tsv",
        "dev_mismatched": "dev_mismatched.tsv",
        "test_matched": "test_matched.tsv",
        "test_mismatched": "test_mismatched.tsv",
    }
    assert mnli.resolve_split("dev") == "dev_matched" and mnli.resolve_split("test") == "test_matched"
    assert mnli.dev_splits == ("dev_matched", "dev_mismatched")
    assert glue_task_spec("RTE").resolve_split("dev") == "dev" and glue_task_spec("RTE").dev_splits == ("dev",)
    assert not glue_task_spec("RTE").splits["test"].labelled
    with pytest.raises(ConfigError, match="no split 'validation'"):
        glue_task_spec("RTE").resolve_split("validation")


def test_name_lookup():
    assert glue_task_spec("sst2") is glue_task_spec("SST-2") is glue_task_spec("sst-2") is TASKS["SST-2"]
    assert glue_task_spec(TASKS["SST-2"]) is TASKS["SST-2"]  # a spec stands for itself
    assert glue_task_spec("stsb").name == "STS-B"
    with pytest.raises(ConfigError, match="unknown GLUE task 'SQuAD'; choose one of CoLA, SST-2"):
        glue_task_spec("SQuAD")


def test_tfds_names_splits_and_label_maps_match_tensorflow_datasets():
    glue_builder = pytest.importorskip("tensorflow_datasets").builder_cls("glue")
    configs = {config.name: config for config in glue_builder.BUILDER_CONFIGS}
    for spec in TASKS.values():
        config = configs[spec.tfds_name.split("/")[1]]
        assert set(spec.tfds_text_features) == set(config.text_features), spec.name
        assert list(spec.tfds_text_features) == list(config.text_features), spec.name  # A then B
        if spec.is_regression:
            assert config.label_classes is None
        else:
            assert set(spec.tfds_label_map) == set(config.label_classes), spec.name
            assert set(spec.tfds_label_map.values()) == set(spec.labels), spec.name
    # The semantic direction of the 0/1 tasks: the positive tfds class is GLUE's "1".
    for name, positive in (
        ("CoLA", "acceptable"),
        ("SST-2", "positive"),
        ("MRPC", "equivalent"),
        ("QQP", "duplicate"),
        ("WNLI", "entailment"),
    ):
        assert glue_task_spec(name).tfds_label_map[positive] == "1"
