"""GLUE examples -> fixed-length model inputs: `[CLS] A [SEP] B [SEP]`, segment ids, mask, zero padding.

Pairs too long for `max_seq_length` are cut longest-first from the end, exactly as BERT's `_truncate_seq_pair`
(repeatedly drop the last token of the longer side, of B when equal); single sentences keep their first
`max_seq_length - 2` word pieces.
"""

import dataclasses

import numpy as np

from finetune.glue.tasks import glue_task_spec

# Texts tokenised per call: bounds the ragged tensors' memory on large tasks (QQP, MNLI).
_TOKENIZE_CHUNK = 8192


@dataclasses.dataclass
class GlueFeatures:
    """Encoded examples: int32 [n, max_seq_length] inputs and [n] labels.

    `label_ids` are int32 class ids (-1 when unlabelled) or, for STS-B, float32 scores (NaN when unlabelled).
    """

    input_ids: np.ndarray
    input_mask: np.ndarray
    segment_ids: np.ndarray
    label_ids: np.ndarray

    def inputs(self):
        """The model inputs: the backbone's `token_ids`, `segment_ids` and `padding_mask`."""
        return {"token_ids": self.input_ids, "segment_ids": self.segment_ids, "padding_mask": self.input_mask}

    def __len__(self):
        return len(self.label_ids)

    def is_labelled(self):
        """Whether every example has a label (a class id >= 0, or a score that is not NaN)."""
        labels = np.asarray(self.label_ids, np.float64)
        return bool(len(labels)) and bool(np.all(np.isfinite(labels) & (labels >= 0)))


def with_swapped_pairs(examples):
    """`examples` followed by each pair with A and B swapped (the reference's MRPC/STS-B train augmentation)."""
    if any(example.text_b is None for example in examples):
        raise ValueError("swapping needs sentence pairs; this task has single sentences")
    swapped = [
        dataclasses.replace(example, guid=f"{example.guid}-swapped", text_a=example.text_b, text_b=example.text_a)
        for example in examples
    ]
    return list(examples) + swapped


