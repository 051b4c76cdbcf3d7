"""Detection and calibration measures of binary scores (labels 0/1, 1 = the positive class, e.g. "an error").

Definitions follow scikit-learn's where it has one (`auroc` = roc_auc_score, `average_precision` =
average_precision_score, `brier` = brier_score_loss); tied scores are one threshold, as there. Values are fractions.
"""

import numpy as np

CALIBRATION_BINS = 15


def _checked(labels, values, name="scores", probabilities=False):
    labels = np.asarray(labels).reshape(-1)
    values = np.asarray(values, np.float64).reshape(-1)
    if labels.shape != values.shape:
        raise ValueError(f"labels and {name} differ in length: {labels.size} and {values.size}")
    if labels.size and not np.isin(labels, (0, 1)).all():
        raise ValueError(f"labels must be 0 or 1, got {sorted(set(np.unique(labels).tolist()) - {0, 1})[:5]}")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite")
    if probabilities and ((values < 0) | (values > 1)).any():
        raise ValueError(f"{name} must lie in [0, 1]")
    return labels.astype(np.int64), values


def _curve(labels, scores):
    """Cumulative true and false positives at each distinct score, from the highest down."""
    order = np.argsort(-scores, kind="mergesort")
    scores, labels = scores[order], labels[order]
    last_of_each_score = np.r_[np.flatnonzero(np.diff(scores)), labels.size - 1]
    true_positives = np.cumsum(labels)[last_of_each_score]
    false_positives = last_of_each_score + 1 - true_positives
    return true_positives, false_positives


def _both_classes(labels, measure):
    if labels.size == 0 or labels.min() == labels.max():
        raise ValueError(f"{measure} needs both classes among the labels")


def auroc(labels, scores):
    """Area under the ROC curve (trapezoids between distinct thresholds: a tie counts one half)."""
    labels, scores = _checked(labels, scores)
    _both_classes(labels, "auroc")
    true_positives, false_positives = _curve(labels, scores)
    tpr = np.r_[0.0, true_positives / true_positives[-1]]
    fpr = np.r_[0.0, false_positives / false_positives[-1]]
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def average_precision(labels, scores):
    """Sum over distinct thresholds of (R_n - R_{n-1}) P_n (no interpolation)."""
    labels, scores = _checked(labels, scores)
    _both_classes(labels, "average_precision")
    true_positives, false_positives = _curve(labels, scores)
    precision = true_positives / (true_positives + false_positives)
    recall = np.r_[0.0, true_positives / true_positives[-1]]
    return float(np.sum(np.diff(recall) * precision))


def brier(labels, probabilities):
    """Mean squared difference between probability and label."""
    labels, probabilities = _checked(labels, probabilities, "probabilities", probabilities=True)
    return float(np.mean((probabilities - labels) ** 2))


def reliability_bins(labels, probabilities, num_bins=CALIBRATION_BINS):
    """Per equal-width bin [k/num_bins, (k+1)/num_bins) of p (p = 1 in the last): (lower, upper, count, mean p,
    mean label); means are nan for an empty bin."""
    labels, probabilities = _checked(labels, probabilities, "probabilities", probabilities=True)
    index = np.minimum((probabilities * num_bins).astype(np.int64), num_bins - 1)
    bins = []
    for k in range(num_bins):
        members = index == k
        count = int(members.sum())
        bins.append(
            (
                k / num_bins,
                (k + 1) / num_bins,
                count,
                float(probabilities[members].mean()) if count else float("nan"),
                float(labels[members].mean()) if count else float("nan"),
            )
        )
    return bins


def expected_calibration_error(labels, probabilities, num_bins=CALIBRATION_BINS):
    """Sum over non-empty bins of |bin| / n x |mean label - mean p| (bins as `reliability_bins`)."""
    bins = reliability_bins(labels, probabilities, num_bins)
    total = sum(count for _, _, count, _, _ in bins)
    if total == 0:
        raise ValueError("expected_calibration_error needs at least one probability")
    return float(sum(count / total * abs(mean_label - mean_p) for _, _, count, mean_p, mean_label in bins if count))


