"""Write the built-in demo corpus (`data_prep.demo_corpus`): docstrings of the Python standard library, one paragraph
per line, a blank line between documents.

    python -m data_prep.commands.demo_corpus --output=demo_output/corpus.txt
"""

from absl import flags

from data_prep.demo_corpus import DEFAULT_MAX_BYTES, write_demo_corpus
from electra_tf import cli

FLAGS = flags.FLAGS
flags.DEFINE_string(
    "output",
    None,
    "Where to write the corpus (one paragraph per line, blank line between documents).",
    required=True,
)
flags.DEFINE_integer("max_bytes", DEFAULT_MAX_BYTES, "Stop adding modules once the corpus reaches this size.")


def main(argv):
    del argv
    num_documents, num_bytes = write_demo_corpus(FLAGS.output, FLAGS.max_bytes)
    print(f"wrote {FLAGS.output}: {num_documents} documents, {num_bytes / 1e6:.1f} MB")


def console_main():
    """Runs the program (`python -m data_prep.commands.demo_corpus`)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
