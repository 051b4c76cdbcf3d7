"""The combination of scores, the development/test split and the tuning of electra-rerank."""

import numpy as np
import pytest

from electra_studies.rerank import combine
from electra_studies.rerank.nbest import Utterance


def test_the_halves_are_even_and_odd_positions():
    assert list(combine.development_half(7)) == [0, 2, 4, 6]
    assert list(combine.test_half(7)) == [1, 3, 5]
    assert list(combine.test_half(1)) == []


def test_evidence_is_the_file_score_else_the_negated_rank():
    utterances = [Utterance(0, ("a", "b", "c")), Utterance(1, ("a", "b"), scores=(-0.5, -0.25))]
    assert combine.recogniser_evidence(utterances) == [[0, -1, -2], [-0.5, -0.25]]


def test_ties_go_to_the_recognisers_earlier_hypothesis_and_short_lists_never_pick_padding():
    evidence = combine.padded([[0, -1, -2], [0, -1]], -np.inf)
    lm = combine.padded([[1.0, 2.0, 2.0], [5.0, 5.0]], 0.0)
    lengths = combine.padded([[3, 3, 3], [2, 2]], 0.0)
    assert list(combine.choose(lm, evidence, lengths, 1.0, 0.0)) == [0, 0]  # 1 = 2 - 1 ties with the first
    assert list(combine.choose(lm, evidence, lengths, 3.0, 0.0)) == [1, 0]  # combined 3, 5, 4 and 15, 14
    assert list(combine.choose(lm, evidence, lengths, 0.0, 10.0)) == [0, 0]  # lm weight 0 with padding stays finite


def test_tuning_finds_the_weight_that_the_construction_needs():
    # Each utterance: the first hypothesis is wrong (1 error), the second right; the LM prefers the second by a margin
    # of 0.01, and the recogniser by rank prefers the first by 1. Any lm_weight above 100 picks the second everywhere.
    count = 6
    lm = np.tile([[0.0, 0.01]], (count, 1))
    evidence = np.tile([[0.0, -1.0]], (count, 1))
    lengths = np.full((count, 2), 4.0)
    errors = np.tile([[1.0, 0.0]], (count, 1))
    words = np.full(count, 4.0)
    lm_weight, length_weight, wer = combine.tune(lm, evidence, lengths, errors, words)
    assert wer == 0.0 and length_weight == 0.0
    assert lm_weight == min(w for w in combine.LM_WEIGHTS if w * 0.01 > 1.0)
    # With no LM gain, the length term decides: the right hypothesis has one word more.
    lengths = np.tile([[4.0, 5.0]], (count, 1))
    lm_weight, length_weight, wer = combine.tune(np.zeros((count, 2)), evidence, lengths, errors, words)
    assert (lm_weight, wer) == (0.0, 0.0)
    assert length_weight == min(w for w in combine.LENGTH_WEIGHTS if w > 1.0)
    # Nothing to gain: the weights stay at 0 and the WER is the first hypothesis's.
    assert combine.tune(lm, evidence, lengths, np.zeros((count, 2)), words) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("weights", [(0.5,), (2.0, 3.0)])
def test_a_fixed_grid_is_searched_as_given(weights):
    lm = np.array([[0.0, 1.0]])
    result = combine.tune(
        lm,
        np.array([[0.0, -1.0]]),
        np.zeros((1, 2)),
        np.array([[1.0, 0.0]]),
        np.array([3.0]),
        lm_weights=weights,
        length_weights=(0.0,),
    )
    assert result[0] in weights
