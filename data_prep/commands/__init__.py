"""The data builders' programs (absl flags): `python -m data_prep.commands.<name>`, installed as the console commands
electra-build-vocab (`build_vocab`) and electra-build-data (`build_data`); `demo_corpus` writes the built-in demo
corpus."""
