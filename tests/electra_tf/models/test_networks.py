import json
import shutil

import numpy as np
import pytest

from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError
from electra_tf.models import (
    ElectraDiscriminator,
    ElectraGenerator,
    backbone_inputs,
    build_discriminator,
    build_generator,
    load_checkpoint,
    save_checkpoint,
)


def _features(batch=2, length=16):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 300, size=(batch, length)).astype(np.int32)
    return backbone_inputs({"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)})


def test_reference_settings_in_the_encoder_layers():
    from scipy.special import erf  # the exact GELU, not the tanh approximation

    model = build_discriminator(ElectraConfig.from_preset("tiny", vocab_size=300))
    layer = model.backbone.transformer_layers[0]
    assert layer.layer_norm_epsilon == 1e-12 and layer.attention_layer_norm.epsilon == 1e-12
    assert layer.attention_probs_dropout.rate == 0.1 and layer.output_dropout.rate == 0.1
    x = np.linspace(-3, 3, 7).astype(np.float32)
    np.testing.assert_allclose(layer.intermediate_dense.activation(x), 0.5 * x * (1 + erf(x / np.sqrt(2))), atol=1e-6)
    assert model.backbone.embeddings.layer_norm.epsilon == 1e-12
    assert model.backbone.embeddings_project is not None  # E=64 != H=128
    stddev = np.std(layer.intermediate_dense.kernel.numpy())
    assert 0.015 < stddev < 0.02  # truncated normal 0.02 (truncation shrinks the std to ~0.88 x 0.02)
    # The reference's [H, H] attention kernels, not per-head ones.
    assert tuple(layer.query_dense.kernel.shape) == (128, 128)


def test_generator_sizes_follow_the_reference_rule():
    generator = build_generator(ElectraConfig.from_preset("tiny", vocab_size=300))
    # tiny: H=128, fraction 1/4 -> hidden 32, heads max(1, 32 // 64) = 1, FFN 4 x 32, E=64 projected to 32.
    backbone = generator.backbone
    assert backbone.hidden_size == 32 and backbone.num_heads == 1
    assert backbone.intermediate_size == 128 and backbone.embeddings_project is not None
    features = dict(_features(), mask_positions=np.array([[1, 4, 5]] * 2, np.int32))
    assert generator(features).shape == (2, 3, 300)
    # The output layer is the word table, transposed: logits - bias = LayerNorm(dense(h)) @ table^T.
    assert generator.lm_head.word_embeddings is backbone.embeddings.word_embeddings


def test_discriminator_outputs_one_logit_per_token_and_round_trips(tmp_path):
    model = build_discriminator(ElectraConfig.from_preset("tiny", vocab_size=300))
    logits = model(_features()).numpy()
    assert logits.shape == (2, 16)
    clone = ElectraDiscriminator.from_config(model.get_config())
    assert clone.electra_config == model.electra_config
    save_checkpoint(model, str(tmp_path / "pretrained"))
    loaded = load_checkpoint(str(tmp_path / "pretrained"))
    assert loaded.kind == "discriminator" and loaded.source_format == "ours"
    np.testing.assert_allclose(loaded.model(_features()).numpy(), logits, atol=1e-6)


def test_generator_config_round_trip_rebuilds_the_same_sizes():
    generator = build_generator(ElectraConfig.from_preset("tiny", vocab_size=300))
    clone = ElectraGenerator.from_config(generator.get_config())
    assert clone.backbone.architecture() == generator.backbone.architecture()
    assert clone.electra_config == generator.electra_config


def test_pretrained_directory_is_a_keras_hub_preset_with_the_architecture_only(tmp_path):
    import keras_hub

    model = build_discriminator(ElectraConfig.from_preset("tiny", vocab_size=300))
    save_checkpoint(model, str(tmp_path / "pretrained"))
    with open(tmp_path / "pretrained" / "config.json", encoding="utf-8") as handle:
        config = json.load(handle)["config"]
    assert "disc_weight" not in config and "mask_prob" not in config  # pre-training settings stay with the run
    assert {name: config[name] for name in model.backbone.architecture()} == model.backbone.architecture()
    backbone = keras_hub.models.Backbone.from_preset(str(tmp_path / "pretrained"))
    np.testing.assert_array_equal(backbone(_features()).numpy(), model.backbone(_features()).numpy())


def test_loading_a_missing_or_mismatched_pretrained_model_fails_clearly(tmp_path):
    with pytest.raises(CheckpointError, match=f"^path={tmp_path} is not a checkpoint in a known format"):
        load_checkpoint(str(tmp_path))
    save_checkpoint(build_discriminator(ElectraConfig.from_preset("tiny", vocab_size=300)), str(tmp_path / "a"))
    wider = ElectraConfig.from_preset("tiny", vocab_size=300, hidden_size=256, num_heads=4)
    save_checkpoint(build_discriminator(wider), str(tmp_path / "b"))
    shutil.copyfile(tmp_path / "b" / "model.weights.h5", tmp_path / "a" / "model.weights.h5")
    with pytest.raises(CheckpointError, match="do not match"):
        load_checkpoint(str(tmp_path / "a"))
