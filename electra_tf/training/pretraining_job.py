"""One pre-training run: data, model, optimizer, checkpoints and logs in a model directory.

`run_pretraining.py` turns its flags into a `PretrainingJob` and calls `run()`; tests and notebooks can do the same.
"""

import dataclasses
import json
import os
import shutil
import tempfile

import keras
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.data.manifest import recorded_tokenizer_settings
from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json, write_text_files
from electra_tf.training.pretrainer import ElectraPretrainer
from electra_tf.pretrained import save_pretrained
from electra_tf.training import callbacks as callbacks_lib
from electra_tf.training import distribution
from electra_tf.training import preemption
from electra_tf.training.optimizers import create_optimizer
from electra_tf.training.schedules import WarmupLinearDecay
from electra_tf.tokenizer import BERT_UNCASED

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
    checkpoint_steps: tuple = ()  # further steps to checkpoint at (e.g. the evaluation points of an experiment)
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
    # The tokenizer's casing and accent handling, saved with the model; default: what the data's manifest records.
    do_lower_case: bool = None
    strip_accents: bool = None
    optimizer: str = "adam_weight_decay"
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-6
    bias_correction: bool = False
    lr_schedule: str = "multiply"
    clip_norm: float = 1.0
    model_overrides: dict = dataclasses.field(default_factory=dict)  # ElectraConfig fields, e.g. mask_prob
    progress_bar: bool = True
    nonfinite_loss: str = "stop"  # stop | skip, see callbacks.NonFiniteLossGuard
    deterministic: bool = False  # TensorFlow op determinism (seeds are always fixed by `seed`)
    worker_hosts: str = None  # host:port,... writes TF_CONFIG for strategy=multi_worker
    task_index: int = 0

    def validate(self):
        positive = ("max_seq_length", "train_batch_size", "num_train_steps", "log_every_steps", "steps_per_execution")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}", arguments=(name,))
        for name in ("num_warmup_steps", "save_checkpoints_steps", "keep_checkpoint_max"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}", arguments=(name,))
        if self.learning_rate <= 0:
            raise ConfigError(f"learning_rate must be positive, got {self.learning_rate}", arguments=("learning_rate",))
        if not self.pretrain_tfrecords:
            raise ConfigError("pretrain_tfrecords is required: a glob of TFRecord shards from "
                              "data_prep/build_pretraining_dataset.py", arguments=("pretrain_tfrecords",))
        if not self.model_dir:
            raise ConfigError("model_dir is required", arguments=("model_dir",))
        if self.nonfinite_loss not in callbacks_lib.NONFINITE_LOSS_POLICIES:
            raise ConfigError(f"unknown nonfinite_loss={self.nonfinite_loss!r}; choose one of "
                              f"{list(callbacks_lib.NONFINITE_LOSS_POLICIES)}", arguments=("nonfinite_loss",))
        if any(step % self.steps_per_execution for step in self.checkpoint_steps):
            raise ConfigError(f"checkpoint_steps {list(self.checkpoint_steps)} must be multiples of "
                              f"steps_per_execution={self.steps_per_execution}",
                              arguments=("checkpoint_steps", "steps_per_execution"))
        for name in ("save_checkpoints_steps", "log_every_steps"):
            if getattr(self, name) % self.steps_per_execution:
                raise ConfigError(f"{name}={getattr(self, name)} is not a multiple of steps_per_execution="
                                  f"{self.steps_per_execution}; callbacks only run between executions",
                                  arguments=(name, "steps_per_execution"))
        self._validate_distribution()

    def _validate_distribution(self):
        two_stage_steps = self.model_overrides.get("two_stage_steps", 0)
        if two_stage_steps and self.strategy != "default":
            raise ConfigError(f"two_stage_steps runs on a single device; use strategy=default, not {self.strategy}",
                              arguments=("two_stage_steps", "strategy"))
        if two_stage_steps >= self.num_train_steps:
            raise ConfigError(f"two_stage_steps={two_stage_steps} leaves no step for the discriminator: use fewer "
                              f"than num_train_steps={self.num_train_steps}",
                              arguments=("two_stage_steps", "num_train_steps"))
        if self.jit_compile and self.strategy in ("mirrored", "multi_worker"):
            raise ConfigError(f"jit_compile does not work under strategy={self.strategy} with Keras 3; "
                              "use jit_compile=false", arguments=("jit_compile", "strategy"))
        if self.worker_hosts and self.strategy != "multi_worker":
            raise ConfigError(f"worker_hosts is only used with strategy=multi_worker (got strategy={self.strategy})",
                              arguments=("worker_hosts", "strategy"))
        if self.strategy == "tpu" and self.tpu and self.tpu != "local":
            # A TPU node (not a TPU VM) runs the input pipeline and writes checkpoints on hosts that cannot see this
            # machine's disk.
            for name in ("pretrain_tfrecords", "model_dir"):
                if not getattr(self, name).startswith("gs://"):
                    raise ConfigError(f"{name}={getattr(self, name)} must be a gs:// path with tpu={self.tpu}: "
                                      "a Cloud TPU node reads and writes only Cloud Storage (use tpu=local on a "
                                      "TPU VM)",
                                      arguments=(name, "tpu"))

    def model_config(self):
        """The ElectraConfig: the preset, the overrides, and the vocabulary of `vocab_file` when given."""
        config = ElectraConfig.from_preset(self.model_size, **self.model_overrides)
        if self.vocab_file:
            from electra_tf.tokenizer import ElectraTokenizer

            tokenizer = ElectraTokenizer(self.vocab_file)
            config = config.with_vocab(tokenizer.vocab_size, pad_id=tokenizer.pad_id, unk_id=tokenizer.unk_id,
                                       cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id, mask_id=tokenizer.mask_id)
        return config


    def tokenizer_settings(self, manifest):
        """The `TokenizerSettings` to save with the model: the data manifest's, which `do_lower_case` and
        `strip_accents` must agree with when given; theirs (default BERT uncased) for data without one."""
        given = BERT_UNCASED.overridden(self.do_lower_case, self.strip_accents)
        recorded = recorded_tokenizer_settings(manifest or {})
        if recorded is None:
            return given
        for name in ("do_lower_case", "strip_accents"):
            if getattr(self, name) is not None and getattr(given, name) != getattr(recorded, name):
                raise ConfigError(f"{name}={getattr(self, name)} contradicts the pre-training data, tokenised with "
                                  f"{name}={getattr(recorded, name)} (see its manifest.json); leave {name} unset to "
                                  "use the data's", arguments=(name,))
        return recorded


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
        raise ConfigError(f"model_dir={model_dir} holds a run with a different model configuration ({details}); "
                          "use a new model_dir, or the settings of that run to resume it", arguments=("model_dir",))


