# `make demo` and `make test` build (or reuse) .venv and install the pinned requirements first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.txt pyproject.toml | cksum | cut -d' ' -f1)
DEMO_DIR ?= demo_output
# Two pytest processes, one test file each at a time: the suite alone keeps one core busy on average (TensorFlow
# start-ups, subprocess tests, small graphs), two workers take it from 21 to 12 minutes on the 2-core machine. The
# longest files start first (tests/conftest.py's LONGEST_FILES; --no-loadscope-reorder keeps that order), so that the
# two workers end together.
TEST_WORKERS ?= 2
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: venv test test-all demo clean-demo peer-env

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# The project itself, editable: the console commands (electra-pretrain, ...) and imports from any directory.
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

# The suite and the tests marked `benchmark`: the slower end-to-end runs (kill and resume, clusters, MirroredStrategy
# commands, the compute-matched experiment, the documentation's fine-tuning examples).
test-all: $(STAMP)
	$(PY) -m pytest -q tests -m "benchmark or not benchmark" -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

demo: $(STAMP)
	$(PY) scripts/demo.py --output_dir=$(DEMO_DIR)

clean-demo:
	rm -rf $(DEMO_DIR)

# The PyTorch peer the benchmarks compare against, in its own environment (never a dependency of the project).
peer-env:
	test -x .venv-peer/bin/python || $(PYTHON) -m venv .venv-peer
	.venv-peer/bin/python -m pip install --quiet torch==2.13.0 transformers numpy
