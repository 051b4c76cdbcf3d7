"""Strategy selection, mixed precision, and the report of a worker lost in a multi-worker run."""

import json
import os
import re

import keras
import tensorflow as tf

from electra_tf.errors import ConfigError, WorkerLostError
from electra_tf.training.choices import PRECISIONS, STRATEGIES, check_collective_timeout


def split_cpu(num_devices):
    """Split the host CPU into `num_devices` logical devices, so Mirrored runs can be tested without accelerators.

    Must run before TensorFlow initialises its devices (before the first op).
    """
    if not num_devices or num_devices <= 1:
        return
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * num_devices)
    except RuntimeError as error:
        if len(tf.config.list_logical_devices("CPU")) != num_devices:
            raise ConfigError(
                f"cannot split the CPU into {num_devices} devices after TensorFlow initialised: {error}"
            ) from error


def usable_cpus():
    """The CPUs this process may run on (its affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


# XLA's CPU runtime (TensorFlow 2.21) builds a compiled kernel's YNNPACK executable at its first run without a lock:
# two micro-batches running a kernel of a new shape together crash the process (a segmentation fault in
# xla::cpu::EmitYnnSubgraph). An empty list of YNNPACK fusion kinds keeps XLA from making them, at no cost measured
# to a fine-tuning step. XLA reads XLA_FLAGS once, at its first compilation.
YNNPACK_FUSIONS_FLAG = "--xla_cpu_experimental_ynn_fusion_type"


def share_threads_between_micro_batches(concurrent_micro_batches, cpus=None):
    """Give each of `concurrent_micro_batches` micro-batches run at once its share of the `cpus` (default: those this
    process may use): an op that many intra-op threads, and as many inter-op threads as micro-batches (at least
    TensorFlow's default), so that the micro-batches' ops run side by side rather than each split over every core.
    Also turns XLA's YNNPACK fusions off (`YNNPACK_FUSIONS_FLAG` in `XLA_FLAGS`, unless it is set there already),
    whose first runs race when two threads make them at once.
    Returns (intra-op, inter-op) threads. Must run before TensorFlow's first op; 1 leaves the defaults.
    """
    if concurrent_micro_batches <= 1:
        return None
    xla_flags = os.environ.get("XLA_FLAGS", "")
    if YNNPACK_FUSIONS_FLAG not in xla_flags:
        os.environ["XLA_FLAGS"] = f"{xla_flags} {YNNPACK_FUSIONS_FLAG}=".strip()
    cpus = cpus or usable_cpus()
    threads = (max(1, cpus // concurrent_micro_batches), max(cpus, concurrent_micro_batches))
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads[0])
        tf.config.threading.set_inter_op_parallelism_threads(threads[1])
    except RuntimeError as error:
        if (
            tf.config.threading.get_intra_op_parallelism_threads(),
            tf.config.threading.get_inter_op_parallelism_threads(),
        ) != threads:
            raise ConfigError(
                f"cannot give concurrent_micro_batches={concurrent_micro_batches} their threads after TensorFlow "
                f"initialised ({error}): call share_threads_between_micro_batches before the first TensorFlow op",
                arguments=("concurrent_micro_batches",),
            ) from error
    return threads


class NestedReduceMultiWorkerStrategy(tf.distribute.MultiWorkerMirroredStrategy):
    """TensorFlow's MultiWorkerMirroredStrategy whose `reduce` also takes a structure of values (a dict of
    `PerReplica` tensors), as MirroredStrategy's does, and scalars with an `axis`. Keras' `fit` and `evaluate`
    reduce the first batch over the replicas only to learn its shapes, and across workers the parent's `reduce`
    refuses a dict batch ("Attempt to convert a value ({'input_ids': PerReplica..."; https://github.com/keras-team/
    keras/issues/20329); they reduce every step's logs, scalars, with `axis=0`, which the parent refuses too ("Invalid
    reduction dimension 0 for input with 0 dimensions"). Each value of the structure is reduced as the parent reduces
    one; a scalar's `axis` is dropped (it is reduced over the replicas alone)."""

    def reduce(self, reduce_op, value, axis):
        def reduce_one(one):
            scalar = self.experimental_local_results(one)[0].shape.rank == 0
            return super(NestedReduceMultiWorkerStrategy, self).reduce(reduce_op, one, None if scalar else axis)

        return tf.nest.map_structure(reduce_one, value)


