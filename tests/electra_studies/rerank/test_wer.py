"""The WER of electra-rerank against an independent edit distance, and its paired bootstrap."""

import itertools

import numpy as np
import pytest

from electra_studies.rerank.wer import bootstrap_wer_difference, corpus_wer, word_errors


def edit_distance(reference, hypothesis):
    """Levenshtein distance over lists, by the full table (the textbook recurrence)."""
    table = np.zeros((len(reference) + 1, len(hypothesis) + 1), int)
    table[:, 0] = np.arange(len(reference) + 1)
    table[0, :] = np.arange(len(hypothesis) + 1)
    for i, j in itertools.product(range(1, len(reference) + 1), range(1, len(hypothesis) + 1)):
        table[i, j] = min(
            table[i - 1, j] + 1, table[i, j - 1] + 1, table[i - 1, j - 1] + (reference[i - 1] != hypothesis[j - 1])
        )
    return int(table[-1, -1])


PAIRS = [
    ("the cat sat on the mat", "the cat sat on the mat", 0),
    ("the cat sat on the mat", "the cat sat on mat", 1),  # deletion
    ("the cat sat on the mat", "the the cat sat on the mat", 1),  # insertion
    ("the cat sat on the mat", "the dog sat on the hat", 2),  # substitutions
    ("The Cat  sat\ton the mat", "the cat sat on the mat", 0),  # case and white space
    ("a b c d", "", 4),  # empty hypothesis
    ("", "a b", 2),  # empty reference
    ("", "", 0),
    ("a b c d e f", "b c x d e f g h", 4),
    ("saatchi officials said", "sachi official said the", 3),
]


@pytest.mark.parametrize("reference, hypothesis, expected", PAIRS)
def test_word_errors_equal_an_independent_edit_distance(reference, hypothesis, expected):
    errors, words = word_errors(reference, hypothesis)
    assert errors == expected == edit_distance(reference.lower().split(), hypothesis.lower().split())
    assert words == len(reference.split())


def test_random_texts_agree_with_the_table():
    rng = np.random.default_rng(3)
    vocabulary = ["a", "b", "c", "d"]
    for _ in range(200):
        reference = list(rng.choice(vocabulary, rng.integers(0, 9)))
        hypothesis = list(rng.choice(vocabulary, rng.integers(0, 9)))
        assert word_errors(" ".join(reference), " ".join(hypothesis)) == (
            edit_distance(reference, hypothesis),
            len(reference),
        )


def test_corpus_wer_is_summed_errors_over_summed_words():
    counted = [word_errors(reference, hypothesis) for reference, hypothesis, _ in PAIRS]
    errors, words = zip(*counted)
    assert corpus_wer(errors, words) == pytest.approx(100.0 * 17 / 43)
    assert corpus_wer([2], [0]) is None


def test_bootstrap_resamples_utterances_in_pairs():
    errors_a = np.array([0, 1, 0, 3, 2, 0])
    errors_b = np.array([1, 1, 2, 3, 2, 1])
    words = np.array([5, 4, 6, 7, 3, 5])
    result = bootstrap_wer_difference(errors_a, errors_b, words, resamples=500, seed=7)
    assert result["difference"] == pytest.approx(100.0 * (6 - 10) / 30)
    # The same draws, by a loop.
    draws = np.random.default_rng(7).integers(0, 6, (500, 6))
    loop = [100.0 * (errors_a[d].sum() - errors_b[d].sum()) / words[d].sum() for d in draws]
    assert (result["low"], result["high"]) == pytest.approx(tuple(np.quantile(loop, [0.025, 0.975])))
    assert result["high"] <= 0.0  # a is never worse on any utterance
    same = bootstrap_wer_difference(errors_a, errors_a, words, resamples=100)
    assert same["low"] == same["high"] == same["difference"] == 0.0
    assert bootstrap_wer_difference([1], [0], [0]) is None
