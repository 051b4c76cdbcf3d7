"""Each objective pins which positions carry which loss (gradients of the loss with respect to the logits) and how the
terms are weighted."""

import math

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.pretraining import objectives
from electra_tf.pretraining.masking import MaskedInputs
from electra_tf.pretraining_settings import OBJECTIVES

BATCH, LENGTH, VOCAB, SLOTS = 2, 6, 9, 3
CONFIG = ElectraConfig(
    vocab_size=VOCAB, cls_id=1, sep_id=2, mask_id=3, pad_id=0, unk_id=4, gen_weight=1.0, disc_weight=50.0
)


def _outputs():
    """Hand-made step outputs: example 0 has 5 real tokens and masked slots at positions 1 and 3; example 1 has 6 real
    tokens and one masked slot at position 4 (the other slots are padding)."""
    rng = np.random.default_rng(0)
    input_ids = rng.integers(5, VOCAB, size=(BATCH, LENGTH)).astype(np.int32)
    input_mask = np.ones((BATCH, LENGTH), np.int32)
    input_mask[0, 5] = 0
    positions = np.array([[1, 3, 0], [4, 0, 0]], np.int32)
    weights = np.array([[1, 1, 0], [1, 0, 0]], np.float32)
    corrupted = input_ids.copy()
    corrupted[0, 1] = 5 if input_ids[0, 1] != 5 else 6
    masked = MaskedInputs(
        input_ids=tf.constant(input_ids),
        masked_lm_positions=tf.constant(positions),
        masked_lm_ids=tf.constant(np.take_along_axis(input_ids, positions, 1)),
        masked_lm_weights=tf.constant(weights),
    )
    return {
        "masked": masked,
        "input_ids": tf.constant(input_ids),
        "input_mask": tf.constant(input_mask),
        "mlm_logits": tf.Variable(rng.normal(size=(BATCH, SLOTS, VOCAB)).astype(np.float32)),
        "sampled_ids": tf.constant(np.take_along_axis(corrupted, positions, 1)),
        "corrupted_ids": tf.constant(corrupted),
        "labels": tf.constant((corrupted != input_ids).astype(np.int32)),
        "disc_logits": tf.Variable(rng.normal(size=(BATCH, LENGTH)).astype(np.float32)),
        "model_mlm_logits": tf.Variable(rng.normal(size=(BATCH, SLOTS, VOCAB)).astype(np.float32)),
        "copy_logits": tf.Variable(rng.normal(size=(BATCH, LENGTH)).astype(np.float32)),
    }


def _loss_and_gradients(objective, outputs):
    with tf.GradientTape() as tape:
        stats = objective.statistics(outputs)
        terms = objective.loss_terms(stats, stats, CONFIG)
        loss = tf.add_n(list(terms.values()))
    names = [name for name in ("mlm_logits", "disc_logits", "model_mlm_logits", "copy_logits") if name in outputs]
    gradients = tape.gradient(loss, [outputs[name] for name in names])
    carried = {name: None if g is None else np.abs(g.numpy()) > 0 for name, g in zip(names, gradients)}
    return stats, terms, carried


def _slot_rows(carried):
    return carried.any(axis=-1)


REAL_TOKENS = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]], bool)
MASKED_POSITIONS = np.array([[0, 1, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0]], bool)
ACTIVE_SLOTS = np.array([[1, 1, 0], [1, 0, 0]], bool)


def test_registry_matches_the_config_choices():
    assert sorted(objectives.OBJECTIVES) == sorted(OBJECTIVES)
    with pytest.raises(ValueError, match="unknown objective 'bert'"):
        objectives.get_objective("bert")


def test_electra_detection_loss_on_every_real_token_and_generator_at_masked_slots():
    stats, terms, carried = _loss_and_gradients(objectives.get_objective("electra"), _outputs())
    np.testing.assert_array_equal(carried["disc_logits"], REAL_TOKENS)
    np.testing.assert_array_equal(_slot_rows(carried["mlm_logits"]), ACTIVE_SLOTS)
    assert carried["model_mlm_logits"] is None and carried["copy_logits"] is None
    np.testing.assert_allclose(terms["model"], 50.0 * stats["disc_loss_sum"] / 11.0, rtol=1e-6)
    np.testing.assert_allclose(terms["generator"], stats["mlm_loss_sum"] / 3.0, rtol=1e-6)


def test_electra_15_detection_loss_only_at_masked_positions():
    stats, _, carried = _loss_and_gradients(objectives.get_objective("electra_15"), _outputs())
    np.testing.assert_array_equal(carried["disc_logits"], MASKED_POSITIONS)
    np.testing.assert_array_equal(_slot_rows(carried["mlm_logits"]), ACTIVE_SLOTS)
    assert float(stats["disc_count"]) == 3.0


def test_mlm_has_no_generator_and_predicts_the_masked_slots_with_the_model():
    objective = objectives.get_objective("mlm")
    assert not objective.uses_generator and objective.heads == (objectives.MASKED_LM_HEAD,)
    outputs = _outputs()
    for name in ("mlm_logits", "sampled_ids", "corrupted_ids", "labels", "disc_logits"):
        del outputs[name]
    stats, terms, carried = _loss_and_gradients(objective, outputs)
    assert list(terms) == ["model"]
    np.testing.assert_array_equal(_slot_rows(carried["model_mlm_logits"]), ACTIVE_SLOTS)
    np.testing.assert_allclose(terms["model"], stats["mlm_loss_sum"] / 3.0, rtol=1e-6)


