"""`build_pretraining_networks`: which networks each pre-training variant has, at the config's sizes; a pre-training
model given them is the model that builds its own (weights, checkpoint paths, outputs); networks that do not fit the
config are refused naming what differs."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.models import (
    ElectraGenerator,
    ElectraPretrainingModel,
    PretrainingNetworks,
    TwoTowerClozeGenerator,
    build_generator,
    build_pretraining_networks,
)
from electra_tf.training.pretrainer import ElectraPretrainer

LENGTH = 16
FIX = "pass networks=build_pretraining_networks(config), or networks=None for the model to build its own"


def _config(**overrides):
    # tiny at one layer: H=128, E=64, generator H=32 (fraction 1/4).
    special_ids = dict(pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    return ElectraConfig.from_preset(
        "tiny", vocab_size=300, num_layers=1, max_position_embeddings=LENGTH, **special_ids, **overrides
    )


# variant: (config overrides, fields that are not None besides embeddings and discriminator, generator's hidden size)
VARIANTS = {
    "electra": ({}, {"generator"}, 32),
    "untied_embeddings": ({"untied_embeddings": True}, {"generator", "generator_embeddings"}, 32),
    "tie_all_weights": ({"tie_all_weights": True}, {"generator"}, 128),
    "electric": ({"objective": "electric"}, {"generator"}, 32),
    "gdes": ({"embedding_sharing": "gdes"}, {"generator", "word_embedding_delta"}, 32),
    "mlm": ({"objective": "mlm"}, {"model_mlm_head"}, None),
    "replace_mlm": ({"objective": "replace_mlm"}, {"generator", "model_mlm_head"}, 32),
    "all_tokens_mlm": ({"objective": "all_tokens_mlm"}, {"generator", "model_mlm_head", "copy_head"}, 32),
    "two_stage": ({"two_stage_steps": 2}, {"generator", "generator_embeddings"}, 128),
    "uniform_generator": ({"uniform_generator": True}, set(), None),
}


def _present(networks):
    return {field.name for field in dataclasses.fields(networks) if getattr(networks, field.name) is not None}


def _generator_backbones(generator):
    return generator.backbones if isinstance(generator, TwoTowerClozeGenerator) else (generator.backbone,)


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_has_its_networks_at_the_config_s_sizes(variant):
    overrides, present, generator_hidden_size = VARIANTS[variant]
    networks = build_pretraining_networks(_config(**overrides))
    assert _present(networks) == {"embeddings", "discriminator", *present}
    backbone = networks.discriminator.backbone
    assert (backbone.name, backbone.hidden_size, backbone.num_layers) == ("electra", 128, 1)
    assert backbone.embeddings is networks.embeddings
    assert tuple(networks.embeddings.word_embeddings.embeddings.shape) == (300, 64)
    if networks.generator is not None:
        generator_backbones = _generator_backbones(networks.generator)
        assert {b.hidden_size for b in generator_backbones} == {generator_hidden_size}
        own_block = networks.generator_embeddings or networks.embeddings
        assert all(b.embeddings is own_block for b in generator_backbones)
    if variant == "tie_all_weights":
        assert networks.generator.backbone is backbone
    if variant == "electric":
        assert isinstance(networks.generator, TwoTowerClozeGenerator)
        assert [b.name for b in generator_backbones] == ["generator_ltr", "generator_rtl"]
    elif networks.generator is not None:
        assert isinstance(networks.generator, ElectraGenerator)
    if networks.generator_embeddings is not None:
        assert networks.generator_embeddings.name == "generator_embeddings"
        assert networks.generator_embeddings is not networks.embeddings
    if networks.word_embedding_delta is not None:
        assert not np.any(networks.word_embedding_delta.embeddings.numpy())  # starts at the generator's table
        assert tuple(networks.word_embedding_delta.embeddings.shape) == (300, 64)
    if networks.model_mlm_head is not None:
        assert tuple(networks.model_mlm_head.dense.kernel.shape) == (128, 64)
        assert networks.model_mlm_head.word_embeddings is networks.embeddings.word_embeddings
    if networks.copy_head is not None:
        assert tuple(networks.copy_head.kernel.shape) == (128, 1)


def _features():
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 300, size=(2, LENGTH)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    mask = np.ones_like(ids)
    mask[1, 10:] = 0
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": np.zeros_like(ids)}


def _checkpoint_keys(model, directory):
    prefix = tf.train.Checkpoint(model=model).write(str(directory / "ckpt"))
    return [name for name, _ in tf.train.list_variables(prefix)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_model_given_the_factory_s_networks_is_the_model_that_builds_them(variant, tmp_path):
    config = _config(**VARIANTS[variant][0])
    built = ElectraPretrainingModel(config, max_seq_length=LENGTH, seed=3, num_train_steps=10)
    networks = build_pretraining_networks(config)
    given = ElectraPretrainingModel(config, max_seq_length=LENGTH, seed=3, num_train_steps=10, networks=networks)
    assert given.generator is networks.generator and given.discriminator is networks.discriminator
    assert [(w.path, tuple(w.shape)) for w in given.weights] == [(w.path, tuple(w.shape)) for w in built.weights]
    assert _checkpoint_keys(given, tmp_path / "given") == _checkpoint_keys(built, tmp_path / "built")
    assert given.get_config() == built.get_config()
    given.set_weights(built.get_weights())
    expected = built.pretraining_outputs(_features(), step=4)
    outputs = given.pretraining_outputs(_features(), step=4)
    assert sorted(outputs) == sorted(expected)
    for name in sorted(set(expected) - {"masked"}):
        np.testing.assert_allclose(outputs[name].numpy(), expected[name].numpy(), atol=1e-6, err_msg=name)


def test_the_networks_are_not_serialised_and_the_pretrainer_takes_them():
    config = _config()
    networks = build_pretraining_networks(config)
    model = ElectraPretrainer(config, max_seq_length=LENGTH, networks=networks)
    assert model.embeddings is networks.embeddings and model.generator is networks.generator
    assert "networks" not in model.get_config()
    clone = ElectraPretrainer.from_config(model.get_config())
    assert clone.generator is not networks.generator
    assert [w.path for w in clone.weights] == [w.path for w in model.weights]


def test_the_model_computes_in_the_networks_dtype_policy_unless_told_otherwise():
    config = _config()
    networks = build_pretraining_networks(config, dtype="mixed_bfloat16")
    assert networks.discriminator.backbone.transformer_layer_0.compute_dtype == "bfloat16"
    assert (
        ElectraPretrainingModel(config, max_seq_length=LENGTH, networks=networks).dtype_policy.name == "mixed_bfloat16"
    )
    with pytest.raises(ConfigError) as error:
        ElectraPretrainingModel(config, max_seq_length=LENGTH, networks=networks, dtype="float32")
    assert str(error.value) == (
        "networks.embeddings has the dtype policy mixed_bfloat16 but the model's is float32; pass the model "
        "dtype=mixed_bfloat16 (or none) or build the networks with build_pretraining_networks(config, dtype='float32')"
    )
    assert error.value.arguments == ("networks", "dtype")


def _refusal(config, networks):
    with pytest.raises(ConfigError) as error:
        ElectraPretrainingModel(config, max_seq_length=LENGTH, networks=networks)
    assert error.value.arguments == ("networks",) and isinstance(error.value, ValueError)
    message = str(error.value)
    assert message.endswith(f"; {FIX}")
    return message.removesuffix(f"; {FIX}")


def test_networks_that_do_not_fit_the_config_are_refused_naming_what_differs():
    config = _config()
    networks = build_pretraining_networks(config)
    assert _refusal(config, dataclasses.replace(networks, generator=None)) == (
        "networks.generator must be ElectraGenerator for this config, got None"
    )
    mlm = _config(objective="mlm")
    assert _refusal(mlm, dataclasses.replace(build_pretraining_networks(mlm), generator=networks.generator)) == (
        "networks.generator must be None for this config, got ElectraGenerator"
    )
    assert _refusal(_config(objective="electric"), networks) == (
        "networks.generator must be TwoTowerClozeGenerator for this config, got ElectraGenerator"
    )
    assert _refusal(config, build_pretraining_networks(_config(hidden_size=64))) == (
        "networks.discriminator.backbone has hidden_size=64 but the config needs hidden_size=128"
    )
    wider_generator = build_pretraining_networks(_config(generator_hidden_fraction=0.5))
    assert _refusal(config, wider_generator) == (
        "networks.generator.backbone has hidden_size=64, intermediate_size=256 but the config needs hidden_size=32, "
        "intermediate_size=128"
    )
    assert _refusal(config, dataclasses.replace(networks, generator=build_generator(config))) == (
        "networks.generator.backbone.embeddings must be networks.embeddings, one block under this config, not another"
    )
    gdes = _config(embedding_sharing="gdes")
    unbuilt_delta = keras.layers.Embedding(300, 64, name="word_embeddings_delta")
    gdes_networks = dataclasses.replace(build_pretraining_networks(gdes), word_embedding_delta=unbuilt_delta)
    assert _refusal(gdes, gdes_networks) == (
        "networks.word_embedding_delta.embeddings must have the shape [300, 64] for this config, got no variable (the "
        "layer is not built)"
    )
    assert _refusal(config, {"generator": networks.generator}) == "networks must be PretrainingNetworks, got dict"
    assert isinstance(networks, PretrainingNetworks)
