"""scripts/cpu_recipe_curves.py on run directories of the two phases and a twin, run in this process as
`python scripts/cpu_recipe_curves.py` runs it (`tests.console_commands.run_script`)."""

import json
import os

import pytest

from electra_tf import flops as flops_lib
from electra_tf.config import ElectraConfig
from electra_tf.training.evaluation import EVAL_METRICS_FILE
from electra_tf.training.pretraining_job import CONFIG_FILE, JOB_FILE
from tests.console_commands import run_script

LENGTH, BATCH = 128, 32


def _run_dir(path, objective, evaluations):
    """A model directory as the pre-training job leaves it, without TensorBoard logs (so without wall times)."""
    os.makedirs(path)
    config = ElectraConfig.from_preset("cpu", objective=objective, alibi=True, type_vocab_size=0)
    (path / CONFIG_FILE).write_text(config.to_json())
    (path / JOB_FILE).write_text(json.dumps({"max_seq_length": LENGTH, "train_batch_size": BATCH}))
    (path / EVAL_METRICS_FILE).write_text("".join(json.dumps(entry) + "\n" for entry in evaluations))
    return config


def test_the_electra_phase_counts_from_the_masked_lm_steps_it_started_from(tmp_path, capfd):
    mlm = _run_dir(tmp_path / "mlm", "mlm", [{"step": s, "masked_lm_accuracy": s / 1e4} for s in (250, 500, 750)])
    electra = _run_dir(
        tmp_path / "electra", "electra", [{"step": s, "disc_auc": 0.7, "masked_lm_accuracy": 0.2} for s in (100, 200)]
    )
    _run_dir(tmp_path / "twin", "mlm", [{"step": s, "masked_lm_accuracy": s / 1e4} for s in (250, 500, 750, 1000)])
    output = tmp_path / "plots" / "curves.png"
    status = run_script(
        "cpu_recipe_curves",
        f"--mlm_dir={tmp_path / 'mlm'}",
        f"--electra_dir={tmp_path / 'electra'}",
        f"--twin_dir={tmp_path / 'twin'}",
        "--handover_step=500",
        f"--output={output}",
    )
    printed = capfd.readouterr()
    assert status == 0, printed.err[-3000:]
    lines = [json.loads(line) for line in printed.out.splitlines() if line.startswith("{")]
    runs = {}
    for line in lines:
        runs.setdefault(line["run"], []).append(line)
    assert list(runs) == ["masked LM, equal FLOPs", "masked-LM phase (to step 500)", "ELECTRA phase"]
    assert [entry["step"] for entry in runs["masked-LM phase (to step 500)"]] == [250, 500]  # the hand-over ends it
    assert [entry["step"] for entry in runs["masked LM, equal FLOPs"]] == [250, 500, 750, 1000]
    mlm_step = flops_lib.objective_pretraining_flops(mlm, LENGTH, BATCH, 1)
    electra_step = flops_lib.objective_pretraining_flops(electra, LENGTH, BATCH, 1)
    assert electra_step > mlm_step  # the generator and the discriminator's head
    assert runs["masked-LM phase (to step 500)"][1]["flops"] == pytest.approx(500 * mlm_step)
    assert [entry["flops"] for entry in runs["ELECTRA phase"]] == pytest.approx(
        [500 * mlm_step + 100 * electra_step, 500 * mlm_step + 200 * electra_step]
    )
    assert not any("wall_seconds" in line for line in lines)  # no training logs: no wall times
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_directory_without_a_run_is_named(tmp_path, capfd):
    _run_dir(tmp_path / "mlm", "mlm", [{"step": 250, "masked_lm_accuracy": 0.1}])
    status = run_script(
        "cpu_recipe_curves",
        f"--mlm_dir={tmp_path / 'mlm'}",
        f"--electra_dir={tmp_path / 'none'}",
        f"--output={tmp_path / 'x.png'}",
    )
    stderr = capfd.readouterr().err
    assert status == 2, stderr[-3000:]
    assert f"--electra_dir={tmp_path / 'none'} holds no {CONFIG_FILE}: pass the model_dir" in stderr, stderr
    assert not (tmp_path / "x.png").exists()
