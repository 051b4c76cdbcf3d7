"""User-facing errors.

Entry points print an `ElectraError` as one line (no traceback unless `--verbose`) and exit non-zero, so every message
must name the offending file or argument and say how to fix it.

Library code speaks Python: a message names the arguments it is about as plain names (`init_checkpoint=/x does not
exist; pass init_checkpoint=<model_dir>/pretrained`) and lists them in `arguments`. Only an entry point knows which of
them are its command-line flags; `electra_tf.cli` rewrites those to `--init_checkpoint` before printing, and says
which argument the message asks to pass has no flag in the running program, with the error's `without_flag` remedy.
"""


class ElectraError(Exception):
    """A problem with the user's input, files or arguments that the user can fix.

    Args:
        message: what is wrong and how to fix it, naming Python arguments by their plain names.
        arguments: the argument names the message speaks of; an entry point shows those that are its flags as
            `--name`.
        without_flag: {argument: what to do instead} for a program that has no flag for an argument the message
            asks to pass (e.g. a command to run first).
    """

    def __init__(self, message, *, arguments=(), without_flag=None):
        super().__init__(message)
        self.arguments = tuple(arguments)
        self.without_flag = dict(without_flag or {})


class ConfigError(ElectraError, ValueError):
    """An invalid or inconsistent model/training configuration."""


class DataError(ElectraError, ValueError):
    """Missing, empty, corrupt or mismatched data files."""


class CheckpointError(ElectraError, ValueError):
    """A checkpoint that cannot be read or does not match the model."""


class NonFiniteLossError(ElectraError, FloatingPointError):
    """Training produced a NaN or infinite loss."""


class BackendError(ElectraError, ImportError):
    """Keras is set to a backend other than TensorFlow, the only one the library runs on."""


class WorkerLostError(ElectraError, RuntimeError):
    """A peer of a multi-worker run died or stopped answering; every worker must be started again to resume."""
