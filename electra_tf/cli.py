"""Shared plumbing for the absl entry points: one-line errors and quiet TensorFlow logs.

Every entry point calls `run(main)` instead of `absl.app.run(main)`. A user error (`ElectraError`) is printed as a
single line naming the problem and the process exits with status 2; `--verbose` shows the traceback as well.
"""

import os
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


def _wrap(main):
    def wrapped(argv):
        try:
            return main(argv)
        except ElectraError as error:
            if _is_verbose():
                raise
            print(f"error: {error}", file=sys.stderr)
            sys.exit(USER_ERROR_EXIT_CODE)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)

    return wrapped


def run(main):
    """`absl.app.run(main)` with one-line reporting of `ElectraError`.

    TensorFlow's Python INFO logs (one per checkpoint write, ...) are hidden unless `--verbosity` is given.
    """
    if not any(arg.startswith(("--verbosity", "-v=")) for arg in sys.argv):
        sys.argv.insert(1, "--verbosity=-1")
    app.run(_wrap(main))
