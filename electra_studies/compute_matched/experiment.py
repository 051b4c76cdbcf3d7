"""Compute-matched comparison of pre-training objectives: the paper's Table 5 / Figure 4 at micro scale.

    python -m electra_studies.commands.compute_matched --output_dir=runs/compute_matched \\
        --corpus=../shared/data/corpus/nltk-gutenberg --glue_dir=../shared/data/glue

Every objective of `--objectives` (default ELECTRA against the BERT-style masked-LM baseline) pre-trains the same
preset for the SAME training FLOPs, counted by `electra_tf.flops.objective_pretraining_flops` (the reference's
accounting): the budget is `--electra_steps` steps of ELECTRA (or `--budget_flops`, or `--budget_minutes` of ELECTRA
pre-training by the time model below), and each objective gets round(budget / its FLOPs per step) steps, so MLM,
which has no generator, gets more steps than ELECTRA, as in the paper's compute-matched comparison. At each of
`--eval_fractions` of the budget every objective has a checkpoint (at the step whose cumulative FLOPs are nearest that
fraction, so the objectives agree within half a step), and each checkpoint's discriminator-sized network is fine-tuned
on every GLUE task of `--tasks` (a subset of `--train_examples` each) with the project's fine-tuning job, once per
seed of `--seeds`; a randomly initialised network (no pre-training, FLOPs 0) is fine-tuned too.

With `--electra_from_mlm_step=S` ELECTRA does not start from random weights: its discriminator starts from the
masked-LM run's network at step S (kept as `pretraining/mlm/kept-S`) beside a new generator, and those S masked-LM
steps count in its FLOPs and wall time; `--electra_steps` are then its steps after them, and the masked-LM run, trained
first, gets the whole budget. This is the two-phase recipe of docs/cpu_budget.md, for which a network has to read word
order before its discriminator can tell a generator's plausible replacements.

Held-out evaluation: the last `--heldout_files` corpus files by name (default 1: Gutenberg's whitman-leaves.txt) are
kept out of the vocabulary and the training data and become held-out TFRecords; every run evaluates its pre-training
objective on their first `--num_eval_steps` batches every `--eval_every_steps` steps (default: at each of its 25 log
points) and at its end, with the same masking every time (`electra_tf.training.evaluation`). The pre-training recipe's
other settings are flags too: `--mixed_precision`, `--warmup_steps` (absolute, instead of `--warmup_fraction`),
`--bias_correction` (on by default, as configs/tiny.flags). `--corpus` takes plain or gzip text; Wikipedia-style text
(a paragraph a line, a blank line between articles) wants `--document_mode=blank_line`.

Stages, each skipped when its output exists (a rerun with the same flags resumes; other flags are refused, while a
`PretrainingJob` field added since a run's `experiment_job.json` was written is unchanged at its default):

1. `data/`: a WordPiece vocabulary (`--vocab_size`) learned from the training files, their TFRecords (`tfrecords/`)
   and the held-out files' (`heldout_tfrecords/`), with `data_prep`'s builders (on the 10 MB Gutenberg corpus: ~70 s
   for the vocabulary, ~6 s for the TFRecords);
2. `pretraining/<objective>/`: a `PretrainingJob` per objective (metrics.jsonl, eval_metrics.jsonl, TensorBoard logs,
   checkpoints at the evaluation steps, `pretrained/`), and `pretraining/<objective>/discriminators/step-<n>/`: the
   discriminator of each intermediate checkpoint;
3. `glue/`: the task subsets; `finetune/<TASK>/<objective>/step-<n>/` and `finetune/<TASK>/random_init/`:
   `FinetuningJob` outputs;
4. `results.json` (settings, machine, the tasks and their headline metrics, the held-out set, per objective: steps,
   FLOPs, pre-training curve, held-out curve (`heldout_curve`: step, cumulative FLOPs, `wall_seconds` since the run's
   training started, the metrics), per-checkpoint scores per task and seed with median/mean/std, wall times),
   `results.md` (a table per task, the final held-out evaluation of each objective, command line, machine),
   `pretraining_curves.png` (every logged training metric against FLOPs), `heldout_curves.png` (held-out AUC,
   masked-LM accuracies and losses against FLOPs) and `downstream.png` (score against pre-training FLOPs, seed spread,
   a panel per task).

Defaults: the tiny preset, a budget of 2000 ELECTRA steps of 32 x 128 tokens (5.4e13 FLOPs with the 7818-piece
vocabulary learned from the 13 Gutenberg books left for training; MLM gets 3068 steps), held-out evaluation of 20
batches every 80 (ELECTRA) or 123 (MLM) steps, fine-tuning at 1/4, 1/2 and all of the budget, SST-2 with 2000
training examples (drawn with --seed), the whole dev set (872) and 3 fine-tuning seeds: 7 checkpoints x 3 seeds = 21
fine-tuning runs of 189 steps. The estimate printed at the start (32 min for the defaults: data 1.6, pre-training 17,
fine-tuning 13) comes from per-step times measured on the 2-core development machine: tiny ELECTRA 0.20-0.23
s/step, tiny MLM 0.15 s/step, fine-tuning 0.12-0.15 s/step (batch 32, length 128), plus ~15 s per job, with a
held-out batch counted as a third of a training step (a forward pass). A run with a budget of 300 ELECTRA steps, 2
evaluation points and 2 seeds (without held-out evaluation) took 9.7 min (estimate: 11.4) while other work loaded the
machine (load average 3 to 5), so the defaults stay well inside 45 minutes on a machine to themselves.

Sequence length 128 (the paper's): for this model a step at 64 tokens costs 0.155 s, three quarters of a 128-token
step for half the tokens (the work outside the encoder, e.g. the vocabulary-sized softmax, does not shrink with L),
and whole books are split into full-length examples (`--document_mode=file`), so 128 gives the most text per second.
"""

