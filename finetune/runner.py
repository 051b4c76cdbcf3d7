"""One fine-tuning run of any task: a pre-trained checkpoint, `num_trials` seeds, results and predictions on disk.

`run_finetuning.py` turns its flags into a `FinetuningJob` and calls `run()`; tests and notebooks can do the same.
The task (`finetune.registry.get_task(job.task)`) supplies data, model head, loss and scorer; this module owns what
every task shares: validation, hyperparameters, strategy, the trial loop with its seeds, the optimiser and the
results. Outputs in `output_dir`:

* `results.json`: the task, the job, the hyperparameters used, facts about the data, each trial's seed, official
  dev metrics and (when the task has a labelled dev split) Keras' dev loss and metrics after every epoch, and per
  metric the median (what the paper reports), mean and std over trials; rewritten atomically after every trial.
* `trial_<k>/`: the task's prediction files (GLUE: `dev_predictions.tsv` and `submission/<TASK>.tsv`, see
  `finetune.glue.task`; SQuAD: `predictions.json`, `nbest_predictions.json`, `null_odds.json`, see
  `finetune.squad.task`; tagging, own files: see theirs), TensorBoard logs in `logs/train` and `logs/validation`,
  and, with `save_models`, `model.keras`.
"""

import dataclasses
import json
import math
import os

from absl import logging

from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json, write_text_files
from finetune.hyperparameters import ADAM_EPSILON, WARMUP_FRACTION, WEIGHT_DECAY, check_positive, model_size_of
from finetune.layerwise_lr import layerwise_lr_multipliers
from finetune.registry import get_task, tasks
from finetune.squad.features import DOC_STRIDE, MAX_QUERY_LENGTH
from finetune.squad.postprocess import MAX_ANSWER_LENGTH, N_BEST_SIZE

LOGS_DIR = "logs"
RESULTS_FILE = "results.json"
MODEL_FILE = "model.keras"


@dataclasses.dataclass
class FinetuningJob:
    """Everything a fine-tuning run needs; field names are the flag names of `run_finetuning.py`.

    Hyperparameters left as None take the reference's value for `task` and `model_size`
    (`Task.default_hyperparameters`); `model_size` None means the checkpoint's own (`model_size_of` its config).
    The SQuAD options at the end are read by the SQuAD tasks only.
    """

    task: str
    init_checkpoint: str
    output_dir: str
    data_dir: str = None
    model_size: str = None  # None: the size of init_checkpoint's architecture
    num_trials: int = 1
    seed: int = 0
    learning_rate: float = None
    num_train_epochs: int = None
    train_batch_size: int = None
    eval_batch_size: int = 128
    max_seq_length: int = None
    layerwise_lr_decay: float = None
    layerwise_lr_variant: str = "reference"
    weight_decay: float = WEIGHT_DECAY["reference"]
    warmup_fraction: float = WARMUP_FRACTION
    adam_epsilon: float = ADAM_EPSILON
    bias_correction: bool = False
    vocab_file: str = None  # default: the checkpoint's vocab.txt
    # The tokenizer's casing and accent handling; default: what the checkpoint records (BERT uncased if nothing).
    do_lower_case: bool = None
    strip_accents: bool = None
    data_source: str = "tsv"  # GLUE: tsv or tfds; SQuAD: json (or tsv: the same files) or tfds
    tfds_data_dir: str = None
    tfds_download: bool = False
    strategy: str = "default"
    tpu: str = None
    num_cpu_devices: int = 0
    mixed_precision: str = "float32"
    # The reference's batches, every one max_seq_length wide, instead of length buckets (forced under a TPU).
    pad_to_max_length: bool = False
    save_models: bool = False
    keep_best_epoch: bool = False  # end on the weights of the epoch with the lowest dev loss (Keras validation)
    progress_bar: bool = True
    squad_head: str = "joint"
    doc_stride: int = DOC_STRIDE
    max_query_length: int = MAX_QUERY_LENGTH
    n_best_size: int = N_BEST_SIZE
    max_answer_length: int = MAX_ANSWER_LENGTH
    null_score_threshold: float = 0.0
    max_train_questions: int = None
    max_dev_questions: int = None
    # Tagging tasks (finetune.tagging.task).
    train_file: str = None
    dev_file: str = None
    test_file: str = None
    word_column: int = 0
    tag_column: int = -1
    # The user's own files (finetune.own_data.task): column names.
    text_column: str = None
    text_pair_column: str = None
    label_column: str = "label"

    def validate(self):
        """Raises an ElectraError naming the fields at fault; reads no data beyond checking that files exist."""
        from electra_tf.checkpoints import require_checkpoint

        task = get_task(self.task)
        if not self.init_checkpoint:
            raise ConfigError("init_checkpoint is required: the pre-trained model directory (run_pretraining.py "
                              "writes <model_dir>/pretrained)", arguments=("init_checkpoint",))
        require_checkpoint(self.init_checkpoint, "init_checkpoint")
        if not self.output_dir:
            raise ConfigError("output_dir is required", arguments=("output_dir",))
        task.validate(self)
        check_positive(num_trials=self.num_trials, eval_batch_size=self.eval_batch_size)
        hyperparameters = self.hyperparameters()
        check_positive(learning_rate=hyperparameters.learning_rate, num_train_epochs=hyperparameters.num_train_epochs,
                       train_batch_size=hyperparameters.train_batch_size,
                       max_seq_length=hyperparameters.max_seq_length)
        # Checks the decay's range and the variant.
        layerwise_lr_multipliers([], 1, hyperparameters.layerwise_lr_decay, self.layerwise_lr_variant)
        if self.weight_decay < 0:
            raise ConfigError(f"weight_decay must be >= 0, got {self.weight_decay}", arguments=("weight_decay",))

    def as_record(self):
        """The job as results.json records it: every field but the options of tasks other than this job's."""
        own_options = set(get_task(self.task).options)
        other_options = {name for task in tasks().values() for name in task.options} - own_options
        return {name: value for name, value in dataclasses.asdict(self).items() if name not in other_options}

    def hyperparameters(self):
        """The task's reference hyperparameters for `model_size` with this job's overrides (for a job whose
        `model_size` is still None, those of "small": `run` sets the checkpoint's size before it trains)."""
        return get_task(self.task).default_hyperparameters(self.model_size or "small").overridden(
            learning_rate=self.learning_rate, num_train_epochs=self.num_train_epochs,
            max_seq_length=self.max_seq_length, layerwise_lr_decay=self.layerwise_lr_decay,
            train_batch_size=self.train_batch_size)