def build_model(job, config, strategy):
    """The compiled pre-training model with its optimizer built (so a checkpoint restores every slot at once)."""
    with strategy.scope():
        model = ElectraPretrainer(config, max_seq_length=job.max_seq_length, seed=job.seed, clip_norm=job.clip_norm,
                                  num_train_steps=job.num_train_steps)
        schedule = WarmupLinearDecay(job.learning_rate, job.num_train_steps, job.num_warmup_steps,
                                     mode=job.lr_schedule)
        optimizer = create_optimizer(job.optimizer, schedule, weight_decay=job.weight_decay,
                                     epsilon=job.adam_epsilon, bias_correction=job.bias_correction)
        model.compile(optimizer=optimizer, jit_compile=job.jit_compile, steps_per_execution=job.steps_per_execution)
        model.optimizer.build(model.trainable_variables)
    return model


def seed_generator_states(model):
    """The state variables of the model's Keras SeedGenerators (its Dropout layers), by position in `model.variables`.

    Keras does not checkpoint them, so without this a resumed run would draw other dropout masks than an uninterrupted
    one. Keys are positions, not layer names: auto-generated names differ between models built in the same process.
    """
    states = {}
    for variable in model.variables:
        if variable.path.endswith("seed_generator_state"):
            states.setdefault(id(variable), variable)
    return {f"seed_generator_{index:03d}": state for index, state in enumerate(states.values())}


def _checkpoint_directory(job, chief):
    """Where this worker saves: model_dir on the chief; elsewhere a temporary directory (every worker must take part
    in a save under MultiWorkerMirroredStrategy, but only the chief's copy is kept)."""
    return job.model_dir if chief else tempfile.mkdtemp(prefix="electra-worker-checkpoints-")


