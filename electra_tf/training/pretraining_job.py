"""One pre-training run: data, model, optimizer, checkpoints and logs in a model directory.

`electra-pretrain` turns its flags into a `PretrainingJob` and calls `run()`; tests and notebooks can do the same.
"""

import dataclasses
import json
import os
import shutil
import tempfile

import keras
import tensorflow as tf

from electra_tf.checkpoints.ours import JOB_NAME, PRETRAINED_DIR, RUN_CONFIG_NAME
from electra_tf.data.pretraining_dataset import (
    corrupt_records_reported,
    make_pretraining_dataset,
)
from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_json, write_text_files
from electra_tf.models import save_checkpoint
from electra_tf.training import callbacks as callbacks_lib
from electra_tf.training import distribution, preemption
from electra_tf.training.evaluation import (
    EVAL_METRICS_FILE,
    PeriodicEvaluation,
    PretrainingEvaluator,
    format_evaluation,
    write_evaluation,
)
from electra_tf.training.initialization import (
    initialize_positions_sinusoidally,
)
from electra_tf.training.optimizers import create_optimizer
from electra_tf.training.pretrainer import ElectraPretrainer
from electra_tf.training.pretraining_inputs import resolve_and_check_inputs, saved_job
from electra_tf.training.resumption import seed_generator_states
from electra_tf.training.schedules import WarmupLinearDecay

CONFIG_FILE = RUN_CONFIG_NAME
JOB_FILE = JOB_NAME
METRICS_FILE = "metrics.jsonl"


def build_model(job, config, strategy):
    """The compiled pre-training model with its optimizer built (so a checkpoint restores every slot at once)."""
    with strategy.scope():
        model = ElectraPretrainer(
            config,
            max_seq_length=job.max_seq_length,
            seed=job.seed,
            clip_norm=job.clip_norm,
            num_train_steps=job.num_train_steps,
            gradient_accumulation_steps=job.gradient_accumulation_steps,
        )
        schedule = WarmupLinearDecay(job.learning_rate, job.num_train_steps, job.num_warmup_steps, mode=job.lr_schedule)
        optimizer = create_optimizer(
            job.optimizer,
            schedule,
            weight_decay=job.weight_decay,
            epsilon=job.adam_epsilon,
            bias_correction=job.bias_correction,
        )
        model.compile(optimizer=optimizer, jit_compile=job.jit_compile, steps_per_execution=job.steps_per_execution)
        model.optimizer.build(model.trainable_variables)
        if config.sinusoidal_position_init:
            for embeddings in filter(None, (model.embeddings, model.generator_embeddings)):
                initialize_positions_sinusoidally(embeddings, config.initializer_range)
    return model


def _checkpoint_directory(job, chief):
    """Where this worker saves: model_dir on the chief; elsewhere a temporary directory (every worker must take part
    in a save under MultiWorkerMirroredStrategy, but only the chief's copy is kept)."""
    return job.model_dir if chief else tempfile.mkdtemp(prefix="electra-worker-checkpoints-")


def run(job, extra_files=None):
    """Pre-train (or resume) as `job` says; returns the logs of the last step.

    `extra_files` ({name: text}, e.g. the entry point's flags.txt) are written to model_dir with the run's config,
    after every input check has passed, so a rejected run leaves nothing behind. Raises
    `preemption.TrainingPreempted` after saving a checkpoint when SIGTERM arrives, and under strategy=multi_worker
    `WorkerLostError` when another worker dies or stops answering (TensorFlow cannot go on in this process then).
    """
    job.validate()
    if job.worker_hosts:
        distribution.configure_cluster(job.worker_hosts, job.task_index)
    if job.deterministic:
        tf.config.experimental.enable_op_determinism()
    chief = distribution.is_chief()
    checkpoint_dir = _checkpoint_directory(job, chief)
    new_model_dir = not tf.io.gfile.exists(job.model_dir)
    step_progress = callbacks_lib.StepProgress()
    try:
        return _run(job, chief, checkpoint_dir, extra_files or {}, step_progress)
    except tf.errors.OpError as error:
        if job.strategy == "multi_worker" and distribution.is_lost_worker_error(error):
            raise distribution.lost_worker_error(
                error, step_progress.step, job.model_dir, job.collective_timeout_seconds
            ) from error
        raise
    except DataError as error:
        # A corrupt record met in training: the last checkpoint stays; a model_dir this run created and that holds
        # none yet is removed, so a rejected run leaves nothing behind.
        latest = tf.train.latest_checkpoint(job.model_dir)
        if chief and new_model_dir and latest is None:
            shutil.rmtree(job.model_dir, ignore_errors=True)
        if "corrupt record" in str(error):
            kept = f"model_dir keeps its last checkpoint {latest}" if latest else "no checkpoint was written"
            raise DataError(f"{error}; {kept}", arguments=(*error.arguments, "model_dir")) from None
        raise
    finally:
        if checkpoint_dir != job.model_dir:
            shutil.rmtree(checkpoint_dir, ignore_errors=True)


