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


def positions_indicator(positions, active, length):
    """float32 [batch, length]: 1 where an active slot of `positions` points, else 0 (active positions distinct).

    Args:
        positions: [batch, num_positions] int tensor. active: [batch, num_positions] bool tensor.
        length: the sequence length.
    """
    one_hot = tf.one_hot(positions, length, dtype=tf.float32) * tf.cast(active, tf.float32)[..., None]
    return tf.reduce_max(one_hot, axis=1)


def scatter_vectors(updates, positions, active, length):
    """[batch, length, width]: the vectors `updates` [batch, num_positions, width] placed at their active positions,
    zeros elsewhere (differentiable in `updates`)."""
    one_hot = tf.one_hot(positions, length, dtype=updates.dtype) * tf.cast(active, updates.dtype)[..., None]
    return tf.einsum("bnl,bnw->blw", one_hot, updates)
