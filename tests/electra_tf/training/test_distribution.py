import json
import subprocess
import sys

import pytest

from electra_tf.errors import ConfigError
from electra_tf.training import distribution
from tests.conftest import REPO_ROOT
from tests.two_logical_cpus import run_in_a_fresh_python


def test_tf_config_from_worker_hosts_makes_worker_0_the_chief(monkeypatch):
    config = distribution.tf_config_for_workers("10.0.0.1:2222, 10.0.0.2:2222", 1)
    assert config == {"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}, "task": {"type": "worker", "index": 1}}
    monkeypatch.delenv("TF_CONFIG", raising=False)
    distribution.configure_cluster("a:1,b:2", 0)
    assert json.loads(__import__("os").environ["TF_CONFIG"])["task"]["index"] == 0
    assert distribution.is_chief()
    distribution.configure_cluster("a:1,b:2", 0)  # the same cluster again: fine
    with pytest.raises(ConfigError, match="contradict the TF_CONFIG"):
        distribution.configure_cluster("a:1,b:2", 1)
    monkeypatch.setenv("TF_CONFIG", json.dumps(distribution.tf_config_for_workers("a:1,b:2", 1)))
    assert not distribution.is_chief()


@pytest.mark.parametrize(
    "hosts, index, message",
    [
        ("", 0, "empty"),
        ("a:1,b", 0, "'b' is not host:port"),
        ("a:1,a:1", 0, "twice"),
        ("a:1,b:2", 2, "out of range"),
        ("a:1,b:2", -1, "out of range"),
    ],
)
def test_bad_worker_hosts_are_refused(hosts, index, message):
    with pytest.raises(ConfigError, match=message):
        distribution.tf_config_for_workers(hosts, index)


def test_negative_collective_timeout_is_refused():
    with pytest.raises(ConfigError, match=r"collective_timeout_seconds must be >= 0 \(0: wait forever\), got -1"):
        distribution.create_strategy("default", collective_timeout_seconds=-1)


def _checkpoint_at(model_dir, step):
    import tensorflow as tf

    checkpoint = tf.train.Checkpoint(value=tf.Variable(1.0))
    tf.train.CheckpointManager(checkpoint, str(model_dir), max_to_keep=None).save(checkpoint_number=step)


LOST_PEER = (
    "Collective ops is aborted by: Socket closed\nAdditional GRPC error information from remote target "
    "/job:worker/replica:0/task:1 while calling /tensorflow.WorkerService/RecvBuf"
)


def test_a_lost_worker_is_named_with_its_address_and_the_checkpoint_to_resume_from(monkeypatch, tmp_path):
    import tensorflow as tf

    monkeypatch.setenv("TF_CONFIG", json.dumps(distribution.tf_config_for_workers("h0:1,h1:2,h2:3", 0)))
    _checkpoint_at(tmp_path, 4)
    _checkpoint_at(tmp_path, 6)
    # The chief's own task (named in TensorFlow's op name) is not the lost one.
    own_op = "{{function_node _device_/job:worker/replica:0/task:0/device:CPU:0}} "
    error = tf.errors.UnavailableError(None, None, own_op + LOST_PEER)
    assert distribution.is_lost_worker_error(error)
    assert str(distribution.lost_worker_error(error, 7, str(tmp_path), 20)) == (
        f"worker 1 (h1:2) stopped answering during step 7; the last checkpoint in {tmp_path} is ckpt-6: restart every "
        "worker with the same command to resume from step 6"
    )
    # A timeout names no peer: every other worker is listed.
    error = tf.errors.DeadlineExceededError(None, None, "Collective has timed out during execution.")
    assert str(distribution.lost_worker_error(error, 1, str(tmp_path / "new"), 20)) == (
        "one of worker 1 (h1:2), worker 2 (h2:3) did not answer within collective_timeout_seconds=20 during step 1; "
        f"{tmp_path / 'new'} holds no checkpoint yet: restart every worker with the same command to start again"
    )


def test_only_collective_failures_count_as_a_lost_worker():
    import tensorflow as tf

    assert distribution.is_lost_worker_error(tf.errors.CancelledError(None, None, "Collective ops is aborted by: x"))
    assert not distribution.is_lost_worker_error(tf.errors.InternalError(None, None, "Blas GEMM launch failed"))
    assert not distribution.is_lost_worker_error(tf.errors.InvalidArgumentError(None, None, "Collective shape"))


def test_every_task_the_coordination_service_names_is_reported(monkeypatch, tmp_path):
    import tensorflow as tf

    monkeypatch.setenv("TF_CONFIG", json.dumps(distribution.tf_config_for_workers("h0:1,h1:2,h2:3", 0)))
    error = tf.errors.UnavailableError(
        None,
        None,
        "The following tasks are unhealthy (stopped sending heartbeats):\n"
        "/job:worker/replica:0/task:1\n/job:worker/replica:0/task:2\n",
    )
    assert str(distribution.lost_worker_error(error, None, str(tmp_path))).startswith(
        "worker 1 (h1:2) and worker 2 (h2:3) stopped answering before training started; "
    )


def test_threads_for_concurrent_micro_batches_are_refused_once_tensorflow_runs():
    import tensorflow as tf

    tf.constant(1.0) + 1.0  # TensorFlow's runtime has started: its thread pools are fixed
    assert distribution.share_threads_between_micro_batches(1) is None
    current = (
        tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
    )
    cpus = 6 if current != (3, 6) else 8
    with pytest.raises(
        ConfigError,
        match=r"^cannot give concurrent_micro_batches=2 their threads after TensorFlow initialised \(.*\): call "
        r"share_threads_between_micro_batches before the first TensorFlow op$",
    ) as raised:
        distribution.share_threads_between_micro_batches(2, cpus=cpus)
    assert raised.value.arguments == ("concurrent_micro_batches",)


YNNPACK_FUSIONS_OF_A_KERNEL = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_cpu_enable_fast_math=false"
import tensorflow as tf
from electra_tf.layers.fused_ops import bias_dropout_residual_layer_norm
from electra_tf.training.distribution import share_threads_between_micro_batches
share_threads_between_micro_batches(int(sys.argv[1]), cpus=2)
x, ones = tf.ones([224, 256]), tf.ones([256])
kernel = tf.function(lambda x: bias_dropout_residual_layer_norm(x, ones, x, ones, ones, 1e-12), jit_compile=True)
print(os.environ["XLA_FLAGS"], kernel.experimental_get_compiler_ir(x)("optimized_hlo").count("ynn"))
"""


@pytest.mark.parametrize("concurrent_micro_batches", [1, 2])
def test_concurrent_micro_batches_keep_xla_from_ynnpack_fusions(concurrent_micro_batches):
    """In a fresh process: the flag joins XLA_FLAGS' others, and the residual LayerNorm's kernel, whose reductions XLA
    hands to YNNPACK otherwise, compiles without YNNPACK fusions."""
    output = run_in_a_fresh_python(YNNPACK_FUSIONS_OF_A_KERNEL, str(concurrent_micro_batches))
    flags, fusions = output.strip().rsplit(" ", 1)
    if concurrent_micro_batches == 1:
        assert (flags, int(fusions) > 0) == ("--xla_cpu_enable_fast_math=false", True)
    else:
        assert (flags, fusions) == ("--xla_cpu_enable_fast_math=false --xla_cpu_experimental_ynn_fusion_type=", "0")


# One worker of a two-worker cluster: reduces its first dict batch (each worker's values differ) and prints the means.
REDUCE_A_DICT_BATCH = """
import json, os
import numpy as np
import tensorflow as tf
from electra_tf.training.distribution import create_strategy

strategy = create_strategy("multi_worker")
worker = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
batch = {"input_ids": tf.fill([2, 3], worker + 1), "weights": tf.fill([2], 10.0 * (worker + 1))}
distributed = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensors(batch))))
means = strategy.reduce("MEAN", distributed, axis=None)
# A step's logs, as Keras reduces them: scalars (each worker's own here), with axis=0.
logs = strategy.run(lambda: {"loss": tf.constant(float(worker + 1))})
log_means = strategy.reduce("MEAN", logs, axis=0)
print(json.dumps({"type": type(strategy).__name__, "leaves": sorted(type(v).__name__ for v in distributed.values()),
                  "means": {name: np.asarray(value).tolist() for name, value in means.items()},
                  "log_means": {name: float(value) for name, value in log_means.items()}}))