def create_strategy(strategy="default", tpu=None, num_cpu_devices=None, collective_timeout_seconds=None):
    """The tf.distribute strategy named `strategy`.

    default: one device. mirrored: all local GPUs, or the logical CPUs made by `num_cpu_devices`.
    multi_worker: `NestedReduceMultiWorkerStrategy` (MultiWorkerMirroredStrategy) from TF_CONFIG; each of its
    collectives (all-reduces of a step, variable broadcasts) fails with `tf.errors.DeadlineExceededError` after
    `collective_timeout_seconds` (None or 0: waits as long as it takes). tpu: TPUStrategy on `tpu` (name or grpc
    address).
    """
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy={strategy!r}; choose one of {list(STRATEGIES)}", arguments=("strategy",))
    check_collective_timeout(collective_timeout_seconds)
    if strategy != "tpu" and tpu:
        raise ConfigError(
            f"tpu={tpu!r} is only used with strategy=tpu (got strategy={strategy})", arguments=("tpu", "strategy")
        )
    split_cpu(num_cpu_devices)
    if strategy == "default":
        return tf.distribute.get_strategy()
    if strategy == "mirrored":
        devices = [d.name for d in tf.config.list_logical_devices("GPU")] or [
            d.name for d in tf.config.list_logical_devices("CPU")
        ]
        return tf.distribute.MirroredStrategy(devices=devices)
    if strategy == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ConfigError(
                "strategy=multi_worker needs the TF_CONFIG environment variable describing the "
                "cluster (see docs/pretraining.md, 'Multi-device and multi-node')",
                arguments=("strategy",),
            )
        try:
            json.loads(os.environ["TF_CONFIG"])
        except json.JSONDecodeError as error:
            raise ConfigError(f"TF_CONFIG is not valid JSON: {error}") from error
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=collective_timeout_seconds or None)
        return NestedReduceMultiWorkerStrategy(communication_options=options)
    if not tpu:
        raise ConfigError(
            "strategy=tpu needs tpu=<TPU name or grpc://address> ('local' for a TPU VM)", arguments=("strategy", "tpu")
        )
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, tf.errors.OpError, RuntimeError) as error:
        raise ConfigError(
            f"no TPU reachable at tpu={tpu!r}: {str(error).splitlines()[0]}", arguments=("tpu",)
        ) from error
    return tf.distribute.TPUStrategy(resolver)


def tf_config_for_workers(worker_hosts, task_index):
    """The TF_CONFIG of worker `task_index` of the cluster `worker_hosts` ("host:port,host:port,..."; worker 0 is the
    chief). Every worker gets the same host list and its own index."""
    hosts = [host.strip() for host in (worker_hosts or "").split(",") if host.strip()]
    if not hosts:
        raise ConfigError(
            "worker_hosts is empty; give every worker as host:port, comma-separated", arguments=("worker_hosts",)
        )
    for host in hosts:
        name, _, port = host.rpartition(":")
        if not name or not port.isdigit():
            raise ConfigError(f"worker_hosts entry {host!r} is not host:port", arguments=("worker_hosts",))
    if len(set(hosts)) != len(hosts):
        raise ConfigError(f"worker_hosts lists a worker twice: {worker_hosts}", arguments=("worker_hosts",))
    if not 0 <= task_index < len(hosts):
        raise ConfigError(
            f"task_index={task_index} is out of range for the {len(hosts)} worker_hosts",
            arguments=("task_index", "worker_hosts"),
        )
    return {"cluster": {"worker": hosts}, "task": {"type": "worker", "index": task_index}}


