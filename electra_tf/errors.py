"""User-facing errors.

Entry points print an `ElectraError` as one line (no traceback unless `--verbose`) and exit non-zero, so every message
must name the offending file or flag and say how to fix it.
"""


class ElectraError(Exception):
    """A problem with the user's input, files or flags that the user can fix."""


class ConfigError(ElectraError, ValueError):
    """An invalid or inconsistent model/training configuration."""


class DataError(ElectraError, ValueError):
    """Missing, empty, corrupt or mismatched data files."""


class CheckpointError(ElectraError, ValueError):
    """A checkpoint that cannot be read or does not match the model."""


class NonFiniteLossError(ElectraError, FloatingPointError):
    """Training produced a NaN or infinite loss."""