def _run(job, chief, checkpoint_dir, extra_files, step_progress):
    """The run's steps in order; `run` handles what they raise."""
    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(
        job.strategy, job.tpu, job.num_cpu_devices, collective_timeout_seconds=job.collective_timeout_seconds
    )
    resolved = resolve_and_check_inputs(job, strategy)
    print(f"model config: {json.dumps(resolved.config.to_dict(), sort_keys=True)}", flush=True)
    print(f"job: {json.dumps(dataclasses.asdict(job), sort_keys=True)}", flush=True)
    model, checkpoint = _build_or_restore_model(job, resolved, strategy)
    evaluator = _make_evaluator(job, model) if job.eval_tfrecords else None
    sources = {
        "pretrain_tfrecords": job.pretrain_tfrecords if job.mode == "train" else None,
        "eval_tfrecords": job.eval_tfrecords,
    }
    if job.mode == "eval":
        with corrupt_records_reported(sources):
            return _evaluate_once(job, chief, evaluator)

    if chief:
        _write_run_files(job, resolved, extra_files)
    # TF writes a checkpoint's files first and the `checkpoint` state file last, by atomic rename, so a crash while
    # saving leaves the state file naming the previous complete checkpoint: that is what a restart restores.
    manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir, max_to_keep=job.keep_checkpoint_max or None)
    initial_step = callbacks_lib.current_step(model)
    if chief:
        _truncate_logs_to(job.model_dir, initial_step)
    logs = _train(job, model, manager, evaluator, step_progress, sources, chief, initial_step)
    if chief:
        _export_pretrained(job, model, resolved)
    keras.backend.clear_session(free_memory=False)
    return logs


def _build_or_restore_model(job, resolved, strategy):
    """(model, its `tf.train.Checkpoint`): new, initialised from init_checkpoint, and restored from model_dir's
    latest checkpoint when there is one."""
    keras.utils.set_random_seed(job.seed)
    model = build_model(job, resolved.config, strategy)
    checkpoint = tf.train.Checkpoint(
        model=model, optimizer=model.optimizer, seed_generators=tf.train.Checkpoint(**seed_generator_states(model))
    )
    initial = resolved.initial
    if initial is not None:
        initial.assign_to(model)
        print(f"initialised from {initial.description}", flush=True)
        if not initial.has_generator:
            generator = resolved.config.generator_architecture()
            print(
                f"{job.init_checkpoint} holds no generator: a new generator (hidden {generator.hidden_size}, "
                f"{generator.num_layers} layers, by the sizing rule) starts from random weights and shares "
                "the discriminator's embeddings",
                flush=True,
            )
    if resolved.latest_checkpoint:
        checkpoint.restore(resolved.latest_checkpoint).assert_existing_objects_matched()
        print(f"resumed from {resolved.latest_checkpoint}", flush=True)
        if job.mode == "train":
            _report_moved_schedule(job, callbacks_lib.current_step(model))
    return model, checkpoint


def _report_moved_schedule(job, step):
    """A resumed run may end at another num_train_steps (to extend it); the learning-rate schedule then ends there
    too, and the rate from the restored step on is not the one the run had: say so."""
    saved_steps = saved_job(job.model_dir).get("num_train_steps")
    if not saved_steps or saved_steps == job.num_train_steps:
        return

    def rate(num_train_steps):
        schedule = WarmupLinearDecay(job.learning_rate, num_train_steps, job.num_warmup_steps, mode=job.lr_schedule)
        return float(schedule(step))

    print(
        f"num_train_steps changed from {saved_steps} to {job.num_train_steps}: the learning-rate schedule now ends "
        f"at step {job.num_train_steps}, and the rate at step {step} moves from {rate(saved_steps):.3g} to "
        f"{rate(job.num_train_steps):.3g}",
        flush=True,
    )


