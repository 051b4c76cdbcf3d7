"""Post-processing: spans back to raw text, n-best across windows, the 2.0 null score and threshold (the
prediction side of the no-answer threshold), and the official output files."""

import json

import numpy as np
import pytest

from finetune.squad.features import featurize
from finetune.squad.postprocess import beam_pairs, postprocess, top_k_pairs
from finetune.squad.readers import SquadData, SquadQuestion

CONTEXT = "Alpha beta, gamma delta."  # tokens: alpha beta , gamma delta .  -> positions 4..9 after [CLS] x ? [SEP]


@pytest.fixture(scope="module")
def tokenizer(shared_data):
    from electra_tf.tokenizer import ElectraTokenizer

    return ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))


def _setup(tokenizer, version="2.0", max_seq_length=16, doc_stride=128):
    data = SquadData(version, [CONTEXT], [SquadQuestion("q", "x?", 0, is_impossible=True)])
    return data, featurize(data, tokenizer, max_seq_length=max_seq_length, doc_stride=doc_stride, max_query_length=4)


def _logits(features, starts, ends):
    start_logits = np.full(features.input_ids.shape, -5.0, np.float32)
    end_logits = np.full(features.input_ids.shape, -5.0, np.float32)
    for position, value in starts.items():
        start_logits[:, position] = value
    for position, value in ends.items():
        end_logits[:, position] = value
    return start_logits, end_logits


def test_null_score_against_best_span_and_threshold(tokenizer):
    data, features = _setup(tokenizer)
    # Null score 1 + 1 = 2; best span "beta, gamma" (5..7) scores 1.5 + 1.0 = 2.5: null odds -0.5.
    candidates = top_k_pairs(*_logits(features, {0: 1.0, 5: 1.5}, {0: 1.0, 7: 1.0}))
    result = postprocess(data, features, candidates)
    assert result.null_odds["q"] == pytest.approx(-0.5)
    assert result.predictions["q"] == "beta, gamma"  # the raw text, punctuation and case kept
    assert postprocess(data, features, candidates, null_score_threshold=-1.0).predictions["q"] == ""
    nbest = result.nbest["q"]
    assert [entry["text"] for entry in nbest[:2]] == ["beta, gamma", ""]  # the null entry ranks among the spans
    assert sum(entry["probability"] for entry in nbest) == pytest.approx(1.0)


def test_answerability_classifier_logit_is_the_null_odds(tokenizer):
    data, features = _setup(tokenizer)
    k = 3
    start_index = np.tile(np.array([[5, 4, 6]]), (len(features), 1))
    end_index = np.tile(np.array([[[7, 5, 6]] * k]), (len(features), 1, 1))
    log_probs = np.log(np.tile(np.array([[0.6, 0.3, 0.1]]), (len(features), 1)))
    end_log_probs = np.tile(log_probs[:, None], (1, k, 1))
    for impossible_logit, expected in ((0.7, ""), (-0.2, "beta, gamma")):
        candidates = beam_pairs(
            log_probs, start_index, end_log_probs, end_index, np.full(len(features), impossible_logit)
        )
        result = postprocess(data, features, candidates)
        assert result.null_odds["q"] == pytest.approx(impossible_logit)
        assert result.predictions["q"] == expected
        assert result.nbest["q"][0]["text"] == "beta, gamma"


def test_best_span_across_windows_and_smallest_null(tokenizer):
    # Windows of 10 - len("x ?") - 3 = 5 of the 6 context tokens, 2 apart: (0, 5) and (2, 4).
    data, features = _setup(tokenizer, max_seq_length=10, doc_stride=2)
    assert len(features) == 2
    start_logits, end_logits = _logits(features, {0: 3.0}, {0: 3.0})
    # The null score differs per window; the smallest counts.
    start_logits[1, 0] = -1.0
    # "delta" (last token) is a strong span only in the last window, where it is max context.
    last = len(features) - 1
    delta = int(np.nonzero(features.token_char_start[last] == CONTEXT.index("delta"))[0][0])
    start_logits[last, delta], end_logits[last, delta] = 4.0, 4.0
    result = postprocess(data, features, top_k_pairs(start_logits, end_logits))
    assert result.predictions["q"] == "delta"
    assert result.null_odds["q"] == pytest.approx((-1.0 + 3.0) - 8.0)


def test_invalid_spans_are_skipped(tokenizer):
    data, features = _setup(tokenizer, version="1.1")
    # Best raw pair ends before it starts, then one that starts in the question: the first valid one wins.
    candidates = top_k_pairs(*_logits(features, {7: 5.0, 1: 4.0, 4: 1.0}, {5: 5.0, 2: 4.0, 4: 1.0}))
    result = postprocess(data, features, candidates, max_answer_length=30)
    assert result.predictions["q"] == "Alpha beta"
    assert result.null_odds is None
    too_long = postprocess(data, features, top_k_pairs(*_logits(features, {4: 5.0}, {9: 5.0})), max_answer_length=3)
    assert too_long.predictions["q"] != "Alpha beta, gamma delta."


def test_official_files_are_written(tokenizer, tmp_path):
    data, features = _setup(tokenizer)
    result = postprocess(data, features, top_k_pairs(*_logits(features, {5: 1.0}, {5: 1.0})))
    result.write(str(tmp_path))
    assert json.loads((tmp_path / "predictions.json").read_text()) == result.predictions
    assert json.loads((tmp_path / "null_odds.json").read_text()) == result.null_odds
    assert json.loads((tmp_path / "nbest_predictions.json").read_text())["q"][0]["text"] == "beta"
