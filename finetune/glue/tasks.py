"""The GLUE task specs: each task's file layout, labels, metrics and the reference's epochs and sequence length.

Column layouts are those of the files written by GLUE's `download_glue_data.py` (the layout every BERT/ELECTRA
reader assumes); tensorflow-datasets `glue/<config>` is described alongside as the alternative source.
"""

import dataclasses
from typing import Mapping, Optional, Tuple

from electra_tf.errors import ConfigError
from finetune.hyperparameters import REFERENCE_LEARNING_RATES


@dataclasses.dataclass(frozen=True)
class ColumnLayout:
    """Where a split's fields live in its tab-separated rows.

    Column indices may be negative (counted from the end), as for MNLI's gold label. `num_columns` is exact unless
    `extra_columns_allowed`, in which case it is the minimum.
    """

    num_columns: int
    text_a: int
    text_b: Optional[int] = None
    label: Optional[int] = None
    has_header: bool = True
    extra_columns_allowed: bool = False


@dataclasses.dataclass(frozen=True)
class SplitSpec:
    """One split of a task: its file under `<data_dir>/<task dir>/`, its layout and its tfds split name."""

    file_name: str
    layout: ColumnLayout
    tfds_split: str

    @property
    def labelled(self):
        return self.layout.label is not None


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """Everything model-independent about one GLUE task.

    `labels` is None for a regression task (STS-B). Classification labels are the strings used in the task's files
    (and in GLUE submissions); a label's id is its position in `labels`.
    """

    name: str
    splits: Mapping[str, SplitSpec]
    labels: Optional[Tuple[str, ...]]
    metric_names: Tuple[str, ...]
    primary_metric: str
    tfds_name: str
    tfds_text_features: Tuple[str, ...]
    # tfds ClassLabel name -> this task's label string (None for regression).
    tfds_label_map: Optional[Mapping[str, str]] = None
    positive_label: Optional[str] = None  # the class F1 is computed for
    skip_malformed_lines: bool = False  # QQP only: the reference skips rows it cannot parse
    swap_augment: bool = False  # double train with (B, A) pairs, as the reference does for MRPC and STS-B
    epochs: int = 3
    max_seq_length: int = 128
    learning_rates: Mapping[str, float] = dataclasses.field(default_factory=lambda: dict(REFERENCE_LEARNING_RATES))
    dir_name: Optional[str] = None  # directory under data_dir; defaults to `name`

    @property
    def is_regression(self):
        return self.labels is None

    @property
    def num_labels(self):
        """Number of classifier outputs: 1 for regression."""
        return 1 if self.labels is None else len(self.labels)

    @property
    def is_pair_task(self):
        return next(iter(self.splits.values())).layout.text_b is not None

    @property
    def directory(self):
        return self.dir_name or self.name

    @property
    def dev_splits(self):
        """The labelled evaluation splits, in reporting order (MNLI: matched, then mismatched)."""
        return tuple(name for name in self.splits if name.startswith("dev"))

    def resolve_split(self, split):
        """Maps `split` to one of this task's splits; "dev"/"test" mean the first (matched) one for MNLI."""
        if split in self.splits:
            return split
        prefixed = [name for name in self.splits if name.startswith(split + "_")]
        if prefixed:
            return prefixed[0]
        raise ConfigError(f"task {self.name} has no split {split!r}; choose one of {', '.join(self.splits)}")

    def learning_rate(self, model_size):
        """The reference's peak learning rate for `model_size` ("small", "base" or "large")."""
        if model_size not in self.learning_rates:
            raise ConfigError(
                f"unknown model size {model_size!r} for task {self.name}; "
                f"choose one of {', '.join(self.learning_rates)}"
            )
        return self.learning_rates[model_size]


def _standard_splits(train, dev, test, tfds_dev="validation", tfds_test="test"):
    return {
        "train": SplitSpec("train.tsv", train, "train"),
        "dev": SplitSpec("dev.tsv", dev, tfds_dev),
        "test": SplitSpec("test.tsv", test, tfds_test),
    }


def _indexed_pair_splits():
    """QNLI, RTE, WNLI: `index a b label` with a header; test drops the label."""
    labelled = ColumnLayout(num_columns=4, text_a=1, text_b=2, label=3)
    return _standard_splits(labelled, labelled, ColumnLayout(num_columns=3, text_a=1, text_b=2))


_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")
_ACCURACY = ("accuracy",)
_ACCURACY_F1 = ("accuracy", "f1")

_COLA_LABELLED = ColumnLayout(num_columns=4, text_a=3, label=1, has_header=False)
_SST_LABELLED = ColumnLayout(num_columns=2, text_a=0, label=1)
_MRPC_LABELLED = ColumnLayout(num_columns=5, text_a=3, text_b=4, label=0)
_STSB_LABELLED = ColumnLayout(num_columns=10, text_a=7, text_b=8, label=9)
_QQP_LABELLED = ColumnLayout(num_columns=6, text_a=3, text_b=4, label=5)
# MNLI train has 12 columns and dev 16 (five annotator labels); the gold label is always last.
_MNLI_LABELLED = ColumnLayout(num_columns=11, text_a=8, text_b=9, label=-1, extra_columns_allowed=True)
_MNLI_TEST = ColumnLayout(num_columns=10, text_a=8, text_b=9)

