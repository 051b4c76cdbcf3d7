"""A NaN injected into one step's loss, under each --nonfinite_loss policy."""

import json
import os
import types

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.errors import NonFiniteLossError
from electra_tf.training.callbacks import LossScaleMonitor
from electra_tf.training.pretrainer import ElectraPretrainer
from tests.electra_tf.training.test_pretraining_job import _checkpoint_values, _job

POISONED_STEP = 4


@pytest.fixture
def nan_at_step_4(monkeypatch):
    """Test hook: the generator loss sum of step 4 (steps count from 1) becomes NaN, so its loss and gradients are
    NaN exactly as a real divergence would make them; every other step is untouched."""
    original = ElectraPretrainer.pretraining_statistics

    def poisoned(self, outputs):
        stats = dict(original(self, outputs))
        is_poisoned = tf.equal(self.steps_trained + 1, POISONED_STEP)
        stats["mlm_loss_sum"] = stats["mlm_loss_sum"] * tf.where(is_poisoned, float("nan"), 1.0)
        return stats

    monkeypatch.setattr(ElectraPretrainer, "pretraining_statistics", poisoned)


def _metrics(model_dir):
    with open(os.path.join(model_dir, "metrics.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _all_finite(values):
    return all(np.all(np.isfinite(v)) for v in values.values() if np.asarray(v).dtype.kind == "f")


def test_stop_names_the_step_and_keeps_the_last_good_checkpoint(pretraining_data, tmp_path, nan_at_step_4):
    job = _job(pretraining_data, tmp_path, save_checkpoints_steps=2, log_every_steps=1, nonfinite_loss="stop")
    with pytest.raises(NonFiniteLossError, match=r"non-finite loss at step 4\b.*last good checkpoint"):
        from electra_tf.training.pretraining_job import run

        run(job)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-2")
    assert not os.path.exists(tmp_path / "ckpt-4.index"), "the bad state is never saved"
    assert not os.path.exists(tmp_path / "pretrained")
    assert _all_finite(_checkpoint_values(str(tmp_path / "ckpt-2")))
    assert [entry["step"] for entry in _metrics(tmp_path)] == [1, 2, 3]


def test_skip_leaves_the_update_out_and_counts_it(pretraining_data, tmp_path, nan_at_step_4, capsys):
    from electra_tf.training.pretraining_job import run

    run(_job(pretraining_data, tmp_path, save_checkpoints_steps=3, log_every_steps=1, nonfinite_loss="skip"))
    assert "non-finite loss at step 4: update skipped" in capsys.readouterr().out
    entries = _metrics(tmp_path)
    assert [entry["step"] for entry in entries] == [1, 2, 3, 4, 5, 6]
    assert [entry["skipped_steps"] for entry in entries] == [0, 0, 0, 1, 1, 1]
    assert all(np.isfinite(entry["loss"]) for entry in entries), "a skipped step does not poison the metric window"
    values = _checkpoint_values(str(tmp_path / "ckpt-6"))
    assert _all_finite(values)
    assert values["model/skipped_steps/.ATTRIBUTES/VARIABLE_VALUE"] == 1
    assert values["model/last_skipped_step/.ATTRIBUTES/VARIABLE_VALUE"] == POISONED_STEP
    assert values["model/steps_trained/.ATTRIBUTES/VARIABLE_VALUE"] == 6
    assert values["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == 5, "5 updates applied, step 4's skipped"
    # The step-3 checkpoint equals the state just before the bad step; the skip left it untouched until step 5.
    assert _all_finite(_checkpoint_values(str(tmp_path / "ckpt-3")))


def test_float16_loss_scale_underflow_is_reported(capsys):
    scale = tf.Variable(0.5)
    model = types.SimpleNamespace(
        optimizer=types.SimpleNamespace(dynamic_scale=scale), steps_trained=tf.Variable(7, dtype=tf.int64)
    )
    monitor = LossScaleMonitor()
    monitor.set_model(model)
    logs = {}
    monitor.on_train_batch_end(0, logs)
    assert logs["loss_scale"] == 0.5
    assert "loss scale underflow at step 7" in capsys.readouterr().out
    monitor.on_train_batch_end(1, {})
    assert capsys.readouterr().out == "", "warned once per scale value"
    scale.assign(4.0)
    monitor.on_train_batch_end(2, {})
    assert capsys.readouterr().out == ""
