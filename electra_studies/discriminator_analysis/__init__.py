"""The discriminator as an instrument: measured answers, re-runnable on any ELECTRA discriminator (ours, or a released
one converted from TF1 or Hugging Face). `electra-analyze` (`electra_studies.commands.analyze`) runs them;
`analysis.run_analyses` is the library behind it."""
