"""Entry point of the compute-matched experiment (`finetune.experiments.compute_matched.experiment` says what it does).

    python -m finetune.experiments.compute_matched --output_dir=runs/compute_matched \\
        --corpus=../shared/data/corpus/nltk-gutenberg --glue_dir=../shared/data/glue
"""

import dataclasses
import os
import shlex
import sys

from absl import flags

from electra_tf import cli
from electra_tf import flops as flops_lib
from electra_tf.config import PRESETS
from electra_tf.errors import ConfigError
from finetune.experiments.compute_matched import plan
from finetune.experiments.compute_matched.experiment import run_experiment
from finetune.experiments.compute_matched.plan import PRECISIONS, Settings

FLAGS = flags.FLAGS

flags.DEFINE_string("output_dir", None, "Directory for the data, runs, results.json, results.md and plots.")
flags.DEFINE_string(
    "corpus",
    None,
    "Pre-training text: files, globs or directories (every file in them), "
    "comma-separated, plain or gzip, e.g. ../shared/data/corpus/nltk-gutenberg or "
    "'../shared/data/corpus/wikipedia/*.txt.gz' (with --document_mode=blank_line).",
)
flags.DEFINE_integer(
    "heldout_files",
    1,
    "Hold out the last N corpus files by name: held-out TFRecords built with the "
    "training vocabulary, on which every objective's pre-training is evaluated along the way "
    "(needs N + 1 files or more; 0: no held-out evaluation).",
)
flags.DEFINE_integer(
    "eval_every_steps",
    None,
    "Held-out evaluation every this many pre-training steps, and at the "
    "end (default: each run's log interval, 1/25 of its steps).",
)
flags.DEFINE_integer(
    "num_eval_steps",
    20,
    "Batches (of --train_batch_size) of the held-out set read per evaluation, the same first ones every time.",
)
flags.DEFINE_string(
    "glue_dir",
    None,
    "GLUE directory holding <TASK>/train.tsv and dev.tsv (download_glue_data.py layout), e.g. ../shared/data/glue.",
)
flags.DEFINE_string("model_size", "tiny", "Preset pre-trained by every objective: " + ", ".join(PRESETS) + ".")
flags.DEFINE_list(
    "objectives",
    ["electra", "mlm"],
    "Pre-training objectives to compare: " + ", ".join(flops_lib.FLOPS_OBJECTIVES) + ".",
)
flags.DEFINE_integer(
    "electra_steps",
    2000,
    "The FLOP budget, as this many steps of ELECTRA pre-training "
    "(with --model_size, --max_seq_length and --train_batch_size).",
)
flags.DEFINE_float("budget_flops", None, "The FLOP budget directly (overrides --electra_steps).")
flags.DEFINE_float(
    "budget_minutes",
    None,
    "The FLOP budget as wall time (overrides --electra_steps): the ELECTRA "
    "steps whose estimated pre-training time is nearest this many minutes, by the plan's time model "
    f"(a job's ~{plan.PRETRAINING_JOB_SECONDS:g} s start, {plan.STEP_OVERHEAD_SECONDS:g} s + FLOPs / "
    f"{plan.FLOPS_PER_SECOND:.2g} per step, the held-out evaluations' forward passes; measured on an "
    "idle 2-core CPU in float32), printed with the plan.",
)
flags.DEFINE_list(
    "eval_fractions",
    ["0.25", "0.5", "1.0"],
    "Fractions of the budget at which every objective's checkpoint is fine-tuned.",
)
flags.DEFINE_integer("max_seq_length", 128, "Pre-training sequence length (the paper's 128).")
flags.DEFINE_integer("train_batch_size", 32, "Pre-training batch size.")
flags.DEFINE_float("learning_rate", 1e-3, "Peak pre-training learning rate.")
flags.DEFINE_boolean(
    "bias_correction",
    True,
    "Adam with bias correction in pre-training (as configs/tiny.flags; the "
    "reference has none, which a run this short cannot afford).",
)
flags.DEFINE_float("warmup_fraction", 0.1, "Share of each run's steps with linear warm-up.")
flags.DEFINE_integer("warmup_steps", None, "Linear warm-up steps of every run (overrides --warmup_fraction).")
flags.DEFINE_enum(
    "mixed_precision",
    "float32",
    list(PRECISIONS),
    "Pre-training dtype policy: float32, or "
    "mixed_bfloat16 (bfloat16 compute, float32 variables). Fine-tuning stays float32.",
)
flags.DEFINE_integer("seed", 0, "Pre-training seed (initialisation, data order, masking).")
flags.DEFINE_integer("vocab_size", 8192, "Size of the WordPiece vocabulary learned from --corpus.")
flags.DEFINE_string("vocab_file", None, "Use this vocab.txt instead of learning one.")
flags.DEFINE_enum(
    "document_mode",
    "file",
    ["file", "blank_line"],
    "file: each corpus file is one document (books); "
    "blank_line: blank lines separate documents, as in Wikipedia-style text (examples never cross "
    "documents).",
)
flags.DEFINE_string("input_encoding", "utf-8", "Encoding of the corpus files.")
flags.DEFINE_enum(
    "encoding_errors",
    "replace",
    ["strict", "replace", "ignore"],
    "Undecodable bytes (the Gutenberg corpus has two Latin-1 bytes): replace, drop or stop.",
)
flags.DEFINE_list(
    "tasks",
    ["sst-2"],
    "GLUE tasks every checkpoint is fine-tuned on, comma-separated (CoLA, SST-2, "
    "MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI).",
)
flags.DEFINE_integer(
    "train_examples", 2000, "Fine-tuning examples drawn (seeded) from the task's train split; 0 = all."
)
flags.DEFINE_integer("eval_examples", 0, "Dev examples drawn (seeded) from each dev split; 0 = all.")
flags.DEFINE_list("seeds", ["0", "1", "2"], "Fine-tuning seeds; the median over them is reported, with mean and std.")
flags.DEFINE_float(
    "finetune_learning_rate", None, "Fine-tuning learning rate (default: the reference's for the preset's size family)."
)
flags.DEFINE_integer("finetune_epochs", None, "Fine-tuning epochs (default: the reference's, 3 for most tasks).")
flags.DEFINE_integer("finetune_batch_size", None, "Fine-tuning batch size (default 32).")
flags.DEFINE_integer("finetune_max_seq_length", None, "Fine-tuning sequence length (default: the task's, 128).")
flags.DEFINE_boolean("random_init_baseline", True, "Also fine-tune a randomly initialised network (FLOPs 0).")
flags.DEFINE_boolean("dry_run", False, "Print the plan and the time estimate, then stop.")


