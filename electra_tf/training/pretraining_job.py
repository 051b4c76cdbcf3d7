"""One pre-training run: data, model, optimizer, checkpoints and logs in a model directory.

`run_pretraining.py` turns its flags into a `PretrainingJob` and calls `run()`; tests and notebooks can do the same.
"""

import dataclasses
import json
import math
import os

import keras
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json
from electra_tf.models.pretrainer import ElectraPretrainer
from electra_tf.pretrained import save_pretrained
from electra_tf.training import callbacks as callbacks_lib
from electra_tf.training import distribution
from electra_tf.training.optimizers import create_optimizer
from electra_tf.training.schedules import WarmupLinearDecay

CONFIG_FILE = "electra_config.json"
JOB_FILE = "pretraining_job.json"
METRICS_FILE = "metrics.jsonl"
PRETRAINED_DIR = "pretrained"


@dataclasses.dataclass
class PretrainingJob:
    """Everything a pre-training run needs; field names are the flag names of `run_pretraining.py`."""

    pretrain_tfrecords: str
    model_dir: str
    model_size: str = "small"
    max_seq_length: int = 128
    train_batch_size: int = 128
    learning_rate: float = 5e-4
    num_train_steps: int = 1_000_000
    num_warmup_steps: int = 10_000
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    log_every_steps: int = 100
    seed: int = 0
    strategy: str = "default"
    tpu: str = None
    num_cpu_devices: int = 0
    mixed_precision: str = "float32"
    jit_compile: bool = False
    steps_per_execution: int = 1
    vocab_file: str = None
    optimizer: str = "adam_weight_decay"
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-6
    bias_correction: bool = False
    lr_schedule: str = "multiply"
    clip_norm: float = 1.0
    model_overrides: dict = dataclasses.field(default_factory=dict)  # ElectraConfig fields, e.g. mask_prob
    progress_bar: bool = True

    def validate(self):
        positive = ("max_seq_length", "train_batch_size", "num_train_steps", "log_every_steps", "steps_per_execution")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"--{name} must be positive, got {getattr(self, name)}")
        if self.num_warmup_steps < 0 or self.save_checkpoints_steps < 0 or self.keep_checkpoint_max < 0:
            raise ConfigError("--num_warmup_steps, --save_checkpoints_steps and --keep_checkpoint_max must be >= 0")
        if self.learning_rate <= 0:
            raise ConfigError(f"--learning_rate must be positive, got {self.learning_rate}")
        if not self.pretrain_tfrecords:
            raise ConfigError("--pretrain_tfrecords is required: a glob of TFRecord shards from "
                              "data_prep/build_pretraining_dataset.py")
        if not self.model_dir:
            raise ConfigError("--model_dir is required")

    def model_config(self):
        """The ElectraConfig: the preset, the overrides, and the vocabulary of `vocab_file` when given."""
        config = ElectraConfig.from_preset(self.model_size, **self.model_overrides)
        if self.vocab_file:
            from electra_tf.tokenizer import ElectraTokenizer

            tokenizer = ElectraTokenizer(self.vocab_file)
            config = config.with_vocab(tokenizer.vocab_size, pad_id=tokenizer.pad_id, unk_id=tokenizer.unk_id,
                                       cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id, mask_id=tokenizer.mask_id)
        return config


def _check_same_config(model_dir, config):
    """Refuse to resume a model_dir that holds a run of another model configuration."""
    path = os.path.join(model_dir, CONFIG_FILE)
    if not os.path.exists(path):
        return
    saved = ElectraConfig.load(path)
    if saved != config:
        changed = {name: (getattr(saved, name), getattr(config, name))
                   for name in config.to_dict() if getattr(saved, name) != getattr(config, name)}
        details = ", ".join(f"{name}: {old!r} -> {new!r}" for name, (old, new) in sorted(changed.items()))
        raise ConfigError(f"--model_dir={model_dir} holds a run with a different model configuration ({details}); "
                          "use a new --model_dir, or the flags of that run to resume it")


