"""Pre-train ELECTRA: `electra-pretrain --flagfile=configs/small.flags --pretrain_tfrecords=... --model_dir=...`

Every flag can also be given in a --flagfile. Starting again with the same --model_dir resumes from its last
checkpoint. `--init_checkpoint` starts from released or earlier weights (continued pre-training); `--eval_tfrecords`
evaluates the pre-training objective on held-out data (`--mode=eval`: one checkpoint alone). See docs/pretraining.md
for the outputs written to --model_dir.
"""

import sys

from absl import flags

from electra_tf import cli
from electra_tf.config import EMBEDDING_SHARING, GENERATOR_TRAINING, OBJECTIVES

# TensorFlow-free, unlike the modules that use these choices: --help stays fast.
from electra_tf.training.choices import DEFAULT_COLLECTIVE_TIMEOUT_SECONDS, OPTIMIZERS, PRECISIONS, STRATEGIES

FLAGS = flags.FLAGS
# The library's name for --init_checkpoint_format.
FLAG_NAMES = {"format": "init_checkpoint_format"}

flags.DEFINE_string("pretrain_tfrecords", None, "Glob(s) of pre-training TFRecord shards, comma-separated.")
flags.DEFINE_string("model_dir", None, "Directory for checkpoints, logs and the pre-trained model.")
flags.DEFINE_string("model_size", "small", "Preset: tiny, cpu, small, small++, base or large.")
flags.DEFINE_string(
    "vocab_file",
    None,
    "The vocabulary the TFRecords were built with (sets vocab size and special "
    "token ids; without it the BERT uncased ids are assumed).",
)
flags.DEFINE_boolean(
    "do_lower_case",
    None,
    "The tokenizer's casing, saved with the model for fine-tuning and serving "
    "(default: what the data's manifest.json records; lower-case for data without one).",
)
flags.DEFINE_boolean(
    "strip_accents", None, "Strip accents when tokenising (default: the data's manifest, else --do_lower_case)."
)
flags.DEFINE_integer("max_seq_length", 128, "Length of the pre-training examples.")
flags.DEFINE_integer(
    "train_batch_size", 128, "Global batch size of one optimizer update (over all replicas and workers)."
)
flags.DEFINE_integer(
    "gradient_accumulation_steps",
    1,
    "Run each replica's share of a batch as this many micro-batches "
    "of --train_batch_size / (this x replicas) examples in turn, adding up their gradients: the "
    "update of the whole batch with the activation memory of a micro-batch. Steps, checkpoints and "
    "the learning-rate schedule count updates.",
)
flags.DEFINE_float("learning_rate", 5e-4, "Peak learning rate.")
flags.DEFINE_integer("num_train_steps", 1_000_000, "Total optimizer steps.")
flags.DEFINE_integer("num_warmup_steps", 10_000, "Linear warm-up steps.")
flags.DEFINE_enum(
    "lr_schedule",
    "multiply",
    ["multiply", "sequential"],
    "multiply: warm-up x linear decay as the reference; sequential: warm-up then decay.",
)
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Checkpoint every this many steps.")
flags.DEFINE_list("checkpoint_steps", [], "Further steps to checkpoint at, comma-separated (e.g. 25000,50000).")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints to keep (0 keeps all).")
flags.DEFINE_integer("log_every_steps", 100, "Append to metrics.jsonl and TensorBoard every this many steps.")
flags.DEFINE_integer("seed", 0, "Seed of the initialisation, data order, masking and sampling.")
flags.DEFINE_enum("strategy", "default", list(STRATEGIES), "tf.distribute strategy.")
flags.DEFINE_string("tpu", None, "TPU name or grpc:// address, with --strategy=tpu.")
flags.DEFINE_integer(
    "num_cpu_devices",
    0,
    "Split the CPU into this many logical devices (for --strategy=mirrored on a CPU-only machine).",
)
flags.DEFINE_enum("mixed_precision", "float32", list(PRECISIONS), "Keras dtype policy.")
flags.DEFINE_boolean("jit_compile", False, "Compile the train step with XLA.")
flags.DEFINE_integer("steps_per_execution", 1, "Train steps per tf.function call.")
flags.DEFINE_enum("optimizer", "adam_weight_decay", list(OPTIMIZERS), "Optimizer.")
flags.DEFINE_float("weight_decay", 0.01, "Decoupled weight decay (not on LayerNorm and biases).")
flags.DEFINE_float("adam_epsilon", 1e-6, "Adam epsilon.")
flags.DEFINE_boolean("bias_correction", False, "Adam bias correction (the reference has none).")
flags.DEFINE_float("clip_norm", 1.0, "Clip the cross-replica gradient to this global norm (0: no clipping).")
flags.DEFINE_float("mask_prob", None, "Masking rate (preset: 0.15, large 0.25).")
flags.DEFINE_float("disc_weight", None, "Weight of the discriminator loss (50).")
flags.DEFINE_float("gen_weight", None, "Weight of the generator's MLM loss (1).")
flags.DEFINE_float("temperature", None, "Generator sampling temperature (1.0).")
flags.DEFINE_enum(
    "objective",
    None,
    list(OBJECTIVES),
    "Pre-training objective (electra): electra; mlm (BERT's "
    "masked LM, no generator); electra_15 (discriminator loss only at masked positions); replace_mlm "
    "(MLM on generator-replaced inputs); all_tokens_mlm (predict every token, with a copy mechanism); "
    "electric (two-tower cloze generator, discriminator energies trained by noise-contrastive "
    "estimation).",
)
flags.DEFINE_float(
    "generator_hidden_size",
    None,
    "Generator width as a fraction of the discriminator's (the reference's name; preset 0.25, base 1/3).",
)
flags.DEFINE_alias("generator_hidden_fraction", "generator_hidden_size")
flags.DEFINE_float("generator_layers", None, "Generator depth as a fraction of the discriminator's (1.0).")
flags.DEFINE_boolean("untied_embeddings", None, "Give the generator its own embedding block.")
flags.DEFINE_boolean(
    "tie_all_weights",
    None,
    "The generator is the discriminator's encoder with its own MLM head (same size; section 3.2 of the paper).",
)
flags.DEFINE_boolean(
    "uniform_generator", None, "No generator network: replacements drawn uniformly from the vocabulary."
)
flags.DEFINE_integer(
    "two_stage_steps",
    None,
    "Train the generator alone for this many steps, then the discriminator "
    "initialised from it with the generator frozen (generator at the discriminator's size; "
    "--strategy=default only).",
)
flags.DEFINE_enum(
    "generator_training",
    None,
    list(GENERATOR_TRAINING),
    "mle (maximum likelihood); adversarial: "
    "the generator maximises the discriminator loss through a Gumbel-softmax relaxation; annealed: "
    "the generator's loss moves linearly from mle to adversarial over --generator_annealing_steps.",
)
flags.DEFINE_integer(
    "generator_annealing_steps",
    None,
    "--generator_training=annealed: steps until the generator's "
    "loss is wholly adversarial (default: --num_train_steps).",
)
flags.DEFINE_integer(
    "sampling_warmup_steps",
    None,
    "Replacements move from uniform samples at step 0 to the "
    "generator's own at this step (its logits scaled by step / this); postpones the samples a "
    "discriminator cannot tell without reading word order (docs/cpu_budget.md). 0: the generator's "
    "samples from the start (the paper).",
)
flags.DEFINE_boolean(
    "sinusoidal_position_init",
    None,
    "Start the learned position table from sine/cosine waves "
    "(scaled to the initializer's standard deviation) instead of random values: relative offsets are "
    "linear in the position vectors from the first step (docs/cpu_budget.md). Not in the paper.",
)
flags.DEFINE_float("adversarial_temperature_start", None, "Gumbel-softmax temperature at step 0 (1.0).")
flags.DEFINE_float(
    "adversarial_temperature_end",
    None,
    "Gumbel-softmax temperature at the last step (0.1); the temperature decays exponentially in between.",
)
flags.DEFINE_enum(
    "embedding_sharing",
    None,
    list(EMBEDDING_SHARING),
    "shared (the reference), or gdes: the "
    "discriminator uses stop_gradient(E_generator) + E_delta (DeBERTaV3), merged when saved.",
)
flags.DEFINE_integer(
    "embedding_size",
    None,
    "Width of the embedding tables (preset: 128 up to small++); equal to the "
    "hidden size, the block feeds the encoder without the embeddings_project layer.",
)
flags.DEFINE_integer(
    "type_vocab_size",
    None,
    "Rows of the token-type table (2); 0: no table, the segments told apart "
    "by [SEP] alone (docs/cpu_budget.md). Not in the paper.",
)
flags.DEFINE_float("hidden_dropout", None, "Dropout on hidden states (0.1).")
flags.DEFINE_float("attention_dropout", None, "Dropout on attention probabilities (0.1; must equal hidden_dropout).")
flags.DEFINE_boolean("progress_bar", True, "Keras progress bar (otherwise one line per logged step).")
flags.DEFINE_enum(
    "nonfinite_loss",
    "stop",
    ["stop", "skip"],
    "On a NaN/inf loss: stop naming the step (the last "
    "good checkpoint is kept), or skip that update and count it as skipped_steps in the metrics.",
)
flags.DEFINE_boolean(
    "deterministic",
    False,
    "TensorFlow op determinism: two runs with the same --seed give identical "
    "losses, and a resumed run ends with the weights of an uninterrupted one.",
)
flags.DEFINE_string(
    "worker_hosts",
    None,
    "With --strategy=multi_worker instead of TF_CONFIG: every worker's "
    "host:port, comma-separated, the same on every worker (worker 0 is the chief).",
)
flags.DEFINE_integer("task_index", 0, "This worker's position in --worker_hosts.")
flags.DEFINE_float(
    "collective_timeout_seconds",
    DEFAULT_COLLECTIVE_TIMEOUT_SECONDS,
    "With --strategy=multi_worker: "
    "stop when one exchange between the workers (an all-reduce of a step) waits longer than this, "
    "naming the workers and the checkpoint to resume from. 0 (default): no limit; a worker that dies "
    "or freezes is still noticed within about 10 seconds by TensorFlow's own heartbeats, and this "
    "limit only adds a bound for a worker that is alive but never joins the exchange. It costs one "
    "sleeping thread per exchange for the whole timeout (about 100 per step), so use it only while "
    "looking for such a hang.",
)
flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Start from these weights (continued pre-training): a reference TF1 "
    "checkpoint, a Hugging Face discriminator directory (or discriminator/ + generator/), a keras-hub "
    "preset, a pretrained/ directory or another run's --model_dir. The architecture comes from it; the "
    "optimizer and the step start fresh. Ignored when --model_dir already holds a checkpoint.",
)
flags.DEFINE_string(
    "init_generator_checkpoint",
    None,
    "A generator for an --init_checkpoint that holds only a "
    "discriminator (e.g. a Hugging Face generator directory); without one a new generator is built.",
)
flags.DEFINE_enum(
    "init_checkpoint_format",
    "auto",
    ["auto", "ours", "tf1", "hf", "keras_hub"],
    "Format of --init_checkpoint (auto: detected).",
)
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For a discriminator and generator whose copies of the "
    "shared embeddings differ (a Hugging Face discriminator/ + generator/ pair, or "
    "--init_generator_checkpoint beside --init_checkpoint): keep the discriminator's.",
)
flags.DEFINE_enum(
    "mode",
    "train",
    ["train", "eval"],
    "train (evaluating on --eval_tfrecords along the way when "
    "given), or eval: evaluate the latest checkpoint of --model_dir (else --init_checkpoint) once.",
)
flags.DEFINE_string(
    "eval_tfrecords",
    None,
    "Glob(s) of held-out TFRecord shards for evaluation of the pre-training "
    "objective (dropout off, the same masking and sampling at every evaluation).",
)
flags.DEFINE_integer("eval_every_steps", 0, "Evaluate every this many steps (0: only at the end of training).")
flags.DEFINE_integer("num_eval_steps", 100, "Batches per evaluation (at most; fewer if the held-out set is smaller).")
flags.DEFINE_integer("eval_batch_size", None, "Evaluation batch size (default: --train_batch_size).")
flags.DEFINE_boolean(
    "verify_data",
    None,
    "Check every shard's sha256 against its manifest.json before anything is "
    "written to --model_dir (a corrupt shard is otherwise found only when its record is read). "
    "Default: on when the matched shards hold at most 512 MiB, about one to two seconds of hashing "
    "at the 300-450 MB/s sha256 runs at on one core.",
)