def _json_safe(value):
    """JSON has no NaN (an undefined correlation): write null instead."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def load_pretrained(init_checkpoint):
    """The `LoadedModel` of the discriminator at `init_checkpoint` (any format `electra_tf.checkpoints` reads).

    A fine-tuned model needs the encoder only: checkpoints without the replaced-token head (HF ElectraModel, keras-hub
    backbones) are accepted.
    """
    from electra_tf.checkpoints import DISCRIMINATOR, load_checkpoint

    return load_checkpoint(init_checkpoint, DISCRIMINATOR, allow_missing_head=True, argument="init_checkpoint")


def _tokenizer(job, pretrained):
    """The tokenizer of `job`'s vocabulary (default: the checkpoint's), checked against the pre-trained model."""
    settings = tokenizer_settings(job, pretrained)
    # The one place the casing is read: the tokenizer carries it to the data and to saved models.
    return pretrained.tokenizer(job.vocab_file, settings.do_lower_case, settings.strip_accents)


def tokenizer_settings(job, pretrained):
    """The checkpoint's `TokenizerSettings` with the job's `do_lower_case` / `strip_accents` put over them."""
    recorded = pretrained.tokenizer_settings
    settings = recorded.overridden(job.do_lower_case, job.strip_accents)
    if settings != recorded:
        logging.warning("tokenising with %s although %s was pre-trained with %s", settings, job.init_checkpoint,
                        recorded)
    return settings


def _run_trial(job, trial, task, pretrained, tokenizer, data, hyperparameters, strategy):
    """Fine-tunes one model from `pretrained` with seed `job.seed + trial`; returns results.json's entry for it."""
    import keras

    from finetune.optimization import create_finetuning_optimizer, num_train_steps

    seed = job.seed + trial
    trial_dir = os.path.join(job.output_dir, f"trial_{trial}")
    os.makedirs(trial_dir, exist_ok=True)
    keras.utils.set_random_seed(seed)
    batch_size = hyperparameters.train_batch_size
    train_steps = num_train_steps(task.num_train_features(data), batch_size, hyperparameters.num_train_epochs)
    with strategy.scope():
        model = task.build_model(pretrained.model, hyperparameters, job, data)
        task.compile_model(model, create_finetuning_optimizer(
            model.num_layers, hyperparameters.learning_rate, train_steps,
            layerwise_lr_decay=hyperparameters.layerwise_lr_decay, layerwise_lr_variant=job.layerwise_lr_variant,
            warmup_fraction=job.warmup_fraction, weight_decay=job.weight_decay, epsilon=job.adam_epsilon,
            bias_correction=job.bias_correction))
    print(f"trial {trial} (seed {seed}): {task.describe_training(data)}, {train_steps} steps", flush=True)
    validation = task.validation_dataset(model, data, job.eval_batch_size, job.pad_to_max_length)
    # TensorBoard's train/ and validation/ (when the task has a labelled dev split) under trial_<k>/logs.
    callbacks = [keras.callbacks.TensorBoard(log_dir=os.path.join(trial_dir, LOGS_DIR))]
    best_epoch = None
    if job.keep_best_epoch and validation is not None:
        # Patience beyond the run: never stops early, only restores the epoch of lowest dev loss at the end.
        best_epoch = keras.callbacks.EarlyStopping(monitor="val_loss", patience=hyperparameters.num_train_epochs + 1,
                                                   restore_best_weights=True)
        callbacks.append(best_epoch)
    history = model.fit(task.train_dataset(model, data, batch_size, seed, job.pad_to_max_length),
                        epochs=hyperparameters.num_train_epochs,
                        validation_data=validation, callbacks=callbacks,
                        shuffle=False,  # shuffled by the dataset
                        verbose=1 if job.progress_bar else 2)
    entry = {"trial": trial, "seed": seed, "metrics": task.evaluate(model, data, trial_dir, job)}
    if task.records_train_loss:
        entry["train_loss_per_epoch"] = [float(value) for value in history.history["loss"]]
    if validation is not None:
        entry["validation_per_epoch"] = {name[len("val_"):]: [float(value) for value in values]
                                         for name, values in history.history.items() if name.startswith("val_")}
    if best_epoch is not None:
        entry["kept_epoch"] = int(best_epoch.best_epoch) + 1
    if job.save_models:
        task.save_model(model, os.path.join(trial_dir, MODEL_FILE), tokenizer, hyperparameters.max_seq_length)
    return entry


