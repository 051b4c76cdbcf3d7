"""Two MultiWorkerMirroredStrategy workers on 127.0.0.1 pre-train (and evaluate on held-out data) exactly as
one process with the same global batch, and only the chief writes to --model_dir; a lost worker stops the other with
one line, and starting both again resumes from the last checkpoint; two workers fine-tune, and only the chief writes
to --output_dir. All are benchmarks (`pytest -m benchmark`)."""

import json
import os
import re
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.conftest import REPO_ROOT
from tests.console_commands import run_command
from tests.test_run_pretraining import _common, _final_weights, assert_same_single_evaluation

STEPS = 20
# Dropout off: Keras draws dropout masks per replica. jit_compile stays off (Keras 3 under tf.distribute).
SETTINGS = (
    f"--num_train_steps={STEPS}",
    "--num_warmup_steps=0",
    "--learning_rate=1e-3",
    "--clip_norm=0.05",
    "--hidden_dropout=0",
    "--attention_dropout=0",
    "--save_checkpoints_steps=2",
    "--log_every_steps=1",
    f"--eval_every_steps={STEPS}",
    "--num_eval_steps=2",
)
COLLECTIVE_TIMEOUT = 20


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def _start(args, tmpdir, script="run_pretraining.py", tf_config=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TMPDIR=str(tmpdir))
    env.pop("TF_CONFIG", None)
    if tf_config:
        env["TF_CONFIG"] = json.dumps(tf_config)
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / script), *args],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _settings(pretraining_data):
    return (*SETTINGS, f"--eval_tfrecords={pretraining_data[0]}")


@pytest.fixture(scope="module")
def single_process_run(pretraining_data, tmp_path_factory):
    """The model_dir of the uninterrupted one-process run that every cluster run here must equal: the same command,
    run in this process (`tests.console_commands`; the clusters are what is tested)."""
    model_dir = tmp_path_factory.mktemp("single") / "model"
    assert run_command("electra-pretrain", *_common(pretraining_data, model_dir, *_settings(pretraining_data))) == 0
    return model_dir


def _start_cluster(pretraining_data, model_dir, hosts, worker_tmp, *extra):
    return [
        _start(
            [
                *_common(pretraining_data, model_dir, *_settings(pretraining_data), *extra),
                "--strategy=multi_worker",
                f"--worker_hosts={hosts}",
                f"--task_index={index}",
            ],
            tmpdir,
        )
        for index, tmpdir in enumerate(worker_tmp)
    ]


def _worker_tmp(tmp_path):
    worker_tmp = [tmp_path / f"tmp{index}" for index in range(2)]
    for tmpdir in worker_tmp:
        tmpdir.mkdir()
    return worker_tmp


def _kill_the_rest(workers):
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()


def _outputs_of_a_finished_cluster(workers):
    """Each worker's output once all have exited 0 (any still running when one fails is killed)."""
    try:
        outputs = [worker.communicate(timeout=600)[0] for worker in workers]
    finally:
        _kill_the_rest(workers)
    assert [worker.returncode for worker in workers] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    return outputs


def _assert_equal_runs(expected_dir, actual_dir):
    """Same weights, Adam slots and step; the same held-out evaluation (summed over both workers, written once)."""
    expected, actual = _final_weights(expected_dir), _final_weights(actual_dir)
    assert len(expected) > 200 and expected.keys() == actual.keys()
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, atol=1e-5, err_msg=name)
    assert_same_single_evaluation(expected_dir, actual_dir, eval_batches=2)
    with open(actual_dir / "metrics.jsonl", encoding="utf-8") as handle:
        assert [json.loads(line)["step"] for line in handle] == list(range(1, STEPS + 1))


# A benchmark (`pytest -m benchmark`): a cluster of two fresh processes beside the one-process run takes a minute and a
# half. In the suite, two workers' gradients and SGD updates equal one device's
# (tests/electra_tf/training/test_replica_updates.py), and the lost-worker message
# (tests/electra_tf/training/test_distribution.py) and exit (tests/electra_tf/test_cli.py).
@pytest.mark.benchmark
def test_two_workers_train_as_one_process_and_only_the_chief_writes(pretraining_data, single_process_run, tmp_path):
    """A cluster of two workers ends as the one-process run with the same global batch (weights, Adam slots, step,
    the held-out evaluation summed over both), every step logged once by the chief, and the other worker's temporary
    checkpoint directory removed."""
    hosts = ",".join(f"127.0.0.1:{port}" for port in _free_ports(2))
    model_dir, worker_tmp = tmp_path / "cluster", _worker_tmp(tmp_path)
    _outputs_of_a_finished_cluster(_start_cluster(pretraining_data, model_dir, hosts, worker_tmp))
    _assert_equal_runs(single_process_run, model_dir)
    assert not os.listdir(worker_tmp[1]), "the non-chief's temporary checkpoint directory is removed"


