import json

import numpy as np
import pytest
import tensorflow as tf

from data_prep.example_builder import PretrainingExample
from data_prep.shard_writer import ExampleSerializer, ShardWriter
from electra_tf.data import FEATURE_NAMES, check_pretraining_data, make_pretraining_dataset, pretraining_dataset
from electra_tf.data import manifest as manifest_lib
from electra_tf.errors import DataError
from electra_tf.tokenizer import vocab_fingerprint


def _example(number, length):
    """Example `number`: [CLS] number [SEP] then padding, so batches show which records they hold."""
    ids = np.zeros(length, np.int32)
    ids[:3] = [2, number, 3]
    return PretrainingExample(ids, (ids > 0).astype(np.int32), np.zeros(length, np.int32))


def _write_shards(directory, num_shards=3, per_shard=10, length=16, vocab_file=None, manifest=True):
    """Shards of numbered examples (shard s holds 100*s + 10 .. ), with a manifest like data_prep's."""
    directory.mkdir(exist_ok=True)
    entries = []
    for shard in range(num_shards):
        writer = ShardWriter(str(directory), shard, num_shards, ExampleSerializer(1000))
        for i in range(per_shard):
            writer.write(_example(100 * shard + 10 + i, length))
        entries.append(writer.close())
    if manifest:
        manifest_lib.write_manifest(
            str(directory),
            {
                "max_seq_length": length,
                "shards": entries,
                "vocab_size": 1000,
                "vocab_file": vocab_file,
                "vocab_fingerprint": vocab_fingerprint(vocab_file) if vocab_file else None,
                "num_examples": num_shards * per_shard,
            },
        )
    return f"{directory}/*.tfrecord*"


def _numbers(batch):
    return batch["input_ids"].numpy()[:, 1].tolist()


def test_batches_are_int32_dicts_of_static_shape(tmp_path):
    pattern = _write_shards(tmp_path / "d")
    dataset = make_pretraining_dataset(pattern, 16, 4)
    for name in FEATURE_NAMES:
        assert dataset.element_spec[name] == tf.TensorSpec([4, 16], tf.int32)
    batch = next(iter(dataset))
    assert batch["input_mask"].numpy()[:, :4].tolist() == [[1, 1, 1, 0]] * 4


def test_evaluation_reads_files_in_order_once_without_partial_batch(tmp_path):
    pattern = _write_shards(tmp_path / "d")
    numbers = [n for batch in make_pretraining_dataset(pattern, 16, 4, is_training=False) for n in _numbers(batch)]
    assert numbers == [100 * s + 10 + i for s in range(3) for i in range(10)][:28]


def test_training_shuffles_repeats_and_is_deterministic_per_seed(tmp_path):
    pattern = _write_shards(tmp_path / "d")

    def first_batches(seed, skip=0, count=30):
        dataset = make_pretraining_dataset(pattern, 16, 4, seed=seed, skip_batches=skip)
        return [_numbers(batch) for batch in dataset.take(count)]

    run = first_batches(seed=1, count=100)
    everything = [n for batch in run for n in batch]
    # 400 records from 30: the data repeats (the record shuffle mixes neighbouring epochs) and all records come up.
    assert set(everything) == {100 * s + 10 + i for s in range(3) for i in range(10)}
    assert everything[:30] != sorted(everything[:30])  # shuffled
    assert first_batches(seed=1, count=100) == run
    assert first_batches(seed=2, count=100) != run
    # Resuming after k batches reads exactly what the uninterrupted run read next.
    assert first_batches(seed=1, skip=7, count=93) == run[7:]


def test_every_fresh_iterator_of_one_dataset_reads_the_same_stream(tmp_path):
    """Keras makes more than one iterator under a distribution strategy; a seeded stream must not depend on how many
    iterators were made before (with reshuffle-per-iteration it did, and Mirrored runs diverged from default ones)."""
    dataset = make_pretraining_dataset(_write_shards(tmp_path / "d"), 16, 4, seed=3)
    first = [_numbers(batch) for batch in dataset.take(40)]
    second = [_numbers(batch) for batch in dataset.take(40)]
    assert first == second
    epochs = [n for batch in first for n in batch]
    assert epochs[:30] != epochs[30:60], "each epoch still gets its own order"


