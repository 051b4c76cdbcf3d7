"""Model outputs -> text answers: n-best spans per question across its windows, null-score handling for 2.0, and
the official output files (predictions, n-best and null odds JSON).

Both heads reduce to candidate spans per window (start token, end token, start score, end score); a candidate is
kept when both ends are context tokens, end >= start, it spans at most `max_answer_length` tokens and its start is
"max context" in that window (BERT's rules). Candidate filtering and ranking are vectorised over all windows; only
the final per-question n-best (a few dozen entries each) is built in Python. Answer text is the context's raw
characters between the start token's first and the end token's last character.
"""

import dataclasses
import os
from typing import Dict, List, Optional

import numpy as np

from electra_tf.io_utils import atomic_write_json

N_BEST_SIZE = 20
MAX_ANSWER_LENGTH = 30
PREDICTIONS_FILE = "predictions.json"
NBEST_FILE = "nbest_predictions.json"
NULL_ODDS_FILE = "null_odds.json"


@dataclasses.dataclass
class SpanCandidates:
    """Candidate spans per window: int [num_features, C] token positions and float [C] scores; `null_score` [F]
    is each window's "no answer" score (None for SQuAD 1.1)."""

    start_index: np.ndarray
    end_index: np.ndarray
    start_score: np.ndarray
    end_score: np.ndarray
    null_score: Optional[np.ndarray] = None
    # True: null_score is the answerability classifier's "impossible" logit, used as the null odds directly.
    null_is_classifier: bool = False


def top_k_pairs(start_logits, end_logits, k=N_BEST_SIZE):
    """Candidates of the independent start/end head: every pair of the k best starts and k best ends."""
    start_logits, end_logits = np.asarray(start_logits), np.asarray(end_logits)
    k = min(k, start_logits.shape[1])
    starts = np.argsort(-start_logits, axis=1, kind="stable")[:, :k]
    ends = np.argsort(-end_logits, axis=1, kind="stable")[:, :k]
    start_index = np.repeat(starts, k, axis=1)
    end_index = np.tile(ends, (1, k))
    return SpanCandidates(
        start_index,
        end_index,
        np.take_along_axis(start_logits, start_index, 1),
        np.take_along_axis(end_logits, end_index, 1),
        null_score=start_logits[:, 0] + end_logits[:, 0],
    )


def beam_pairs(start_top_log_probs, start_top_index, end_top_log_probs, end_top_index, impossible_logits=None):
    """Candidates of the joint head: each of the top starts with its own top ends ([F, k] and [F, k, k] inputs)."""
    start_top_log_probs, start_top_index = np.asarray(start_top_log_probs), np.asarray(start_top_index)
    end_top_log_probs, end_top_index = np.asarray(end_top_log_probs), np.asarray(end_top_index)
    num_features, k_start, k_end = end_top_index.shape
    return SpanCandidates(
        np.repeat(start_top_index, k_end, axis=1),
        end_top_index.reshape(num_features, -1),
        np.repeat(start_top_log_probs, k_end, axis=1),
        end_top_log_probs.reshape(num_features, -1),
        null_score=None if impossible_logits is None else np.asarray(impossible_logits).reshape(-1),
        null_is_classifier=impossible_logits is not None,
    )


@dataclasses.dataclass
class SquadPredictions:
    predictions: Dict[str, str]
    nbest: Dict[str, List[dict]]
    null_odds: Optional[Dict[str, float]] = None

    def write(self, directory):
        """predictions.json, nbest_predictions.json and (2.0) null_odds.json in `directory`, each atomically."""
        os.makedirs(directory, exist_ok=True)
        atomic_write_json(os.path.join(directory, PREDICTIONS_FILE), self.predictions)
        atomic_write_json(os.path.join(directory, NBEST_FILE), self.nbest)
        if self.null_odds is not None:
            atomic_write_json(os.path.join(directory, NULL_ODDS_FILE), self.null_odds)


