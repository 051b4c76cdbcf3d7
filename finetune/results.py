"""Fine-tuning results over trials: per-trial metrics and, per metric, the median (what the paper reports), mean and
standard deviation."""

import numpy as np


def summarize_trials(trial_metrics):
    """{eval key: {metric: {"median", "mean", "std", "values"}}} from a list of per-trial {eval key: {metric: value}}.

    `std` is the population standard deviation (ddof=0) over trials; `values` lists each trial's value in order.
    """
    summary = {}
    for key in trial_metrics[0]:
        summary[key] = {}
        for metric in trial_metrics[0][key]:
            values = np.array([trial[key][metric] for trial in trial_metrics], dtype=np.float64)
            summary[key][metric] = {
                "median": float(np.median(values)),
                "mean": float(np.mean(values)),
                "std": float(np.std(values)),
                "values": values.tolist(),
            }
    return summary


def format_summary(summary):
    """One line per metric, e.g. "MRPC accuracy: median 86.27  mean 85.90  std 0.52  (3 trials)"."""
    lines = []
    for key, metrics in summary.items():
        for metric, stats in metrics.items():
            lines.append(
                f"{key} {metric}: median {stats['median']:.2f}  mean {stats['mean']:.2f}  "
                f"std {stats['std']:.2f}  ({len(stats['values'])} trials)"
            )
    return lines
