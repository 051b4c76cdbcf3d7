"""A GLUE task's splits read and encoded once for all fine-tuning trials (`GlueTask.load_data`): train, labelled dev
sets, test sets."""

import dataclasses
import os
from typing import Dict

from finetune.glue import features as features_lib
from finetune.glue.metrics import score_key
from finetune.glue.readers import read_examples, task_file
from finetune.glue.tasks import glue_task_spec
from finetune.task import first_examples


@dataclasses.dataclass
class TaskData:
    """Encoded splits of one task. `dev` and `test` map split names ("dev", "dev_matched", ...) to GlueFeatures."""

    task: str
    train: features_lib.GlueFeatures
    num_train_examples_before_swap: int
    dev: Dict[str, features_lib.GlueFeatures]
    test: Dict[str, features_lib.GlueFeatures]


def submission_file_name(task, split):
    """The file name the GLUE server expects for `task`'s test `split`: "MRPC.tsv", "MNLI-m.tsv", ..."""
    return f"{score_key(task, split)}.tsv"


def _available_test_splits(spec, data_dir, source):
    """Test splits to predict: all of them from tfds; with TSV files only those whose file exists."""
    test_splits = [name for name in spec.splits if name.startswith("test")]
    if source != "tsv":
        return test_splits
    return [name for name in test_splits if os.path.isfile(task_file(data_dir, spec, name))]


def load_task_data(
    task,
    data_dir,
    tokenizer,
    max_seq_length,
    source="tsv",
    tfds_data_dir=None,
    tfds_download=False,
    max_train_examples=None,
    max_eval_examples=None,
    encoding="utf-8",
    encoding_errors="strict",
):
    """Reads and encodes `task`'s train split (its first `max_train_examples`, then doubled with swapped pairs for
    MRPC and STS-B, as the reference), its labelled dev splits and whichever test splits exist (the first
    `max_eval_examples` of each), decoding files with `encoding` / `encoding_errors`. Missing train/dev data raises
    DataError."""
    spec = glue_task_spec(task)

    def read(split, limit):
        return first_examples(
            read_examples(
                data_dir,
                spec,
                split,
                source=source,
                tfds_data_dir=tfds_data_dir,
                tfds_download=tfds_download,
                encoding=encoding,
                encoding_errors=encoding_errors,
            ),
            limit,
        )

    def encoded(split):
        examples = read(split, max_eval_examples)
        return examples, features_lib.encode_examples(examples, tokenizer, spec, max_seq_length)

    train_examples = read("train", max_train_examples)
    num_original = len(train_examples)
    if spec.swap_augment:
        train_examples = features_lib.with_swapped_pairs(train_examples)
    train = features_lib.encode_examples(train_examples, tokenizer, spec, max_seq_length)
    dev = {split: encoded(split)[1] for split in spec.dev_splits}
    test = {split: encoded(split)[1] for split in _available_test_splits(spec, data_dir, source)}
    return TaskData(spec.name, train, num_original, dev, test)
