"""The metrics equal the official evaluation scripts (transcribed in `official_eval.py`) on
random predictions over the real dev questions, v1.1 and a derived v2.0 file; the no-answer threshold and the
best-threshold search behave as the official v2.0 script on crafted cases."""

import json

import numpy as np
import pytest

from finetune.squad import metrics
from tests.finetune.squad import official_eval
from tests.finetune.squad.squad_v2_data import make_v2


@pytest.fixture(scope="module")
def dev_json(shared_data):
    return json.loads((shared_data / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))


def _random_predictions(dataset_json, seed, missing_fraction=0.0):
    """Per question one of: a gold answer, a gold answer with case/punctuation/article noise, a random context
    span, part of a gold answer, the empty string, or unrelated words; some questions left unanswered."""
    rng = np.random.default_rng(seed)
    predictions = {}
    for article in dataset_json["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            for qa in paragraph["qas"]:
                if rng.random() < missing_fraction:
                    continue
                answers = qa["answers"] or qa.get("plausible_answers") or [{"text": "nothing"}]
                gold = answers[rng.integers(len(answers))]["text"]
                kind = rng.integers(6)
                if kind == 0:
                    text = gold
                elif kind == 1:
                    text = f"The {gold.upper()}." if rng.random() < 0.5 else f"  an {gold.lower()} !"
                elif kind == 2:
                    start = int(rng.integers(len(context)))
                    text = context[start : start + int(rng.integers(1, 60))]
                elif kind == 3:
                    words = gold.split()
                    text = " ".join(words[: max(1, len(words) // 2)] + ["extra"] * int(rng.integers(2)))
                elif kind == 4:
                    text = ""
                else:
                    text = "a the , ." if rng.random() < 0.3 else "unrelated words here"
                predictions[qa["id"]] = text
    return predictions


@pytest.mark.parametrize("seed", [0, 1])
def test_v1_metrics_equal_the_official_script(dev_json, seed, capsys):
    predictions = _random_predictions(dev_json, seed, missing_fraction=0.02)
    ours = metrics.evaluate_v1(dev_json, predictions)
    official = official_eval.v1_evaluate(dev_json["data"], predictions)
    print(f"v1.1 random predictions: {ours}")
    assert ours == pytest.approx(official, abs=1e-9)
    assert 10 < ours["exact_match"] < 60


@pytest.mark.parametrize("seed, with_na_probs, threshold", [(0, False, 1.0), (1, True, 1.0), (2, True, 0.5)])
def test_v2_metrics_equal_the_official_script(dev_json, seed, with_na_probs, threshold):
    dataset = make_v2(dev_json, seed=seed)
    predictions = _random_predictions(dataset, seed)
    na_probs = None
    if with_na_probs:
        rng = np.random.default_rng(seed + 100)
        # Rounded so that many questions share a probability: ties must resolve as in the official sort.
        na_probs = {qid: float(np.round(rng.random(), 2)) for qid in predictions}
    ours = metrics.evaluate_v2(dataset, predictions, na_probs, threshold)
    official = official_eval.v2_main(dataset["data"], predictions, na_probs, threshold)
    print(f"v2.0 random predictions: {dict(ours)}")
    assert list(ours) == list(official)  # same keys, same order as the official printout
    assert ours == pytest.approx(dict(official), abs=1e-9)


def test_normalisation_matches_the_official_one():
    for text in ["The  Denver Broncos!", "an apple", "A-ha: the 'best'", "théâtre, the", "", "  ", "Ångström."]:
        assert metrics.normalize_answer(text) == official_eval.normalize_answer(text)
        assert metrics.normalize_answer(text) == official_eval.v1_normalize_answer(text)
    assert metrics.normalize_answer("The  Denver Broncos!") == "denver broncos"


def _crafted_v2():
    """Four questions: q1, q2 answerable; q3, q4 not."""

    def qa(qid, answer):
        return {
            "id": qid,
            "question": "?",
            "answers": [{"text": answer, "answer_start": 0}] if answer else [],
            "is_impossible": not answer,
        }

    return {
        "version": "v2.0",
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": "alpha beta gamma",
                        "qas": [qa("q1", "alpha"), qa("q2", "beta gamma"), qa("q3", None), qa("q4", None)],
                    }
                ],
            }
        ],
    }


