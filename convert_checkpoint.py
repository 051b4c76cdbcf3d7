"""`python convert_checkpoint.py ...` in a checkout runs the electra-convert command; its flags and --help are in
electra_tf/commands/convert.py."""
from electra_tf import cli

cli.quiet_native_startup(__name__)  # before TensorFlow is imported

from electra_tf.commands.convert import console_main  # noqa: E402

if __name__ == "__main__":
    console_main()
