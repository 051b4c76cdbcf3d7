"""One fine-tuning run of any task: a pre-trained checkpoint, `num_trials` seeds, results and predictions on disk.

`electra-finetune` turns its flags into a `FinetuningJob` and calls `run()`; tests and notebooks can do the same.
The task (`finetune.registry.get_task(job.task)`) supplies data, model head, loss and scorer; this module owns what
every task shares: validation, hyperparameters, strategy, the trial loop with its seeds, the optimizer and the
results. Outputs in `output_dir`:

* `results.json`: the task, the job, the hyperparameters used, facts about the data, each trial's seed, official
  dev metrics and (when the task has a labelled dev split) Keras' dev loss and metrics after every epoch, and per
  metric the median (what the paper reports), mean and std over trials; rewritten atomically after every trial.
* `trial_<k>/`: the task's prediction files (GLUE: `dev_predictions.tsv` and `submission/<TASK>.tsv`, see
  `finetune.glue.task`; SQuAD: `predictions.json`, `nbest_predictions.json`, `null_odds.json`, see
  `finetune.squad.task`; tagging, own files: see theirs), TensorBoard logs in `logs/train` and `logs/validation`,
  and, with `save_models`, `model.keras`; `trial.json` once the trial has finished, `state/` while it has not
  (`finetune.trial_state`).

Rerunning the command of an interrupted run skips the finished trials and resumes the unfinished one from its last
save (every epoch's end, and every `save_checkpoints_steps` batches); with `deterministic` it ends exactly as an
uninterrupted run would.
"""

import dataclasses
import json
import math
import os

from absl import logging

