import glob
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.example_builder import PretrainingExample
from data_prep.shard_writer import ExampleSerializer, ShardWriter, shard_name


def _example(ids, length=16, second_from=None):
    input_ids = np.zeros(length, np.int32)
    input_ids[: len(ids)] = ids
    mask = (np.arange(length) < len(ids)).astype(np.int32)
    segments = np.zeros(length, np.int32)
    if second_from is not None:
        segments[second_from : len(ids)] = 1
    return PretrainingExample(input_ids, mask, segments)


@pytest.mark.parametrize("ids", [[2, 5, 3], [2, *range(100, 113), 3], [2, 127, 128, 16383, 16384, 30521, 3]])
def test_serialized_bytes_parse_as_tf_example(ids):
    example = _example(ids, second_from=2)
    serialized = ExampleSerializer(vocab_size=30522)(example)
    features = tf.train.Example.FromString(serialized).features.feature
    assert sorted(features) == ["input_ids", "input_mask", "segment_ids"]
    for name, values in zip(("input_ids", "input_mask", "segment_ids"), example):
        assert list(features[name].int64_list.value) == values.tolist()
    # And through TensorFlow's own parser, as the reader uses it.
    spec = {name: tf.io.FixedLenFeature([16], tf.int64) for name in ("input_ids", "input_mask", "segment_ids")}
    parsed = tf.io.parse_single_example(serialized, spec)
    assert parsed["input_ids"].numpy().tolist() == example.input_ids.tolist()


def test_serializer_handles_long_examples():
    example = _example([2, *([30000] * 1000), 3], length=1024)
    features = tf.train.Example.FromString(ExampleSerializer(30522)(example)).features.feature
    assert len(features["input_ids"].int64_list.value) == 1024


def test_shard_is_invisible_to_the_reader_glob_until_closed(tmp_path):
    writer = ShardWriter(str(tmp_path), 3, 8, ExampleSerializer(100))
    writer.write(_example([2, 7, 3]))
    writer.num_documents += 1
    assert glob.glob(str(tmp_path / "*.tfrecord*")) == []
    assert len(os.listdir(tmp_path)) == 1  # the temporary file
    entry = writer.close()
    assert entry["file"] == shard_name(3, 8) == "pretrain-00003-of-00008.tfrecord"
    assert os.listdir(tmp_path) == [entry["file"]]
    assert entry["num_examples"] == 1 and entry["num_tokens"] == 3 and entry["num_documents"] == 1
    assert entry["num_bytes"] == os.path.getsize(tmp_path / entry["file"])
    assert len(list(tf.data.TFRecordDataset(str(tmp_path / entry["file"])))) == 1


def test_aborted_shard_leaves_nothing(tmp_path):
    writer = ShardWriter(str(tmp_path), 0, 1, ExampleSerializer(100))
    writer.write(_example([2, 7, 3]))
    writer.abort()
    assert os.listdir(tmp_path) == []
