"""Compute-matched comparison of pre-training objectives (issue #9): the paper's Table 5 / Figure 4 at micro scale.

    python -m experiments.compute_matched --output_dir=runs/compute_matched \\
        --corpus=../shared/data/corpus/nltk-gutenberg --glue_dir=../shared/data/glue

Every objective of `--objectives` (default ELECTRA against the BERT-style masked-LM baseline) pre-trains the same
preset for the SAME training FLOPs, counted by `electra_tf.flops.objective_pretraining_flops` (the reference's
accounting): the budget is `--electra_steps` steps of ELECTRA (or `--budget_flops`), and each objective gets
round(budget / its FLOPs per step) steps, so MLM, which has no generator, gets more steps than ELECTRA, as in the
paper's compute-matched comparison. At each of `--eval_fractions` of the budget every objective has a checkpoint
(at the step whose cumulative FLOPs are nearest that fraction, so the objectives agree within half a step), and each
checkpoint's discriminator-sized network is fine-tuned on a GLUE task (`--task`, a subset of `--train_examples`) with
the project's fine-tuning job, once per seed of `--seeds`; a randomly initialised network (no pre-training, FLOPs 0)
is fine-tuned too.

Stages, each skipped when its output exists (a rerun with the same flags resumes; other flags are refused):

1. `data/`: a WordPiece vocabulary (`--vocab_size`) learned from `--corpus` and pre-training TFRecords, with
   `data_prep`'s builders (on the 10 MB Gutenberg corpus: ~70 s for the vocabulary, ~6 s for the TFRecords);
2. `pretraining/<objective>/`: a `PretrainingJob` per objective (metrics.jsonl, checkpoints at the evaluation steps,
   `pretrained/`), and `pretraining/<objective>/eval/step-<n>/`: the discriminator of each intermediate checkpoint;
3. `glue/`: the task subset; `finetune/<objective>/step-<n>/` and `finetune/random_init/`: `FinetuningJob` outputs;
4. `results.json` (settings, machine, per objective: steps, FLOPs, pre-training curve, per-checkpoint scores per seed
   with median/mean/std, wall times), `results.md` (table, command line, machine), `pretraining_curves.png` (every
   logged metric against FLOPs) and `downstream.png` (score against pre-training FLOPs, seed spread).

Defaults: the tiny preset, a budget of 2000 ELECTRA steps of 32 x 128 tokens (5.4e13 FLOPs with the 7829-piece
vocabulary learned from the Gutenberg corpus; MLM gets 3069 steps), evaluations at 1/4, 1/2 and all of it, SST-2 with
2000 training examples (drawn with --seed), the whole dev set (872) and 3 fine-tuning seeds: 7 checkpoints x 3
seeds = 21 fine-tuning runs of 189 steps. The estimate printed at the start (31 min for the defaults: data 1.5,
pre-training 16, fine-tuning 13.5) comes from per-step times measured on the 2-core development machine: tiny ELECTRA
0.20-0.23 s/step, tiny MLM 0.15 s/step, fine-tuning 0.12-0.15 s/step (batch 32, length 128), plus ~15 s per job. A
run with a budget of 300 ELECTRA steps, 2 evaluation points and 2 seeds took 9.7 min (estimate: 11.4) while other
work loaded the machine (load average 3 to 5), so the defaults stay well inside 45 minutes on a machine to themselves.

Sequence length 128 (the paper's): for this model a step at 64 tokens costs 0.155 s, three quarters of a 128-token
step for half the tokens (the work outside the encoder, e.g. the vocabulary-sized softmax, does not shrink with L),
and whole books are split into full-length examples (`--document_mode=file`), so 128 gives the most text per second.
"""

import dataclasses
import functools
import glob
import json
import math
import os
import platform
import random
import shlex
import sys
import time
from typing import List, Optional

from electra_tf import flops as flops_lib
from electra_tf.config import PRESETS, ElectraConfig
from electra_tf.errors import ConfigError, DataError
from electra_tf.io_utils import atomic_write_json, atomic_write_text

RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
CURVES_PNG = "pretraining_curves.png"
DOWNSTREAM_PNG = "downstream.png"
BASELINE = "random_init"
LOG_POINTS = 25  # metrics.jsonl entries per pre-training run (plus step 1)

# Measured on the 2-core development machine (tiny preset, vocabulary ~7.8k, batch 32, length 128): a step takes
# about STEP_OVERHEAD_SECONDS + FLOPs / FLOPS_PER_SECOND (ELECTRA 2.7e10 FLOPs, 0.20 s; MLM 1.75e10, 0.15 s;
# fine-tuning 1.0e10, 0.12 s), plus fixed costs per job (graph building, data loading, evaluation).
FLOPS_PER_SECOND = 1.7e11
STEP_OVERHEAD_SECONDS = 0.05
PRETRAINING_JOB_SECONDS = 15.0
EXPORT_SECONDS = 4.0
FINETUNING_JOB_SECONDS = 12.0
FINETUNING_TRIAL_SECONDS = 6.0
VOCAB_SECONDS_PER_MB = 8.0
TFRECORD_SECONDS_PER_MB = 1.0