def _valid(features, candidates, max_answer_length):
    rows = np.arange(len(features))[:, None]
    seq = features.token_char_start.shape[1]
    start, end = candidates.start_index, candidates.end_index
    in_range = (start >= 0) & (start < seq) & (end >= 0) & (end < seq)
    start, end = np.clip(start, 0, seq - 1), np.clip(end, 0, seq - 1)
    return (
        in_range
        & (features.token_char_start[rows, start] >= 0)
        & (features.token_char_start[rows, end] >= 0)
        & (end >= start)
        & (end - start + 1 <= max_answer_length)
        & features.token_is_max_context[rows, start]
    )


def _softmax(scores):
    exp = np.exp(np.asarray(scores, dtype=np.float64) - np.max(scores))
    return exp / exp.sum()


def postprocess(
    data, features, candidates, n_best_size=N_BEST_SIZE, max_answer_length=MAX_ANSWER_LENGTH, null_score_threshold=0.0
):
    """`SquadPredictions` for every question of `data` (a `readers.SquadData`) from its windows' candidates.

    For 2.0 (`data.is_v2`), a question's null score is the smallest over its windows; its null odds are that score
    minus the best span's score (or, with the answerability classifier, the classifier logit itself), and the
    prediction is "" when the null odds exceed `null_score_threshold`.
    """
    valid = _valid(features, candidates, max_answer_length)
    feature_rows, columns = np.nonzero(valid)
    question = features.question_index[feature_rows]
    start_score = candidates.start_score[feature_rows, columns].astype(np.float64)
    end_score = candidates.end_score[feature_rows, columns].astype(np.float64)
    score = start_score + end_score
    start_char = features.token_char_start[feature_rows, candidates.start_index[feature_rows, columns]]
    end_char = features.token_char_end[feature_rows, candidates.end_index[feature_rows, columns]]
    order = np.lexsort((-score, question))  # by question, best first
    boundaries = np.searchsorted(question[order], np.arange(len(data.questions) + 1))

    null_by_question = None
    if data.is_v2 and candidates.null_score is not None:
        null_by_question = np.full(len(data.questions), np.inf)
        np.minimum.at(null_by_question, features.question_index, candidates.null_score.astype(np.float64))

    result = SquadPredictions({}, {}, {} if data.is_v2 else None)
    for index, q in enumerate(data.questions):
        context = data.contexts[q.context_index]
        entries, seen = [], set()
        for position in order[boundaries[index] : boundaries[index + 1]]:
            text = context[start_char[position] : end_char[position]]
            if text in seen:
                continue
            seen.add(text)
            entries.append(
                {"text": text, "start_logit": float(start_score[position]), "end_logit": float(end_score[position])}
            )
            if len(entries) >= n_best_size:
                break
        best_span = entries[0] if entries else None
        if null_by_question is not None:
            null = float(null_by_question[index])
            if not candidates.null_is_classifier and "" not in seen:
                # BERT's null entry: the [CLS] span, ranked with the others by its score.
                entries.append({"text": "", "start_logit": null, "end_logit": 0.0})
                entries.sort(key=lambda entry: -(entry["start_logit"] + entry["end_logit"]))
                entries = entries[:n_best_size]
            if best_span is None:
                odds = np.inf
            elif candidates.null_is_classifier:
                odds = null
            else:
                odds = null - best_span["start_logit"] - best_span["end_logit"]
            result.null_odds[q.qas_id] = float(odds) if np.isfinite(odds) else 1e9
            prediction = "" if best_span is None or odds > null_score_threshold else best_span["text"]
        else:
            prediction = best_span["text"] if best_span else ""
        if not entries:
            entries = [{"text": "empty", "start_logit": 0.0, "end_logit": 0.0}]  # BERT's placeholder
        probabilities = _softmax([entry["start_logit"] + entry["end_logit"] for entry in entries])
        for entry, probability in zip(entries, probabilities):
            entry["probability"] = float(probability)
        result.predictions[q.qas_id] = prediction
        result.nbest[q.qas_id] = entries
    return result
