"""What a pre-training run starts from, settled and checked before anything is written: the model (resumed, from
init_checkpoint, or new), its vocabulary and tokenizer settings, the data against them, and the model_dir's earlier
run against this one (`resolve_and_check_inputs`)."""

import dataclasses
import json
import os

import tensorflow as tf
from absl import logging

from electra_tf import progress
from electra_tf.checkpoints.ours import JOB_NAME, RUN_CONFIG_NAME
from electra_tf.config import ElectraConfig
from electra_tf.data.pretraining_dataset import check_pretraining_data
from electra_tf.errors import ConfigError, DataError
from electra_tf.training.choices import check_gradient_accumulation
from electra_tf.training.initialization import check_data_vocabulary, read_initial_weights
from electra_tf.training.pretraining_spec import PretrainingJob
from electra_tf.training.resumption import dataclass_defaults, refuse_other_settings

# The job's settings that decide what a training step computes: a resumed run keeps them. The others (logging,
# evaluation, checkpoints, devices, precision, and num_train_steps, so that a run can be extended) may change.
TRAINING_SETTINGS = (
    "train_batch_size",
    "max_seq_length",
    "learning_rate",
    "num_warmup_steps",
    "lr_schedule",
    "optimizer",
    "weight_decay",
    "adam_epsilon",
    "bias_correction",
    "clip_norm",
    "gradient_accumulation_steps",
    "seed",
)


@dataclasses.dataclass(frozen=True)
class ResolvedInputs:
    """What a run settled on from its flags, its model_dir and its data, before anything is written."""

    latest_checkpoint: str  # None in a model_dir without one
    config: ElectraConfig
    initial: object  # `InitialWeights` read from init_checkpoint, or None
    vocab_file: str
    tokenizer_settings: object  # `TokenizerSettings`


def resolve_and_check_inputs(job, strategy):
    """The run's `ResolvedInputs`, every input checked (so that a rejected run leaves nothing behind)."""
    if job.mode == "train":
        check_gradient_accumulation(
            job.gradient_accumulation_steps, job.train_batch_size, strategy.num_replicas_in_sync
        )
    latest = tf.train.latest_checkpoint(job.model_dir)
    config, initial, vocab_file = _resolve_model(job, latest)
    manifest, eval_manifest = _check_data(job, config, initial, vocab_file)
    tokenizer_settings = _resolve_tokenizer_settings(job, manifest or eval_manifest, initial)
    config.check_sequence_length(job.max_seq_length)
    _check_same_run(job, config)
    return ResolvedInputs(latest, config, initial, vocab_file, tokenizer_settings)


def _resolve_model(job, latest):
    """(config, `InitialWeights` or None, vocabulary file) of the run: resumed (the saved config), started from
    `init_checkpoint` (its architecture), or new (the preset)."""
    saved = os.path.join(job.model_dir, RUN_CONFIG_NAME)
    if latest and (job.init_checkpoint or job.mode == "eval"):
        if job.init_checkpoint:
            action = "evaluating" if job.mode == "eval" else "resuming from"
            logging.warning(
                "model_dir=%s holds %s: %s it; init_checkpoint=%s was not used (to start from "
                "init_checkpoint, use a new model_dir)",
                job.model_dir,
                latest,
                action,
                job.init_checkpoint,
                extra={"arguments": ("model_dir", "init_checkpoint")},
            )
        config = ElectraConfig.load(saved) if os.path.isfile(saved) else job.model_config()
        vocab_file = job.vocab_file or saved_job(job.model_dir).get("vocab_file")
        return config, None, vocab_file
    if job.init_checkpoint:
        with progress.step(f"loading {job.init_checkpoint}"):
            initial = read_initial_weights(
                job.init_checkpoint,
                job.model_config(),
                init_generator_checkpoint=job.init_generator_checkpoint,
                checkpoint_format=job.init_checkpoint_format,
                vocab_file=job.vocab_file,
                architecture_overrides=job.model_overrides,
                allow_embedding_mismatch=job.allow_embedding_mismatch,
            )
        return initial.config, initial, job.vocab_file or initial.vocab_file
    if job.mode == "eval" and not latest:
        raise ConfigError(
            f"mode=eval evaluates a checkpoint, and model_dir={job.model_dir} holds none: pass the "
            "model_dir of a run, or init_checkpoint",
            arguments=("mode", "model_dir", "init_checkpoint"),
        )
    return job.model_config(), None, job.vocab_file


def saved_job(model_dir):
    """The job model_dir's earlier run recorded (its settings as `PretrainingJob` fields); {} when there is none."""
    try:
        with open(os.path.join(model_dir, JOB_NAME), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def _check_data(job, config, initial, vocab_file):
    """The manifests of the training data (mode=train) and of the evaluation data ({} for none), each checked
    against the run's vocabulary: the config's, or with init_checkpoint the checkpoint's."""
    manifest = {}
    if job.mode == "train":
        manifest = check_pretraining_data(
            job.pretrain_tfrecords,
            job.max_seq_length,
            verify_data=job.verify_data,
            vocab_size=None if initial else config.vocab_size,
            vocab_file=None if initial else vocab_file,
        )
    eval_manifest = {}
    if job.eval_tfrecords:
        eval_manifest = check_pretraining_data(
            job.eval_tfrecords,
            job.max_seq_length,
            argument="eval_tfrecords",
            verify_data=job.verify_data,
            vocab_size=None if initial else config.vocab_size,
            vocab_file=None if initial else vocab_file,
        )
    if initial is not None:
        for data_manifest, argument in ((manifest, "pretrain_tfrecords"), (eval_manifest, "eval_tfrecords")):
            check_data_vocabulary(data_manifest, getattr(job, argument), config, vocab_file, job.init_checkpoint)
    return manifest, eval_manifest


def _resolve_tokenizer_settings(job, manifest, initial):
    settings = job.tokenizer_settings(manifest, default=initial.tokenizer_settings if initial else None)
    if initial is not None and initial.tokenizer_settings and settings != initial.tokenizer_settings:
        raise DataError(
            f"the pre-training data is tokenised with {settings} but init_checkpoint="
            f"{job.init_checkpoint} records {initial.tokenizer_settings}: rebuild the data with the "
            "checkpoint's do_lower_case and strip_accents",
            arguments=("init_checkpoint",),
        )
    return settings


def _check_same_run(job, config):
    """Refuse to continue a model_dir that holds a run of another model configuration or other training settings."""
    path = os.path.join(job.model_dir, RUN_CONFIG_NAME)
    if not os.path.exists(path):
        return
    saved, current = ElectraConfig.load(path).to_dict(), config.to_dict()
    earlier_job = saved_job(job.model_dir) if job.mode == "train" else {}
    if earlier_job:
        saved.update({name: earlier_job[name] for name in TRAINING_SETTINGS if name in earlier_job})
        current.update({name: getattr(job, name) for name in TRAINING_SETTINGS})
    refuse_other_settings(
        saved, current, f"model_dir={job.model_dir}", "a run", "model_dir", defaults=dataclass_defaults(PretrainingJob)
    )