@dataclasses.dataclass
class Settings:
    """Everything the experiment depends on; field names are the flag names."""

    output_dir: str
    corpus: str
    glue_dir: str
    model_size: str = "tiny"
    objectives: List[str] = dataclasses.field(default_factory=lambda: ["electra", "mlm"])
    electra_steps: int = 2000
    budget_flops: Optional[float] = None
    eval_fractions: List[float] = dataclasses.field(default_factory=lambda: [0.25, 0.5, 1.0])
    max_seq_length: int = 128
    train_batch_size: int = 32
    learning_rate: float = 1e-3
    warmup_fraction: float = 0.1
    seed: int = 0
    vocab_size: int = 8192
    vocab_file: Optional[str] = None
    document_mode: str = "file"
    input_encoding: str = "utf-8"
    encoding_errors: str = "replace"
    task: str = "sst-2"
    train_examples: int = 2000
    eval_examples: int = 0
    seeds: List[int] = dataclasses.field(default_factory=lambda: [0, 1, 2])
    finetune_learning_rate: Optional[float] = None
    finetune_epochs: Optional[int] = None
    finetune_batch_size: Optional[int] = None
    finetune_max_seq_length: Optional[int] = None
    random_init_baseline: bool = True
    dry_run: bool = False


def validate(settings):
    """One clear ConfigError/DataError for every bad flag, before anything is built or trained."""
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import get_task

    if not settings.output_dir:
        raise ConfigError("--output_dir is required")
    if settings.model_size not in PRESETS:
        raise ConfigError(f"unknown --model_size={settings.model_size!r}; choose one of {', '.join(PRESETS)}")
    if len(settings.objectives) < 1:
        raise ConfigError("--objectives is empty; name at least one of " + ", ".join(flops_lib.FLOPS_OBJECTIVES))
    for name in settings.objectives:
        if name not in flops_lib.FLOPS_OBJECTIVES:
            raise ConfigError(f"unknown objective {name!r} in --objectives; choose among "
                              f"{', '.join(flops_lib.FLOPS_OBJECTIVES)}")
    if len(set(settings.objectives)) != len(settings.objectives):
        raise ConfigError(f"--objectives={','.join(settings.objectives)} names an objective twice")
    if not settings.eval_fractions or any(not 0 < f <= 1 for f in settings.eval_fractions):
        raise ConfigError(f"--eval_fractions={settings.eval_fractions} must be fractions in (0, 1]")
    if not settings.seeds:
        raise ConfigError("--seeds is empty; give at least one fine-tuning seed")
    if len(set(settings.seeds)) != len(settings.seeds):
        raise ConfigError(f"--seeds={settings.seeds} repeats a seed")
    for name in ("electra_steps", "max_seq_length", "train_batch_size", "vocab_size"):
        if getattr(settings, name) <= 0:
            raise ConfigError(f"--{name} must be positive, got {getattr(settings, name)}")
    if settings.budget_flops is not None and settings.budget_flops <= 0:
        raise ConfigError(f"--budget_flops must be positive, got {settings.budget_flops}")
    if settings.learning_rate <= 0 or not 0 <= settings.warmup_fraction < 1:
        raise ConfigError("--learning_rate must be positive and --warmup_fraction in [0, 1)")
    if settings.train_examples < 0 or settings.eval_examples < 0:
        raise ConfigError("--train_examples and --eval_examples must be >= 0 (0 = all)")
    ElectraConfig.from_preset(settings.model_size).check_sequence_length(settings.max_seq_length)
    corpus_files(settings.corpus)
    if settings.vocab_file and not os.path.isfile(settings.vocab_file):
        raise DataError(f"--vocab_file={settings.vocab_file} does not exist")
    spec = get_task(settings.task)  # unknown task: ConfigError naming the known ones
    if not settings.glue_dir:
        raise ConfigError(f"--glue_dir is required: the GLUE directory holding {spec.directory}/train.tsv "
                          "(e.g. ../shared/data/glue)")
    for split in ("train",) + spec.dev_splits:
        path = task_file(settings.glue_dir, spec.name, split)
        if not os.path.isfile(path):
            raise DataError(f"GLUE file {path} does not exist: pass --glue_dir=<directory holding {spec.directory}/>")


def corpus_files(corpus):
    """The files of `--corpus` (files, globs, or directories standing for every file in them), sorted per entry."""
    from data_prep.corpus import parse_corpus

    if not corpus:
        raise DataError("--corpus is required: text files, globs or a directory of them "
                        "(e.g. ../shared/data/corpus/nltk-gutenberg)")
    entries = []
    for entry in (part.strip() for part in corpus.split(",")):
        if entry and os.path.isdir(entry):
            files = sorted(path for path in glob.glob(os.path.join(entry, "*")) if os.path.isfile(path))
            if not files:
                raise DataError(f"--corpus entry {entry} is a directory without files")
            entries.extend(files)
        elif entry:
            entries.append(entry)
    return list(parse_corpus(",".join(entries)).files)


