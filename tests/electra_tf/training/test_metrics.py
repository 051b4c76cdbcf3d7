"""The pre-training metrics against scikit-learn on random inputs: on one batch, on a batch split over replicas whose
statistics are summed (as the all-reduce does), and pooled over several steps of unequal sizes."""

import numpy as np
import pytest
import tensorflow as tf
from sklearn import metrics as sk

from electra_tf.pretraining import statistics
from electra_tf.pretraining.statistics import AUC_BINS
from electra_tf.training.metrics import BinnedAUC, make_pretraining_metrics, update_pretraining_metrics

VOCAB = 13


def _scores_in_bins(rng, shape, labels):
    """Logits whose sigmoid falls in the middle of an AUC bin (so the bin is known without rounding doubts), drawn
    from a tenth of the bins so that ties occur; replaced tokens score higher on average."""
    bins = np.clip(
        rng.integers(0, AUC_BINS // 10, size=shape) * 10 + labels * rng.integers(0, 300, size=shape), 0, AUC_BINS - 1
    )
    probability = (bins + 0.5) / AUC_BINS
    return np.log(probability / (1 - probability)).astype(np.float32), bins


def _step(rng, batch):
    """One global batch: generator outputs at 5 slots and discriminator outputs over 16 tokens, with padding."""
    mlm_weights = (rng.random((batch, 5)) < 0.8).astype(np.float32)
    mlm_labels = rng.integers(0, VOCAB, size=(batch, 5))
    mlm_logits = rng.normal(size=(batch, 5, VOCAB)).astype(np.float32) * 2
    mlm_logits[..., 0] += 1.0  # the argmax is often token 0, so some predictions are right
    sampled = np.where(rng.random((batch, 5)) < 0.3, mlm_labels, rng.integers(0, VOCAB, size=(batch, 5)))
    disc_weights = (rng.random((batch, 16)) < 0.9).astype(np.float32)
    disc_labels = (rng.random((batch, 16)) < 0.25).astype(np.int32)
    disc_logits, bins = _scores_in_bins(rng, (batch, 16), disc_labels)
    return dict(
        mlm_logits=mlm_logits,
        mlm_labels=mlm_labels,
        mlm_weights=mlm_weights,
        sampled=sampled,
        disc_logits=disc_logits,
        disc_labels=disc_labels,
        disc_weights=disc_weights,
        bins=bins,
    )


def _statistics(step, rows):
    stats = statistics.masked_lm_statistics(
        step["mlm_logits"][rows], step["mlm_labels"][rows], step["mlm_weights"][rows], step["sampled"][rows]
    )
    stats.update(
        statistics.discriminator_statistics(
            step["disc_logits"][rows], step["disc_labels"][rows], step["disc_weights"][rows]
        )
    )
    return stats


def _summed_over_replicas(step, replicas):
    """The step's statistics computed on `replicas` unequal slices of the batch and added, as the all-reduce adds."""
    cuts = np.linspace(0, len(step["mlm_labels"]), replicas + 1).astype(int)
    if replicas > 1:
        cuts[1] -= 1  # unequal slices
    parts = [_statistics(step, slice(start, stop)) for start, stop in zip(cuts[:-1], cuts[1:])]
    return tf.nest.map_structure(lambda *values: tf.add_n(values), *parts)


def _weighted(step, prefix, *names):
    keep = step[f"{prefix}_weights"] > 0
    return [step[name][keep] for name in names]


def _softmax(logits):
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


@pytest.mark.parametrize("replicas, batch_sizes", [(1, [8]), (3, [8]), (3, [8, 5, 11, 6])])
def test_pooled_metrics_equal_sklearn_on_the_concatenated_tokens(replicas, batch_sizes):
    rng = np.random.default_rng(replicas * 10 + len(batch_sizes))
    steps = [_step(rng, size) for size in batch_sizes]
    metrics = make_pretraining_metrics()
    losses = rng.normal(size=len(steps)) + 10
    for step, loss in zip(steps, losses):
        update_pretraining_metrics(metrics, _summed_over_replicas(step, replicas), loss)
    result = {name: float(metric.result()) for name, metric in metrics.items()}

    def concatenated(prefix, *names):
        return [np.concatenate(values) for values in zip(*(_weighted(step, prefix, *names) for step in steps))]

    mlm_logits, mlm_labels, sampled = concatenated("mlm", "mlm_logits", "mlm_labels", "sampled")
    disc_logits, disc_labels, bins = concatenated("disc", "disc_logits", "disc_labels", "bins")
    predicted = (disc_logits > 0).astype(int)
    assert 0 < predicted.sum() < len(predicted) and 0 < (mlm_logits.argmax(-1) == mlm_labels).sum()
    expected = {
        "loss": np.mean(losses),
        "masked_lm_loss": sk.log_loss(mlm_labels, _softmax(mlm_logits.astype(np.float64)), labels=range(VOCAB)),
        "masked_lm_accuracy": sk.accuracy_score(mlm_labels, mlm_logits.argmax(-1)),
        "sampled_masked_lm_accuracy": sk.accuracy_score(mlm_labels, sampled),
        "disc_loss": sk.log_loss(disc_labels, 1 / (1 + np.exp(-disc_logits.astype(np.float64))), labels=[0, 1]),
        "disc_accuracy": sk.accuracy_score(disc_labels, predicted),
        "disc_precision": sk.precision_score(disc_labels, predicted),
        "disc_recall": sk.recall_score(disc_labels, predicted),
        "disc_auc": sk.roc_auc_score(disc_labels, bins),
        "disc_replaced_fraction": disc_labels.mean(),
    }
    assert result.keys() == expected.keys()
    for name, value in expected.items():
        assert result[name] == pytest.approx(value, rel=1e-5), name
    # The bins lose little: the AUC of the raw scores is within a bin's width.
    assert abs(result["disc_auc"] - sk.roc_auc_score(disc_labels, disc_logits)) < 1e-3


@pytest.mark.parametrize("num_bins, replicas", [(AUC_BINS, 1), (AUC_BINS, 4), (7, 2)])
def test_binned_auc_equals_sklearn_with_ties_counted_half(num_bins, replicas):
    rng = np.random.default_rng(num_bins + replicas)
    labels = (rng.random(3000) < 0.3).astype(int)
    bins = np.clip(
        rng.integers(0, num_bins, size=3000) + labels * rng.integers(0, num_bins // 3 + 1, size=3000), 0, num_bins - 1
    )
    auc = BinnedAUC(num_bins=num_bins)
    # Each replica's histograms are added into the metric's state, as the all-reduce adds them.
    for part in np.array_split(np.arange(3000), replicas):
        auc.update_state(
            np.bincount(bins[part][labels[part] == 1], minlength=num_bins),
            np.bincount(bins[part][labels[part] == 0], minlength=num_bins),
        )
    assert float(auc.result()) == pytest.approx(sk.roc_auc_score(labels, bins), rel=1e-5)
    auc.reset_state()
    assert float(auc.result()) == 0.0
    restored = BinnedAUC.from_config(auc.get_config())
    assert restored.num_bins == num_bins and restored.name == auc.name
