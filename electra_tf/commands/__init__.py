"""The library's command-line programs (absl flags): `python -m electra_tf.commands.<name>`, installed as the console
commands electra-pretrain (`pretrain`), electra-convert (`convert`) and electra-score (`score`)."""
