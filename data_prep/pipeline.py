"""Text -> sharded TFRecords + manifest: the library behind `electra-build-data`.

Shards are built by `num_processes` processes, each owning whole shards (see `parallel`); every shard's content
depends only on the corpus, vocabulary, seed and shard count, so any number of processes writes identical files.
The manifest is written last: a directory without one is an unfinished build.
"""

import glob
import math
import os
import time

from keras.utils import Progbar

from data_prep import corpus as corpus_lib
from data_prep import parallel, shard_builder, shard_writer, tfds_corpus
from electra_tf.data import manifest as manifest_lib
from electra_tf.data.pretraining_dataset import FEATURE_NAMES
from electra_tf.errors import DataError
from electra_tf.tokenizer import ElectraTokenizer

# About 32 MiB of text per shard (~40 MB of TFRecords at L=128) on big corpora, but up to 8 shards of at least 1 MiB
# on small ones, so that a few processes or training workers still get files of their own. The reference always
# wrote 1000. The default never depends on `num_processes`: the output must not either.
TEXT_BYTES_PER_SHARD = 32 * 1024 * 1024
MIN_TEXT_BYTES_PER_SHARD = 1024 * 1024
SMALL_CORPUS_SHARDS = 8
MAX_DEFAULT_SHARDS = 1024
TFDS_DEFAULT_SHARDS = 256
# Starting a worker process costs seconds of CPU (importing TensorFlow), about what one process spends on 15 MB of
# text, so each extra process needs this much text to pay for itself.
MIN_TEXT_BYTES_PER_EXTRA_PROCESS = 32 * 1024 * 1024


def default_num_shards(corpus_bytes):
    """The default `num_shards` for a corpus of `corpus_bytes` bytes of text (None: unknown size, a tfds dataset)."""
    if corpus_bytes is None:
        return TFDS_DEFAULT_SHARDS
    small = min(SMALL_CORPUS_SHARDS, math.ceil(corpus_bytes / MIN_TEXT_BYTES_PER_SHARD))
    return max(1, small, min(MAX_DEFAULT_SHARDS, math.ceil(corpus_bytes / TEXT_BYTES_PER_SHARD)))


