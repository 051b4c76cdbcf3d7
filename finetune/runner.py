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
import os

from absl import logging

from electra_tf import progress
from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json, json_safe, write_text_files
from electra_tf.job_flags import flag_field
from electra_tf.lora_settings import check_lora_settings
from electra_tf.text_files import check_encoding
from electra_tf.training.choices import check_gradient_accumulation, distribution_field
from electra_tf.training.resumption import dataclass_defaults
from finetune.hyperparameters import ADAM_EPSILON, WARMUP_FRACTION, WEIGHT_DECAY, check_positive, model_size_of
from finetune.layerwise_lr import VARIANTS as LAYERWISE_LR_VARIANTS
from finetune.layerwise_lr import layerwise_lr_multipliers
from finetune.registry import get_task, reference_hyperparameters, tasks
from finetune.squad.features import DOC_STRIDE, MAX_QUERY_LENGTH
from finetune.squad.postprocess import MAX_ANSWER_LENGTH, N_BEST_SIZE

LOGS_DIR = "logs"
RESULTS_FILE = "results.json"
MODEL_FILE = "model.keras"


@dataclasses.dataclass
class FinetuningJob:
    """Everything a fine-tuning run needs; each field is a flag of `electra-finetune` with the field's name, default,
    help and choices (`electra_tf.job_flags`).

    Hyperparameters left as None take the reference's value for `task` and `model_size`
    (`Task.default_hyperparameters`); `model_size` None means the checkpoint's own (`model_size_of` its config).
    The SQuAD options at the end are read by the SQuAD tasks only.
    """

    task: str = flag_field(
        help_text="GLUE task: CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE or WNLI; squad (SQuAD 2.0) or squadv1 "
        "(SQuAD 1.1); a tagging task: chunk, ner, pos, ged or tagging; or classification / regression on your own "
        "--train_file and --dev_file."
    )
    init_checkpoint: str = flag_field(
        help_text="Pre-trained model directory (electra-pretrain writes <model_dir>/pretrained)."
    )
    output_dir: str = flag_field(help_text="Where results.json, predictions and models are written.")
    data_dir: str = flag_field(
        None,
        "GLUE directory holding <TASK>/train.tsv, dev.tsv (and test.tsv), as written by download_glue_data.py.",
    )
    model_size: str = flag_field(
        None,
        "Size whose reference learning rate and layer-wise decay are used (tiny, small, small++, base, large); "
        "default: read from --init_checkpoint's architecture.",
    )
    allow_embedding_mismatch: bool = flag_field(
        False,
        "For a Hugging Face discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
    )
    num_trials: int = flag_field(
        1,
        "Fine-tuning runs from the same checkpoint with seeds seed, seed+1, ...; the paper reports the median of (at "
        "least) 10.",
    )
    seed: int = flag_field(0, "Seed of the first trial (head initialisation, dropout, data order).")
    learning_rate: float = flag_field(None, "Peak learning rate (default: 3e-4 small, 1e-4 base, 5e-5 large).")
    num_train_epochs: int = flag_field(None, "Epochs (default: 3; RTE and STS-B 10).")
    train_batch_size: int = flag_field(None, "Global batch size of one optimizer update (default 32).")
    # electra_tf.training.gradient_accumulation
    gradient_accumulation_steps: int = flag_field(
        1,
        "Run each batch as this many micro-batches of --train_batch_size / this examples in turn, adding up their "
        "gradients: the update of the whole batch with the activation memory of a micro-batch. Steps and the "
        "learning-rate schedule count updates.",
    )
    eval_batch_size: int = flag_field(128, "Batch size for predictions.")
    max_seq_length: int = flag_field(None, "Sequence length (default 128).")
    layerwise_lr_decay: float = flag_field(None, "Layer-wise learning-rate decay (default 0.8; large 0.9; 1 = none).")
    layerwise_lr_variant: str = flag_field(
        "reference",
        "reference: embeddings get decay^(L+2) as the reference code; paper: decay^(L+1) as the paper.",
        choices=LAYERWISE_LR_VARIANTS,
    )
    weight_decay: float = flag_field(
        WEIGHT_DECAY["reference"],
        "Decoupled weight decay, not on LayerNorm and biases (reference code 0.01; the paper 0).",
    )
    warmup_fraction: float = flag_field(WARMUP_FRACTION, "Fraction of the steps with linear warm-up.")
    adam_epsilon: float = flag_field(ADAM_EPSILON, "Adam epsilon.")
    bias_correction: bool = flag_field(False, "Adam bias correction (the reference has none).")
    # `ElectraBackbone.enable_lora` on the backbone's query and value projections.
    lora_rank: int = flag_field(
        None,
        "LoRA: freeze the pre-trained encoder and train rank-N factors of its query and value projections (and the "
        "task head) instead; saved models and exports hold the merged kernels. Default: full fine-tuning.",
    )
    lora_alpha: float = flag_field(
        None, "LoRA's scale is --lora_alpha / --lora_rank (default --lora_rank: a scale of 1)."
    )
    vocab_file: str = flag_field(None, "Vocabulary (default: vocab.txt of --init_checkpoint).")
    do_lower_case: bool = flag_field(
        None, "Lower-case text (default: what --init_checkpoint records; lower-case if it records nothing)."
    )
    strip_accents: bool = flag_field(
        None, "Strip accents (default: what --init_checkpoint records, else --do_lower_case)."
    )
    data_source: str = flag_field(
        "tsv",
        "Files in --data_dir (GLUE TSV; SQuAD's official JSON with tsv or json) or --train_file/--dev_file (tagging), "
        "or tensorflow-datasets glue / squad / conll2003 (--task=ner, chunk or pos).",
        choices=("tsv", "json", "tfds"),
    )
    tfds_data_dir: str = flag_field(None, "tensorflow-datasets data directory, with --data_source=tfds.")
    tfds_download: bool = flag_field(
        False, "Let tensorflow-datasets download and prepare the dataset (--data_source=tfds)."
    )
    strategy: str = distribution_field("strategy")
    tpu: str = distribution_field("tpu")
    num_cpu_devices: int = distribution_field("num_cpu_devices")
    mixed_precision: str = distribution_field("mixed_precision")
    pad_to_max_length: bool = flag_field(
        False,
        "Pad every batch to --max_seq_length, as the reference, instead of batching examples of similar length cut "
        "to their longest (always on with --strategy=tpu).",
    )
    save_models: bool = flag_field(False, "Save each trial's fine-tuned model (raw text in) as trial_<k>/model.keras.")
    keep_best_epoch: bool = flag_field(
        False,
        "End each trial on the weights of the epoch with the lowest dev loss (the dev split is then also the "
        "selection set: its scores are optimistic).",
    )
    progress_bar: bool = flag_field(True, "Keras progress bar (otherwise one line per epoch).")
    save_checkpoints_steps: int = flag_field(
        None,
        "Also save the trial's state every N batches (it is always saved at the end of every epoch); rerunning the "
        "command resumes an interrupted run from there.",
    )
    deterministic: bool = flag_field(
        False,
        "TensorFlow op determinism: an interrupted and resumed run ends with the weights and dev results of an "
        "uninterrupted one.",
    )
    max_train_examples: int = flag_field(
        None,
        "Train on the first N examples only (SQuAD: questions; tagging: sentences; before MRPC/STS-B's swapped pairs "
        "are added).",
    )
    max_eval_examples: int = flag_field(
        None, "Evaluate on the first N examples of each evaluation split (dev, test) only."
    )
    squad_head: str = flag_field(
        "joint",
        "SQuAD: joint = the paper's start-conditioned end head with a 20 x 20 beam (and for 2.0 an answerability "
        "classifier); simple = independent start/end.",
        choices=("joint", "simple"),
    )
    doc_stride: int = flag_field(DOC_STRIDE, "SQuAD: tokens between the starts of consecutive context windows.")
    max_query_length: int = flag_field(MAX_QUERY_LENGTH, "SQuAD: questions are cut to this many word pieces.")
    n_best_size: int = flag_field(N_BEST_SIZE, "SQuAD: n-best answers kept per question (and the joint head's beam).")
    max_answer_length: int = flag_field(MAX_ANSWER_LENGTH, "SQuAD: longest answer, in word pieces.")
    null_score_threshold: float = flag_field(0.0, 'SQuAD 2.0: answer "" when the null odds exceed this.')
    # Tagging tasks (finetune.tagging.task) and the user's own files (finetune.own_data.task).
    train_file: str = flag_field(
        None,
        "Tagging: training file, CoNLL columns (one word per line, a blank line between sentences; -DOCSTART- lines "
        "are document breaks), .conllu, .pos, or FCE's token TSV for --task=ged. classification/regression: a .csv, "
        ".tsv or .jsonl file.",
    )
    dev_file: str = flag_field(
        None, "Tagging, classification, regression: the file scored after training (same format)."
    )
    test_file: str = flag_field(
        None, "Tagging, classification, regression: a further file predicted (and scored when labelled)."
    )
    word_column: int = flag_field(0, "Tagging: column of the word (0-based).")
    tag_column: int = flag_field(-1, "Tagging: column of the tag (0-based; -1 the last).")
    text_column: str = flag_field(None, "classification/regression: column (or JSON key) of the text.")
    text_pair_column: str = flag_field(None, "classification/regression: column of the second text of a pair.")
    label_column: str = flag_field(
        "label",
        "classification/regression: column of the label (strings are kept: predictions and the exported model give "
        "them back).",
    )
    input_encoding: str = flag_field(
        "utf-8",
        "Encoding of every data file read (own files, tagging files, GLUE TSV, SQuAD JSON): a Python codec name such "
        "as latin-1 or cp1252.",
    )
    encoding_errors: str = flag_field(
        "strict",
        "Bytes not valid in --input_encoding: strict (stop naming file, line and column), replace, ignore, or another "
        "Python codecs error handler.",
    )

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
        return reference_hyperparameters(
            self.task,
            self.model_size or "small",
            learning_rate=self.learning_rate,
            num_train_epochs=self.num_train_epochs,
            max_seq_length=self.max_seq_length,
            layerwise_lr_decay=self.layerwise_lr_decay,
            train_batch_size=self.train_batch_size,
        )


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
        print(f"trial {trial}: {json.dumps(json_safe(entry['metrics']), sort_keys=True)}", flush=True)
        results["summary"] = summarize_trials([entry["metrics"] for entry in results["trials"]])
        atomic_write_json(os.path.join(job.output_dir, RESULTS_FILE), json_safe(results))
    for line in format_summary(results["summary"]):
        print(line, flush=True)
    keras.backend.clear_session(free_memory=False)
    return results
