import json
import os

import pytest

from electra_tf.io_utils import (
    atomic_write_json,
    atomic_write_json_lines,
    atomic_write_text,
    json_safe,
    read_json_lines,
    staged_directory,
)


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    atomic_write_text(str(tmp_path / "a.txt"), "one")
    atomic_write_json(str(tmp_path / "b.json"), {"x": 1})
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.json"]
    assert (tmp_path / "a.txt").read_text() == "one"


def test_staged_directory_replaces_only_on_success(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with staged_directory(str(target)) as staging:
            open(os.path.join(staging, "half.txt"), "w").close()
            raise RuntimeError("crash while writing")
    assert os.listdir(target) == ["old.txt"] and os.listdir(tmp_path) == ["out"]
    with staged_directory(str(target)) as staging:
        open(os.path.join(staging, "new.txt"), "w").close()
    assert os.listdir(target) == ["new.txt"] and os.listdir(tmp_path) == ["out"]


def test_json_lines_round_trip_one_object_per_line(tmp_path):
    path = tmp_path / "items.jsonl"
    records = [{"word": "café", "p": 0.25}, {"word": "naïve", "label": None}]
    atomic_write_json_lines(str(path), records)
    text = path.read_text(encoding="utf-8")
    assert text.splitlines() == ['{"word": "café", "p": 0.25}', '{"word": "naïve", "label": null}']
    assert read_json_lines(str(path)) == records
    assert [p.name for p in tmp_path.iterdir()] == ["items.jsonl"]


def test_json_safe_writes_nan_as_null_at_any_depth():
    value = {"a": float("nan"), "b": [1.5, float("nan"), {"c": float("nan")}], "d": "nan"}
    assert json_safe(value) == {"a": None, "b": [1.5, None, {"c": None}], "d": "nan"}
    assert json.loads(json.dumps(json_safe(value), allow_nan=False)) == json_safe(value)
