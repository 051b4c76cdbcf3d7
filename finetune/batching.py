"""Length-bucketed batches: every fine-tuning task's examples batched with others of similar length and cut to the
width that holds the longest of them, instead of padded to `max_seq_length` (the reference's batches, kept with
`pad_to_max_length`).

Features are stored padded to `max_seq_length`; a batch is cut to the smallest of a few fixed widths (every length
up to 16, then 20, 24, 28, 32, 40, ... up to `max_seq_length`, see `bucket_widths`) that holds its longest member, so
a training step is traced and compiled for a bounded number of shapes. The model output of an example does not depend
on its batch's padding (the attention mask hides it), which tests/finetune/test_padding_invariance.py checks for every
task head.
"""

import numpy as np
import tensorflow as tf

from electra_tf.data.keras_input import keras_input_options

# The shortest sequence a task encodes: [CLS] [SEP].
SMALLEST_WIDTH = 2
# Up to this width every length has a width of its own; quarter-octave steps above.
EVERY_LENGTH_UP_TO = 16


def bucket_widths(max_seq_length, smallest=SMALLEST_WIDTH):
    """The widths batches are cut to: every length from `smallest` up to 16, then p, 1.25 p, 1.5 p and 1.75 p for p =
    16 (or `smallest`, when larger) times powers of two, below `max_seq_length`, then `max_seq_length` itself;
    (2, 3, ..., 15, 16, 20, 24, 28, 32, 40, ..., 112, 128) for 128.

    A batch is padded by at most a quarter of its longest member, and not at all up to 16 tokens, where a token of
    padding is a large share of a short sentence: over an epoch of SST-2's training text (41 % of its examples are at
    most 8 tokens long) in batches of 32, an example's batch is 13.9 tokens wide on average for a mean length of 13.3,
    against 15.0 with quarter-octave steps from 8 (8, 10, 12, 14, 16, 20, ...) and 16.2 with half-octave steps (8, 12,
    16, 24, ...). Each bucket's last batch of an epoch is partial: SST-2 has 2,117 batches an epoch, 2,112 with the
    widths from 8, 2,105 whole ones."""
    widths = [width for width in range(smallest, EVERY_LENGTH_UP_TO) if width < max_seq_length]
    power = max(smallest, EVERY_LENGTH_UP_TO)
    while power < max_seq_length:
        widths.extend(
            width for width in (power, power * 5 // 4, power * 3 // 2, power * 7 // 4) if width < max_seq_length
        )
        power *= 2
    return tuple(widths) + (max_seq_length,)


def length_bucketed_batches(
    dataset,
    batch_size,
    *,
    length_key="padding_mask",
    shuffle=False,
    seed=None,
    reshuffle=True,
    pad_to_max_length=False,
    smallest_width=SMALLEST_WIDTH,
):
    """Batches a tf.data `dataset` of single examples, cutting each batch to its bucket's width.

    Elements are `(inputs, ...)` tuples (or an inputs dict alone); `inputs[length_key]` is the mask (1 on the tokens
    of the example, [max_seq_length]) that gives each example's length, and every tensor of the element with shape
    [max_seq_length] (token ids, masks, word positions, tags and weights per position) is a sequence that is cut.

    With `shuffle`, examples are shuffled anew every epoch (from `seed`, or TensorFlow's global seed when None; with
    `reshuffle=False`, in the seed's order on every iteration, for callers that seed each epoch) and each batch is
    drawn from one bucket (the examples whose length rounds up to the same width): batches come in the order their
    buckets fill, so the widths are mixed across the epoch; each bucket's last batch may be smaller.
    Without `shuffle`, batches keep the dataset's order (sort it by length first, see `length_order`, to cut more).
    With `pad_to_max_length`, or inputs without a `length_key` of static length, the batches are `max_seq_length`
    wide, as the reference's.
    """
    if shuffle:
        dataset = dataset.shuffle(dataset.cardinality(), seed=seed, reshuffle_each_iteration=reshuffle)
    max_seq_length = _bucketed_length(dataset, length_key, pad_to_max_length)
    if max_seq_length is None:
        return dataset.batch(batch_size).with_options(keras_input_options())
    widths = tf.constant(bucket_widths(max_seq_length, smallest_width), tf.int32)
    bucket, length = _bucket_functions(widths, length_key)

    def cut(*element):
        inputs = element[0] if isinstance(element[0], dict) else element
        width = tf.gather(widths, bucket(tf.reduce_sum(tf.cast(inputs[length_key], tf.int32), axis=-1)))

        def cut_sequence(tensor):
            sequence = tensor.shape.rank == 2 and tensor.shape[1] == max_seq_length
            return tensor[:, :width] if sequence else tensor

        cut_element = tf.nest.map_structure(cut_sequence, element)
        return cut_element if len(cut_element) > 1 else cut_element[0]

    if shuffle:
        dataset = dataset.group_by_window(
            key_func=lambda *element: tf.cast(bucket(length(*element)), tf.int64),
            reduce_func=lambda _, window: window.batch(batch_size),
            window_size=batch_size,
        )
    else:
        dataset = dataset.batch(batch_size)
    return dataset.map(cut).with_options(keras_input_options())


def _bucketed_length(dataset, length_key, pad_to_max_length):
    """The `max_seq_length` of `dataset`'s examples if their batches are cut to buckets, else None."""
    inputs_spec = dataset.element_spec[0] if isinstance(dataset.element_spec, tuple) else dataset.element_spec
    if (
        pad_to_max_length
        or not isinstance(inputs_spec, dict)
        or length_key not in inputs_spec
        or inputs_spec[length_key].shape[0] is None
    ):
        return None
    return int(inputs_spec[length_key].shape[0])


def _bucket_functions(widths, length_key):
    """(bucket index of the longest of some lengths, length of one example) as tf functions."""

    def bucket(element_lengths):
        return tf.searchsorted(widths, tf.reshape(tf.reduce_max(element_lengths), [1]), side="left")[0]

    def length(*element):
        inputs = element[0] if isinstance(element[0], dict) else element
        return tf.reduce_sum(tf.cast(inputs[length_key], tf.int32))

    return bucket, length


def num_shuffled_batches(
    dataset, batch_size, *, length_key="padding_mask", pad_to_max_length=False, smallest_width=SMALLEST_WIDTH
):
    """How many batches `length_bucketed_batches(dataset, batch_size, shuffle=True, ...)` gives per epoch: every
    bucket's examples in batches of `batch_size`, its last one partial, whatever the shuffle's order."""
    num_examples = int(dataset.cardinality())
    max_seq_length = _bucketed_length(dataset, length_key, pad_to_max_length)
    if max_seq_length is None:
        return -(-num_examples // batch_size)
    widths = tf.constant(bucket_widths(max_seq_length, smallest_width), tf.int32)
    bucket, length = _bucket_functions(widths, length_key)
    buckets = (
        np.concatenate([batch.numpy() for batch in dataset.map(lambda *element: bucket(length(*element))).batch(65536)])
        if num_examples
        else np.zeros(0, np.int64)
    )
    return int(sum(-(-count // batch_size) for count in np.bincount(buckets)))


def length_order(mask):
    """The permutation that sorts examples by length (the row sums of `mask`, [n, max_seq_length]), stable."""
    return np.argsort(np.asarray(mask).sum(axis=-1), kind="stable")


def predict_in_buckets(
    model,
    inputs,
    batch_size,
    *,
    length_key="padding_mask",
    pad_to_max_length=False,
    sequence_outputs=(),
    pad_value=0.0,
    smallest_width=SMALLEST_WIDTH,
):
    """`model`'s outputs for `inputs` (a dict of [n, max_seq_length] arrays), in the original order.

    Examples are predicted sorted by length, in batches cut to their bucket width (`length_bucketed_batches`); the
    outputs named in `sequence_outputs` (dict keys, or True for a single per-token output) are padded back to
    `max_seq_length` with `pad_value`, so their rows line up with the inputs'.

    Each batch goes through `model.predict_step` in this process, on its own copy of the weights, whatever strategy
    the model was made under: Keras' `predict_on_batch` under a strategy of several replicas (MirroredStrategy,
    MultiWorkerMirroredStrategy) runs the whole batch on every replica and returns every replica's rows.
    """
    mask = np.asarray(inputs[length_key])
    max_seq_length = mask.shape[1]
    order = np.arange(len(mask)) if pad_to_max_length else length_order(mask)
    dataset = tf.data.Dataset.from_tensor_slices({name: np.asarray(value)[order] for name, value in inputs.items()})
    # One graph for every batch width (`reduce_retracing`), compiled as Keras compiles its own predict step.
    predict = tf.function(model.predict_step, reduce_retracing=True, jit_compile=model.jit_compile)
    batches = [
        predict(batch)
        for batch in length_bucketed_batches(
            dataset,
            batch_size,
            length_key=length_key,
            pad_to_max_length=pad_to_max_length,
            smallest_width=smallest_width,
        )
    ]

    def merged(pieces, sequence):
        pieces = [np.asarray(piece) for piece in pieces]
        if sequence:
            pieces = [
                np.pad(
                    piece,
                    [(0, 0), (0, max_seq_length - piece.shape[1])] + [(0, 0)] * (piece.ndim - 2),
                    constant_values=pad_value,
                )
                for piece in pieces
            ]
        return np.concatenate(pieces)[np.argsort(order)]

    if isinstance(batches[0], dict):
        return {name: merged([batch[name] for batch in batches], name in sequence_outputs) for name in batches[0]}
    return merged(batches, sequence_outputs is True)
