"""What the compute-matched experiment's results are made of: a task's headline score over seeds, and a pre-training
run's logged curves (each metrics.jsonl or eval_metrics.jsonl entry with the cumulative FLOPs at its step and the wall
seconds since the run's training started, read from the run's TensorBoard event times)."""

import json
import math
import os

TRAIN_EVENTS = "train"  # the TensorBoard directory of a pre-training run's training metrics


def task_name(task):
    """The GLUE task's own spelling (`sst-2` -> `SST-2`): the key of its results and its directories."""
    from finetune.glue.tasks import glue_task_spec

    return glue_task_spec(task).name


def primary_metric(task):
    """(score key, metric) of the task's headline number, e.g. ("SST-2", "accuracy"), ("MNLI-m", "accuracy")."""
    from finetune.glue.metrics import score_key
    from finetune.glue.tasks import glue_task_spec

    spec = glue_task_spec(task)
    return score_key(spec, spec.dev_splits[0]), spec.primary_metric


def summarize_scores(per_seed, key, metric):
    """{"scores": {seed: value}, "median", "mean", "std"} of the headline metric (NaN/None values left out)."""
    import numpy as np

    scores = {str(seed): per_seed[seed].get(key, {}).get(metric) for seed in sorted(per_seed)}
    values = np.array([value for value in scores.values() if value is not None and not math.isnan(value)], float)
    summary = {"scores": scores, "median": None, "mean": None, "std": None}
    if len(values):
        summary.update(median=float(np.median(values)), mean=float(np.mean(values)), std=float(np.std(values)))
    return summary


def read_metrics(model_dir, cumulative_flops, heldout=False, wall_offset=0.0):
    """The entries of the run's metrics.jsonl (eval_metrics.jsonl: `heldout`), each with the cumulative training FLOPs
    at its step (`cumulative_flops(step)`) and, where the run's TensorBoard logs have the step, `wall_seconds` since
    its training started, plus `wall_offset` (the time of the run it started from)."""
    from electra_tf.training.evaluation import EVAL_METRICS_FILE, EVAL_TENSORBOARD_DIR
    from electra_tf.training.pretraining_job import METRICS_FILE

    filename, events = (EVAL_METRICS_FILE, EVAL_TENSORBOARD_DIR) if heldout else (METRICS_FILE, TRAIN_EVENTS)
    path = os.path.join(model_dir, filename)
    entries = []
    if os.path.exists(path):
        wall_seconds = _wall_seconds(model_dir, events)
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    entry = json.loads(line)
                    entry["flops"] = cumulative_flops(entry["step"])
                    if entry["step"] in wall_seconds:
                        entry["wall_seconds"] = wall_offset + wall_seconds[entry["step"]]
                    entries.append(entry)
    return entries


def known_sum(values):
    """The sum of `values`, None if one of them is None (a time that was not recorded)."""
    return None if None in values else sum(values)


def wall_seconds_at(curve, step):
    """The wall seconds of a run at `step`, linear between 0 at step 0 and the entries of its curve (`read_metrics`)
    that have them; the last entry's past the end."""
    points = [(0, 0.0)] + sorted((entry["step"], entry["wall_seconds"]) for entry in curve if "wall_seconds" in entry)
    for (step_before, seconds_before), (step_after, seconds_after) in zip(points, points[1:]):
        if step_before <= step <= step_after:
            share = (step - step_before) / (step_after - step_before) if step_after > step_before else 1.0
            return seconds_before + share * (seconds_after - seconds_before)
    return points[-1][1]


def _event_times(directory):
    """[(step, wall time)] of the TensorBoard events under `directory`; the first event of a file (its version
    record) is the time the file's writer was created."""
    import tensorflow as tf

    times = []
    for path in sorted(tf.io.gfile.glob(os.path.join(directory, "events.out.tfevents.*"))):
        try:
            for record in tf.data.TFRecordDataset(path):
                event = tf.compat.v1.Event.FromString(record.numpy())
                times.append((event.step, event.wall_time))
        except tf.errors.DataLossError:  # a file cut short by a crash: its complete events were read
            pass
    return times


def _wall_seconds(model_dir, events):
    """{step: seconds from the creation of the run's first training log (just before its first step) to the last
    event logged at that step under `events`}; wall-clock, so time stopped between a preemption and the resume
    counts. Empty when the run has no training log."""
    started = _event_times(os.path.join(model_dir, TRAIN_EVENTS))
    if not started:
        return {}
    origin = min(wall_time for _, wall_time in started)
    seconds = {}
    for step, wall_time in _event_times(os.path.join(model_dir, events)):
        if step:  # step 0: a file's version record
            seconds[step] = max(seconds.get(step, 0.0), wall_time - origin)
    return seconds
