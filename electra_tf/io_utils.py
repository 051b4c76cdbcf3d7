"""Small file helpers: every output is written to a temporary name and renamed, so readers never see half a file."""

import json
import os


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
