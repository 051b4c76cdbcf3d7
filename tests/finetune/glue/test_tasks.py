"""The GLUE task specs: labels, metrics, splits and the reference's epochs, lengths and learning rates."""

import pytest

from electra_tf.errors import ConfigError
from finetune.glue.tasks import TASKS, get_task

GLUE_TASKS = ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI"]


def test_registry_holds_the_nine_glue_tasks():
    assert list(TASKS) == GLUE_TASKS


@pytest.mark.parametrize("name,metrics,primary", [
    ("CoLA", ("mcc",), "mcc"), ("SST-2", ("accuracy",), "accuracy"), ("MRPC", ("accuracy", "f1"), "accuracy"),
    ("STS-B", ("pearson", "spearman"), "spearman"), ("QQP", ("accuracy", "f1"), "accuracy"),
    ("MNLI", ("accuracy",), "accuracy"), ("QNLI", ("accuracy",), "accuracy"), ("RTE", ("accuracy",), "accuracy"),
    ("WNLI", ("accuracy",), "accuracy")])
def test_metrics_as_the_paper_reports_them(name, metrics, primary):
    spec = get_task(name)
    assert (spec.metric_names, spec.primary_metric) == (metrics, primary)


def test_labels_and_regression():
    assert get_task("STS-B").is_regression and get_task("STS-B").num_labels == 1
    assert get_task("MNLI").labels == ("contradiction", "entailment", "neutral")
    assert get_task("RTE").labels == get_task("QNLI").labels == ("entailment", "not_entailment")
    for name in ("CoLA", "SST-2", "MRPC", "QQP", "WNLI"):
        assert get_task(name).labels == ("0", "1")
    assert get_task("MRPC").positive_label == get_task("QQP").positive_label == "1"
    assert [spec.name for spec in TASKS.values() if not spec.is_pair_task] == ["CoLA", "SST-2"]


def test_reference_defaults():
    epochs = {spec.name: spec.epochs for spec in TASKS.values()}
    assert epochs == {name: (10 if name in ("RTE", "STS-B") else 3) for name in GLUE_TASKS}
    assert {spec.max_seq_length for spec in TASKS.values()} == {128}
    assert [spec.name for spec in TASKS.values() if spec.swap_augment] == ["MRPC", "STS-B"]
    assert [spec.name for spec in TASKS.values() if spec.skip_malformed_lines] == ["QQP"]
    spec = get_task("CoLA")
    assert (spec.learning_rate("small"), spec.learning_rate("base"), spec.learning_rate("large")) == (3e-4, 1e-4, 5e-5)
    with pytest.raises(ConfigError, match="unknown model size 'huge'"):
        spec.learning_rate("huge")


def test_split_files_and_aliases():
    mnli = get_task("MNLI")
    assert {name: split.file_name for name, split in mnli.splits.items()} == {
        "train": "train.tsv", "dev_matched": "dev_matched.tsv", "dev_mismatched": "dev_mismatched.tsv",
        "test_matched": "test_matched.tsv", "test_mismatched": "test_mismatched.tsv"}
    assert mnli.resolve_split("dev") == "dev_matched" and mnli.resolve_split("test") == "test_matched"
    assert mnli.dev_splits == ("dev_matched", "dev_mismatched")
    assert get_task("RTE").resolve_split("dev") == "dev" and get_task("RTE").dev_splits == ("dev",)
    assert not get_task("RTE").splits["test"].labelled
    with pytest.raises(ConfigError, match="no split 'validation'"):
        get_task("RTE").resolve_split("validation")


def test_name_lookup():
    assert get_task("sst2") is get_task("SST-2") is get_task("sst-2")
    assert get_task("stsb").name == "STS-B"
    with pytest.raises(ConfigError, match="unknown GLUE task 'SQuAD'; choose one of CoLA, SST-2"):
        get_task("SQuAD")


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
    for name, positive in (("CoLA", "acceptable"), ("SST-2", "positive"), ("MRPC", "equivalent"),
                           ("QQP", "duplicate"), ("WNLI", "entailment")):
        assert get_task(name).tfds_label_map[positive] == "1"
