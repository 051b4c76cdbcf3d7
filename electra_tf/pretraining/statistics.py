"""ELECTRA's losses and metrics as sufficient statistics.

Each function returns per-replica *sums* and *counts* (float32 scalars, plus score histograms for the AUC). The training
step all-reduces them once, so that losses are normalised by global counts and metrics are exact over the global batch,
whatever the replica layout.
"""

import tensorflow as tf

AUC_BINS = 1000


def masked_lm_statistics(logits, masked_lm_ids, masked_lm_weights, sampled_ids=None, prefix="mlm"):
    """Masked-LM statistics: summed cross-entropy, count and correct argmax (and correct samples) at the slots.

    Args:
        logits: float [batch, N, vocab] logits at the predicted positions.
        masked_lm_ids: int [batch, N] original tokens. masked_lm_weights: float [batch, N], 0 in padding slots.
        sampled_ids: optional int [batch, N] tokens sampled from these logits (the generator's samples).
        prefix: key prefix, "mlm" for the generator (or the `mlm` objective's model), "model_mlm" for the MLM of the
            discriminator-sized network in the Replace/All-Tokens MLM objectives.
    """
    logits = tf.cast(logits, tf.float32)
    labels = tf.cast(masked_lm_ids, tf.int32)
    weights = tf.cast(masked_lm_weights, tf.float32)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
    stats = {
        f"{prefix}_loss_sum": tf.reduce_sum(cross_entropy * weights),
        f"{prefix}_count": tf.reduce_sum(weights),
        f"{prefix}_correct": tf.reduce_sum(weights * tf.cast(tf.equal(predicted, labels), tf.float32)),
    }
    if sampled_ids is not None:
        stats["sampled_correct"] = tf.reduce_sum(
            weights * tf.cast(tf.equal(tf.cast(sampled_ids, tf.int32), labels), tf.float32)
        )
    return stats


def copy_mechanism_statistics(logits, copy_logits, input_ids, original_ids, weights, prefix="model_mlm"):
    """All-Tokens MLM with the copy mechanism of the paper's appendix: statistics over every weighted token.

    The model's distribution at a position puts probability D = sigmoid(copy_logit) on its input token and 1 - D times
    softmax(logits) on the vocabulary; the loss is the cross-entropy of the original token under that mixture, computed
    in log space (log D and log(1 - D) from `log_sigmoid`, so no probability underflows).

    Args:
        logits: float [batch, L, vocab] MLM logits at every position. copy_logits: float [batch, L].
        input_ids: int [batch, L] the model's (corrupted) input. original_ids: int [batch, L] the targets.
        weights: float [batch, L], 1 for real tokens.
    """
    logits = tf.cast(logits, tf.float32)
    copy_logits = tf.cast(copy_logits, tf.float32)
    targets = tf.cast(original_ids, tf.int32)
    inputs = tf.cast(input_ids, tf.int32)
    weights = tf.cast(weights, tf.float32)
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    target_log_prob = tf.gather(log_probs, targets, batch_dims=2)
    log_copy, log_no_copy = tf.math.log_sigmoid(copy_logits), tf.math.log_sigmoid(-copy_logits)
    from_vocabulary = log_no_copy + target_log_prob
    unchanged = tf.equal(inputs, targets)
    log_likelihood = tf.where(
        unchanged, tf.math.reduce_logsumexp(tf.stack([log_copy, from_vocabulary]), axis=0), from_vocabulary
    )
    # The mixture's argmax: the input token (copy mass + its softmax share) against the best vocabulary entry.
    best_other = tf.argmax(logits, axis=-1, output_type=tf.int32)
    input_prob = tf.exp(log_copy) + tf.exp(log_no_copy + tf.gather(log_probs, inputs, batch_dims=2))
    best_prob = tf.exp(log_no_copy + tf.reduce_max(log_probs, axis=-1))
    predicted = tf.where(input_prob >= best_prob, inputs, best_other)
    return {
        f"{prefix}_loss_sum": -tf.reduce_sum(log_likelihood * weights),
        f"{prefix}_count": tf.reduce_sum(weights),
        f"{prefix}_correct": tf.reduce_sum(weights * tf.cast(tf.equal(predicted, targets), tf.float32)),
    }


def discriminator_statistics(logits, labels, weights):
    """Discriminator statistics over the weighted tokens: all real (non-pad) tokens, [CLS] and [SEP] included, as the
    reference (weights = input_mask); only the masked positions for ELECTRA 15 %.

    Args:
        logits: float [batch, seq], positive for "replaced". labels: int [batch, seq], 1 = replaced.
        weights: [batch, seq], 1 for the tokens that carry the loss.
    """
    logits = tf.cast(logits, tf.float32)
    labels = tf.cast(labels, tf.float32)
    weights = tf.cast(weights, tf.float32)
    cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    predicted = tf.cast(logits > 0.0, tf.float32)
    bins = tf.clip_by_value(tf.cast(tf.math.sigmoid(logits) * AUC_BINS, tf.int32), 0, AUC_BINS - 1)
    return {
        "disc_loss_sum": tf.reduce_sum(cross_entropy * weights),
        "disc_count": tf.reduce_sum(weights),
        "disc_correct": tf.reduce_sum(weights * tf.cast(tf.equal(predicted, labels), tf.float32)),
        "disc_true_positives": tf.reduce_sum(weights * predicted * labels),
        "disc_false_positives": tf.reduce_sum(weights * predicted * (1.0 - labels)),
        "disc_false_negatives": tf.reduce_sum(weights * (1.0 - predicted) * labels),
        "disc_positive_histogram": tf.math.unsorted_segment_sum(
            tf.reshape(weights * labels, [-1]), tf.reshape(bins, [-1]), AUC_BINS
        ),
        "disc_negative_histogram": tf.math.unsorted_segment_sum(
            tf.reshape(weights * (1.0 - labels), [-1]), tf.reshape(bins, [-1]), AUC_BINS
        ),
    }


def safe_divide(numerator, denominator):
    return numerator / tf.maximum(denominator, 1e-6)
