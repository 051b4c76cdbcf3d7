"""Switchboard disfluencies (markup read by hand-checked rules, turns paired by spelling, the summary recomputed with
scikit-learn), the generator's pseudo-log-likelihood on BLiMP, and the representation comparison (probe accuracies
recomputed from the per-word file, a model compared with itself, the lexical baseline counted independently)."""

import collections
import json
import os

import numpy as np
import pytest

from electra_studies.discriminator_analysis import disfluency
from electra_studies.discriminator_analysis.analysis import load_generator, run_analyses

SENTENCES = 30
PAIRS = 2
WORDS = 300


def test_markup_classes_follow_braces_brackets_and_the_interruption_point():
    spelled, classes = disfluency.markup_classes(
        "{D Well, } {F um, } [ I wouldn't, + {F uh, } I definitely wouldn't ] <laughter>. / [ [ a, + a ] + a ] cat -/"
    )
    words = ["well", "um", "i", "wouldnt", "uh", "i", "definitely", "wouldnt", "a", "a", "a", "cat"]
    assert spelled == "".join(words)
    expected = [
        "discourse_marker",
        "filled_pause",
        "reparandum",
        "reparandum",
        "filled_pause",
        "fluent",
        "fluent",
        "fluent",
        "reparandum",
        "reparandum",
        "fluent",
        "fluent",
    ]
    assert classes == [label for word, label in zip(words, expected) for _ in word]
    # A restart with an empty repair, an editing term, an unmatched "]" (a repair begun in an earlier turn).
    _, classes = disfluency.markup_classes("[ wh-, + ] {E I mean } rather ] than")
    assert classes == ["reparandum"] * 2 + ["editing_term"] * 5 + ["fluent"] * 10


def test_turns_are_paired_by_spelling_and_a_differently_spelled_turn_is_skipped(tmp_path):
    folder = tmp_path / "tagging" / "switchboard"
    folder.mkdir(parents=True)
    (folder / "tagged").write_text(
        "A.1: Uh/UH ,/, I/PRP ,/, I/PRP would/MD n't/RB ./.\n\n"
        "B.2: Yeah/UH ./.\n"
        "A.3: It/PRP 's/BES MUMBLEx/XX fine/JJ ./.\n"
        "B.4: So/RB ,/, uh/UH ./.\n",
        encoding="utf-8",
    )
    (folder / "disfluency").write_text(
        "\nA.1: {F Uh, } [ I, + I ] wouldn't. /\n"
        "A.3: It's (( )) fine <Laughter>. /\n"
        "B.4: {C So, } {F uh. } -/ and more\n",
        encoding="utf-8",
    )
    turns, unaligned = disfluency.read_switchboard(str(tmp_path))
    assert [(turn["turn"], turn["line"]) for turn in turns] == [("A.1", 1), ("A.3", 4)]
    assert unaligned == 2  # B.2 is missing from the markup, B.4 is spelled differently
    assert turns[0]["classes"] == ["filled_pause", None, "reparandum", None, "fluent", "fluent", "fluent", None]
    assert turns[1]["words"][2] == "MUMBLEx" and turns[1]["classes"] == ["fluent", "fluent", None, "fluent", None]


@pytest.fixture(scope="module")
def run_dir_analysis(pretrained_tiny, shared_data, tmp_path_factory):
    run_dir = os.path.dirname(pretrained_tiny)  # the pre-training run: discriminator and generator
    output_dir = tmp_path_factory.mktemp("disfluency_representations")
    results = run_analyses(
        run_dir,
        str(shared_data),
        str(output_dir),
        analyses=["pos", "blimp", "representations"],
        max_seq_length=32,
        max_sentences=SENTENCES,
        blimp_pairs_per_paradigm=PAIRS,
        bootstrap_resamples=20,
        compare_checkpoint=pretrained_tiny,
        representation_words=WORDS,
    )
    return results, output_dir


