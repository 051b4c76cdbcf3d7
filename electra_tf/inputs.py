"""Turning text into the discriminator's fixed-size inputs: `[CLS] A [SEP] (B [SEP])`, segment ids, mask, padding.

One packer for every path: the Keras preprocessors and the SavedModels run it in-graph, and the fine-tuning data and
the scorer call it eagerly through `encode_texts` / `encode_single_segments`.
"""

import numpy as np
import tensorflow as tf

# Texts tokenised and packed per call of `encode_texts`: bounds the ragged tensors' memory on large tasks (QQP, MNLI).
ENCODING_CHUNK = 8192


def pack_single_segments(ragged_ids, max_seq_length, cls_id, sep_id, pad_id=0):
    """[CLS] tokens [SEP], the first `max_seq_length - 2` tokens kept, padded with `pad_id`, in-graph.

    Args:
        ragged_ids: int32 RaggedTensor [batch, (tokens)] of word-piece ids.

    Returns:
        dict of int32 [batch, max_seq_length] tensors `input_ids`, `input_mask`, `segment_ids`.
    """
    if max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3 for [CLS] A [SEP], got {max_seq_length}")
    body = ragged_ids[:, : max_seq_length - 2]
    batch = body.nrows()
    cls = tf.fill([batch, 1], tf.cast(cls_id, body.dtype))
    sep = tf.fill([batch, 1], tf.cast(sep_id, body.dtype))
    packed = tf.concat([cls, body, sep], axis=1)
    input_ids = packed.to_tensor(default_value=tf.cast(pad_id, packed.dtype), shape=[None, max_seq_length])
    input_mask = tf.ones_like(packed).to_tensor(default_value=0, shape=[None, max_seq_length])
    return {
        "input_ids": tf.cast(input_ids, tf.int32),
        "input_mask": tf.cast(input_mask, tf.int32),
        "segment_ids": tf.zeros_like(input_ids, tf.int32),
    }


def encode_single_segments(tokenizer, texts, max_seq_length):
    """NumPy inputs for `texts` plus, per text, the number of word pieces kept and whether it was truncated."""
    pieces = tokenizer.tokenize(list(texts))
    features = {
        name: value.numpy()
        for name, value in pack_single_segments(pieces, max_seq_length, tokenizer.cls_id, tokenizer.sep_id).items()
    }
    lengths = pieces.row_lengths().numpy()
    kept = np.minimum(lengths, max_seq_length - 2)
    return features, kept, lengths > kept


def encode_texts(tokenizer, texts_a, texts_b=None, max_seq_length=128):
    """NumPy int32 [n, max_seq_length] `input_ids`, `input_mask`, `segment_ids` of single texts or of pairs.

    `texts_b` None packs `[CLS] A [SEP]`, else `[CLS] A [SEP] B [SEP]` with BERT's longest-first truncation; padding
    is `tokenizer.pad_id`. Texts go through `tokenizer.tokenize` and the packer `ENCODING_CHUNK` at a time.
    """
    texts_a = list(texts_a)
    texts_b = None if texts_b is None else list(texts_b)
    if texts_b is not None and len(texts_b) != len(texts_a):
        raise ValueError(f"texts_b has {len(texts_b)} texts for the {len(texts_a)} of texts_a")
    special_ids = {"cls_id": tokenizer.cls_id, "sep_id": tokenizer.sep_id, "pad_id": tokenizer.pad_id}
    chunks = []
    for start in range(0, max(len(texts_a), 1), ENCODING_CHUNK):
        ragged_a = tokenizer.tokenize(texts_a[start : start + ENCODING_CHUNK])
        if texts_b is None:
            packed = pack_single_segments(ragged_a, max_seq_length, **special_ids)
        else:
            ragged_b = tokenizer.tokenize(texts_b[start : start + ENCODING_CHUNK])
            packed = pack_segment_pairs(ragged_a, ragged_b, max_seq_length, **special_ids)
        chunks.append({name: value.numpy() for name, value in packed.items()})
    return {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}


def longest_first_lengths(length_a, length_b, max_tokens):
    """In-graph BERT `_truncate_seq_pair`: the lengths of A and B kept within a budget of `max_tokens`.

    Dropping the last token of the longer side (of B on ties) until the pair fits leaves A with
    max(ceil(budget / 2), budget - len(B)) tokens, never more than it had, and B with the rest of the budget; pairs
    that already fit are kept whole. `length_a`/`length_b` are int tensors [batch].
    """
    length_a, length_b = tf.cast(length_a, tf.int64), tf.cast(length_b, tf.int64)
    max_tokens = tf.cast(max_tokens, tf.int64)
    too_long = length_a + length_b > max_tokens
    keep_a = tf.minimum(length_a, tf.maximum((max_tokens + 1) // 2, max_tokens - length_b))
    return tf.where(too_long, keep_a, length_a), tf.where(too_long, max_tokens - keep_a, length_b)


def _ragged_prefixes(ragged, lengths):
    """The first lengths[i] items of each row of `ragged`."""
    positions = tf.ragged.range(ragged.row_lengths())
    return tf.ragged.boolean_mask(ragged, positions < tf.expand_dims(lengths, 1))


def pack_segment_pairs(ragged_a, ragged_b, max_seq_length, cls_id, sep_id, pad_id=0):
    """[CLS] A [SEP] B [SEP] with longest-first truncation and `pad_id` padding, in-graph (BERT's pair layout).

    Args:
        ragged_a, ragged_b: int32 RaggedTensors [batch, (tokens)] of word-piece ids of the first and second texts.

    Returns:
        dict of int32 [batch, max_seq_length] tensors `input_ids`, `input_mask`, `segment_ids` (1 on B and its [SEP]).
    """
    if max_seq_length < 5:
        raise ValueError(f"max_seq_length must be at least 5 for [CLS] A [SEP] B [SEP], got {max_seq_length}")
    keep_a, keep_b = longest_first_lengths(ragged_a.row_lengths(), ragged_b.row_lengths(), max_seq_length - 3)
    body_a, body_b = _ragged_prefixes(ragged_a, keep_a), _ragged_prefixes(ragged_b, keep_b)
    batch = body_a.nrows()
    cls = tf.fill([batch, 1], tf.cast(cls_id, body_a.dtype))
    sep = tf.fill([batch, 1], tf.cast(sep_id, body_a.dtype))
    first = tf.concat([cls, body_a, sep], axis=1)
    second = tf.concat([body_b, sep], axis=1)
    packed = tf.concat([first, second], axis=1)
    segments = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
    shape = [None, max_seq_length]
    return {
        "input_ids": tf.cast(packed.to_tensor(default_value=tf.cast(pad_id, packed.dtype), shape=shape), tf.int32),
        "input_mask": tf.cast(tf.ones_like(packed).to_tensor(default_value=0, shape=shape), tf.int32),
        "segment_ids": tf.cast(segments.to_tensor(default_value=0, shape=shape), tf.int32),
    }