# ====================================================================== settings


def settings_from_flags():
    def numbers(name, kind):
        try:
            return [kind(value) for value in getattr(FLAGS, name)]
        except ValueError:
            raise ConfigError(
                f"--{name}={','.join(getattr(FLAGS, name))} must be a comma-separated list of {kind.__name__}s"
            ) from None

    values = {field.name: getattr(FLAGS, field.name) for field in dataclasses.fields(Settings)}
    values["eval_fractions"] = numbers("eval_fractions", float)
    values["seeds"] = numbers("seeds", int)
    values["objectives"] = [name.strip() for name in FLAGS.objectives if name.strip()]
    values["tasks"] = [name.strip() for name in FLAGS.tasks if name.strip()]
    return Settings(**values)


def command_line(argv=None):
    argv = list(sys.argv if argv is None else argv)
    if len(argv) > 1 and argv[1] == "--verbosity=-1":  # inserted by electra_tf.cli.run
        argv.pop(1)
    script = os.path.relpath(argv[0]) if argv and os.path.isabs(argv[0]) else (argv[0] if argv else "")
    if script.endswith(os.path.join("compute_matched", "__main__.py")):
        return " ".join(["python -m finetune.experiments.compute_matched"] + [shlex.quote(arg) for arg in argv[1:]])
    return " ".join(["python", shlex.quote(script)] + [shlex.quote(arg) for arg in argv[1:]])


def main(argv):
    from absl import app

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    run_experiment(settings_from_flags(), command=command_line())


if __name__ == "__main__":
    cli.run(main)
