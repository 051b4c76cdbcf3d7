"""Choosing a hypothesis per utterance from a language-model score and the recogniser's evidence, with weights tuned
on the development half of a file.

combined = lm_weight * LM score + recogniser evidence + length_weight * words, where the recogniser evidence is the
hypothesis's score in the file when the utterance has scores, else its negated rank (0 for the first, -1, ...).
Utterances at even positions (0, 2, 4, ...) are the development half, those at odd positions the test half.
"""

import numpy as np

from electra_studies.rerank.wer import corpus_wer

# Scale-free grids: the scorers' and recognisers' scores differ by orders of magnitude from one another.
LM_WEIGHTS = (0.0, *np.round(10.0 ** np.arange(-3.0, 3.01, 0.25), 6))
LENGTH_WEIGHTS = (
    0.0,
    *(sign * weight for weight in np.round(10.0 ** np.arange(-3.0, 1.01, 0.5), 6) for sign in (1.0, -1.0)),
)


def development_half(count):
    """Positions of the development half: 0, 2, 4, ..."""
    return np.arange(0, count, 2)


def test_half(count):
    """Positions of the test half: 1, 3, 5, ..."""
    return np.arange(1, count, 2)


def padded(rows, fill):
    """A [utterances, longest list] float64 array of the ragged `rows`, `fill` past each row's end."""
    table = np.full((len(rows), max(len(row) for row in rows)), fill, np.float64)
    for index, row in enumerate(rows):
        table[index, : len(row)] = row
    return table


def recogniser_evidence(utterances):
    """Per utterance, its hypotheses' scores in the file where it has them, else their negated ranks."""
    return [
        list(utterance.scores) if utterance.scores is not None else [-rank for rank in range(len(utterance.hypotheses))]
        for utterance in utterances
    ]


def choose(lm_scores, evidence, lengths, lm_weight, length_weight):
    """The index per utterance of the hypothesis with the highest combined score (ties: the recogniser's earlier
    hypothesis). The arguments are `padded` tables; `evidence` holds -inf past each list's end (the others 0)."""
    return np.argmax(lm_weight * lm_scores + evidence + length_weight * lengths, axis=1)


def tune(lm_scores, evidence, lengths, errors, reference_words, lm_weights=LM_WEIGHTS, length_weights=LENGTH_WEIGHTS):
    """(lm_weight, length_weight, WER) of the grid point giving the lowest corpus WER of the chosen hypotheses on the
    utterances given (`errors` per hypothesis, a padded table); ties go to the smaller lm_weight, then to the
    length weight first in `length_weights` (nearest 0 in the default grid)."""
    rows = np.arange(len(reference_words))
    best = None
    for lm_weight in sorted(lm_weights):
        for length_weight in length_weights:
            chosen = choose(lm_scores, evidence, lengths, lm_weight, length_weight)
            wer = corpus_wer(errors[rows, chosen], reference_words)
            if best is None or (wer is not None and wer < best[2]):
                best = (float(lm_weight), float(length_weight), wer)
    return best