import dataclasses
import json
import os
import random
import time

from electra_studies.compute_matched.plan import (
    corpus_files,
    corpus_text_bytes,
    cumulative_flops,
    estimate_seconds,
    finetune_hyperparameters,
    objective_config,
    plan_runs,
    seed_groups,
    split_corpus,
    validate,
)
from electra_studies.compute_matched.report import BASELINE, RESULTS_MD, machine_info, write_outputs
from electra_studies.compute_matched.results import (
    primary_metric,
    read_metrics,
    summarize_scores,
    task_name,
    wall_seconds_at,
)
from electra_studies.compute_matched.settings_record import check_or_record_job
from electra_tf.config import ElectraConfig
from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_text
from electra_tf.training.resumption import check_or_write_settings


def prepare_data(settings, files, heldout):
    """(vocab path, TFRecord glob, held-out TFRecord glob or None) under <output_dir>/data, built once: the vocabulary
    and the training TFRecords from `files`, the held-out TFRecords from `heldout` with that vocabulary."""
    from data_prep import pipeline, wordpiece_vocab

    directory = os.path.join(settings.output_dir, "data")
    check_or_write_settings(
        os.path.join(directory, "settings.json"),
        {
            "corpus": [[os.path.abspath(path), os.path.getsize(path)] for path in files],
            "heldout": [[os.path.abspath(path), os.path.getsize(path)] for path in heldout],
            "vocab_size": None if settings.vocab_file else settings.vocab_size,
            "vocab_file": os.path.abspath(settings.vocab_file) if settings.vocab_file else None,
            "max_seq_length": settings.max_seq_length,
            "document_mode": settings.document_mode,
            "input_encoding": settings.input_encoding,
            "encoding_errors": settings.encoding_errors,
        },
        "data",
        "output_dir",
    )
    vocab = os.path.join(directory, "vocab.txt")
    if not os.path.exists(vocab):
        start = time.time()
        if settings.vocab_file:
            wordpiece_vocab.check_existing_vocab(settings.vocab_file)
            atomic_write_text(vocab, open(settings.vocab_file, encoding="utf-8").read())
        else:
            counts = wordpiece_vocab.count_words(
                ",".join(files),
                document_mode=settings.document_mode,
                encoding=settings.input_encoding,
                errors=settings.encoding_errors,
            )
            wordpiece_vocab.write_vocab(wordpiece_vocab.learn_vocab(counts, settings.vocab_size), vocab)
        print(f"vocabulary: {vocab} in {time.time() - start:.0f}s", flush=True)
    globs = []
    for name, sources in (("tfrecords", files), ("heldout_tfrecords", heldout)):
        records = os.path.join(directory, name)
        globs.append(os.path.join(records, "*.tfrecord*") if sources else None)
        if sources and not os.path.exists(os.path.join(records, "manifest.json")):
            start = time.time()
            manifest = pipeline.build_pretraining_data(
                ",".join(sources),
                vocab,
                records,
                max_seq_length=settings.max_seq_length,
                num_processes=os.cpu_count() or 1,
                document_mode=settings.document_mode,
                input_encoding=settings.input_encoding,
                encoding_errors=settings.encoding_errors,
                show_progress=False,
            )
            print(
                f"{name.replace('_', ' ')}: {manifest['num_examples']} examples of {settings.max_seq_length} tokens "
                f"from {len(sources)} files in {time.time() - start:.0f}s",
                flush=True,
            )
    return vocab, globs[0], globs[1]


