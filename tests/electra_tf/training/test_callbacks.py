import json
import os

import tensorflow as tf

from electra_tf.checkpoints.ours import RUN_CONFIG_NAME, run_prefix
from electra_tf.training.callbacks import CheckpointSaver, truncate_metrics_log, write_checkpoint_atomically


def test_truncate_keeps_one_consistent_history(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": s, "loss": 1.0 / s}) for s in (1, 100, 200, 300)]
    path.write_text("\n".join(lines) + "\n" + '{"step": 40', encoding="utf-8")  # torn last line from a crash
    truncate_metrics_log(str(path), 200)
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 100, 200]
    truncate_metrics_log(str(tmp_path / "absent.jsonl"), 5)  # nothing to do, no error
    assert not (tmp_path / "absent.jsonl").exists()


class _CountingModel:
    """What `CheckpointSaver` reads of a model: the step counter."""

    def __init__(self):
        self.steps_trained = tf.Variable(0, dtype=tf.int64)


def test_extra_steps_outlive_the_rotation(tmp_path):
    model = _CountingModel()
    weight = tf.Variable(0.0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(weight=weight), str(tmp_path), max_to_keep=1)
    saver = CheckpointSaver(manager, save_every_steps=2, extra_steps=(3, 4))
    saver.set_model(model)
    for step in range(1, 8):
        model.steps_trained.assign(step)
        weight.assign(10.0 * step)
        saver.on_train_batch_end(step - 1)
    saver.on_train_end()

    assert manager.latest_checkpoint == str(tmp_path / "ckpt-7")
    assert not tf.io.gfile.exists(str(tmp_path / "ckpt-3.index"))  # rotated away by max_to_keep=1
    names = sorted(os.listdir(tmp_path))
    assert [name for name in names if name.startswith("kept-")] == [
        "kept-3.data-00000-of-00001",
        "kept-3.index",
        "kept-4.data-00000-of-00001",
        "kept-4.index",
    ]
    assert not [name for name in names if ".tmp-" in name]
    for step in (3, 4):
        restored = tf.Variable(0.0)
        tf.train.Checkpoint(weight=restored).read(str(tmp_path / f"kept-{step}")).assert_existing_objects_matched()
        assert float(restored.numpy()) == 10.0 * step


def test_kept_checkpoint_is_found_as_a_run_prefix(tmp_path):
    (tmp_path / RUN_CONFIG_NAME).write_text("{}", encoding="utf-8")
    prefix = write_checkpoint_atomically(tf.train.Checkpoint(weight=tf.Variable(1.0)), str(tmp_path / "kept-5"))
    assert run_prefix(prefix) == (str(tmp_path), prefix)
