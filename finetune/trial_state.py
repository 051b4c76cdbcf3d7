"""A fine-tuning trial's saved state, so that rerunning an interrupted command resumes it where it stopped.

`trial_<k>/state/` holds a `tf.train.CheckpointManager` checkpoint (model, optimizer with its iteration count, the
dropout layers' seed-generator states, the number of batches trained) and `history.json` (the job it belongs to, Keras'
logs of every finished epoch and, for a save within an epoch, the running training metrics of that epoch, so that the
epoch's logs cover all its batches; the wall seconds the trial had run at the save). The data position needs no state of
its own: every epoch has the same number of batches and its order is a function of the trial's seed and the epoch
(`training_batches`), so the batch count says where to go on. A finished trial's entry of results.json (and its job) is
`trial_<k>/trial.json`; its state is then deleted.

TF writes a checkpoint's files first and the `checkpoint` state file last, by atomic rename, so a process killed while
saving leaves the previous complete checkpoint as the latest. `history.json` is written before each checkpoint and
cut to the epochs the restored checkpoint has finished.
"""

import functools
import json
import os
import shutil
import time

import keras
import numpy as np
import tensorflow as tf

from electra_tf.data.keras_input import keras_input_options
from electra_tf.io_utils import atomic_write_json
from electra_tf.training.resumption import refuse_other_settings, seed_generator_states
from finetune.batching import length_bucketed_batches

STATE_DIR = "state"
HISTORY_FILE = "history.json"
BEST_WEIGHTS_FILE = "best_epoch.weights.h5"
TRIAL_FILE = "trial.json"
# Fields that may change between a run and its rerun: they do not change what a trial computes.
RESUMABLE_CHANGES = (
    "output_dir",
    "num_trials",
    "progress_bar",
    "save_checkpoints_steps",
    "eval_batch_size",
    "save_models",
    "worker_hosts",
    "task_index",  # the workers of a cluster read the chief's records
)


def epoch_seed(seed, epoch):
    """The shuffle seed of `epoch` of the trial with `seed` (a function of both, so a resumed trial needs no
    iterator state)."""
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])


def training_batches(examples, batch_size, seed, first_epoch, num_epochs, skip_batches=0, **bucketing):
    """Batches of epochs `first_epoch` .. `num_epochs - 1` of the unbatched `examples`, each epoch shuffled by its
    `epoch_seed` and batched within length buckets (`finetune.batching.length_bucketed_batches` with `bucketing`,
    e.g. `pad_to_max_length`; every bucket's last batch partial), without the first `skip_batches` batches. An
    epoch's number of batches is `finetune.batching.num_shuffled_batches`."""
    # Not reshuffled per iteration: Keras and `TrialState.build_metrics` may iterate an epoch's dataset more than once.
    epochs = [
        length_bucketed_batches(
            examples, batch_size, shuffle=True, seed=epoch_seed(seed, epoch), reshuffle=False, **bucketing
        )
        for epoch in range(first_epoch, num_epochs)
    ]
    return (
        functools.reduce(lambda a, b: a.concatenate(b), epochs).skip(skip_batches).with_options(keras_input_options())
    )


def _check_same_job(saved, current, directory, defaults):
    refuse_other_settings(
        saved, current, directory, "a trial", "output_dir", ignore=RESUMABLE_CHANGES, defaults=defaults
    )


