"""The span heads and the SQuAD model: the beam's end log-probs are the teacher-forced ones at the same start,
masking, serialisation, and the loss."""

import dataclasses

import keras
import numpy as np
import pytest

from electra_tf.config import PRESETS
from electra_tf.errors import ConfigError
from electra_tf.models import build_discriminator
from finetune.models.squad_model import ElectraSquadModel

CONFIG = dataclasses.replace(PRESETS["tiny"], vocab_size=64, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
BATCH, SEQ = 3, 12


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    segment = np.zeros((BATCH, SEQ), np.int32)
    segment[:, 4:10] = 1
    mask = np.ones((BATCH, SEQ), np.int32)
    mask[:, 10:] = 0
    return {
        "input_ids": rng.integers(5, 64, (BATCH, SEQ)).astype(np.int32),
        "input_mask": mask,
        "segment_ids": segment * mask,
    }


def test_joint_beam_agrees_with_teacher_forcing():
    keras.utils.set_random_seed(0)
    model = ElectraSquadModel(build_discriminator(CONFIG).backbone, head="joint", version_2=True, beam_size=4)
    inputs = _inputs()
    beam = model(inputs, training=False)
    top_start = np.asarray(beam["start_top_index"])
    assert np.all(np.isin(top_start, [0, 4, 5, 6, 7, 8, 9]))  # only [CLS] and context tokens can start a span
    for rank in range(4):
        forced = model(dict(inputs, start_positions=top_start[:, rank]), training=False)
        end_log_probs = keras.ops.convert_to_numpy(keras.ops.log_softmax(forced["end_logits"], axis=-1))
        expected = np.take_along_axis(end_log_probs, np.asarray(beam["end_top_index"])[:, rank], axis=1)
        np.testing.assert_allclose(np.asarray(beam["end_top_log_probs"])[:, rank], expected, atol=1e-5)
        start_log_probs = keras.ops.convert_to_numpy(keras.ops.log_softmax(forced["start_logits"], axis=-1))
        np.testing.assert_allclose(
            np.asarray(beam["start_top_log_probs"])[:, rank],
            np.take_along_axis(start_log_probs, top_start[:, rank : rank + 1], 1)[:, 0],
            atol=1e-5,
        )
    assert beam["impossible_logits"].shape == (BATCH,)


@pytest.mark.parametrize("head, version_2", [("simple", False), ("joint", True)])
def test_saved_model_round_trip_and_loss(head, version_2, tmp_path):
    keras.utils.set_random_seed(1)
    model = ElectraSquadModel(build_discriminator(CONFIG).backbone, head=head, version_2=version_2, beam_size=3)
    inputs = _inputs()
    labels = {
        "start_positions": np.array([5, 0, 7], np.int32),
        "end_positions": np.array([6, 0, 9], np.int32),
        "is_impossible": np.array([0, 1, 0], np.int32),
    }
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    x = dict(inputs, start_positions=labels["start_positions"]) if model.uses_teacher_forcing else inputs
    losses = model.fit(x, labels, epochs=8, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    path = str(tmp_path / "squad.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert restored.get_config() == model.get_config()
    for name, value in model.predict(inputs, verbose=0).items():
        np.testing.assert_allclose(restored.predict(inputs, verbose=0)[name], value, atol=1e-5)


def test_unknown_head_is_a_config_error():
    with pytest.raises(ConfigError, match="simple, joint"):
        ElectraSquadModel(build_discriminator(CONFIG).backbone, head="xlnet")
