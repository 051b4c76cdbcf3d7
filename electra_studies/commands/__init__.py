"""The studies' programs (absl flags): `python -m electra_studies.commands.<name>`, installed as the console commands
electra-analyze (`analyze`), electra-rerank (`rerank`) and electra-compute-matched (`compute_matched`);
`rerank_report` tabulates many electra-rerank runs."""
