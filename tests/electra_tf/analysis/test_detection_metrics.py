"""Detection and calibration measures against independent implementations: scikit-learn, SciPy, and loops over the
definitions written here."""

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score

from electra_tf.analysis import detection_metrics


def _random_case(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(5, 400))
    positive_rate = rng.choice([0.02, 0.1, 0.5, 0.9])
    labels = (rng.random(size) < positive_rate).astype(int)
    labels[rng.integers(size)], labels[rng.integers(size)] = 0, 1  # both classes (the two draws may collide)
    labels[0], labels[1] = 0, 1
    # Coarse rounding makes ties, which is where implementations differ.
    probabilities = np.round(rng.beta(0.7, 2.0, size) + 0.2 * labels * rng.random(size), int(rng.choice([1, 2, 6])))
    return labels, np.clip(probabilities, 0, 1)


@pytest.mark.parametrize("seed", range(40))
def test_auroc_average_precision_and_brier_equal_scikit_learn(seed):
    labels, probabilities = _random_case(seed)
    assert detection_metrics.auroc(labels, probabilities) == pytest.approx(
        roc_auc_score(labels, probabilities), abs=1e-12
    )
    assert detection_metrics.average_precision(labels, probabilities) == pytest.approx(
        average_precision_score(labels, probabilities), abs=1e-12
    )
    assert detection_metrics.brier(labels, probabilities) == pytest.approx(
        brier_score_loss(labels, probabilities), abs=1e-12
    )


def _ece_by_the_formula(labels, probabilities, bins=15):
    total = 0.0
    for k in range(bins):
        inside = [
            (label, p)
            for label, p in zip(labels, probabilities)
            if k / bins <= p < (k + 1) / bins or (k == bins - 1 and p == 1.0)
        ]
        if inside:
            gap = np.mean([label for label, _ in inside]) - np.mean([p for _, p in inside])
            total += len(inside) / len(labels) * abs(gap)
    return total


@pytest.mark.parametrize("seed", range(10))
def test_expected_calibration_error_is_the_formula(seed):
    labels, probabilities = _random_case(seed)
    probabilities[:3] = [0.0, 1.0, 14 / 15]  # the edges: p = 1 belongs to the last bin
    assert detection_metrics.expected_calibration_error(labels, probabilities) == pytest.approx(
        _ece_by_the_formula(labels, probabilities), abs=1e-12
    )


def test_a_calibrated_source_has_small_ece_and_an_overconfident_one_does_not():
    rng = np.random.default_rng(0)
    p = rng.random(200_000)
    labels = (rng.random(p.size) < p).astype(int)
    assert detection_metrics.expected_calibration_error(labels, p) < 0.01
    assert detection_metrics.expected_calibration_error(labels, np.where(p > 0.5, 1.0, 0.0)) > 0.2


def test_temperature_scaling_recovers_the_generating_temperature_and_minimises_log_loss():
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(1)
    logits = rng.normal(0, 3, 100_000)
    labels = (rng.random(logits.size) < detection_metrics.sigmoid(logits / 2.5)).astype(int)
    temperature = detection_metrics.fit_temperature(labels, logits)
    assert temperature == pytest.approx(2.5, rel=0.03)
    reference = minimize_scalar(
        lambda t: detection_metrics.binary_log_loss(labels, logits / t),
        bounds=(0.1, 10),
        method="bounded",
        options={"xatol": 1e-8},
    ).x
    assert temperature == pytest.approx(reference, rel=1e-4)
    best = detection_metrics.binary_log_loss(labels, logits / temperature)
    for other in (1.0, 2.25, 2.75):
        assert best <= detection_metrics.binary_log_loss(labels, logits / other)
    assert detection_metrics.apply_temperature(logits[:5], temperature) == pytest.approx(
        1 / (1 + np.exp(-logits[:5] / temperature))
    )


@pytest.mark.parametrize("seed", range(15))
def test_best_threshold_is_the_brute_force_best_f0_5(seed):
    labels, probabilities = _random_case(seed)
    candidates = []
    for threshold in np.unique(probabilities):
        predicted = probabilities >= threshold
        tp = np.sum(predicted & (labels == 1))
        precision, recall = tp / np.sum(predicted), tp / np.sum(labels)
        f = 0.0 if tp == 0 else 1.25 * precision * recall / (0.25 * precision + recall)
        candidates.append((f, threshold, precision, recall))
    f, threshold, precision, recall = max(candidates)  # the highest F, then the highest threshold
    assert detection_metrics.best_threshold(labels, probabilities) == pytest.approx((threshold, precision, recall, f))
    assert detection_metrics.precision_recall_fbeta(labels, (probabilities >= threshold).astype(int)) == pytest.approx(
        (precision, recall, f)
    )


def test_bootstrap_interval_brackets_the_estimate_and_is_reproducible():
    labels, probabilities = _random_case(3)
    interval = detection_metrics.bootstrap_interval(detection_metrics.auroc, (labels, probabilities), num_resamples=300)
    assert interval[0] < detection_metrics.auroc(labels, probabilities) < interval[1]
    assert interval == detection_metrics.bootstrap_interval(
        detection_metrics.auroc, (labels, probabilities), num_resamples=300
    )

    def mostly_undefined(values):
        if values[0] < 0.9:  # about 90 % of the resamples
            raise ValueError("undefined")
        return float(values.mean())

    assert np.isnan(
        detection_metrics.bootstrap_interval(mostly_undefined, (np.linspace(0, 1, 101),), num_resamples=200)
    ).all()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: detection_metrics.auroc([0, 1, 2], [0.1, 0.2, 0.3]), "labels must be 0 or 1, got \\[2\\]"),
        (lambda: detection_metrics.auroc([0, 1], [0.1]), "labels and scores differ in length: 2 and 1"),
        (lambda: detection_metrics.auroc([1, 1], [0.1, 0.2]), "auroc needs both classes"),
        (lambda: detection_metrics.brier([0, 1], [0.1, 1.2]), "probabilities must lie in \\[0, 1\\]"),
        (lambda: detection_metrics.fit_temperature([0, 1], [0.0, np.inf]), "logits must be finite"),
        (lambda: detection_metrics.apply_temperature([0.0], 0.0), "temperature must be > 0"),
    ],
)
def test_bad_inputs_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
