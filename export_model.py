"""`python export_model.py ...` in a checkout runs the electra-export command; its flags and --help are in
finetune/commands/export.py."""

from finetune.commands.export import console_main

if __name__ == "__main__":
    console_main()
