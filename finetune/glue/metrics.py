"""GLUE metrics in NumPy (values in 0-100) and the GLUE average in the paper's and the leaderboard's conventions.

Undefined cases follow scikit-learn / SciPy: Matthews correlation and F1 are 0 when their denominator is 0;
Pearson and Spearman are NaN when either side is constant.

GLUE average conventions (`glue_average`):

* "paper" (default; ELECTRA paper, GLUE dev): the mean over CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI and RTE of one
  number per task: Matthews corr. for CoLA, Spearman for STS-B, accuracy for the rest (MNLI: matched). WNLI is left
  out, as in the paper.
* "glue" (the gluebenchmark.com leaderboard score): the mean over the nine tasks including WNLI, where a task with
  two metrics contributes their mean (MRPC and QQP: F1 and accuracy; STS-B: Pearson and Spearman) and MNLI
  contributes the mean of its matched and mismatched accuracies.

Results are keyed by `score_key(task, split)`: the task name, or "MNLI-m" / "MNLI-mm" for MNLI's dev sets.
"""

import numpy as np

from electra_tf.errors import ConfigError
from finetune.glue.tasks import glue_task_spec


def accuracy(labels, predictions):
    """Percentage of predictions equal to the labels."""
    labels, predictions = _paired(labels, predictions)
    return 100.0 * float(np.mean(labels == predictions))


def f1(labels, predictions, positive=1):
    """Binary F1 (in percent) of class `positive`."""
    labels, predictions = _paired(labels, predictions)
    true_positives = np.sum((predictions == positive) & (labels == positive))
    predicted, actual = np.sum(predictions == positive), np.sum(labels == positive)
    denominator = predicted + actual
    return 0.0 if denominator == 0 else 100.0 * float(2 * true_positives / denominator)


def matthews_corrcoef(labels, predictions):
    """Matthews correlation (in percent), the multi-class form (Gorodkin's R_K), equal to the usual binary one."""
    labels, predictions = _paired(labels, predictions)
    _, label_ids = np.unique(np.concatenate([labels, predictions]), return_inverse=True)
    num_classes = int(label_ids.max()) + 1
    confusion = np.zeros((num_classes, num_classes), dtype=np.float64)
    np.add.at(confusion, (label_ids[: len(labels)], label_ids[len(labels) :]), 1.0)
    true_counts, predicted_counts = confusion.sum(axis=1), confusion.sum(axis=0)
    total, correct = confusion.sum(), np.trace(confusion)
    covariance = correct * total - true_counts @ predicted_counts
    denominator = np.sqrt((total**2 - predicted_counts @ predicted_counts) * (total**2 - true_counts @ true_counts))
    return 0.0 if denominator == 0 else 100.0 * float(covariance / denominator)


def pearson(labels, predictions):
    """Pearson correlation (in percent); NaN if either side is constant."""
    labels, predictions = _paired(labels, predictions, dtype=np.float64)
    x, y = labels - labels.mean(), predictions - predictions.mean()
    denominator = np.sqrt(np.sum(x * x) * np.sum(y * y))
    return float("nan") if denominator == 0 else 100.0 * float(np.clip(np.sum(x * y) / denominator, -1.0, 1.0))


