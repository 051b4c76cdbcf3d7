"""The datasets handed to Keras' fit carry tf.data options without the autotuning model (see keras_input)."""

import types

import numpy as np

from electra_tf.data import make_pretraining_dataset
from electra_tf.data.keras_input import keras_input_options
from finetune.glue.features import GlueFeatures, features_to_dataset
from finetune.squad.task import training_examples
from finetune.trial_state import training_batches
from tests.electra_tf.data.test_pretraining_dataset import _write_shards


def _ids(n, length=8):
    return np.arange(n * length, dtype=np.int32).reshape(n, length) % 50 + 5


def test_options_turn_autotuning_off_and_keep_the_requested_determinism():
    assert keras_input_options().autotune.enabled is False
    assert keras_input_options().deterministic is True
    assert keras_input_options(deterministic=False).deterministic is False


def test_pretraining_reader_uses_them_and_keeps_its_sharding_policy(tmp_path):
    dataset = make_pretraining_dataset(_write_shards(tmp_path / "d"), 16, 4)
    assert dataset.options().autotune.enabled is False
    assert dataset.options().deterministic is True
    # The reader's own option (how workers split the files) survives the merge.
    assert dataset.options().experimental_distribute.auto_shard_policy is not None


def test_glue_training_batches_use_them():
    ids = _ids(6)
    features = GlueFeatures(ids, np.ones_like(ids), np.zeros_like(ids), np.arange(6, dtype=np.int32) % 2)
    dataset = features_to_dataset(features, batch_size=4)
    assert dataset.options().autotune.enabled is False
    assert sorted(label for _, labels in dataset for label in labels.numpy()) == [0, 0, 0, 1, 1, 1]


class _SquadFeatures:
    """The part of finetune.squad.features.SquadFeatures that training_examples reads."""

    def __init__(self, n):
        ids = _ids(n)
        self._inputs = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
        self.start_positions = np.arange(n)

    def __len__(self):
        return len(self.start_positions)

    def inputs(self):
        return self._inputs

    def labels(self):
        return {"start_positions": self.start_positions, "end_positions": self.start_positions + 1}


def test_squad_training_batches_use_them():
    model = types.SimpleNamespace(uses_teacher_forcing=True)
    dataset = training_batches(
        training_examples(model, _SquadFeatures(5)), batch_size=2, seed=0, first_epoch=0, num_epochs=1
    )
    assert dataset.options().autotune.enabled is False
    batches = list(dataset)
    assert sum(int(batch[1]["start_positions"].shape[0]) for batch in batches) == 5
    assert "start_positions" in batches[0][0]  # the teacher-forcing input
