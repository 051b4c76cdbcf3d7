"""Pre-training metrics, updated from globally all-reduced statistics (see `pretraining.objective`)."""

import keras
from keras import ops

from electra_tf.pretraining.statistics import AUC_BINS, safe_divide

# The reference's metrics, plus the total loss and the share of real tokens the generator replaced (1 minus it is the
# accuracy of a discriminator that calls every token original). Other objectives report a subset, plus the MLM of the
# discriminator-sized network (`model_mlm_*`); see `pretraining.objectives`.
METRIC_NAMES = (
    "loss",
    "masked_lm_loss",
    "masked_lm_accuracy",
    "sampled_masked_lm_accuracy",
    "disc_loss",
    "disc_accuracy",
    "disc_precision",
    "disc_recall",
    "disc_auc",
    "disc_replaced_fraction",
)


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


# (statistics prefix, metric name prefix) of the masked-LM-like losses: the generator's, the discriminator-sized
# network's, Electric's cloze model's.
MLM_PREFIXES = (("mlm", "masked_lm"), ("model_mlm", "model_mlm"), ("cloze", "cloze"))


def make_pretraining_metrics(names=METRIC_NAMES):
    """The metrics called `names` (the total loss is always there), by name. Ratios are `Mean`s weighted by their
    denominators, so a window's value is the pooled ratio over all its steps."""
    names = ("loss",) + tuple(name for name in names if name != "loss")
    return {name: BinnedAUC(name=name) if name == "disc_auc" else keras.metrics.Mean(name=name) for name in names}


def update_pretraining_metrics(metrics, totals, loss, loss_weight=1.0):
    """Update `make_pretraining_metrics()` from all-reduced statistics `totals` and the step's global `loss`
    (weighted by `loss_weight`; 0 leaves the loss mean unchanged). Metrics whose statistics are absent are left
    alone."""

    def ratio(name, numerator, denominator):
        metrics[name].update_state(safe_divide(numerator, denominator), sample_weight=denominator)

    metrics["loss"].update_state(loss, sample_weight=loss_weight)
    for prefix, name in MLM_PREFIXES:
        if f"{name}_loss" in metrics:
            ratio(f"{name}_loss", totals[f"{prefix}_loss_sum"], totals[f"{prefix}_count"])
            ratio(f"{name}_accuracy", totals[f"{prefix}_correct"], totals[f"{prefix}_count"])
    if "sampled_masked_lm_accuracy" in metrics:
        ratio("sampled_masked_lm_accuracy", totals["sampled_correct"], totals["mlm_count"])
    if "disc_loss" not in metrics:
        return
    ratio("disc_loss", totals["disc_loss_sum"], totals["disc_count"])
    ratio("disc_accuracy", totals["disc_correct"], totals["disc_count"])
    true_positives = totals["disc_true_positives"]
    ratio("disc_precision", true_positives, true_positives + totals["disc_false_positives"])
    ratio("disc_recall", true_positives, true_positives + totals["disc_false_negatives"])
    ratio("disc_replaced_fraction", true_positives + totals["disc_false_negatives"], totals["disc_count"])
    metrics["disc_auc"].update_state(totals["disc_positive_histogram"], totals["disc_negative_histogram"])
