"""Which scorers a checkpoint serves: an ELECTRA run gives the discriminator's scores and its generator's
pseudo-log-likelihood, an Electric run its one-pass score only (its discriminator gives energies, and its cloze model
is no masked LM), and a named scorer the checkpoint cannot serve is an error naming both."""

import dataclasses

import pytest

from electra_studies.rerank.rerank import load_models
from electra_studies.rerank.scorers import score
from electra_tf.errors import CheckpointError
from electra_tf.models import save_checkpoint
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import TINY, tiny_model


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("runs")
    vocab_file = fixtures.write_vocab(directory / "vocab.txt")
    for name, config in (("electra", TINY), ("electric", dataclasses.replace(TINY, objective="electric"))):
        save_checkpoint(tiny_model("pretrainer", config, seed=4), str(directory / name), "ours", vocab_file=vocab_file)
    return directory


def test_an_electra_run_serves_every_scorer_but_electric(runs):
    models, chosen, skipped = load_models(str(runs / "electra"), None)
    assert chosen == ["disc_mean", "disc_sum", "pll"] and sorted(models) == ["discriminator", "generator"]
    assert skipped == {
        "electric": f"{runs / 'electra'} holds no Electric model (it was pre-trained with objective=electra)"
    }


def test_an_electric_run_serves_its_one_pass_score_only(runs):
    path = str(runs / "electric")
    models, chosen, skipped = load_models(path, None)
    assert chosen == ["electric"] and list(models) == ["electric"]
    energies = (
        f"{path} holds an Electric model: its discriminator gives energies, not replaced-token probabilities "
        "(score it with electric)"
    )
    assert skipped["disc_mean"] == skipped["disc_sum"] == energies
    assert "two-tower cloze generator" in skipped["pll"]
    model, tokenizer = models["electric"]
    values, cost = score("electric", model, tokenizer, ["a b", "a b", ""], max_seq_length=16, batch_size=2)
    assert values["electric"].shape == (3,) and values["electric"][0] == pytest.approx(values["electric"][1], rel=1e-5)
    assert values["electric"][2] == 0.0 and cost["forward_passes_per_hypothesis"] == 1.0
    with pytest.raises(CheckpointError, match=r"^scorers=pll needs the checkpoint's generator: .*two-tower"):
        load_models(path, ["pll"])
