"""`python run_pretraining.py ...` in a checkout runs the electra-pretrain command; its flags and --help are in
electra_tf/commands/pretrain.py."""

from electra_tf.commands.pretrain import console_main

if __name__ == "__main__":
    console_main()
