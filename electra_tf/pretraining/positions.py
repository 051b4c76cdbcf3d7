"""Gather from and scatter into [batch, length] sequences at per-example positions."""

import tensorflow as tf


def gather_positions(sequence, positions):
    """Values of `sequence` at `positions`.

    Args:
        sequence: [batch, length] or [batch, length, width] tensor.
        positions: [batch, num_positions] int tensor.

    Returns:
        [batch, num_positions] or [batch, num_positions, width] tensor.
    """
    return tf.gather(sequence, positions, batch_dims=1)


def scatter_update(sequence, updates, positions, active):
    """`sequence` with `updates` written at `positions` where `active`.

    Active positions must be distinct within an example (masking samples without replacement); inactive slots, such as
    the padding slots of examples with fewer predictions, leave the sequence untouched whatever position they hold.

    Args:
        sequence: [batch, length] integer tensor.
        updates: [batch, num_positions] tensor of the same dtype.
        positions: [batch, num_positions] int tensor.
        active: [batch, num_positions] bool tensor.

    Returns:
        (updated [batch, length], written [batch, length] bool: where an update was written).
    """
    length = tf.shape(sequence)[1]
    one_hot = tf.one_hot(positions, length, dtype=sequence.dtype) * tf.cast(active, sequence.dtype)[..., None]
    written = tf.reduce_max(one_hot, axis=1) > 0
    scattered = tf.reduce_sum(one_hot * updates[..., None], axis=1)
    return tf.where(written, scattered, sequence), written
