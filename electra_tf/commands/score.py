"""Replaced-token detection with a pre-trained discriminator.

    python -m electra_tf.commands.score --model_dir=<run>/pretrained "The chef cooked the meal." \\
        "The chef ate the meal."

prints one JSON object per text: its word pieces, each piece's probability of having been "replaced", and a sentence
score, the mean log-probability of "original" over the pieces (higher = more fluent; usable for re-ranking).
"""

import json
import sys

from electra_tf import cli

cli.quiet_native_startup(__name__)  # before TensorFlow is imported

from absl import flags  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "A pre-trained model directory (<model_dir>/pretrained of run_pretraining.py).")
flags.DEFINE_string("input_file", None, "Score the lines of this UTF-8 file instead of the arguments.")
flags.DEFINE_integer("max_seq_length", 128, "Longer texts are truncated (reported in the output).")
flags.DEFINE_integer("batch_size", 32, "Texts per forward pass.")


def main(argv):
    from electra_tf.errors import DataError
    from electra_tf.scoring import load_scorer, score_texts

    if not FLAGS.model_dir:
        raise DataError("--model_dir is required (a pre-trained model directory, e.g. <run>/pretrained)")
    if FLAGS.input_file:
        try:
            with open(FLAGS.input_file, encoding="utf-8") as handle:
                texts = [line.rstrip("\n") for line in handle if line.strip()]
        except (OSError, UnicodeDecodeError) as error:
            raise DataError(f"cannot read --input_file={FLAGS.input_file}: {error}") from error
    else:
        texts = argv[1:]
    if not texts:
        raise DataError("nothing to score: pass texts as arguments or --input_file")
    discriminator, tokenizer = load_scorer(FLAGS.model_dir)
    for result in score_texts(discriminator, tokenizer, texts, FLAGS.max_seq_length, FLAGS.batch_size):
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")


def console_main():
    """The installed console command."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
