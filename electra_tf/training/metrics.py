"""Pre-training metrics, updated from globally all-reduced statistics (see `pretraining.objective`)."""

import keras
from keras import ops

from electra_tf.pretraining.objective import AUC_BINS, safe_divide

# The reference's metrics, plus the total loss and the share of real tokens the generator replaced (1 minus it is the
# accuracy of a discriminator that calls every token original).
METRIC_NAMES = ("loss", "masked_lm_loss", "masked_lm_accuracy", "sampled_masked_lm_accuracy", "disc_loss",
                "disc_accuracy", "disc_precision", "disc_recall", "disc_auc", "disc_replaced_fraction")


@keras.saving.register_keras_serializable(package="electra_tf")
class BinnedAUC(keras.metrics.Metric):
    """ROC AUC from histograms of scores for positives and negatives (Mann-Whitney with ties counted as half).

    Updated with histograms rather than raw scores so that replicas can all-reduce a fixed-size summary.
    """

    def __init__(self, num_bins=AUC_BINS, name="auc", **kwargs):
        super().__init__(name=name, **kwargs)
        self.num_bins = num_bins
        self.positives = self.add_variable(shape=(num_bins,), initializer="zeros", name="positives")
        self.negatives = self.add_variable(shape=(num_bins,), initializer="zeros", name="negatives")

    def update_state(self, positive_histogram, negative_histogram):
        self.positives.assign_add(ops.cast(positive_histogram, self.dtype))
        self.negatives.assign_add(ops.cast(negative_histogram, self.dtype))

    def result(self):
        negatives_below = ops.cumsum(self.negatives) - self.negatives
        wins = ops.sum(self.positives * (negatives_below + 0.5 * self.negatives))
        return safe_divide(wins, ops.sum(self.positives) * ops.sum(self.negatives))

    def reset_state(self):
        self.positives.assign(ops.zeros_like(self.positives))
        self.negatives.assign(ops.zeros_like(self.negatives))

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins}


def make_pretraining_metrics():
    """The reference's metrics plus the total loss, by name. Ratios are `Mean`s weighted by their denominators, so a
    window's value is the pooled ratio over all its steps."""
    metrics = {name: keras.metrics.Mean(name=name) for name in METRIC_NAMES if name != "disc_auc"}
    metrics["disc_auc"] = BinnedAUC(name="disc_auc")
    return metrics


def update_pretraining_metrics(metrics, totals, loss, loss_weight=1.0):
    """Update `make_pretraining_metrics()` from all-reduced statistics `totals` and the step's global `loss`
    (weighted by `loss_weight`; 0 leaves the loss mean unchanged)."""

    def ratio(name, numerator, denominator):
        metrics[name].update_state(safe_divide(numerator, denominator), sample_weight=denominator)

    metrics["loss"].update_state(loss, sample_weight=loss_weight)
    ratio("masked_lm_loss", totals["mlm_loss_sum"], totals["mlm_count"])
    ratio("masked_lm_accuracy", totals["mlm_correct"], totals["mlm_count"])
    ratio("sampled_masked_lm_accuracy", totals["sampled_correct"], totals["mlm_count"])
    ratio("disc_loss", totals["disc_loss_sum"], totals["disc_count"])
    ratio("disc_accuracy", totals["disc_correct"], totals["disc_count"])
    true_positives = totals["disc_true_positives"]
    ratio("disc_precision", true_positives, true_positives + totals["disc_false_positives"])
    ratio("disc_recall", true_positives, true_positives + totals["disc_false_negatives"])
    ratio("disc_replaced_fraction", true_positives + totals["disc_false_negatives"], totals["disc_count"])
    metrics["disc_auc"].update_state(totals["disc_positive_histogram"], totals["disc_negative_histogram"])
