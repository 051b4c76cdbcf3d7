"""The discriminator as an instrument: measured answers, re-runnable on any ELECTRA discriminator (ours, or a released
one converted from TF1 or Hugging Face). `python -m finetune.experiments.discriminator_analysis` runs them (`__main__`);
`analysis.run_analyses` is the library behind it."""
