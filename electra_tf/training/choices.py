"""The names of the training options and their checks that need no TensorFlow: entry points list them in their
flags and validate them before TensorFlow is imported, and `--help` answers without loading TensorFlow."""

from electra_tf.errors import ConfigError

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OPTIMIZERS = ("adam_weight_decay", "keras_adamw", "lamb")
NONFINITE_LOSS_POLICIES = ("stop", "skip")  # see callbacks.NonFiniteLossGuard

# No limit by default: TensorFlow's coordination service already stops the survivors within about 10 seconds when a
# worker dies or freezes (missed heartbeats, closed connections), and TensorFlow implements a collective's timeout
# with one sleeping thread per collective for the whole timeout (about 100 collectives per pre-training step), so a
# limit of minutes at several steps a second means tens of thousands of threads.
DEFAULT_COLLECTIVE_TIMEOUT_SECONDS = 0


def check_collective_timeout(seconds):
    """Refuse a negative (or NaN) `collective_timeout_seconds`; None and 0 mean no limit."""
    if seconds is not None and not seconds >= 0:
        raise ConfigError(f"collective_timeout_seconds must be >= 0 (0: wait forever), got {seconds}",
                          arguments=("collective_timeout_seconds",))
