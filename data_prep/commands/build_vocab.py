"""Learn a WordPiece vocabulary from a corpus, or check and adopt an existing BERT vocab.txt.

    electra-build-vocab --corpus=demo_output/corpus.txt --vocab_size=4000 --output=demo_output/vocab.txt
    electra-build-vocab --vocab_file=bert-uncased-vocab.txt --output=data/vocab.txt

The learned vocabulary starts with [PAD] [UNK] [CLS] [SEP] [MASK] (ids 0..4), then single characters, their
"##" suffix forms and the learned pieces. `--corpus` takes the same values as in electra-build-data.
"""

import os
import shutil
import time

from absl import flags

import electra_tf.cli
from electra_tf.errors import DataError

flags.DEFINE_string("corpus", None, "Text files or globs (plain or gzip), comma-separated, or tfds:<dataset name>.")
flags.DEFINE_string(
    "vocab_file", None, "An existing BERT-style vocab.txt to check and copy to --output instead of learning one."
)
flags.DEFINE_string("output", None, "Where to write vocab.txt.")
flags.DEFINE_integer("vocab_size", 30522, "Maximum vocabulary size (the learner lands within 5% below it).")
flags.DEFINE_boolean("do_lower_case", True, "Lower-case the text (BERT uncased).")
flags.DEFINE_boolean("strip_accents", None, "Strip accents; default: --do_lower_case.")
flags.DEFINE_enum("document_mode", "blank_line", ["blank_line", "file"], "As in electra-build-data.")
flags.DEFINE_string("input_encoding", "utf-8", "Encoding of the corpus files (ASCII-compatible).")
flags.DEFINE_enum("encoding_errors", "strict", ["strict", "replace", "ignore"], "Invalid bytes: error, replace, drop.")
flags.DEFINE_string("tfds_split", "train", "Split of a tfds: corpus.")
flags.DEFINE_string("tfds_text_key", "text", "Text feature of a tfds: corpus.")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets data directory.")
flags.DEFINE_integer("max_documents", None, "Count words in at most this many documents (a sample of a big corpus).")

FLAGS = flags.FLAGS


def main(argv):
    if len(argv) > 1:
        raise DataError(f"unexpected arguments {' '.join(argv[1:])}; all inputs are flags")
    electra_tf.cli.require_flags("output")
    from data_prep import wordpiece_vocab

    if FLAGS.vocab_file:
        vocab = wordpiece_vocab.check_existing_vocab(FLAGS.vocab_file)
        if os.path.abspath(FLAGS.vocab_file) != os.path.abspath(FLAGS.output):
            temporary = f"{FLAGS.output}.tmp-{os.getpid()}"
            os.makedirs(os.path.dirname(os.path.abspath(FLAGS.output)), exist_ok=True)
            shutil.copyfile(FLAGS.vocab_file, temporary)
            os.replace(temporary, FLAGS.output)
        print(f"{FLAGS.output}: existing vocabulary of {len(vocab)} tokens")
        return
    if not FLAGS.corpus:
        raise DataError("pass --corpus=<text files> to learn a vocabulary, or --vocab_file=<vocab.txt> to use one")
    start = time.time()
    counts = wordpiece_vocab.count_words(
        FLAGS.corpus,
        do_lower_case=FLAGS.do_lower_case,
        strip_accents=FLAGS.strip_accents,
        document_mode=FLAGS.document_mode,
        encoding=FLAGS.input_encoding,
        errors=FLAGS.encoding_errors,
        tfds_options={"split": FLAGS.tfds_split, "text_key": FLAGS.tfds_text_key, "data_dir": FLAGS.tfds_data_dir},
        max_documents=FLAGS.max_documents,
    )
    vocab = wordpiece_vocab.learn_vocab(counts, FLAGS.vocab_size)
    wordpiece_vocab.write_vocab(vocab, FLAGS.output)
    print(
        f"wrote {FLAGS.output}: {len(vocab)} tokens learned from {len(counts)} distinct words "
        f"in {time.time() - start:.1f}s"
    )


def console_main():
    """The installed console command."""
    electra_tf.cli.run(main)


if __name__ == "__main__":
    console_main()
