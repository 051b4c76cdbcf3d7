"""scripts/representation_collapse.py on the tiny pre-training run the session shares, run as users run it."""

import json
import os
import subprocess
import sys

from tests.conftest import REPO_ROOT, TINY_RUN_STEPS


def _run(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "representation_collapse.py"), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_statistics_of_a_fresh_and_a_trained_discriminator(tiny_preset_run, pretraining_data):
    records, _ = pretraining_data
    result = _run(
        f"--model_dir={tiny_preset_run}",
        f"--checkpoints=init,ckpt-{TINY_RUN_STEPS}",
        f"--eval_tfrecords={records}",
        "--num_sequences=8",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    fresh, trained = (json.loads(line) for line in result.stdout.splitlines() if line.startswith("{"))
    assert (fresh["checkpoint"], trained["checkpoint"]) == ("init", f"ckpt-{TINY_RUN_STEPS}")
    # Hidden size 128: a fresh network spreads its token states over many directions; its logits are near 0.
    assert fresh["effective_rank"] > 10 and fresh["mean_cosine"] < 0.5 and abs(fresh["logit_mean"]) < 0.5
    # The trained detector (AUC > 0.8 on this corpus) tells tokens apart: its logits vary over tokens.
    assert trained["logit_std"] > fresh["logit_std"] and trained["effective_rank"] > 1.5
    # The fresh generator is near chance on both orders (vocabulary of a few hundred pieces).
    assert fresh["mlm_accuracy"] < 0.1 and fresh["mlm_accuracy_shuffled"] < 0.1
    assert 0 <= trained["mlm_accuracy_shuffled"] <= 1 and trained["mlm_accuracy"] > fresh["mlm_accuracy"]


def test_a_missing_checkpoint_is_a_one_line_error(tiny_preset_run, pretraining_data):
    records, _ = pretraining_data
    result = _run(f"--model_dir={tiny_preset_run}", "--checkpoints=ckpt-7", f"--eval_tfrecords={records}")
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "ckpt-7 does not exist: pass --checkpoints among the ckpt-N" in errors[0], result.stderr