def test_auto_shard_policy_files_per_worker(tmp_path, monkeypatch):
    policy = tf.data.experimental.AutoShardPolicy
    assert pretraining_dataset.auto_shard_policy(8, 4) == policy.FILE
    assert pretraining_dataset.auto_shard_policy(3, 4) == policy.DATA
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1", "d:1"]}, "task": {"type": "worker", "index": 0}}
        ),
    )
    assert pretraining_dataset.number_of_workers() == 4
    pattern = _write_shards(tmp_path / "d")  # 3 files < 4 workers
    options = make_pretraining_dataset(pattern, 16, 4).options()
    assert options.experimental_distribute.auto_shard_policy == policy.DATA
    monkeypatch.delenv("TF_CONFIG")
    assert pretraining_dataset.number_of_workers() == 1
    options = make_pretraining_dataset(pattern, 16, 4).options()
    assert options.experimental_distribute.auto_shard_policy == policy.FILE


def test_no_matching_file_names_pattern_and_flag(tmp_path):
    with pytest.raises(DataError, match=rf"^pretrain_tfrecords={tmp_path}/\*\.tfrecord\* matches no file"):
        check_pretraining_data(f"{tmp_path}/*.tfrecord*", 128)


def test_wrong_max_seq_length_fails_before_tensorflow_parses(tmp_path):
    pattern = _write_shards(tmp_path / "d", length=16)
    manifest_path = tmp_path / "d" / "manifest.json"
    message = (
        rf"built with max_seq_length=16 \(see {manifest_path}\); pass max_seq_length=16 or rebuild the "
        rf"data with electra-build-data --max_seq_length=128"
    )
    with pytest.raises(DataError, match=message):
        make_pretraining_dataset(pattern, 128, 4)
    # Without a manifest the first record is read.
    pattern = _write_shards(tmp_path / "e", length=16, manifest=False)
    for path in (tmp_path / "e").glob("*.tfrecord"):
        path.rename(path.with_name("external-" + path.name))  # not this builder's names: no manifest needed
    with pytest.raises(
        DataError,
        match=r"records of .*external-pretrain-00000-of-00003\.tfrecord have length 16, "
        r"not 128; pass max_seq_length=16",
    ):
        check_pretraining_data(pattern, 128)
    assert check_pretraining_data(pattern, 16) == {}


