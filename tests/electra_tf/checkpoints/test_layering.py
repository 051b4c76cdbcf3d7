"""`electra_tf.checkpoints` is the formats alone: `electra_tf.models` builds models from them, so no module of the
formats imports a model and the two packages cannot import each other."""

import subprocess
import sys

from tests.conftest import REPO_ROOT

MODELS_LOADED_BY_THE_FORMATS = """
import importlib, pkgutil, sys
import electra_tf.checkpoints as checkpoints
for module in pkgutil.iter_modules(checkpoints.__path__):
    importlib.import_module(f"electra_tf.checkpoints.{module.name}")
print(sorted(name for name in sys.modules if name.startswith("electra_tf.models")))
"""


def test_no_module_of_the_formats_imports_a_model():
    # A fresh interpreter: this one has imported the models already.
    result = subprocess.run(
        [sys.executable, "-c", MODELS_LOADED_BY_THE_FORMATS],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"
