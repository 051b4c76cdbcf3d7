"""The names of the training options and their checks that need no TensorFlow: entry points list them in their
flags and validate them before TensorFlow is imported, and `--help` answers without loading TensorFlow."""

from electra_tf.errors import ConfigError

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OPTIMIZERS = ("adam_weight_decay", "keras_adamw", "lamb")
NONFINITE_LOSS_POLICIES = ("stop", "skip")  # see callbacks.NonFiniteLossGuard

# Five minutes: far above the longest legitimate wait for a peer (compiling the first step, the chief writing a
# checkpoint), far below the hours a run otherwise hangs when a peer stops answering without closing its connections.
DEFAULT_COLLECTIVE_TIMEOUT_SECONDS = 300


def check_collective_timeout(seconds):
    """Refuse a negative (or NaN) `collective_timeout_seconds`; None and 0 mean no limit."""
    if seconds is not None and not seconds >= 0:
        raise ConfigError(f"collective_timeout_seconds must be >= 0 (0: wait forever), got {seconds}",
                          arguments=("collective_timeout_seconds",))