def processes_worth_starting(num_processes, corpus_bytes, num_shards):
    """`num_processes` is a maximum: no more processes than shards, nor than the corpus size pays for."""
    if corpus_bytes is not None:
        num_processes = min(num_processes, 1 + corpus_bytes // MIN_TEXT_BYTES_PER_EXTRA_PROCESS)
    return max(1, min(num_processes, num_shards))


def prepare_output_dir(output_dir):
    """Creates `output_dir` and removes a previous build's manifest, shards and leftovers from it.

    Files matching `*.tfrecord*` that this builder did not name are left alone and reported, since the reader's glob
    would mix them with the new shards.
    """
    os.makedirs(output_dir, exist_ok=True)
    # The manifest goes first, so the directory reads as unfinished from now until the new manifest is written.
    manifest_path = manifest_lib.manifest_path(output_dir)
    if os.path.exists(manifest_path):
        os.remove(manifest_path)
    for pattern in (shard_writer.SHARD_GLOB, shard_writer.TEMPORARY_GLOB):
        for path in glob.glob(os.path.join(output_dir, pattern)):
            os.remove(path)
    foreign = sorted(glob.glob(os.path.join(output_dir, "*.tfrecord*")))
    if foreign:
        raise DataError(
            f"output_dir={output_dir} already holds other TFRecord files ({foreign[0]}, ...) that the "
            "reader would mix with the new shards; pass an empty output_dir or remove them",
            arguments=("output_dir",),
        )


class _Progress:
    """A Keras progress bar over input KiB (with an ETA) showing the example count and examples/s."""

    def __init__(self, total_bytes, enabled):
        self._start = time.time()
        self.examples = 0
        self._bytes = 0
        self._bar = None
        if enabled:
            target = math.ceil(total_bytes / 1024) if total_bytes else None
            # Both values are running totals: shown as they are, not averaged over updates.
            self._bar = Progbar(target, interval=0.5, unit_name="KiB", stateful_metrics=("examples", "examples/s"))

    def update(self, examples, num_bytes, finalize=False):
        self.examples += examples
        self._bytes += num_bytes
        if self._bar is None:
            return
        rate = self.examples / max(time.time() - self._start, 1e-9)
        current = self._bar.target if finalize and self._bar.target else self._bytes // 1024
        self._bar.update(current, values=[("examples", self.examples), ("examples/s", round(rate))], finalize=finalize)


def build_pretraining_data(corpus, vocab_file, output_dir, **options):
    """Builds `<output_dir>/pretrain-XXXXX-of-NNNNN.tfrecord` shards and `<output_dir>/manifest.json`.

    Options mirror the flags of `electra-build-data` (see `_build_pretraining_data`). A failed build leaves
    no trace: its shards are removed, and so is `output_dir` when this build created it and it is empty.
    """
    created_output_dir = not os.path.exists(output_dir)
    try:
        return _build_pretraining_data(corpus, vocab_file, output_dir, **options)
    except BaseException:
        if created_output_dir and os.path.isdir(output_dir) and not os.listdir(output_dir):
            os.rmdir(output_dir)
        raise


def _build_pretraining_data(
    corpus,
    vocab_file,
    output_dir,
    *,
    max_seq_length=128,
    num_shards=None,
    num_processes=1,
    seed=12345,
    do_lower_case=True,
    strip_accents=None,
    document_mode="blank_line",
    input_encoding="utf-8",
    encoding_errors="strict",
    tfds_options=None,
    arguments=None,
    show_progress=True,
):
    """Builds `<output_dir>/pretrain-XXXXX-of-NNNNN.tfrecord` shards and `<output_dir>/manifest.json`.

    Args mirror the flags of `electra-build-data`; `corpus` is a corpus string (see `corpus.parse_corpus`).
    Returns the manifest.
    """
    if max_seq_length < 5:
        raise DataError(
            f"max_seq_length={max_seq_length} is too small; it must be at least 5", arguments=("max_seq_length",)
        )
    if num_processes < 1:
        raise DataError(f"num_processes={num_processes} must be at least 1", arguments=("num_processes",))
    if num_shards is not None and num_shards < 1:
        raise DataError(
            f"num_shards={num_shards} must be at least 1 (or unset for a default from the data size)",
            arguments=("num_shards",),
        )
    spec = corpus_lib.parse_corpus(corpus)
    tokenizer = ElectraTokenizer(vocab_file, do_lower_case, strip_accents)  # Fails fast on a bad vocabulary.
    vocab_fingerprint = tokenizer.fingerprint()
    tfds_options = dict(tfds_options or {})
    if spec.tfds_name:
        corpus_bytes = tfds_corpus.prepare(spec.tfds_name, **tfds_options)
    else:
        corpus_bytes = corpus_lib.corpus_num_bytes(spec)
        if corpus_bytes == 0:
            raise DataError(
                f"corpus={corpus} is empty ({', '.join(spec.files)}); pass files with text in them",
                arguments=("corpus",),
            )
    num_shards = num_shards or default_num_shards(corpus_bytes)
    config = shard_builder.BuildConfig(
        corpus=spec,
        vocab_file=vocab_file,
        do_lower_case=tokenizer.do_lower_case,
        strip_accents=tokenizer.strip_accents,
        output_dir=output_dir,
        max_seq_length=max_seq_length,
        num_shards=num_shards,
        seed=seed,
        document_mode=document_mode,
        input_encoding=input_encoding,
        encoding_errors=encoding_errors,
        tfds_options=tfds_options,
    )
    prepare_output_dir(output_dir)
    progress = _Progress(corpus_bytes, show_progress)
    try:
        num_processes = processes_worth_starting(num_processes, corpus_bytes, num_shards)
        results = parallel.build_groups(
            config, parallel.shard_groups(num_shards, num_processes), num_processes, progress.update
        )
    finally:
        # Whatever happened, no partial shard stays behind (finished ones already have their final names).
        for path in glob.glob(os.path.join(output_dir, shard_writer.TEMPORARY_GLOB)):
            os.remove(path)
    progress.update(0, 0, finalize=True)
    shards = sorted((entry for entries in results for entry in entries), key=lambda entry: entry["file"])
    num_examples = sum(entry["num_examples"] for entry in shards)
    if num_examples == 0:
        for entry in shards:
            os.remove(os.path.join(output_dir, entry["file"]))
        raise DataError(
            f"corpus={corpus} produced no examples (no non-blank lines that tokenise to anything); "
            "check the corpus files and input_encoding",
            arguments=("corpus", "input_encoding"),
        )
    manifest = {
        "num_examples": num_examples,
        "num_tokens": sum(entry["num_tokens"] for entry in shards),
        "num_documents": sum(entry["num_documents"] for entry in shards),
        "max_seq_length": max_seq_length,
        "vocab_size": tokenizer.vocab_size,
        "vocab_fingerprint": vocab_fingerprint,
        "vocab_file": os.path.abspath(vocab_file),
        "do_lower_case": tokenizer.do_lower_case,
        "strip_accents": tokenizer.strip_accents,
        "features": list(FEATURE_NAMES),
        "seed": seed,
        "num_shards": num_shards,
        "num_processes": num_processes,
        "shards": shards,
        "arguments": arguments
        if arguments is not None
        else {
            "corpus": corpus,
            "vocab_file": vocab_file,
            "output_dir": output_dir,
            "max_seq_length": max_seq_length,
            "num_shards": num_shards,
            "num_processes": num_processes,
            "seed": seed,
            "do_lower_case": do_lower_case,
            "strip_accents": strip_accents,
            "document_mode": document_mode,
            "input_encoding": input_encoding,
            "encoding_errors": encoding_errors,
            "tfds_options": tfds_options,
        },
    }
    manifest_lib.write_manifest(output_dir, manifest)
    return manifest
