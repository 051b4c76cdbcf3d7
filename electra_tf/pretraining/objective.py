"""ELECTRA's losses and metrics as sufficient statistics.

Each function returns per-replica *sums* and *counts* (float32 scalars, plus score histograms for the AUC). The training
step all-reduces them once, so that losses are normalised by global counts and metrics are exact over the global batch,
whatever the replica layout.
"""

import tensorflow as tf

AUC_BINS = 1000


def masked_lm_statistics(logits, masked_lm_ids, masked_lm_weights, sampled_ids):
    """Generator statistics: summed cross-entropy, count, correct argmax and correct samples at masked slots.

    Args:
        logits: float [batch, N, vocab] generator logits at the masked positions.
        masked_lm_ids: int [batch, N] original tokens. masked_lm_weights: float [batch, N], 0 in padding slots.
        sampled_ids: int [batch, N] tokens sampled from the generator.
    """
    logits = tf.cast(logits, tf.float32)
    labels = tf.cast(masked_lm_ids, tf.int32)
    weights = tf.cast(masked_lm_weights, tf.float32)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {
        "mlm_loss_sum": tf.reduce_sum(cross_entropy * weights),
        "mlm_count": tf.reduce_sum(weights),
        "mlm_correct": tf.reduce_sum(weights * tf.cast(tf.equal(predicted, labels), tf.float32)),
        "sampled_correct": tf.reduce_sum(
            weights * tf.cast(tf.equal(tf.cast(sampled_ids, tf.int32), labels), tf.float32)),
    }


def discriminator_statistics(logits, labels, input_mask):
    """Discriminator statistics over all real (non-pad) tokens, [CLS] and [SEP] included, as the reference.

    Args:
        logits: float [batch, seq], positive for "replaced". labels: int [batch, seq], 1 = replaced.
        input_mask: int [batch, seq], 1 for real tokens.
    """
    logits = tf.cast(logits, tf.float32)
    labels = tf.cast(labels, tf.float32)
    weights = tf.cast(input_mask, tf.float32)
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
            tf.reshape(weights * labels, [-1]), tf.reshape(bins, [-1]), AUC_BINS),
        "disc_negative_histogram": tf.math.unsorted_segment_sum(
            tf.reshape(weights * (1.0 - labels), [-1]), tf.reshape(bins, [-1]), AUC_BINS),
    }


def safe_divide(numerator, denominator):
    return numerator / tf.maximum(denominator, 1e-6)


def total_loss(sums, counts, gen_weight, disc_weight):
    """gen_weight x MLM + disc_weight x discriminator loss, with sums from `sums` and counts from `counts`.

    On one replica both are that replica's statistics. Under a strategy, `sums` are the replica's own (they carry the
    gradient) and `counts` the all-reduced ones: each replica's loss is then its share of the global mean, and the
    summed gradients equal the single-device gradient of the same global batch exactly.
    """
    mlm = safe_divide(sums["mlm_loss_sum"], counts["mlm_count"])
    disc = safe_divide(sums["disc_loss_sum"], counts["disc_count"])
    return gen_weight * mlm + disc_weight * disc