def finished_trial(trial_dir, job_record, record_defaults=None):
    """results.json's entry of the trial in `trial_dir` if it finished (ConfigError if for another job), else None.
    `record_defaults`: the value of each job field a record written before the field existed lacks."""
    path = os.path.join(trial_dir, TRIAL_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        saved = json.load(handle)
    _check_same_job(saved["job"], job_record, trial_dir, record_defaults)
    return saved["result"]


def finish_trial(trial_dir, entry, job_record):
    """Records the trial's results entry and deletes its training state."""
    atomic_write_json(os.path.join(trial_dir, TRIAL_FILE), {"job": job_record, "result": entry})
    shutil.rmtree(os.path.join(trial_dir, STATE_DIR), ignore_errors=True)


class TrialState:
    """The saved state of one trial of `job_record` (results.json's "job" with the hyperparameters used), saved under
    `trial_dir` and restored from `resume_from` (another trial directory: a worker other than the chief resumes from
    the chief's state and saves its own elsewhere; default `trial_dir`)."""

    def __init__(self, trial_dir, model, job_record, steps_per_epoch, record_defaults=None, resume_from=None):
        self.directory = os.path.join(trial_dir, STATE_DIR)
        self.resume_directory = os.path.join(resume_from or trial_dir, STATE_DIR)
        self.restored_from = None  # the checkpoint `restore` loaded
        self.job_record = job_record
        self.record_defaults = record_defaults
        self.steps_per_epoch = steps_per_epoch
        self.steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="batches_trained")
        self.history = {}
        self.metric_states = {}  # batches trained -> values of model.metrics_variables, for the latest saves
        self.resumed_metrics = None
        self.seconds_before = 0.0  # of the runs before this one, up to their last save
        self.started = time.monotonic()
        checkpoint = tf.train.Checkpoint(
            model=model,
            optimizer=model.optimizer,
            steps=self.steps,
            seed_generators=tf.train.Checkpoint(**seed_generator_states(model)),
        )
        self.manager = tf.train.CheckpointManager(checkpoint, self.directory, max_to_keep=1)

    @property
    def best_weights_path(self):
        return os.path.join(self.directory, BEST_WEIGHTS_FILE)

    def restore(self):
        """Loads the latest save in `resume_directory`, if any, into the model; returns the number of batches it had
        trained (0: none)."""
        latest = self.restored_from = tf.train.latest_checkpoint(self.resume_directory)
        if latest is None:
            return 0
        with open(os.path.join(self.resume_directory, HISTORY_FILE), encoding="utf-8") as handle:
            saved = json.load(handle)
        _check_same_job(saved["job"], self.job_record, self.resume_directory, self.record_defaults)
        self.manager.checkpoint.restore(latest).assert_existing_objects_matched()
        best_weights = os.path.join(self.resume_directory, BEST_WEIGHTS_FILE)
        if self.resume_directory != self.directory and os.path.isfile(best_weights):
            os.makedirs(self.directory, exist_ok=True)
            shutil.copyfile(best_weights, self.best_weights_path)
        steps = int(self.steps.numpy())
        epochs = steps // self.steps_per_epoch
        self.history = {name: values[:epochs] for name, values in saved["history"].items()}
        self.metric_states = saved["metric_states"]
        self.resumed_metrics = self.metric_states.get(str(steps))
        self.seconds_before = saved.get("seconds", 0.0)
        return steps

    def seconds(self):
        """Wall seconds the trial has run: this run's since the state was made, and those of the runs it resumes up
        to their last save."""
        return self.seconds_before + time.monotonic() - self.started

    def build_metrics(self, model, dataset):
        """Creates the compiled metrics' variables (Keras makes them in the first training step) from one batch of
        `dataset`, so that a resumed epoch's running values can be put back before that step."""
        if self.resumed_metrics is not None and len(model.metrics_variables) != len(self.resumed_metrics):
            x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(next(iter(dataset)))
            model.compute_metrics(x, y, model(x), sample_weight)

    def save(self):
        os.makedirs(self.directory, exist_ok=True)
        atomic_write_json(
            os.path.join(self.directory, HISTORY_FILE),
            {
                "job": self.job_record,
                "history": self.history,
                "metric_states": self.metric_states,
                "seconds": self.seconds(),
            },
        )
        self.manager.save(checkpoint_number=int(self.steps.numpy()))

    def best_epoch(self):
        """The 0-based epoch of the lowest `val_loss` so far (the first of equals), None without validation."""
        losses = self.history.get("val_loss")
        return int(np.argmin(losses)) if losses else None


class SaveTrialState(keras.callbacks.Callback):
    """Counts batches, records each epoch's logs and saves `state` at the end of every epoch and every
    `save_every_steps` batches; with `keep_best`, also saves the weights of the epoch of lowest dev loss."""

    def __init__(self, state, save_every_steps=None, keep_best=False):
        super().__init__()
        self.state = state
        self.save_every_steps = save_every_steps
        self.keep_best = keep_best

    def on_train_batch_end(self, batch, logs=None):
        steps = int(self.state.steps.assign_add(1).numpy())
        # A save at an epoch's last batch waits for on_epoch_end, which has its validation logs.
        if self.save_every_steps and steps % self.save_every_steps == 0 and steps % self.state.steps_per_epoch:
            # The previous save's entry stays: history.json is written before the checkpoint, which a kill may
            # leave one save behind.
            latest = {str(steps): [variable.numpy().tolist() for variable in self.model.metrics_variables]}
            self.state.metric_states = {**dict(list(self.state.metric_states.items())[-1:]), **latest}
            self.state.save()

    def on_epoch_begin(self, epoch, logs=None):
        # Keras has just reset the metrics: an epoch resumed in its middle goes on from its saved running values.
        if self.state.resumed_metrics is not None:
            for variable, value in zip(self.model.metrics_variables, self.state.resumed_metrics):
                variable.assign(value)
            self.state.resumed_metrics = None

    def on_epoch_end(self, epoch, logs=None):
        for name, value in (logs or {}).items():
            self.state.history.setdefault(name, []).append(float(value))
        if self.keep_best and self.state.best_epoch() == epoch:
            os.makedirs(self.state.directory, exist_ok=True)  # the first save may come after this one
            staged = self.state.best_weights_path.replace(".weights.h5", ".partial.weights.h5")
            self.model.save_weights(staged, overwrite=True)
            os.replace(staged, self.state.best_weights_path)
        self.state.save()
