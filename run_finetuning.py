"""`python run_finetuning.py ...` in a checkout runs the electra-finetune command; its flags and --help are in
finetune/commands/finetune.py."""

from finetune.commands.finetune import console_main

if __name__ == "__main__":
    console_main()
