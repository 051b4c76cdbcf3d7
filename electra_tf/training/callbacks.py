"""Keras callbacks of a pre-training run: metric logs, checkpoints, and the non-finite-loss guard."""

import json
import math
import os

import keras
import tensorflow as tf

from electra_tf.checkpoints.ours import kept_checkpoint
from electra_tf.errors import NonFiniteLossError
from electra_tf.io_utils import atomic_write_text
from electra_tf.training.choices import NONFINITE_LOSS_POLICIES


def current_step(model):
    """Batches trained so far (`ElectraPretrainer.steps_trained`)."""
    return int(model.steps_trained.numpy())


def last_learning_rate(optimizer):
    """The learning rate of the optimizer's latest update (its schedule at the update count before it).

    `optimizer.learning_rate` is the schedule's value at the *next* update; the schedule itself is public only through
    the optimizer's config, from which it is rebuilt.
    """
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # through a float16 LossScaleOptimizer
    schedule = optimizer.get_config()["learning_rate"]
    if isinstance(schedule, dict):
        schedule = keras.optimizers.schedules.deserialize(schedule)
        return float(schedule(max(0, int(optimizer.iterations.numpy()) - 1)))
    return float(optimizer.learning_rate.numpy())


def truncate_metrics_log(path, last_step):
    """Keep only the entries of `path` with step <= `last_step` (and drop a line torn by a crash), atomically.

    Called on resume so that metrics.jsonl stays one consistent history: what the interrupted run logged after its last
    checkpoint is replaced by what the resumed run logs.
    """
    if not os.path.exists(path):
        return
    kept = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("step", math.inf) <= last_step:
                kept.append(line if line.endswith("\n") else line + "\n")
    atomic_write_text(path, "".join(kept))


