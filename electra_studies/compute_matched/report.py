"""The compute-matched experiment's outputs: the Markdown table and the plots of a results dict."""

import math
import os
import platform

from electra_tf.io_utils import atomic_write_json, atomic_write_text

RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
CURVES_PNG = "pretraining_curves.png"
DOWNSTREAM_PNG = "downstream.png"
HELDOUT_PNG = "heldout_curves.png"
BASELINE = "random_init"
# The held-out metrics in results.md, in this order (those an objective has).
HELDOUT_COLUMNS = (
    "loss",
    "masked_lm_loss",
    "masked_lm_accuracy",
    "sampled_masked_lm_accuracy",
    "model_mlm_loss",
    "model_mlm_accuracy",
    "disc_loss",
    "disc_accuracy",
    "disc_precision",
    "disc_recall",
    "disc_auc",
)
CURVE_FIELDS = ("step", "flops", "wall_seconds", "eval_batches")  # a curve entry's fields that are not metrics


def _format_flops(value):
    return "0" if not value else f"{value:.3g}"


def _format_score(summary):
    if not summary or summary.get("median") is None:
        return "–"
    return f"{summary['median']:.2f} ({summary['mean']:.2f} ± {summary['std']:.2f})"


def _final_losses(curve):
    if not curve:
        return "–"
    last = curve[-1]
    names = ["loss"] + sorted(name for name in last if name.endswith("_loss") and name != "loss")
    return ", ".join(f"{name} {last[name]:.3f}" for name in names if name in last)


def _seconds(value):
    return "–" if value is None else f"{value:.0f}"


def _objective_label(name, run):
    """The objective's name, and the run it started from (its FLOPs are in the run's)."""
    start = run.get("starts_from")
    return f"{name} (from {start['objective']} step {start['step']})" if start else name


def _comparison_lines(results):
    """The networks against each other on the paper's metric of each task, with paired bootstrap intervals
    (`finetune.glue.comparison`), once every network is fine-tuned."""
    comparison = results.get("comparison")
    if not comparison:
        return []
    from finetune.glue.comparison import markdown

    return [
        "",
        "## The networks against each other",
        "",
        f"Each objective at its last evaluation point and {BASELINE}, on the paper's metric of each task (MCC for "
        "CoLA, Spearman for STS-B, accuracy otherwise; x 100). The intervals resample the dev examples "
        f"({comparison['num_resamples']} times, the same rows for every seed and network): they cover another draw "
        "of dev examples, not another draw of seeds, whose spread the min-max shows.",
        "",
        markdown(comparison),
    ]


