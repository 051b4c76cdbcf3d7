"""What a pre-training run is asked to do (`PretrainingJob`), and the checks of it that need no TensorFlow: entry
points validate a job before TensorFlow is imported (`training.pretraining_job.run` trains it)."""

import dataclasses
import os

from electra_tf import preflight
from electra_tf.checkpoint_formats import CHECKPOINT_FORMATS
from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.job_flags import flag_field
from electra_tf.training.choices import (
    DEFAULT_COLLECTIVE_TIMEOUT_SECONDS,
    NONFINITE_LOSS_POLICIES,
    OPTIMIZERS,
    check_collective_timeout,
    check_gradient_accumulation,
    check_worker_hosts,
    distribution_field,
)

# electra_tf.tokenizer and electra_tf.data import TensorFlow: the methods that need them import them, since
# `electra-pretrain --help` imports this module.

MODES = ("train", "eval")


@dataclasses.dataclass
class PretrainingJob:
    """Everything a pre-training run needs; each field but `model_overrides` is a flag of `electra-pretrain` with the
    field's name, default, help and choices (`electra_tf.job_flags`)."""

    pretrain_tfrecords: str = flag_field(help_text="Glob(s) of pre-training TFRecord shards, comma-separated.")
    model_dir: str = flag_field(help_text="Directory for checkpoints, logs and the pre-trained model.")
    model_size: str = flag_field("small", "Preset: tiny, cpu, small, small++, base or large.")
    max_seq_length: int = flag_field(128, "Length of the pre-training examples.")
    train_batch_size: int = flag_field(
        128, "Global batch size of one optimizer update (over all replicas and workers)."
    )
    # training.gradient_accumulation
    gradient_accumulation_steps: int = flag_field(
        1,
        "Run each replica's share of a batch as this many micro-batches of --train_batch_size / (this x replicas) "
        "examples in turn, adding up their gradients: the update of the whole batch with the activation memory of a "
        "micro-batch. Steps, checkpoints and the learning-rate schedule count updates.",
    )
    learning_rate: float = flag_field(5e-4, "Peak learning rate.")
    num_train_steps: int = flag_field(1_000_000, "Total optimizer steps.")
    num_warmup_steps: int = flag_field(10_000, "Linear warm-up steps.")
    stop_at_step: int = flag_field(
        0,
        "Stop after this step (with a checkpoint there) while the learning-rate schedule still runs to "
        "--num_train_steps: the first part of a longer run, which a later run with a larger --stop_at_step, or 0, "
        "continues on the same schedule. 0: train to --num_train_steps.",
    )
    save_checkpoints_steps: int = flag_field(1000, "Checkpoint every this many steps.")
    # Further steps to checkpoint at (e.g. the evaluation points of an experiment); electra-pretrain's
    # --checkpoint_steps is a comma-separated list.
    checkpoint_steps: tuple = ()
    keep_checkpoint_max: int = flag_field(5, "Checkpoints to keep (0 keeps all).")
    log_every_steps: int = flag_field(100, "Append to metrics.jsonl and TensorBoard every this many steps.")
    seed: int = flag_field(0, "Seed of the initialisation, data order, masking and sampling.")
    strategy: str = distribution_field("strategy")
    tpu: str = distribution_field("tpu")
    num_cpu_devices: int = distribution_field("num_cpu_devices")
    mixed_precision: str = distribution_field("mixed_precision")
    jit_compile: bool = flag_field(False, "Compile the train step with XLA.")
    steps_per_execution: int = flag_field(1, "Train steps per tf.function call.")
    vocab_file: str = flag_field(
        None,
        "The vocabulary the TFRecords were built with (sets vocab size and special token ids; without it the BERT "
        "uncased ids are assumed).",
    )
    do_lower_case: bool = flag_field(
        None,
        "The tokenizer's casing, saved with the model for fine-tuning and serving (default: what the data's "
        "manifest.json records; lower-case for data without one).",
    )
    strip_accents: bool = flag_field(
        None, "Strip accents when tokenising (default: the data's manifest, else --do_lower_case)."
    )
    optimizer: str = flag_field("adam_weight_decay", "Optimizer.", choices=OPTIMIZERS)
    weight_decay: float = flag_field(0.01, "Decoupled weight decay (not on LayerNorm and biases).")
    adam_epsilon: float = flag_field(1e-6, "Adam epsilon.")
    bias_correction: bool = flag_field(False, "Adam bias correction (the reference has none).")
    lr_schedule: str = flag_field(
        "multiply",
        "multiply: warm-up x linear decay as the reference; sequential: warm-up then decay.",
        choices=("multiply", "sequential"),
    )
    clip_norm: float = flag_field(1.0, "Clip the cross-replica gradient to this global norm (0: no clipping).")
    # ElectraConfig fields, e.g. mask_prob: electra-pretrain's model flags.
    model_overrides: dict = dataclasses.field(default_factory=dict)
    progress_bar: bool = flag_field(True, "Keras progress bar (otherwise one line per logged step).")
    nonfinite_loss: str = flag_field(
        "stop",
        "On a NaN/inf loss: stop naming the step (the last good checkpoint is kept), or skip that update and count it "
        "as skipped_steps in the metrics.",
        choices=NONFINITE_LOSS_POLICIES,
    )
    deterministic: bool = flag_field(
        False,
        "TensorFlow op determinism: two runs with the same --seed give identical losses, and a resumed run ends with "
        "the weights of an uninterrupted one.",
    )
    worker_hosts: str = distribution_field("worker_hosts")
    task_index: int = distribution_field("task_index")
    collective_timeout_seconds: float = flag_field(
        DEFAULT_COLLECTIVE_TIMEOUT_SECONDS,
        "With --strategy=multi_worker: stop when one exchange between the workers (an all-reduce of a step) waits "
        "longer than this, naming the workers and the checkpoint to resume from. 0 (default): no limit; a worker that "
        "dies or freezes is still noticed within about 10 seconds by TensorFlow's own heartbeats, and this limit only "
        "adds a bound for a worker that is alive but never joins the exchange. It costs one sleeping thread per "
        "exchange for the whole timeout (about 100 per step), so use it only while looking for such a hang.",
    )
    init_checkpoint: str = flag_field(
        None,
        "Start from these weights (continued pre-training): a reference TF1 checkpoint, a Hugging Face discriminator "
        "directory (or discriminator/ + generator/), a keras-hub preset, a pretrained/ directory or another run's "
        "--model_dir. The architecture comes from it; the optimizer and the step start fresh. Ignored when "
        "--model_dir already holds a checkpoint.",
    )
    init_generator_checkpoint: str = flag_field(
        None,
        "A generator for an --init_checkpoint that holds only a discriminator (e.g. a Hugging Face generator "
        "directory); without one a new generator is built.",
    )
    init_checkpoint_format: str = flag_field(
        "auto",
        "Format of --init_checkpoint (auto: detected).",
        choices=("auto", *CHECKPOINT_FORMATS),
    )
    allow_embedding_mismatch: bool = flag_field(
        False,
        "For a discriminator and generator whose copies of the shared embeddings differ (a Hugging Face "
        "discriminator/ + generator/ pair, or --init_generator_checkpoint beside --init_checkpoint): keep the "
        "discriminator's.",
    )
    # Held-out evaluation of the pre-training objective (see training.evaluation).
    mode: str = flag_field(
        "train",
        "train (evaluating on --eval_tfrecords along the way when given), or eval: evaluate the latest checkpoint of "
        "--model_dir (else --init_checkpoint) once.",
        choices=MODES,
    )
    eval_tfrecords: str = flag_field(
        None,
        "Glob(s) of held-out TFRecord shards for evaluation of the pre-training objective (dropout off, the same "
        "masking and sampling at every evaluation).",
    )
    eval_every_steps: int = flag_field(0, "Evaluate every this many steps (0: only at the end of training).")
    num_eval_steps: int = flag_field(100, "Batches per evaluation (at most; fewer if the held-out set is smaller).")
    eval_batch_size: int = flag_field(None, "Evaluation batch size (default: --train_batch_size).")
    # None: on when the data is at most manifest.VERIFY_DATA_MAX_BYTES.
    verify_data: bool = flag_field(
        None,
        "Check every shard's sha256 against its manifest.json before anything is written to --model_dir (a corrupt "
        "shard is otherwise found only when its record is read). Default: on when the matched shards hold at most "
        "512 MiB, about one to two seconds of hashing at the 300-450 MB/s sha256 runs at on one core.",
    )

    def validate(self):
        positive = ("max_seq_length", "train_batch_size", "num_train_steps", "log_every_steps", "steps_per_execution")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}", arguments=(name,))
        for name in ("num_warmup_steps", "save_checkpoints_steps", "keep_checkpoint_max", "stop_at_step"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}", arguments=(name,))
        if self.stop_at_step > self.num_train_steps:
            raise ConfigError(
                f"stop_at_step={self.stop_at_step} is past the end of the run, num_train_steps="
                f"{self.num_train_steps}; use a step within it, or 0 to train to the end",
                arguments=("stop_at_step", "num_train_steps"),
            )
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
        for name in ("save_checkpoints_steps", "log_every_steps", "stop_at_step"):
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
        check_worker_hosts(self.worker_hosts, self.strategy)
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
