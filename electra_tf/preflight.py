"""Checks of arguments and paths that need neither TensorFlow nor a model.

Entry points run them before TensorFlow is imported (see `cli.run`'s `precheck`), so that a mistyped path is answered
in a fraction of a second instead of after TensorFlow's start-up. Paths on other file systems (gs://, ...) need
TensorFlow to be listed: they are left to the checks that read them.
"""

import glob
import os

from electra_tf.errors import CheckpointError, DataError

REBUILD = "electra-build-data"


def is_remote(path):
    return "://" in path


def checkpoint_exists(path):
    """Whether `path` names something to read: a directory, a file, or a TF checkpoint prefix (not itself a file)."""
    return bool(path) and (os.path.exists(path) or os.path.exists(path + ".index"))


def require_checkpoint(path, argument="path"):
    """Raise the one error for a checkpoint path that names nothing, speaking of the caller's `argument`."""
    if not checkpoint_exists(path):
        raise CheckpointError(
            f"{argument}={path} does not exist: pass a model directory (electra-pretrain writes "
            "<model_dir>/pretrained), a pre-training run's model_dir, a Hugging Face or keras-hub "
            "directory, or a TF1 checkpoint prefix (model.ckpt for model.ckpt.index)",
            arguments=(argument,),
        )


def no_match_error(argument, pattern):
    """The error for a TFRecord glob that matches no file."""
    return DataError(
        f"{argument}={pattern} matches no file; build the data with {REBUILD} or fix the glob", arguments=(argument,)
    )


def require_tfrecord_matches(file_patterns, argument):
    """Each local glob of `file_patterns` (comma-separated, or a list) matches a file."""
    if isinstance(file_patterns, str):
        file_patterns = file_patterns.split(",")
    for pattern in (p.strip() for p in file_patterns if p and p.strip()):
        if not is_remote(pattern) and not any(os.path.isfile(path) for path in glob.glob(pattern)):
            raise no_match_error(argument, pattern)


def require_vocab_file(vocab_file, argument="vocab_file"):
    """A vocab.txt that must exist."""
    if not vocab_file:
        raise DataError(f"no vocabulary file given: pass {argument}=<path to vocab.txt>", arguments=(argument,))
    if not os.path.isfile(vocab_file):
        raise DataError(
            f"vocabulary file {vocab_file} does not exist: pass {argument}=<path to vocab.txt> "
            "(build one with electra-build-vocab)",
            arguments=(argument,),
        )


def require_file(path, argument):
    """A local file that must exist (a directory is not one)."""
    if path and not is_remote(path) and not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "does not exist"
        raise DataError(f"{argument}={path} {what}: pass an existing file", arguments=(argument,))
