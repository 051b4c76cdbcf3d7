"""Tagging metrics against an independent transcription of conlleval.pl's counting, hand-checked cases, and F0.5."""

import numpy as np
import pytest

from finetune.tagging.metrics import binary_detection_scores, span_f1, spans, token_accuracy
from finetune.tagging.readers import read_conll


def conlleval(lines):
    """conlleval.pl's main loop, transcribed statement by statement (its own state machine: `inCorrect`, the last
    tags and types, chunk counting at starts): `lines` are (gold tag, guessed tag) pairs with None for a blank line.
    Returns (precision, recall, FB1) as its "accuracy ... FB1" summary line computes them."""

    def split(tag):
        if "-" in tag:
            prefix, kind = tag.split("-", 1)
            return prefix, kind
        return tag, ""

    def end_of_chunk(prev_tag, tag, prev_type, kind):
        chunk_end = False
        # One line per statement of conlleval.pl, as it reads.
        # fmt: off
        if prev_tag == "B" and tag == "B": chunk_end = True  # noqa: E701
        if prev_tag == "B" and tag == "O": chunk_end = True  # noqa: E701
        if prev_tag == "I" and tag == "B": chunk_end = True  # noqa: E701
        if prev_tag == "I" and tag == "O": chunk_end = True  # noqa: E701
        if prev_tag == "E" and tag == "E": chunk_end = True  # noqa: E701
        if prev_tag == "E" and tag == "I": chunk_end = True  # noqa: E701
        if prev_tag == "E" and tag == "O": chunk_end = True  # noqa: E701
        if prev_tag == "I" and tag == "O": chunk_end = True  # noqa: E701
        if prev_tag != "O" and prev_tag != "." and prev_type != kind: chunk_end = True  # noqa: E701
        if prev_tag == "]": chunk_end = True  # noqa: E701
        if prev_tag == "[": chunk_end = True  # noqa: E701
        # fmt: on
        return chunk_end

    def start_of_chunk(prev_tag, tag, prev_type, kind):
        chunk_start = False
        # fmt: off
        if prev_tag == "B" and tag == "B": chunk_start = True  # noqa: E701
        if prev_tag == "I" and tag == "B": chunk_start = True  # noqa: E701
        if prev_tag == "O" and tag == "B": chunk_start = True  # noqa: E701
        if prev_tag == "O" and tag == "I": chunk_start = True  # noqa: E701
        if prev_tag == "E" and tag == "E": chunk_start = True  # noqa: E701
        if prev_tag == "E" and tag == "I": chunk_start = True  # noqa: E701
        if prev_tag == "O" and tag == "E": chunk_start = True  # noqa: E701
        if prev_tag == "O" and tag == "I": chunk_start = True  # noqa: E701
        if tag != "O" and tag != "." and prev_type != kind: chunk_start = True  # noqa: E701
        if tag == "[": chunk_start = True  # noqa: E701
        if tag == "]": chunk_start = True  # noqa: E701
        # fmt: on
        return chunk_start

    correct_chunk = found_correct = found_guessed = 0
    in_correct = False
    last_correct, last_guessed, last_correct_type, last_guessed_type = "O", "O", "", ""
    for line in list(lines) + [None]:
        correct, guessed = ("O", "O") if line is None else line
        correct, correct_type = split(correct)
        guessed, guessed_type = split(guessed)
        if line is None:
            guessed = "O"
        if in_correct:
            correct_ends = end_of_chunk(last_correct, correct, last_correct_type, correct_type)
            guessed_ends = end_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
            if correct_ends and guessed_ends and last_guessed_type == last_correct_type:
                in_correct = False
                correct_chunk += 1
            elif correct_ends != guessed_ends or guessed_type != correct_type:
                in_correct = False
        correct_starts = start_of_chunk(last_correct, correct, last_correct_type, correct_type)
        guessed_starts = start_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
        if correct_starts and guessed_starts and guessed_type == correct_type:
            in_correct = True
        if correct_starts:
            found_correct += 1
        if guessed_starts:
            found_guessed += 1
        last_guessed, last_correct, last_guessed_type, last_correct_type = guessed, correct, guessed_type, correct_type
    if in_correct:
        correct_chunk += 1
    precision = 100 * correct_chunk / found_guessed if found_guessed > 0 else 0
    recall = 100 * correct_chunk / found_correct if found_correct > 0 else 0
    fb1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0
    return precision, recall, fb1


