"""Mismatches fail with a CheckpointError naming the variable, both shapes and the likely cause."""

import dataclasses
import os

import pytest
from safetensors.numpy import load_file, save_file

from electra_tf.checkpoints.matching import assign_weights
from electra_tf.errors import CheckpointError
from electra_tf.models import build_discriminator, load_checkpoint
from electra_tf.models.format_registry import read_source
from electra_tf.training.pretrainer import ElectraPretrainer
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import TINY


def load_weights_into(model, kind, path):
    """The weights at `path` into an existing `model` of `kind` (built from a config of its own)."""
    assign_weights(model, kind, read_source(path).weights, path)


def test_generator_loaded_as_discriminator(hf_pair):
    generator_dir = os.path.join(hf_pair["root"], "generator")
    with pytest.raises(CheckpointError) as new_model:
        load_checkpoint(generator_dir, "discriminator")
    message = str(new_model.value)
    assert "variable electra/encoder/layer_0/attention/output/dense/kernel is missing" in message
    assert "holds a generator (hidden 8, 2 layers)" in message and "(8, 8)" in message
    assert "use kind=generator" in message

    with pytest.raises(CheckpointError) as existing_model:
        load_weights_into(build_discriminator(TINY), "discriminator", generator_dir)
    message = str(existing_model.value)
    assert "variable electra/embeddings_project/kernel (shape (16, 32)) is missing" in message
    assert "generator/embeddings_project/kernel has shape (16, 8)" in message
    assert "a discriminator of hidden 32 was requested" in message


def test_wrong_width(hf_pair):
    wide = dataclasses.replace(TINY, hidden_size=64, intermediate_size=128)
    with pytest.raises(CheckpointError) as error:
        load_weights_into(build_discriminator(wide), "discriminator", os.path.join(hf_pair["root"], "discriminator"))
    message = str(error.value)
    assert "variable electra/embeddings_project/kernel has shape (16, 32) in the checkpoint but (16, 64)" in message
    assert "this checkpoint's discriminator has hidden 32 but a discriminator of hidden 64 was requested" in message


def test_generator_config_of_the_wrong_width(hf_pair):
    half = dataclasses.replace(TINY, generator_hidden_fraction=0.5)  # generator 16 wide instead of 8
    with pytest.raises(CheckpointError) as error:
        load_weights_into(ElectraPretrainer(half, max_seq_length=16), "pretrainer", hf_pair["root"])
    message = str(error.value)
    assert (
        "variable generator/encoder/layer_0/attention/self/query/kernel has shape (8, 8) in the checkpoint but (16, 16)"
    ) in message
    assert "this checkpoint's generator has hidden 8 but a generator of hidden 16 was requested" in message


def test_missing_variable(hf_pair, tmp_path):
    source = os.path.join(hf_pair["root"], "discriminator")
    tensors = load_file(os.path.join(source, "model.safetensors"))
    del tensors["electra.encoder.layer.1.output.LayerNorm.weight"]
    target = tmp_path / "broken"
    target.mkdir()
    save_file(tensors, str(target / "model.safetensors"))
    for name in ("config.json", "vocab.txt"):
        (target / name).write_bytes(open(os.path.join(source, name), "rb").read())
    with pytest.raises(
        CheckpointError,
        match=r"variable electra/encoder/layer_1/output/LayerNorm/gamma \(shape "
        r"\(32,\)\) is missing",
    ):
        load_checkpoint(str(target), "discriminator")


def test_headless_encoder_needs_allow_missing_head(hf_pair, tmp_path):
    source = os.path.join(hf_pair["root"], "discriminator")
    tensors = {
        k: v
        for k, v in load_file(os.path.join(source, "model.safetensors")).items()
        if not k.startswith("discriminator_predictions.")
    }
    target = tmp_path / "headless"
    target.mkdir()
    save_file(tensors, str(target / "model.safetensors"))
    for name in ("config.json", "vocab.txt"):
        (target / name).write_bytes(open(os.path.join(source, name), "rb").read())
    with pytest.raises(CheckpointError, match="discriminator head is missing.*allow_missing_head=True"):
        load_checkpoint(str(target), "discriminator")
    assert load_checkpoint(str(target), "discriminator", allow_missing_head=True).kind == "discriminator"


def test_differing_embedding_copies_in_an_hf_pair_are_refused(hf_pair, tmp_path):
    import shutil

    from electra_tf.scoring import load_scorer

    shutil.copytree(hf_pair["root"], tmp_path / "pair")
    pair = fixtures.differ_generator_embeddings(tmp_path / "pair")
    refused = (
        r"the shared embeddings differ between discriminator/ and generator/: "
        r"electra/embeddings/word_embeddings \(largest difference 1\)"
    )
    with pytest.raises(CheckpointError, match=refused):
        load_checkpoint(pair, "pretrainer")
    model = load_checkpoint(pair, "pretrainer", allow_embedding_mismatch=True).model
    assert (
        model.embeddings.word_embeddings.embeddings.numpy()[0, 0]
        == hf_pair["discriminator"]["electra.embeddings.word_embeddings.weight"][0, 0]
    )
    # The scorer reads the pair as well, by the same rule.
    with pytest.raises(CheckpointError, match=refused):
        load_scorer(pair)
    discriminator, _ = load_scorer(pair, allow_embedding_mismatch=True)
    assert (
        discriminator.backbone.embeddings.word_embeddings.embeddings.numpy()[0, 0]
        == hf_pair["discriminator"]["electra.embeddings.word_embeddings.weight"][0, 0]
    )
