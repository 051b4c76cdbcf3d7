"""Comparing networks fine-tuned on GLUE tasks (`python -m finetune.commands.glue_compare` prints it): each task's
median over trials of the paper's metric (`finetune.glue.metrics.task_scores`: MCC for CoLA, Spearman for STS-B,
accuracy otherwise), the average over tasks, and paired bootstrap intervals of the differences between networks.

An interval resamples the dev examples with replacement, the same rows for every trial and both networks, and
recomputes the difference of the medians: what another draw of dev examples of the same size would show for these
trained models (it does not cover the variation between seeds, which the spread of the trials shows). The average's
interval resamples each task's dev set independently.
"""

import glob
import os
import re

import numpy as np

from electra_tf.analysis.detection_metrics import percentile_interval
from electra_tf.errors import ConfigError, DataError
from finetune.glue.metrics import CONVENTIONS, task_metrics
from finetune.glue.predictions import read_predictions
from finetune.glue.readers import split_labels
from finetune.glue.tasks import glue_task_spec

PREDICTIONS_FILE = "dev_predictions.tsv"


def paper_score(task, labels, predictions):
    """The task's paper metric (0-100) of `predictions` against `labels` (label ids; STS-B scores)."""
    spec = glue_task_spec(task)
    (metric,) = CONVENTIONS["paper"][spec.name]
    return task_metrics(spec, labels, predictions)[metric]


def task_output_dirs(run, task):
    """The fine-tuning output directories of `run` on `task` (its GLUE name): `<run>/<task>` for a run directory, as
    `electra-finetune --output_dir=<run>/<task>` writes them; for a mapping {task: [output directories]}, its list."""
    return [os.path.join(run, task)] if isinstance(run, (str, os.PathLike)) else list(run[task])


def trial_predictions(output_dirs, task, num_examples):
    """The dev predictions of every finished trial in the fine-tuning output directories `output_dirs`
    (`<output_dir>/trial_<k>/dev_predictions.tsv`), one array per trial: directory by directory, in trial order."""
    spec = glue_task_spec(task)
    predictions = []
    for output_dir in output_dirs:
        pattern = os.path.join(output_dir, "trial_*", PREDICTIONS_FILE)
        paths = sorted(glob.glob(pattern), key=lambda path: int(re.search(r"trial_(\d+)", path).group(1)))
        if not paths:
            raise DataError(f"no {pattern}; fine-tune the network on {spec.name} with its output_dir {output_dir}")
        predictions += [read_predictions(path, spec, num_examples) for path in paths]
    return predictions


def median_score(task, labels, trials, rows=None):
    """Median over `trials` of the paper score, on the dev examples at `rows` (all when None)."""
    if rows is not None:
        labels, trials = labels[rows], [predictions[rows] for predictions in trials]
    return float(np.median([paper_score(task, labels, predictions) for predictions in trials]))


def bootstrap_differences(tasks, labels, first, second, num_resamples=1000, seed=0):
    """Resampled differences (first - second) of each task's median score and of their average over tasks.

    `labels` maps task -> dev labels; `first` and `second` map task -> list of trial predictions. Returns
    {task: array of num_resamples differences, "average": array}; a resample on which a metric is undefined (a
    constant prediction's correlation) gives NaN there.
    """
    rng = np.random.default_rng(seed)
    differences = {task: np.empty(num_resamples) for task in tasks}
    for index in range(num_resamples):
        for task in tasks:
            rows = rng.integers(0, len(labels[task]), len(labels[task]))
            differences[task][index] = median_score(task, labels[task], first[task], rows) - median_score(
                task, labels[task], second[task], rows
            )
    differences["average"] = np.mean([differences[task] for task in tasks], axis=0)
    return differences


def interval(values, confidence=0.95):
    """Percentile interval (low, high) of `values`, NaNs left out (`percentile_interval`: (nan, nan) when fewer than
    half are numbers)."""
    values = np.asarray(values, dtype=np.float64)
    return percentile_interval(values[~np.isnan(values)], len(values), confidence)