def test_vocabulary_mismatch_names_the_flag(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n")
    pattern = _write_shards(tmp_path / "d", vocab_file=str(vocab))
    assert check_pretraining_data(pattern, 16, vocab_file=str(vocab), vocab_size=1000)["vocab_size"] == 1000
    other = tmp_path / "other.txt"
    other.write_text("[PAD]\n[UNK]\nmore\n")
    with pytest.raises(
        DataError,
        match=rf"^vocab_file={other} is not the vocabulary the pre-training data was "
        rf"built with \({vocab}",
    ):
        check_pretraining_data(pattern, 16, vocab_file=str(other))
    with pytest.raises(DataError, match=r"vocabulary of 1000 tokens .* the model's vocab_size is 30522"):
        check_pretraining_data(pattern, 16, vocab_size=30522)


def test_truncated_shard_is_named(tmp_path):
    pattern = _write_shards(tmp_path / "d")
    shard = tmp_path / "d" / "pretrain-00001-of-00003.tfrecord"
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(DataError, match=rf"shard {shard} is truncated or corrupt"):
        make_pretraining_dataset(pattern, 16, 4)


def test_truncated_file_without_manifest_is_named(tmp_path):
    _write_shards(tmp_path / "d", manifest=False)
    path = tmp_path / "d" / "pretrain-00002-of-00003.tfrecord"
    external = path.with_name("external.tfrecord")
    path.rename(external)
    external.write_bytes(external.read_bytes()[:-3])
    with pytest.raises(DataError, match=rf"{external} is truncated or not a TFRecord file"):
        check_pretraining_data(str(external), 16)


def test_builder_shards_without_manifest_are_an_unfinished_build(tmp_path):
    pattern = _write_shards(tmp_path / "d", manifest=False)
    with pytest.raises(
        DataError,
        match=r"has no manifest\.json beside it: the electra-build-data "
        r"run that wrote it did not finish",
    ):
        check_pretraining_data(pattern, 16)


def _flip_middle_record(path):
    """Flips bytes inside the payload of the record in the middle of `path` (the size stays); returns that record's
    byte offset."""
    data = bytearray(path.read_bytes())
    record_bytes = len(data) // 10  # the shards hold 10 records of one size
    offset = 5 * record_bytes
    data[offset + 20 : offset + 24] = bytes(255 - byte for byte in data[offset + 20 : offset + 24])
    path.write_bytes(bytes(data))
    return offset


def test_the_manifest_records_each_shards_sha256(tmp_path):
    import hashlib

    _write_shards(tmp_path / "d")
    manifest = manifest_lib.read_manifest(str(tmp_path / "d"))
    for entry in manifest["shards"]:
        assert entry["sha256"] == hashlib.sha256((tmp_path / "d" / entry["file"]).read_bytes()).hexdigest()


def test_a_corrupt_shard_of_the_same_size_fails_verification_before_training(tmp_path):
    pattern = _write_shards(tmp_path / "d")
    shard = tmp_path / "d" / "pretrain-00001-of-00003.tfrecord"
    _flip_middle_record(shard)
    message = (
        rf"^shard {shard} is corrupt: its sha256 differs from the one {tmp_path}/d/manifest\.json records; "
        r"restore the file or rebuild the data with electra-build-data$"
    )
    with pytest.raises(DataError, match=message):
        check_pretraining_data(pattern, 16)  # small data: verified by default
    with pytest.raises(DataError, match=message):
        check_pretraining_data(pattern, 16, verify_data=True)
    check_pretraining_data(pattern, 16, verify_data=False)


def test_verification_by_default_stops_above_the_size_limit(tmp_path, monkeypatch):
    pattern = _write_shards(tmp_path / "d")
    _flip_middle_record(tmp_path / "d" / "pretrain-00001-of-00003.tfrecord")
    monkeypatch.setattr(manifest_lib, "VERIFY_DATA_MAX_BYTES", 100)
    check_pretraining_data(pattern, 16)
    with pytest.raises(DataError, match="is corrupt: its sha256 differs"):
        check_pretraining_data(pattern, 16, verify_data=True)


@pytest.mark.parametrize("is_training", [False, True])
def test_a_corrupt_record_met_while_reading_names_the_shard_and_offset(tmp_path, is_training):
    pattern = _write_shards(tmp_path / "d")
    shard = tmp_path / "d" / "pretrain-00002-of-00003.tfrecord"
    offset = _flip_middle_record(shard) + 12  # TensorFlow names the checked payload, after the 12-byte header
    dataset = make_pretraining_dataset(pattern, 16, 4, is_training=is_training, validate=False)
    with pytest.raises(tf.errors.DataLossError, match=rf"corrupted record at {offset}"):
        for _ in dataset.take(40):
            pass
    message = (
        rf"^{shard} holds a corrupt record at byte {offset} \(its checksum does not match\): restore the "
        r"shard or rebuild the data with electra-build-data, or leave it out of "
        r"eval_tfrecords$"
    )
    with pytest.raises(DataError, match=message) as raised:
        with pretraining_dataset.corrupt_records_reported({"pretrain_tfrecords": None, "eval_tfrecords": pattern}):
            for _ in dataset.take(40):
                pass
    assert raised.value.arguments == ("eval_tfrecords",)
