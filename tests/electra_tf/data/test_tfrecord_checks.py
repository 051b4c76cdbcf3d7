import pytest
import tensorflow as tf

from electra_tf.data import tfrecord_checks
from electra_tf.errors import DataError

FEATURES = ("input_ids", "input_mask", "segment_ids")


def _write(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def _example(length, names=FEATURES):
    feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[1] * length))
    return tf.train.Example(features=tf.train.Features(feature={n: feature for n in names})).SerializeToString()


def test_framing_counts_records_and_detects_every_cut(tmp_path):
    path = tmp_path / "a.tfrecord"
    _write(path, [b"x" * 10, b"", b"y" * 300])
    assert tfrecord_checks.check_framing(str(path)) == 3
    data = path.read_bytes()
    for cut in (1, 4, 16, 20, len(data) - 1):
        path.write_bytes(data[:cut])
        with pytest.raises(DataError, match=rf"{path} is truncated or not a TFRecord file"):
            tfrecord_checks.check_framing(str(path))


def test_first_record_features_and_length(tmp_path):
    path = tmp_path / "a.tfrecord"
    _write(path, [_example(64)])
    tfrecord_checks.check_first_record(str(path), 64, FEATURES)
    with pytest.raises(DataError, match=r"have length 64, not 128; pass max_seq_length=64"):
        tfrecord_checks.check_first_record(str(path), 128, FEATURES)
    _write(path, [_example(64, names=("input_ids",))])
    with pytest.raises(DataError, match=r"lack the features input_mask, segment_ids"):
        tfrecord_checks.check_first_record(str(path), 64, FEATURES)
    _write(path, [b"not a proto \xff\xff"])
    with pytest.raises(DataError, match=r"cannot read the first record"):
        tfrecord_checks.check_first_record(str(path), 64, FEATURES)


def test_empty_file_is_reported(tmp_path):
    path = tmp_path / "empty.tfrecord"
    path.write_bytes(b"")
    with pytest.raises(DataError, match=r"empty\.tfrecord holds no records"):
        tfrecord_checks.check_unlisted_file(str(path), 16, FEATURES)
