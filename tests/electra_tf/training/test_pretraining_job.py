import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.errors import ConfigError, DataError
from electra_tf.training.pretraining_job import PretrainingJob, run


def _job(pretraining_data, model_dir, **overrides):
    records, vocab = pretraining_data
    settings = dict(pretrain_tfrecords=records, model_dir=str(model_dir), model_size="tiny", max_seq_length=32,
                    train_batch_size=8, learning_rate=1e-3, num_train_steps=6, num_warmup_steps=2,
                    save_checkpoints_steps=3, log_every_steps=2, vocab_file=vocab, progress_bar=False,
                    model_overrides={"hidden_dropout": 0.0, "attention_dropout": 0.0})
    settings.update(overrides)
    return PretrainingJob(**settings)


def _checkpoint_values(path):
    return {name: tf.train.load_variable(path, name) for name, _ in tf.train.list_variables(path)
            if name != "_CHECKPOINTABLE_OBJECT_GRAPH"}


def _logged_steps(model_dir):
    with open(os.path.join(model_dir, "metrics.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line)["step"] for line in handle]


def test_resume_continues_from_the_checkpoint_with_identical_optimizer_state(pretraining_data, tmp_path):
    """Must-show 6: a run killed after its step-3 checkpoint and started again ends where an uninterrupted run ends:
    same step, same weights, same Adam slots, and one consistent metrics history."""
    uninterrupted = tmp_path / "uninterrupted"
    run(_job(pretraining_data, uninterrupted))
    assert _logged_steps(uninterrupted) == [1, 2, 4, 6]

    # The interrupted run: what the uninterrupted one had on disk when it was at step 4 (checkpoint 3 complete,
    # metrics logged up to step 4), with checkpoint 6 never written.
    interrupted = tmp_path / "interrupted"
    shutil.copytree(uninterrupted, interrupted, ignore=shutil.ignore_patterns("ckpt-6*", "pretrained"))
    tf.compat.v1.train.update_checkpoint_state(str(interrupted), str(interrupted / "ckpt-3"),
                                     all_model_checkpoint_paths=[str(interrupted / "ckpt-3")])
    with open(interrupted / "metrics.jsonl", "w", encoding="utf-8") as handle:
        for step in (1, 2, 4):
            handle.write(json.dumps({"step": step, "loss": -1.0}) + "\n")
    restored_slots = _checkpoint_values(str(interrupted / "ckpt-3"))

    run(_job(pretraining_data, interrupted))

    assert _logged_steps(interrupted) == [1, 2, 4, 6]
    with open(interrupted / "metrics.jsonl", encoding="utf-8") as handle:
        assert [json.loads(line)["loss"] for line in handle][2] != -1.0, "entries after the checkpoint are replaced"
    expected = _checkpoint_values(str(uninterrupted / "ckpt-6"))
    resumed = _checkpoint_values(str(interrupted / "ckpt-6"))
    assert expected.keys() == resumed.keys()
    assert any("adam_m" in name or "_variables" in name for name in expected)
    for name, value in expected.items():
        np.testing.assert_allclose(resumed[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert int(resumed["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"]) == 6
    assert int(restored_slots["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"]) == 3


def test_finished_run_is_not_trained_again_and_pretrained_model_is_written(pretraining_data, tmp_path):
    run(_job(pretraining_data, tmp_path, num_train_steps=2, save_checkpoints_steps=0))
    assert sorted(os.listdir(tmp_path / "pretrained")) == ["config.json", "discriminator.weights.h5", "vocab.txt"]
    before = os.path.getmtime(tmp_path / "ckpt-2.index")
    assert run(_job(pretraining_data, tmp_path, num_train_steps=2)) == {}
    assert os.path.getmtime(tmp_path / "ckpt-2.index") == before


def test_model_dir_of_another_config_is_refused(pretraining_data, tmp_path):
    run(_job(pretraining_data, tmp_path, num_train_steps=1))
    with pytest.raises(ConfigError, match=r"different model configuration \(mask_prob: 0.15 -> 0.2\)"):
        run(_job(pretraining_data, tmp_path, num_train_steps=2,
                 model_overrides={"hidden_dropout": 0.0, "attention_dropout": 0.0, "mask_prob": 0.2}))


def test_sequence_length_mismatch_is_reported_before_training(pretraining_data, tmp_path):
    with pytest.raises(DataError, match="max_seq_length"):
        run(_job(pretraining_data, tmp_path, max_seq_length=64))
    assert not os.path.exists(tmp_path / "checkpoint")
