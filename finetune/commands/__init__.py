"""The fine-tuning programs (absl flags): `python -m finetune.commands.<name>`, installed as the console commands
electra-finetune (`finetune`) and electra-export (`export`); `glue_eval` and `squad_eval` score predictions files,
`glue_compare` compares fine-tuned networks."""
