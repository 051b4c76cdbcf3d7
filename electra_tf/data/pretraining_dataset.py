"""The tf.data reader of pre-training TFRecords, and the start-of-training check of those files.

Records are `tf.train.Example`s with int64 features input_ids, input_mask, segment_ids of fixed length
max_seq_length (as written by `electra-build-data` and by the reference). Batches are dicts of
int32 tensors [global_batch_size, max_seq_length]; Keras' `model.fit` splits them across replicas.
"""

import contextlib
import json
import os

import tensorflow as tf

from electra_tf.data import manifest as manifest_lib
from electra_tf.data import tfrecord_checks
from electra_tf.data.keras_input import keras_input_options
from electra_tf.errors import DataError
from electra_tf.preflight import no_match_error

FEATURE_NAMES = ("input_ids", "input_mask", "segment_ids")
DEFAULT_SHUFFLE_BUFFER = 10_000
# Files read at once in training: enough to mix documents from different shards without many open files.
MAX_INTERLEAVE_CYCLE = 16


def expand_file_patterns(file_patterns, argument="pretrain_tfrecords"):
    """Sorted, de-duplicated files matching comma-separated globs (str) or a list of globs; DataError naming
    `argument` if none."""
    if isinstance(file_patterns, str):
        file_patterns = file_patterns.split(",")
    patterns = [p.strip() for p in file_patterns if p and p.strip()]
    if not patterns:
        raise DataError(f"no pre-training data given: pass {argument}='<dir>/*.tfrecord*'", arguments=(argument,))
    files = set()
    for pattern in patterns:
        matches = [path for path in tf.io.gfile.glob(pattern) if not tf.io.gfile.isdir(path)]
        if not matches:
            raise no_match_error(argument, pattern)
        files.update(matches)
    return sorted(files)


def number_of_workers():
    """Workers of a multi-worker job, from TF_CONFIG (what MultiWorkerMirroredStrategy reads); 1 otherwise."""
    try:
        cluster = json.loads(os.environ.get("TF_CONFIG") or "{}").get("cluster", {})
    except ValueError:
        return 1
    return max(1, len(cluster.get("chief", [])) + len(cluster.get("worker", [])))


def auto_shard_policy(num_files, num_workers):
    """FILE when every worker can own files of its own (no record is read twice); DATA otherwise.

    With FILE each worker opens only its files, the cheap choice for real corpora with many shards. With fewer files
    than workers FILE would leave workers without data, so every worker reads everything and keeps every
    num_workers-th element (DATA). When the files do not divide evenly, FILE workers cycle their files at different
    rates: build the data with a multiple of the worker count in `num_shards` for exact balance.
    """
    if num_files >= num_workers:
        return tf.data.experimental.AutoShardPolicy.FILE
    return tf.data.experimental.AutoShardPolicy.DATA


def _parse_batch(serialized, max_seq_length):
    spec = {name: tf.io.FixedLenFeature([max_seq_length], tf.int64) for name in FEATURE_NAMES}
    features = tf.io.parse_example(serialized, spec)
    return {name: tf.cast(features[name], tf.int32) for name in FEATURE_NAMES}