def expected_initial_loss(config):
    """The loss of a freshly initialised model: uniform generator, discriminator at p = 1/2."""
    return config.gen_weight * math.log(config.vocab_size) + config.disc_weight * math.log(2.0)


def build_model(job, config, strategy):
    """The compiled pre-training model with its optimizer built (so a checkpoint restores every slot at once)."""
    with strategy.scope():
        model = ElectraPretrainer(config, max_seq_length=job.max_seq_length, seed=job.seed, clip_norm=job.clip_norm)
        schedule = WarmupLinearDecay(job.learning_rate, job.num_train_steps, job.num_warmup_steps,
                                     mode=job.lr_schedule)
        optimizer = create_optimizer(job.optimizer, schedule, weight_decay=job.weight_decay,
                                     epsilon=job.adam_epsilon, bias_correction=job.bias_correction)
        model.compile(optimizer=optimizer, jit_compile=job.jit_compile, steps_per_execution=job.steps_per_execution)
        model.optimizer.build(model.trainable_variables)
    return model


def run(job):
    """Pre-train (or resume) as `job` says; returns the logs of the last step."""
    from electra_tf.data.pretraining_dataset import check_pretraining_data, make_pretraining_dataset

    job.validate()
    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(job.strategy, job.tpu, job.num_cpu_devices)
    config = job.model_config()
    check_pretraining_data(job.pretrain_tfrecords, job.max_seq_length, vocab_size=config.vocab_size,
                           vocab_file=job.vocab_file)
    chief = distribution.is_chief()
    os.makedirs(job.model_dir, exist_ok=True)
    _check_same_config(job.model_dir, config)
    if chief:
        config.save(os.path.join(job.model_dir, CONFIG_FILE))
        atomic_write_json(os.path.join(job.model_dir, JOB_FILE), dataclasses.asdict(job))
    print(f"model config: {json.dumps(config.to_dict(), sort_keys=True)}", flush=True)
    print(f"job: {json.dumps(dataclasses.asdict(job), sort_keys=True)}", flush=True)

    keras.utils.set_random_seed(job.seed)
    model = build_model(job, config, strategy)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
    manager = tf.train.CheckpointManager(checkpoint, job.model_dir, max_to_keep=job.keep_checkpoint_max or None)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
        print(f"resumed from {manager.latest_checkpoint}", flush=True)
    initial_step = callbacks_lib.current_step(model)
    metrics_path = os.path.join(job.model_dir, METRICS_FILE)
    if chief:
        callbacks_lib.truncate_metrics_log(metrics_path, initial_step)

    logs = {}
    remaining = job.num_train_steps - initial_step
    if remaining > 0:
        dataset = make_pretraining_dataset(job.pretrain_tfrecords, job.max_seq_length, job.train_batch_size,
                                           seed=job.seed, is_training=True, skip_batches=initial_step)
        callbacks = [
            callbacks_lib.NonFiniteLossGuard(job.model_dir),
            callbacks_lib.MetricsLogger(metrics_path, os.path.join(job.model_dir, "train"), job.log_every_steps,
                                        enabled=chief, expected_initial_loss=expected_initial_loss(config)),
            callbacks_lib.CheckpointSaver(manager, job.save_checkpoints_steps),
        ]
        history = model.fit(dataset, epochs=1, steps_per_epoch=remaining, callbacks=callbacks,
                            shuffle=False, verbose=1 if job.progress_bar else 2)
        logs = {name: values[-1] for name, values in history.history.items()}
    else:
        print(f"{job.model_dir} is already trained to step {initial_step}", flush=True)

    if chief:
        save_pretrained(model.discriminator, os.path.join(job.model_dir, PRETRAINED_DIR), job.vocab_file)
    keras.backend.clear_session(free_memory=False)
    return logs
