"""`python convert_checkpoint.py ...` in a checkout runs the electra-convert command; its flags and --help are in
electra_tf/commands/convert.py."""

from electra_tf.commands.convert import console_main

if __name__ == "__main__":
    console_main()
