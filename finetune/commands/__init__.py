"""The fine-tuning programs (absl flags): `python -m finetune.commands.<name>`, installed as the console commands
electra-finetune (`finetune`) and electra-export (`export`)."""