# Flag name -> ElectraConfig field.
_MODEL_OVERRIDES = {
    name: name
    for name in (
        "mask_prob",
        "disc_weight",
        "gen_weight",
        "temperature",
        "hidden_dropout",
        "attention_dropout",
        "objective",
        "untied_embeddings",
        "tie_all_weights",
        "uniform_generator",
        "two_stage_steps",
        "generator_training",
        "adversarial_temperature_start",
        "adversarial_temperature_end",
        "generator_annealing_steps",
        "sampling_warmup_steps",
        "sinusoidal_position_init",
        "embedding_sharing",
        "embedding_size",
        "type_vocab_size",
    )
}
_MODEL_OVERRIDES.update(generator_hidden_size="generator_hidden_fraction", generator_layers="generator_layers_fraction")


def _job(argv):
    """The validated `PretrainingJob` of the flags, its paths checked; needs no TensorFlow."""
    import dataclasses

    from electra_tf.errors import ConfigError
    from electra_tf.training.pretraining_spec import PretrainingJob

    if len(argv) > 1:
        raise ConfigError(f"unexpected arguments: {argv[1:]} (every setting is a --flag)")
    overrides = {
        field: getattr(FLAGS, flag) for flag, field in _MODEL_OVERRIDES.items() if getattr(FLAGS, flag) is not None
    }
    job_flags = {
        field.name: getattr(FLAGS, field.name)
        for field in dataclasses.fields(PretrainingJob)
        if field.name != "model_overrides"
    }
    try:
        job_flags["checkpoint_steps"] = tuple(int(step) for step in FLAGS.checkpoint_steps)
    except ValueError:
        raise ConfigError(
            f"--checkpoint_steps={','.join(FLAGS.checkpoint_steps)} must be comma-separated integers"
        ) from None
    job = PretrainingJob(model_overrides=overrides, **job_flags)
    job.validate()
    job.check_paths()
    return job


def main(argv):
    from electra_tf.training.preemption import PREEMPTED_EXIT_CODE, TrainingPreempted
    from electra_tf.training.pretraining_job import run

    job = _job(argv)
    if job.worker_hosts:
        from electra_tf.training import distribution

        distribution.configure_cluster(job.worker_hosts, job.task_index)
    try:
        run(job, extra_files={"flags.txt": FLAGS.flags_into_string()})
    except TrainingPreempted as preempted:
        print(str(preempted), file=sys.stderr, flush=True)
        sys.exit(PREEMPTED_EXIT_CODE)


def console_main():
    """The installed console command."""
    cli.run(main, flag_names=FLAG_NAMES, precheck=_job)


if __name__ == "__main__":
    console_main()
