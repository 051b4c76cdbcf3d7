"""One fine-tuning run of any task: a pre-trained checkpoint, `num_trials` seeds, results and predictions on disk.

`electra-finetune` turns its flags into a `finetune.finetuning_spec.FinetuningJob` (its fields, their checks and the
hyperparameters they resolve to) and calls `run()`; tests and notebooks can do the same. The task
(`finetune.registry.get_task(job.task)`) supplies data, model head, loss and scorer; this module owns what every task
shares: the strategy, the trial loop with its seeds, the optimizer and the results. Outputs in `output_dir`:

* `results.json`: the task, the job, the hyperparameters used, facts about the data, each trial's seed, official
  dev metrics, wall seconds (`seconds`: training and evaluating it, over every run of a resumed trial up to
  its last save) and (when the task has a labelled dev split) Keras' dev loss and metrics after every epoch, and per
  metric the median (what the paper reports), mean and std over trials; rewritten atomically after every trial,
  with `complete` false until the last trial has finished.
* `trial_<k>/`: the task's prediction files (GLUE: `dev_predictions.tsv` and `submission/<TASK>.tsv`, see
  `finetune.glue.task`; SQuAD: `predictions.json`, `nbest_predictions.json`, `null_odds.json`, see
  `finetune.squad.task`; tagging, own files: see theirs), TensorBoard logs in `logs/train` and `logs/validation`,
  and, with `save_models`, `model.keras`; `trial.json` once the trial has finished, `state/` while it has not
  (`finetune.trial_state`).

Rerunning the command of an interrupted run skips the finished trials and resumes the unfinished one from its last
save (every epoch's end, and every `save_checkpoints_steps` batches); with `deterministic` it ends exactly as an
uninterrupted run would. Under `strategy="multi_worker"` (the cluster from `worker_hosts` and `task_index`, or from
TF_CONFIG) every worker runs the same job and only the chief writes to `output_dir` (the others write to a temporary
directory they remove, and resume from the chief's saves: `output_dir` must be on a file system they share to
resume).
"""

import dataclasses
import json
import os
import shutil
import tempfile

from absl import logging

from electra_tf import progress
from electra_tf.io_utils import atomic_write_json, json_safe, write_text_files
from electra_tf.training.resumption import changed_settings, dataclass_defaults
from finetune.finetuning_spec import FinetuningJob
from finetune.hyperparameters import model_size_of
from finetune.registry import get_task

LOGS_DIR = "logs"
RESULTS_FILE = "results.json"
MODEL_FILE = "model.keras"


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


def finished_results(job):
    """What `run(job)` would return when every trial of `job` has finished in its `output_dir` (its results.json,
    read without loading the model or the data), else None; also None when that file is another job's, which `run`
    then names. The same job is the one `run` resumes: only the fields of `finetune.trial_state.RESUMABLE_CHANGES`
    may differ, and a field the record predates counts as its default."""
    from finetune.trial_state import RESUMABLE_CHANGES

    path = os.path.join(job.output_dir, RESULTS_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        results = json.load(handle)
    if not results.get("complete") or len(results.get("trials", [])) != job.num_trials:
        return None
    current = job.as_record()
    if job.model_size is None:  # `run` records the size it read from the checkpoint
        current["model_size"] = results["job"].get("model_size")
    if changed_settings(results["job"], current, RESUMABLE_CHANGES, _record_defaults()):
        return None
    return results


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


def _run_trial(job, trial, task, pretrained, tokenizer, data, hyperparameters, strategy, output_dir):
    """Fine-tunes one model from `pretrained` with seed `job.seed + trial` into `output_dir`, resuming the trial's
    saved state in `job.output_dir` if it has one; returns results.json's entry for it."""
    import keras

    from finetune.batching import num_shuffled_batches
    from finetune.optimization import create_finetuning_optimizer
    from finetune.trial_state import TrialState, finish_trial

    seed = job.seed + trial
    trial_dir = os.path.join(output_dir, f"trial_{trial}")
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
            concurrent_micro_batches=job.concurrent_micro_batches,
        )
        model.optimizer.build(model.trainable_variables)  # its slots exist before a saved state is restored
    state = TrialState(
        trial_dir,
        model,
        _job_record(job, hyperparameters),
        steps_per_epoch,
        _record_defaults(),
        resume_from=os.path.join(job.output_dir, f"trial_{trial}"),
    )
    first_step = state.restore()
    if first_step:
        print(
            f"trial {trial}: resuming from {state.restored_from} (epoch "
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
    entry["seconds"] = round(state.seconds(), 1)
    finish_trial(trial_dir, entry, state.job_record)
    return entry


def run(job, extra_files=None):
    """Fine-tunes `job.num_trials` models and writes the outputs listed in the module docstring; returns the results
    dict that `results.json` holds. `extra_files` ({name: text}, e.g. flags.txt) are written to `output_dir` once
    every input has checked out."""
    # TensorFlow is imported here, not at the top: validating a job (and reporting bad flags) stays fast.
    from electra_tf.training import distribution
    from finetune.models.pretrained_parts import load_pretrained

    job.validate()
    if job.strategy == "tpu" and not job.pad_to_max_length:
        # A TPU compiles one program per input shape: the reference's fixed-width batches.
        job = dataclasses.replace(job, pad_to_max_length=True)
    task = get_task(job.task)
    if job.deterministic:
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
    if job.worker_hosts:
        distribution.configure_cluster(job.worker_hosts, job.task_index)
    distribution.set_precision(job.mixed_precision)
    distribution.share_threads_between_micro_batches(job.concurrent_micro_batches)
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
    # Under strategy=multi_worker every worker runs every trial, and only the chief's outputs are kept: the others
    # write theirs to a temporary directory, and read the chief's output_dir to skip finished trials and resume.
    output_dir = job.output_dir if distribution.is_chief() else tempfile.mkdtemp(prefix="electra-worker-finetuning-")
    try:
        return _run_trials(job, task, pretrained, tokenizer, data, hyperparameters, strategy, output_dir, extra_files)
    finally:
        if output_dir != job.output_dir:
            shutil.rmtree(output_dir, ignore_errors=True)


def _run_trials(job, task, pretrained, tokenizer, data, hyperparameters, strategy, output_dir, extra_files):
    """`run`'s trials, their outputs written to `output_dir`."""
    import keras

    from finetune.results import format_summary, summarize_trials
    from finetune.trial_state import TRIAL_FILE, finished_trial

    os.makedirs(output_dir, exist_ok=True)
    write_text_files(output_dir, extra_files or {})
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
            entry = _run_trial(job, trial, task, pretrained, tokenizer, data, hyperparameters, strategy, output_dir)
        else:
            print(f"trial {trial}: finished earlier, results from {os.path.join(trial_dir, TRIAL_FILE)}", flush=True)
        results["trials"].append(entry)
        print(f"trial {trial}: {json.dumps(json_safe(entry['metrics']), sort_keys=True)}", flush=True)
        results["summary"] = summarize_trials([entry["metrics"] for entry in results["trials"]])
        results["complete"] = len(results["trials"]) == job.num_trials
        atomic_write_json(os.path.join(output_dir, RESULTS_FILE), json_safe(results))
    for line in format_summary(results["summary"]):
        print(line, flush=True)
    keras.backend.clear_session(free_memory=False)
    return results