# ====================================================================== planning
def objective_config(settings, objective, vocab_size=None):
    """The ElectraConfig an objective's run uses (vocabulary size only matters for the FLOPs)."""
    config = ElectraConfig.from_preset(settings.model_size, objective=objective)
    if vocab_size:  # a vocabulary learned by data_prep: [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0..4
        config = config.with_vocab(vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    return config


def steps_for_flops(cumulative, target):
    """The step count n >= 0 whose cumulative FLOPs `cumulative(n)` are nearest `target` (monotone `cumulative`)."""
    low, high = 0, 1
    while cumulative(high) < target:
        high *= 2
    while high - low > 1:  # cumulative(low) < target <= cumulative(high)
        middle = (low + high) // 2
        if cumulative(middle) < target:
            low = middle
        else:
            high = middle
    if cumulative(low) >= target:
        return low
    return low if target - cumulative(low) < cumulative(high) - target else high


def plan_runs(settings, configs):
    """{objective: run plan} for the FLOP budget: steps, warm-up, log interval, FLOPs per step and the evaluation
    points (fraction, step, cumulative FLOPs). ConfigError when the budget gives some objective no step at some
    evaluation point."""
    length, batch = settings.max_seq_length, settings.train_batch_size
    electra = dataclasses.replace(configs[settings.objectives[0]], objective="electra")
    electra_step_flops = flops_lib.objective_pretraining_flops(electra, length, batch)
    if settings.budget_flops:
        budget, budget_source = float(settings.budget_flops), f"--budget_flops={settings.budget_flops:g}"
    else:
        budget = settings.electra_steps * electra_step_flops
        budget_source = f"--electra_steps={settings.electra_steps}"
    fractions = sorted(set(settings.eval_fractions))
    plans = {}
    for objective in settings.objectives:
        config = configs[objective]

        def cumulative(steps, config=config):
            return flops_lib.objective_pretraining_flops(config, length, batch, steps)

        points = []
        for fraction in fractions:
            step = steps_for_flops(cumulative, fraction * budget)
            if step < 1:
                raise ConfigError(f"the budget ({budget_source}: {budget:.3g} FLOPs) gives objective {objective!r} no "
                                  f"step at evaluation fraction {fraction:g} (one step costs "
                                  f"{cumulative(1):.3g} FLOPs); raise the budget or the smallest --eval_fractions")
            points.append({"fraction": fraction, "step": step, "flops": cumulative(step)})
        steps = points[-1]["step"] if fractions[-1] == 1.0 else steps_for_flops(cumulative, budget)
        plans[objective] = {
            "steps": steps,
            "warmup_steps": int(round(settings.warmup_fraction * steps)),
            "log_every_steps": max(1, int(round(steps / LOG_POINTS))),
            "flops_per_step": cumulative(1),
            "total_flops": cumulative(steps),
            "eval_points": points,
        }
    return {"budget_flops": budget, "budget_source": budget_source, "electra_step_flops": electra_step_flops,
            "objectives": plans}


def finetune_hyperparameters(settings):
    from finetune.hyperparameters import reference_hyperparameters

    return reference_hyperparameters(settings.task, settings.model_size, learning_rate=settings.finetune_learning_rate,
                                     num_train_epochs=settings.finetune_epochs,
                                     max_seq_length=settings.finetune_max_seq_length,
                                     train_batch_size=settings.finetune_batch_size)


def _step_seconds(step_flops):
    return STEP_OVERHEAD_SECONDS + step_flops / FLOPS_PER_SECOND


def estimate_seconds(settings, plan, configs, corpus_bytes, num_train_examples, data_ready=False):
    """Estimated wall time per stage (seconds) on the development machine's 2 idle cores."""
    from finetune.glue.tasks import get_task

    megabytes = corpus_bytes / 1e6
    data = 0.0 if data_ready else (0 if settings.vocab_file else VOCAB_SECONDS_PER_MB * megabytes) + (
        5 + TFRECORD_SECONDS_PER_MB * megabytes)
    pretraining = sum(PRETRAINING_JOB_SECONDS + run["steps"] * _step_seconds(run["flops_per_step"])
                      + EXPORT_SECONDS * (len(run["eval_points"]) - 1) for run in plan["objectives"].values())
    hyper = finetune_hyperparameters(settings)
    spec = get_task(settings.task)
    examples = num_train_examples * (2 if spec.swap_augment else 1)
    steps = hyper.num_train_epochs * math.ceil(examples / hyper.train_batch_size)
    config = next(iter(configs.values()))
    ft_step_flops = 2 * hyper.train_batch_size * flops_lib.inference_flops(config, hyper.max_seq_length)
    trial = FINETUNING_TRIAL_SECONDS + steps * _step_seconds(ft_step_flops)
    checkpoints = sum(len({p["step"] for p in run["eval_points"]}) for run in plan["objectives"].values())
    checkpoints += 1 if settings.random_init_baseline else 0
    groups = len(seed_groups(settings.seeds))
    finetuning = checkpoints * (groups * FINETUNING_JOB_SECONDS + len(settings.seeds) * trial)
    return {"data": data, "pretraining": pretraining, "finetuning": finetuning,
            "total": data + pretraining + finetuning}


def seed_groups(seeds):
    """Runs of consecutive seeds [(first, count)]: one FinetuningJob (seed, seed + 1, ...) per run."""
    groups = []
    for seed in seeds:
        if groups and seed == groups[-1][0] + groups[-1][1]:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((seed, 1))
    return groups


# ====================================================================== stages
def _check_or_write_settings(path, values, what):
    """Write `values` to `path`, or refuse when `path` holds other values (a cache built with other flags)."""
    values = json.loads(json.dumps(values))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            existing = json.load(handle)
        if existing != values:
            changed = sorted(key for key in set(existing) | set(values) if existing.get(key) != values.get(key))
            raise ConfigError(f"{os.path.dirname(path)} holds {what} made with other settings ({', '.join(changed)}); "
                              "use a new --output_dir, or the flags of that run")
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_json(path, values)


def prepare_data(settings, files):
    """(vocab path, TFRecord glob) under <output_dir>/data, built once."""
    from data_prep import pipeline, wordpiece_vocab

    directory = os.path.join(settings.output_dir, "data")
    _check_or_write_settings(os.path.join(directory, "settings.json"), {
        "corpus": [[os.path.abspath(path), os.path.getsize(path)] for path in files],
        "vocab_size": None if settings.vocab_file else settings.vocab_size,
        "vocab_file": os.path.abspath(settings.vocab_file) if settings.vocab_file else None,
        "max_seq_length": settings.max_seq_length, "document_mode": settings.document_mode,
        "input_encoding": settings.input_encoding, "encoding_errors": settings.encoding_errors}, "data")
    vocab = os.path.join(directory, "vocab.txt")
    if not os.path.exists(vocab):
        start = time.time()
        if settings.vocab_file:
            wordpiece_vocab.check_existing_vocab(settings.vocab_file)
            atomic_write_text(vocab, open(settings.vocab_file, encoding="utf-8").read())
        else:
            counts = wordpiece_vocab.count_words(",".join(files), document_mode=settings.document_mode,
                                                 encoding=settings.input_encoding, errors=settings.encoding_errors)
            wordpiece_vocab.write_vocab(wordpiece_vocab.learn_vocab(counts, settings.vocab_size), vocab)
        print(f"vocabulary: {vocab} in {time.time() - start:.0f}s", flush=True)
    records = os.path.join(directory, "tfrecords")
    if not os.path.exists(os.path.join(records, "manifest.json")):
        start = time.time()
        manifest = pipeline.build_pretraining_data(
            ",".join(files), vocab, records, max_seq_length=settings.max_seq_length, num_processes=os.cpu_count() or 1,
            document_mode=settings.document_mode, input_encoding=settings.input_encoding,
            encoding_errors=settings.encoding_errors, show_progress=False)
        print(f"pre-training data: {manifest['num_examples']} examples of {settings.max_seq_length} tokens in "
              f"{time.time() - start:.0f}s", flush=True)
    return vocab, os.path.join(records, "*.tfrecord*")


def pretraining_job(settings, objective, run_plan, records, vocab):
    from electra_tf.training.pretraining_job import PretrainingJob

    eval_steps = sorted({point["step"] for point in run_plan["eval_points"]})
    return PretrainingJob(
        pretrain_tfrecords=records, model_dir=os.path.join(settings.output_dir, "pretraining", objective),
        model_size=settings.model_size, vocab_file=vocab, max_seq_length=settings.max_seq_length,
        train_batch_size=settings.train_batch_size, learning_rate=settings.learning_rate,
        num_train_steps=run_plan["steps"], num_warmup_steps=run_plan["warmup_steps"],
        save_checkpoints_steps=0, checkpoint_steps=tuple(eval_steps), keep_checkpoint_max=0,
        log_every_steps=run_plan["log_every_steps"], seed=settings.seed, bias_correction=True, progress_bar=False,
        model_overrides={"objective": objective})


def _final_step_done(model_dir, steps):
    import tensorflow as tf

    latest = tf.train.latest_checkpoint(model_dir)
    return (latest is not None and latest.endswith(f"ckpt-{steps}")
            and os.path.isfile(os.path.join(model_dir, "pretrained", "config.json")))


def pretrain(settings, objective, run_plan, records, vocab):
    """Runs (or resumes, or skips) one objective's pre-training; returns {step: pretrained directory} and seconds."""
    from electra_tf.training.pretraining_job import run

    job = pretraining_job(settings, objective, run_plan, records, vocab)
    recorded = {key: value for key, value in dataclasses.asdict(job).items() if key != "progress_bar"}
    _check_or_write_settings(os.path.join(job.model_dir, "experiment_job.json"), recorded, "a pre-training run")
    start = time.time()
    if _final_step_done(job.model_dir, job.num_train_steps):
        print(f"{objective}: pre-training already done ({job.model_dir})", flush=True)
    else:
        print(f"{objective}: pre-training {job.num_train_steps} steps ({run_plan['flops_per_step']:.3g} FLOPs each)",
              flush=True)
        run(job)
    directories = export_checkpoints(job, run_plan, vocab)
    return directories, time.time() - start


def export_checkpoints(job, run_plan, vocab):
    """{step: save_pretrained directory} for every evaluation step: the run's `pretrained/` for its last step, the
    discriminator-sized network restored from `ckpt-<step>` for the others."""
    from electra_tf.training.pretraining_job import CONFIG_FILE, PRETRAINED_DIR

    directories, model = {}, None
    for step in sorted({point["step"] for point in run_plan["eval_points"]}):
        if step == job.num_train_steps:
            directories[step] = os.path.join(job.model_dir, PRETRAINED_DIR)
            continue
        target = os.path.join(job.model_dir, "eval", f"step-{step}")
        directories[step] = target
        if os.path.isfile(os.path.join(target, "config.json")):
            continue
        import tensorflow as tf

        from electra_tf.models.pretrainer import ElectraPretrainer
        from electra_tf.pretrained import save_pretrained

        checkpoint = os.path.join(job.model_dir, f"ckpt-{step}")
        if not os.path.exists(checkpoint + ".index"):
            raise DataError(f"{checkpoint} is missing: the pre-training run did not save its evaluation step {step}; "
                            f"remove {job.model_dir} and run again")
        if model is None:
            config = ElectraConfig.load(os.path.join(job.model_dir, CONFIG_FILE))
            model = ElectraPretrainer(config, max_seq_length=job.max_seq_length)
        tf.train.Checkpoint(model=model).restore(checkpoint).expect_partial().assert_existing_objects_matched()
        save_pretrained(model.pretrained_discriminator(), target, vocab)
    if model is not None:
        import keras

        keras.backend.clear_session(free_memory=False)
    return directories


def random_init_checkpoint(settings, vocab):
    """A save_pretrained directory of a randomly initialised discriminator (the FLOPs-0 baseline)."""
    target = os.path.join(settings.output_dir, "pretraining", BASELINE)
    if not os.path.isfile(os.path.join(target, "config.json")):
        import keras

        from electra_tf.models.discriminator import ElectraDiscriminator
        from electra_tf.pretrained import save_pretrained
        from electra_tf.training.pretraining_job import PretrainingJob

        config = PretrainingJob(pretrain_tfrecords="-", model_dir="-", model_size=settings.model_size,
                                vocab_file=vocab).model_config()
        keras.utils.set_random_seed(settings.seed)
        save_pretrained(ElectraDiscriminator(config), target, vocab)
        keras.backend.clear_session(free_memory=False)
    return target


def task_subset(settings):
    """<output_dir>/glue/<TASK>/ with `--train_examples` train rows and `--eval_examples` rows of each dev split,
    drawn with --seed (header rows kept, order preserved); returns (glue dir, number of train examples)."""
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import get_task

    spec = get_task(settings.task)
    directory = os.path.join(settings.output_dir, "glue", f"train{settings.train_examples}-eval"
                             f"{settings.eval_examples}-seed{settings.seed}")
    counts = {}
    for split, size in [("train", settings.train_examples)] + [(name, settings.eval_examples)
                                                                for name in spec.dev_splits]:
        source, target = task_file(settings.glue_dir, spec.name, split), task_file(directory, spec.name, split)
        with open(source, "rb") as handle:
            lines = handle.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        header = lines[:1] if spec.splits[spec.resolve_split(split)].layout.has_header else []
        rows = lines[len(header):]
        if size and size < len(rows):
            keep = sorted(random.Random(f"{settings.seed}-{split}").sample(range(len(rows)), size))
            rows = [rows[index] for index in keep]
        counts[split] = len(rows)
        if not os.path.exists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            temporary = f"{target}.tmp-{os.getpid()}"
            with open(temporary, "wb") as handle:
                handle.write(b"".join(line + b"\n" for line in header + rows))
            os.replace(temporary, target)
    return directory, counts["train"]


def finetune(settings, label, checkpoint, glue_dir):
    """Fine-tunes `checkpoint` once per seed (one FinetuningJob per run of consecutive seeds), reusing finished jobs;
    returns ({seed: {score key: {metric: value}}}, seconds)."""
    from finetune.finetuning_job import RESULTS_FILE, FinetuningJob, run

    start, scores = time.time(), {}
    hyper = finetune_hyperparameters(settings)
    for first, count in seed_groups(settings.seeds):
        job = FinetuningJob(
            task=settings.task, init_checkpoint=checkpoint, data_dir=glue_dir, model_size=settings.model_size,
            output_dir=os.path.join(settings.output_dir, "finetune", label, f"seeds-{first}-{first + count - 1}"),
            num_trials=count, seed=first, learning_rate=hyper.learning_rate, num_train_epochs=hyper.num_train_epochs,
            train_batch_size=hyper.train_batch_size, max_seq_length=hyper.max_seq_length, progress_bar=False)
        path = os.path.join(job.output_dir, RESULTS_FILE)
        results = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                results = json.load(handle)
            if results.get("job") != json.loads(json.dumps(dataclasses.asdict(job))) or len(
                    results.get("trials", [])) != count:
                results = None
        if results is None:
            print(f"fine-tuning {label}, seeds {first}..{first + count - 1}", flush=True)
            results = run(job)
        for trial in results["trials"]:
            scores[trial["seed"]] = trial["metrics"]
    return scores, time.time() - start


# ====================================================================== results
def primary_metric(task):
    """(score key, metric) of the task's headline number, e.g. ("SST-2", "accuracy"), ("MNLI-m", "accuracy")."""
    from finetune.glue.metrics import score_key
    from finetune.glue.tasks import get_task

    spec = get_task(task)
    return score_key(spec.name, spec.dev_splits[0]), spec.primary_metric


def summarize_scores(per_seed, key, metric):
    """{"scores": {seed: value}, "median", "mean", "std"} of the headline metric (NaN/None values left out)."""
    import numpy as np

    scores = {str(seed): per_seed[seed].get(key, {}).get(metric) for seed in sorted(per_seed)}
    values = np.array([value for value in scores.values() if value is not None and not math.isnan(value)], float)
    summary = {"scores": scores, "median": None, "mean": None, "std": None}
    if len(values):
        summary.update(median=float(np.median(values)), mean=float(np.mean(values)), std=float(np.std(values)))
    return summary


def read_metrics(model_dir, cumulative_flops):
    """The run's metrics.jsonl entries, each with the cumulative training FLOPs at its step (`cumulative_flops(step)`).
    """
    path = os.path.join(model_dir, "metrics.jsonl")
    entries = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    entry = json.loads(line)
                    entry["flops"] = cumulative_flops(entry["step"])
                    entries.append(entry)
    return entries


def machine_info():
    import keras
    import tensorflow as tf

    info = {"cpu_count": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor(),
            "python": platform.python_version(), "tensorflow": tf.__version__, "keras": keras.__version__}
    if hasattr(os, "sched_getaffinity"):
        info["usable_cpus"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = [round(value, 2) for value in os.getloadavg()]
    return info


def _format_flops(value):
    return "0" if not value else f"{value:.3g}"


def _format_score(summary):
    if not summary or summary.get("median") is None:
        return "–"
    return f"{summary['median']:.2f} ({summary['mean']:.2f} ± {summary['std']:.2f})"


def _final_losses(curve):
    if not curve:
        return "–"
    last = curve[-1]
    names = ["loss"] + sorted(name for name in last if name.endswith("_loss") and name != "loss")
    return ", ".join(f"{name} {last[name]:.3f}" for name in names if name in last)


def markdown_table(results):
    """results.md: one row per objective (and the random-init baseline), the headline metric's median (mean ± std
    over seeds) at every evaluation point, then the command line, settings and machine."""
    key, metric = results["primary_metric"]
    objectives = results["objectives"]
    fractions = sorted({point["fraction"] for run in objectives.values() for point in run["eval_points"]})
    baseline = results.get("baseline")
    budget = results["budget_flops"]
    columns = ["objective", "pre-training steps", "pre-training FLOPs", "final pre-training losses"]
    if baseline:
        columns.append("0 (random init)")
    columns += [f"{fraction:g} x budget ({_format_flops(fraction * budget)} FLOPs)" for fraction in fractions]
    lines = [f"# Compute-matched pre-training objectives: {results['settings']['model_size']} preset, "
             f"{key} {metric}", "",
             f"Budget {_format_flops(budget)} training FLOPs ({results['budget_source']}; reference accounting, "
             "`electra_tf.flops.objective_pretraining_flops`). Cells: median over fine-tuning seeds (mean ± std), "
             f"{key} dev {metric}, {len(results['settings']['seeds'])} seeds, "
             f"{results['num_train_examples']} training examples.", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for name, run in objectives.items():
        by_fraction = {point["fraction"]: point for point in run["eval_points"]}
        cells = [name, str(run["steps"]), _format_flops(run["total_flops"]),
                 _final_losses(run.get("pretraining_curve"))]
        if baseline:
            cells.append(_format_score(baseline.get("downstream")))
        cells += [_format_score(by_fraction[f].get("downstream")) if f in by_fraction else "–" for f in fractions]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| objective | FLOPs per step | steps at each evaluation point | pre-training s | fine-tuning s |",
              "|---|---|---|---|---|"]
    for name, run in objectives.items():
        steps = ", ".join(str(point["step"]) for point in run["eval_points"])
        lines.append(f"| {name} | {_format_flops(run['flops_per_step'])} | {steps} | "
                     f"{run.get('pretraining_seconds', 0):.0f} | {run.get('finetuning_seconds', 0):.0f} |")
    if baseline:
        lines.append(f"| {BASELINE} | 0 | 0 | 0 | {baseline.get('finetuning_seconds', 0):.0f} |")
    lines += ["", "Pre-training metrics are those of the last logged window. `masked_lm_*` is the generator's for "
              "objectives with a generator and the discriminator-sized network's for `mlm` (`model_mlm_*` for "
              "replace_mlm and all_tokens_mlm); `loss` is each objective's own total (ELECTRA's includes 50 x the "
              "discriminator loss), so losses compare within an objective, not across."]
    machine = results.get("machine", {})
    lines += ["", "Command:", "", "```", results.get("command", ""), "```", "",
              f"Machine: {machine.get('cpu_count')} CPUs, {machine.get('platform')}, TensorFlow "
              f"{machine.get('tensorflow')}, Keras {machine.get('keras')}; load average at start "
              f"{machine.get('load_average_at_start')}. Total wall time "
              f"{results.get('wall_seconds', {}).get('total', 0) / 60:.1f} min (estimated "
              f"{results.get('estimated_seconds', {}).get('total', 0) / 60:.1f}).", ""]
    return "\n".join(lines)


def _save_figure(figure, path):
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        figure.savefig(temporary, format="png", dpi=110)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_pretraining_curves(results, path):
    """One panel per logged metric (every metric of any objective), value against cumulative training FLOPs, one
    line per objective."""
    plt = _pyplot()
    objectives = results["objectives"]
    names = []
    for run in objectives.values():
        for entry in run.get("pretraining_curve", []):
            names += [name for name in entry if name not in ("step", "flops") and name not in names]
    names = [name for name in names if not (name == "skipped_steps" and not any(
        entry.get(name) for run in objectives.values() for entry in run.get("pretraining_curve", [])))]
    columns = min(3, max(1, len(names)))
    rows = max(1, math.ceil(len(names) / columns))
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.2 * rows), squeeze=False)
    for index, name in enumerate(names):
        axis = axes[index // columns][index % columns]
        for objective, run in objectives.items():
            points = [(entry["flops"], entry[name]) for entry in run.get("pretraining_curve", []) if name in entry]
            if points:
                axis.plot(*zip(*points), marker=".", label=objective)
        axis.set_title(name)
        axis.set_xlabel("pre-training FLOPs")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.suptitle(f"Pre-training metrics against compute ({results['settings']['model_size']})")
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)


