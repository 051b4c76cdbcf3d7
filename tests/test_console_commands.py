"""A command run in the test process (`tests.console_commands`) shows what its own process would show, and leaves the
process as it found it."""

import os
import re
import warnings

import keras
from absl import logging

from electra_tf import preflight
from electra_tf.errors import DataError
from tests.console_commands import run_command


def _log_warn_write_set_float16_and_stop(path, argument):
    logging.warning("the command logs")
    for _ in range(2):
        warnings.warn("the command warns", UserWarning, stacklevel=1)
    warnings.warn("a fresh process ignores this", DeprecationWarning, stacklevel=1)
    os.write(2, b"the command writes to file descriptor 2\n")  # as TensorFlow's C++ code does
    keras.config.set_dtype_policy("mixed_float16")
    raise DataError(f"{argument}={path}: stopped here", arguments=(argument,))


def test_logs_and_warnings_once_per_place_are_on_stderr_at_each_run_and_the_dtype_policy_is_restored(
    monkeypatch, capfd
):
    monkeypatch.setattr(preflight, "require_checkpoint", _log_warn_write_set_float16_and_stop)
    for _ in range(2):
        assert run_command("electra-score", "--model_dir=nowhere", "w1") == 2
        lines = capfd.readouterr().err.splitlines()
        # What reaches the descriptor goes through the command's filter of TensorFlow's notices, another process: all
        # of it is there once the command has returned, though not in order with the rest.
        lines.remove("the command writes to file descriptor 2")
        assert re.fullmatch(r"W\d{4} [\d:.]+ +\d+ test_console_commands\.py:17\] the command logs", lines[0]), lines
        assert lines[1:] == [
            f"{__file__}:19: UserWarning: the command warns",
            '  warnings.warn("the command warns", UserWarning, stacklevel=1)',
            "error: --model_dir=nowhere: stopped here",
        ]
        assert keras.config.dtype_policy().name == "float32"
