"""GLUE examples from the standard TSV files or from tensorflow-datasets, as one `Example` type.

TSV rows are split on tabs only, never on quotes: GLUE text contains unbalanced `"` (MRPC, QQP) that a CSV reader
with quoting would merge across rows. Lines are split on `\\n` only (stray `\\r`, U+2028 and friends inside a
sentence stay part of it) and a UTF-8 byte-order mark at the start of the file (MRPC) is dropped.
"""

import dataclasses
import math
import os
from typing import List, Optional

import numpy as np
from absl import logging

from electra_tf.errors import ConfigError, DataError
from electra_tf.text_files import read_text
from finetune.glue.tasks import glue_task_spec


@dataclasses.dataclass(frozen=True)
class Example:
    """One GLUE example. `label` is the label string as in the task's files (a float for STS-B), None if unlabelled.

    `guid` is `<split>-<n>`, n the example's 0-based position among its split's examples (the index a GLUE
    submission uses), for both sources.
    """

    guid: str
    text_a: str
    text_b: Optional[str]
    label: object


@dataclasses.dataclass(frozen=True)
class TsvReadResult:
    """Examples of one TSV file, plus the 1-based line numbers of rows skipped as malformed (QQP only)."""

    examples: List[Example]
    skipped_lines: List[int]


def task_file(data_dir, task, split):
    """Path of `task`'s `split` file under the GLUE directory `data_dir`."""
    spec = glue_task_spec(task)
    split = spec.resolve_split(split)
    return os.path.join(data_dir, spec.directory, spec.splits[split].file_name)


def read_examples(
    data_dir,
    task,
    split,
    source="tsv",
    tfds_data_dir=None,
    tfds_download=False,
    encoding="utf-8",
    encoding_errors="strict",
):
    """Examples of `task`/`split` from `<data_dir>/<TASK>/<file>.tsv` (source="tsv") or tfds `glue/<task>`.

    Args:
        data_dir: the GLUE directory (as written by download_glue_data.py); ignored for source="tfds".
        task: a task name, e.g. "MRPC"; split: "train", "dev", "test" (MNLI: "dev_matched", ... ; "dev" = matched).
        tfds_data_dir, tfds_download: where tfds keeps prepared datasets and whether it may download them.
        encoding, encoding_errors: the TSV files' encoding and Python's codecs error handler.
    """
    if source == "tsv":
        result = read_tsv(task_file(data_dir, task, split), task, split, encoding, encoding_errors)
        if result.skipped_lines:
            logging.warning(
                "%s: skipped %d malformed lines (first at line %d), as the reference does",
                task_file(data_dir, task, split),
                len(result.skipped_lines),
                result.skipped_lines[0],
            )
        return result.examples
    if source == "tfds":
        return read_tfds(task, split, data_dir=tfds_data_dir, download=tfds_download)
    raise DataError(f"unknown GLUE data source {source!r}; choose 'tsv' or 'tfds'")


def split_labels(data_dir, task, split="dev"):
    """The labels of a labelled split of `task` in `data_dir` (its TSV file): label ids (int64), or scores
    (float64) for STS-B."""
    spec = glue_task_spec(task)
    split = spec.resolve_split(split)
    if not spec.splits[split].labelled:
        raise ConfigError(
            f"split={split} of {spec.name} has no labels to score against; use a dev split "
            f"({', '.join(spec.dev_splits)})",
            arguments=("split",),
        )
    examples = read_examples(data_dir, spec, split)
    if spec.is_regression:
        return np.array([example.label for example in examples], dtype=np.float64)
    return np.array([spec.labels.index(example.label) for example in examples], dtype=np.int64)