def _make_evaluator(job, model):
    eval_dataset = make_pretraining_dataset(
        job.eval_tfrecords,
        job.max_seq_length,
        job.eval_batch_size or job.train_batch_size,
        seed=job.seed,
        is_training=False,
        validate=False,
        argument="eval_tfrecords",
    )
    return PretrainingEvaluator(model, eval_dataset, job.num_eval_steps)


def _evaluate_once(job, chief, evaluator):
    """mode=eval: one evaluation of the restored (or initialised) model, appended to eval_metrics.jsonl."""
    result = evaluator.evaluate()
    if chief:
        os.makedirs(job.model_dir, exist_ok=True)
        write_evaluation(job.model_dir, result)
    print(format_evaluation(result), flush=True)
    keras.backend.clear_session(free_memory=False)
    return result


def _write_run_files(job, resolved, extra_files):
    """`extra_files`, the model config and the job in model_dir."""
    os.makedirs(job.model_dir, exist_ok=True)
    write_text_files(job.model_dir, extra_files)
    resolved.config.save(os.path.join(job.model_dir, CONFIG_FILE))
    # With the vocabulary and the tokenizer settings resolved, so that a conversion of the run
    # (electra-convert) finds them.
    atomic_write_json(
        os.path.join(job.model_dir, JOB_FILE),
        dataclasses.asdict(
            dataclasses.replace(job, vocab_file=resolved.vocab_file, **resolved.tokenizer_settings.to_dict())
        ),
    )


def _truncate_logs_to(model_dir, step):
    """Drop the metrics logged after `step` by a run that stopped later than its last checkpoint."""
    callbacks_lib.truncate_metrics_log(os.path.join(model_dir, METRICS_FILE), step)
    callbacks_lib.truncate_metrics_log(os.path.join(model_dir, EVAL_METRICS_FILE), step)


def _train(job, model, manager, evaluator, step_progress, sources, chief, initial_step):
    """Train from `initial_step` to stop_at_step, else num_train_steps; returns the logs of the last step ({} when
    already there). Raises `preemption.TrainingPreempted` once the checkpoint of a SIGTERM is saved."""
    remaining = (job.stop_at_step or job.num_train_steps) - initial_step
    if remaining <= 0:
        print(f"{job.model_dir} is already trained to step {initial_step}", flush=True)
        return {}
    dataset = make_pretraining_dataset(
        job.pretrain_tfrecords,
        job.max_seq_length,
        job.train_batch_size,
        seed=job.seed,
        is_training=True,
        skip_batches=initial_step,
        validate=False,
    )  # checked by _check_data
    stop_on_sigterm = preemption.StopOnSigterm()
    callbacks = [
        step_progress,
        stop_on_sigterm,
        callbacks_lib.NonFiniteLossGuard(job.model_dir, job.nonfinite_loss),
        callbacks_lib.LossScaleMonitor(),
        callbacks_lib.MetricsLogger(
            os.path.join(job.model_dir, METRICS_FILE),
            os.path.join(job.model_dir, "train"),
            job.log_every_steps,
            enabled=chief,
            expected_initial_loss=model.expected_initial_loss(),
        ),
        callbacks_lib.CheckpointSaver(manager, job.save_checkpoints_steps, job.checkpoint_steps),
    ]
    if evaluator is not None:
        callbacks.append(PeriodicEvaluation(evaluator, job.model_dir, job.eval_every_steps, enabled=chief))
    with corrupt_records_reported(sources):
        history = model.fit(
            dataset,
            epochs=1,
            steps_per_epoch=remaining,
            callbacks=callbacks,
            shuffle=False,
            verbose=1 if job.progress_bar else 2,
        )
    if stop_on_sigterm.requested:
        keras.backend.clear_session(free_memory=False)
        raise preemption.TrainingPreempted(callbacks_lib.current_step(model), job.model_dir)
    return {name: values[-1] for name, values in history.history.items()}


def _export_pretrained(job, model, resolved):
    """The trained discriminator in model_dir/pretrained/, with the run's vocabulary and tokenizer settings."""
    save_checkpoint(
        model.pretrained_discriminator(),
        os.path.join(job.model_dir, PRETRAINED_DIR),
        "ours",
        resolved.vocab_file,
        resolved.tokenizer_settings,
    )
