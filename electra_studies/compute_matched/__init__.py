"""The compute-matched experiment (`experiment` says what it does); `electra-compute-matched`
(`electra_studies.commands.compute_matched`) runs it."""
