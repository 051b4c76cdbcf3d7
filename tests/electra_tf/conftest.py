"""Checkpoint fixtures shared by the tests of `electra_tf`: a Hugging Face discriminator and generator pair, and the
vocabulary of `tests.electra_tf.checkpoints.fixtures`."""

import pytest

from tests.electra_tf.checkpoints import fixtures


@pytest.fixture(scope="module")
def hf_pair(tmp_path_factory):
    return fixtures.build_hf_pair(tmp_path_factory.mktemp("hf_pair"))


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    return fixtures.write_vocab(tmp_path_factory.mktemp("vocab") / "vocab.txt")
