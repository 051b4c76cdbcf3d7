"""Pre-train ELECTRA: `electra-pretrain --flagfile=configs/small.flags --pretrain_tfrecords=... --model_dir=...`

Every flag can also be given in a --flagfile. Starting again with the same --model_dir resumes from its last
checkpoint. `--init_checkpoint` starts from released or earlier weights (continued pre-training); `--eval_tfrecords`
evaluates the pre-training objective on held-out data (`--mode=eval`: one checkpoint alone). See docs/pretraining.md
for the outputs written to --model_dir.
"""

import sys

from absl import flags

from electra_tf import cli
from electra_tf.job_flags import define_job_flags, job_arguments
from electra_tf.pretraining_settings import EMBEDDING_SHARING, GENERATOR_TRAINING, OBJECTIVES

# TensorFlow-free, like everything it imports: --help stays fast.
from electra_tf.training.pretraining_spec import PretrainingJob

FLAGS = flags.FLAGS
# The library's name for --init_checkpoint_format.
FLAG_NAMES = {"format": "init_checkpoint_format"}
# Not flags of their own kind: the model flags below fill model_overrides; checkpoint_steps is a list of integers.
_SKIPPED_FIELDS = ("model_overrides", "checkpoint_steps")

define_job_flags(PretrainingJob, skip=_SKIPPED_FIELDS)
flags.DEFINE_list(
    "checkpoint_steps",
    [],
    "Further steps to checkpoint at, comma-separated (e.g. 25000,50000); each is also kept as "
    "<model_dir>/kept-N, which --keep_checkpoint_max does not delete.",
)
# The model: ElectraConfig fields over the preset of --model_size.
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
flags.DEFINE_boolean(
    "alibi",
    None,
    "Add ALiBi's distance bias to every attention (False): heads prefer nearby "
    "tokens from the first step (docs/cpu_budget.md). Not in the paper.",
)
flags.DEFINE_float("hidden_dropout", None, "Dropout on hidden states (0.1).")
flags.DEFINE_float("attention_dropout", None, "Dropout on attention probabilities (0.1; must equal hidden_dropout).")

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
        "alibi",
    )
}
_MODEL_OVERRIDES.update(generator_hidden_size="generator_hidden_fraction", generator_layers="generator_layers_fraction")


def _job(argv):
    """The validated `PretrainingJob` of the flags, its paths checked; needs no TensorFlow."""
    from electra_tf.errors import ConfigError

    if len(argv) > 1:
        raise ConfigError(f"unexpected arguments: {argv[1:]} (every setting is a --flag)")
    overrides = {
        field: getattr(FLAGS, flag) for flag, field in _MODEL_OVERRIDES.items() if getattr(FLAGS, flag) is not None
    }
    job_flags = job_arguments(PretrainingJob, skip=_SKIPPED_FIELDS)
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
