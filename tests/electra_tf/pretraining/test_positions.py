import numpy as np
import tensorflow as tf

from electra_tf.pretraining.positions import gather_positions, scatter_update


def test_gather_matches_numpy_indexing():
    rng = np.random.default_rng(1)
    sequence = rng.normal(size=(3, 10, 4)).astype(np.float32)
    positions = rng.integers(0, 10, size=(3, 5))
    gathered = gather_positions(tf.constant(sequence), tf.constant(positions)).numpy()
    np.testing.assert_array_equal(gathered, sequence[np.arange(3)[:, None], positions])


def test_scatter_writes_only_active_slots():
    sequence = np.arange(20, dtype=np.int32).reshape(2, 10)
    updates = np.array([[100, 101, 102], [200, 201, 202]], np.int32)
    positions = np.array([[3, 0, 7], [9, 2, 0]], np.int32)
    active = np.array([[True, False, True], [True, True, False]])
    updated, written = scatter_update(
        tf.constant(sequence), tf.constant(updates), tf.constant(positions), tf.constant(active)
    )
    expected = sequence.copy()
    expected[0, 3], expected[0, 7], expected[1, 9], expected[1, 2] = 100, 102, 200, 201
    np.testing.assert_array_equal(updated.numpy(), expected)
    assert written.numpy().sum() == 4 and not written.numpy()[:, 0].any()


def test_positions_indicator_marks_active_slots_only():
    from electra_tf.pretraining.positions import positions_indicator

    positions = tf.constant([[1, 3, 0], [2, 0, 0]])
    active = tf.constant([[True, True, False], [True, False, False]])
    np.testing.assert_array_equal(positions_indicator(positions, active, 5).numpy(), [[0, 1, 0, 1, 0], [0, 0, 1, 0, 0]])


def test_scatter_vectors_places_rows_and_passes_gradients():
    from electra_tf.pretraining.positions import scatter_vectors

    positions = tf.constant([[2, 0, 0]])
    active = tf.constant([[True, True, False]])
    updates = tf.Variable([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]])
    with tf.GradientTape() as tape:
        scattered = scatter_vectors(updates, positions, active, 4)
        total = tf.reduce_sum(scattered * tf.constant([[[1.0, 1.0], [0.0, 0.0], [2.0, 2.0], [0.0, 0.0]]]))
    np.testing.assert_array_equal(scattered.numpy(), [[[3, 4], [0, 0], [1, 2], [0, 0]]])
    # Slot 0 lands at position 2 (weight 2), slot 1 at 0 (weight 1); the inactive slot gets no gradient.
    np.testing.assert_array_equal(tape.gradient(total, updates).numpy(), [[[2, 2], [1, 1], [0, 0]]])