from electra_tf import progress
from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json, write_text_files
from electra_tf.lora_settings import check_lora_settings
from electra_tf.text_files import check_encoding
from electra_tf.training.choices import check_gradient_accumulation
from electra_tf.training.resumption import dataclass_defaults
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
    """Everything a fine-tuning run needs; field names are the flag names of `electra-finetune`.

    Hyperparameters left as None take the reference's value for `task` and `model_size`
    (`Task.default_hyperparameters`); `model_size` None means the checkpoint's own (`model_size_of` its config).
    The SQuAD options at the end are read by the SQuAD tasks only.
    """

    task: str
    init_checkpoint: str
    output_dir: str
    data_dir: str = None
    model_size: str = None  # None: the size of init_checkpoint's architecture
    # A Hugging Face discriminator/ + generator/ pair whose embedding copies differ is read with the discriminator's.
    allow_embedding_mismatch: bool = False
    num_trials: int = 1
    seed: int = 0
    learning_rate: float = None
    num_train_epochs: int = None
    train_batch_size: int = None  # the batch of one optimizer update
    # Each batch runs as this many micro-batches in turn (electra_tf.training.gradient_accumulation).
    gradient_accumulation_steps: int = 1
    eval_batch_size: int = 128
    max_seq_length: int = None
    layerwise_lr_decay: float = None
    layerwise_lr_variant: str = "reference"
    weight_decay: float = WEIGHT_DECAY["reference"]
    warmup_fraction: float = WARMUP_FRACTION
    adam_epsilon: float = ADAM_EPSILON
    bias_correction: bool = False
    # LoRA of this rank on the backbone's query and value projections (`ElectraBackbone.enable_lora`): only those
    # factors and the task head train. None: every weight trains.
    lora_rank: int = None
    lora_alpha: float = None  # LoRA's scale is lora_alpha / lora_rank; None: lora_rank (a scale of 1)
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
    save_checkpoints_steps: int = None  # also save the trial's state every N batches (always: at every epoch's end)
    deterministic: bool = False  # TensorFlow op determinism: a resumed trial ends as an uninterrupted one
    # Only the first examples (SQuAD: questions; tagging: sentences) of the training / every evaluation split.
    max_train_examples: int = None
    max_eval_examples: int = None
    squad_head: str = "joint"
    doc_stride: int = DOC_STRIDE
    max_query_length: int = MAX_QUERY_LENGTH
    n_best_size: int = N_BEST_SIZE
    max_answer_length: int = MAX_ANSWER_LENGTH
    null_score_threshold: float = 0.0
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
    # Every file reader (own files, tagging, GLUE TSV, SQuAD JSON): Python's codec name and codecs error handler.
    input_encoding: str = "utf-8"
    encoding_errors: str = "strict"

    def validate(self):
        """Raises an ElectraError naming the fields at fault; reads no data beyond checking that files exist."""
        from electra_tf.preflight import require_checkpoint

        task = get_task(self.task)
        check_encoding(self.input_encoding, self.encoding_errors)
        if not self.init_checkpoint:
            raise ConfigError(
                "init_checkpoint is required: the pre-trained model directory (electra-pretrain "
                "writes <model_dir>/pretrained)",
                arguments=("init_checkpoint",),
            )
        require_checkpoint(self.init_checkpoint, "init_checkpoint")
        if not self.output_dir:
            raise ConfigError("output_dir is required", arguments=("output_dir",))
        task.validate(self)
        check_positive(num_trials=self.num_trials, eval_batch_size=self.eval_batch_size)
        for name in ("save_checkpoints_steps", "max_train_examples", "max_eval_examples"):
            if getattr(self, name) is not None:
                check_positive(**{name: getattr(self, name)})
        hyperparameters = self.hyperparameters()
        check_positive(
            learning_rate=hyperparameters.learning_rate,
            num_train_epochs=hyperparameters.num_train_epochs,
            train_batch_size=hyperparameters.train_batch_size,
            max_seq_length=hyperparameters.max_seq_length,
        )
        check_gradient_accumulation(self.gradient_accumulation_steps, hyperparameters.train_batch_size)
        # Checks the decay's range and the variant.
        layerwise_lr_multipliers([], 1, hyperparameters.layerwise_lr_decay, self.layerwise_lr_variant)
        if self.weight_decay < 0:
            raise ConfigError(f"weight_decay must be >= 0, got {self.weight_decay}", arguments=("weight_decay",))
        if self.lora_alpha is not None and self.lora_rank is None:
            raise ConfigError(
                "lora_alpha scales LoRA's weights: pass lora_rank=<rank> with it, or leave "
                "lora_alpha out for full fine-tuning",
                arguments=("lora_alpha", "lora_rank"),
            )
        if self.lora_rank is not None:
            check_lora_settings(self.lora_rank, self.lora_alpha, rank_argument="lora_rank")

    def as_record(self):
        """The job as results.json records it: every field but the options of tasks other than this job's."""
        own_options = set(get_task(self.task).options)
        other_options = {name for task in tasks().values() for name in task.options} - own_options
        return {name: value for name, value in dataclasses.asdict(self).items() if name not in other_options}

    def hyperparameters(self):
        """The task's reference hyperparameters for `model_size` with this job's overrides (for a job whose
        `model_size` is still None, those of "small": `run` sets the checkpoint's size before it trains)."""
        return (
            get_task(self.task)
            .default_hyperparameters(self.model_size or "small")
            .overridden(
                learning_rate=self.learning_rate,
                num_train_epochs=self.num_train_epochs,
                max_seq_length=self.max_seq_length,
                layerwise_lr_decay=self.layerwise_lr_decay,
                train_batch_size=self.train_batch_size,
            )
        )


def _json_safe(value):
    """JSON has no NaN (an undefined correlation): write null instead."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    return None if isinstance(value, float) and math.isnan(value) else value


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
        logging.warning(
            "tokenising with %s although %s was pre-trained with %s", settings, job.init_checkpoint, recorded
        )
    return settings


def _job_record(job, hyperparameters):
    return {**job.as_record(), **dataclasses.asdict(hyperparameters)}


def _record_defaults():
    """What a job record written before a field existed stands for: the field's default."""
    return dataclass_defaults(FinetuningJob)


