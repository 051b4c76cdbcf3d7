"""`python export_model.py ...` in a checkout runs the electra-export command; its flags and --help are in
finetune/commands/export.py."""
from electra_tf import cli

cli.quiet_native_startup(__name__)  # before TensorFlow is imported

from finetune.commands.export import console_main  # noqa: E402

if __name__ == "__main__":
    console_main()