def truncated_lengths(length_a, length_b, max_tokens):
    """Lengths kept by BERT's longest-first `_truncate_seq_pair` for arrays of pair lengths and a token budget.

    Removing from the longer side until both are equal, then alternately from B and A, leaves A with
    max(ceil(budget / 2), budget - len(B)) tokens (never more than it had) and B with the rest of the budget.
    """
    length_a, length_b = np.asarray(length_a, dtype=np.int64), np.asarray(length_b, dtype=np.int64)
    too_long = length_a + length_b > max_tokens
    keep_a = np.minimum(length_a, np.maximum((max_tokens + 1) // 2, max_tokens - length_b))
    keep_b = max_tokens - keep_a
    return np.where(too_long, keep_a, length_a), np.where(too_long, keep_b, length_b)


def encode_token_ids(ids_a, ids_b, max_seq_length, cls_id, sep_id, pad_id=0):
    """Packs word-piece ids into `[CLS] A [SEP] (B [SEP])` rows of `max_seq_length`.

    `ids_a`/`ids_b` are (flat values, row lengths) pairs of numpy arrays; `ids_b` is None for single sentences.
    Returns (input_ids, input_mask, segment_ids), int32 [n, max_seq_length].
    """
    values_a, lengths_a = ids_a
    num_examples = len(lengths_a)
    if ids_b is None:
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3 for [CLS] A [SEP], got {max_seq_length}")
        keep_a, keep_b = np.minimum(lengths_a, max_seq_length - 2), np.zeros(num_examples, dtype=np.int64)
    else:
        if max_seq_length < 5:
            raise ValueError(f"max_seq_length must be at least 5 for [CLS] A [SEP] B [SEP], got {max_seq_length}")
        keep_a, keep_b = truncated_lengths(lengths_a, ids_b[1], max_seq_length - 3)
    input_ids = np.full((num_examples, max_seq_length), pad_id, dtype=np.int32)
    segment_ids = np.zeros((num_examples, max_seq_length), dtype=np.int32)
    rows = np.arange(num_examples)
    input_ids[:, 0] = cls_id
    _scatter_prefixes(input_ids, values_a, lengths_a, keep_a, first_column=np.ones(num_examples, dtype=np.int64))
    input_ids[rows, keep_a + 1] = sep_id
    used = keep_a + 2
    if ids_b is not None:
        _scatter_prefixes(input_ids, ids_b[0], ids_b[1], keep_b, first_column=used)
        input_ids[rows, used + keep_b] = sep_id
        columns = np.arange(max_seq_length)
        segment_ids[(columns >= used[:, None]) & (columns < (used + keep_b + 1)[:, None])] = 1
        used = used + keep_b + 1
    input_mask = (np.arange(max_seq_length)[None, :] < used[:, None]).astype(np.int32)
    return input_ids, input_mask, segment_ids


def _scatter_prefixes(target, values, lengths, keep, first_column):
    """Writes the first keep[i] ids of ragged row i into target[i, first_column[i]:]."""
    row_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    rows = np.repeat(np.arange(len(keep)), keep)
    offsets = np.arange(int(keep.sum())) - np.repeat(np.cumsum(keep) - keep, keep)
    target[rows, np.repeat(first_column, keep) + offsets] = values[np.repeat(row_starts, keep) + offsets]


def tokenize_to_numpy(tokenizer, texts):
    """(flat ids, row lengths) numpy arrays for `texts`, tokenised in chunks by `tokenizer.tokenize`."""
    values, lengths = [], []
    for start in range(0, len(texts), _TOKENIZE_CHUNK):
        ragged = tokenizer.tokenize(list(texts[start : start + _TOKENIZE_CHUNK]))
        values.append(ragged.flat_values.numpy())
        lengths.append(ragged.row_lengths().numpy())
    if not values:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    return np.concatenate(values).astype(np.int32), np.concatenate(lengths).astype(np.int64)


def label_ids(examples, task):
    """Class ids (int32, -1 if unlabelled) or STS-B scores (float32, NaN if unlabelled) of `examples`."""
    spec = glue_task_spec(task)
    if spec.is_regression:
        return np.array([np.nan if e.label is None else float(e.label) for e in examples], dtype=np.float32)
    return np.array([-1 if e.label is None else spec.labels.index(e.label) for e in examples], dtype=np.int32)


def encode_examples(examples, tokenizer, task, max_seq_length=None):
    """Encodes `examples` of `task` with `tokenizer` (an ElectraTokenizer) into GlueFeatures.

    `max_seq_length` defaults to the task's reference value (128). Swap augmentation is the caller's choice
    (`with_swapped_pairs` on the train examples when `spec.swap_augment`).
    """
    spec = glue_task_spec(task)
    max_seq_length = max_seq_length or spec.max_seq_length
    examples = list(examples)
    if not examples:
        raise ValueError(f"no {spec.name} examples to encode")
    paired = [example.text_b is not None for example in examples]
    if any(paired) != all(paired):
        raise ValueError(f"{spec.name} examples mix sentence pairs and single sentences")
    ids_a = tokenize_to_numpy(tokenizer, [example.text_a for example in examples])
    ids_b = tokenize_to_numpy(tokenizer, [example.text_b for example in examples]) if paired[0] else None
    input_ids, input_mask, segment_ids = encode_token_ids(
        ids_a, ids_b, max_seq_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    )
    return GlueFeatures(input_ids, input_mask, segment_ids, label_ids(examples, spec))


def features_to_dataset(features, batch_size=None, pad_to_max_length=False, in_length_order=False):
    """(inputs dict, label) from GlueFeatures: unbatched in order without `batch_size`, else in batches cut to their
    bucket width unless `pad_to_max_length` (`finetune.batching.length_bucketed_batches`), in the features' order or
    sorted by length with `in_length_order` (evaluation, where the order does not matter)."""
    import tensorflow as tf  # only callers that build input pipelines pay for the import

    from finetune.batching import length_bucketed_batches, length_order

    inputs, labels = features.inputs(), features.label_ids
    if in_length_order:
        order = length_order(features.input_mask)
        inputs, labels = {name: value[order] for name, value in inputs.items()}, labels[order]
    dataset = tf.data.Dataset.from_tensor_slices((inputs, labels))
    if not batch_size:
        return dataset
    return length_bucketed_batches(dataset, batch_size, pad_to_max_length=pad_to_max_length)
