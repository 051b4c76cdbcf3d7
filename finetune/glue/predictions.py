"""Predictions files in GLUE submission format: a header `index<TAB>prediction`, then one row per example.

Predictions are written as the task's label strings (`entailment`, `0`/`1`) or, for STS-B, as a float. The index
is the example's 0-based position among its split's examples.
"""

import math
import numbers
import os
import tempfile

import numpy as np

from electra_tf.errors import DataError
from finetune.glue.tasks import glue_task_spec

HEADER = "index\tprediction"


def format_prediction(task, value):
    """The text of one prediction: a label string for classification (from a label id or string), else a float."""
    spec = glue_task_spec(task)
    if spec.is_regression:
        score = float(value)
        if not math.isfinite(score):
            raise ValueError(f"{spec.name} prediction {value!r} is not a finite number")
        return repr(score)
    if isinstance(value, str):
        if value not in spec.labels:
            raise ValueError(f"{spec.name} prediction {value!r} is not one of {', '.join(spec.labels)}")
        return value
    if isinstance(value, numbers.Integral) and 0 <= int(value) < len(spec.labels):
        return spec.labels[int(value)]
    raise ValueError(f"{spec.name} prediction {value!r} is neither a label nor a label id in [0, {len(spec.labels)})")


def write_predictions(path, predictions, task, indices=None):
    """Atomically writes `predictions` (label ids, label strings or STS-B scores) to `path` in GLUE format.

    `indices` default to 0..n-1, the examples' positions.
    """
    predictions = list(np.asarray(predictions).tolist()) if isinstance(predictions, np.ndarray) else list(predictions)
    indices = range(len(predictions)) if indices is None else list(indices)
    if len(indices) != len(predictions):
        raise ValueError(f"got {len(indices)} indices for {len(predictions)} predictions")
    spec = glue_task_spec(task)
    lines = [HEADER] + [f"{int(index)}\t{format_prediction(spec, value)}" for index, value in zip(indices, predictions)]
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    # Write beside the target then rename, so a reader never sees a half-written file.
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".tsv")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def read_predictions(path, task, num_examples):
    """Reads a GLUE-format predictions file for `num_examples` examples, in index order.

    Returns label ids (int64) for classification or scores (float64) for STS-B. Raises DataError naming the file
    (and line) for a missing file, a wrong header, a malformed row, an unknown label, a duplicate or out-of-range
    index, or a row count different from `num_examples`.
    """
    spec = glue_task_spec(task)
    if not os.path.isfile(path):
        raise DataError(f"predictions file {path} does not exist; pass the path of a GLUE-format .tsv")
    try:
        with open(path, "r", encoding="utf-8-sig", newline="") as f:
            lines = f.read().split("\n")
    except UnicodeDecodeError as error:
        raise DataError(f"predictions file {path} is not UTF-8 ({error}); write it with write_predictions") from None
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines or lines[0].lower() != HEADER:
        found = repr(lines[0]) if lines else "an empty file"
        raise DataError(
            f"{path}, line 1: expected the header {HEADER!r}, found {found}; GLUE predictions start with that header"
        )
    found_rows = len(lines) - 1
    if found_rows != num_examples:
        raise DataError(
            f"predictions file {path} has {found_rows} rows but the {spec.name} split being scored has "
            f"{num_examples} examples; predict every example of that split"
        )
    values = np.zeros(num_examples, dtype=np.float64 if spec.is_regression else np.int64)
    seen = np.zeros(num_examples, dtype=bool)
    for line_number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(f"{path}, line {line_number}: expected 'index<TAB>prediction', found {line!r}")
        index = _parse_index(fields[0], path, line_number, num_examples)
        if seen[index]:
            raise DataError(f"{path}, line {line_number}: index {index} appears twice; write one row per example")
        seen[index] = True
        values[index] = _parse_value(fields[1].strip(), spec, path, line_number)
    return values


def _parse_index(text, path, line_number, num_examples):
    try:
        index = int(text)
    except ValueError:
        raise DataError(f"{path}, line {line_number}: index {text!r} is not an integer") from None
    if not 0 <= index < num_examples:
        raise DataError(
            f"{path}, line {line_number}: index {index} is outside 0..{num_examples - 1}, the positions "
            "of the examples being scored"
        )
    return index


def _parse_value(text, spec, path, line_number):
    if spec.is_regression:
        try:
            score = float(text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise DataError(f"{path}, line {line_number}: {spec.name} prediction {text!r} is not a finite number")
        return score
    if text not in spec.labels:
        raise DataError(
            f"{path}, line {line_number}: unknown {spec.name} label {text!r}; expected one of {', '.join(spec.labels)}"
        )
    return spec.labels.index(text)
