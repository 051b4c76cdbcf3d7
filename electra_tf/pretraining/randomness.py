"""Per-example stateless randomness.

Every random draw of the pre-training step is a function of (seed, step, stream, index of the example in the global
batch) only. Replica layout, gradient accumulation, resumption and XLA therefore cannot change what an example draws:
a run on two replicas, or in micro-batches, draws exactly what a run on one device draws for the same global batch,
and a resumed run draws what an uninterrupted one would. It also avoids per-replica RNG state, which breaks XLA under
MirroredStrategy (reference doc, section 7).
"""

import contextlib
import threading

import tensorflow as tf

# One stream per kind of draw, so that e.g. the masking and the sampling noise of an example are independent.
STREAM_MASK_POSITIONS = 1
STREAM_MASK_TOKEN = 2
STREAM_SAMPLING = 3

_EXAMPLE_INDEX_BITS = 24  # up to 16M examples per global batch


# The micro-batch being run, per thread: a strategy traces each replica's step in a thread of its own.
_micro_batch = threading.local()


@contextlib.contextmanager
def micro_batch(start, replica_batch_size):
    """Within the block, `global_example_index` numbers the examples of a micro-batch (gradient accumulation) that
    starts at row `start` of its replica's share of the global batch, a share of `replica_batch_size` examples.

    The forward pass asks only for its own batch's size; this context tells it where that batch lies, so that an
    example draws what it would draw with its whole batch run at once.
    """
    outer = getattr(_micro_batch, "position", None)
    _micro_batch.position = (start, replica_batch_size)
    try:
        yield
    finally:
        _micro_batch.position = outer


def global_example_index(local_batch_size):
    """Index of each local example in the global batch: replica_id x replica's share + position in it.

    Keras distributes a global batch by splitting it into contiguous per-replica slices in replica order, so this is the
    example's row in the global batch (pinned by the Mirrored-vs-default equality test). The share is the local batch
    itself, or within `micro_batch` a micro-batch of it, which starts at the row that context gives.
    """
    replica_context = tf.distribute.get_replica_context()
    replica_id = 0 if replica_context is None else replica_context.replica_id_in_sync_group
    replica_id = tf.cast(replica_id, tf.int64)
    local_batch_size = tf.cast(local_batch_size, tf.int64)
    start, replica_batch_size = getattr(_micro_batch, "position", None) or (0, local_batch_size)
    return (
        replica_id * tf.cast(replica_batch_size, tf.int64)
        + tf.cast(start, tf.int64)
        + tf.range(local_batch_size, dtype=tf.int64)
    )


def example_seeds(seed, step, example_index, stream):
    """Stateless-op seeds, shape [batch, 2] int64, unique per (seed, stream, step, example).

    Args:
        seed: Python int, the run's seed.
        step: scalar integer tensor, the optimizer step the draw belongs to.
        example_index: [batch] integer tensor, rows in the global batch.
        stream: Python int, one of the STREAM_* constants.
    """
    example_index = tf.cast(example_index, tf.int64)
    step = tf.cast(step, tf.int64)
    first = tf.fill(tf.shape(example_index), tf.constant(seed * 1_000_003 + stream, tf.int64))
    second = step * (1 << _EXAMPLE_INDEX_BITS) + example_index
    return tf.stack([first, second], axis=-1)


def per_example_uniform(seeds, shape):
    """Uniform [0, 1) float32 noise of shape [batch] + shape, each row drawn from its own seed.

    Args:
        seeds: [batch, 2] int64 from `example_seeds`.
        shape: Python list, the per-example shape of the draw.
    """
    return tf.map_fn(
        lambda row_seed: tf.random.stateless_uniform(shape, seed=row_seed, dtype=tf.float32),
        seeds,
        fn_output_signature=tf.TensorSpec(shape, tf.float32),
    )
