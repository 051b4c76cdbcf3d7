"""GLUE metrics against scikit-learn / SciPy on the real dev labels, and the two GLUE-average conventions."""

import math

import numpy as np
import pytest

from electra_tf.errors import ConfigError
from finetune.glue import metrics
from finetune.glue.readers import read_examples
from finetune.glue.tasks import glue_task_spec

sklearn_metrics = pytest.importorskip("sklearn.metrics")
scipy_stats = pytest.importorskip("scipy.stats")

CLASSIFICATION_DEV = ["CoLA", "SST-2", "MRPC", "RTE", "WNLI", "QNLI"]


def _dev_label_ids(shared_data, task):
    spec = glue_task_spec(task)
    examples = read_examples(str(shared_data / "glue"), task, "dev")
    return np.array([spec.labels.index(example.label) for example in examples])


@pytest.mark.parametrize("task", CLASSIFICATION_DEV)
@pytest.mark.parametrize("seed", [0, 1])
def test_classification_metrics_equal_sklearn_on_real_dev_labels(shared_data, task, seed):
    labels = _dev_label_ids(shared_data, task)
    rng = np.random.default_rng(seed)
    # Random predictions, and predictions that agree with the labels 80% of the time (a non-trivial correlation).
    for predictions in (rng.integers(0, 2, len(labels)), np.where(rng.random(len(labels)) < 0.8, labels, 1 - labels)):
        assert metrics.accuracy(labels, predictions) == pytest.approx(
            100 * sklearn_metrics.accuracy_score(labels, predictions), abs=1e-9
        )
        assert metrics.f1(labels, predictions) == pytest.approx(
            100 * sklearn_metrics.f1_score(labels, predictions), abs=1e-9
        )
        assert metrics.matthews_corrcoef(labels, predictions) == pytest.approx(
            100 * sklearn_metrics.matthews_corrcoef(labels, predictions), abs=1e-9
        )


def test_three_class_mcc_and_accuracy_equal_sklearn():
    rng = np.random.default_rng(3)
    labels, predictions = rng.integers(0, 3, 500), rng.integers(0, 3, 500)
    predictions[:200] = labels[:200]
    assert metrics.matthews_corrcoef(labels, predictions) == pytest.approx(
        100 * sklearn_metrics.matthews_corrcoef(labels, predictions), abs=1e-9
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correlations_equal_scipy_on_real_stsb_dev_scores(shared_data, seed):
    scores = np.array([example.label for example in read_examples(str(shared_data / "glue"), "STS-B", "dev")])
    rng = np.random.default_rng(seed)
    noisy = scores + rng.normal(0, 1.5, len(scores))
    # Rounded predictions tie heavily (as do the labels): Spearman must use average ranks.
    for predictions in (rng.uniform(0, 5, len(scores)), noisy, np.round(noisy)):
        assert metrics.pearson(scores, predictions) == pytest.approx(
            100 * scipy_stats.pearsonr(scores, predictions)[0], abs=1e-9
        )
        assert metrics.spearman(scores, predictions) == pytest.approx(
            100 * scipy_stats.spearmanr(scores, predictions)[0], abs=1e-9
        )
    assert np.array_equal(metrics.average_ranks(np.round(noisy)), scipy_stats.rankdata(np.round(noisy)))


def test_task_metrics_pick_each_tasks_metrics(shared_data):
    labels = _dev_label_ids(shared_data, "MRPC")
    predictions = np.ones_like(labels)
    result = metrics.task_metrics("MRPC", labels, predictions)
    assert set(result) == {"accuracy", "f1"}
    assert result["accuracy"] == pytest.approx(100 * labels.mean())
    assert result["f1"] == pytest.approx(100 * sklearn_metrics.f1_score(labels, predictions))
    assert set(metrics.task_metrics("CoLA", labels, predictions)) == {"mcc"}
    assert set(metrics.task_metrics("STS-B", [1.0, 2.0, 3.0], [1.0, 3.0, 2.0])) == {"pearson", "spearman"}


def test_undefined_cases_follow_sklearn_and_scipy():
    labels = np.array([0, 1, 1, 0])
    constant = np.zeros(4, dtype=int)
    assert metrics.matthews_corrcoef(labels, constant) == 0.0 == sklearn_metrics.matthews_corrcoef(labels, constant)
    assert metrics.f1(np.zeros(4), constant) == 0.0
    assert math.isnan(metrics.pearson([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]))
    with pytest.raises(ValueError, match="equal length"):
        metrics.accuracy([0, 1], [0])


def test_score_keys():
    assert metrics.score_key("MNLI", "dev") == "MNLI-m"
    assert metrics.score_key("MNLI", "dev_mismatched") == "MNLI-mm"
    assert metrics.score_key("sst2") == "SST-2"


def test_glue_leaderboard_convention_reproduces_bert_large_score():
    # BERT-Large on the GLUE test server (Devlin et al. 2019, Table 1 / gluebenchmark.com): score 80.5.
    results = {
        "CoLA": {"mcc": 60.5},
        "SST-2": {"accuracy": 94.9},
        "MRPC": {"f1": 89.3, "accuracy": 85.4},
        "STS-B": {"pearson": 87.6, "spearman": 86.5},
        "QQP": {"f1": 72.1, "accuracy": 89.3},
        "MNLI-m": {"accuracy": 86.7},
        "MNLI-mm": {"accuracy": 85.9},
        "QNLI": {"accuracy": 92.7},
        "RTE": {"accuracy": 70.1},
        "WNLI": {"accuracy": 65.1},
    }
    assert round(metrics.glue_average(results, convention="glue"), 1) == 80.5
    # Same numbers under the paper's convention: 8 tasks, one metric each, MNLI matched, no WNLI.
    paper = (60.5 + 94.9 + 85.4 + 86.5 + 89.3 + 86.7 + 92.7 + 70.1) / 8
    assert metrics.glue_average(results) == pytest.approx(paper)


def test_paper_convention_on_electra_base_dev_numbers():
    # Released ELECTRA-Base GLUE dev (CoLA/SST/MRPC/STS/QQP/MNLI/QNLI/RTE), as in ELECTRA_REFERENCE.md section 5.
    numbers = dict(
        zip(
            ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI-m", "QNLI", "RTE"],
            [67.7, 95.1, 89.5, 91.2, 91.5, 88.8, 93.2, 82.7],
        )
    )
    metric = {"CoLA": "mcc", "STS-B": "spearman"}
    results = {key: {metric.get(key, "accuracy"): value} for key, value in numbers.items()}
    assert metrics.glue_average(results) == pytest.approx(699.7 / 8)


def test_missing_tasks_raise_unless_allowed():
    results = {"CoLA": {"mcc": 50.0}, "RTE": {"accuracy": 70.0}, "WNLI": {"accuracy": 10.0}}
    with pytest.raises(ConfigError, match="needs results for SST-2, MRPC"):
        metrics.glue_average(results)
    assert metrics.glue_average(results, allow_missing=True) == 60.0  # WNLI is not in the paper's average
    assert metrics.glue_average(results, convention="glue", allow_missing=True) == pytest.approx(130.0 / 3)
    # MNLI needs both dev sets under the leaderboard convention.
    assert "MNLI" not in metrics.task_scores({"MNLI-m": {"accuracy": 80.0}}, convention="glue")
    with pytest.raises(ConfigError, match="unknown GLUE average convention"):
        metrics.glue_average(results, convention="superglue")