def test_replace_mlm_model_predicts_the_originals_at_the_masked_slots():
    objective = objectives.get_objective("replace_mlm")
    outputs = _outputs()
    stats, terms, carried = _loss_and_gradients(objective, outputs)
    np.testing.assert_array_equal(_slot_rows(carried["model_mlm_logits"]), ACTIVE_SLOTS)
    np.testing.assert_array_equal(_slot_rows(carried["mlm_logits"]), ACTIVE_SLOTS)
    assert carried["disc_logits"] is None
    np.testing.assert_allclose(terms["model"], stats["model_mlm_loss_sum"] / 3.0, rtol=1e-6)
    np.testing.assert_array_equal(
        objective.model_mlm_positions(outputs["masked"], LENGTH), outputs["masked"].masked_lm_positions
    )


def test_all_tokens_mlm_predicts_every_real_token_with_the_copy_head():
    objective = objectives.get_objective("all_tokens_mlm")
    outputs = _outputs()
    outputs["model_mlm_logits"] = tf.Variable(
        np.random.default_rng(2).normal(size=(BATCH, LENGTH, VOCAB)), dtype=tf.float32
    )
    positions = objective.model_mlm_positions(outputs["masked"], LENGTH).numpy()
    np.testing.assert_array_equal(positions, np.tile(np.arange(LENGTH), (BATCH, 1)))
    stats, _, carried = _loss_and_gradients(objective, outputs)
    np.testing.assert_array_equal(_slot_rows(carried["model_mlm_logits"]), REAL_TOKENS)
    np.testing.assert_array_equal(carried["copy_logits"], REAL_TOKENS)
    assert float(stats["model_mlm_count"]) == 11.0


def test_expected_initial_losses():
    ln_v = math.log(VOCAB)
    assert objectives.get_objective("electra").expected_initial_loss(CONFIG) == pytest.approx(ln_v + 50 * math.log(2))
    assert objectives.get_objective("mlm").expected_initial_loss(CONFIG) == pytest.approx(ln_v)
    assert objectives.get_objective("replace_mlm").expected_initial_loss(CONFIG) == pytest.approx(2 * ln_v)
    assert objectives.get_objective("all_tokens_mlm").expected_initial_loss(CONFIG) is None


def _electric_outputs():
    """`_outputs()` with Electric's: cloze logits at every position, the candidate weights (real tokens but [CLS]
    at position 0 and [SEP] at the last real one) and the labels of every masked position, replaced or not."""
    outputs = _outputs()
    rng = np.random.default_rng(3)
    outputs["cloze_logits"] = tf.Variable(rng.normal(size=(BATCH, LENGTH, VOCAB)).astype(np.float32))
    candidates = REAL_TOKENS.copy()
    candidates[:, 0] = False
    candidates[0, 4] = candidates[1, 5] = False
    outputs["cloze_weights"] = tf.constant(candidates.astype(np.float32))
    outputs["labels"] = objectives.get_objective("electric").detection_labels(outputs["labels"], outputs["masked"])
    return outputs, candidates


def _log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def test_electric_nce_logits_labels_and_losses_match_a_numpy_computation():
    objective = objectives.get_objective("electric")
    outputs, candidates = _electric_outputs()
    energies = outputs["disc_logits"].numpy().astype(np.float64)
    # Every masked position is noise, including example 0's position 3, whose sample equals the original.
    np.testing.assert_array_equal(outputs["labels"].numpy(), MASKED_POSITIONS.astype(np.int32))
    logits = objective.detection_logits(outputs["disc_logits"], outputs, CONFIG).numpy()
    log_q = _log_softmax(outputs["cloze_logits"].numpy().astype(np.float64))
    corrupted = outputs["corrupted_ids"].numpy()
    expected = energies + np.take_along_axis(log_q, corrupted[..., None], -1)[..., 0] + math.log(0.15 / 0.85)
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)

    outputs["disc_logits"] = tf.constant(logits)
    stats = objective.statistics(outputs)
    terms = objective.loss_terms(stats, stats, CONFIG)
    labels = MASKED_POSITIONS.astype(np.float64)
    nce = np.logaddexp(0.0, expected) - labels * expected  # sigmoid cross-entropy, "noise" = 1
    np.testing.assert_allclose(terms["model"], 50.0 * nce[REAL_TOKENS].mean(), rtol=1e-5)
    input_ids = outputs["input_ids"].numpy()
    cloze = -np.take_along_axis(log_q, input_ids[..., None], -1)[..., 0]
    np.testing.assert_allclose(terms["generator"], cloze[candidates].mean(), rtol=1e-5)
    assert float(stats["cloze_count"]) == 7.0 and float(stats["disc_count"]) == 11.0
    assert objective.expected_initial_loss(CONFIG) is None


def test_electric_nce_loss_does_not_reach_the_cloze_logits():
    objective = objectives.get_objective("electric")
    outputs, candidates = _electric_outputs()
    with tf.GradientTape(persistent=True) as tape:
        outputs["disc_logits"] = objective.detection_logits(outputs["disc_logits"], outputs, CONFIG)
        stats = objective.statistics(outputs)
        terms = objective.loss_terms(stats, stats, CONFIG)
    nce_to_cloze = tape.gradient(terms["model"], outputs["cloze_logits"])
    assert nce_to_cloze is None
    cloze_rows = np.abs(tape.gradient(terms["generator"], outputs["cloze_logits"]).numpy()).sum(-1) > 0
    np.testing.assert_array_equal(cloze_rows, candidates)
    # The masked-LM metrics at the slots carry no loss: the cloze loss already covers those positions.
    assert tape.gradient(terms["generator"], outputs["mlm_logits"]) is None