def average_ranks(values):
    """1-based ranks of `values`, tied values sharing the mean of their ranks."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts_group = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    group_of = np.cumsum(starts_group) - 1
    bounds = np.concatenate([np.flatnonzero(starts_group), [len(values)]])
    # A group covering sorted positions [start, end) holds ranks start+1..end, whose mean is (start+1+end)/2.
    group_rank = (bounds[:-1] + 1 + bounds[1:]) / 2.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = group_rank[group_of]
    return ranks


def spearman(labels, predictions):
    """Spearman rank correlation (in percent): Pearson of the average ranks."""
    labels, predictions = _paired(labels, predictions, dtype=np.float64)
    return pearson(average_ranks(labels), average_ranks(predictions))


def task_metrics(task, labels, predictions):
    """The task's metrics, e.g. {"accuracy": 88.0, "f1": 91.2} for MRPC, values in 0-100.

    Classification labels and predictions are label ids (positions in the task's `labels`); STS-B takes scores.
    """
    spec = glue_task_spec(task)
    results = {}
    for name in spec.metric_names:
        if name == "f1":
            results[name] = f1(labels, predictions, positive=spec.labels.index(spec.positive_label))
        else:
            results[name] = _METRICS[name](labels, predictions)
    return results


def score_key(task, split="dev"):
    """How a dev result is keyed for `glue_average`: the task name, or "MNLI-m" / "MNLI-mm"."""
    spec = glue_task_spec(task)
    split = spec.resolve_split(split)
    if spec.name == "MNLI":
        return "MNLI-mm" if split.endswith("mismatched") else "MNLI-m"
    return spec.name


_PAPER_TASKS = {
    "CoLA": ("mcc",),
    "SST-2": ("accuracy",),
    "MRPC": ("accuracy",),
    "STS-B": ("spearman",),
    "QQP": ("accuracy",),
    "MNLI": ("MNLI-m",),
    "QNLI": ("accuracy",),
    "RTE": ("accuracy",),
}
_GLUE_TASKS = {
    "CoLA": ("mcc",),
    "SST-2": ("accuracy",),
    "MRPC": ("f1", "accuracy"),
    "STS-B": ("pearson", "spearman"),
    "QQP": ("f1", "accuracy"),
    "MNLI": ("MNLI-m", "MNLI-mm"),
    "QNLI": ("accuracy",),
    "RTE": ("accuracy",),
    "WNLI": ("accuracy",),
}
CONVENTIONS = {"paper": _PAPER_TASKS, "glue": _GLUE_TASKS}


def task_scores(results, convention="paper"):
    """One score per task under `convention` from `results` ({score_key: {metric: value}}), for available tasks."""
    if convention not in CONVENTIONS:
        raise ConfigError(f"unknown GLUE average convention {convention!r}; choose one of {', '.join(CONVENTIONS)}")
    scores = {}
    for task, parts in CONVENTIONS[convention].items():
        if task == "MNLI":
            # MNLI's parts are its two dev sets, each scored by accuracy.
            values = [results[key]["accuracy"] for key in parts if key in results]
            complete = len(values) == len(parts)
        else:
            values = [results[task][metric] for metric in parts if metric in results.get(task, {})]
            complete = len(values) == len(parts)
        if complete:
            scores[task] = float(np.mean(values))
    return scores


def glue_average(results, convention="paper", allow_missing=False):
    """The GLUE average of `results` ({score_key: {metric: value}}) under `convention` (see module docstring).

    Tasks outside the convention (WNLI for "paper") are ignored. A task missing from `results` raises ConfigError
    unless `allow_missing`, in which case the average is over the tasks present.
    """
    scores = task_scores(results, convention)
    missing = [task for task in CONVENTIONS[convention] if task not in scores]
    if missing and not allow_missing:
        raise ConfigError(
            f"GLUE average ({convention} convention) needs results for {', '.join(missing)}; "
            "evaluate them or pass allow_missing=True"
        )
    if not scores:
        raise ConfigError(f"no task results to average (got keys {sorted(results)})")
    return float(np.mean(list(scores.values())))


_METRICS = {"accuracy": accuracy, "mcc": matthews_corrcoef, "pearson": pearson, "spearman": spearman}


def _paired(labels, predictions, dtype=None):
    labels, predictions = np.asarray(labels, dtype=dtype), np.asarray(predictions, dtype=dtype)
    if labels.ndim != 1 or labels.shape != predictions.shape:
        raise ValueError(
            f"labels and predictions must be 1-D of equal length, got shapes {labels.shape} and {predictions.shape}"
        )
    if len(labels) == 0:
        raise ValueError("no labels to score")
    return labels, predictions
