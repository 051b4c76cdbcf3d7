import numpy as np
import tensorflow as tf

from electra_tf.pretraining import randomness


def _noise(seed, step, indices, stream, shape=(7,)):
    seeds = randomness.example_seeds(seed, tf.constant(step), tf.constant(indices), stream)
    return randomness.per_example_uniform(seeds, list(shape)).numpy()


def test_draws_depend_only_on_seed_step_index_and_stream():
    whole = _noise(0, 5, [0, 1, 2, 3], randomness.STREAM_MASK_POSITIONS)
    # The same examples split differently (as two replicas would see them) draw the same numbers.
    np.testing.assert_array_equal(_noise(0, 5, [2, 3], randomness.STREAM_MASK_POSITIONS), whole[2:])
    np.testing.assert_array_equal(_noise(0, 5, [3, 0], randomness.STREAM_MASK_POSITIONS), whole[[3, 0]])
    for other in (_noise(1, 5, [0, 1, 2, 3], 1), _noise(0, 6, [0, 1, 2, 3], 1), _noise(0, 5, [0, 1, 2, 3], 2)):
        assert not np.isclose(other, whole).any()
    assert len(np.unique(whole)) == whole.size and ((whole >= 0) & (whole < 1)).all()


def test_global_example_index_outside_a_strategy_is_the_row():
    assert randomness.global_example_index(4).numpy().tolist() == [0, 1, 2, 3]


def test_a_micro_batch_numbers_its_examples_by_their_rows_in_the_whole_batch():
    with randomness.micro_batch(4, 8):
        assert randomness.global_example_index(2).numpy().tolist() == [4, 5]
        with randomness.micro_batch(tf.constant(6), tf.constant(8)):
            assert randomness.global_example_index(2).numpy().tolist() == [6, 7]
        assert randomness.global_example_index(2).numpy().tolist() == [4, 5]
    assert randomness.global_example_index(2).numpy().tolist() == [0, 1]
