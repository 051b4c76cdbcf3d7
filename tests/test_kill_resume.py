"""Preemption and determinism, benchmarks (`pytest -m benchmark`; the 20-kill version is
`python tests/kill_resume_loop.py`).

The --deterministic promise: a --deterministic run interrupted by kill -9 (or stopped by SIGTERM) and
restarted ends with exactly the weights, Adam slots and per-step losses of an uninterrupted run with the same seed,
dropout on. The uninterrupted run and the restarted one are two separate runs of the tiny preset, so equal losses for
all 30 steps also pin that --deterministic makes two runs identical.
"""

import random
import signal
import subprocess
import time

import pytest

from tests import kill_resume_loop as loop
from tests.conftest import REPO_ROOT

NUM_STEPS = 30
SAVE_EVERY = 4


@pytest.fixture(scope="module")
def uninterrupted_runs(pretraining_data, tmp_path_factory):
    """objective -> the model_dir of its uninterrupted run (each run once per module)."""
    records, vocab = pretraining_data
    runs = {}

    def uninterrupted_run(objective):
        if objective not in runs:
            model_dir = tmp_path_factory.mktemp(f"uninterrupted_{objective}")
            result = subprocess.run(
                loop.run_args(records, vocab, model_dir, NUM_STEPS, SAVE_EVERY, objective),
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                env=loop._env(),
            )
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            runs[objective] = model_dir
        return runs[objective]

    return uninterrupted_run


# A benchmark (`pytest -m benchmark`): its four launches of a fresh process take close to two minutes. In the suite,
# a run resumes from its checkpoint with the optimizer's state and data position
# (tests/electra_tf/training/test_pretraining_job.py) and SIGTERM stops training at the end of its batch
# (tests/electra_tf/training/test_preemption.py).
@pytest.mark.benchmark
def test_sigterm_then_kill_9_and_restarts_end_exactly_as_an_uninterrupted_run(
    pretraining_data, uninterrupted_runs, tmp_path
):
    """SIGTERM saves a checkpoint of the current step and exits; the restart resumes from it and is killed -9 at a
    random moment; the next restart (of a restarted run) resumes from the last complete checkpoint and ends as the
    uninterrupted run. One run takes both signals: each launch pays TensorFlow's start-up."""
    records, vocab = pretraining_data
    # No periodic checkpoint while SIGTERM is sent: only its handler can have saved the checkpoint found afterwards.
    args = loop.run_args(records, vocab, tmp_path, NUM_STEPS, 1000)
    process = subprocess.Popen(
        args, cwd=REPO_ROOT, env=loop._env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    while process.poll() is None and len(loop.logged_steps(tmp_path)) < 3:
        time.sleep(0.01)  # not a busy loop: it would take a core from the run it waits for (and the other worker)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 143, stderr[-3000:]
    step = loop.checkpoint_step(tmp_path)
    assert 3 <= step < NUM_STEPS and f"saved the checkpoint of step {step}" in stderr
    assert loop.logged_steps(tmp_path)[-1] == step, "the checkpoint is of the last step trained"
    assert "Traceback" not in stderr
    assert not (tmp_path / "pretrained").exists(), "a preempted run does not export"

    args = loop.run_args(records, vocab, tmp_path, NUM_STEPS, SAVE_EVERY)
    delivered = loop.interrupted_run(args, tmp_path, kills=1, rng=random.Random(1), max_delay=1.0)
    assert delivered == 1
    loop.compare(uninterrupted_runs("electra"), tmp_path, NUM_STEPS)


# Electric: its two-tower generator and NCE logits add state (two towers, the cloze head) that must resume exactly.
# A benchmark (`pytest -m benchmark`): the ELECTRA run above checks the kill/resume path every objective shares, and
# this one's minute of runs keeps the suite within its time budget.
@pytest.mark.benchmark
def test_electric_killed_with_9_and_restarted_ends_exactly_as_an_uninterrupted_run(
    pretraining_data, uninterrupted_runs, tmp_path
):
    records, vocab = pretraining_data
    args = loop.run_args(records, vocab, tmp_path, NUM_STEPS, SAVE_EVERY, "electric")
    delivered = loop.interrupted_run(args, tmp_path, kills=1, rng=random.Random(1), max_delay=1.0)
    assert delivered == 1
    loop.compare(uninterrupted_runs("electric"), tmp_path, NUM_STEPS)
