"""A pre-training run without the reference's layout (objective=mlm: one network, its masked-LM head on the shared
word table) still loads as every kind: the model itself, its network as a discriminator, and its network with the
masked-LM head as a stand-alone generator whose predictions are the run's own (what its pseudo-log-likelihood
needs)."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.checkpoints import collect_weights
from electra_tf.errors import CheckpointError
from electra_tf.models import load_checkpoint, save_checkpoint
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import TINY, tiny_model, variables_by_path

MLM = dataclasses.replace(TINY, objective="mlm")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("mlm_run")
    model = tiny_model("pretrainer", MLM, seed=5)
    save_checkpoint(model, str(directory / "run"), "ours", vocab_file=fixtures.write_vocab(directory / "vocab.txt"))
    return model, str(directory / "run")


def test_the_run_loads_as_itself_and_as_its_discriminator(run_dir):
    model, path = run_dir
    loaded = load_checkpoint(path)
    assert loaded.kind == "pretrainer" and loaded.model.electra_config == MLM
    fixtures.assert_identical(variables_by_path(model), variables_by_path(loaded.model))
    discriminator = load_checkpoint(path, "discriminator").model
    backbone = collect_weights(model.pretrained_discriminator(), "discriminator")
    for name, value in collect_weights(discriminator, "discriminator").items():
        assert np.array_equal(value, backbone[name]), name


def test_its_generator_is_the_network_with_its_masked_lm_head(run_dir):
    model, path = run_dir
    generator = load_checkpoint(path, "generator").model
    rng = np.random.default_rng(0)
    ids = rng.integers(5, TINY.vocab_size, (3, 12)).astype(np.int32)
    positions = np.array([[1, 4], [2, 7], [3, 10]], np.int32)
    ids[np.arange(3)[:, None], positions] = TINY.mask_id
    inputs = {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
    # The run's own prediction, written out: its network, then its head at the positions.
    sequence = model.discriminator.backbone(inputs)
    expected = model.model_mlm_head(sequence, tf.constant(positions))
    actual = generator({**inputs, "mask_positions": positions})
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_a_run_without_a_masked_lm_head_has_no_generator(tmp_path):
    untied = dataclasses.replace(TINY, untied_embeddings=True)
    save_checkpoint(
        tiny_model("pretrainer", untied),
        str(tmp_path / "run"),
        "ours",
        vocab_file=fixtures.write_vocab(tmp_path / "vocab.txt"),
    )
    with pytest.raises(CheckpointError, match=r"only a masked LM \(objective=mlm\) loads as a generator: load kind="):
        load_checkpoint(str(tmp_path / "run"), "generator")