def plot_downstream(results, path):
    """The headline fine-tuning metric against pre-training FLOPs: per objective the median over seeds (line, with
    mean ± std error bars and every seed as a dot), starting from the random-init network at 0 FLOPs."""
    plt = _pyplot()
    key, metric = results["primary_metric"]
    baseline = results.get("baseline") or {}
    base = baseline.get("downstream") or {}
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for index, (objective, run) in enumerate(results["objectives"].items()):
        color = f"C{index}"
        xs, medians = [], []
        if base.get("median") is not None:
            xs.append(0.0)
            medians.append(base["median"])
        for point in run["eval_points"]:
            summary = point.get("downstream") or {}
            if summary.get("median") is None:
                continue
            xs.append(point["flops"])
            medians.append(summary["median"])
            axis.errorbar(point["flops"], summary["mean"], yerr=summary["std"], color=color, alpha=0.5, capsize=3)
            seeds = [value for value in summary["scores"].values() if value is not None]
            axis.scatter([point["flops"]] * len(seeds), seeds, color=color, s=10, alpha=0.4)
        axis.plot(xs, medians, marker="o", color=color, label=f"{objective} ({run['steps']} steps)")
    if base.get("median") is not None:
        seeds = [value for value in base["scores"].values() if value is not None]
        axis.scatter([0.0] * len(seeds), seeds, color="k", s=10, alpha=0.4)
        axis.axhline(base["median"], color="k", linestyle=":", linewidth=1, label="random init (median)")
    axis.set_xlabel("pre-training FLOPs")
    axis.set_ylabel(f"{key} dev {metric}")
    axis.set_title(f"Fine-tuned {key} {metric} against pre-training compute (median; dots: seeds)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)


def write_outputs(results, output_dir):
    """results.json, results.md and both plots, each atomically."""
    atomic_write_json(os.path.join(output_dir, RESULTS_JSON), results)
    atomic_write_text(os.path.join(output_dir, RESULTS_MD), markdown_table(results))
    plot_pretraining_curves(results, os.path.join(output_dir, CURVES_PNG))
    plot_downstream(results, os.path.join(output_dir, DOWNSTREAM_PNG))


def command_line(argv=None):
    argv = list(sys.argv if argv is None else argv)
    if len(argv) > 1 and argv[1] == "--verbosity=-1":  # inserted by electra_tf.cli.run
        argv.pop(1)
    script = os.path.relpath(argv[0]) if argv and os.path.isabs(argv[0]) else (argv[0] if argv else "")
    if script.endswith(os.path.join("experiments", "compute_matched.py")):
        return " ".join(["python -m experiments.compute_matched"] + [shlex.quote(arg) for arg in argv[1:]])
    return " ".join(["python", shlex.quote(script)] + [shlex.quote(arg) for arg in argv[1:]])


# ====================================================================== the experiment
def run_experiment(settings, command=""):
    """Runs every stage (skipping finished ones) and returns the results dict written to results.json."""
    started = time.time()
    validate(settings)
    files = corpus_files(settings.corpus)
    corpus_bytes = sum(os.path.getsize(path) for path in files)
    nominal = {name: objective_config(settings, name, settings.vocab_size) for name in settings.objectives}
    glue_counts = _train_count(settings)
    if settings.dry_run:
        plan = plan_runs(settings, nominal)
        _print_plan(settings, plan, estimate_seconds(settings, plan, nominal, corpus_bytes, glue_counts))
        return None
    os.makedirs(settings.output_dir, exist_ok=True)
    stage_start = time.time()
    vocab, records = prepare_data(settings, files)
    data_seconds = time.time() - stage_start
    from electra_tf.training.pretraining_job import PretrainingJob

    configs = {}
    for name in settings.objectives:
        configs[name] = PretrainingJob(pretrain_tfrecords=records, model_dir="-", model_size=settings.model_size,
                                       vocab_file=vocab, model_overrides={"objective": name}).model_config()
    plan = plan_runs(settings, configs)
    estimate = estimate_seconds(settings, plan, configs, corpus_bytes, glue_counts, data_ready=True)
    estimate["data"] = data_seconds
    estimate["total"] += data_seconds
    _print_plan(settings, plan, estimate)
    key, metric = primary_metric(settings.task)
    glue_dir, num_train = task_subset(settings)
    results = {
        "settings": dataclasses.asdict(settings), "command": command, "machine": machine_info(),
        "budget_flops": plan["budget_flops"], "budget_source": plan["budget_source"],
        "electra_step_flops": plan["electra_step_flops"], "primary_metric": [key, metric],
        "vocab_file": vocab, "vocab_size": next(iter(configs.values())).vocab_size,
        "num_train_examples": num_train, "estimated_seconds": estimate,
        "objectives": {name: dict(run) for name, run in plan["objectives"].items()},
        "wall_seconds": {"data": data_seconds},
    }

    def save():
        results["wall_seconds"]["total"] = time.time() - started
        write_outputs(results, settings.output_dir)

    checkpoints = {}
    for name in settings.objectives:
        run_plan = results["objectives"][name]
        checkpoints[name], seconds = pretrain(settings, name, run_plan, records, vocab)
        run_plan["pretraining_seconds"] = seconds
        run_plan["pretraining_curve"] = read_metrics(
            os.path.join(settings.output_dir, "pretraining", name),
            functools.partial(flops_lib.objective_pretraining_flops, configs[name], settings.max_seq_length,
                              settings.train_batch_size))
        for point in run_plan["eval_points"]:
            point["checkpoint"] = checkpoints[name][point["step"]]
        save()
    if settings.random_init_baseline:
        checkpoint = random_init_checkpoint(settings, vocab)
        per_seed, seconds = finetune(settings, BASELINE, checkpoint, glue_dir)
        results["baseline"] = {"name": BASELINE, "flops": 0, "checkpoint": checkpoint, "finetuning_seconds": seconds,
                               "downstream": summarize_scores(per_seed, key, metric), "all_metrics": per_seed}
        save()
    for name in settings.objectives:
        run_plan = results["objectives"][name]
        run_plan["finetuning_seconds"] = 0.0
        for point in run_plan["eval_points"]:
            per_seed, seconds = finetune(settings, os.path.join(name, f"step-{point['step']}"), point["checkpoint"],
                                         glue_dir)
            point["downstream"] = summarize_scores(per_seed, key, metric)
            point["all_metrics"] = per_seed
            point["finetuning_seconds"] = seconds
            run_plan["finetuning_seconds"] += seconds
            save()
    if hasattr(os, "getloadavg"):
        results["machine"]["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    save()
    print(f"wrote {os.path.join(settings.output_dir, RESULTS_MD)} in {(time.time() - started) / 60:.1f} min",
          flush=True)
    return results


def _train_count(settings):
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import get_task

    spec = get_task(settings.task)
    path = task_file(settings.glue_dir, spec.name, "train")
    with open(path, "rb") as handle:
        rows = sum(1 for line in handle if line.strip()) - (1 if spec.splits["train"].layout.has_header else 0)
    return min(rows, settings.train_examples) if settings.train_examples else rows


def _print_plan(settings, plan, estimate):
    print(f"budget: {plan['budget_flops']:.4g} FLOPs ({plan['budget_source']}, {plan['electra_step_flops']:.4g} "
          f"FLOPs per ELECTRA step at {settings.train_batch_size} x {settings.max_seq_length})", flush=True)
    for name, run in plan["objectives"].items():
        points = ", ".join(f"{p['fraction']:g}: step {p['step']}" for p in run["eval_points"])
        print(f"  {name}: {run['steps']} steps x {run['flops_per_step']:.4g} FLOPs = {run['total_flops']:.4g} "
              f"(evaluations at {points})", flush=True)
    print(f"estimated time: {estimate['total'] / 60:.0f} min (data {estimate['data'] / 60:.1f}, pre-training "
          f"{estimate['pretraining'] / 60:.1f}, fine-tuning {estimate['finetuning'] / 60:.1f}; measured per-step "
          "times of a 2-core CPU with nothing else running, stages already done are skipped)", flush=True)