def pretraining_job(settings, objective, run_plan, records, heldout_records, vocab):
    from electra_tf.training.pretraining_job import PretrainingJob

    kept_steps = {point["step"] for point in run_plan["eval_points"]} | set(run_plan.get("handover_steps", ()))
    starts_from = run_plan.get("starts_from")
    return PretrainingJob(
        pretrain_tfrecords=records,
        model_dir=_pretraining_dir(settings, objective),
        model_size=settings.model_size,
        vocab_file=vocab,
        max_seq_length=settings.max_seq_length,
        train_batch_size=settings.train_batch_size,
        learning_rate=settings.learning_rate,
        num_train_steps=run_plan["steps"],
        num_warmup_steps=run_plan["warmup_steps"],
        save_checkpoints_steps=0,
        checkpoint_steps=tuple(sorted(kept_steps)),
        keep_checkpoint_max=2,
        log_every_steps=run_plan["log_every_steps"],
        seed=settings.seed,
        bias_correction=settings.bias_correction,
        mixed_precision=settings.mixed_precision,
        progress_bar=False,
        model_overrides={"objective": objective},
        eval_tfrecords=heldout_records,
        eval_every_steps=run_plan["eval_every_steps"],
        num_eval_steps=settings.num_eval_steps,
        init_checkpoint=_kept_checkpoint(_pretraining_dir(settings, starts_from["objective"]), starts_from["step"])
        if starts_from
        else None,
    )


def _pretraining_dir(settings, objective):
    return os.path.join(settings.output_dir, "pretraining", objective)


def _kept_checkpoint(model_dir, step):
    from electra_tf.checkpoints.ours import kept_checkpoint  # imports TensorFlow: not for --help and errors

    return kept_checkpoint(model_dir, step)


def _final_step_done(model_dir, steps):
    import tensorflow as tf

    latest = tf.train.latest_checkpoint(model_dir)
    return (
        latest is not None
        and latest.endswith(f"ckpt-{steps}")
        and os.path.isfile(os.path.join(model_dir, "pretrained", "config.json"))
    )


def pretrain(settings, objective, run_plan, records, heldout_records, vocab):
    """Runs (or resumes, or skips) one objective's pre-training; returns {step: pretrained directory} and seconds."""
    import keras

    from electra_tf.training.pretraining_job import run

    job = pretraining_job(settings, objective, run_plan, records, heldout_records, vocab)
    check_or_record_job(job)
    start = time.time()
    if _final_step_done(job.model_dir, job.num_train_steps):
        print(f"{objective}: pre-training already done ({job.model_dir})", flush=True)
    else:
        print(
            f"{objective}: pre-training {job.num_train_steps} steps ({run_plan['flops_per_step']:.3g} FLOPs each)",
            flush=True,
        )
        try:
            run(job)
        finally:
            # The job sets the global dtype policy; the exports and fine-tuning that follow run in float32.
            keras.mixed_precision.set_global_policy("float32")
    directories = export_checkpoints(job, run_plan, vocab)
    return directories, time.time() - start


