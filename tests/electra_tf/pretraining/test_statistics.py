import numpy as np
import tensorflow as tf

from electra_tf.pretraining import statistics


def _softmax(logits):
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def test_masked_lm_statistics_against_numpy():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 7)).astype(np.float32)
    labels = rng.integers(0, 7, size=(2, 3))
    weights = np.array([[1, 1, 0], [1, 0, 0]], np.float32)
    sampled = labels.copy()
    sampled[0, 1] = (labels[0, 1] + 1) % 7
    stats = statistics.masked_lm_statistics(logits, labels, weights, sampled, prefix="model_mlm")
    probs = _softmax(logits)
    cross_entropy = -np.log(np.take_along_axis(probs, labels[..., None], -1)[..., 0])
    np.testing.assert_allclose(stats["model_mlm_loss_sum"], (cross_entropy * weights).sum(), rtol=1e-5)
    assert float(stats["model_mlm_count"]) == 3.0
    assert float(stats["model_mlm_correct"]) == float(((logits.argmax(-1) == labels) * weights).sum())
    assert float(stats["sampled_correct"]) == 2.0
    assert "sampled_correct" not in statistics.masked_lm_statistics(logits, labels, weights)


def test_copy_mechanism_against_numpy_mixture():
    """All-Tokens MLM: p(original) = D [input == original] + (1 - D) softmax(logits)[original]."""
    rng = np.random.default_rng(1)
    batch, length, vocab = 2, 5, 11
    logits = rng.normal(size=(batch, length, vocab)).astype(np.float32) * 3
    copy_logits = rng.normal(size=(batch, length)).astype(np.float32) * 2
    original = rng.integers(0, vocab, size=(batch, length))
    corrupted = original.copy()
    corrupted[0, 1] = (original[0, 1] + 3) % vocab
    corrupted[1, 4] = (original[1, 4] + 5) % vocab
    weights = np.ones((batch, length), np.float32)
    weights[1, 3:] = 0
    stats = statistics.copy_mechanism_statistics(logits, copy_logits, corrupted, original, weights)

    copy = 1 / (1 + np.exp(-copy_logits))
    probs = _softmax(logits)
    mixture = (1 - copy)[..., None] * probs
    mixture[np.arange(batch)[:, None], np.arange(length)[None], corrupted] += copy
    target_prob = np.take_along_axis(mixture, original[..., None], -1)[..., 0]
    np.testing.assert_allclose(stats["model_mlm_loss_sum"], -(np.log(target_prob) * weights).sum(), rtol=1e-5)
    assert float(stats["model_mlm_count"]) == weights.sum()
    predicted = mixture.argmax(-1)
    assert float(stats["model_mlm_correct"]) == float(((predicted == original) * weights).sum())


def test_copy_mechanism_is_stable_for_confident_copies():
    logits = tf.fill([1, 2, 4], -50.0)
    copy_logits = tf.constant([[40.0, -40.0]])
    ids = tf.constant([[1, 2]])
    stats = statistics.copy_mechanism_statistics(logits, copy_logits, ids, ids, tf.ones([1, 2]))
    # First token: copied with p ~ 1. Second: no copy, uniform softmax over 4 -> ln 4.
    np.testing.assert_allclose(stats["model_mlm_loss_sum"], np.log(4.0), rtol=1e-4)


def test_discriminator_statistics_use_the_given_weights():
    logits = tf.constant([[2.0, -1.0, 3.0, 0.5]])
    labels = tf.constant([[1, 0, 0, 1]])
    everywhere = statistics.discriminator_statistics(logits, labels, tf.ones([1, 4]))
    only_two = statistics.discriminator_statistics(logits, labels, tf.constant([[1.0, 0.0, 0.0, 1.0]]))
    bce = lambda x, y: np.log1p(np.exp(-x)) if y else np.log1p(np.exp(x))  # noqa: E731
    np.testing.assert_allclose(only_two["disc_loss_sum"], bce(2.0, 1) + bce(0.5, 1), rtol=1e-5)
    assert float(only_two["disc_count"]) == 2.0 and float(everywhere["disc_count"]) == 4.0
    assert float(only_two["disc_false_positives"]) == 0.0 and float(everywhere["disc_false_positives"]) == 1.0
