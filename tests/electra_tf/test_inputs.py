"""The one packer, `[CLS] A [SEP] (B [SEP])` with BERT's longest-first truncation, against BERT's per-example code."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf import inputs as inputs_lib
from electra_tf.inputs import encode_texts, longest_first_lengths, pack_segment_pairs, pack_single_segments
from tests.bert_layout import CLS, PAD, SEP, bert_encode, bert_truncate


def _as_lists(packed):
    return [packed[name].numpy().tolist() for name in ("input_ids", "input_mask", "segment_ids")]


def test_longest_first_lengths_equal_berts_loop_exhaustively():
    grid = np.array([(a, b) for a in range(22) for b in range(22)])
    for budget in range(30):
        keep_a, keep_b = longest_first_lengths(grid[:, 0], grid[:, 1], budget)
        expected = [tuple(map(len, bert_truncate(range(a), range(b), budget))) for a, b in grid]
        assert list(zip(keep_a.numpy().tolist(), keep_b.numpy().tolist())) == expected, budget


def test_pair_layout_by_hand():
    a = tf.ragged.constant([[11, 12, 13], [21, 22, 23, 24, 25, 26], [30, 31], []], dtype=tf.int32)
    b = tf.ragged.constant([[14, 15], [27, 28], [], [70]], dtype=tf.int32)
    ids, mask, segments = _as_lists(pack_segment_pairs(a, b, 10, cls_id=CLS, sep_id=SEP))
    assert ids == [
        [CLS, 11, 12, 13, SEP, 14, 15, SEP, PAD, PAD],
        # budget 7 for 6 + 2 tokens: the longer A loses its last token
        [CLS, 21, 22, 23, 24, 25, SEP, 27, 28, SEP],
        [CLS, 30, 31, SEP, SEP] + [PAD] * 5,
        [CLS, SEP, 70, SEP] + [PAD] * 6,
    ]
    assert mask == [[1] * 8 + [0] * 2, [1] * 10, [1] * 5 + [0] * 5, [1] * 4 + [0] * 6]
    assert segments == [
        [0] * 5 + [1] * 3 + [0] * 2,
        [0] * 7 + [1] * 3,
        [0] * 4 + [1] + [0] * 5,
        [0] * 2 + [1] * 2 + [0] * 6,
    ]


@pytest.mark.parametrize("pad_id", [0, 7])
def test_random_token_rows_equal_berts_per_example_layout(pad_id):
    rng = np.random.default_rng(0)
    rows_a = [rng.integers(1000, 2000, rng.integers(0, 40)).tolist() for _ in range(300)]
    rows_b = [rng.integers(2000, 3000, rng.integers(0, 40)).tolist() for _ in range(300)]
    ragged_a, ragged_b = (tf.ragged.constant(rows, dtype=tf.int32) for rows in (rows_a, rows_b))
    for max_seq_length in (5, 16, 64):
        pairs = _as_lists(pack_segment_pairs(ragged_a, ragged_b, max_seq_length, CLS, SEP, pad_id=pad_id))
        expected = [bert_encode(a, b, max_seq_length, pad_id) for a, b in zip(rows_a, rows_b)]
        assert pairs == [[row[part] for row in expected] for part in range(3)], max_seq_length
        singles = _as_lists(pack_single_segments(ragged_a, max_seq_length, CLS, SEP, pad_id=pad_id))
        expected = [bert_encode(a, None, max_seq_length, pad_id) for a in rows_a]
        assert singles == [[row[part] for row in expected] for part in range(3)], max_seq_length


def test_lengths_too_short_for_the_special_tokens_are_refused():
    rows = tf.ragged.constant([[5, 6]], dtype=tf.int32)
    with pytest.raises(ValueError, match=r"^max_seq_length must be at least 3 for \[CLS\] A \[SEP\], got 2$"):
        pack_single_segments(rows, 2, CLS, SEP)
    with pytest.raises(ValueError, match=r"^max_seq_length must be at least 5 for \[CLS\] A \[SEP\] B \[SEP\], got 4$"):
        pack_segment_pairs(rows, rows, 4, CLS, SEP)


def test_pack_segment_pairs_works_inside_tf_function():
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.int32)] * 2)
    def pack(a, b):
        return pack_segment_pairs(a, b, 6, cls_id=1, sep_id=2)["input_ids"]

    a = tf.ragged.constant([[5, 6, 7, 8]], dtype=tf.int32)
    b = tf.ragged.constant([[9, 10, 11]], dtype=tf.int32)
    assert pack(a, b).numpy().tolist() == [[1, 5, 6, 2, 9, 2]]


@pytest.fixture(scope="module")
def tokenizer(shared_data):
    from electra_tf.tokenizer import ElectraTokenizer

    return ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))


def test_encode_texts_packs_tokenised_pairs_in_chunks_as_in_one_call(tokenizer, monkeypatch):
    texts_a = [f"sentence number {i} is{' quite' * (i % 7)} long" for i in range(11)]
    texts_b = [f"and its partner{' again' * (i % 5)}" for i in range(11)]
    encoded = encode_texts(tokenizer, texts_a, texts_b, max_seq_length=12)
    for row, (text_a, text_b) in enumerate(zip(texts_a, texts_b)):
        tokens_a, tokens_b = (tokenizer.tokenize([text])[0].numpy().tolist() for text in (text_a, text_b))
        expected = bert_encode(tokens_a, tokens_b, 12, tokenizer.pad_id)
        assert [encoded[name][row].tolist() for name in ("input_ids", "input_mask", "segment_ids")] == list(expected)
    monkeypatch.setattr(inputs_lib, "ENCODING_CHUNK", 4)
    chunked = encode_texts(tokenizer, texts_a, texts_b, max_seq_length=12)
    single = encode_texts(tokenizer, texts_a, max_seq_length=12)
    monkeypatch.setattr(inputs_lib, "ENCODING_CHUNK", 100)
    for name in encoded:
        np.testing.assert_array_equal(chunked[name], encoded[name], err_msg=name)
        assert chunked[name].dtype == np.int32
        np.testing.assert_array_equal(single[name], encode_texts(tokenizer, texts_a, None, 12)[name], err_msg=name)
    assert not single["segment_ids"].any()
    assert {name: value.shape for name, value in encode_texts(tokenizer, [], None, 12).items()} == {
        "input_ids": (0, 12),
        "input_mask": (0, 12),
        "segment_ids": (0, 12),
    }
    with pytest.raises(ValueError, match=r"^texts_b has 2 texts for the 11 of texts_a$"):
        encode_texts(tokenizer, texts_a, texts_b[:2], 12)
