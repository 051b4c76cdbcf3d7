"""Held-out evaluation of the pre-training objective (the reference's `do_eval`).

An evaluation runs the pre-training model with dropout off over the first `num_eval_steps` batches of a held-out set,
in file order. Its random draws (which tokens are masked, what the generator samples) are keyed on each batch's
position in that set, not on the training step, so every evaluation of a run masks and samples the same positions and
two evaluations of one checkpoint give the same numbers. Each batch's statistics are summed over replicas (and workers)
and then over batches in float64, so the metrics are exact ratios of global counts under any strategy.
"""

import json
import os

import keras
import numpy as np
import tensorflow as tf

from electra_tf.training.callbacks import current_step
from electra_tf.training.metrics import make_pretraining_metrics, update_pretraining_metrics

EVAL_METRICS_FILE = "eval_metrics.jsonl"
EVAL_TENSORBOARD_DIR = "eval"


class PretrainingEvaluator:
    """Evaluates `model` (an `ElectraPretrainer`) on `dataset` (batches from `make_pretraining_dataset(...,
    is_training=False)`), at most `num_steps` batches, under the model's strategy."""

    def __init__(self, model, dataset, num_steps):
        self.model = model
        self.num_steps = num_steps
        self.strategy = model.distribute_strategy
        self.dataset = self.strategy.experimental_distribute_dataset(dataset.take(num_steps))
        self._step_function = None

    def _batch_statistics(self, batch, draw_index):
        model = self.model

        def replica_statistics(features):
            outputs = model.pretraining_outputs(features, model.steps_trained, training=False, draw_index=draw_index)
            return model.pretraining_statistics(outputs)

        per_replica = self.strategy.run(replica_statistics, args=(batch,))
        return tf.nest.map_structure(
            lambda value: self.strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None), per_replica
        )

    def statistics(self):
        """(global sums and counts of the objective over the evaluated batches, as float64 arrays; batches read)."""
        if self._step_function is None:
            self._step_function = tf.function(self._batch_statistics)
        totals, num_batches = None, 0
        for draw_index, batch in enumerate(self.dataset):
            values = self._step_function(batch, tf.constant(draw_index, tf.int64))
            values = {name: np.asarray(value, np.float64) for name, value in values.items()}
            totals = values if totals is None else {name: totals[name] + values[name] for name in totals}
            num_batches += 1
        return totals or {}, num_batches

    def evaluate(self):
        """The reference's metrics (see `metrics.METRIC_NAMES`) over the evaluation batches, as floats, with `step`
        (the model's training step) and `eval_batches`."""
        totals, num_batches = self.statistics()
        step = current_step(self.model)
        result = {"step": step, "eval_batches": num_batches}
        if not num_batches:
            return result
        metrics = make_pretraining_metrics(self.model.objective.metric_names)
        tensors = {name: tf.constant(value, tf.float32) for name, value in totals.items()}
        loss = self.model.pretraining_loss(tensors, tensors, tf.constant(step, tf.int64))
        update_pretraining_metrics(metrics, tensors, loss)
        result.update({name: float(metric.result()) for name, metric in metrics.items()})
        return result


def write_evaluation(model_dir, result):
    """Append `result` to `<model_dir>/eval_metrics.jsonl` and write it as TensorBoard scalars under `eval/`."""
    with open(os.path.join(model_dir, EVAL_METRICS_FILE), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(result) + "\n")
    writer = tf.summary.create_file_writer(os.path.join(model_dir, EVAL_TENSORBOARD_DIR))
    with writer.as_default(step=result["step"]):
        for name, value in result.items():
            if name not in ("step", "eval_batches"):
                tf.summary.scalar(name, value)
    writer.close()


def format_evaluation(result):
    """One line for the console."""
    shown = (
        "loss",
        "masked_lm_accuracy",
        "sampled_masked_lm_accuracy",
        "disc_accuracy",
        "disc_precision",
        "disc_recall",
        "disc_auc",
    )
    values = " ".join(f"{name} {result[name]:.4f}" for name in shown if name in result)
    return f"evaluation at step {result['step']} ({result['eval_batches']} batches): {values}"


class PeriodicEvaluation(keras.callbacks.Callback):
    """Evaluates every `every_steps` training steps and at the end of training (if that step was not evaluated and
    the run was not stopped).

    Every worker evaluates (the reductions need them all); only the chief (`enabled`) writes the results.
    """

    def __init__(self, evaluator, model_dir, every_steps, enabled=True):
        super().__init__()
        self.evaluator = evaluator
        self.model_dir = model_dir
        self.every_steps = every_steps
        self.enabled = enabled
        self.last_evaluated_step = None

    def _evaluate(self):
        result = self.evaluator.evaluate()
        self.last_evaluated_step = result["step"]
        if self.enabled:
            write_evaluation(self.model_dir, result)
            print(f"\n{format_evaluation(result)}", flush=True)

    def on_train_batch_end(self, batch, logs=None):
        if self.every_steps and current_step(self.model) % self.every_steps == 0:
            self._evaluate()

    def on_train_end(self, logs=None):
        # A stopped run (SIGTERM) exits at once; it evaluates the remaining steps when it resumes.
        if not self.model.stop_training and current_step(self.model) != self.last_evaluated_step:
            self._evaluate()
