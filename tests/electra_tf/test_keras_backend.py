"""Importing the library sets nothing in the environment but TensorFlow's log level (where the user has not), and
refuses, in one line, a Keras set to another backend."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

FIX = "electra_tf runs on TensorFlow only: set KERAS_BACKEND=tensorflow before anything imports Keras"


def _python(code, **env):
    clean = {key: value for key, value in os.environ.items() if key not in ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL")}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, "PYTHONPATH": str(REPO_ROOT), **env},
    )


def test_another_backend_in_keras_backend_stops_the_import_with_one_line():
    result = _python("import electra_tf", KERAS_BACKEND="jax")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        f"electra_tf.errors.BackendError: KERAS_BACKEND=jax sets the Keras backend to jax; {FIX}"
    )
    # An ImportError (what a failed import raises) that is also one of the library's errors.
    caught = _python(
        "try:\n    import electra_tf.models\nexcept ImportError as error:\n"
        "    print(*[kind.__name__ for kind in type(error).__mro__])",
        KERAS_BACKEND="jax",
    )
    assert caught.stdout.split() == [
        "BackendError",
        "ElectraError",
        "ImportError",
        "Exception",
        "BaseException",
        "object",
    ], caught.stderr[-2000:]


def test_another_backend_in_keras_json_stops_the_import_unless_keras_backend_says_tensorflow(tmp_path):
    (tmp_path / "keras.json").write_text(json.dumps({"backend": "jax", "floatx": "float32"}))
    result = _python("import electra_tf", KERAS_HOME=str(tmp_path))
    assert result.stderr.splitlines()[-1] == (
        f"electra_tf.errors.BackendError: {tmp_path / 'keras.json'} sets the Keras backend to jax; {FIX}"
    )
    # Keras reads KERAS_BACKEND over keras.json, and so does the check; an unreadable keras.json is ignored by both.
    assert _python("import electra_tf", KERAS_HOME=str(tmp_path), KERAS_BACKEND="tensorflow").returncode == 0
    (tmp_path / "keras.json").write_text("{not json")
    assert _python("import electra_tf", KERAS_HOME=str(tmp_path)).returncode == 0


# Each program in its own process: their absl flags share one registry. TensorFlow sets variables of its own
# (TF2_BEHAVIOR, ...) when imported: the models are compared with the environment after its import.
@pytest.mark.parametrize(
    "module",
    [
        "electra_tf",
        "electra_tf.cli",
        "electra_tf.commands.pretrain",
        "electra_tf.commands.score",
        "electra_tf.commands.convert",
        "finetune.commands.finetune",
        "finetune.commands.export",
        "electra_studies.commands.analyze",
        "electra_studies.commands.rerank",
        "electra_studies.commands.compute_matched",
        "data_prep.commands.build_vocab",
        "data_prep.commands.build_data",
        "import keras_hub; electra_tf.models",
    ],
)
def test_importing_the_library_or_a_program_sets_only_tensorflows_log_level_and_imports_no_tensorflow(module):
    prelude, _, module = module.rpartition("; ")
    code = (
        f"{prelude}\nimport importlib, os, sys\nbefore = dict(os.environ)\nimportlib.import_module({module!r})\n"
        "changed = sorted(set(os.environ.items()) ^ set(before.items()))\n"
        "print(','.join(f'{key}={value}' for key, value in changed) or None, 'tensorflow' in sys.modules)"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr[-2000:]
    # TensorFlow reads its level once, when imported: after an import of TensorFlow it would say nothing.
    changed = "None" if prelude else "TF_CPP_MIN_LOG_LEVEL=2"
    assert result.stdout.split() == [changed, str(bool(prelude))]
    if not prelude:  # with TensorFlow imported first there is no level left to keep; each import takes seconds
        # A level of the user's own is kept.
        assert _python(code, TF_CPP_MIN_LOG_LEVEL="0").stdout.split() == ["None", "False"]
