"""Turning text into the discriminator's fixed-size inputs, eagerly (NumPy) and in-graph (for SavedModels)."""

import numpy as np
import tensorflow as tf


def pack_single_segments(ragged_ids, max_seq_length, cls_id, sep_id):
    """[CLS] tokens [SEP], truncated to `max_seq_length` and zero-padded, in-graph.

    Args:
        ragged_ids: int32 RaggedTensor [batch, (tokens)] of word-piece ids.

    Returns:
        dict of int32 [batch, max_seq_length] tensors `input_ids`, `input_mask`, `segment_ids`.
    """
    body = ragged_ids[:, :max_seq_length - 2]
    batch = body.nrows()
    cls = tf.fill([batch, 1], tf.cast(cls_id, body.dtype))
    sep = tf.fill([batch, 1], tf.cast(sep_id, body.dtype))
    packed = tf.concat([cls, body, sep], axis=1)
    input_ids = packed.to_tensor(default_value=0, shape=[None, max_seq_length])
    input_mask = tf.ones_like(packed).to_tensor(default_value=0, shape=[None, max_seq_length])
    return {"input_ids": tf.cast(input_ids, tf.int32), "input_mask": tf.cast(input_mask, tf.int32),
            "segment_ids": tf.zeros_like(input_ids, tf.int32)}


def encode_single_segments(tokenizer, texts, max_seq_length):
    """NumPy inputs for `texts` plus, per text, the number of word pieces kept and whether it was truncated."""
    pieces = tokenizer.tokenize(list(texts))
    features = {name: value.numpy() for name, value in
                pack_single_segments(pieces, max_seq_length, tokenizer.cls_id, tokenizer.sep_id).items()}
    lengths = pieces.row_lengths().numpy()
    kept = np.minimum(lengths, max_seq_length - 2)
    return features, kept, lengths > kept
