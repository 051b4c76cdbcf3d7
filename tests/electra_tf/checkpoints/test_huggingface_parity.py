"""The same HF weights give the same logits in our models as in HF's ELECTRA (NumPy transcription)."""

import os

import numpy as np

from electra_tf.models import backbone_inputs, load_checkpoint
from tests.electra_tf.checkpoints import fixtures, hf_reference

TOLERANCE = 1e-4


def _real(values, features):
    """Padded positions carry no meaning (and implementations differ there); compare the real tokens."""
    return values[features["input_mask"].astype(bool)]


def _expected_discriminator_logits(hf_pair, features):
    return hf_reference.electra_for_pretraining_logits(
        hf_pair["discriminator"],
        hf_pair["discriminator_config"],
        features["input_ids"],
        features["input_mask"],
        features["segment_ids"],
    )


def _expected_mlm_logits(hf_pair, features):
    return hf_reference.electra_for_masked_lm_logits(
        hf_pair["generator"],
        hf_pair["generator_config"],
        features["input_ids"],
        features["input_mask"],
        features["segment_ids"],
    )


def _every_position(features):
    batch, length = features["input_ids"].shape
    return dict(backbone_inputs(features), mask_positions=np.tile(np.arange(length, dtype=np.int32), (batch, 1)))


def test_discriminator_logits_match_hf_electra_for_pretraining(hf_pair):
    features = fixtures.batch()
    loaded = load_checkpoint(os.path.join(hf_pair["root"], "discriminator"), "discriminator")
    ours = np.asarray(loaded.model(backbone_inputs(features), training=False))
    expected = _expected_discriminator_logits(hf_pair, features)
    assert np.abs(expected).max() > 0.5  # non-trivial logits
    np.testing.assert_allclose(_real(ours, features), _real(expected, features), atol=TOLERANCE, rtol=0)


def test_generator_mlm_logits_match_hf_electra_for_masked_lm(hf_pair):
    features = fixtures.batch()
    loaded = load_checkpoint(os.path.join(hf_pair["root"], "generator"), "generator")
    assert loaded.model.backbone.hidden_size == 8
    ours = np.asarray(loaded.model(_every_position(features), training=False))
    expected = _expected_mlm_logits(hf_pair, features)
    assert ours.shape == expected.shape == (2, 10, fixtures.VOCAB_SIZE)
    np.testing.assert_allclose(_real(ours, features), _real(expected, features), atol=TOLERANCE, rtol=0)


def test_pretrainer_from_hf_pair_matches_both_hf_models(hf_pair):
    features = fixtures.batch(seed=3)
    pretrainer = load_checkpoint(hf_pair["root"], "pretrainer").model
    assert pretrainer.generator.backbone.embeddings is pretrainer.discriminator.backbone.embeddings
    disc = np.asarray(pretrainer.discriminator(backbone_inputs(features), training=False))
    mlm = np.asarray(pretrainer.generator(_every_position(features), training=False))
    expected_disc = _expected_discriminator_logits(hf_pair, features)
    np.testing.assert_allclose(_real(disc, features), _real(expected_disc, features), atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(
        _real(mlm, features), _real(_expected_mlm_logits(hf_pair, features), features), atol=TOLERANCE, rtol=0
    )


def test_hf_electra_model_without_prefix_loads_as_encoder(hf_pair, tmp_path):
    """ElectraModel saves its weights without the `electra.` prefix and without a head."""
    tensors = {
        key[len("electra.") :]: value for key, value in hf_pair["discriminator"].items() if key.startswith("electra.")
    }
    config = fixtures.hf_config(fixtures.DISCRIMINATOR_SIZES, "ElectraModel")
    directory = fixtures.write_hf_directory(tmp_path / "electra_model", tensors, config)
    features = fixtures.batch()
    model = load_checkpoint(directory, "discriminator", allow_missing_head=True).model
    expected = hf_reference.electra_model(
        hf_pair["discriminator"], config, features["input_ids"], features["input_mask"], features["segment_ids"]
    )
    np.testing.assert_allclose(
        _real(np.asarray(model.backbone.encode(features)), features), _real(expected, features), atol=TOLERANCE, rtol=0
    )
