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


def gumbel_softmax_gradient(logits, uniform, temperature=1.0, relaxation_temperature=1.0):
    """A tensor equal to zero whose gradient is that of the Gumbel-softmax relaxation of `gumbel_max_sample`.

    With the same `uniform` noise, softmax((logits / temperature + g) / relaxation_temperature) is the relaxed twin of
    the hard sample; returning relaxed - stop_gradient(relaxed) adds nothing to the forward pass (the discriminator
    still sees the hard sample) and hands the backward pass the relaxation's gradient: the straight-through estimator.
    Used by adversarial generator training; float32.

    Args:
        logits: [..., vocab] generator logits (with gradient).
        uniform: float32 noise of the same shape, the noise `gumbel_max_sample` used.
        temperature: the sampling temperature. relaxation_temperature: the Gumbel-softmax temperature (> 0; lower is
            closer to the hard sample, with higher-variance gradients).
    """
    logits = tf.cast(logits, tf.float32) / temperature
    gumbel = -tf.math.log(-tf.math.log(uniform + _TINY) + _TINY)
    relaxed = tf.nn.softmax((logits + gumbel) / relaxation_temperature, axis=-1)
    return relaxed - tf.stop_gradient(relaxed)


def annealed_temperature(step, start, end, total_steps):
    """Exponential annealing from `start` at step 0 to `end` at `total_steps` (and after); `start` when total_steps is
    None or 0. float32 scalar."""
    if not total_steps:
        return tf.constant(start, tf.float32)
    progress = tf.minimum(tf.cast(step, tf.float32) / float(total_steps), 1.0)
    return start * tf.pow(end / start, progress)


def linear_ramp(step, total_steps):
    """step / total_steps clipped to [0, 1], float32 scalar. The adversarial share of the generator's loss under
    annealed training (0 at step 0: maximum likelihood only; 1 from `total_steps` on: adversarial only), and the factor
    on the generator's logits under a sampling warm-up: sampling from logits x s draws from p^s / Z, uniform at s = 0
    and the generator's own distribution from s = 1 on (a geometric path between the two)."""
    if not total_steps:
        raise ValueError("linear_ramp needs total_steps > 0")
    return tf.clip_by_value(tf.cast(step, tf.float32) / float(total_steps), 0.0, 1.0)
