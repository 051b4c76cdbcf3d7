"""Shared plumbing for the absl entry points: one-line errors and quiet TensorFlow logs.

Every entry point calls `run(main)` instead of `absl.app.run(main)`. A user error (`ElectraError`) is printed as a
single line naming the problem and the process exits with status 2; `--verbose` shows the traceback as well. The
error's `arguments` that are flags of the running program are shown as `--name` (`message_for_command_line`).
"""

import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from absl import app, flags  # noqa: E402

from electra_tf.errors import ElectraError  # noqa: E402

flags.DEFINE_boolean("verbose", False, "Show full tracebacks for errors.")

USER_ERROR_EXIT_CODE = 2


def _is_verbose():
    try:
        return flags.FLAGS.verbose
    except (flags.UnparsedFlagAccessError, AttributeError):
        return "--verbose" in sys.argv


def _argument_pattern(name):
    # A whole word: not part of a longer identifier, a path (data_dir/x, /x/data_dir), an existing --flag, or a value
    # (strategy=tpu, 'tpu', "tpu").
    return re.compile(rf"(?<![\w./='\"-]){re.escape(name)}(?![\w/-]|\.\w)")


def message_for_command_line(error, flag_values=None, flag_names=None):
    """`error`'s message with each of its `arguments` that is a defined flag of `flag_values` (default: the running
    program's flags) written as `--name`; other arguments and text are left as they are.

    `flag_names` maps the library's argument names to the program's flags where they differ (e.g. `{"kind": "model"}`
    turns `kind=generator` into `--model=generator`)."""
    flag_values = flags.FLAGS if flag_values is None else flag_values
    flag_names = flag_names or {}
    message = str(error)
    for name in getattr(error, "arguments", ()):
        flag = flag_names.get(name, name)
        if flag in flag_values:
            message = _argument_pattern(name).sub(f"--{flag}", message)
    return message


def _wrap(main, flag_names):
    def wrapped(argv):
        try:
            return main(argv)
        except ElectraError as error:
            if _is_verbose():
                raise
            print(f"error: {message_for_command_line(error, flag_names=flag_names)}", file=sys.stderr)
            sys.exit(USER_ERROR_EXIT_CODE)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)

    return wrapped


def run(main, flag_names=None):
    """`absl.app.run(main)` with one-line reporting of `ElectraError` (`flag_names` as in `message_for_command_line`).

    TensorFlow's Python INFO logs (one per checkpoint write, ...) are hidden unless `--verbosity` is given.
    """
    if not any(arg.startswith(("--verbosity", "-v=")) for arg in sys.argv):
        sys.argv.insert(1, "--verbosity=-1")
    app.run(_wrap(main, flag_names))
