"""What a pre-training run is asked to do (`PretrainingJob`), and the checks of it that need no TensorFlow: entry
points validate a job before TensorFlow is imported (`training.pretraining_job.run` trains it)."""

import dataclasses
import os

from electra_tf import preflight
from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.training.choices import (
    DEFAULT_COLLECTIVE_TIMEOUT_SECONDS,
    NONFINITE_LOSS_POLICIES,
    check_collective_timeout,
    check_gradient_accumulation,
)

MODES = ("train", "eval")


@dataclasses.dataclass
class PretrainingJob:
    """Everything a pre-training run needs; field names are the flag names of `electra-pretrain`."""

    pretrain_tfrecords: str
    model_dir: str
    model_size: str = "small"
    max_seq_length: int = 128
    train_batch_size: int = 128  # the global batch of one optimizer update
    # Each replica runs its share of a batch as this many micro-batches in turn (training.gradient_accumulation).
    gradient_accumulation_steps: int = 1
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
    # strategy=multi_worker: how long a collective waits for the other workers before the run stops (0: forever).
    collective_timeout_seconds: float = DEFAULT_COLLECTIVE_TIMEOUT_SECONDS
    # Continued pre-training: weights to start from (any format electra-convert reads); a model_dir that already
    # holds a checkpoint resumes from it instead.
    init_checkpoint: str = None
    init_generator_checkpoint: str = None  # a generator for an init_checkpoint that holds only a discriminator
    init_checkpoint_format: str = "auto"
    # A discriminator and generator whose copies of the shared embeddings differ: keep the discriminator's.
    allow_embedding_mismatch: bool = False
    # Held-out evaluation of the pre-training objective (see training.evaluation).
    mode: str = "train"  # train, or eval: evaluate the latest checkpoint (or init_checkpoint) once
    eval_tfrecords: str = None
    eval_every_steps: int = 0  # 0: only at the end of training
    num_eval_steps: int = 100
    eval_batch_size: int = None  # default: train_batch_size
    # Check each shard's sha256 against its manifest before anything is written (None: when the data is at most
    # manifest.VERIFY_DATA_MAX_BYTES, one to two seconds of hashing).
    verify_data: bool = None

    def validate(self):
        positive = ("max_seq_length", "train_batch_size", "num_train_steps", "log_every_steps", "steps_per_execution")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}", arguments=(name,))
        for name in ("num_warmup_steps", "save_checkpoints_steps", "keep_checkpoint_max"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}", arguments=(name,))
        check_gradient_accumulation(self.gradient_accumulation_steps, self.train_batch_size)
        # 0 is allowed: a run at learning rate 0 evaluates or exports a checkpoint through the whole pipeline.
        if self.learning_rate < 0:
            raise ConfigError(f"learning_rate must be >= 0, got {self.learning_rate}", arguments=("learning_rate",))
        if self.mode not in MODES:
            raise ConfigError(f"unknown mode={self.mode!r}; choose one of {list(MODES)}", arguments=("mode",))
        if self.mode == "train" and not self.pretrain_tfrecords:
            raise ConfigError(
                "pretrain_tfrecords is required: a glob of TFRecord shards from electra-build-data",
                arguments=("pretrain_tfrecords",),
            )
        self._validate_evaluation()
        if self.init_generator_checkpoint and not self.init_checkpoint:
            raise ConfigError(
                "init_generator_checkpoint pairs a generator with init_checkpoint; pass init_checkpoint "
                "(the discriminator) too",
                arguments=("init_generator_checkpoint", "init_checkpoint"),
            )
        if not self.model_dir:
            raise ConfigError("model_dir is required", arguments=("model_dir",))
        if self.nonfinite_loss not in NONFINITE_LOSS_POLICIES:
            raise ConfigError(
                f"unknown nonfinite_loss={self.nonfinite_loss!r}; choose one of {list(NONFINITE_LOSS_POLICIES)}",
                arguments=("nonfinite_loss",),
            )
        if any(step % self.steps_per_execution for step in self.checkpoint_steps):
            raise ConfigError(
                f"checkpoint_steps {list(self.checkpoint_steps)} must be multiples of "
                f"steps_per_execution={self.steps_per_execution}",
                arguments=("checkpoint_steps", "steps_per_execution"),
            )
        for name in ("save_checkpoints_steps", "log_every_steps"):
            if getattr(self, name) % self.steps_per_execution:
                raise ConfigError(
                    f"{name}={getattr(self, name)} is not a multiple of steps_per_execution="
                    f"{self.steps_per_execution}; callbacks only run between executions",
                    arguments=(name, "steps_per_execution"),
                )
        self._validate_distribution()

    def _validate_evaluation(self):
        if self.mode == "eval" and not self.eval_tfrecords:
            raise ConfigError(
                "mode=eval needs eval_tfrecords: a glob of held-out TFRecord shards",
                arguments=("mode", "eval_tfrecords"),
            )
        if self.eval_every_steps and not self.eval_tfrecords:
            raise ConfigError(
                "eval_every_steps needs eval_tfrecords: a glob of held-out TFRecord shards",
                arguments=("eval_every_steps", "eval_tfrecords"),
            )
        if self.eval_every_steps < 0:
            raise ConfigError(
                f"eval_every_steps must be >= 0, got {self.eval_every_steps}", arguments=("eval_every_steps",)
            )
        for name in ("num_eval_steps", "eval_batch_size"):
            if getattr(self, name) is not None and getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}", arguments=(name,))
        if self.eval_every_steps % self.steps_per_execution:
            raise ConfigError(
                f"eval_every_steps={self.eval_every_steps} is not a multiple of steps_per_execution="
                f"{self.steps_per_execution}; evaluations only run between executions",
                arguments=("eval_every_steps", "steps_per_execution"),
            )

    def _validate_distribution(self):
        two_stage_steps = self.model_overrides.get("two_stage_steps", 0)
        if two_stage_steps and self.strategy != "default":
            raise ConfigError(
                f"two_stage_steps runs on a single device; use strategy=default, not {self.strategy}",
                arguments=("two_stage_steps", "strategy"),
            )
        if two_stage_steps >= self.num_train_steps:
            raise ConfigError(
                f"two_stage_steps={two_stage_steps} leaves no step for the discriminator: use fewer "
                f"than num_train_steps={self.num_train_steps}",
                arguments=("two_stage_steps", "num_train_steps"),
            )
        if self.jit_compile and self.strategy in ("mirrored", "multi_worker"):
            raise ConfigError(
                f"jit_compile does not work under strategy={self.strategy} with Keras 3; use jit_compile=false",
                arguments=("jit_compile", "strategy"),
            )
        check_collective_timeout(self.collective_timeout_seconds)
        if self.worker_hosts and self.strategy != "multi_worker":
            raise ConfigError(
                f"worker_hosts is only used with strategy=multi_worker (got strategy={self.strategy})",
                arguments=("worker_hosts", "strategy"),
            )
        if self.strategy == "tpu" and self.tpu and self.tpu != "local":
            # A TPU node (not a TPU VM) runs the input pipeline and writes checkpoints on hosts that cannot see this
            # machine's disk.
            for name in ("pretrain_tfrecords", "model_dir"):
                if not getattr(self, name).startswith("gs://"):
                    raise ConfigError(
                        f"{name}={getattr(self, name)} must be a gs:// path with tpu={self.tpu}: "
                        "a Cloud TPU node reads and writes only Cloud Storage (use tpu=local on a "
                        "TPU VM)",
                        arguments=(name, "tpu"),
                    )

    def check_paths(self):
        """The inputs that must exist, checked without TensorFlow (see `electra_tf.preflight`): init_checkpoint
        (unless model_dir already holds a checkpoint, which is resumed instead), vocab_file and the TFRecord globs."""
        if self.init_checkpoint and not os.path.isfile(os.path.join(self.model_dir, "checkpoint")):
            preflight.require_checkpoint(self.init_checkpoint, "init_checkpoint")
            if self.init_generator_checkpoint:
                preflight.require_checkpoint(self.init_generator_checkpoint, "init_generator_checkpoint")
        if self.vocab_file:
            preflight.require_vocab_file(self.vocab_file)
        if self.mode == "train":
            preflight.require_tfrecord_matches(self.pretrain_tfrecords, "pretrain_tfrecords")
        if self.eval_tfrecords:
            preflight.require_tfrecord_matches(self.eval_tfrecords, "eval_tfrecords")

    def model_config(self):
        """The ElectraConfig: the preset, the overrides, and the vocabulary of `vocab_file` when given."""
        config = ElectraConfig.from_preset(self.model_size, **self.model_overrides)
        if self.vocab_file:
            from electra_tf.tokenizer import ElectraTokenizer

            tokenizer = ElectraTokenizer(self.vocab_file)
            config = config.with_vocab(
                tokenizer.vocab_size,
                pad_id=tokenizer.pad_id,
                unk_id=tokenizer.unk_id,
                cls_id=tokenizer.cls_id,
                sep_id=tokenizer.sep_id,
                mask_id=tokenizer.mask_id,
            )
        return config

    def tokenizer_settings(self, manifest, default=None):
        """The `TokenizerSettings` to save with the model: the data manifest's, which `do_lower_case` and
        `strip_accents` must agree with when given; theirs (over `default`, else BERT uncased) for data without one."""
        from electra_tf.data.manifest import recorded_tokenizer_settings
        from electra_tf.tokenizer import BERT_UNCASED

        given = (default or BERT_UNCASED).overridden(self.do_lower_case, self.strip_accents)
        recorded = recorded_tokenizer_settings(manifest or {})
        if recorded is None:
            return given
        for name in ("do_lower_case", "strip_accents"):
            if getattr(self, name) is not None and getattr(given, name) != getattr(recorded, name):
                raise ConfigError(
                    f"{name}={getattr(self, name)} contradicts the pre-training data, tokenised with "
                    f"{name}={getattr(recorded, name)} (see its manifest.json); leave {name} unset to "
                    "use the data's",
                    arguments=(name,),
                )
        return recorded
