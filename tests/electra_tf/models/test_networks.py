import numpy as np
import pytest

from electra_tf.config import ElectraConfig
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretrained import load_pretrained, save_pretrained
from electra_tf.errors import CheckpointError


def _features(batch=2, length=16):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 300, size=(batch, length)).astype(np.int32)
    return {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}


def test_reference_settings_in_the_encoder_layers():
    model = ElectraDiscriminator(ElectraConfig.from_preset("tiny", vocab_size=300))
    layer = model.encoder.transformer_layers[0]
    assert layer.layer_norm_epsilon == 1e-12 and layer.normalize_first is False and layer.dropout == 0.1
    x = np.linspace(-3, 3, 7).astype(np.float32)
    from scipy.special import erf  # the exact GELU, not the tanh approximation
    np.testing.assert_allclose(layer.activation(x), 0.5 * x * (1 + erf(x / np.sqrt(2))), atol=1e-6)
    assert model.embeddings.layer_norm.epsilon == 1e-12
    assert model.encoder.embeddings_project is not None  # E=64 != H=128
    stddev = np.std(model.encoder.transformer_layers[0]._feedforward_intermediate_dense.kernel.numpy())
    assert 0.015 < stddev < 0.02  # truncated normal 0.02 (truncation shrinks the std to ~0.88 x 0.02)


def test_generator_sizes_follow_the_reference_rule():
    generator = ElectraGenerator(ElectraConfig.from_preset("tiny", vocab_size=300))
    # tiny: H=128, fraction 1/4 -> hidden 32, heads max(1, 32 // 64) = 1, FFN 4 x 32, E=64 projected to 32.
    assert generator.encoder.hidden_size == 32 and generator.encoder.num_heads == 1
    assert generator.encoder.intermediate_size == 128 and generator.encoder.embeddings_project is not None
    features = dict(_features(), masked_lm_positions=np.array([[1, 4, 5]] * 2, np.int32))
    assert generator(features).shape == (2, 3, 300)


def test_discriminator_outputs_one_logit_per_token_and_round_trips(tmp_path):
    model = ElectraDiscriminator(ElectraConfig.from_preset("tiny", vocab_size=300))
    logits = model(_features()).numpy()
    assert logits.shape == (2, 16)
    clone = ElectraDiscriminator.from_config(model.get_config())
    assert clone.electra_config == model.electra_config
    save_pretrained(model, str(tmp_path / "pretrained"))
    np.testing.assert_allclose(load_pretrained(str(tmp_path / "pretrained"))(_features()).numpy(), logits, atol=1e-6)


def test_loading_a_missing_or_mismatched_pretrained_model_fails_clearly(tmp_path):
    with pytest.raises(CheckpointError, match="config.json is missing"):
        load_pretrained(str(tmp_path))
    save_pretrained(ElectraDiscriminator(ElectraConfig.from_preset("tiny", vocab_size=300)), str(tmp_path / "a"))
    ElectraConfig.from_preset("tiny", vocab_size=300, hidden_size=256, num_heads=4).save(
        str(tmp_path / "a" / "config.json"))
    with pytest.raises(CheckpointError, match="does not match"):
        load_pretrained(str(tmp_path / "a"))
