"""The compute-matched experiment's settings (every field a flag of its command) and their validation, with the
corpus they name: its files and the held-out split."""

import dataclasses
import glob
import os
from typing import List, Optional

from electra_studies.compute_matched.plan import (
    FLOPS_PER_SECOND,
    PRECISION_SPEEDUP,
    PRETRAINING_JOB_SECONDS,
    STEP_OVERHEAD_SECONDS,
)
from electra_tf import flops as flops_lib
from electra_tf.config import PRESETS, ElectraConfig
from electra_tf.errors import ConfigError, DataError
from electra_tf.job_flags import flag_field

# Pre-training precisions offered (those the time model knows): float32, or bfloat16 compute with float32 variables.
PRECISIONS = tuple(PRECISION_SPEEDUP)


@dataclasses.dataclass
class Settings:
    """Everything the experiment depends on; each field is a flag of the entry point, with its default and help."""

    output_dir: str = flag_field(help_text="Directory for the data, runs, results.json, results.md and plots.")
    corpus: str = flag_field(
        help_text="Pre-training text: files, globs or directories (every file in them), "
        "comma-separated, plain or gzip, e.g. ../shared/data/corpus/nltk-gutenberg or "
        "'../shared/data/corpus/wikipedia/*.txt.gz' (with --document_mode=blank_line)."
    )
    glue_dir: str = flag_field(
        help_text="GLUE directory holding <TASK>/train.tsv and dev.tsv (download_glue_data.py layout), e.g. "
        "../shared/data/glue."
    )
    model_size: str = flag_field("tiny", "Preset pre-trained by every objective: " + ", ".join(PRESETS) + ".")
    objectives: List[str] = flag_field(
        ["electra", "mlm"], "Pre-training objectives to compare: " + ", ".join(flops_lib.FLOPS_OBJECTIVES) + "."
    )
    electra_steps: int = flag_field(
        2000,
        "The FLOP budget, as this many steps of ELECTRA pre-training "
        "(with --model_size, --max_seq_length and --train_batch_size).",
    )
    budget_flops: Optional[float] = flag_field(None, "The FLOP budget directly (overrides --electra_steps).")
    electra_from_mlm_step: int = flag_field(
        0,
        "ELECTRA starts from the masked-LM run's network at this step (its discriminator; a new generator) "
        "instead of from random weights, and those masked-LM steps' FLOPs count in its budget: --electra_steps "
        "are then the ELECTRA steps after them (docs/cpu_budget.md). Needs electra and mlm in --objectives. "
        "0: ELECTRA from random weights, as in the paper.",
    )
    eval_fractions: List[float] = flag_field(
        [0.25, 0.5, 1.0], "Fractions of the budget at which every objective's checkpoint is fine-tuned."
    )
    max_seq_length: int = flag_field(128, "Pre-training sequence length (the paper's 128).")
    train_batch_size: int = flag_field(32, "Pre-training batch size.")
    learning_rate: float = flag_field(1e-3, "Peak pre-training learning rate.")
    warmup_fraction: float = flag_field(0.1, "Share of each run's steps with linear warm-up.")
    warmup_steps: Optional[int] = flag_field(None, "Linear warm-up steps of every run (overrides --warmup_fraction).")
    bias_correction: bool = flag_field(
        True,
        "Adam with bias correction in pre-training (as configs/tiny.flags; the "
        "reference has none, which a run this short cannot afford).",
    )
    mixed_precision: str = flag_field(
        "float32",
        "Pre-training dtype policy: float32, or "
        "mixed_bfloat16 (bfloat16 compute, float32 variables). Fine-tuning stays float32.",
        choices=PRECISIONS,
    )
    budget_minutes: Optional[float] = flag_field(
        None,
        "The FLOP budget as wall time (overrides --electra_steps): the ELECTRA "
        "steps whose estimated pre-training time is nearest this many minutes, by the plan's time model "
        f"(a job's ~{PRETRAINING_JOB_SECONDS:g} s start, {STEP_OVERHEAD_SECONDS:g} s + FLOPs / "
        f"{FLOPS_PER_SECOND:.2g} per step in float32, {PRECISION_SPEEDUP['mixed_bfloat16']:g}x that rate in "
        "mixed_bfloat16, the held-out evaluations' forward passes; measured on an idle 2-core CPU), printed with "
        "the plan.",
    )
    seed: int = flag_field(0, "Pre-training seed (initialisation, data order, masking).")
    vocab_size: int = flag_field(8192, "Size of the WordPiece vocabulary learned from --corpus.")
    vocab_file: Optional[str] = flag_field(None, "Use this vocab.txt instead of learning one.")
    document_mode: str = flag_field(
        "file",
        "file: each corpus file is one document (books); "
        "blank_line: blank lines separate documents, as in Wikipedia-style text (examples never cross "
        "documents).",
        choices=("file", "blank_line"),
    )
    input_encoding: str = flag_field("utf-8", "Encoding of the corpus files.")
    encoding_errors: str = flag_field(
        "replace",
        "Undecodable bytes (the Gutenberg corpus has two Latin-1 bytes): replace, drop or stop.",
        choices=("strict", "replace", "ignore"),
    )
    heldout_files: int = flag_field(
        1,
        "Hold out the last N corpus files by name: held-out TFRecords built with the "
        "training vocabulary, on which every objective's pre-training is evaluated along the way "
        "(needs N + 1 files or more; 0: no held-out evaluation).",
    )
    eval_every_steps: Optional[int] = flag_field(
        None,
        "Held-out evaluation every this many pre-training steps, and at the "
        "end (default: each run's log interval, 1/25 of its steps).",
    )
    num_eval_steps: int = flag_field(
        20, "Batches (of --train_batch_size) of the held-out set read per evaluation, the same first ones every time."
    )
    tasks: List[str] = flag_field(
        ["sst-2"],
        "GLUE tasks every checkpoint is fine-tuned on, comma-separated (CoLA, SST-2, "
        "MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI).",
    )
    train_examples: int = flag_field(2000, "Fine-tuning examples drawn (seeded) from the task's train split; 0 = all.")
    eval_examples: int = flag_field(0, "Dev examples drawn (seeded) from each dev split; 0 = all.")
    seeds: List[int] = flag_field([0, 1, 2], "Fine-tuning seeds; the median over them is reported, with mean and std.")
    finetune_learning_rate: Optional[float] = flag_field(
        None, "Fine-tuning learning rate (default: the reference's for the preset's size family)."
    )
    finetune_epochs: Optional[int] = flag_field(
        None, "Fine-tuning epochs (default: the reference's, 3 for most tasks)."
    )
    finetune_batch_size: Optional[int] = flag_field(None, "Fine-tuning batch size (default 32).")
    finetune_max_seq_length: Optional[int] = flag_field(None, "Fine-tuning sequence length (default: the task's, 128).")
    random_init_baseline: bool = flag_field(True, "Also fine-tune a randomly initialised network (FLOPs 0).")
    dry_run: bool = flag_field(False, "Print the plan and the time estimate, then stop.")


