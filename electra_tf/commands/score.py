"""Replaced-token detection with a pre-trained discriminator.

    python -m electra_tf.commands.score --model_dir=<run>/pretrained "The chef cooked the meal." \\
        "The chef ate the meal."

prints one JSON object per text: its word pieces, each piece's probability of having been "replaced", and a sentence
score, the mean log-probability of "original" over the pieces (higher = more fluent; usable for re-ranking).
"""

import json
import sys

from absl import flags

from electra_tf import cli, progress

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "A pre-trained model directory (<model_dir>/pretrained of electra-pretrain).")
flags.DEFINE_string(
    "vocab_file", None, "The vocab.txt the model was trained with (default: the one found with --model_dir)."
)
flags.DEFINE_string("input_file", None, "Score the lines of this file (in --input_encoding) instead of the arguments.")
flags.DEFINE_string("input_encoding", "utf-8", "Encoding of --input_file: a Python codec name such as latin-1.")
flags.DEFINE_string(
    "encoding_errors",
    "strict",
    "Bytes of --input_file not valid in --input_encoding: strict (stop "
    "naming line and column), replace, ignore, or another Python codecs error handler.",
)
flags.DEFINE_integer("max_seq_length", 128, "Longer texts are truncated (reported in the output).")
flags.DEFINE_integer("batch_size", 32, "Texts per forward pass.")
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For a Hugging Face discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
)


def _texts(argv):
    """The texts to score, after the checks that need no model (and no TensorFlow)."""
    from electra_tf.errors import DataError
    from electra_tf.preflight import require_checkpoint, require_file
    from electra_tf.text_files import read_text

    cli.require_flags("model_dir")
    require_checkpoint(FLAGS.model_dir, "model_dir")
    require_file(FLAGS.vocab_file, "vocab_file")
    texts = argv[1:]
    if FLAGS.input_file:
        require_file(FLAGS.input_file, "input_file")
        text = read_text(FLAGS.input_file, FLAGS.input_encoding, FLAGS.encoding_errors)
        texts = [line.rstrip("\r") for line in text.split("\n") if line.strip()]
    if not texts:
        raise DataError("nothing to score: pass texts as arguments or --input_file", arguments=("input_file",))
    return texts


def main(argv):
    from electra_tf.scoring import load_scorer, score_texts

    texts = _texts(argv)
    # On stderr: stdout holds the scores, one JSON line per text.
    with progress.step(f"loading {FLAGS.model_dir}", stream=sys.stderr):
        discriminator, tokenizer = load_scorer(
            FLAGS.model_dir, FLAGS.vocab_file, allow_embedding_mismatch=FLAGS.allow_embedding_mismatch
        )
    with progress.step(f"scoring {len(texts)} texts", stream=sys.stderr):
        results = score_texts(discriminator, tokenizer, texts, FLAGS.max_seq_length, FLAGS.batch_size)
    for result in results:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")


def console_main():
    """The installed console command."""
    cli.run(main, precheck=_texts)


if __name__ == "__main__":
    console_main()
