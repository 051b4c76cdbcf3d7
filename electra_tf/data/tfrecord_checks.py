"""Cheap start-of-training checks of pre-training TFRecords, each failing with a message that names file and argument.

With a manifest, sizes and settings are compared with what the builder recorded (no record is read), and with
`verify` each shard's sha256 too. Without one, the file's record framing is walked (12-byte headers and seeks, no
payload reads) to catch truncation, and its first record is parsed to check the features and their length.

A corrupt record found later, while reading (TensorFlow's DataLossError "corrupted record at N", which names no file),
is turned into the same kind of one-line error by `corrupt_record_error`.
"""

import os
import re
import struct

import tensorflow as tf
from absl import logging
from google.protobuf.message import DecodeError

from electra_tf.data.manifest import SHARD_NAME_RE, file_sha256, recorded_tokenizer_settings
from electra_tf.errors import DataError
from electra_tf.tokenizer import vocab_fingerprint

_REBUILD = "electra-build-data"
# A TFRecord is: uint64 length, uint32 masked crc of the length, payload, uint32 masked crc of the payload.
_HEADER_BYTES = 12
_FOOTER_BYTES = 4


def check_manifest_settings(manifest, manifest_path, max_seq_length, *, vocab_size=None, vocab_file=None):
    """Compares the manifest's max_seq_length and vocabulary with the training's."""
    built_length = manifest.get("max_seq_length")
    if built_length != max_seq_length:
        raise DataError(
            f"the pre-training data was built with max_seq_length={built_length} (see {manifest_path}); pass "
            f"max_seq_length={built_length} or rebuild the data with {_REBUILD} --max_seq_length={max_seq_length}",
            arguments=("max_seq_length",),
        )
    built_size = manifest.get("vocab_size")
    if vocab_size is not None and built_size is not None and built_size != vocab_size:
        raise DataError(
            f"the pre-training data was built with a vocabulary of {built_size} tokens (see {manifest_path}) but "
            f"the model's vocab_size is {vocab_size}; pass the vocab_file the data was built with "
            f"({manifest.get('vocab_file')}) or rebuild the data with {_REBUILD} --vocab_file=<yours>",
            arguments=("vocab_file",),
        )
    built_fingerprint = manifest.get("vocab_fingerprint")
    if vocab_file and built_fingerprint:
        if not os.path.isfile(vocab_file):
            raise DataError(f"vocabulary file {vocab_file} does not exist: check vocab_file", arguments=("vocab_file",))
        if vocab_fingerprint(vocab_file) != built_fingerprint:
            raise DataError(
                f"vocab_file={vocab_file} is not the vocabulary the pre-training data was built with "
                f"({manifest.get('vocab_file')}, sha256 {built_fingerprint[:12]}..., see {manifest_path}); pass that "
                f"vocab_file or rebuild the data with {_REBUILD} --vocab_file={vocab_file}",
                arguments=("vocab_file",),
            )


def check_same_tokenizer_settings(manifest, manifest_path, other, other_path):
    """Two data directories trained on together must have been tokenised alike (same casing and accents)."""
    settings, other_settings = recorded_tokenizer_settings(manifest), recorded_tokenizer_settings(other)
    if settings and other_settings and settings != other_settings:
        raise DataError(
            f"{manifest_path} records {settings} but {other_path} records {other_settings}: the "
            "pre-training data mixes differently normalised text; rebuild one of them with the other's "
            "do_lower_case and strip_accents"
        )


def check_listed_shards(
    manifest, manifest_path, paths, max_seq_length, feature_names, argument="pretrain_tfrecords", verify=False
):
    """Checks each matched file against its manifest entry (size, and with `verify` its sha256 where the manifest
    records one); files the manifest does not list are read."""
    entries = {entry["file"]: entry for entry in manifest.get("shards", [])}
    for path in paths:
        entry = entries.get(os.path.basename(path))
        if entry is None:
            check_unlisted_file(path, max_seq_length, feature_names, manifest_path=manifest_path, argument=argument)
            continue
        size = tf.io.gfile.stat(path).length
        if size != entry.get("num_bytes", size):
            raise DataError(
                f"shard {path} is truncated or corrupt: {size} bytes where {manifest_path} records "
                f"{entry['num_bytes']}; rebuild the data with {_REBUILD} (or restore the file)"
            )
        if verify and entry.get("sha256") and file_sha256(path) != entry["sha256"]:
            raise DataError(
                f"shard {path} is corrupt: its sha256 differs from the one {manifest_path} records; "
                f"restore the file or rebuild the data with {_REBUILD}"
            )
    matched = {os.path.basename(path) for path in paths}
    missing = sorted(set(entries) - matched)
    if missing:
        logging.warning(
            "%d of the %d shards listed in %s are not matched by %s (e.g. %s); only the matched ones are read",
            len(missing),
            len(entries),
            manifest_path,
            argument,
            missing[0],
        )


