"""Tagging metrics (in percent): span F1 by conlleval's rules, word accuracy, and error-detection precision, recall
and F0.5.

Spans follow conlleval.pl (CoNLL-2000's scorer): a tag is `<prefix>-<type>` (or `O`); a chunk starts and ends where
conlleval's `startOfChunk` / `endOfChunk` say, which reads IOB1 and IOB2 alike (and IOE), and also opens a chunk at an
`I-` after `O` or after another type. IOBES's `S-` is not one of conlleval's tags: convert such files to IOB2 first.
Sentences are scored independently (conlleval ends every chunk at a blank line). A predicted chunk is correct when a
gold chunk has the same type, start and end.
"""

import collections

OUTSIDE = "O"


def _split(tag):
    """conlleval's reading of a tag: the part before the first hyphen, and the type after it ("" without one)."""
    prefix, _, kind = tag.partition("-")
    return prefix, kind


def _starts(previous, previous_type, prefix, kind):
    """conlleval.pl's startOfChunk."""
    if (previous, prefix) in {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}:
        return True
    if prefix not in ("O", ".") and previous_type != kind:
        return True
    return prefix in ("[", "]")


def _ends(previous, previous_type, prefix, kind):
    """conlleval.pl's endOfChunk."""
    if (previous, prefix) in {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}:
        return True
    if previous not in ("O", ".") and previous_type != kind:
        return True
    return previous in ("[", "]")


def spans(tags):
    """(type, first word, last word + 1) of each chunk of one sentence's tags, by conlleval's rules."""
    found, previous, previous_type, start, start_type = [], OUTSIDE, "", None, ""
    for index, tag in enumerate(list(tags) + [OUTSIDE]):
        prefix, kind = _split(tag)
        starts = _starts(previous, previous_type, prefix, kind)
        # conlleval counts every start as a chunk, so a start also closes a chunk its end rules left open.
        if start is not None and (starts or _ends(previous, previous_type, prefix, kind)):
            found.append((start_type, start, index))
            start = None
        if starts:
            start, start_type = index, kind
        previous, previous_type = prefix, kind
    return found


def span_counts(gold_sentences, predicted_sentences):
    """{chunk type: [correct, predicted, gold] chunk counts}, as conlleval counts them."""
    _check_aligned(gold_sentences, predicted_sentences)
    counts = collections.defaultdict(lambda: [0, 0, 0])
    for gold, predicted in zip(gold_sentences, predicted_sentences):
        gold_spans, predicted_spans = set(spans(gold)), set(spans(predicted))
        for kind, _, _ in gold_spans:
            counts[kind][2] += 1
        for kind, start, end in predicted_spans:
            counts[kind][1] += 1
            counts[kind][0] += (kind, start, end) in gold_spans
    return dict(counts)


def span_f1(gold_sentences, predicted_sentences, chunk_type=None):
    """conlleval's overall precision, recall and F1 (FB1) in percent (of `chunk_type` only, when given)."""
    counts = span_counts(gold_sentences, predicted_sentences)
    if chunk_type is not None:
        return prf(*counts.get(chunk_type, (0, 0, 0)))
    return prf(*[sum(values[i] for values in counts.values()) for i in range(3)])


def prf(correct, predicted, gold):
    """Precision, recall and F1 in percent from counts; each 0 when its denominator is."""
    precision = 100.0 * correct / predicted if predicted else 0.0
    recall = 100.0 * correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def token_accuracy(gold_sentences, predicted_sentences):
    """Percentage of words whose predicted tag is the gold one."""
    _check_aligned(gold_sentences, predicted_sentences)
    pairs = [(g, p) for gold, predicted in zip(gold_sentences, predicted_sentences) for g, p in zip(gold, predicted)]
    return 100.0 * sum(g == p for g, p in pairs) / len(pairs) if pairs else 0.0


def binary_detection_scores(gold_sentences, predicted_sentences, positive="i", beta=0.5):
    """Precision, recall and F_beta (F0.5, the error-detection literature's measure) of the `positive` class, in
    percent; each is 0 when its denominator is (no prediction or no gold word of the class)."""
    _check_aligned(gold_sentences, predicted_sentences)
    pairs = [
        (g == positive, p == positive)
        for gold, predicted in zip(gold_sentences, predicted_sentences)
        for g, p in zip(gold, predicted)
    ]
    true_positives = sum(g and p for g, p in pairs)
    predicted, actual = sum(p for _, p in pairs), sum(g for g, _ in pairs)
    precision = 100.0 * true_positives / predicted if predicted else 0.0
    recall = 100.0 * true_positives / actual if actual else 0.0
    weight = beta * beta
    denominator = weight * precision + recall
    f_beta = (1 + weight) * precision * recall / denominator if denominator else 0.0
    return {"precision": precision, "recall": recall, f"f{str(beta).replace('.', '_')}": f_beta}


def _check_aligned(gold_sentences, predicted_sentences):
    if len(gold_sentences) != len(predicted_sentences) or any(
        len(gold) != len(predicted) for gold, predicted in zip(gold_sentences, predicted_sentences)
    ):
        raise ValueError("gold and predicted tags must have the same sentences and words")
