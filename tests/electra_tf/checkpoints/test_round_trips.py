"""Ours -> HF -> ours and ours -> TF1 -> ours give back every variable bit for bit; and keras-hub."""

import os

import numpy as np
import pytest

from electra_tf.checkpoints import collect_weights
from electra_tf.models import load_checkpoint, save_checkpoint
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import NUM_HEADS, tiny_model, variables_by_path

KINDS = ["discriminator", "generator", "pretrainer"]


@pytest.mark.parametrize("kind", KINDS)
def test_ours_to_hf_to_ours_is_exact(kind, tmp_path, vocab_file):
    model = tiny_model(kind)
    save_checkpoint(model, str(tmp_path / "hf"), "hf", vocab_file=vocab_file)
    if kind == "pretrainer":
        assert sorted(os.listdir(tmp_path / "hf")) == ["discriminator", "generator"]
    loaded = load_checkpoint(str(tmp_path / "hf"), kind)
    assert loaded.kind == kind and loaded.model.electra_config == model.electra_config
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))


@pytest.mark.parametrize("kind", KINDS)
def test_ours_to_tf1_to_ours_is_exact(kind, tmp_path, vocab_file):
    model = tiny_model(kind, seed=1)
    prefix = save_checkpoint(model, str(tmp_path / "tf1" / "model.ckpt"), "tf1", vocab_file=vocab_file)
    loaded = load_checkpoint(prefix, kind, num_heads=NUM_HEADS)
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))


@pytest.mark.parametrize("kind", KINDS)
def test_ours_to_ours_directory_is_exact(kind, tmp_path, vocab_file):
    model = tiny_model(kind, seed=2)
    save_checkpoint(model, str(tmp_path / "ours"), "ours", vocab_file=vocab_file)
    loaded = load_checkpoint(str(tmp_path / "ours"))
    assert loaded.kind == kind and loaded.vocab_file.endswith("vocab.txt")
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))


def test_discriminator_and_generator_from_one_pretrainer_share_its_values(tmp_path, vocab_file):
    pretrainer = tiny_model("pretrainer", seed=3)
    save_checkpoint(pretrainer, str(tmp_path / "tf1" / "model.ckpt"), "tf1", vocab_file=vocab_file)
    for kind in ("discriminator", "generator"):
        part = load_checkpoint(str(tmp_path / "tf1"), kind, num_heads=NUM_HEADS).model
        fixtures.assert_identical(collect_weights(getattr(pretrainer, kind), kind), collect_weights(part, kind))


def test_keras_hub_backbone_round_trip_keeps_the_encoder(tmp_path, vocab_file):
    """A keras-hub ElectraBackbone holds the embeddings and encoder; ELECTRA's head does not exist there."""
    import keras_hub

    model = tiny_model("discriminator", seed=4)
    save_checkpoint(model, str(tmp_path / "kh"), "keras_hub")
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(tmp_path / "kh"))
    np.testing.assert_array_equal(
        backbone.token_embedding.embeddings.numpy(), model.backbone.embeddings.word_embeddings.embeddings.numpy()
    )
    loaded = load_checkpoint(
        str(tmp_path / "kh"), "discriminator", vocab_file=vocab_file, allow_missing_head=True
    ).model
    before, after = variables_by_path(model), variables_by_path(loaded)
    encoder_paths = [path for path in before if "discriminator_predictions" not in path]
    fixtures.assert_identical({p: before[p] for p in encoder_paths}, {p: after[p] for p in encoder_paths})


@pytest.mark.parametrize("kind", KINDS)
def test_reference_names_cover_every_weight_once(kind):
    """A weight added to the models without a reference name would silently not convert: fail here instead."""
    from electra_tf.checkpoints.naming import model_slots
    from tests.electra_tf.checkpoints.models import model_weights

    model = tiny_model(kind)
    slots = model_slots(model, kind)
    assert len({slot.name for slot in slots}) == len(slots)
    assert sorted(id(slot.variable) for slot in slots) == sorted(id(v) for v in model_weights(model))


def test_a_pretrainer_without_the_reference_layout_names_the_choices_that_keep_it_from_it():
    import dataclasses

    from electra_tf.checkpoints.naming import model_slots
    from electra_tf.errors import CheckpointError
    from tests.electra_tf.checkpoints.models import TINY

    model = tiny_model("pretrainer", dataclasses.replace(TINY, untied_embeddings=True, two_stage_steps=2))
    with pytest.raises(CheckpointError) as raised:
        model_slots(model, "pretrainer")
    assert str(raised.value) == (
        "a pre-training model with untied_embeddings and two_stage_steps has no reference checkpoint layout; use its "
        "discriminator instead: the run's <model_dir>/pretrained directory"
    )
