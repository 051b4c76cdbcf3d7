"""The names of the training options and their checks that need no TensorFlow: entry points list them in their
flags and validate them before TensorFlow is imported, and `--help` answers without loading TensorFlow."""

import numbers

from electra_tf.errors import ConfigError
from electra_tf.job_flags import flag_field

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OPTIMIZERS = ("adam_weight_decay", "keras_adamw", "lamb")
NONFINITE_LOSS_POLICIES = ("stop", "skip")  # see callbacks.NonFiniteLossGuard

# {name: (default, help, choices)} of the settings that place a training job on its devices, alike in every job.
_DISTRIBUTION_SETTINGS = {
    "strategy": ("default", "tf.distribute strategy.", STRATEGIES),
    "tpu": (None, "TPU name or grpc:// address, with --strategy=tpu.", None),
    "num_cpu_devices": (
        0,
        "Split the CPU into this many logical devices (for --strategy=mirrored on a CPU-only machine).",
        None,
    ),
    "mixed_precision": ("float32", "Keras dtype policy.", PRECISIONS),
    "worker_hosts": (
        None,
        "With --strategy=multi_worker instead of TF_CONFIG: every worker's host:port, comma-separated, the same on "
        "every worker (worker 0 is the chief).",
        None,
    ),
    "task_index": (0, "This worker's position in --worker_hosts.", None),
}


def distribution_field(name):
    """The dataclass field (`job_flags.flag_field`) of the distribution setting `name`: strategy, tpu,
    num_cpu_devices, mixed_precision, worker_hosts or task_index."""
    default, help_text, choices = _DISTRIBUTION_SETTINGS[name]
    return flag_field(default, help_text, choices)


def check_worker_hosts(worker_hosts, strategy):
    """Refuse `worker_hosts` without strategy=multi_worker (its entries are checked when the cluster is made)."""
    if worker_hosts and strategy != "multi_worker":
        raise ConfigError(
            f"worker_hosts is only used with strategy=multi_worker (got strategy={strategy})",
            arguments=("worker_hosts", "strategy"),
        )


# No limit by default: TensorFlow's coordination service already stops the survivors within about 10 seconds when a
# worker dies or freezes (missed heartbeats, closed connections), and TensorFlow implements a collective's timeout
# with one sleeping thread per collective for the whole timeout (about 100 collectives per pre-training step), so a
# limit of minutes at several steps a second means tens of thousands of threads.
DEFAULT_COLLECTIVE_TIMEOUT_SECONDS = 0


def check_collective_timeout(seconds):
    """Refuse a negative (or NaN) `collective_timeout_seconds`; None and 0 mean no limit."""
    if seconds is not None and not seconds >= 0:
        raise ConfigError(
            f"collective_timeout_seconds must be >= 0 (0: wait forever), got {seconds}",
            arguments=("collective_timeout_seconds",),
        )


def check_micro_batches(gradient_accumulation_steps, concurrent_micro_batches, train_batch_size=None):
    """Refuse micro-batch counts that are not positive integers, both above 1 (a batch runs its micro-batches
    either one after the other or at once), or (given `train_batch_size`) a batch that does not split into
    `gradient_accumulation_steps` equal micro-batches."""
    check_gradient_accumulation(gradient_accumulation_steps, train_batch_size)
    check_gradient_accumulation(concurrent_micro_batches, name="concurrent_micro_batches")
    if gradient_accumulation_steps > 1 and concurrent_micro_batches > 1:
        raise ConfigError(
            f"gradient_accumulation_steps={gradient_accumulation_steps} and "
            f"concurrent_micro_batches={concurrent_micro_batches}: set one of them, the other to 1",
            arguments=("gradient_accumulation_steps", "concurrent_micro_batches"),
        )


def check_gradient_accumulation(
    gradient_accumulation_steps, train_batch_size=None, num_replicas=1, name="gradient_accumulation_steps"
):
    """Refuse a micro-batch count (`name`: `gradient_accumulation_steps`) that is not a positive integer, or (given
    `train_batch_size`, the batch of one optimizer update) a batch that does not split into that many equal
    micro-batches on each of `num_replicas`."""
    if (
        isinstance(gradient_accumulation_steps, bool)
        or not isinstance(gradient_accumulation_steps, numbers.Integral)
        or gradient_accumulation_steps < 1
    ):
        raise ConfigError(
            f"{name} must be a positive integer, got {gradient_accumulation_steps!r}",
            arguments=(name,),
        )
    if train_batch_size is None or train_batch_size % (gradient_accumulation_steps * num_replicas) == 0:
        return
    over = "" if num_replicas == 1 else f" on each of {num_replicas} replicas"
    raise ConfigError(
        f"train_batch_size={train_batch_size} does not split into {name}="
        f"{gradient_accumulation_steps} equal micro-batches{over}: train_batch_size is the batch of one "
        f"optimizer update and must be a multiple of {gradient_accumulation_steps * num_replicas}",
        arguments=("train_batch_size", name),
    )