TASKS = {
    spec.name: spec
    for spec in (
        TaskSpec(
            name="CoLA",
            splits=_standard_splits(_COLA_LABELLED, _COLA_LABELLED, ColumnLayout(num_columns=2, text_a=1)),
            labels=_BINARY,
            metric_names=("mcc",),
            primary_metric="mcc",
            tfds_name="glue/cola",
            tfds_text_features=("sentence",),
            tfds_label_map={"unacceptable": "0", "acceptable": "1"},
        ),
        TaskSpec(
            name="SST-2",
            splits=_standard_splits(_SST_LABELLED, _SST_LABELLED, ColumnLayout(num_columns=2, text_a=1)),
            labels=_BINARY,
            metric_names=_ACCURACY,
            primary_metric="accuracy",
            tfds_name="glue/sst2",
            tfds_text_features=("sentence",),
            tfds_label_map={"negative": "0", "positive": "1"},
        ),
        TaskSpec(
            name="MRPC",
            splits=_standard_splits(_MRPC_LABELLED, _MRPC_LABELLED, ColumnLayout(num_columns=5, text_a=3, text_b=4)),
            labels=_BINARY,
            metric_names=_ACCURACY_F1,
            primary_metric="accuracy",
            positive_label="1",
            tfds_name="glue/mrpc",
            tfds_text_features=("sentence1", "sentence2"),
            tfds_label_map={"not_equivalent": "0", "equivalent": "1"},
            swap_augment=True,
        ),
        TaskSpec(
            name="STS-B",
            splits=_standard_splits(_STSB_LABELLED, _STSB_LABELLED, ColumnLayout(num_columns=9, text_a=7, text_b=8)),
            labels=None,
            metric_names=("pearson", "spearman"),
            primary_metric="spearman",
            tfds_name="glue/stsb",
            tfds_text_features=("sentence1", "sentence2"),
            swap_augment=True,
            epochs=10,
        ),
        TaskSpec(
            name="QQP",
            splits=_standard_splits(_QQP_LABELLED, _QQP_LABELLED, ColumnLayout(num_columns=3, text_a=1, text_b=2)),
            labels=_BINARY,
            metric_names=_ACCURACY_F1,
            primary_metric="accuracy",
            positive_label="1",
            tfds_name="glue/qqp",
            tfds_text_features=("question1", "question2"),
            tfds_label_map={"not_duplicate": "0", "duplicate": "1"},
            skip_malformed_lines=True,
        ),
        TaskSpec(
            name="MNLI",
            splits={
                "train": SplitSpec("train.tsv", _MNLI_LABELLED, "train"),
                "dev_matched": SplitSpec("dev_matched.tsv", _MNLI_LABELLED, "validation_matched"),
                "dev_mismatched": SplitSpec("dev_mismatched.tsv", _MNLI_LABELLED, "validation_mismatched"),
                "test_matched": SplitSpec("test_matched.tsv", _MNLI_TEST, "test_matched"),
                "test_mismatched": SplitSpec("test_mismatched.tsv", _MNLI_TEST, "test_mismatched"),
            },
            labels=("contradiction", "entailment", "neutral"),
            metric_names=_ACCURACY,
            primary_metric="accuracy",
            tfds_name="glue/mnli",
            tfds_text_features=("premise", "hypothesis"),
            tfds_label_map={name: name for name in ("contradiction", "entailment", "neutral")},
        ),
        TaskSpec(
            name="QNLI",
            splits=_indexed_pair_splits(),
            labels=_ENTAILMENT,
            metric_names=_ACCURACY,
            primary_metric="accuracy",
            tfds_name="glue/qnli",
            tfds_text_features=("question", "sentence"),
            tfds_label_map={name: name for name in _ENTAILMENT},
        ),
        TaskSpec(
            name="RTE",
            splits=_indexed_pair_splits(),
            labels=_ENTAILMENT,
            metric_names=_ACCURACY,
            primary_metric="accuracy",
            tfds_name="glue/rte",
            tfds_text_features=("sentence1", "sentence2"),
            tfds_label_map={name: name for name in _ENTAILMENT},
            epochs=10,
        ),
        TaskSpec(
            # GLUE's WNLI files use 1 for entailment.
            name="WNLI",
            splits=_indexed_pair_splits(),
            labels=_BINARY,
            metric_names=_ACCURACY,
            primary_metric="accuracy",
            tfds_name="glue/wnli",
            tfds_text_features=("sentence1", "sentence2"),
            tfds_label_map={"not_entailment": "0", "entailment": "1"},
        ),
    )
}


def glue_task_spec(task):
    """The TaskSpec of `task`: a task name (case-insensitive; "sst2"/"stsb" spellings accepted) or the TaskSpec itself,
    the two forms every function of `finetune.glue` taking a `task` accepts."""
    if isinstance(task, TaskSpec):
        return task
    wanted = task.replace("-", "").lower()
    for spec in TASKS.values():
        if spec.name.replace("-", "").lower() == wanted:
            return spec
    raise ConfigError(f"unknown GLUE task {task!r}; choose one of {', '.join(TASKS)}")
