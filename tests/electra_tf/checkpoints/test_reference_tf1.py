"""A checkpoint written as the reference wrote it (tf.compat.v1 variables, Saver, Adam slots,
global_step) loads into our models and gives the outputs of the weights it was built from."""

import os

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.checkpoints.reference_tf1 import read_tf1_checkpoint
from electra_tf.models import backbone_inputs, load_checkpoint, save_checkpoint
from tests.electra_tf.checkpoints import fixtures, hf_reference

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def tf1_checkpoint(hf_pair, tmp_path_factory):
    """A reference pre-training checkpoint (electra/ + generator/ + both heads) built from the HF pair's arrays."""
    arrays = fixtures.tf1_arrays(hf_pair["discriminator"])
    arrays.update(fixtures.tf1_arrays(hf_pair["generator"], generator=True))
    directory = tmp_path_factory.mktemp("electra_small")
    prefix = fixtures.write_tf1_checkpoint(str(directory / "electra_small"), arrays)
    fixtures.write_vocab(directory / "vocab.txt")
    return prefix


def _real(values, features):
    return values[features["input_mask"].astype(bool)]


def test_reader_skips_adam_slots_and_global_step(tf1_checkpoint):
    stored = dict(tf.train.list_variables(tf1_checkpoint))
    assert "global_step" in stored and "electra/embeddings/word_embeddings/adam_m" in stored
    weights = read_tf1_checkpoint(tf1_checkpoint)
    assert not [name for name in weights if name.endswith(("adam_m", "adam_v")) or name == "global_step"]
    assert "generator_predictions/output_bias" in weights and "discriminator_predictions/dense_1/kernel" in weights


def test_discriminator_from_tf1_gives_the_outputs_of_its_weights(tf1_checkpoint, hf_pair):
    features = fixtures.batch()
    loaded = load_checkpoint(tf1_checkpoint, "discriminator", num_heads=2)
    assert loaded.model.electra_config.hidden_size == 32 and loaded.model.electra_config.embedding_size == 16
    expected = hf_reference.electra_for_pretraining_logits(
        hf_pair["discriminator"],
        hf_pair["discriminator_config"],
        features["input_ids"],
        features["input_mask"],
        features["segment_ids"],
    )
    np.testing.assert_allclose(
        _real(np.asarray(loaded.model(backbone_inputs(features))), features),
        _real(expected, features),
        atol=TOLERANCE,
        rtol=0,
    )


def test_pretrainer_from_tf1_gives_the_outputs_of_its_weights(tf1_checkpoint, hf_pair):
    features = fixtures.batch(seed=5)
    pretrainer = load_checkpoint(tf1_checkpoint, num_heads=2).model  # both networks present: a pretrainer by default
    config = pretrainer.electra_config
    assert (config.generator_architecture().hidden_size, config.generator_architecture().num_layers) == (8, 2)
    batch, length = features["input_ids"].shape
    positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
    mlm = np.asarray(pretrainer.generator(dict(backbone_inputs(features), mask_positions=positions)))
    expected_mlm = hf_reference.electra_for_masked_lm_logits(
        hf_pair["generator"],
        hf_pair["generator_config"],
        features["input_ids"],
        features["input_mask"],
        features["segment_ids"],
    )
    np.testing.assert_allclose(_real(mlm, features), _real(expected_mlm, features), atol=TOLERANCE, rtol=0)
    disc = np.asarray(pretrainer.discriminator(backbone_inputs(features)))
    expected_disc = hf_reference.electra_for_pretraining_logits(
        hf_pair["discriminator"],
        hf_pair["discriminator_config"],
        features["input_ids"],
        features["input_mask"],
        features["segment_ids"],
    )
    np.testing.assert_allclose(_real(disc, features), _real(expected_disc, features), atol=TOLERANCE, rtol=0)


def test_written_tf1_checkpoint_has_exactly_the_reference_names(tf1_checkpoint, tmp_path):
    pretrainer = load_checkpoint(tf1_checkpoint, "pretrainer", num_heads=2).model
    prefix = save_checkpoint(pretrainer, str(tmp_path / "out" / "model.ckpt"), "tf1")
    written = dict(tf.train.list_variables(prefix))
    original = {
        name: shape
        for name, shape in tf.train.list_variables(tf1_checkpoint)
        if name != "global_step" and not name.endswith(("/adam_m", "/adam_v"))
    }
    assert written == original
    reader = tf.train.load_checkpoint(prefix)
    for name in original:
        np.testing.assert_array_equal(reader.get_tensor(name), tf.train.load_variable(tf1_checkpoint, name))
    assert tf.train.latest_checkpoint(os.path.dirname(prefix)) == prefix
