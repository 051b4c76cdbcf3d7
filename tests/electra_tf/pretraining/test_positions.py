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
    updated, written = scatter_update(tf.constant(sequence), tf.constant(updates), tf.constant(positions),
                                      tf.constant(active))
    expected = sequence.copy()
    expected[0, 3], expected[0, 7], expected[1, 9], expected[1, 2] = 100, 102, 200, 201
    np.testing.assert_array_equal(updated.numpy(), expected)
    assert written.numpy().sum() == 4 and not written.numpy()[:, 0].any()