def _lines(gold_sentences, predicted_sentences):
    for gold, predicted in zip(gold_sentences, predicted_sentences):
        yield from zip(gold, predicted)
        yield None


def _assert_conlleval(gold, predicted):
    expected = conlleval(_lines(gold, predicted))
    actual = span_f1(gold, predicted)
    assert (actual["precision"], actual["recall"], actual["f1"]) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("alphabet", [("B", "I", "O"), ("B", "I", "E", "O"), ("I", "O"), ("B", "I", "O", ".")])
def test_span_f1_equals_conlleval_on_random_tag_sequences(alphabet):
    rng = np.random.default_rng(len(alphabet))
    types = ["NP", "VP", "PP"]

    def random_tags(length):
        tags = []
        for _ in range(length):
            prefix = alphabet[rng.integers(len(alphabet))]
            tags.append(prefix if prefix in ("O", ".") else f"{prefix}-{types[rng.integers(len(types))]}")
        return tags

    for _ in range(300):
        lengths = rng.integers(0, 12, size=rng.integers(1, 6))
        gold = [random_tags(length) for length in lengths]
        predicted = [
            random_tags(len(sentence))
            if rng.random() < 0.5
            else [tag if rng.random() < 0.8 else random_tags(1)[0] for tag in sentence]
            for sentence in gold
        ]
        _assert_conlleval(gold, predicted)


def test_span_f1_equals_conlleval_on_conll2000_with_perturbed_predictions(shared_data):
    sentences = read_conll(str(shared_data / "tagging" / "conll2000" / "test.txt"))
    gold = [list(sentence.tags) for sentence in sentences]
    tags = sorted({tag for sentence in gold for tag in sentence})
    rng = np.random.default_rng(0)
    predicted = [
        [tag if rng.random() > 0.1 else tags[rng.integers(len(tags))] for tag in sentence] for sentence in gold
    ]
    _assert_conlleval(gold, predicted)
    perfect = span_f1(gold, gold)
    assert perfect["f1"] == 100.0
    # CoNLL-2000 test has 23,852 chunks (the shared task's count).
    assert len([span for sentence in gold for span in spans(sentence)]) == 23852


def test_hand_checked_spans_and_scores():
    assert spans(["B-NP", "I-NP", "O", "I-VP", "B-VP", "I-NP"]) == [
        ("NP", 0, 2),
        ("VP", 3, 4),
        ("VP", 4, 5),
        ("NP", 5, 6),
    ]
    # IOB1: I- opens a chunk after O or another type; B- only separates two chunks of one type.
    assert spans(["I-PER", "I-PER", "B-PER", "I-LOC", "O"]) == [("PER", 0, 2), ("PER", 2, 3), ("LOC", 3, 4)]
    gold, predicted = [["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "O", "O", "B-VP"]]
    # Gold chunks NP[0,2) VP[3,4); predicted NP[0,1) VP[3,4): one of two correct either way.
    assert span_f1(gold, predicted) == {"precision": 50.0, "recall": 50.0, "f1": 50.0}
    assert span_f1(gold, predicted, chunk_type="VP")["f1"] == 100.0
    assert token_accuracy(gold, predicted) == 75.0


def test_error_detection_precision_recall_and_f0_5():
    gold = [["c", "i", "i", "c"], ["i", "c"]]
    predicted = [["i", "i", "c", "c"], ["i", "c"]]
    # i: 2 true positives, 3 predicted, 3 gold -> P = R = 2/3; F0.5 = 1.25 P R / (0.25 P + R) = 2/3.
    scores = binary_detection_scores(gold, predicted)
    assert scores == pytest.approx({"precision": 200 / 3, "recall": 200 / 3, "f0_5": 200 / 3})
    skewed = binary_detection_scores([["i", "i", "i", "i"]], [["i", "c", "c", "c"]])
    # P = 1, R = 1/4: F0.5 = 1.25 x 0.25 / (0.25 + 0.25) = 0.625, precision weighted over recall.
    assert skewed["f0_5"] == pytest.approx(62.5)
    assert binary_detection_scores([["c"]], [["c"]]) == {"precision": 0.0, "recall": 0.0, "f0_5": 0.0}
    with pytest.raises(ValueError, match="same sentences and words"):
        token_accuracy([["c"]], [["c", "c"]])