def markdown_table(results):
    """results.md: per task, one row per objective (and the random-init baseline), the headline metric's median (mean
    ± std over seeds) at every evaluation point; the networks against each other with intervals; the final held-out
    evaluation of each objective; then the command line, settings and machine."""
    objectives = results["objectives"]
    fractions = sorted({point["fraction"] for run in objectives.values() for point in run["eval_points"]})
    baseline = results.get("baseline")
    budget = results["budget_flops"]
    lines = [
        f"# Compute-matched pre-training objectives: {results['settings']['model_size']} preset, "
        + ", ".join(
            f"{key} {metric}" for key, metric in (task["primary_metric"] for task in results["tasks"].values())
        ),
        "",
        f"Budget {_format_flops(budget)} training FLOPs ({results['budget_source']}; reference accounting, "
        "`electra_tf.flops.objective_pretraining_flops`). Cells: median over fine-tuning seeds (mean ± std) of "
        f"the dev metric, {len(results['settings']['seeds'])} seeds.",
    ]
    for task, described in results["tasks"].items():
        key, metric = described["primary_metric"]
        columns = ["objective", "pre-training steps", "pre-training FLOPs", "final pre-training losses"]
        if baseline:
            columns.append("0 (random init)")
        columns += [f"{fraction:g} x budget ({_format_flops(fraction * budget)} FLOPs)" for fraction in fractions]
        lines += [
            "",
            f"## {key} dev {metric} ({described['num_train_examples']} training examples)",
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
        ]
        for name, run in objectives.items():
            by_fraction = {point["fraction"]: point for point in run["eval_points"]}
            cells = [
                _objective_label(name, run),
                str(run["steps"]),
                _format_flops(run["total_flops"]),
                _final_losses(run.get("pretraining_curve")),
            ]
            if baseline:
                cells.append(_format_score(baseline.get("downstream", {}).get(task)))
            cells += [
                _format_score(by_fraction[f].get("downstream", {}).get(task)) if f in by_fraction else "–"
                for f in fractions
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += _comparison_lines(results)
    lines += _heldout_lines(results)
    lines += [
        "",
        "| objective | FLOPs per step | steps at each evaluation point | pre-training s | fine-tuning s |",
        "|---|---|---|---|---|",
    ]
    for name, run in objectives.items():
        steps = ", ".join(str(point["step"]) for point in run["eval_points"])
        lines.append(
            f"| {_objective_label(name, run)} | {_format_flops(run['flops_per_step'])} | {steps} | "
            f"{_seconds(run.get('pretraining_seconds'))} | {_seconds(run.get('finetuning_seconds'))} |"
        )
    if baseline:
        lines.append(f"| {BASELINE} | 0 | 0 | 0 | {_seconds(baseline.get('finetuning_seconds'))} |")
    lines += [
        "",
        "Pre-training seconds run from a run's first training log to its last (with the masked-LM run's time up to "
        "the step an ELECTRA started from, and any pause between resumed runs); fine-tuning seconds are what the "
        "trials recorded (– where a trial has no record).",
        "",
        "Pre-training metrics are those of the last logged window. `masked_lm_*` is the generator's for "
        "objectives with a generator and the discriminator-sized network's for `mlm` (`model_mlm_*` for "
        "replace_mlm and all_tokens_mlm); `loss` is each objective's own total (ELECTRA's includes 50 x the "
        "discriminator loss), so losses compare within an objective, not across.",
    ]
    machine = results.get("machine", {})
    lines += [
        "",
        "Command:",
        "",
        "```",
        results.get("command", ""),
        "```",
        "",
        f"Machine: {machine.get('cpu_count')} CPUs, {machine.get('platform')}, TensorFlow "
        f"{machine.get('tensorflow')}, Keras {machine.get('keras')}; load average at start "
        f"{machine.get('load_average_at_start')}. This invocation took "
        f"{results.get('wall_seconds', {}).get('total', 0) / 60:.1f} min (the whole experiment's estimate: "
        f"{results.get('estimated_seconds', {}).get('total', 0) / 60:.1f}; stages that an earlier invocation "
        "finished are reused, their times above are their own).",
        "",
    ]
    return "\n".join(lines)


def _heldout_lines(results):
    """The last held-out evaluation of every objective, one row each (nothing without a held-out set)."""
    heldout = results.get("heldout")
    finals = {name: run["heldout_curve"][-1] for name, run in results["objectives"].items() if run.get("heldout_curve")}
    if not heldout or not finals:
        return []
    names = [name for name in HELDOUT_COLUMNS if any(name in entry for entry in finals.values())]
    lines = [
        "",
        "## Held-out evaluation at the end of pre-training",
        "",
        f"{heldout['num_eval_steps']} batches of {heldout['eval_batch_size']} from "
        f"{', '.join(os.path.basename(path) for path in heldout['files'])} (held out of the training data; "
        f"{heldout['num_examples']} examples); every evaluation is in results.json (`heldout_curve`) and "
        f"{HELDOUT_PNG}.",
        "",
        "| objective | step | FLOPs | wall s | " + " | ".join(names) + " |",
        "|" + "---|" * (len(names) + 4),
    ]
    for name, entry in finals.items():
        wall = f"{entry['wall_seconds']:.0f}" if "wall_seconds" in entry else "–"
        values = [f"{entry[column]:.4f}" if column in entry else "–" for column in names]
        lines.append(
            f"| {name} | {entry['step']} | {_format_flops(entry['flops'])} | {wall} | " + " | ".join(values) + " |"
        )
    return lines


def _save_figure(figure, path):
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        figure.savefig(temporary, format="png", dpi=110)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_pretraining_curves(results, path):
    """One panel per logged training metric (every metric of any objective), value against cumulative training FLOPs,
    one line per objective."""
    _plot_curves(results, path, "pretraining_curve", "Pre-training metrics against compute")


def _heldout_metric(name):
    return name.endswith(("loss", "masked_lm_accuracy", "mlm_accuracy", "auc"))


def plot_heldout_curves(results, path, x_axes=("flops", "wall_seconds")):
    """The held-out evaluations (AUC, masked-LM accuracies, losses) against cumulative training FLOPs and, for the
    runs that logged their times, against wall minutes: one panel per metric and axis, one line per objective.
    `x_axes=("flops",)` leaves the wall times out (a run resumed after pauses counts them)."""
    drawn = {x for _, x in curve_panels(results, "heldout_curve", _heldout_metric, x_axes)}
    x_axes = tuple(x for x in x_axes if x in drawn) or x_axes[:1]
    title = "Held-out pre-training metrics against compute" + (" and wall time" if "wall_seconds" in x_axes else "")
    _plot_curves(results, path, "heldout_curve", title, _heldout_metric, x_axes=x_axes)


# The horizontal axes of the curves: a curve entry's field, its label, and the factor its values are drawn with.
X_AXES = {"flops": ("pre-training FLOPs", 1.0), "wall_seconds": ("wall minutes of pre-training", 1 / 60)}


def curve_panels(results, curve, keep=lambda name: True, x_axes=("flops",)):
    """[(metric, x field)] of the panels of a curve plot: every metric of any objective's `curve` that `keep` accepts
    (skipped_steps only when some are), against each field of `x_axes` that some of its entries have."""
    runs = results["objectives"].values()
    names = []
    for run in runs:
        for entry in run.get(curve, []):
            names += [name for name in entry if name not in CURVE_FIELDS and keep(name) and name not in names]
    names = [
        name
        for name in names
        if not (name == "skipped_steps" and not any(entry.get(name) for run in runs for entry in run.get(curve, [])))
    ]
    return [
        (name, x)
        for name in names
        for x in x_axes
        if any(name in entry and x in entry for run in runs for entry in run.get(curve, []))
    ]


def _plot_curves(results, path, curve, title, keep=lambda name: True, x_axes=("flops",)):
    """One metric a row, one column per x axis; with one axis, three metrics a row."""
    plt = _pyplot()
    objectives = results["objectives"]
    panels = curve_panels(results, curve, keep, x_axes)
    if len(x_axes) > 1:
        metrics = list(dict.fromkeys(name for name, _ in panels))
        places = [(metrics.index(name), x_axes.index(x)) for name, x in panels]
        rows, columns = max(1, len(metrics)), len(x_axes)
    else:
        columns = min(3, max(1, len(panels)))
        places = [(index // columns, index % columns) for index in range(len(panels))]
        rows = max(1, math.ceil(len(panels) / columns))
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.2 * rows), squeeze=False)
    for axis in axes.flat:
        axis.axis("off")
    for (name, x), (row, column) in zip(panels, places):
        axis = axes[row][column]
        axis.axis("on")
        label, factor = X_AXES[x]
        for index, (objective, run) in enumerate(objectives.items()):  # an objective keeps its colour everywhere
            points = [(entry[x] * factor, entry[name]) for entry in run.get(curve, []) if name in entry and x in entry]
            if points:
                axis.plot(*zip(*points), marker=".", label=objective, color=f"C{index}")
        axis.set_title(name)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"{title} ({results['settings']['model_size']})")
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.3 / (3.2 * rows)))  # room for the title above the first row
    _save_figure(figure, path)
    plt.close(figure)