def validate(settings):
    """One clear ConfigError/DataError for every bad setting, before anything is built or trained; each names the
    `Settings` fields it is about (an entry point shows them as its flags)."""
    if not settings.output_dir:
        raise ConfigError("output_dir is required", arguments=("output_dir",))
    if settings.model_size not in PRESETS:
        raise ConfigError(
            f"unknown model_size={settings.model_size!r}; choose one of {', '.join(PRESETS)}", arguments=("model_size",)
        )
    if len(settings.objectives) < 1:
        raise ConfigError(
            "objectives is empty; name at least one of " + ", ".join(flops_lib.FLOPS_OBJECTIVES),
            arguments=("objectives",),
        )
    for name in settings.objectives:
        if name not in flops_lib.FLOPS_OBJECTIVES:
            raise ConfigError(
                f"unknown objective {name!r} in objectives; choose among {', '.join(flops_lib.FLOPS_OBJECTIVES)}",
                arguments=("objectives",),
            )
    if len(set(settings.objectives)) != len(settings.objectives):
        raise ConfigError(
            f"objectives={','.join(settings.objectives)} names an objective twice", arguments=("objectives",)
        )
    if not settings.eval_fractions or any(not 0 < f <= 1 for f in settings.eval_fractions):
        raise ConfigError(
            f"eval_fractions={settings.eval_fractions} must be fractions in (0, 1]", arguments=("eval_fractions",)
        )
    if not settings.seeds:
        raise ConfigError("seeds is empty; give at least one fine-tuning seed", arguments=("seeds",))
    if len(set(settings.seeds)) != len(settings.seeds):
        raise ConfigError(f"seeds={settings.seeds} repeats a seed", arguments=("seeds",))
    if settings.electra_from_mlm_step < 0:
        raise ConfigError(
            f"electra_from_mlm_step must be >= 0 (0: ELECTRA from random weights), got "
            f"{settings.electra_from_mlm_step}",
            arguments=("electra_from_mlm_step",),
        )
    if settings.electra_from_mlm_step and not {"electra", "mlm"} <= set(settings.objectives):
        raise ConfigError(
            f"electra_from_mlm_step={settings.electra_from_mlm_step} starts ELECTRA from the masked-LM run: "
            f"objectives={','.join(settings.objectives)} must include electra and mlm",
            arguments=("electra_from_mlm_step", "objectives"),
        )
    for name in ("electra_steps", "max_seq_length", "train_batch_size", "vocab_size", "num_eval_steps"):
        if getattr(settings, name) <= 0:
            raise ConfigError(f"{name} must be positive, got {getattr(settings, name)}", arguments=(name,))
    for name in ("budget_flops", "budget_minutes", "eval_every_steps"):
        if getattr(settings, name) is not None and getattr(settings, name) <= 0:
            raise ConfigError(f"{name} must be positive, got {getattr(settings, name)}", arguments=(name,))
    if settings.budget_flops is not None and settings.budget_minutes is not None:
        raise ConfigError(
            "budget_flops and budget_minutes both set the budget; pass one of them",
            arguments=("budget_flops", "budget_minutes"),
        )
    if settings.learning_rate <= 0 or not 0 <= settings.warmup_fraction < 1:
        raise ConfigError(
            "learning_rate must be positive and warmup_fraction in [0, 1)",
            arguments=("learning_rate", "warmup_fraction"),
        )
    if settings.warmup_steps is not None and settings.warmup_steps < 0:
        raise ConfigError(f"warmup_steps must be >= 0, got {settings.warmup_steps}", arguments=("warmup_steps",))
    if settings.mixed_precision not in PRECISIONS:
        raise ConfigError(
            f"unknown mixed_precision={settings.mixed_precision!r}; choose one of {', '.join(PRECISIONS)}",
            arguments=("mixed_precision",),
        )
    if settings.train_examples < 0 or settings.eval_examples < 0:
        raise ConfigError(
            "train_examples and eval_examples must be >= 0 (0 = all)", arguments=("train_examples", "eval_examples")
        )
    if settings.heldout_files < 0:
        raise ConfigError(
            f"heldout_files must be >= 0 (0: no held-out evaluation), got {settings.heldout_files}",
            arguments=("heldout_files",),
        )
    ElectraConfig.from_preset(settings.model_size).check_sequence_length(settings.max_seq_length)
    split_corpus(corpus_files(settings.corpus), settings.heldout_files)
    if settings.vocab_file and not os.path.isfile(settings.vocab_file):
        raise DataError(f"vocab_file={settings.vocab_file} does not exist", arguments=("vocab_file",))
    validate_tasks(settings)