class MetricsLogger(keras.callbacks.Callback):
    """At step 1 and every `log_every_steps`, append {step, learning_rate, metrics...} to metrics.jsonl and write
    TensorBoard scalars, then reset the metrics so each entry covers the steps since the previous one.

    Only the chief writes (`enabled=False` elsewhere); every worker still resets its metrics. The reset happens at the
    start of the next step, so the logs Keras reports at the end of training still hold the last window. At step 1 the
    loss is also printed beside `expected_initial_loss` (ln V + 50 ln 2 for a fresh ELECTRA model) as a sanity check.
    """

    def __init__(self, jsonl_path, tensorboard_dir, log_every_steps, enabled=True, expected_initial_loss=None):
        super().__init__()
        self.jsonl_path = jsonl_path
        self.log_every_steps = log_every_steps
        self.enabled = enabled
        self.expected_initial_loss = expected_initial_loss
        self._writer = tf.summary.create_file_writer(tensorboard_dir) if enabled else None
        self._reset_pending = False

    def on_train_batch_begin(self, batch, logs=None):
        if self._reset_pending:
            self.model.reset_metrics()
            self._reset_pending = False

    def on_train_batch_end(self, batch, logs=None):
        step = current_step(self.model)
        if step != 1 and step % self.log_every_steps:
            return
        self._log(step, logs)

    def _log(self, step, logs):
        entry = {"step": step, "learning_rate": last_learning_rate(self.model.optimizer)}
        entry.update({name: float(value) for name, value in (logs or {}).items()})
        if self.enabled:
            with open(self.jsonl_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
            with self._writer.as_default(step=step):
                for name, value in entry.items():
                    if name != "step":
                        tf.summary.scalar(name, value)
            self._writer.flush()
        if step == 1 and self.expected_initial_loss is not None:
            print(
                f"\nstep 1: loss {entry.get('loss', float('nan')):.3f} (a fresh model should start near "
                f"{self.expected_initial_loss:.2f})",
                flush=True,
            )
        self._reset_pending = True

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()


def write_checkpoint_atomically(checkpoint, prefix):
    """Write `checkpoint` (a `tf.train.Checkpoint`) to `prefix` through a temporary prefix in the same directory.

    The index file is renamed last: readers find a checkpoint by its index, so they see the previous complete one or
    the new complete one, never data files without their index or an index without its data.
    """
    written = checkpoint.write(f"{prefix}.tmp-{os.getpid()}")
    files = tf.io.gfile.glob(f"{written}.*")
    for path in sorted(files, key=lambda path: path.endswith(".index")):
        tf.io.gfile.rename(path, prefix + path[len(written) :], overwrite=True)
    return prefix


class CheckpointSaver(keras.callbacks.Callback):
    """Save a `tf.train.CheckpointManager` checkpoint every `save_every_steps`, at each of `extra_steps` and at the end
    of training.

    The manager keeps its newest `max_to_keep` checkpoints, so a checkpoint of one of `extra_steps` is also written
    as `<directory>/kept-N`, outside its rotation: kept for good, and read wherever a `ckpt-N` prefix is.
    """

    def __init__(self, manager, save_every_steps, extra_steps=()):
        super().__init__()
        self.manager = manager
        self.save_every_steps = save_every_steps
        self.extra_steps = frozenset(extra_steps)

    def on_train_batch_end(self, batch, logs=None):
        step = current_step(self.model)
        if (self.save_every_steps and step % self.save_every_steps == 0) or step in self.extra_steps:
            self.manager.save(checkpoint_number=step)
        if step in self.extra_steps:
            kept = kept_checkpoint(self.manager.directory, step)
            write_checkpoint_atomically(self.manager.checkpoint, kept)

    def on_train_end(self, logs=None):
        step = current_step(self.model)
        if self.manager.latest_checkpoint is None or not self.manager.latest_checkpoint.endswith(f"-{step}"):
            self.manager.save(checkpoint_number=step)


class StepProgress(keras.callbacks.Callback):
    """`step`: the step being run (None before training starts). Counted from Keras' batch index rather than read from
    a variable, so it is still known when a failed collective has left TensorFlow's runtime unusable."""

    def __init__(self):
        super().__init__()
        self.step = None
        self._initial_step = 0

    def on_train_begin(self, logs=None):
        self._initial_step = current_step(self.model)
        self.step = self._initial_step + 1

    def on_train_batch_end(self, batch, logs=None):
        self.step = self._initial_step + batch + 2


class NonFiniteLossGuard(keras.callbacks.Callback):
    """Applies the `nonfinite_loss` policy to the steps the train step skipped (`ElectraPretrainer.skipped_steps`).

    The train step never applies the update of a step whose loss (or gradient) is NaN or infinite, so the model in
    memory stays good under both policies. stop: raise `NonFiniteLossError` naming the step; this guard runs before
    `CheckpointSaver`, so no checkpoint of the bad step is written and the last good one stays the latest. skip: print a
    warning naming the step and go on; the count is in the logs and metrics.jsonl as `skipped_steps`.
    """

    def __init__(self, model_dir, policy="stop"):
        super().__init__()
        if policy not in NONFINITE_LOSS_POLICIES:
            raise ValueError(f"unknown non-finite loss policy {policy!r}")
        self.model_dir = model_dir
        self.policy = policy
        self._skipped_before = 0

    def on_train_begin(self, logs=None):
        self._skipped_before = int(self.model.skipped_steps.numpy())

    def on_train_batch_end(self, batch, logs=None):
        skipped = int(self.model.skipped_steps.numpy())
        if skipped == self._skipped_before:
            return
        self._skipped_before = skipped
        step = int(self.model.last_skipped_step.numpy())
        if self.policy == "stop":
            raise NonFiniteLossError(
                f"non-finite loss at step {step}; its update was not applied and the last good checkpoint in "
                f"{self.model_dir} is kept. Lower learning_rate, check the input data, use "
                "mixed_precision=float32, or nonfinite_loss=skip to skip such steps",
                arguments=("learning_rate", "mixed_precision", "nonfinite_loss"),
            )
        print(f"\nwarning: non-finite loss at step {step}: update skipped ({skipped} skipped steps so far)", flush=True)


class LossScaleMonitor(keras.callbacks.Callback):
    """Reports float16 loss-scale underflow: adds `loss_scale` to the logs and warns when the dynamic scale is below 1.

    The scale halves on every overflow; below 1 it no longer protects small gradients from flushing to zero in
    float16, which usually means diverging activations (lower the learning rate or use mixed_bfloat16).
    """

    def __init__(self):
        super().__init__()
        self._warned_at_scale = None

    def on_train_batch_end(self, batch, logs=None):
        scale = getattr(self.model.optimizer, "dynamic_scale", None)
        if scale is None:
            return
        scale = float(scale.numpy())
        if logs is not None:
            logs["loss_scale"] = scale
        if scale < 1.0 and scale != self._warned_at_scale:
            self._warned_at_scale = scale
            print(
                f"\nwarning: float16 loss scale underflow at step {current_step(self.model)}: the dynamic loss scale "
                f"fell to {scale:g} (< 1)",
                flush=True,
            )