def _lines(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_disfluency_summary_recomputes_with_scikit_learn(run_dir_analysis):
    from sklearn.metrics import roc_auc_score

    results, output_dir = run_dir_analysis
    words = _lines(output_dir / "switchboard_words.jsonl")
    summary = results["disfluency"]
    assert summary["turns"] == SENTENCES == len({word["line"] for word in words})
    fluent = [word["p_replaced"] for word in words if word["disfluency"] == "fluent"]
    for name in ("filled_pause", "reparandum"):
        ours = [word["p_replaced"] for word in words if word["disfluency"] == name]
        entry = summary["by_class"][name]
        assert entry["words"] == len(ours) and entry["flagged_rate"] == pytest.approx(np.mean(np.array(ours) > 0.5))
        assert entry["auroc_vs_fluent"] == pytest.approx(
            roc_auc_score([1] * len(ours) + [0] * len(fluent), ours + fluent)
        )
    disfluent = [word["p_replaced"] for word in words if word["disfluency"] in disfluency.DISFLUENT]
    assert summary["disfluent"]["auroc_vs_fluent"] == pytest.approx(
        roc_auc_score([1] * len(disfluent) + [0] * len(fluent), disfluent + fluent)
    )
    assert all(word["disfluency"] is None for word in words if word["word"] in (",", "."))
    assert "## Switchboard disfluencies" in (output_dir / "report.md").read_text()


def test_blimp_pseudo_log_likelihoods_are_the_generator_s_and_recompute(run_dir_analysis, pretrained_tiny, shared_data):
    from electra_tf.scoring import load_scorer, pseudo_log_likelihoods

    results, output_dir = run_dir_analysis
    pairs = _lines(output_dir / "blimp_pairs.jsonl")
    with open(shared_data / "blimp" / "adjunct_island.jsonl", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    generator = load_generator(os.path.dirname(pretrained_tiny))
    _, tokenizer = load_scorer(pretrained_tiny)
    expected = pseudo_log_likelihoods(generator, tokenizer, [first["sentence_good"], first["sentence_bad"]], 32)
    assert (pairs[0]["pll_good"], pairs[0]["pll_bad"]) == pytest.approx(tuple(expected), rel=1e-5)
    wins = collections.defaultdict(list)
    for pair in pairs:
        wins[pair["paradigm"]].append(pair["pll_good"] > pair["pll_bad"])
    assert results["blimp"]["by_paradigm_pll"] == {name: np.mean(values) for name, values in wins.items()}
    assert results["blimp"]["accuracy_pll"] == pytest.approx(np.mean(sum(wins.values(), [])))


def test_probe_accuracies_recompute_and_a_model_matches_itself(run_dir_analysis):
    results, output_dir = run_dir_analysis
    values = results["representations"]
    predictions = _lines(output_dir / "probe_predictions.jsonl")
    hits = collections.defaultdict(list)
    for record in predictions:
        hits[record["model"], record["layer"], record["corpus"]].append(record["tag"] == record["predicted"])
    assert {record["corpus"] for record in predictions} == {"ptb", "ewt"}
    for name in ("checkpoint", "compare"):
        assert len(values["by_model"][name]) == 3  # embeddings and the tiny preset's 2 layers
        for entry in values["by_model"][name]:
            for corpus, accuracy in entry["probe_accuracy"].items():
                assert accuracy == pytest.approx(np.mean(hits[name, entry["layer"], corpus]))
            assert -1 < entry["anisotropy"] < 1
    # The compared checkpoint is the same discriminator: the same states, probes and CKA.
    assert values["by_model"]["checkpoint"] == values["by_model"]["compare"]
    np.testing.assert_allclose(values["cka"]["checkpoint|compare"], values["cka"]["checkpoint|checkpoint"], atol=1e-6)
    np.testing.assert_allclose(np.diag(values["cka"]["checkpoint|compare"]), 1.0, atol=1e-6)
    for corpus, counts in values["words"].items():
        assert counts["train"] + counts["test"] <= WORDS
        assert counts["test"] == len(hits["checkpoint", 0, corpus])
    assert (output_dir / "representations_cka.png").stat().st_size > 1000


def test_the_lexical_baseline_counts_each_word_s_most_frequent_training_tag():
    from electra_studies.discriminator_analysis.representations import most_frequent_tag_accuracy

    train_words = ["the", "run", "run", "run", "dog", "the"]
    train_tags = ["DT", "VB", "NN", "VB", "NN", "DT"]
    # run -> VB (2 of 3), unseen "cat" -> DT (the most frequent tag overall, tied with others: first counted)
    test_words, test_tags = ["run", "the", "cat", "dog"], ["NN", "DT", "NN", "NN"]
    assert most_frequent_tag_accuracy(train_words, train_tags, test_words, test_tags) == pytest.approx(2 / 4)
