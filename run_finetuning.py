"""`python run_finetuning.py ...` in a checkout runs the electra-finetune command; its flags and --help are in
finetune/commands/finetune.py."""
from electra_tf import cli

cli.quiet_native_startup(__name__)  # before TensorFlow is imported

from finetune.commands.finetune import console_main  # noqa: E402

if __name__ == "__main__":
    console_main()
