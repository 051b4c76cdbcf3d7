"""Experiments built on the library: each module is an entry point (`python -m experiments.<name> --help`)."""
