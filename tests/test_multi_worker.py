"""Two MultiWorkerMirroredStrategy workers on 127.0.0.1 train (and evaluate on held-out data) exactly as
one process with the same global batch, and only the chief writes to --model_dir."""

import os
import socket
import subprocess
import sys

import numpy as np

from tests.conftest import REPO_ROOT
from tests.test_run_pretraining import _common, _final_weights, assert_same_single_evaluation

# Dropout off: Keras draws dropout masks per replica. jit_compile stays off (Keras 3 under tf.distribute).
SETTINGS = ("--num_train_steps=3", "--num_warmup_steps=0", "--learning_rate=1e-3", "--clip_norm=0.05",
            "--hidden_dropout=0", "--attention_dropout=0", "--save_checkpoints_steps=3", "--log_every_steps=1")


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def _start(args, tmpdir):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TMPDIR=str(tmpdir))
    env.pop("TF_CONFIG", None)
    return subprocess.Popen([sys.executable, str(REPO_ROOT / "run_pretraining.py"), *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_two_workers_on_loopback_equal_one_process(pretraining_data, tmp_path):
    evaluation = (f"--eval_tfrecords={pretraining_data[0]}", "--eval_every_steps=3", "--num_eval_steps=2")
    single = _start(_common(pretraining_data, tmp_path / "single", *SETTINGS, *evaluation), tmp_path)
    output, _ = single.communicate(timeout=300)
    assert single.returncode == 0, output[-3000:]

    hosts = ",".join(f"127.0.0.1:{port}" for port in _free_ports(2))
    worker_tmp = [tmp_path / f"tmp{index}" for index in range(2)]
    workers = []
    for index, tmpdir in enumerate(worker_tmp):
        tmpdir.mkdir()
        args = [*_common(pretraining_data, tmp_path / "cluster", *SETTINGS, *evaluation), "--strategy=multi_worker",
                f"--worker_hosts={hosts}", f"--task_index={index}"]
        workers.append(_start(args, tmpdir))
    for worker in workers:
        output, _ = worker.communicate(timeout=600)
        assert worker.returncode == 0, output[-3000:]

    expected, actual = _final_weights(tmp_path / "single"), _final_weights(tmp_path / "cluster")
    assert len(expected) > 200 and expected.keys() == actual.keys()
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, atol=1e-5, err_msg=name)
    # Only the chief wrote: one metrics history, one set of checkpoints; the other worker's checkpoint directory is
    # gone.
    with open(tmp_path / "cluster" / "metrics.jsonl", encoding="utf-8") as handle:
        assert len(handle.readlines()) == 3
    assert not os.listdir(worker_tmp[1]), "the non-chief's temporary checkpoint directory is removed"
    # The evaluation sums both workers' statistics: the single process's numbers, written once (by the chief).
    assert_same_single_evaluation(tmp_path / "single", tmp_path / "cluster", eval_batches=2)
