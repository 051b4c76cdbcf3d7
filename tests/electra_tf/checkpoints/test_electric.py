"""An Electric pre-training model converts to the reference's TF1 names and back, bit for bit, and its discriminator
(the energy model the scorer needs) loads from every format that holds it."""

import dataclasses

import pytest

from electra_tf.checkpoints import collect_weights
from electra_tf.errors import CheckpointError
from electra_tf.models import load_checkpoint, save_checkpoint
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import NUM_HEADS, TINY, model_weights, tiny_model, variables_by_path

ELECTRIC = dataclasses.replace(TINY, objective="electric")


def _reference_names():
    """The variables of the reference's Electric pre-training graph for TINY (discriminator 32 wide, 2 layers; towers
    8 wide, E = 16), written out from its scopes."""

    def dense(scope):
        return [f"{scope}/kernel", f"{scope}/bias"]

    def layer_norm(scope):
        return [f"{scope}/gamma", f"{scope}/beta"]

    def encoder(scope):
        names = dense(f"{scope}/embeddings_project")
        for i in range(2):
            layer = f"{scope}/encoder/layer_{i}"
            names += (
                dense(f"{layer}/attention/self/query")
                + dense(f"{layer}/attention/self/key")
                + dense(f"{layer}/attention/self/value")
                + dense(f"{layer}/attention/output/dense")
                + layer_norm(f"{layer}/attention/output/LayerNorm")
                + dense(f"{layer}/intermediate/dense")
                + dense(f"{layer}/output/dense")
                + layer_norm(f"{layer}/output/LayerNorm")
            )
        return names

    embeddings = [
        f"electra/embeddings/{table}" for table in ("word_embeddings", "position_embeddings", "token_type_embeddings")
    ]
    return set(
        embeddings
        + layer_norm("electra/embeddings/LayerNorm")
        + encoder("electra")
        + encoder("generator_ltr")
        + encoder("generator_rtl")
        + dense("discriminator_predictions/dense")
        + dense("discriminator_predictions/dense_1")
        + dense("cloze_predictions/dense")
        + layer_norm("cloze_predictions/LayerNorm")
        + ["cloze_predictions/output_bias"]
    )


def test_every_weight_has_the_reference_name_once():
    from electra_tf.checkpoints.naming import model_slots

    model = tiny_model("pretrainer", ELECTRIC)
    slots = model_slots(model, "pretrainer")
    assert {slot.name for slot in slots} == _reference_names() and len(slots) == len(_reference_names())
    assert sorted(id(slot.variable) for slot in slots) == sorted(id(v) for v in model_weights(model))
    shapes = {slot.name: slot.reference_shape for slot in slots}
    assert shapes["cloze_predictions/dense/kernel"] == (16, 16)  # both towers' 8 -> E
    assert shapes["generator_rtl/encoder/layer_1/intermediate/dense/kernel"] == (8, 32)


def test_tf1_round_trip_is_exact_and_recognised_as_electric(tmp_path, vocab_file):
    model = tiny_model("pretrainer", ELECTRIC, seed=1)
    prefix = save_checkpoint(model, str(tmp_path / "tf1" / "model.ckpt"), "tf1", vocab_file=vocab_file)
    loaded = load_checkpoint(prefix, num_heads=NUM_HEADS)
    assert loaded.kind == "pretrainer" and loaded.model.electra_config.objective == "electric"
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))
    discriminator = load_checkpoint(prefix, "discriminator", num_heads=NUM_HEADS).model
    assert discriminator.electra_config.objective == "electric"
    fixtures.assert_identical(
        collect_weights(model.discriminator, "discriminator"), collect_weights(discriminator, "discriminator")
    )
    with pytest.raises(CheckpointError, match="two-tower cloze generator, which is no stand-alone generator"):
        load_checkpoint(prefix, "generator", num_heads=NUM_HEADS)


def test_run_directory_gives_the_pretrainer_and_its_discriminator(tmp_path, vocab_file):
    model = tiny_model("pretrainer", ELECTRIC, seed=2)
    save_checkpoint(model, str(tmp_path / "run"), "ours", vocab_file=vocab_file)
    loaded = load_checkpoint(str(tmp_path / "run"))
    assert loaded.kind == "pretrainer" and loaded.model.electra_config == ELECTRIC
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))
    expected = collect_weights(model.discriminator, "discriminator")
    for path in (tmp_path / "run", tmp_path / "run" / "pretrained"):
        discriminator = load_checkpoint(str(path), "discriminator")
        assert discriminator.kind == "discriminator" and discriminator.vocab_file.endswith("vocab.txt")
        assert discriminator.model.electra_config.objective == "electric"
        fixtures.assert_identical(expected, collect_weights(discriminator.model, "discriminator"))


def test_hugging_face_holds_the_discriminator_only(tmp_path, vocab_file):
    model = tiny_model("pretrainer", ELECTRIC, seed=3)
    with pytest.raises(CheckpointError, match="Hugging Face has no model for Electric's two-tower cloze generator"):
        save_checkpoint(model, str(tmp_path / "hf"), "hf", vocab_file=vocab_file)
    save_checkpoint(model.pretrained_discriminator(), str(tmp_path / "hf"), "hf", vocab_file=vocab_file)
    discriminator = load_checkpoint(str(tmp_path / "hf"), "discriminator").model
    assert discriminator.electra_config.objective == "electric"
    fixtures.assert_identical(
        collect_weights(model.discriminator, "discriminator"), collect_weights(discriminator, "discriminator")
    )