def configure_cluster(worker_hosts, task_index):
    """Write TF_CONFIG from `worker_hosts`/`task_index` (before the strategy and the data pipeline read it)."""
    tf_config = json.dumps(tf_config_for_workers(worker_hosts, task_index))
    if os.environ.get("TF_CONFIG") and json.loads(os.environ["TF_CONFIG"]) != json.loads(tf_config):
        raise ConfigError(
            "worker_hosts and task_index contradict the TF_CONFIG environment variable; give one or the other",
            arguments=("worker_hosts", "task_index"),
        )
    os.environ["TF_CONFIG"] = tf_config


def set_precision(mixed_precision):
    """Set the global Keras dtype policy to `mixed_precision`. Losses and sampling stay float32 regardless."""
    if mixed_precision not in PRECISIONS:
        raise ConfigError(
            f"unknown mixed_precision={mixed_precision!r}; choose one of {list(PRECISIONS)}",
            arguments=("mixed_precision",),
        )
    keras.mixed_precision.set_global_policy(mixed_precision)


def is_chief():
    """True on the worker that writes checkpoints and logs: the chief, or worker 0 of a cluster without a chief."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = tf_config.get("task") or {}
    if not task or task.get("type") == "chief":
        return True
    has_chief = "chief" in tf_config.get("cluster", {})
    return task.get("type") == "worker" and int(task.get("index", 0)) == 0 and not has_chief


# What a collective of MultiWorkerMirroredStrategy raises when a peer is gone: Unavailable (its socket closed, or the
# coordination service missed its heartbeats), DeadlineExceeded (collective_timeout_seconds passed); Cancelled and
# Internal only count when they come from a collective, since elsewhere they are no sign of a lost worker.
_LOST_PEER_ERRORS = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError)
_COLLECTIVE_ERRORS = (tf.errors.CancelledError, tf.errors.InternalError)
_TASK_IN_ERROR = re.compile(r"/job:(\w+)(?:/replica:\d+)?/task:(\d+)")


def is_lost_worker_error(error):
    """True when `error`, raised in a multi-worker run, says that a peer stopped answering."""
    if isinstance(error, _LOST_PEER_ERRORS):
        return True
    return isinstance(error, _COLLECTIVE_ERRORS) and "collective" in str(error).lower()


def _describe(job_name, index, cluster):
    hosts = cluster.get(job_name) or []
    address = f" ({hosts[index]})" if index < len(hosts) else ""
    return f"{job_name} {index}{address}"


def lost_worker_error(error, step, model_dir, collective_timeout_seconds=None):
    """The one-line `WorkerLostError` for `error` (see `is_lost_worker_error`), raised while `step` ran (None: before
    training started): the peers TensorFlow's message names (else every other task of TF_CONFIG), and the checkpoint
    of `model_dir` every worker resumes from when started again with the same command."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    own = (task.get("type"), int(task.get("index", 0)))
    named = []
    for job_name, index in _TASK_IN_ERROR.findall(str(error)):
        if (job_name, int(index)) != own and (job_name, int(index)) not in named:
            named.append((job_name, int(index)))
    if named:  # TensorFlow says which
        lost = " and ".join(_describe(job_name, index, cluster) for job_name, index in named)
    else:
        peers = [
            (job_name, index)
            for job_name, hosts in sorted(cluster.items())
            for index in range(len(hosts))
            if (job_name, index) != own
        ]
        lost = ", ".join(_describe(job_name, index, cluster) for job_name, index in peers) or "a peer"
        lost = f"one of {lost}" if len(peers) > 1 else lost
    if isinstance(error, tf.errors.DeadlineExceededError) and collective_timeout_seconds:
        lost += f" did not answer within collective_timeout_seconds={collective_timeout_seconds:g}"
    else:
        lost += " stopped answering"
    when = f"during step {step}" if step is not None else "before training started"
    latest = tf.train.latest_checkpoint(model_dir) if tf.io.gfile.exists(model_dir) else None
    if latest:
        after = (
            f"the last checkpoint in {model_dir} is {os.path.basename(latest)}: restart every worker with the "
            f"same command to resume from step {latest.rsplit('-', 1)[-1]}"
        )
    else:
        after = f"{model_dir} holds no checkpoint yet: restart every worker with the same command to start again"
    return WorkerLostError(f"{lost} {when}; {after}", arguments=("collective_timeout_seconds",))