def read_tsv(path, task, split, encoding="utf-8", encoding_errors="strict"):
    """Parses one GLUE TSV file of `task`'s `split` into a TsvReadResult.

    Rows with the wrong number of columns or an unknown label raise DataError naming the file and line, except for
    tasks whose real files contain such rows (QQP), where they are skipped and their line numbers returned.
    """
    spec = glue_task_spec(task)
    split = spec.resolve_split(split)
    layout = spec.splits[split].layout
    if not os.path.isfile(path):
        raise DataError(
            f"GLUE file {path} does not exist: pass data_dir=<directory holding {spec.directory}/> "
            "as written by download_glue_data.py",
            arguments=("data_dir",),
        )
    examples, skipped = [], []
    # Split on \n only: universal newlines would also split on a stray \r inside a sentence.
    lines = read_text(path, encoding, encoding_errors).split("\n")
    if lines and not lines[-1]:
        lines.pop()
    for line_number, line in enumerate(lines, start=1):
        if line_number == 1 and layout.has_header:
            continue
        line = line[:-1] if line.endswith("\r") else line
        try:
            examples.append(_parse_row(line.split("\t"), layout, spec, f"{split}-{len(examples)}"))
        except _MalformedRow as problem:
            if spec.skip_malformed_lines:
                skipped.append(line_number)
                continue
            raise DataError(
                f"{path}, line {line_number}: {problem} for {spec.name} {split}; check that the "
                f"file is the GLUE {spec.name} {split} file, unmodified"
            ) from None
    if not examples:
        raise DataError(f"GLUE file {path} has no examples; re-download the GLUE data")
    return TsvReadResult(examples, skipped)


class _MalformedRow(ValueError):
    pass


def _parse_row(fields, layout, spec, guid):
    count_ok = len(fields) >= layout.num_columns if layout.extra_columns_allowed else len(fields) == layout.num_columns
    if not count_ok:
        expected = f"{'at least ' if layout.extra_columns_allowed else ''}{layout.num_columns}"
        raise _MalformedRow(f"expected {expected} tab-separated columns, found {len(fields)}")
    text_b = None if layout.text_b is None else fields[layout.text_b]
    label = None if layout.label is None else _parse_label(fields[layout.label], spec)
    return Example(guid=guid, text_a=fields[layout.text_a], text_b=text_b, label=label)


def _parse_label(value, spec):
    if spec.is_regression:
        try:
            score = float(value)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise _MalformedRow(f"label {value!r} is not a number")
        return score
    if value not in spec.labels:
        raise _MalformedRow(f"unknown label {value!r} (expected one of {', '.join(spec.labels)})")
    return value


def read_tfds(task, split, data_dir=None, download=False):
    """Examples of `task`/`split` from tensorflow-datasets `glue/<config>` (imported only when called).

    Without `download` the dataset must already be prepared in `data_dir` (tfds's default when None).
    """
    import tensorflow_datasets as tfds  # heavy; only for callers who ask for tfds

    spec = glue_task_spec(task)
    split = spec.resolve_split(split)
    builder = tfds.builder(spec.tfds_name, data_dir=data_dir)
    if download:
        builder.download_and_prepare()
    elif not builder.is_prepared():
        raise DataError(
            f"tensorflow-datasets {spec.tfds_name} is not prepared in {builder.data_dir}: run "
            f"`tfds build {spec.tfds_name}` or allow downloading (tfds_download=True)",
            arguments=("tfds_download",),
        )
    label_names = None if spec.is_regression else builder.info.features["label"].names
    dataset = builder.as_dataset(split=spec.splits[split].tfds_split, shuffle_files=False)
    return examples_from_tfds_records(tfds.as_numpy(dataset), task, split, label_names)


def examples_from_tfds_records(records, task, split, label_names=None):
    """Converts tfds GLUE records (dicts of numpy values) to Examples with the TSV files' label strings.

    `label_names` are the tfds ClassLabel names in id order (None for STS-B). Test records (label -1) are unlabelled.
    """
    spec = glue_task_spec(task)
    split = spec.resolve_split(split)
    labelled = spec.splits[split].labelled
    if not spec.is_regression:
        unknown = [name for name in label_names if name not in spec.tfds_label_map]
        if unknown:
            raise DataError(
                f"tensorflow-datasets {spec.tfds_name} has labels {unknown} this reader does not know; "
                "use the GLUE TSV files (data_source=tsv)",
                arguments=("data_source",),
            )
    features = spec.tfds_text_features
    # tfds stores examples in a hashed order; its `idx` is the row number in the source file, so sorting by it
    # restores the TSV order and makes positions (the GLUE submission index) agree with the TSV reader.
    examples = []
    for position, record in enumerate(sorted(records, key=lambda record: int(record["idx"]))):
        texts = [_as_text(record[name]) for name in features]
        label = None
        if labelled:
            if spec.is_regression:
                label = float(record["label"])
            else:
                label = spec.tfds_label_map[label_names[int(record["label"])]]
        examples.append(
            Example(
                guid=f"{split}-{position}", text_a=texts[0], text_b=texts[1] if len(texts) > 1 else None, label=label
            )
        )
    return examples


def _as_text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
