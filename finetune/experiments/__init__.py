"""Experiments built on the library and the fine-tuning tasks; each package is an entry point
(`python -m finetune.experiments.<name> --help`)."""
