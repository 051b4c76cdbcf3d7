import os

import pytest

from electra_tf.data import manifest as manifest_lib
from electra_tf.errors import DataError


def test_write_then_read(tmp_path):
    path = manifest_lib.write_manifest(str(tmp_path), {"num_examples": 3, "shards": [{"file": "a"}]})
    assert path == str(tmp_path / "manifest.json")
    assert manifest_lib.read_manifest(str(tmp_path)) == {
        "format_version": 1,
        "num_examples": 3,
        "shards": [{"file": "a"}],
    }
    assert os.listdir(tmp_path) == ["manifest.json"]  # no temporary file left


def test_absent_manifest_is_none(tmp_path):
    assert manifest_lib.read_manifest(str(tmp_path)) is None


def test_corrupt_manifest_is_a_data_error(tmp_path):
    (tmp_path / "manifest.json").write_text('{"num_examples": 3')
    with pytest.raises(DataError, match=r"manifest\.json is not a valid manifest"):
        manifest_lib.read_manifest(str(tmp_path))


def test_shard_names_are_recognised():
    name = manifest_lib.SHARD_NAME_PATTERN.format(index=3, num_shards=16)
    assert name == "pretrain-00003-of-00016.tfrecord"
    assert manifest_lib.SHARD_NAME_RE.match(name)
    assert not manifest_lib.SHARD_NAME_RE.match("pretrain_data.tfrecord-3-of-1000")