def compare(data_dir, runs, tasks, num_resamples=1000, confidence=0.95, seed=0):
    """The comparison of `runs` ({name: run}, the first the reference; a run is a directory or a mapping, see
    `task_output_dirs`) on `tasks`, whose dev labels are read from `data_dir`, as a dict: per network each task's
    median, min and max over trials and the average of the medians; per other network the difference from the first,
    with its interval, per task and for the average."""
    if len(runs) < 2:
        raise ConfigError("runs needs at least two networks to compare, as name=directory", arguments=("runs",))
    tasks = [glue_task_spec(task).name for task in tasks]
    if not tasks:
        raise ConfigError("tasks is empty; name at least one GLUE task", arguments=("tasks",))
    labels = {task: split_labels(data_dir, task) for task in tasks}
    predictions = {
        name: {task: trial_predictions(task_output_dirs(run, task), task, len(labels[task])) for task in tasks}
        for name, run in runs.items()
    }
    networks = {}
    for name in runs:
        scores = {task: [paper_score(task, labels[task], p) for p in predictions[name][task]] for task in tasks}
        networks[name] = {
            task: {"median": float(np.median(s)), "min": min(s), "max": max(s), "trials": len(s)}
            for task, s in scores.items()
        }
        networks[name]["average"] = float(np.mean([networks[name][task]["median"] for task in tasks]))
    reference, *others = runs
    differences = {}
    for other in others:
        resampled = bootstrap_differences(
            tasks, labels, predictions[reference], predictions[other], num_resamples, seed
        )
        differences[other] = {}
        for part in tasks + ["average"]:
            first = networks[reference][part] if part == "average" else networks[reference][part]["median"]
            second = networks[other][part] if part == "average" else networks[other][part]["median"]
            low, high = interval(resampled[part], confidence)
            differences[other][part] = {"difference": first - second, "low": low, "high": high}
    return {
        "reference": reference,
        "tasks": tasks,
        "confidence": confidence,
        "num_resamples": num_resamples,
        "networks": networks,
        "differences": differences,
    }


def markdown(comparison):
    """The comparison as two Markdown tables: scores (median, min-max over trials) and differences with intervals."""
    tasks, reference = comparison["tasks"], comparison["reference"]
    lines = ["| network | " + " | ".join(tasks) + " | average |", "|---" * (len(tasks) + 2) + "|"]
    for name, scores in comparison["networks"].items():
        cells = [f"{scores[t]['median']:.1f} ({scores[t]['min']:.1f}-{scores[t]['max']:.1f})" for t in tasks]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {scores['average']:.1f} |")
    percent = round(100 * comparison["confidence"])
    lines += ["", f"| {reference} minus | " + " | ".join(tasks) + " | average |", "|---" * (len(tasks) + 2) + "|"]
    for other, parts in comparison["differences"].items():
        cells = [
            f"{_signed(parts[p]['difference'])} [{_signed(parts[p]['low'])}, {_signed(parts[p]['high'])}]"
            for p in tasks + ["average"]
        ]
        lines.append(f"| {other} | " + " | ".join(cells) + " |")
    lines.append(f"\nMedian over trials (min-max); differences of medians with {percent} % paired bootstrap intervals.")
    return "\n".join(lines)


def _signed(value):
    """`value` with its sign and one decimal; "n/a" for an interval left open (NaN, or None as read back from JSON)."""
    return "n/a" if value is None or np.isnan(value) else f"{value:+.1f}"


def parse_runs(values):
    """{name: directory} from `name=directory` strings, in order."""
    runs = {}
    for value in values or []:
        name, separator, directory = value.partition("=")
        if not separator or not name or not directory:
            raise ConfigError(f"runs entry {value!r} is not name=directory", arguments=("runs",))
        if name in runs:
            raise ConfigError(f"runs names {name!r} twice; give each network its own name", arguments=("runs",))
        runs[name] = directory
    return runs
