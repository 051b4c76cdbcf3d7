"""Dynamic masking of the pre-training step (reference: pretrain_helpers.mask).

Deviation from the reference, listed in the README's table of differences: positions are sampled *without*
replacement (top-k of uniform scores), so exactly `num_to_predict` distinct positions are chosen; the reference
samples with replacement and ends up with about 13.8 % unique positions at a 15 % rate.
"""

import collections

import tensorflow as tf

from electra_tf.pretraining.positions import gather_positions, scatter_update

MaskedInputs = collections.namedtuple(
    "MaskedInputs", ["input_ids", "masked_lm_positions", "masked_lm_ids", "masked_lm_weights"]
)


def candidate_mask(input_ids, input_mask, special_ids):
    """Positions that may be masked: real tokens that are not [CLS], [SEP] or [MASK]. Bool [batch, length]."""
    candidates = tf.cast(input_mask, tf.bool)
    for token_id in special_ids:
        candidates &= tf.not_equal(input_ids, token_id)
    return candidates


def num_to_predict(input_mask, mask_prob, max_predictions):
    """Per-example count max(1, min(N, round(num_real_tokens x mask_prob))), int32 [batch]."""
    num_tokens = tf.reduce_sum(tf.cast(input_mask, tf.float32), axis=-1)
    count = tf.cast(tf.round(num_tokens * mask_prob), tf.int32)
    return tf.maximum(1, tf.minimum(max_predictions, count))


def select_positions(candidates, counts, uniform, max_predictions):
    """Choose `counts` distinct candidate positions per example, uniformly at random.

    Args:
        candidates: bool [batch, length] from `candidate_mask`.
        counts: int32 [batch] from `num_to_predict`.
        uniform: float32 [batch, length] noise in [0, 1).
        max_predictions: N, the static number of prediction slots.

    Returns:
        positions int32 [batch, N] (0 in unused slots) and weights float32 [batch, N] (1 for used slots). A slot is
        unused past the example's count, or when the example has fewer candidates than its count.
    """
    scores = tf.where(candidates, uniform, -1.0)
    top_scores, positions = tf.math.top_k(scores, k=max_predictions)
    slot = tf.range(max_predictions)[None, :]
    used = (slot < counts[:, None]) & (top_scores >= 0.0)
    positions = tf.where(used, positions, 0)
    return tf.cast(positions, tf.int32), tf.cast(used, tf.float32)


def mask_inputs(
    input_ids,
    input_mask,
    position_noise,
    token_noise,
    *,
    mask_prob,
    max_predictions,
    mask_token_fraction,
    mask_id,
    special_ids,
):
    """ELECTRA's masking: choose positions, replace `mask_token_fraction` (85 %) of them by [MASK], keep the rest.

    Unlike BERT's 80/10/10 no position receives a random token: the generator supplies the replacements.

    Args:
        input_ids, input_mask: int [batch, length].
        position_noise: float32 [batch, length] uniform noise for choosing positions.
        token_noise: float32 [batch, N] uniform noise for the [MASK]-or-keep decision.
        mask_prob, max_predictions, mask_token_fraction: see `ElectraConfig`.
        mask_id: id of [MASK].
        special_ids: ids never chosen ([CLS], [SEP], [MASK]).

    Returns:
        MaskedInputs(input_ids with [MASK] written in, masked_lm_positions, masked_lm_ids (the originals),
        masked_lm_weights).
    """
    candidates = candidate_mask(input_ids, input_mask, special_ids)
    counts = num_to_predict(input_mask, mask_prob, max_predictions)
    positions, weights = select_positions(candidates, counts, position_noise, max_predictions)
    original_ids = gather_positions(input_ids, positions)
    use_mask_token = (token_noise < mask_token_fraction) & (weights > 0)
    mask_ids = tf.fill(tf.shape(positions), tf.cast(mask_id, input_ids.dtype))
    masked_ids, _ = scatter_update(input_ids, mask_ids, positions, use_mask_token)
    return MaskedInputs(masked_ids, positions, original_ids, weights)