def check_unlisted_file(path, max_seq_length, feature_names, manifest_path=None, argument="pretrain_tfrecords"):
    """Checks a file no manifest describes: builder shards need one; others must be whole and of the right length."""
    if manifest_path is None and SHARD_NAME_RE.match(os.path.basename(path)):
        raise DataError(
            f"{path} has no manifest.json beside it: the {_REBUILD} run that wrote it did not finish; rerun it "
            "(it replaces the partial output)"
        )
    num_records = check_framing(path, argument)
    if num_records == 0:
        raise DataError(
            f"{path} holds no records; remove it from {argument} or rebuild it with {_REBUILD}", arguments=(argument,)
        )
    check_first_record(path, max_seq_length, feature_names)


def check_framing(path, argument="pretrain_tfrecords"):
    """Walks the record headers of a TFRecord file; returns the record count, DataError if the file is cut short."""
    num_records = 0
    with tf.io.gfile.GFile(path, "rb") as f:
        size = f.size()
        offset = 0
        while offset < size:
            f.seek(offset)
            header = f.read(_HEADER_BYTES)
            if len(header) < _HEADER_BYTES:
                break
            (length,) = struct.unpack("<Q", header[:8])
            offset += _HEADER_BYTES + length + _FOOTER_BYTES
            num_records += 1
        if offset != size:
            raise DataError(
                f"{path} is truncated or not a TFRecord file (its last record ends at byte {offset}, the file has "
                f"{size}); rebuild it with {_REBUILD} or remove it from {argument}",
                arguments=(argument,),
            )
    return num_records


def check_first_record(path, max_seq_length, feature_names):
    """Parses the first record and checks that it has the features, each of length max_seq_length."""
    try:
        serialized = next(iter(tf.data.TFRecordDataset(path).take(1))).numpy()
        example = tf.train.Example.FromString(serialized)
    except (tf.errors.OpError, StopIteration, ValueError, DecodeError) as error:
        raise DataError(
            f"cannot read the first record of {path} ({type(error).__name__}); the file is corrupt or "
            f"not a TFRecord of tf.train.Example: rebuild it with {_REBUILD}"
        ) from None
    features = example.features.feature
    missing = [name for name in feature_names if name not in features]
    if missing:
        raise DataError(f"{path} records lack the features {', '.join(missing)}; build the data with {_REBUILD}")
    length = len(features[feature_names[0]].int64_list.value)
    if length != max_seq_length:
        raise DataError(
            f"the records of {path} have length {length}, not {max_seq_length}; pass max_seq_length={length} or "
            f"rebuild the data with {_REBUILD} --max_seq_length={max_seq_length}",
            arguments=("max_seq_length",),
        )


_CORRUPT_OFFSET = re.compile(r"corrupted record at (\d+)")


def corrupt_record_error(error, sources):
    """The DataError for TensorFlow's DataLossError `error` raised while reading the files of `sources`
    ({argument: files}): it names the shard holding the corrupt record (found by reading the candidates again, a cost
    paid only on this failure) and the record's byte offset."""
    match = _CORRUPT_OFFSET.search(str(error))
    offset = int(match.group(1)) if match else None
    for argument, paths in sources.items():
        for path in paths:
            if offset is not None and tf.io.gfile.stat(path).length <= offset:
                continue
            try:
                tf.data.TFRecordDataset(path).reduce(tf.constant(0, tf.int64), lambda count, _: count + 1)
            except tf.errors.DataLossError as own:
                own_match = _CORRUPT_OFFSET.search(str(own))
                if offset is None or (own_match and int(own_match.group(1)) == offset):
                    where = f" at byte {offset}" if offset is not None else ""
                    return DataError(
                        f"{path} holds a corrupt record{where} (its checksum does not match): restore "
                        f"the shard or rebuild the data with {_REBUILD}, or leave it out of {argument}",
                        arguments=(argument,),
                    )
    every = ", ".join(sources)
    return DataError(
        f"a record of {every} is corrupt ({str(error).strip().splitlines()[-1][:200]}); restore the "
        f"shards or rebuild the data with {_REBUILD}",
        arguments=tuple(sources),
    )