def _fit(model, examples, bucketing, job, trial_dir, state, first_step, hyperparameters, seed, validation):
    """Trains from batch `first_step` to the end (an unfinished epoch in a fit of its own: Keras' epochs are whole)."""
    import keras

    from finetune.trial_state import SaveTrialState, training_batches

    steps_per_epoch, epochs = state.steps_per_epoch, hyperparameters.num_train_epochs
    saver = SaveTrialState(state, job.save_checkpoints_steps, keep_best=job.keep_best_epoch and validation is not None)
    first_epoch, skip = divmod(first_step, steps_per_epoch)
    segments = [(first_epoch, first_epoch + 1, skip)] if skip else []
    segments.append((first_epoch + (1 if skip else 0), epochs, 0))
    for start, stop, skip in segments:
        if start >= stop:
            continue
        dataset = training_batches(examples, hyperparameters.train_batch_size, seed, start, stop, skip, **bucketing)
        state.build_metrics(model, dataset)
        # TensorBoard's train/ and validation/ under trial_<k>/logs, at step = epoch: a resumed trial goes on at its
        # own epoch. Its writers close at the end of a fit, so each fit gets its own.
        model.fit(
            dataset,
            initial_epoch=start,
            epochs=stop,
            steps_per_epoch=steps_per_epoch - skip,
            shuffle=False,  # `training_batches` shuffles each epoch; Keras would only warn it does not
            validation_data=validation,
            # TensorBoard first: a kill between its epoch summary and the save repeats the epoch's point
            # (same values under determinism) rather than losing it.
            callbacks=[keras.callbacks.TensorBoard(log_dir=os.path.join(trial_dir, LOGS_DIR)), saver],
            verbose=1 if job.progress_bar else 2,
        )


def _run_trial(job, trial, task, pretrained, tokenizer, data, hyperparameters, strategy):
    """Fine-tunes one model from `pretrained` with seed `job.seed + trial`, resuming its saved state if it has one;
    returns results.json's entry for it."""
    import keras

    from finetune.batching import num_shuffled_batches
    from finetune.optimization import create_finetuning_optimizer
    from finetune.trial_state import TrialState, finish_trial

    seed = job.seed + trial
    trial_dir = os.path.join(job.output_dir, f"trial_{trial}")
    os.makedirs(trial_dir, exist_ok=True)
    keras.utils.set_random_seed(seed)
    with strategy.scope():
        model = task.build_model(pretrained.model, hyperparameters, job, data)
        if job.lora_rank:  # before compile: the optimizer gets slots for the trainable variables only
            model.enable_lora(job.lora_rank, lora_alpha=job.lora_alpha)
        examples = task.train_examples(model, data)
        bucketing = dict(task.bucketing(model), pad_to_max_length=job.pad_to_max_length)
        # The true count of length-bucketed batches (every bucket's last one partial): the schedule's and resume's.
        steps_per_epoch = num_shuffled_batches(examples, hyperparameters.train_batch_size, **bucketing)
        train_steps = steps_per_epoch * hyperparameters.num_train_epochs
        task.compile_model(
            model,
            create_finetuning_optimizer(
                model.num_layers,
                hyperparameters.learning_rate,
                train_steps,
                layerwise_lr_decay=hyperparameters.layerwise_lr_decay,
                layerwise_lr_variant=job.layerwise_lr_variant,
                warmup_fraction=job.warmup_fraction,
                weight_decay=job.weight_decay,
                epsilon=job.adam_epsilon,
                bias_correction=job.bias_correction,
            ),
            gradient_accumulation_steps=job.gradient_accumulation_steps,
        )
        model.optimizer.build(model.trainable_variables)  # its slots exist before a saved state is restored
    state = TrialState(trial_dir, model, _job_record(job, hyperparameters), steps_per_epoch, _record_defaults())
    first_step = state.restore()
    if first_step:
        print(
            f"trial {trial}: resuming from {state.manager.latest_checkpoint} (epoch "
            f"{first_step // steps_per_epoch + 1}, batch {first_step % steps_per_epoch} of {steps_per_epoch})",
            flush=True,
        )
    print(f"trial {trial} (seed {seed}): {task.describe_training(data)}, {train_steps} steps", flush=True)
    validation = task.validation_dataset(model, data, job.eval_batch_size, job.pad_to_max_length)
    _fit(model, examples, bucketing, job, trial_dir, state, first_step, hyperparameters, seed, validation)
    history = state.history
    best_epoch = state.best_epoch() if job.keep_best_epoch else None
    if best_epoch is not None:
        model.load_weights(state.best_weights_path)
    with progress.step(f"trial {trial}: evaluating"):
        entry = {"trial": trial, "seed": seed, "metrics": task.evaluate(model, data, trial_dir, job)}
    if task.records_train_loss:
        entry["train_loss_per_epoch"] = history["loss"]
    if validation is not None:
        entry["validation_per_epoch"] = {
            name[len("val_") :]: values for name, values in history.items() if name.startswith("val_")
        }
    if best_epoch is not None:
        entry["kept_epoch"] = best_epoch + 1
    if job.save_models:
        path = os.path.join(trial_dir, MODEL_FILE)
        with progress.step(f"trial {trial}: saving {path}"):
            task.save_model(model, path, tokenizer, hyperparameters.max_seq_length)
    finish_trial(trial_dir, entry, state.job_record)
    return entry


