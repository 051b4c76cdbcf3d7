"""Text -> sharded TFRecords of ELECTRA pre-training examples, plus `<output_dir>/manifest.json`.

    electra-build-data --corpus='corpus/*.txt.gz' --vocab_file=vocab.txt \\
        --output_dir=data/pretrain --max_seq_length=128 --num_processes=8

`--corpus` takes text files or globs (plain or gzip, comma-separated) with one sentence or paragraph per line and
blank lines between documents (`--document_mode=file`: each file is one document), or `tfds:<name>` for a
tensorflow-datasets text dataset (e.g. `tfds:wikipedia/20230601.en`, `tfds:c4/en`), downloaded as tfds does.
Train on the result with `electra-pretrain --pretrain_tfrecords='<output_dir>/*.tfrecord*'`. Flags can also come
from a file: `--flagfile=data.flags`.
"""

import os

from absl import flags

import electra_tf.cli
from data_prep import corpus as corpus_lib
from electra_tf.errors import ElectraError

flags.DEFINE_string("corpus", None, "Text files or globs (plain or gzip), comma-separated, or tfds:<dataset name>.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab.txt (BERT format; see electra-build-vocab).")
flags.DEFINE_string("output_dir", None, "Directory for the *.tfrecord shards and manifest.json.")
flags.DEFINE_integer("max_seq_length", 128, "Length L of every example, [CLS] and [SEP]s included.")
flags.DEFINE_integer(
    "num_shards",
    None,
    "Number of output shards; default: one per ~32 MiB of text (up to 1024), "
    "and up to 8 of at least 1 MiB for small corpora.",
)
flags.DEFINE_integer(
    "num_processes",
    None,
    "Maximum number of processes, each writing whole shards; default: one per "
    "CPU. Never more than shards, nor than one per 32 MiB of text beyond the first (starting one "
    "costs seconds). The output does not depend on it.",
)
flags.DEFINE_integer("seed", 12345, "Seed of the example-building randomness; same seed, same shards.")
flags.DEFINE_boolean("do_lower_case", True, "Lower-case the text (BERT uncased).")
flags.DEFINE_boolean("strip_accents", None, "Strip accents (NFD, drop non-spacing marks); default: --do_lower_case.")
flags.DEFINE_enum(
    "document_mode",
    "blank_line",
    corpus_lib.DOCUMENT_MODES,
    "blank_line: blank lines separate documents; file: each file is one document.",
)
flags.DEFINE_string("input_encoding", "utf-8", "Encoding of the corpus files (ASCII-compatible, e.g. latin-1).")
flags.DEFINE_enum(
    "encoding_errors",
    "strict",
    ["strict", "replace", "ignore"],
    "What to do with bytes that are not valid in --input_encoding: stop with an error, replace or drop.",
)
flags.DEFINE_string("tfds_split", "train", "Split of a tfds: corpus.")
flags.DEFINE_string("tfds_text_key", "text", "Text feature of a tfds: corpus.")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets data directory (default: tfds's own).")
flags.DEFINE_boolean("progress", True, "Show a progress bar.")

FLAGS = flags.FLAGS
_RECORDED_FLAGS = (
    "corpus",
    "vocab_file",
    "output_dir",
    "max_seq_length",
    "num_shards",
    "num_processes",
    "seed",
    "do_lower_case",
    "strip_accents",
    "document_mode",
    "input_encoding",
    "encoding_errors",
    "tfds_split",
    "tfds_text_key",
    "tfds_data_dir",
)


def _check_flags(argv):
    """The checks that need no TensorFlow: flags given, the corpus files and the vocabulary exist, the encoding."""
    from electra_tf.preflight import require_vocab_file
    from electra_tf.text_files import check_encoding

    if len(argv) > 1:
        raise ElectraError(f"unexpected arguments {' '.join(argv[1:])}; all inputs are flags")
    electra_tf.cli.require_flags("corpus", "vocab_file", "output_dir")
    check_encoding(FLAGS.input_encoding, FLAGS.encoding_errors)
    corpus_lib.parse_corpus(FLAGS.corpus)
    require_vocab_file(FLAGS.vocab_file)


def main(argv):
    _check_flags(argv)
    from data_prep import pipeline

    num_processes = FLAGS.num_processes or os.cpu_count() or 1
    manifest = pipeline.build_pretraining_data(
        FLAGS.corpus,
        FLAGS.vocab_file,
        FLAGS.output_dir,
        max_seq_length=FLAGS.max_seq_length,
        num_shards=FLAGS.num_shards,
        num_processes=num_processes,
        seed=FLAGS.seed,
        do_lower_case=FLAGS.do_lower_case,
        strip_accents=FLAGS.strip_accents,
        document_mode=FLAGS.document_mode,
        input_encoding=FLAGS.input_encoding,
        encoding_errors=FLAGS.encoding_errors,
        tfds_options={"split": FLAGS.tfds_split, "text_key": FLAGS.tfds_text_key, "data_dir": FLAGS.tfds_data_dir},
        arguments={name: FLAGS[name].value for name in _RECORDED_FLAGS},
        show_progress=FLAGS.progress,
    )
    print(
        f"wrote {manifest['num_examples']} examples ({manifest['num_tokens']} tokens) of length "
        f"{manifest['max_seq_length']} in {manifest['num_shards']} shards to {FLAGS.output_dir}"
    )


def console_main():
    """The installed console command."""
    electra_tf.cli.run(main, precheck=_check_flags)


if __name__ == "__main__":
    console_main()