def sigmoid(logits):
    logits = np.asarray(logits, np.float64)
    return np.exp(-np.logaddexp(0.0, -logits))


def apply_temperature(logits, temperature):
    """sigmoid(logits / temperature)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return sigmoid(np.asarray(logits, np.float64) / temperature)


def binary_log_loss(labels, logits):
    """Mean negative log-likelihood of labels under sigmoid(logits), computed from the logits (no overflow)."""
    labels, logits = _checked(labels, logits, "logits")
    return float(np.mean(np.logaddexp(0.0, -logits) * labels + np.logaddexp(0.0, logits) * (1 - labels)))


def fit_temperature(labels, logits, bounds=(1e-2, 1e2), tolerance=1e-7):
    """The temperature T in `bounds` minimising `binary_log_loss(labels, logits / T)` (temperature scaling, Guo et al.
    2017, for one logit). The loss is unimodal in log T on the bounds for all but degenerate data; a golden-section
    search in log T finds its minimum without scipy."""
    labels, logits = _checked(labels, logits, "logits")
    _both_classes(labels, "fit_temperature")

    def loss(log_t):
        return binary_log_loss(labels, logits / np.exp(log_t))

    low, high = np.log(bounds[0]), np.log(bounds[1])
    ratio = (np.sqrt(5.0) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    loss_a, loss_b = loss(a), loss(b)
    while high - low > tolerance:
        if loss_a <= loss_b:
            high, b, loss_b = b, a, loss_a
            a = high - ratio * (high - low)
            loss_a = loss(a)
        else:
            low, a, loss_a = a, b, loss_b
            b = low + ratio * (high - low)
            loss_b = loss(b)
    return float(np.exp((low + high) / 2))


def precision_recall_fbeta(labels, predictions, beta=0.5):
    """(precision, recall, F_beta) of the positive class of 0/1 `predictions`; each 0 when undefined."""
    labels, predictions = _checked(labels, predictions, "predictions")
    true_positives = float(np.sum((predictions == 1) & (labels == 1)))
    predicted, actual = float(np.sum(predictions == 1)), float(np.sum(labels == 1))
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / actual if actual else 0.0
    denominator = beta**2 * precision + recall
    return precision, recall, (1 + beta**2) * precision * recall / denominator if denominator else 0.0


def best_threshold(labels, probabilities, beta=0.5):
    """(threshold, precision, recall, F_beta) of the threshold t (positive when p >= t), among the distinct p, with
    the highest F_beta; of equal F_beta, the highest t."""
    labels, probabilities = _checked(labels, probabilities, "probabilities")
    true_positives, false_positives = _curve(labels, probabilities)
    thresholds = np.unique(probabilities)[::-1]  # the distinct p, highest first, as `_curve` orders them
    actual = max(int(labels.sum()), 1)
    precision = true_positives / (true_positives + false_positives)
    recall = true_positives / actual
    denominator = beta**2 * precision + recall
    fbeta = np.divide(
        (1 + beta**2) * precision * recall, denominator, out=np.zeros_like(precision), where=denominator > 0
    )
    best = int(np.argmax(fbeta))  # the first maximum: the highest threshold among equals
    return float(thresholds[best]), float(precision[best]), float(recall[best]), float(fbeta[best])


def bootstrap_interval(statistic, arrays, num_resamples=1000, confidence=0.95, seed=0):
    """Percentile bootstrap (low, high) of `statistic(*arrays)` over rows resampled with replacement; resamples on
    which the statistic raises ValueError (e.g. one class only) are skipped; (nan, nan) when half or more fail."""
    arrays = [np.asarray(array) for array in arrays]
    size = len(arrays[0])
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(num_resamples):
        rows = rng.integers(0, size, size)
        try:
            values.append(statistic(*(array[rows] for array in arrays)))
        except ValueError:
            continue
    return percentile_interval(values, num_resamples, confidence)


def percentile_interval(values, num_resamples, confidence=0.95):
    """Percentile (low, high) of the resampled `values` of a statistic, out of `num_resamples` attempts; (nan, nan)
    when fewer than half of the attempts gave a value."""
    if len(values) * 2 < num_resamples:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
