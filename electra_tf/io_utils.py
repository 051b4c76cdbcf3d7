"""Small file helpers: every output is written to a temporary name and renamed, so readers never see half a file."""

import contextlib
import json
import math
import os
import shutil
import tempfile


def atomic_write_text(path, text):
    """Write `text` to `path` via a temporary file in the same directory and an atomic rename."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def atomic_write_json(path, values):
    atomic_write_text(path, json.dumps(values, indent=2, sort_keys=True) + "\n")


def atomic_write_json_lines(path, records):
    """One JSON object per line (UTF-8, not escaped), written atomically."""
    atomic_write_text(path, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))


def read_json_lines(path):
    """The objects of a JSON-lines file, in order."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@contextlib.contextmanager
def staged_directory(directory):
    """Yield a fresh staging directory that replaces `directory` when the block succeeds, and is removed if it fails.

    Readers see the old directory or the complete new one, never a partly written one; the old one is only deleted
    once the new one is in place.
    """
    parent = os.path.dirname(os.path.abspath(directory))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".staging-", dir=parent)
    try:
        yield staging
        previous = None
        if os.path.isdir(directory):
            previous = f"{staging}-previous"
            os.replace(directory, previous)
        os.replace(staging, directory)
        if previous:
            shutil.rmtree(previous, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_text_files(directory, files):
    """Write each {name: text} of `files` into `directory`, atomically."""
    for name, text in files.items():
        atomic_write_text(os.path.join(directory, name), text)


def json_safe(value):
    """`value` with every float NaN (an undefined correlation, an interval left open) replaced by None, in nested
    dicts and lists: JSON has no NaN, so it is written as null."""
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    return None if isinstance(value, float) and math.isnan(value) else value
