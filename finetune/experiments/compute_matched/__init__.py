"""The compute-matched experiment (`experiment` says what it does); `python -m finetune.experiments.compute_matched`
runs it (`__main__`)."""
