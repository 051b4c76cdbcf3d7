"""The official SQuAD evaluation: exact match and F1 after answer normalisation (v1.1), plus for 2.0 the
HasAns/NoAns split, the no-answer probability threshold and the best-threshold search (`find_best_thresh`).

Written to give the official scripts' numbers (evaluate-v1.1.py, evaluate-v2.0.py); the differences in wording are
only in how missing predictions are reported.
"""

import collections
import re
import string
import sys

from finetune.squad.readers import dataset_questions

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text):
    """Lower-case, drop ASCII punctuation, the articles a/an/the and extra whitespace (the official normalisation)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_tokens(text):
    return normalize_answer(text).split() if text else []


def exact_match(prediction, gold):
    return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_v1(prediction, gold):
    """v1.1's F1: 0 when nothing is shared (including an empty side)."""
    prediction_tokens, gold_tokens = normalize_answer(prediction).split(), normalize_answer(gold).split()
    return _overlap_f1(prediction_tokens, gold_tokens)


def f1_v2(prediction, gold):
    """v2.0's F1: an empty prediction or gold scores 1 only when both are empty."""
    prediction_tokens, gold_tokens = answer_tokens(prediction), answer_tokens(gold)
    if not prediction_tokens or not gold_tokens:
        return float(prediction_tokens == gold_tokens)
    return _overlap_f1(prediction_tokens, gold_tokens)


def _overlap_f1(prediction_tokens, gold_tokens):
    common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision, recall = num_same / len(prediction_tokens), num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def evaluate_v1(dataset_json, predictions):
    """{"exact_match", "f1"} in percent; a missing prediction scores 0 (as the official script)."""
    exact = f1 = total = 0
    for qa in dataset_questions(dataset_json):
        total += 1
        if qa["id"] not in predictions:
            print(f"Unanswered question {qa['id']} will receive score 0.", file=sys.stderr)
            continue
        golds = [answer["text"] for answer in qa["answers"]]
        prediction = predictions[qa["id"]]
        exact += max(exact_match(prediction, gold) for gold in golds)
        f1 += max(f1_v1(prediction, gold) for gold in golds)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def raw_scores_v2(dataset_json, predictions):
    """(exact, f1, has_answer) dicts by question id; questions without a prediction are left out (official)."""
    exact, f1, has_answer = {}, {}, {}
    for qa in dataset_questions(dataset_json):
        has_answer[qa["id"]] = bool(qa["answers"])
        if qa["id"] not in predictions:
            print(f"Missing prediction for {qa['id']}", file=sys.stderr)
            continue
        golds = [answer["text"] for answer in qa["answers"] if normalize_answer(answer["text"])] or [""]
        prediction = predictions[qa["id"]]
        exact[qa["id"]] = max(exact_match(prediction, gold) for gold in golds)
        f1[qa["id"]] = max(f1_v2(prediction, gold) for gold in golds)
    return exact, f1, has_answer


def apply_no_answer_threshold(scores, na_probs, has_answer, threshold):
    """A question whose no-answer probability exceeds `threshold` is predicted unanswerable: it scores 1 if it is."""
    return {qid: (float(not has_answer[qid]) if na_probs[qid] > threshold else score) for qid, score in scores.items()}


def _averages(exact, f1, qids=None):
    qids = list(exact) if qids is None else qids
    return {
        "exact": 100.0 * sum(exact[k] for k in qids) / len(qids),
        "f1": 100.0 * sum(f1[k] for k in qids) / len(qids),
        "total": len(qids),
    }


def find_best_threshold(predictions, scores, na_probs, has_answer):
    """(best score in percent, threshold) over thresholds at each question's no-answer probability, as the official
    `find_best_thresh`: start from predicting "no answer" everywhere and switch questions on in order of their
    no-answer probability."""
    current = best = sum(1 for qid in has_answer if not has_answer[qid])
    best_threshold = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        if has_answer[qid]:
            current += scores[qid]
        else:
            current += -1 if predictions[qid] else 0
        if current > best:
            best, best_threshold = current, na_probs[qid]
    return 100.0 * best / len(scores), best_threshold


def evaluate_v2(dataset_json, predictions, na_probs=None, na_prob_threshold=1.0):
    """The official v2.0 result dict (exact, f1, total, HasAns_*, NoAns_*, and best_* when `na_probs` is given)."""
    exact_raw, f1_raw, has_answer = raw_scores_v2(dataset_json, predictions)
    probabilities = na_probs if na_probs is not None else {qid: 0.0 for qid in predictions}
    exact = apply_no_answer_threshold(exact_raw, probabilities, has_answer, na_prob_threshold)
    f1 = apply_no_answer_threshold(f1_raw, probabilities, has_answer, na_prob_threshold)
    result = _averages(exact, f1)
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        # Only answered questions: the official script would crash on a missing one here.
        qids = [qid for qid, answerable in has_answer.items() if answerable == wanted and qid in exact]
        if qids:
            result.update({f"{prefix}_{key}": value for key, value in _averages(exact, f1, qids).items()})
    if na_probs is not None:
        result["best_exact"], result["best_exact_thresh"] = find_best_threshold(
            predictions, exact_raw, na_probs, has_answer
        )
        result["best_f1"], result["best_f1_thresh"] = find_best_threshold(predictions, f1_raw, na_probs, has_answer)
    return result