def plot_downstream(results, path):
    """Per task, the headline fine-tuning metric against pre-training FLOPs: per objective the median over seeds
    (line, with mean ± std error bars and every seed as a dot), starting from the random-init network at 0 FLOPs."""
    plt = _pyplot()
    tasks = results["tasks"]
    figure, axes = plt.subplots(len(tasks), 1, figsize=(7, 4.5 * len(tasks)), squeeze=False)
    for axis, (task, described) in zip(axes[:, 0], tasks.items()):
        _plot_task(axis, results, task, *described["primary_metric"])
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)


def _plot_task(axis, results, task, key, metric):
    base = (results.get("baseline") or {}).get("downstream", {}).get(task) or {}
    for index, (objective, run) in enumerate(results["objectives"].items()):
        color = f"C{index}"
        xs, medians = [], []
        if base.get("median") is not None:
            xs.append(0.0)
            medians.append(base["median"])
        for point in run["eval_points"]:
            summary = point.get("downstream", {}).get(task) or {}
            if summary.get("median") is None:
                continue
            xs.append(point["flops"])
            medians.append(summary["median"])
            axis.errorbar(point["flops"], summary["mean"], yerr=summary["std"], color=color, alpha=0.5, capsize=3)
            seeds = [value for value in summary["scores"].values() if value is not None]
            axis.scatter([point["flops"]] * len(seeds), seeds, color=color, s=10, alpha=0.4)
        axis.plot(xs, medians, marker="o", color=color, label=f"{objective} ({run['steps']} steps)")
    if base.get("median") is not None:
        seeds = [value for value in base["scores"].values() if value is not None]
        axis.scatter([0.0] * len(seeds), seeds, color="k", s=10, alpha=0.4)
        axis.axhline(base["median"], color="k", linestyle=":", linewidth=1, label="random init (median)")
    axis.set_xlabel("pre-training FLOPs")
    axis.set_ylabel(f"{key} dev {metric}")
    axis.set_title(f"Fine-tuned {key} {metric} against pre-training compute (median; dots: seeds)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)


def write_outputs(results, output_dir):
    """results.json, results.md and the plots (the held-out curves once there are any), each atomically."""
    atomic_write_json(os.path.join(output_dir, RESULTS_JSON), results)
    atomic_write_text(os.path.join(output_dir, RESULTS_MD), markdown_table(results))
    plot_pretraining_curves(results, os.path.join(output_dir, CURVES_PNG))
    if any(run.get("heldout_curve") for run in results["objectives"].values()):
        plot_heldout_curves(results, os.path.join(output_dir, HELDOUT_PNG))
    plot_downstream(results, os.path.join(output_dir, DOWNSTREAM_PNG))


def machine_info():
    import keras
    import tensorflow as tf

    info = {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor(),
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
    }
    if hasattr(os, "sched_getaffinity"):
        info["usable_cpus"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = [round(value, 2) for value in os.getloadavg()]
    return info