def export_checkpoints(job, run_plan, vocab):
    """{step: model directory (save_checkpoint)} for every evaluation step: the run's `pretrained/` for its last step,
    the discriminator-sized network restored from the run's `kept-<step>` for the others."""
    from electra_tf.training.pretraining_job import CONFIG_FILE, PRETRAINED_DIR

    directories, model = {}, None
    for step in sorted({point["step"] for point in run_plan["eval_points"]}):
        if step == job.num_train_steps:
            directories[step] = os.path.join(job.model_dir, PRETRAINED_DIR)
            continue
        # Not under eval/: that is the held-out evaluation's TensorBoard directory.
        target = os.path.join(job.model_dir, "discriminators", f"step-{step}")
        directories[step] = target
        if os.path.isfile(os.path.join(target, "config.json")):
            continue
        import tensorflow as tf

        from electra_tf.models import save_checkpoint
        from electra_tf.training.pretrainer import ElectraPretrainer

        checkpoint = _kept_checkpoint(job.model_dir, step)
        if not os.path.exists(checkpoint + ".index"):
            raise DataError(
                f"{checkpoint} is missing: the pre-training run did not save its evaluation step {step}; "
                f"remove {job.model_dir} and run again"
            )
        if model is None:
            config = ElectraConfig.load(os.path.join(job.model_dir, CONFIG_FILE))
            model = ElectraPretrainer(config, max_seq_length=job.max_seq_length)
        tf.train.Checkpoint(model=model).restore(checkpoint).expect_partial().assert_existing_objects_matched()
        save_checkpoint(model.pretrained_discriminator(), target, vocab_file=vocab)
    if model is not None:
        import keras

        keras.backend.clear_session(free_memory=False)
    return directories


def random_init_checkpoint(settings, vocab):
    """A model directory (save_checkpoint) of a randomly initialised discriminator (the FLOPs-0 baseline)."""
    target = _pretraining_dir(settings, BASELINE)
    if not os.path.isfile(os.path.join(target, "config.json")):
        import keras

        from electra_tf.models import build_discriminator, save_checkpoint
        from electra_tf.training.pretraining_job import PretrainingJob

        config = PretrainingJob(
            pretrain_tfrecords="-", model_dir="-", model_size=settings.model_size, vocab_file=vocab
        ).model_config()
        keras.utils.set_random_seed(settings.seed)
        save_checkpoint(build_discriminator(config), target, vocab_file=vocab)
        keras.backend.clear_session(free_memory=False)
    return target


def task_subset(settings, task):
    """<output_dir>/glue/<subset>/<TASK>/ with `--train_examples` train rows and `--eval_examples` rows of each dev
    split, drawn with --seed (header rows kept, order preserved); returns (glue dir, number of train examples)."""
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import glue_task_spec

    spec = glue_task_spec(task)
    directory = os.path.join(
        settings.output_dir, "glue", f"train{settings.train_examples}-eval{settings.eval_examples}-seed{settings.seed}"
    )
    counts = {}
    for split, size in [("train", settings.train_examples)] + [
        (name, settings.eval_examples) for name in spec.dev_splits
    ]:
        source, target = task_file(settings.glue_dir, spec, split), task_file(directory, spec, split)
        with open(source, "rb") as handle:
            lines = handle.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        header = lines[:1] if spec.splits[spec.resolve_split(split)].layout.has_header else []
        rows = lines[len(header) :]
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


def finetune(settings, task, label, checkpoint, glue_dir):
    """Fine-tunes `checkpoint` on `task` once per seed (one FinetuningJob per run of consecutive seeds), reusing
    finished jobs; returns ({seed: {score key: {metric: value}}}, seconds)."""
    from finetune.runner import RESULTS_FILE, FinetuningJob, run

    start, scores = time.time(), {}
    hyper = finetune_hyperparameters(settings, task)
    for first, count in seed_groups(settings.seeds):
        job = FinetuningJob(
            task=task,
            init_checkpoint=checkpoint,
            data_dir=glue_dir,
            model_size=settings.model_size,
            output_dir=os.path.join(
                settings.output_dir, "finetune", task_name(task), label, f"seeds-{first}-{first + count - 1}"
            ),
            num_trials=count,
            seed=first,
            learning_rate=hyper.learning_rate,
            num_train_epochs=hyper.num_train_epochs,
            train_batch_size=hyper.train_batch_size,
            max_seq_length=hyper.max_seq_length,
            progress_bar=False,
        )
        path = os.path.join(job.output_dir, RESULTS_FILE)
        results = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                results = json.load(handle)
            if results.get("job") != json.loads(json.dumps(job.as_record())) or len(results.get("trials", [])) != count:
                results = None
        if results is None:
            print(f"fine-tuning {label} on {task_name(task)}, seeds {first}..{first + count - 1}", flush=True)
            results = run(job)
        for trial in results["trials"]:
            scores[trial["seed"]] = trial["metrics"]
    return scores, time.time() - start


