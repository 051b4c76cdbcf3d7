"""GLUE examples -> fixed-length model inputs, packed by `electra_tf.inputs.encode_texts`: `[CLS] A [SEP] B [SEP]`,
segment ids, mask, padding.

Pairs too long for `max_seq_length` are cut longest-first from the end, exactly as BERT's `_truncate_seq_pair`
(repeatedly drop the last token of the longer side, of B when equal); single sentences keep their first
`max_seq_length - 2` word pieces.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from electra_tf.inputs import encode_texts
from finetune.batching import length_bucketed_batches, length_order
from finetune.glue.tasks import glue_task_spec


@dataclasses.dataclass
class GlueFeatures:
    """Encoded examples: int32 [n, max_seq_length] inputs and [n] labels.

    `label_ids` are int32 class ids (-1 when unlabelled) or, for STS-B, float32 scores (NaN when unlabelled).
    """

    input_ids: np.ndarray
    input_mask: np.ndarray
    segment_ids: np.ndarray
    label_ids: np.ndarray

    @classmethod
    def of_texts(cls, tokenizer, examples, max_seq_length, label_ids):
        """The features of `examples` (their `text_a` and, when paired, `text_b`) with the given labels."""
        paired = examples[0].text_b is not None
        inputs = encode_texts(
            tokenizer,
            [example.text_a for example in examples],
            [example.text_b for example in examples] if paired else None,
            max_seq_length,
        )
        return cls(inputs["input_ids"], inputs["input_mask"], inputs["segment_ids"], label_ids)

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
    return GlueFeatures.of_texts(tokenizer, examples, max_seq_length, label_ids(examples, spec))


def features_to_dataset(features, batch_size=None, pad_to_max_length=False, in_length_order=False):
    """(inputs dict, label) from GlueFeatures: unbatched in order without `batch_size`, else in batches cut to their
    bucket width unless `pad_to_max_length` (`finetune.batching.length_bucketed_batches`), in the features' order or
    sorted by length with `in_length_order` (evaluation, where the order does not matter)."""
    inputs, labels = features.inputs(), features.label_ids
    if in_length_order:
        order = length_order(features.input_mask)
        inputs, labels = {name: value[order] for name, value in inputs.items()}, labels[order]
    dataset = tf.data.Dataset.from_tensor_slices((inputs, labels))
    if not batch_size:
        return dataset
    return length_bucketed_batches(dataset, batch_size, pad_to_max_length=pad_to_max_length)
