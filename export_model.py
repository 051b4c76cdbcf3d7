"""Export a pre-trained discriminator as a SavedModel for TF Serving.

    python export_model.py --init_checkpoint=<run>/pretrained --model=discriminator --output_dir=<dir>/1
"""

from electra_tf import cli

from absl import flags  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("init_checkpoint", None, "A pre-trained model directory (<model_dir>/pretrained).")
flags.DEFINE_enum("model", "discriminator", ["discriminator"], "What to export (generator, classifier and SQuAD "
                  "heads are not exportable yet).")
flags.DEFINE_string("output_dir", None, "Where to write the SavedModel (a version directory for TF Serving).")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length of the raw-text signature.")


def main(argv):
    from electra_tf.errors import ConfigError
    from electra_tf.export import export_discriminator
    from electra_tf.scoring import load_scorer

    if not FLAGS.init_checkpoint or not FLAGS.output_dir:
        raise ConfigError("--init_checkpoint and --output_dir are required")
    discriminator, tokenizer = load_scorer(FLAGS.init_checkpoint)
    if FLAGS.max_seq_length > discriminator.electra_config.max_position_embeddings:
        raise ConfigError(f"--max_seq_length={FLAGS.max_seq_length} exceeds the model's max_position_embeddings="
                          f"{discriminator.electra_config.max_position_embeddings}")
    export_discriminator(discriminator, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length)
    print(f"exported {FLAGS.model} to {FLAGS.output_dir}")


if __name__ == "__main__":
    cli.run(main)