# ====================================================================== the experiment
def run_experiment(settings, command=""):
    """Runs every stage (skipping finished ones) and returns the results dict written to results.json."""
    started = time.time()
    validate(settings)
    files, heldout = split_corpus(corpus_files(settings.corpus), settings.heldout_files)
    corpus_bytes = (corpus_text_bytes(files), corpus_text_bytes(heldout))
    nominal = {name: objective_config(settings, name, settings.vocab_size) for name in settings.objectives}
    glue_counts = {task: _train_count(settings, task) for task in settings.tasks}
    if settings.dry_run:
        plan = plan_runs(settings, nominal)
        _print_plan(settings, plan, estimate_seconds(settings, plan, nominal, corpus_bytes, glue_counts), heldout)
        return None
    os.makedirs(settings.output_dir, exist_ok=True)
    stage_start = time.time()
    vocab, records, heldout_records = prepare_data(settings, files, heldout)
    data_seconds = time.time() - stage_start
    from electra_tf.training.pretraining_job import PretrainingJob

    configs = {}
    for name in settings.objectives:
        configs[name] = PretrainingJob(
            pretrain_tfrecords=records,
            model_dir="-",
            model_size=settings.model_size,
            vocab_file=vocab,
            model_overrides={"objective": name},
        ).model_config()
    plan = plan_runs(settings, configs)
    estimate = estimate_seconds(settings, plan, configs, corpus_bytes, glue_counts, data_ready=True)
    estimate["data"] = data_seconds
    estimate["total"] += data_seconds
    _print_plan(settings, plan, estimate, heldout)
    glue_dirs, tasks = {}, {}
    for task in settings.tasks:
        glue_dirs[task], num_train = task_subset(settings, task)
        tasks[task_name(task)] = {"primary_metric": list(primary_metric(task)), "num_train_examples": num_train}
    results = {
        "settings": dataclasses.asdict(settings),
        "command": command,
        "machine": machine_info(),
        "budget_flops": plan["budget_flops"],
        "budget_source": plan["budget_source"],
        "electra_step_flops": plan["electra_step_flops"],
        "tasks": tasks,
        "vocab_file": vocab,
        "vocab_size": next(iter(configs.values())).vocab_size,
        "heldout": _heldout_summary(settings, heldout, heldout_records),
        "estimated_seconds": estimate,
        "objectives": {name: dict(run) for name, run in plan["objectives"].items()},
        "wall_seconds": {"data": data_seconds},
    }

    def save():
        results["wall_seconds"]["total"] = time.time() - started
        write_outputs(results, settings.output_dir)

    def finetune_all(label, checkpoint, record):
        """Fine-tunes `checkpoint` on every task into `record`'s downstream (headline summary per task) and
        all_metrics (per task, per seed)."""
        record.update(downstream={}, all_metrics={}, finetuning_seconds=0.0)
        for task in settings.tasks:
            per_seed, seconds = finetune(settings, task, label, checkpoint, glue_dirs[task])
            record["downstream"][task_name(task)] = summarize_scores(per_seed, *primary_metric(task))
            record["all_metrics"][task_name(task)] = per_seed
            record["finetuning_seconds"] += seconds

    checkpoints = {}
    # An ELECTRA started from the masked-LM run needs that run's checkpoint first.
    for name in sorted(settings.objectives, key=lambda name: "starts_from" in results["objectives"][name]):
        run_plan = results["objectives"][name]
        checkpoints[name], seconds = pretrain(settings, name, run_plan, records, heldout_records, vocab)
        run_plan["pretraining_seconds"] = seconds
        model_dir = _pretraining_dir(settings, name)
        cumulative = cumulative_flops(settings, configs, name)
        # Its wall time counts the masked-LM run's up to the step it started from.
        start = run_plan.get("starts_from")
        offset = (
            wall_seconds_at(results["objectives"][start["objective"]]["pretraining_curve"], start["step"])
            if start
            else 0.0
        )
        run_plan["pretraining_curve"] = read_metrics(model_dir, cumulative, wall_offset=offset)
        run_plan["heldout_curve"] = read_metrics(model_dir, cumulative, heldout=True, wall_offset=offset)
        for point in run_plan["eval_points"]:
            point["checkpoint"] = checkpoints[name][point["step"]]
        save()
    if settings.random_init_baseline:
        checkpoint = random_init_checkpoint(settings, vocab)
        results["baseline"] = {"name": BASELINE, "flops": 0, "checkpoint": checkpoint}
        finetune_all(BASELINE, checkpoint, results["baseline"])
        save()
    for name in settings.objectives:
        run_plan = results["objectives"][name]
        run_plan["finetuning_seconds"] = 0.0
        for point in run_plan["eval_points"]:
            finetune_all(os.path.join(name, f"step-{point['step']}"), point["checkpoint"], point)
            run_plan["finetuning_seconds"] += point["finetuning_seconds"]
            save()
    if hasattr(os, "getloadavg"):
        results["machine"]["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    save()
    print(
        f"wrote {os.path.join(settings.output_dir, RESULTS_MD)} in {(time.time() - started) / 60:.1f} min", flush=True
    )
    return results


def _heldout_summary(settings, heldout, records):
    """results.json's description of the held-out set (None without one)."""
    if not records:
        return None
    with open(os.path.join(os.path.dirname(records), "manifest.json"), encoding="utf-8") as handle:
        num_examples = json.load(handle)["num_examples"]
    return {
        "files": [os.path.abspath(path) for path in heldout],
        "tfrecords": records,
        "num_examples": num_examples,
        "num_eval_steps": settings.num_eval_steps,
        "eval_batch_size": settings.train_batch_size,
    }


def _train_count(settings, task):
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import glue_task_spec

    spec = glue_task_spec(task)
    path = task_file(settings.glue_dir, spec, "train")
    with open(path, "rb") as handle:
        rows = sum(1 for line in handle if line.strip()) - (1 if spec.splits["train"].layout.has_header else 0)
    return min(rows, settings.train_examples) if settings.train_examples else rows


def _print_plan(settings, plan, estimate, heldout):
    print(
        f"budget: {plan['budget_flops']:.4g} FLOPs ({plan['budget_source']}, {plan['electra_step_flops']:.4g} "
        f"FLOPs per ELECTRA step at {settings.train_batch_size} x {settings.max_seq_length})",
        flush=True,
    )
    for name, run in plan["objectives"].items():
        points = ", ".join(f"{p['fraction']:g}: step {p['step']}" for p in run["eval_points"])
        start = run.get("starts_from")
        after = f"{start['objective']}'s {start['step']} steps ({start['flops']:.4g} FLOPs) + " if start else ""
        print(
            f"  {name}: {after}{run['steps']} steps x {run['flops_per_step']:.4g} FLOPs = {run['total_flops']:.4g} "
            f"(warm-up {run['warmup_steps']} steps; fine-tuned at {points})",
            flush=True,
        )
    if heldout:
        every = ", ".join(f"{name} every {run['eval_every_steps']}" for name, run in plan["objectives"].items())
        print(
            f"held-out evaluation: {settings.num_eval_steps} batches of {', '.join(map(os.path.basename, heldout))} "
            f"({every} steps and at the end)",
            flush=True,
        )
    print(
        f"estimated time: {estimate['total'] / 60:.0f} min (data {estimate['data'] / 60:.1f}, pre-training "
        f"{estimate['pretraining'] / 60:.1f}, fine-tuning {estimate['finetuning'] / 60:.1f}; measured per-step "
        "times of a 2-core CPU with nothing else running, stages already done are skipped)",
        flush=True,
    )
