"""The experiment's pre-training stage: a `PretrainingJob` per objective under <output_dir>/pretraining/, the
discriminator of each evaluation step exported for fine-tuning, and the randomly initialised baseline."""

import os
import time

from electra_studies.compute_matched.report import BASELINE
from electra_studies.compute_matched.settings_record import check_or_record_job
from electra_tf.config import ElectraConfig
from electra_tf.errors import DataError


def pretraining_job(settings, objective, run_plan, records, heldout_records, vocab):
    """The `PretrainingJob` of `objective`'s run of the plan: its steps and intervals, checkpoints kept at its
    evaluation steps (and at the step ELECTRA starts from), started from the masked-LM run's kept checkpoint when the
    plan says so."""
    from electra_tf.training.pretraining_spec import PretrainingJob

    kept_steps = {point["step"] for point in run_plan["eval_points"]} | set(run_plan.get("handover_steps", ()))
    starts_from = run_plan.get("starts_from")
    return PretrainingJob(
        pretrain_tfrecords=records,
        model_dir=pretraining_dir(settings, objective),
        model_size=settings.model_size,
        vocab_file=vocab,
        max_seq_length=settings.max_seq_length,
        train_batch_size=settings.train_batch_size,
        learning_rate=settings.learning_rate,
        num_train_steps=run_plan["steps"],
        num_warmup_steps=run_plan["warmup_steps"],
        # At every log point, so that an interrupted run of a long budget resumes from there, not from its last
        # evaluation step.
        save_checkpoints_steps=run_plan["log_every_steps"],
        checkpoint_steps=tuple(sorted(kept_steps)),
        keep_checkpoint_max=2,
        log_every_steps=run_plan["log_every_steps"],
        seed=settings.seed,
        bias_correction=settings.bias_correction,
        mixed_precision=settings.mixed_precision,
        progress_bar=False,
        model_overrides={"objective": objective},
        eval_tfrecords=heldout_records,
        eval_every_steps=run_plan["eval_every_steps"],
        num_eval_steps=settings.num_eval_steps,
        init_checkpoint=_kept_checkpoint(pretraining_dir(settings, starts_from["objective"]), starts_from["step"])
        if starts_from
        else None,
    )


def pretraining_dir(settings, objective):
    """<output_dir>/pretraining/<objective>: the run's model_dir."""
    return os.path.join(settings.output_dir, "pretraining", objective)


def _kept_checkpoint(model_dir, step):
    from electra_tf.checkpoints.ours import kept_checkpoint  # imports TensorFlow: not for --help and errors

    return kept_checkpoint(model_dir, step)


def _final_step_done(model_dir, steps):
    import tensorflow as tf

    from electra_tf.training.pretraining_job import PRETRAINED_DIR

    latest = tf.train.latest_checkpoint(model_dir)
    return (
        latest is not None
        and latest.endswith(f"ckpt-{steps}")
        and os.path.isfile(os.path.join(model_dir, PRETRAINED_DIR, "config.json"))
    )


def pretrain(settings, objective, run_plan, records, heldout_records, vocab):
    """Runs (or resumes, or skips) one objective's pre-training; returns {step: pretrained directory} and seconds."""
    import keras

    from electra_tf.training.pretraining_job import run

    job = pretraining_job(settings, objective, run_plan, records, heldout_records, vocab)
    check_or_record_job(job)
    start = time.time()
    if _final_step_done(job.model_dir, job.num_train_steps):
        print(f"{objective}: pre-training already done ({job.model_dir})", flush=True)
    else:
        print(
            f"{objective}: pre-training {job.num_train_steps} steps ({run_plan['flops_per_step']:.3g} FLOPs each)",
            flush=True,
        )
        try:
            run(job)
        finally:
            # The job sets the global dtype policy; the exports and fine-tuning that follow run in float32.
            keras.mixed_precision.set_global_policy("float32")
    directories = export_checkpoints(job, run_plan, vocab)
    return directories, time.time() - start


def export_checkpoints(job, run_plan, vocab):
    """{step: model directory (save_checkpoint)} for every evaluation step: the run's `pretrained/` for its last step,
    the discriminator-sized network restored from the run's `kept-<step>` for the others."""
    from electra_tf.training.pretraining_job import CONFIG_FILE, PRETRAINED_DIR

    directories, model = {}, None
    for step in sorted({point["step"] for point in run_plan["eval_points"]}):
        if step == job.num_train_steps:
            directories[step] = os.path.join(job.model_dir, PRETRAINED_DIR)
            continue
        # Not under eval/: that is the held-out evaluation's TensorBoard directory.
        target = os.path.join(job.model_dir, "discriminators", f"step-{step}")
        directories[step] = target
        if os.path.isfile(os.path.join(target, "config.json")):
            continue
        import tensorflow as tf

        from electra_tf.models import save_checkpoint
        from electra_tf.training.pretrainer import ElectraPretrainer

        checkpoint = _kept_checkpoint(job.model_dir, step)
        if not os.path.exists(checkpoint + ".index"):
            raise DataError(
                f"{checkpoint} is missing: the pre-training run did not save its evaluation step {step}; "
                f"remove {job.model_dir} and run again"
            )
        if model is None:
            config = ElectraConfig.load(os.path.join(job.model_dir, CONFIG_FILE))
            model = ElectraPretrainer(config, max_seq_length=job.max_seq_length)
        tf.train.Checkpoint(model=model).restore(checkpoint).expect_partial().assert_existing_objects_matched()
        save_checkpoint(model.pretrained_discriminator(), target, vocab_file=vocab)
    if model is not None:
        import keras

        keras.backend.clear_session(free_memory=False)
    return directories


def random_init_checkpoint(settings, vocab):
    """A model directory (save_checkpoint) of a randomly initialised discriminator (the FLOPs-0 baseline)."""
    target = pretraining_dir(settings, BASELINE)
    if not os.path.isfile(os.path.join(target, "config.json")):
        import keras

        from electra_tf.models import build_discriminator, save_checkpoint
        from electra_tf.training.pretraining_spec import PretrainingJob

        config = PretrainingJob(
            pretrain_tfrecords="-", model_dir="-", model_size=settings.model_size, vocab_file=vocab
        ).model_config()
        keras.utils.set_random_seed(settings.seed)
        save_checkpoint(build_discriminator(config), target, vocab_file=vocab)
        keras.backend.clear_session(free_memory=False)
    return target
