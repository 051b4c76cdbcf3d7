"""`python run_pretraining.py ...` in a checkout runs the electra-pretrain command; its flags and --help are in
electra_tf/commands/pretrain.py."""
from electra_tf import cli

cli.quiet_native_startup(__name__)  # before TensorFlow is imported

from electra_tf.commands.pretrain import console_main  # noqa: E402

if __name__ == "__main__":
    console_main()
