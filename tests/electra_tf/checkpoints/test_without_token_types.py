"""An embedding block without a token-type table (type_vocab_size=0): what it computes, and how every format stores
it (a table of zeros, which reads back as no table)."""

import dataclasses

import numpy as np
import pytest

from electra_tf.checkpoints.naming import EMBEDDINGS_SCOPE, embedding_slots
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError, ConfigError
from electra_tf.layers.embeddings import ElectraEmbeddings
from electra_tf.models import load_checkpoint, save_checkpoint
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import NUM_HEADS, TINY, tiny_model, variables_by_path

NO_TOKEN_TYPES = dataclasses.replace(TINY, type_vocab_size=0)
TOKEN_TYPE_NAME = f"{EMBEDDINGS_SCOPE}/token_type_embeddings"


def _ids(seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(5, 50, size=(2, 8)).astype("int32"), rng.integers(0, 2, size=(2, 8)).astype("int32")


def test_block_without_table_equals_one_with_a_table_of_zeros_and_ignores_segments():
    without = ElectraEmbeddings(50, 16, max_position_embeddings=16, type_vocab_size=0, dropout=0.0)
    with_table = ElectraEmbeddings(50, 16, max_position_embeddings=16, type_vocab_size=2, dropout=0.0)
    input_ids, segment_ids = _ids()
    without(input_ids, segment_ids)
    with_table(input_ids, segment_ids)
    assert without.token_type_embeddings is None and len(without.weights) == len(with_table.weights) - 1
    for source, target in zip(embedding_slots(without), embedding_slots(with_table)):
        target.write(source.read())
    np.testing.assert_array_equal(with_table.token_type_embeddings.embeddings.numpy(), np.zeros((2, 16)))
    np.testing.assert_allclose(
        without(input_ids, segment_ids).numpy(), with_table(input_ids, segment_ids).numpy(), atol=1e-6
    )
    np.testing.assert_array_equal(without(input_ids, segment_ids).numpy(), without(input_ids, 1 - segment_ids).numpy())
    assert ElectraEmbeddings.from_config(without.get_config()).token_type_embeddings is None


@pytest.mark.parametrize("format", ["hf", "tf1", "ours"])
@pytest.mark.parametrize("kind", ["discriminator", "pretrainer"])
def test_round_trip_through_every_format_keeps_no_table(kind, format, tmp_path, vocab_file):
    model = tiny_model(kind, config=NO_TOKEN_TYPES, seed=7)
    path = str(tmp_path / ("model.ckpt" if format == "tf1" else "model"))
    written = save_checkpoint(model, path, format, vocab_file=vocab_file)
    loaded = load_checkpoint(written, kind, num_heads=NUM_HEADS)
    assert loaded.model.electra_config.type_vocab_size == 0
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))


def test_formats_with_a_fixed_table_receive_zeros(tmp_path, vocab_file):
    import json

    import keras_hub

    model = tiny_model("discriminator", config=NO_TOKEN_TYPES, seed=8)
    save_checkpoint(model, str(tmp_path / "hf"), "hf", vocab_file=vocab_file)
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["type_vocab_size"] == 2
    save_checkpoint(model, str(tmp_path / "kh"), "keras_hub")
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(tmp_path / "kh"))
    np.testing.assert_array_equal(backbone.segment_embedding.embeddings.numpy(), np.zeros((2, 16)))
    loaded = load_checkpoint(str(tmp_path / "kh"), "discriminator", vocab_file=vocab_file, allow_missing_head=True)
    assert loaded.model.electra_config.type_vocab_size == 0


def test_trained_token_type_rows_do_not_go_into_a_block_without_a_table():
    block = ElectraEmbeddings(50, 16, max_position_embeddings=16, type_vocab_size=0)
    block(*_ids())
    (slot,) = [slot for slot in embedding_slots(block) if slot.name == TOKEN_TYPE_NAME]
    slot.write(np.zeros((2, 16), np.float32))
    with pytest.raises(
        CheckpointError,
        match="holds trained rows, but the model has no token-type table "
        r"\(type_vocab_size=0\): build it with the checkpoint's type_vocab_size",
    ):
        slot.write(np.full((2, 16), 0.5, np.float32))


def test_type_vocab_size_must_be_a_non_negative_integer():
    assert ElectraConfig.from_preset("tiny", type_vocab_size=0).type_vocab_size == 0
    with pytest.raises(
        ConfigError,
        match=r"type_vocab_size must be an integer >= 0 \(0: no token-type table\), "
        "got -1",
    ):
        ElectraConfig.from_preset("tiny", type_vocab_size=-1)