def run(job, extra_files=None):
    """Fine-tunes `job.num_trials` models and writes the outputs listed in the module docstring; returns the results
    dict that `results.json` holds. `extra_files` ({name: text}, e.g. flags.txt) are written to `output_dir` once
    every input has checked out."""
    # TensorFlow is imported here, not at the top: validating a job (and reporting bad flags) stays fast.
    import keras

    from electra_tf.training import distribution
    from finetune.models.pretrained_parts import load_pretrained
    from finetune.results import format_summary, summarize_trials
    from finetune.trial_state import TRIAL_FILE, finished_trial

    job.validate()
    if job.strategy == "tpu" and not job.pad_to_max_length:
        # A TPU compiles one program per input shape: the reference's fixed-width batches.
        job = dataclasses.replace(job, pad_to_max_length=True)
    task = get_task(job.task)
    if job.deterministic:
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(job.strategy, job.tpu, job.num_cpu_devices)
    with progress.step(f"loading {job.init_checkpoint}"):
        pretrained = load_pretrained(
            job.init_checkpoint, allow_embedding_mismatch=job.allow_embedding_mismatch, vocab_file=job.vocab_file
        )
    if job.model_size is None:
        job = dataclasses.replace(job, model_size=model_size_of(pretrained.model.electra_config))
        print(
            f"model size: {job.model_size} (from {job.init_checkpoint}'s architecture; model_size overrides)",
            flush=True,
        )
    hyperparameters = job.hyperparameters()
    tokenizer = _tokenizer(job, pretrained)
    pretrained.model.electra_config.check_sequence_length(hyperparameters.max_seq_length)
    with progress.step(f"reading and tokenising the {task.name} data"):
        data = task.load_data(job, tokenizer, hyperparameters.max_seq_length)
    os.makedirs(job.output_dir, exist_ok=True)
    write_text_files(job.output_dir, extra_files or {})
    print(f"hyperparameters: {json.dumps(dataclasses.asdict(hyperparameters), sort_keys=True)}", flush=True)

    results = {
        "task": task.name,
        "job": job.as_record(),
        "hyperparameters": dataclasses.asdict(hyperparameters),
        **task.describe_data(data),
        "trials": [],
    }
    for trial in range(job.num_trials):
        trial_dir = os.path.join(job.output_dir, f"trial_{trial}")
        entry = finished_trial(trial_dir, _job_record(job, hyperparameters), _record_defaults())
        if entry is None:
            entry = _run_trial(job, trial, task, pretrained, tokenizer, data, hyperparameters, strategy)
        else:
            print(f"trial {trial}: finished earlier, results from {os.path.join(trial_dir, TRIAL_FILE)}", flush=True)
        results["trials"].append(entry)
        print(f"trial {trial}: {json.dumps(_json_safe(entry['metrics']), sort_keys=True)}", flush=True)
        results["summary"] = summarize_trials([entry["metrics"] for entry in results["trials"]])
        atomic_write_json(os.path.join(job.output_dir, RESULTS_FILE), _json_safe(results))
    for line in format_summary(results["summary"]):
        print(line, flush=True)
    keras.backend.clear_session(free_memory=False)
    return results
