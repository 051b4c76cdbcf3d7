"""The reference's TF1 checkpoints (`electra_small`, `electra_base`, `electra_large` and its pre-training runs).

Read with `tf.train.load_checkpoint` (a name-based reader: no TF1 graph is rebuilt); optimizer slots
(`.../adam_m`, `.../adam_v`) and `global_step` are skipped. Written with `tf.raw_ops.SaveV2`, which produces the same
V2 checkpoint files a `tf.compat.v1.train.Saver` writes, under the exact reference names.
"""

import filecmp
import os
import shutil

import numpy as np
import tensorflow as tf
from absl import logging

from electra_tf.checkpoints import tokenizer_files
from electra_tf.checkpoints.naming import collect_weights
from electra_tf.checkpoints.source import TF1, CheckpointFormat, Source
from electra_tf.errors import CheckpointError
from electra_tf.io_utils import atomic_write_text
from electra_tf.tokenizer import BERT_UNCASED

SKIPPED_SUFFIXES = ("/adam_m", "/adam_v")
SKIPPED_NAMES = ("global_step",)
# A TF2 object-based checkpoint (ours, from tf.train.Checkpoint) stores its object graph under this key.
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_ELECTRA_SCOPES = (
    "electra/",
    "generator/",
    "discriminator_predictions/",
    "generator_predictions/",
    "generator_ltr/",
    "generator_rtl/",
    "cloze_predictions/",
)


def resolve_prefix(path):
    """The checkpoint prefix for `path`: a prefix itself, or a directory with a `checkpoint` state file."""
    if os.path.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise CheckpointError(f"{path} is a directory without a TF checkpoint (no 'checkpoint' state file)")
        return latest
    if not os.path.exists(path + ".index"):
        raise CheckpointError(
            f"{path}.index does not exist: pass a checkpoint prefix (the path without .index/.data-*) or its directory"
        )
    return path


def is_object_based(prefix):
    """Whether `prefix` is a TF2 `tf.train.Checkpoint` (ours) rather than a name-based TF1 checkpoint."""
    return OBJECT_GRAPH_KEY in tf.train.load_checkpoint(prefix).get_variable_to_shape_map()


def _skipped(name):
    return name in SKIPPED_NAMES or name.endswith(SKIPPED_SUFFIXES)


def read_tf1_checkpoint(path):
    """{reference name: array} of the model variables in a TF1 checkpoint (slots and global_step dropped)."""
    prefix = resolve_prefix(path)
    try:
        reader = tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise CheckpointError(f"cannot read the TF checkpoint {prefix}: {error}") from error
    names = [name for name in reader.get_variable_to_shape_map() if not _skipped(name)]
    if OBJECT_GRAPH_KEY in names:
        raise CheckpointError(
            f"{prefix} is a TF2 object-based checkpoint (tf.train.Checkpoint), not a reference TF1 "
            "checkpoint: use format=ours with the run's model_dir",
            arguments=("format",),
        )
    weights = {name: np.asarray(reader.get_tensor(name)) for name in names if name.startswith(_ELECTRA_SCOPES)}
    if not weights:
        raise CheckpointError(
            f"{prefix} holds no ELECTRA variables (expected names under electra/, generator/, "
            f"...; found e.g. {sorted(names)[:3]})"
        )
    return weights


def write_tf1_checkpoint(weights, prefix):
    """Write `weights` ({reference name: array}) as a V2 checkpoint at `prefix` (+ a `checkpoint` state file).

    The files are written under a temporary prefix and renamed, the index last, so a reader never sees a partial
    checkpoint.
    """
    directory = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(directory, exist_ok=True)
    basename = os.path.basename(prefix)
    staging_prefix = os.path.join(directory, f".tmp-{os.getpid()}-{basename}")
    names = sorted(weights)
    try:
        tf.raw_ops.SaveV2(
            prefix=staging_prefix,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=[tf.constant(weights[name]) for name in names],
        )
        data_files = [f for f in os.listdir(directory) if f.startswith(f".tmp-{os.getpid()}-{basename}.data-")]
        for data_file in data_files:
            os.replace(
                os.path.join(directory, data_file),
                os.path.join(directory, basename + data_file[len(f".tmp-{os.getpid()}-{basename}") :]),
            )
        os.replace(staging_prefix + ".index", prefix + ".index")
    finally:
        for leftover in os.listdir(directory):
            if leftover.startswith(f".tmp-{os.getpid()}-{basename}."):
                os.remove(os.path.join(directory, leftover))
    _write_state_file(directory, basename)
    return prefix


def _write_state_file(directory, basename):
    atomic_write_text(
        os.path.join(directory, "checkpoint"),
        f'model_checkpoint_path: "{basename}"\nall_model_checkpoint_paths: "{basename}"\n',
    )


# ---------------------------------------------------------------------------------------------- the format
def _detects(path):
    prefix = tf.train.latest_checkpoint(path) if os.path.isdir(path) else path
    return prefix is not None and os.path.exists(prefix + ".index") and not is_object_based(prefix)


def _read_source(path, allow_embedding_mismatch=False):
    prefix = resolve_prefix(path)
    return Source(
        path,
        TF1,
        read_tf1_checkpoint(prefix),
        vocab_file=tokenizer_files.vocab_file_of(os.path.dirname(prefix)),
    )


def _write_model(model, kind, path, vocab_file=None, tokenizer_settings=None):
    """The reference's TF1 format has no place for the tokenizer settings: only vocab.txt goes beside it (a
    different vocab.txt already there would be read with the checkpoint: refused), and settings other than the ones
    a TF1 checkpoint is read with (BERT uncased) are named in a notice."""
    target_vocab = os.path.join(os.path.dirname(os.path.abspath(path)), tokenizer_files.VOCAB_NAME)
    if vocab_file and os.path.exists(target_vocab) and not filecmp.cmp(vocab_file, target_vocab, shallow=False):
        raise CheckpointError(
            f"{target_vocab} is not the vocabulary of the model being written ({vocab_file}), and "
            "a TF1 checkpoint is read with the vocab.txt beside it: write the checkpoint into "
            "another directory, or remove that vocab.txt"
        )
    write_tf1_checkpoint(collect_weights(model, kind), path)
    if vocab_file and not os.path.exists(target_vocab):
        shutil.copyfile(vocab_file, target_vocab)
    if vocab_file and tokenizer_settings is not None and tokenizer_settings != BERT_UNCASED:
        logging.warning(
            "%s keeps the vocabulary but not the tokenizer's casing, which the reference's TF1 format has "
            "no place for: it reads as lower-cased unless read with do_lower_case=%s and "
            "strip_accents=%s",
            path,
            tokenizer_settings.do_lower_case,
            tokenizer_settings.strip_accents,
            extra={"arguments": ("do_lower_case", "strip_accents")},
        )
    return path


FORMAT = CheckpointFormat(
    TF1,
    "a reference TF1 checkpoint (a prefix such as electra_small/electra_small, or its directory)",
    _detects,
    _read_source,
    _write_model,
)
