"""Generator sampling and the discriminator's corrupted input (reference: pretrain_helpers.sample_from_softmax)."""

import tensorflow as tf

from electra_tf.pretraining.positions import scatter_update

_TINY = 1e-9  # keeps log(0) out of the Gumbel transform


def gumbel_max_sample(logits, uniform, temperature=1.0):
    """One token per row of `logits`, drawn from softmax(logits / temperature) by the Gumbel-max trick.

    Computed in float32 whatever the compute dtype, and without gradient: the discriminator's loss does not reach the
    generator through the sample.

    Args:
        logits: [..., vocab] tensor.
        uniform: float32 noise of the same shape, in [0, 1).
        temperature: positive float.

    Returns:
        int32 [...] sampled ids.
    """
    logits = tf.stop_gradient(tf.cast(logits, tf.float32)) / temperature
    gumbel = -tf.math.log(-tf.math.log(uniform + _TINY) + _TINY)
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int32)


def replace_tokens(input_ids, sampled_ids, positions, weights):
    """The discriminator's input and labels.

    The sampled tokens are written at the masked positions of the *original* ids. A label is 1 where the written token
    differs from the original, so a sample that happens to equal the original counts as original (label 0).

    Args:
        input_ids: int [batch, length], the original (unmasked) ids.
        sampled_ids: int [batch, N].
        positions, weights: the masking's [batch, N] positions and weights.

    Returns:
        (corrupted ids [batch, length], labels int32 [batch, length]).
    """
    sampled_ids = tf.cast(sampled_ids, input_ids.dtype)
    corrupted, _ = scatter_update(input_ids, sampled_ids, positions, weights > 0)
    labels = tf.cast(tf.not_equal(corrupted, input_ids), tf.int32)
    return corrupted, labels