def validate_tasks(settings):
    """Every task of `settings.tasks` is a known GLUE task, named once, with its files under `settings.glue_dir`."""
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import glue_task_spec

    if not settings.tasks:
        raise ConfigError("tasks is empty; name at least one GLUE task, e.g. tasks=sst-2", arguments=("tasks",))
    specs = [glue_task_spec(task) for task in settings.tasks]  # unknown task: ConfigError naming the known ones
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"tasks={','.join(settings.tasks)} names a task twice", arguments=("tasks",))
    if not settings.glue_dir:
        raise ConfigError(
            f"glue_dir is required: the GLUE directory holding {specs[0].directory}/train.tsv "
            "(e.g. ../shared/data/glue)",
            arguments=("glue_dir",),
        )
    for spec in specs:
        for split in ("train",) + spec.dev_splits:
            path = task_file(settings.glue_dir, spec, split)
            if not os.path.isfile(path):
                raise DataError(
                    f"GLUE file {path} does not exist: pass glue_dir=<directory holding {spec.directory}/>",
                    arguments=("glue_dir",),
                )


def corpus_files(corpus):
    """The files of `corpus` (files, globs, or directories standing for every file in them), sorted per entry."""
    from data_prep.corpus import parse_corpus

    if not corpus:
        raise DataError(
            "corpus is required: text files, globs or a directory of them (e.g. ../shared/data/corpus/nltk-gutenberg)",
            arguments=("corpus",),
        )
    entries = []
    for entry in (part.strip() for part in corpus.split(",")):
        if entry and os.path.isdir(entry):
            files = sorted(path for path in glob.glob(os.path.join(entry, "*")) if os.path.isfile(path))
            if not files:
                raise DataError(f"corpus entry {entry} is a directory without files", arguments=("corpus",))
            entries.extend(files)
        elif entry:
            entries.append(entry)
    return list(parse_corpus(",".join(entries)).files)


def split_corpus(files, heldout_files):
    """(training files, held-out files): the last `heldout_files` files by name are held out, the others keep their
    order. DataError naming heldout_files when that leaves no training file."""
    if len(files) < heldout_files + 1:
        raise DataError(
            f"heldout_files={heldout_files} needs at least {heldout_files + 1} files (the last "
            f"{heldout_files} by name are held out) and corpus has {len(files)}; pass more files in "
            "corpus, or a smaller heldout_files (0: no held-out evaluation)",
            arguments=("heldout_files", "corpus"),
        )
    heldout = sorted(files, key=lambda path: (os.path.basename(path), path))[len(files) - heldout_files :]
    return [path for path in files if path not in heldout], heldout


def corpus_text_bytes(files):
    """Approximate size of the text of `files` (gzip files counted at their usual expansion), for the estimates."""
    from data_prep.corpus import CorpusSpec, corpus_num_bytes

    return corpus_num_bytes(CorpusSpec(files=tuple(files), tfds_name=None))
