"""In-graph packing of sentence pairs against the NumPy encoder of the GLUE features (BERT's layout and truncation)."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.inputs import longest_first_lengths, pack_segment_pairs
from finetune.glue.features import encode_token_ids, truncated_lengths


def test_longest_first_lengths_equal_the_numpy_rule_on_every_small_case():
    lengths = np.array([(a, b) for a in range(12) for b in range(12)])
    for budget in (2, 5, 9, 13):
        keep_a, keep_b = longest_first_lengths(lengths[:, 0], lengths[:, 1], budget)
        expected_a, expected_b = truncated_lengths(lengths[:, 0], lengths[:, 1], budget)
        np.testing.assert_array_equal(keep_a.numpy(), expected_a)
        np.testing.assert_array_equal(keep_b.numpy(), expected_b)


def _bert_truncate(a, b, budget):
    """BERT's _truncate_seq_pair, transcribed: drop the last token of the longer list (B on ties) until it fits."""
    a, b = list(a), list(b)
    while len(a) + len(b) > budget:
        (a if len(a) > len(b) else b).pop()
    return a, b


def test_pack_segment_pairs_matches_bert_on_hand_built_pairs():
    a = tf.ragged.constant([[10, 11, 12, 13, 14, 15], [20], [30, 31], []], dtype=tf.int32)
    b = tf.ragged.constant([[40, 41], [50, 51, 52, 53, 54, 55, 56], [60, 61], [70]], dtype=tf.int32)
    packed = pack_segment_pairs(a, b, 8, cls_id=1, sep_id=2)
    for row, (ids_a, ids_b) in enumerate(zip(a.to_list(), b.to_list())):
        kept_a, kept_b = _bert_truncate(ids_a, ids_b, 5)
        expected = [1] + kept_a + [2] + kept_b + [2]
        padding = 8 - len(expected)
        assert packed["input_ids"][row].numpy().tolist() == expected + [0] * padding
        assert packed["input_mask"][row].numpy().tolist() == [1] * len(expected) + [0] * padding
        assert packed["segment_ids"][row].numpy().tolist() == (
            [0] * (len(kept_a) + 2) + [1] * (len(kept_b) + 1) + [0] * padding
        )
    assert all(value.dtype == tf.int32 for value in packed.values())


@pytest.mark.parametrize("max_seq_length", [24, 128])
def test_pack_segment_pairs_equals_encode_token_ids_on_mrpc_dev(shared_data, max_seq_length):
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.glue.readers import read_tsv

    examples = read_tsv(str(shared_data / "glue" / "MRPC" / "dev.tsv"), "MRPC", "dev").examples
    tokenizer = ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))
    ragged_a = tokenizer.tokenize([example.text_a for example in examples])
    ragged_b = tokenizer.tokenize([example.text_b for example in examples])
    packed = pack_segment_pairs(ragged_a, ragged_b, max_seq_length, tokenizer.cls_id, tokenizer.sep_id)

    def numpy_ids(ragged):
        return ragged.flat_values.numpy(), ragged.row_lengths().numpy()

    expected = encode_token_ids(
        numpy_ids(ragged_a), numpy_ids(ragged_b), max_seq_length, tokenizer.cls_id, tokenizer.sep_id
    )
    for name, values in zip(("input_ids", "input_mask", "segment_ids"), expected):
        np.testing.assert_array_equal(packed[name].numpy(), values, err_msg=name)
    if max_seq_length == 24:
        assert (ragged_a.row_lengths() + ragged_b.row_lengths() > 21).numpy().mean() > 0.9, "truncation is exercised"


def test_pack_segment_pairs_works_inside_tf_function():
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.int32)] * 2)
    def pack(a, b):
        return pack_segment_pairs(a, b, 6, cls_id=1, sep_id=2)["input_ids"]

    a = tf.ragged.constant([[5, 6, 7, 8]], dtype=tf.int32)
    b = tf.ragged.constant([[9, 10, 11]], dtype=tf.int32)
    assert pack(a, b).numpy().tolist() == [[1, 5, 6, 2, 9, 2]]
