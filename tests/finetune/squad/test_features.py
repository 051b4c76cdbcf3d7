"""Featurisation: exact character <-> token alignment (unicode, accents, odd whitespace, answers inside words) and
BERT's sliding windows with max-context flags."""

import numpy as np
import pytest

from finetune.squad.features import byte_to_char_offsets, featurize, max_context_mask, window_starts
from finetune.squad.readers import SquadData, SquadQuestion


@pytest.fixture(scope="module")
def tokenizer(shared_data):
    from electra_tf.tokenizer import ElectraTokenizer

    return ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))


def _question(context, answer, qas_id="q", occurrence=0, question="what?"):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(answer, start + 1)
    return SquadQuestion(qas_id, question, 0, answer_text=answer, answer_start=start, gold_answers=(answer,))


def _token_texts(features, data, row):
    context = data.contexts[data.questions[features.question_index[row]].context_index]
    keep = features.token_char_start[row] >= 0
    return [context[s:e] for s, e in zip(features.token_char_start[row][keep], features.token_char_end[row][keep])]


def test_byte_offsets_become_character_offsets():
    text = "a€b😀c"  # 1-, 3- and 4-byte characters
    encoded = text.encode("utf-8")
    offsets = [encoded.index(ch.encode("utf-8")) for ch in text] + [len(encoded)]
    assert byte_to_char_offsets([text], [offsets])[0].tolist() == [0, 1, 2, 3, 4, 5]


def test_token_spans_are_the_raw_characters(tokenizer):
    context = "Café  Müller\u00a0scored 1,000\tgoals in São Paulo — naïvely!"
    data = SquadData("1.1", [context], [_question(context, "Müller")])
    features = featurize(data, tokenizer, max_seq_length=64, max_query_length=8)
    texts = _token_texts(features, data, 0)
    # Accented words keep their accents in the spans even though the tokens are stripped of them.
    assert texts[:3] == ["Café", "Müller", "scored"] or texts[:2] == ["Café", "Müller"]
    assert "São" in texts and "—" in texts
    assert "".join(texts) == "".join(context.split()).replace("\u00a0", "")
    row = 0
    start, end = features.start_positions[row], features.end_positions[row]
    assert context[features.token_char_start[row, start] : features.token_char_end[row, end]] == "Müller"


def test_answer_inside_word_pieces_maps_to_the_covering_pieces(tokenizer):
    context = "The unaffordable housingcrisis deepened."
    data = SquadData("1.1", [context], [_question(context, "affordable"), _question(context, "crisis", "q2")])
    features = featurize(data, tokenizer, max_seq_length=64, max_query_length=8)
    for row, covering in ((0, "unaffordable"), (1, "housingcrisis")):
        s, e = features.start_positions[row], features.end_positions[row]
        span = context[features.token_char_start[row, s] : features.token_char_end[row, e]]
        # The answer lies inside the span of whole word pieces that cover it.
        assert data.questions[row].answer_text in span and span in covering


def test_windows_follow_bert_and_each_token_is_max_context_once(tokenizer):
    words = [f"word{i % 7} alpha" for i in range(120)]
    context = " ".join(words)
    data = SquadData("1.1", [context], [_question(context, "word3 alpha", occurrence=10)])
    features = featurize(data, tokenizer, max_seq_length=48, doc_stride=16, max_query_length=8)
    assert len(features) > 3
    num_context_tokens = len(
        {
            (s, e)
            for row in range(len(features))
            for s, e in zip(features.token_char_start[row], features.token_char_end[row])
            if s >= 0
        }
    )
    max_context = features.token_is_max_context.sum()
    assert max_context == num_context_tokens  # every context token is max-context in exactly one window
    answer_rows = np.nonzero(features.is_impossible == 0)[0]
    assert len(answer_rows) >= 1
    for row in answer_rows:
        s, e = features.start_positions[row], features.end_positions[row]
        assert context[features.token_char_start[row, s] : features.token_char_end[row, e]] == "word3 alpha"
    # [CLS] question [SEP] context [SEP]; segment 1 covers the context and its [SEP].
    first = features.input_ids[0]
    assert first[0] == tokenizer.cls_id and tokenizer.sep_id in first[1:5]
    assert features.segment_ids[0].sum() == features.input_mask[0].sum() - 4  # [CLS] what ? [SEP]
    assert features.input_mask[0].sum() == 48


def test_window_starts_and_max_context_match_bert():
    assert window_starts(10, 4, 2) == [(0, 4), (2, 4), (4, 4), (6, 4)]
    assert window_starts(3, 4, 2) == [(0, 3)]
    spans = window_starts(10, 4, 2)
    mask = max_context_mask(spans, 10)
    # BERT: score = min(left, right) + 0.01 * length; token 3 is centred better in span (2, 4) than in (0, 4).
    assert mask[:, 3].tolist() == [False, True, False, False]
    assert mask.sum(axis=0).tolist() == [1] * 10


def test_unanswerable_and_out_of_window_point_at_cls(tokenizer):
    context = "alpha beta gamma delta"
    impossible = SquadQuestion("q", "x?", 0, is_impossible=True)
    features = featurize(SquadData("2.0", [context], [impossible]), tokenizer, max_seq_length=32, max_query_length=8)
    assert features.start_positions.tolist() == [0] and features.is_impossible.tolist() == [1]
