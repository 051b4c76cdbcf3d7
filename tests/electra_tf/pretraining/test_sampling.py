import numpy as np
import tensorflow as tf

from electra_tf.pretraining.sampling import gumbel_max_sample, replace_tokens


def test_gumbel_max_follows_softmax_with_temperature():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05], np.float32))
    draws = 40000
    for temperature in (1.0, 2.0):
        uniform = tf.random.stateless_uniform((draws, 4), seed=(3, int(temperature)))
        samples = gumbel_max_sample(tf.constant(np.tile(logits, (draws, 1))), uniform, temperature).numpy()
        expected = np.exp(logits / temperature) / np.exp(logits / temperature).sum()
        observed = np.bincount(samples, minlength=4) / draws
        np.testing.assert_allclose(observed, expected, atol=4 * np.sqrt(0.25 / draws))


def test_sampling_is_done_in_float32():
    logits = tf.random.normal((2, 3, 50), dtype=tf.bfloat16)
    uniform = tf.random.uniform((2, 3, 50))
    sample = gumbel_max_sample(logits, uniform)
    assert sample.dtype == tf.int32
    # bfloat16 logits are upcast before adding the noise: the same sample as from their float32 values.
    np.testing.assert_array_equal(sample.numpy(), gumbel_max_sample(tf.cast(logits, tf.float32), uniform).numpy())


def test_labels_are_zero_where_the_sample_equals_the_original():
    ids = tf.constant([[101, 10, 11, 12, 102, 0]])
    positions = tf.constant([[1, 3, 0]])
    weights = tf.constant([[1.0, 1.0, 0.0]])
    sampled = tf.constant([[10, 99, 55]])  # slot 0 re-draws the original; slot 2 is padding
    corrupted, labels = replace_tokens(ids, sampled, positions, weights)
    assert corrupted.numpy().tolist() == [[101, 10, 11, 99, 102, 0]]
    assert labels.numpy().tolist() == [[0, 0, 0, 1, 0, 0]]


def test_gumbel_softmax_gradient_is_zero_forward_with_the_relaxation_gradient():
    from electra_tf.pretraining.sampling import gumbel_softmax_gradient

    logits = tf.Variable([[0.3, -1.0, 2.0, 0.1]])
    uniform = tf.constant([[0.2, 0.7, 0.4, 0.9]])
    weights = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        delta = gumbel_softmax_gradient(logits, uniform, temperature=2.0, relaxation_temperature=0.5)
        target = tf.reduce_sum(delta * weights)
        gumbel = -tf.math.log(-tf.math.log(uniform + 1e-9) + 1e-9)
        relaxed = tf.nn.softmax((logits / 2.0 + gumbel) / 0.5)
        reference = tf.reduce_sum(relaxed * weights)
    np.testing.assert_array_equal(delta.numpy(), np.zeros((1, 4)))
    np.testing.assert_allclose(
        tape.gradient(target, logits).numpy(), tape.gradient(reference, logits).numpy(), rtol=1e-5, atol=1e-7
    )
    assert np.abs(tape.gradient(target, logits).numpy()).max() > 0.01


def test_annealed_temperature_decays_exponentially_to_the_end_value():
    from electra_tf.pretraining.sampling import annealed_temperature

    values = [float(annealed_temperature(step, 1.0, 0.1, 100)) for step in (0, 50, 100, 200)]
    np.testing.assert_allclose(values, [1.0, 0.1**0.5, 0.1, 0.1], rtol=1e-5)
    assert float(annealed_temperature(7, 2.0, 0.5, None)) == 2.0
