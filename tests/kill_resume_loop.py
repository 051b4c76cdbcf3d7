"""Kill -9 a tiny pre-training run at random moments, restart it each time, and check it ends as an uninterrupted run.

    .venv/bin/python tests/kill_resume_loop.py --kills=20          # a few minutes on 2 CPU cores

Both runs use --deterministic and the same seed, dropout on. Checked for every restart: it resumes from the checkpoint
the state file named when it started (never from a torn one) and logs from the next step on. Checked at the end: the
metrics history has every step once, each step's loss and learning rate equal the uninterrupted run's, and every
saved value (weights, Adam slots, step counters, dropout seed states) equals the uninterrupted run's exactly.
`tests/test_kill_resume.py` runs a short version in CI. The last line printed is a JSON summary.
"""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, REPO_ROOT)


def run_args(records, vocab, model_dir, num_train_steps, save_checkpoints_steps, objective="electra"):
    return [
        sys.executable,
        os.path.join(REPO_ROOT, "run_pretraining.py"),
        "--flagfile=configs/tiny.flags",
        f"--objective={objective}",
        f"--pretrain_tfrecords={records}",
        f"--vocab_file={vocab}",
        f"--model_dir={model_dir}",
        "--max_seq_length=32",
        "--train_batch_size=8",
        f"--num_train_steps={num_train_steps}",
        "--num_warmup_steps=5",
        f"--save_checkpoints_steps={save_checkpoints_steps}",
        "--keep_checkpoint_max=3",
        "--log_every_steps=1",
        "--deterministic",
        "--seed=7",
        "--noprogress_bar",
    ]


def _env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


def checkpoint_step(model_dir):
    """The step of the checkpoint a restart will restore (from the `checkpoint` state file), 0 if none."""
    import tensorflow as tf

    latest = tf.train.latest_checkpoint(str(model_dir))
    return int(latest.rsplit("-", 1)[1]) if latest else 0


def logged_steps(model_dir):
    path = os.path.join(model_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line)["step"] for line in handle if line.endswith("\n")]


def _trained_past(model_dir, step, since):
    path = os.path.join(model_dir, "metrics.jsonl")
    return os.path.exists(path) and os.path.getmtime(path) > since and (logged_steps(model_dir) or [0])[-1] > step


def metrics(model_dir):
    with open(os.path.join(model_dir, "metrics.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def checkpoint_values(model_dir):
    import tensorflow as tf

    path = tf.train.latest_checkpoint(str(model_dir))
    return {
        name: tf.train.load_variable(path, name)
        for name, _ in tf.train.list_variables(path)
        if name not in ("_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE")
    }


def _check_resumed(output, model_dir, expected_step):
    resumed = re.findall(r"resumed from .*ckpt-(\d+)", output)
    actual = int(resumed[0]) if resumed else 0
    if actual != expected_step:
        raise AssertionError(
            f"restart resumed from step {actual}, expected the last complete checkpoint "
            f"{expected_step}:\n{output[-2000:]}"
        )


def interrupted_run(args, model_dir, kills, rng, max_delay, sig=signal.SIGKILL, log=print):
    """Start the run `kills` times, each time wait until it trained a new step, then a random 0..max_delay seconds,
    and send `sig`; finally let it finish. Returns the number of signals that hit a running process."""
    delivered = 0
    for attempt in range(kills + 1):
        expected = checkpoint_step(model_dir)
        started = time.time()
        process = subprocess.Popen(
            args, cwd=REPO_ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if attempt < kills:
            # Until the restarted run truncates metrics.jsonl, it still holds the killed run's steps past the
            # checkpoint: wait for the file to change after the start and show a step past the checkpoint.
            while process.poll() is None and not _trained_past(model_dir, expected, started):
                time.sleep(0.05)
            time.sleep(rng.uniform(0, max_delay))
            if process.poll() is None:
                process.send_signal(sig)
                delivered += 1
        output, _ = process.communicate(timeout=600)
        _check_resumed(output, model_dir, expected)
        log(
            f"run {attempt}: resumed at step {expected}, exit code {process.returncode}, "
            f"checkpoint now at step {checkpoint_step(model_dir)}"
        )
        if process.returncode == 0:
            return delivered
        if sig == signal.SIGKILL and process.returncode != -signal.SIGKILL:
            raise AssertionError(f"run {attempt} failed:\n{output[-3000:]}")
    raise AssertionError("the run did not finish")


def compare(reference_dir, model_dir, num_train_steps):
    """Raise AssertionError unless the interrupted run's history and final state equal the reference's exactly."""
    expected, actual = metrics(reference_dir), metrics(model_dir)
    steps = [entry["step"] for entry in actual]
    assert steps == list(range(1, num_train_steps + 1)), f"metrics history is not one entry per step: {steps}"
    for want, got in zip(expected, actual):
        for name in ("loss", "learning_rate", "disc_loss", "masked_lm_loss"):
            assert want[name] == got[name], f"step {want['step']}: {name} {got[name]} != {want[name]}"
    want_values, got_values = checkpoint_values(reference_dir), checkpoint_values(model_dir)
    assert want_values.keys() == got_values.keys()
    assert any("seed_generator" in name for name in want_values), "dropout seed states are checkpointed"
    for name, value in want_values.items():
        np.testing.assert_array_equal(got_values[name], value, err_msg=name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--num_train_steps", type=int, default=300)
    parser.add_argument("--save_checkpoints_steps", type=int, default=5)
    parser.add_argument("--max_delay", type=float, default=2.0, help="seconds after a new step before the kill")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill times")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--objective", default="electra", help="pre-training objective of both runs")
    options = parser.parse_args()
    import pathlib

    from tests import synthetic_data

    workdir = pathlib.Path(options.workdir or tempfile.mkdtemp(prefix="kill-resume-"))
    workdir.mkdir(parents=True, exist_ok=True)
    records = synthetic_data.write_tfrecords(workdir / "train.tfrecord")
    vocab = synthetic_data.write_vocab(workdir / "vocab.txt")
    started = time.time()
    reference = workdir / "uninterrupted"
    subprocess.run(
        run_args(records, vocab, reference, options.num_train_steps, options.save_checkpoints_steps, options.objective),
        cwd=REPO_ROOT,
        env=_env(),
        check=True,
        capture_output=True,
    )
    interrupted = workdir / "interrupted"
    delivered = interrupted_run(
        run_args(
            records, vocab, interrupted, options.num_train_steps, options.save_checkpoints_steps, options.objective
        ),
        interrupted,
        options.kills,
        random.Random(options.seed),
        options.max_delay,
    )
    compare(reference, interrupted, options.num_train_steps)
    print(
        json.dumps(
            {
                "kills_requested": options.kills,
                "kills_delivered": delivered,
                "identical": True,
                "num_train_steps": options.num_train_steps,
                "seconds": round(time.time() - started, 1),
                "workdir": str(workdir),
            }
        )
    )


if __name__ == "__main__":
    main()
