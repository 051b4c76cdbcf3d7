"""The pre-training data manifest: `<output_dir>/manifest.json`, written last by `data_prep`, read by the reader.

It records what the shards were built with (max_seq_length, vocabulary size and fingerprint, arguments) and what they
hold (example and token counts, each shard's name, example count, byte size and sha256), so that a mismatch with the
training flags, or a missing, truncated or corrupt shard, is reported before training instead of as a TensorFlow parse
error.
"""

import hashlib
import json
import os
import re

import tensorflow as tf

from electra_tf.errors import DataError
from electra_tf.tokenizer import TokenizerSettings

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 1
# Data up to this size is checked against its recorded checksums by default before training: sha256 runs at 300-450
# MB/s on one core of the development machine (reading from the page cache, `hashlib.file_digest`), so 512 MiB costs
# one to two seconds, small beside the model's start-up; larger data is checked when asked (verify_data=True).
VERIFY_DATA_MAX_BYTES = 512 * 1024 * 1024
_HASH_CHUNK_BYTES = 8 * 1024 * 1024


def manifest_path(directory):
    return os.path.join(directory, MANIFEST_NAME)


def write_manifest(directory, manifest):
    """Writes `manifest` (a JSON-serialisable dict) to `<directory>/manifest.json` atomically; returns the path."""
    path = manifest_path(directory)
    temporary = f"{path}.tmp-{os.getpid()}"
    with tf.io.gfile.GFile(temporary, "w") as f:
        f.write(json.dumps({"format_version": FORMAT_VERSION, **manifest}, indent=2, sort_keys=True) + "\n")
    tf.io.gfile.rename(temporary, path, overwrite=True)
    return path


def file_sha256(path):
    """The hex sha256 of a file's bytes (local or any tf.io.gfile file system), what the manifest records."""
    digest = hashlib.sha256()
    with tf.io.gfile.GFile(path, "rb") as f:
        while chunk := f.read(_HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(directory):
    """The manifest in `directory` as a dict, or None when there is none; DataError when it is unreadable."""
    path = manifest_path(directory)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path, "r") as f:
            manifest = json.loads(f.read())
    except (ValueError, UnicodeDecodeError) as error:
        raise DataError(
            f"{path} is not a valid manifest ({error}); rebuild the data with electra-build-data or delete the file"
        ) from None
    if not isinstance(manifest, dict):
        raise DataError(f"{path} is not a valid manifest (expected a JSON object); rebuild the data")
    return manifest


def recorded_tokenizer_settings(manifest):
    """The `TokenizerSettings` the data was tokenised with, or None for a manifest that does not record them."""
    if "do_lower_case" not in manifest:
        return None
    return TokenizerSettings(manifest["do_lower_case"], manifest.get("strip_accents"))


# Shard names written by data_prep (pretrain-00003-of-00016.tfrecord). Such a shard without a manifest beside it comes
# from a build that did not finish.
SHARD_NAME_PATTERN = "pretrain-{index:05d}-of-{num_shards:05d}.tfrecord"
SHARD_NAME_RE = re.compile(r"^pretrain-\d{5}-of-\d{5}\.tfrecord$")