# A benchmark (`pytest -m benchmark`): two cluster launches and the collective timeout take two minutes.
@pytest.mark.benchmark
def test_a_lost_worker_stops_the_chief_and_a_restart_resumes_from_the_checkpoint(
    pretraining_data, single_process_run, tmp_path
):
    """Two workers start from scratch; kill -9 of worker 1 once the chief has checkpointed: the chief exits within
    --collective_timeout_seconds with one line naming worker 1, the step and the checkpoint; both workers started
    again with the same command resume from that checkpoint and end as the uninterrupted one-process run (so the
    cluster's first steps, before the checkpoint, were that run's too). Only the chief wrote to --model_dir and the
    other worker's temporary checkpoint directory is gone. One cluster run covers all of it: each worker launch pays
    TensorFlow's start-up."""
    ports = _free_ports(2)
    hosts = ",".join(f"127.0.0.1:{port}" for port in ports)
    model_dir, worker_tmp = tmp_path / "cluster", _worker_tmp(tmp_path)
    timeout = f"--collective_timeout_seconds={COLLECTIVE_TIMEOUT}"
    workers = _start_cluster(pretraining_data, model_dir, hosts, worker_tmp, timeout)
    try:
        deadline = time.monotonic() + 300
        while not (model_dir / "ckpt-2.index").exists():
            assert all(worker.poll() is None for worker in workers), workers[0].communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no checkpoint within 300 s"
            time.sleep(0.05)
        workers[1].kill()
        workers[1].communicate()
        output, _ = workers[0].communicate(timeout=COLLECTIVE_TIMEOUT + 60)
    finally:
        _kill_the_rest(workers)
    assert workers[0].returncode == 2, output[-3000:]
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in output, output[-3000:]
    match = re.fullmatch(
        rf"error: worker 1 \(127\.0\.0\.1:{ports[1]}\) stopped answering during step (\d+); the last "
        rf"checkpoint in {re.escape(str(model_dir))} is ckpt-(\d+): restart every worker with the "
        r"same command to resume from step (\d+)",
        errors[0],
    )
    assert match, errors[0]
    failed_step, checkpoint_step, resume_step = (int(group) for group in match.groups())
    assert checkpoint_step == resume_step and checkpoint_step % 2 == 0 and checkpoint_step < failed_step < STEPS

    # New temporary directories: the killed worker left its own behind.
    (tmp_path / "restart").mkdir()
    worker_tmp = _worker_tmp(tmp_path / "restart")
    outputs = _outputs_of_a_finished_cluster(_start_cluster(pretraining_data, model_dir, hosts, worker_tmp, timeout))
    assert f"resumed from {model_dir / f'ckpt-{resume_step}'}" in outputs[0]
    _assert_equal_runs(single_process_run, model_dir)
    assert not os.listdir(worker_tmp[1]), "the non-chief's temporary checkpoint directory is removed"


def _tsv_rows(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    return [dict(zip(lines[0].split("\t"), line.split("\t"))) for line in lines[1:]]


# A benchmark (`pytest -m benchmark`): two fine-tuning workers take two minutes. In the suite, predictions under a
# strategy of two replicas (tests/finetune/test_batching.py) and the scalar logs' reduction across workers
# (tests/electra_tf/training/test_distribution.py).
@pytest.mark.benchmark
def test_two_workers_fine_tune_and_only_the_chief_writes(pretrained_tiny, keyword_glue_dir, tmp_path):
    """electra-finetune under --strategy=multi_worker (--worker_hosts/--task_index, or TF_CONFIG): both workers train
    and evaluate the trial and find the same dev score; the chief's --output_dir holds one set of outputs (one
    TensorBoard file per split), whose dev predictions are those of the trial's saved model run in one process; the
    other worker's temporary output directory is removed."""
    import keras

    import finetune.models  # noqa: F401  (registers the task models for load_model)
    from electra_tf.training import distribution

    hosts = ",".join(f"127.0.0.1:{port}" for port in _free_ports(2))
    output_dir, worker_tmp = tmp_path / "out", _worker_tmp(tmp_path)
    args = [
        "--task=SST-2",
        f"--data_dir={keyword_glue_dir}",
        f"--init_checkpoint={pretrained_tiny}",
        "--model_size=tiny",
        "--num_train_epochs=2",
        "--learning_rate=1e-3",
        "--train_batch_size=16",
        "--max_seq_length=16",
        "--save_models",
        "--noprogress_bar",
        f"--output_dir={output_dir}",
        "--strategy=multi_worker",
    ]
    # One worker told by flags, the other by TF_CONFIG: the two ways to describe the cluster.
    workers = [
        _start([*args, f"--worker_hosts={hosts}", "--task_index=0"], worker_tmp[0], "run_finetuning.py"),
        _start(args, worker_tmp[1], "run_finetuning.py", distribution.tf_config_for_workers(hosts, 1)),
    ]
    outputs = _outputs_of_a_finished_cluster(workers)
    scores = [[line for line in output.splitlines() if line.startswith("trial 0: {")] for output in outputs]
    assert scores[0] == scores[1] and len(scores[0]) == 1, scores
    trial_dir = output_dir / "trial_0"
    assert sorted(os.listdir(output_dir)) == ["flags.txt", "results.json", "trial_0"]
    assert sorted(os.listdir(trial_dir)) == ["dev_predictions.tsv", "logs", "model.keras", "submission", "trial.json"]
    for split in ("train", "validation"):
        assert len(os.listdir(trial_dir / "logs" / split)) == 1, "one worker's TensorBoard events"
    assert not os.listdir(worker_tmp[1]), "the other worker's temporary output directory is removed"

    rows = _tsv_rows(keyword_glue_dir / "SST-2" / "dev.tsv")
    model = keras.saving.load_model(str(trial_dir / "model.keras"))
    expected = np.argmax(model.predict(np.array([row["sentence"] for row in rows]), verbose=0), axis=-1)
    written = [int(row["prediction"]) for row in _tsv_rows(trial_dir / "dev_predictions.tsv")]
    assert written == expected.tolist()
    accuracy = json.loads((output_dir / "results.json").read_text())["trials"][0]["metrics"]["SST-2"]["accuracy"]
    assert accuracy == pytest.approx(100 * np.mean(expected == [int(row["label"]) for row in rows]))
    assert accuracy > 70, "the synthetic keyword task is learnt"