def run(job, extra_files=None):
    """Fine-tunes `job.num_trials` models and writes the outputs listed in the module docstring; returns the results
    dict that `results.json` holds. `extra_files` ({name: text}, e.g. flags.txt) are written to `output_dir` once
    every input has checked out."""
    # TensorFlow is imported here, not at the top: validating a job (and reporting bad flags) stays fast.
    import keras

    from electra_tf.training import distribution
    from finetune.results import format_summary, summarize_trials

    job.validate()
    if job.strategy == "tpu" and not job.pad_to_max_length:
        # A TPU compiles one program per input shape: the reference's fixed-width batches.
        job = dataclasses.replace(job, pad_to_max_length=True)
    task = get_task(job.task)
    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(job.strategy, job.tpu, job.num_cpu_devices)
    pretrained = load_pretrained(job.init_checkpoint)
    if job.model_size is None:
        job = dataclasses.replace(job, model_size=model_size_of(pretrained.model.electra_config))
        print(f"model size: {job.model_size} (from {job.init_checkpoint}'s architecture; model_size overrides)",
              flush=True)
    hyperparameters = job.hyperparameters()
    tokenizer = _tokenizer(job, pretrained)
    pretrained.model.electra_config.check_sequence_length(hyperparameters.max_seq_length)
    data = task.load_data(job, tokenizer, hyperparameters.max_seq_length)
    os.makedirs(job.output_dir, exist_ok=True)
    write_text_files(job.output_dir, extra_files or {})
    print(f"hyperparameters: {json.dumps(dataclasses.asdict(hyperparameters), sort_keys=True)}", flush=True)

    results = {"task": task.name, "job": job.as_record(),
               "hyperparameters": dataclasses.asdict(hyperparameters), **task.describe_data(data), "trials": []}
    for trial in range(job.num_trials):
        entry = _run_trial(job, trial, task, pretrained, tokenizer, data, hyperparameters, strategy)
        results["trials"].append(entry)
        print(f"trial {trial}: {json.dumps(_json_safe(entry['metrics']), sort_keys=True)}", flush=True)
        results["summary"] = summarize_trials([entry["metrics"] for entry in results["trials"]])
        atomic_write_json(os.path.join(job.output_dir, RESULTS_FILE), _json_safe(results))
    for line in format_summary(results["summary"]):
        print(line, flush=True)
    keras.backend.clear_session(free_memory=False)
    return results