"""


def test_two_workers_reduce_a_dict_batch_and_scalar_logs_as_keras_fit_does(tmp_path):
    """Keras' `fit` reduces a first batch over the replicas to learn its shapes, and every step's logs with axis=0;
    across workers each value of the dict is reduced, a scalar over the replicas (TensorFlow's own
    MultiWorkerMirroredStrategy refuses the dict, and a scalar with an axis)."""
    from tests.test_multi_worker import _free_ports

    hosts = ",".join(f"127.0.0.1:{port}" for port in _free_ports(2))
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", REDUCE_A_DICT_BATCH],
            cwd=REPO_ROOT,
            env=dict(
                __import__("os").environ,
                TF_CPP_MIN_LOG_LEVEL="3",
                TF_CONFIG=json.dumps(distribution.tf_config_for_workers(hosts, index)),
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(2)
    ]
    for worker in workers:
        output, errors = worker.communicate(timeout=120)
        assert worker.returncode == 0, errors[-3000:]
        result = json.loads(output.strip().splitlines()[-1])
        assert result["type"] == "NestedReduceMultiWorkerStrategy"
        assert result["leaves"] == ["PerReplica", "PerReplica"]  # what the parent's reduce refuses as a dict
        # The batch of 2 is the global batch: each worker's replica holds one row of its own.
        assert result["means"] == {"input_ids": [[1.5] * 3], "weights": [15.0]}
        assert result["log_means"] == {"loss": 1.5}
