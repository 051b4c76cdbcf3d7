"""The user's own labelled files for sentence and sentence-pair tasks: CSV, TSV or JSON lines, columns by name.

The format comes from the extension: `.csv` (comma-separated, a header row, RFC 4180 quoting), `.tsv` (tab-separated,
a header row) or `.jsonl` / `.json` (one JSON object per line). Files are UTF-8 (a byte-order mark is skipped) unless
`encoding` says otherwise. Every problem is a `DataError` naming the file and the line.
"""

import csv
import dataclasses
import io
import json
import os

from electra_tf.errors import DataError
from electra_tf.text_files import read_text

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "jsonl"}


@dataclasses.dataclass(frozen=True)
class LabelledText:
    text_a: str
    text_b: str  # None for single sentences
    label: object  # str for classification, float for regression, None when the file has no label column
    line: int  # 1-based line of the record in its file


def file_format(path, argument="train_file"):
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise DataError(
            f"{argument}={path}: unknown format {extension!r}; name the file .csv, .tsv or .jsonl",
            arguments=(argument,),
        )
    return FORMATS[extension]


def _records(path, kind, encoding, encoding_errors, columns):
    """(line number, {column: value}) of each record; `columns` ((column, the argument naming it) pairs) must be in
    a CSV/TSV header or in each JSON object."""
    with io.StringIO(read_text(path, encoding, encoding_errors), newline="") as handle:
        if kind == "jsonl":
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise DataError(f"{path} line {number} is not valid JSON ({error.msg})") from None
                if not isinstance(record, dict):
                    raise DataError(f"{path} line {number} is not a JSON object")
                _require_columns(record, columns, f"{path} line {number}")
                yield number, record
            return
        reader = csv.reader(handle, delimiter="," if kind == "csv" else "\t")
        header = next(reader, None)
        if header is None:
            return
        _require_columns(header, columns, f"{path} line {reader.line_num} (the header)")
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise DataError(
                    f"{path} line {reader.line_num} has {len(row)} fields where the header has {len(header)}"
                )
            yield reader.line_num, dict(zip(header, row))


def read_labelled_file(
    path,
    text_column,
    text_pair_column=None,
    label_column="label",
    regression=False,
    argument="train_file",
    require_labels=True,
    encoding="utf-8",
    encoding_errors="strict",
):
    """The `LabelledText`s of `path`. Labels are kept as strings (classification) or read as numbers (regression).
    `encoding` and `encoding_errors` are Python's codec name and error handler (e.g. "latin-1", "replace")."""
    if not os.path.isfile(path):
        raise DataError(f"{argument}={path} does not exist", arguments=(argument,))
    kind = file_format(path, argument)
    columns = [
        (text_column, "text_column"),
        (text_pair_column, "text_pair_column"),
        (label_column if require_labels else None, "label_column"),
    ]
    columns = [(column, name) for column, name in columns if column]
    examples = []
    for number, record in _records(path, kind, encoding, encoding_errors, columns):
        text_a, text_b = record[text_column], record[text_pair_column] if text_pair_column else None
        for text in (text_a, text_b) if text_pair_column else (text_a,):
            if not isinstance(text, str) or not text.strip():
                raise DataError(f"{path} line {number}: empty text")
        label = record.get(label_column) if require_labels or label_column in record else None
        if label is not None:
            label = _label(label, regression, path, number)
        examples.append(LabelledText(text_a, text_b, label, number))
    if not examples:
        raise DataError(
            f"{path} holds no example (a header row and one row per example for CSV/TSV, one object per "
            "line for JSON lines)",
            arguments=(argument,),
        )
    return examples


def _require_columns(names, columns, where):
    """A DataError at `where` naming the first of `columns` ((column, argument) pairs) missing from `names`."""
    for column, argument in columns:
        if column not in names:
            existing = ", ".join(repr(str(name)) for name in names) or "none"
            raise DataError(
                f"{where} has no column {column!r} ({argument}); its columns are {existing}: pass "
                f"{argument}=<one of them>",
                arguments=(argument,),
            )


def _label(value, regression, path, number):
    if regression:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise DataError(f"{path} line {number}: label {value!r} is not a number (task=regression)") from None
    label = str(value).strip()
    if not label:
        raise DataError(f"{path} line {number}: empty label")
    return label


def label_names(labels):
    """The training labels in id order: numerically when every label is an integer ("0", "1", "2"), so that such
    labels keep their values as ids; otherwise sorted as strings."""
    unique = set(labels)
    if all(label.lstrip("-").isdigit() for label in unique):
        return sorted(unique, key=int)
    return sorted(unique)


def check_known_labels(examples, labels, path, argument):
    """A `DataError` naming the line of the first example whose label `labels` (a `LabelMapping` of train_file's
    labels) does not hold."""
    unknown = labels.unknown([example.label for example in examples])
    if unknown:
        example = examples[unknown[0]]
        raise DataError(
            f"{path} line {example.line}: label {example.label!r} never occurs in train_file (its "
            f"labels: {labels.names}); a classifier can only predict labels it was trained on",
            arguments=(argument, "train_file"),
        )
