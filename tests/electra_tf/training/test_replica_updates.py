"""Cross-replica reductions of the pre-training step against one device, with nothing that hides a scale error: the
gradients are compared before any optimizer, and the weights after plain SGD (linear in the gradient, no clipping) on
3 Mirrored replicas and on two workers. The layouts run in processes of their own (`tests/replica_run.py`)."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.training.distribution import tf_config_for_workers
from electra_tf.training.replica_updates import all_reduce_sum, apply_if
from tests.conftest import REPO_ROOT
from tests.test_multi_worker import _free_ports

# Two Mirrored replicas are checked end to end by a benchmark (tests/test_run_pretraining.py: the weights after clipped
# Adam updates equal one device's); a third process here would add half a minute to the suite. The two workers of a
# cluster are a benchmark too (`pytest -m benchmark`): two more processes beside the Mirrored one doubled this file's
# setup, and the cross-replica sum they reduce through is the one the Mirrored replicas check.
LAYOUTS = ("mirrored_3", pytest.param("workers_2", marks=pytest.mark.benchmark))


def _start(mode, size, out, tf_config=None, reference_sizes=""):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_CONFIG", None)
    if tf_config:
        env["TF_CONFIG"] = tf_config
    return subprocess.Popen(
        [sys.executable, "-m", "tests.replica_run", mode, str(size), str(out), reference_sizes],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finished(layout, processes, paths):
    for process in processes:
        output, _ = process.communicate(timeout=600)
        assert process.returncode == 0, f"{layout}: {output[-3000:]}"
    return [dict(np.load(path)) for path in paths]


@pytest.fixture(scope="module")
def mirrored_3(tmp_path_factory):
    """The saved arrays of Mirrored on 3 replicas, with the single-device references of every layout."""
    path = tmp_path_factory.mktemp("replica_runs") / "m3.npz"
    return _finished("mirrored_3", [_start("mirrored", 3, path, reference_sizes="2,3")], [path])


@pytest.fixture(scope="module")
def workers_2(tmp_path_factory):
    """The saved arrays of each of two workers of a cluster."""
    import json

    directory = tmp_path_factory.mktemp("replica_runs")
    hosts = ",".join(f"127.0.0.1:{port}" for port in _free_ports(2))
    paths = [directory / f"w{index}.npz" for index in range(2)]
    processes = [
        _start("multi_worker", 2, path, json.dumps(tf_config_for_workers(hosts, index)))
        for index, path in enumerate(paths)
    ]
    return _finished("workers_2", processes, paths)


@pytest.fixture
def runs(request):
    """{layout: [saved arrays of each worker]} for Mirrored on 3 and the test's own layout, each run once per module."""
    layouts = {"mirrored_3"}
    if "layout" in request.fixturenames:
        layouts.add(request.getfixturevalue("layout"))
    return {layout: request.getfixturevalue(layout) for layout in layouts}


def _arrays(saved, prefix):
    count = len([key for key in saved if key.startswith(f"{prefix}/")])
    assert count > 30, prefix  # every trainable variable of the tiny pre-training model
    return [saved[f"{prefix}/{index}"] for index in range(count)]


def assert_close(actual, expected, rtol, what):
    """Each array within `rtol` of its expected value in norm, relative to its own norm plus a thousandth of the
    norm of all of them: the key biases' gradients are zero up to rounding, and no relative bound holds there."""
    floor = 1e-3 * np.sqrt(sum(np.sum(np.square(value)) for value in expected))
    assert len(actual) == len(expected)
    for index, (value, reference) in enumerate(zip(actual, expected)):
        error = np.linalg.norm(value - reference)
        assert error <= rtol * (np.linalg.norm(reference) + floor), (
            f"{what}: variable {index} is off by {error:.3g} (norm {np.linalg.norm(reference):.3g})"
        )


def _layout(runs, layout):
    saved = runs[layout]
    size = int(layout.rsplit("_", 1)[1])
    replicas = {}
    for worker in saved:
        for key in worker:
            if key.startswith("replica") and key.endswith(f"_n{size}/0"):
                replicas[int(key[len("replica") :].split("_")[0])] = worker
    assert sorted(replicas) == list(range(size))
    return runs["mirrored_3"][0], size, replicas


@pytest.mark.parametrize("layout", LAYOUTS)
def test_replica_gradients_add_up_to_the_single_device_gradient(runs, layout):
    """Before any optimizer: replica 0 holds the gradient of its slice of the batch normalised by the global counts,
    the replicas' gradients add up to the single-device gradient of the global batch, and that sum is what the
    all-reduce hands every replica."""
    reference, size, replicas = _layout(runs, layout)
    expected = _arrays(reference, "reference")
    own = [_arrays(replicas[replica], f"replica{replica}_n{size}") for replica in range(size)]
    assert_close(own[0], _arrays(reference, f"slice0_n{size}"), 1e-4, "replica 0")
    assert_close([sum(values) for values in zip(*own)], expected, 1e-4, "sum over replicas")
    for replica in range(size):
        assert_close(_arrays(replicas[replica], f"reduced{replica}_n{size}"), expected, 1e-4, f"reduced {replica}")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sgd_weights_after_several_steps_equal_one_device(runs, layout):
    reference, size, _ = _layout(runs, layout)
    initial = _arrays(reference, "initial")
    expected = [value - start for value, start in zip(_arrays(reference, "sgd_reference"), initial)]
    for saved in runs[layout]:  # every worker ends with the same weights
        actual = [value - start for value, start in zip(_arrays(saved, f"sgd_n{size}"), initial)]
        assert_close(actual, expected, 1e-3, f"SGD updates on {layout}")


def test_all_reduce_sum_over_three_replicas(runs):
    saved = runs["mirrored_3"][0]
    for replica in range(3):  # replica r contributed r + 1, as a scalar, a vector and a negated copy
        assert saved[f"all_reduce{replica}/scalar"] == 6.0
        np.testing.assert_array_equal(saved[f"all_reduce{replica}/vector"], [6.0, 6.0, 6.0])
        assert saved[f"all_reduce{replica}/negative"] == -6.0


def test_apply_if_under_a_strategy_applies_the_summed_update_or_nothing(runs):
    saved = runs["mirrored_3"][0]
    # SGD(0.1) on the replicas' gradients 1, 2 and 3, summed by the optimizer: 1 - 0.1 x 6.
    np.testing.assert_allclose(saved["apply_if_True/variable"], [0.4, 0.4, 0.4], rtol=1e-6)
    assert saved["apply_if_True/iterations"] == 1
    np.testing.assert_array_equal(saved["apply_if_False/variable"], [1.0, 1.0, 1.0])
    assert saved["apply_if_False/iterations"] == 0


def test_all_reduce_sum_is_the_identity_on_one_replica():
    values = {"a": tf.constant(2.0), "b": [tf.ones([2])]}
    assert all_reduce_sum(values) is values
    with tf.distribute.get_strategy().scope():
        assert all_reduce_sum(values) is values


@pytest.mark.parametrize("condition, expected, iterations", [(True, 0.7, 1), (False, 1.0, 0)])
def test_apply_if_without_a_strategy(condition, expected, iterations):
    variable = keras.Variable(np.ones(2, np.float32))
    optimizer = keras.optimizers.SGD(0.1)
    optimizer.build([variable])
    tf.function(lambda: apply_if(tf.constant(condition), optimizer, [tf.fill([2], 3.0)], [variable]))()
    np.testing.assert_allclose(variable.numpy(), [expected] * 2, rtol=1e-6)
    assert int(optimizer.iterations.numpy()) == iterations
