"""scripts/representation_collapse.py on the tiny pre-training run the session shares, run in this process as
`python scripts/representation_collapse.py` runs it (`tests.console_commands.run_script`)."""

import json

from tests.conftest import TINY_RUN_STEPS
from tests.console_commands import run_script


def test_statistics_of_a_fresh_and_a_trained_discriminator(tiny_preset_run, pretraining_data, capfd):
    records, _ = pretraining_data
    status = run_script(
        "representation_collapse",
        f"--model_dir={tiny_preset_run}",
        f"--checkpoints=init,ckpt-{TINY_RUN_STEPS}",
        f"--eval_tfrecords={records}",
        "--num_sequences=8",
    )
    output = capfd.readouterr()
    assert status == 0, output.err[-3000:]
    fresh, trained = (json.loads(line) for line in output.out.splitlines() if line.startswith("{"))
    assert (fresh["checkpoint"], trained["checkpoint"]) == ("init", f"ckpt-{TINY_RUN_STEPS}")
    # Hidden size 128: a fresh network spreads its token states over many directions; its logits are near 0.
    assert fresh["effective_rank"] > 10 and fresh["mean_cosine"] < 0.5 and abs(fresh["logit_mean"]) < 0.5
    # The trained detector (AUC > 0.8 on this corpus) tells tokens apart: its logits vary over tokens.
    assert trained["logit_std"] > fresh["logit_std"] and trained["effective_rank"] > 1.5
    # The fresh generator is near chance on both orders (vocabulary of a few hundred pieces).
    assert fresh["mlm_accuracy"] < 0.1 and fresh["mlm_accuracy_shuffled"] < 0.1
    assert 0 <= trained["mlm_accuracy_shuffled"] <= 1 and trained["mlm_accuracy"] > fresh["mlm_accuracy"]


def test_a_missing_checkpoint_is_a_one_line_error(tiny_preset_run, pretraining_data, capfd):
    records, _ = pretraining_data
    status = run_script(
        "representation_collapse",
        f"--model_dir={tiny_preset_run}",
        "--checkpoints=ckpt-7",
        f"--eval_tfrecords={records}",
    )
    stderr = capfd.readouterr().err
    assert status == 2, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "ckpt-7 does not exist: pass --checkpoints among the ckpt-N" in errors[0], stderr
    assert "Traceback" not in stderr