def test_best_threshold_search_on_crafted_cases():
    """Predictions with their no-answer probabilities; the best threshold keeps the answers that help.

    q1 right (p=0.1), q2 half right F1 (p=0.6), q3 wrongly answered (p=0.3), q4 rightly empty (p=0.9).
    Sorted by p: q1 (+1) q3 (-1) q2 (+F1 2/3, EM 0) q4 (0). Starting from 2 (both no-answer questions right):
    EM: 3 after q1 (thresh 0.1) is the best, 3/4 = 75; F1: 3 after q1, 2 after q3, 2.67 after q2 -> best 3 at 0.1.
    """
    dataset = _crafted_v2()
    predictions = {"q1": "alpha", "q2": "gamma", "q3": "alpha", "q4": ""}
    na_probs = {"q1": 0.1, "q2": 0.6, "q3": 0.3, "q4": 0.9}
    ours = metrics.evaluate_v2(dataset, predictions, na_probs)
    official = official_eval.v2_main(dataset["data"], predictions, na_probs)
    assert ours == pytest.approx(dict(official))
    assert ours["best_exact"] == pytest.approx(75.0) and ours["best_exact_thresh"] == pytest.approx(0.1)
    assert ours["best_f1"] == pytest.approx(75.0) and ours["best_f1_thresh"] == pytest.approx(0.1)
    # With the default threshold 1.0 nothing is forced to "no answer": q1 and q4 right, q2 and q3 wrong.
    assert ours["exact"] == pytest.approx(50.0) and ours["HasAns_exact"] == pytest.approx(50.0)
    assert ours["NoAns_exact"] == pytest.approx(50.0) and ours["HasAns_f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)

    # q2 fully right at p=0.6 and q3's wrong answer now at p=0.7: switching on q1 and q2 but not q3 is best, so the
    # best threshold is q2's 0.6 (100 %); a threshold of 0.5 forces q2 and q4 to "no answer": q2 loses its answer.
    predictions["q2"] = "beta gamma"
    na_probs["q3"] = 0.7
    ours = metrics.evaluate_v2(dataset, predictions, na_probs, na_prob_threshold=0.5)
    official = official_eval.v2_main(dataset["data"], predictions, na_probs, 0.5)
    assert ours == pytest.approx(dict(official))
    assert ours["best_exact"] == pytest.approx(100.0) and ours["best_exact_thresh"] == pytest.approx(0.6)
    assert ours["exact"] == pytest.approx(75.0)  # q1 right, q2 forced empty (wrong), q3 forced empty (right), q4 right

    # Nothing beats predicting "no answer" everywhere: the threshold stays at the official 0.0.
    wrong = {"q1": "beta", "q2": "alpha", "q3": "gamma", "q4": "beta"}
    ours = metrics.evaluate_v2(dataset, wrong, na_probs)
    assert ours["best_exact"] == pytest.approx(50.0) and ours["best_exact_thresh"] == 0.0
    assert ours == pytest.approx(dict(official_eval.v2_main(dataset["data"], wrong, na_probs)))


def test_empty_gold_and_prediction_scores_as_the_official_f1():
    assert metrics.f1_v2("", "") == official_eval.compute_f1("", "") == 1
    assert metrics.f1_v2("the", "") == official_eval.compute_f1("", "the") == 1  # both normalise to nothing
    assert metrics.f1_v2("alpha", "") == official_eval.compute_f1("", "alpha") == 0
    assert metrics.f1_v1("", "alpha") == official_eval.v1_f1_score("", "alpha") == 0
