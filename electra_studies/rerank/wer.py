"""Word error rate: the word-level edit distance over whitespace tokens of the lower-cased texts; a corpus's WER is its
summed errors over its summed reference words, in percent. Pure Python and NumPy (no TensorFlow)."""

import numpy as np


def words(text):
    """The whitespace tokens of `text`, lower-cased."""
    return text.lower().split()


def word_errors(reference, hypothesis):
    """(errors, reference words): the fewest substitutions, deletions and insertions of words turning `hypothesis`
    into `reference`, and the number of words of `reference`."""
    reference, hypothesis = words(reference), words(hypothesis)
    previous = list(range(len(hypothesis) + 1))  # distances from the empty reference prefix
    for i, reference_word in enumerate(reference, start=1):
        current = [i]
        for j, hypothesis_word in enumerate(hypothesis, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (reference_word != hypothesis_word))
            )
        previous = current
    return previous[-1], len(reference)


def corpus_wer(errors, reference_words):
    """WER in percent of utterances with `errors` and `reference_words` (sequences of the same length): summed errors
    over summed reference words. None when there is no reference word."""
    total = int(np.sum(reference_words))
    return None if total == 0 else 100.0 * float(np.sum(errors)) / total


def bootstrap_wer_difference(errors_a, errors_b, reference_words, resamples=1000, seed=0, confidence=0.95):
    """The corpus WER of choice `a` minus that of choice `b` on the same utterances (percentage points), with a
    paired bootstrap interval: `resamples` draws of as many utterances with replacement (the same draw for both
    choices, `seed`), the central `confidence` range of the differences. None when there is no reference word."""
    errors_a, errors_b, reference_words = (
        np.asarray(values, np.float64) for values in (errors_a, errors_b, reference_words)
    )
    if reference_words.sum() == 0:
        return None
    draws = np.random.default_rng(seed).integers(0, len(reference_words), (resamples, len(reference_words)))
    totals = reference_words[draws].sum(axis=1)
    differences = 100.0 * (errors_a[draws].sum(axis=1) - errors_b[draws].sum(axis=1)) / np.maximum(totals, 1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(differences[totals > 0], [tail, 1.0 - tail])
    return {
        "difference": corpus_wer(errors_a, reference_words) - corpus_wer(errors_b, reference_words),
        "low": float(low),
        "high": float(high),
        "resamples": resamples,
        "confidence": confidence,
        "seed": seed,
    }