def run(job, extra_files=None):
    """Pre-train (or resume) as `job` says; returns the logs of the last step.

    `extra_files` ({name: text}, e.g. the entry point's flags.txt) are written to model_dir with the run's config,
    after every input check has passed, so a rejected run leaves nothing behind. Raises
    `preemption.TrainingPreempted` after saving a checkpoint when SIGTERM arrives.
    """
    job.validate()
    if job.worker_hosts:
        distribution.configure_cluster(job.worker_hosts, job.task_index)
    if job.deterministic:
        tf.config.experimental.enable_op_determinism()
    chief = distribution.is_chief()
    checkpoint_dir = _checkpoint_directory(job, chief)
    try:
        return _run(job, chief, checkpoint_dir, extra_files or {})
    finally:
        if checkpoint_dir != job.model_dir:
            shutil.rmtree(checkpoint_dir, ignore_errors=True)


def _run(job, chief, checkpoint_dir, extra_files):
    from electra_tf.data.pretraining_dataset import check_pretraining_data, make_pretraining_dataset

    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(job.strategy, job.tpu, job.num_cpu_devices)
    config = job.model_config()
    manifest = check_pretraining_data(job.pretrain_tfrecords, job.max_seq_length, vocab_size=config.vocab_size,
                                      vocab_file=job.vocab_file)
    tokenizer_settings = job.tokenizer_settings(manifest)
    config.check_sequence_length(job.max_seq_length)
    _check_same_config(job.model_dir, config)
    if chief:
        os.makedirs(job.model_dir, exist_ok=True)
        write_text_files(job.model_dir, extra_files)
        config.save(os.path.join(job.model_dir, CONFIG_FILE))
        # With the settings resolved, so that a conversion of the run (convert_checkpoint.py) finds them.
        atomic_write_json(os.path.join(job.model_dir, JOB_FILE),
                          dataclasses.asdict(dataclasses.replace(job, **tokenizer_settings.to_dict())))
    print(f"model config: {json.dumps(config.to_dict(), sort_keys=True)}", flush=True)
    print(f"job: {json.dumps(dataclasses.asdict(job), sort_keys=True)}", flush=True)

    keras.utils.set_random_seed(job.seed)
    model = build_model(job, config, strategy)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer,
                                     seed_generators=tf.train.Checkpoint(**seed_generator_states(model)))
    # TF writes a checkpoint's files first and the `checkpoint` state file last, by atomic rename, so a crash while
    # saving leaves the state file naming the previous complete checkpoint: that is what a restart restores.
    manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir, max_to_keep=job.keep_checkpoint_max or None)
    latest = tf.train.latest_checkpoint(job.model_dir)
    if latest:
        checkpoint.restore(latest).assert_existing_objects_matched()
        print(f"resumed from {latest}", flush=True)
    initial_step = callbacks_lib.current_step(model)
    metrics_path = os.path.join(job.model_dir, METRICS_FILE)
    if chief:
        callbacks_lib.truncate_metrics_log(metrics_path, initial_step)

    logs = {}
    remaining = job.num_train_steps - initial_step
    if remaining > 0:
        dataset = make_pretraining_dataset(job.pretrain_tfrecords, job.max_seq_length, job.train_batch_size,
                                           seed=job.seed, is_training=True, skip_batches=initial_step)
        stop_on_sigterm = preemption.StopOnSigterm()
        callbacks = [
            stop_on_sigterm,
            callbacks_lib.NonFiniteLossGuard(job.model_dir, job.nonfinite_loss),
            callbacks_lib.LossScaleMonitor(),
            callbacks_lib.MetricsLogger(metrics_path, os.path.join(job.model_dir, "train"), job.log_every_steps,
                                        enabled=chief, expected_initial_loss=model.expected_initial_loss()),
            callbacks_lib.CheckpointSaver(manager, job.save_checkpoints_steps, job.checkpoint_steps),
        ]
        history = model.fit(dataset, epochs=1, steps_per_epoch=remaining, callbacks=callbacks,
                            shuffle=False, verbose=1 if job.progress_bar else 2)
        logs = {name: values[-1] for name, values in history.history.items()}
        if stop_on_sigterm.requested:
            keras.backend.clear_session(free_memory=False)
            raise preemption.TrainingPreempted(callbacks_lib.current_step(model), job.model_dir)
    else:
        print(f"{job.model_dir} is already trained to step {initial_step}", flush=True)

    if chief:
        save_pretrained(model.pretrained_discriminator(), os.path.join(job.model_dir, PRETRAINED_DIR), job.vocab_file,
                        tokenizer_settings)
    keras.backend.clear_session(free_memory=False)
    return logs
