"""The library runs on Keras's TensorFlow backend only; `import electra_tf` checks that Keras is not set to another.

Keras picks its backend once, when it is first imported: `KERAS_BACKEND` if set, else the "backend" of keras.json in
`KERAS_HOME` (default ~/.keras), else TensorFlow. The check reads the same settings without importing Keras (and without
setting anything: a library does not change its caller's environment), or asks Keras when it is already imported.
"""

import json
import os
import sys

from electra_tf.errors import BackendError

TENSORFLOW = "tensorflow"


def _config_file():
    if "KERAS_HOME" in os.environ:
        directory = os.environ["KERAS_HOME"]
    else:  # as Keras: ~/.keras, or /tmp/.keras where the home directory is read-only
        home = os.path.expanduser("~")
        directory = os.path.join(home if os.access(home, os.W_OK) else "/tmp", ".keras")
    return os.path.expanduser(os.path.join(directory, "keras.json"))


def configured_backend():
    """(backend, what sets it): `keras.config.backend()` once Keras is imported, else the setting Keras will read."""
    if "keras" in sys.modules:
        return sys.modules["keras"].config.backend(), "Keras, already imported,"
    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"], f"KERAS_BACKEND={os.environ['KERAS_BACKEND']}"
    path = _config_file()
    try:
        with open(path) as handle:
            backend = json.load(handle).get("backend")
    except (OSError, ValueError, AttributeError):  # Keras too ignores a missing or unreadable keras.json
        backend = None
    return (backend, path) if backend else (TENSORFLOW, "the default")


def require_tensorflow_backend():
    """Raises `BackendError` (an `ImportError`) when Keras is (or will be) on another backend than TensorFlow."""
    backend, source = configured_backend()
    if backend != TENSORFLOW:
        raise BackendError(
            f"{source} sets the Keras backend to {backend}; electra_tf runs on TensorFlow only: set "
            f"KERAS_BACKEND=tensorflow before anything imports Keras"
        )