def make_pretraining_dataset(
    file_patterns,
    max_seq_length,
    global_batch_size,
    *,
    seed=0,
    is_training=True,
    skip_batches=0,
    shuffle_buffer_size=DEFAULT_SHUFFLE_BUFFER,
    validate=True,
    argument="pretrain_tfrecords",
):
    """A dataset of {input_ids, input_mask, segment_ids} int32 batches [global_batch_size, max_seq_length].

    Training: shuffled files, interleaved reads, a record shuffle buffer, endless repetition; evaluation: the files in
    sorted order, once. Partial batches are dropped so shapes are static. Everything is seeded, so a given `seed`
    always yields the same batches, and `skip_batches=k` yields exactly what an uninterrupted run reads after its
    first k batches (used on resume; the k batches are still read, not parsed). Under multi-worker training each
    worker counts its own batches.

    Args:
        file_patterns: comma-separated globs, or a list of globs (e.g. "data/*.tfrecord*").
        max_seq_length: the records' length; checked first (see `check_pretraining_data`) when `validate`.
        global_batch_size: examples per batch across all replicas.
        argument: the name errors give `file_patterns` (e.g. eval_tfrecords).
    """
    files = expand_file_patterns(file_patterns, argument)
    if validate:
        check_pretraining_data(files, max_seq_length, argument=argument)
    if is_training:
        # Every fresh iterator must yield the same stream (Keras makes extra iterators under a strategy; a resumed
        # run makes a new one), so nothing reshuffles per iterator: each epoch's file order has its own seed, and the
        # record shuffle runs once over the endless stream.
        file_names = tf.constant(files)

        def files_of_epoch(epoch):
            scores = tf.random.stateless_uniform([len(files)], seed=tf.stack([tf.constant(seed, tf.int64), epoch]))
            return tf.data.Dataset.from_tensor_slices(tf.gather(file_names, tf.argsort(scores)))

        dataset = tf.data.Dataset.counter().flat_map(files_of_epoch)
        dataset = dataset.interleave(
            tf.data.TFRecordDataset,
            cycle_length=min(len(files), MAX_INTERLEAVE_CYCLE),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed + 1, reshuffle_each_iteration=False)
    else:
        dataset = tf.data.TFRecordDataset(files)
    dataset = dataset.batch(global_batch_size, drop_remainder=True)
    if skip_batches:
        dataset = dataset.skip(skip_batches)
    dataset = dataset.map(
        lambda serialized: _parse_batch(serialized, max_seq_length),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    options = keras_input_options()
    options.experimental_distribute.auto_shard_policy = auto_shard_policy(len(files), number_of_workers())
    return dataset.with_options(options).prefetch(tf.data.AUTOTUNE)


@contextlib.contextmanager
def corrupt_records_reported(sources):
    """Within the block, TensorFlow's DataLossError from reading the TFRecords of `sources` ({argument: file patterns,
    None for an unused argument}) becomes one DataError naming the shard and the corrupt record's byte offset."""
    try:
        yield
    except tf.errors.DataLossError as error:
        files = {
            argument: expand_file_patterns(patterns, argument) for argument, patterns in sources.items() if patterns
        }
        raise tfrecord_checks.corrupt_record_error(error, files) from None


def check_pretraining_data(
    file_patterns, max_seq_length, *, vocab_size=None, vocab_file=None, argument="pretrain_tfrecords", verify_data=None
):
    """Checks the TFRecords against the training flags before training; returns the manifest ({} if none).

    Raises DataError, naming the file and the flag to change, when: no file matches; the data's manifest records a
    different max_seq_length, vocabulary size or vocabulary file contents; two directories' manifests record different
    casing or accent settings; a shard's size differs from the manifest
    (truncated or corrupt); a shard of this project's builder has no manifest (an unfinished build); or, without a
    manifest, a file's records are cut short or have the wrong length; with `verify_data`, a shard's sha256 differs
    from the manifest's. `verify_data=None` verifies when the matched files hold at most
    `manifest.VERIFY_DATA_MAX_BYTES` (512 MiB, one to two seconds of hashing).
    """
    files = expand_file_patterns(file_patterns, argument)
    if verify_data is None:
        verify_data = sum(tf.io.gfile.stat(path).length for path in files) <= manifest_lib.VERIFY_DATA_MAX_BYTES
    by_directory = {}
    for path in files:
        by_directory.setdefault(os.path.dirname(path), []).append(path)
    first_manifest = first_path = None
    for directory, paths in sorted(by_directory.items()):
        manifest = manifest_lib.read_manifest(directory)
        if manifest is None:
            for path in paths:
                tfrecord_checks.check_unlisted_file(path, max_seq_length, FEATURE_NAMES, argument=argument)
            continue
        if first_manifest is None:
            first_manifest, first_path = manifest, manifest_lib.manifest_path(directory)
        tfrecord_checks.check_same_tokenizer_settings(
            first_manifest, first_path, manifest, manifest_lib.manifest_path(directory)
        )
        tfrecord_checks.check_manifest_settings(
            manifest,
            manifest_lib.manifest_path(directory),
            max_seq_length,
            vocab_size=vocab_size,
            vocab_file=vocab_file,
        )
        tfrecord_checks.check_listed_shards(
            manifest,
            manifest_lib.manifest_path(directory),
            paths,
            max_seq_length,
            FEATURE_NAMES,
            argument=argument,
            verify=verify_data,
        )
    return first_manifest or {}
