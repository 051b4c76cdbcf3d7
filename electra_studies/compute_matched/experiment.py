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
   checkpoints at every log point, from which an interrupted run resumes, kept ones at the evaluation steps,
   `pretrained/`), and `pretraining/<objective>/discriminators/step-<n>/`: the
   discriminator of each intermediate checkpoint;
3. `glue/`: the task subsets; `finetune/<TASK>/<objective>/step-<n>/` and `finetune/<TASK>/random_init/`:
   `FinetuningJob` outputs;
4. `results.json` (settings, machine, the tasks and their headline metrics, the held-out set, per objective: steps,
   FLOPs, pre-training curve, held-out curve (`heldout_curve`: step, cumulative FLOPs, `wall_seconds` since the run's
   training started, the metrics), per-checkpoint scores per task and seed with median/mean/std, wall times:
   `pretraining_seconds` from the run's training logs, so with the masked-LM run's time up to the step an ELECTRA
   started from and with any pause between resumed runs, `finetuning_seconds` the sum its trials recorded),
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
import time

from electra_studies.compute_matched.data_stage import prepare_data
from electra_studies.compute_matched.finetuning_stage import (
    downstream_comparison,
    finetune,
    mean_train_words,
    task_subset,
    train_count,
)
from electra_studies.compute_matched.plan import cumulative_flops, estimate_seconds, objective_config, plan_runs
from electra_studies.compute_matched.pretraining_stage import pretrain, pretraining_dir, random_init_checkpoint
from electra_studies.compute_matched.report import BASELINE, RESULTS_MD, machine_info, write_outputs
from electra_studies.compute_matched.results import (
    known_sum,
    primary_metric,
    read_metrics,
    summarize_scores,
    task_name,
    wall_seconds_at,
)
from electra_studies.compute_matched.settings import corpus_files, corpus_text_bytes, split_corpus, validate


def run_experiment(settings, command=""):
    """Runs every stage (skipping finished ones) and returns the results dict written to results.json."""
    started = time.time()
    validate(settings)
    files, heldout = split_corpus(corpus_files(settings.corpus), settings.heldout_files)
    corpus_bytes = (corpus_text_bytes(files), corpus_text_bytes(heldout))
    nominal = {name: objective_config(settings, name, settings.vocab_size) for name in settings.objectives}
    glue_counts = {task: train_count(settings, task) for task in settings.tasks}
    glue_words = {task: mean_train_words(settings, task) for task in settings.tasks}
    if settings.dry_run:
        plan = plan_runs(settings, nominal)
        estimate = estimate_seconds(settings, plan, nominal, corpus_bytes, glue_counts, glue_words)
        _print_plan(settings, plan, estimate, heldout)
        return None
    os.makedirs(settings.output_dir, exist_ok=True)
    stage_start = time.time()
    vocab, records, heldout_records = prepare_data(settings, files, heldout)
    data_seconds = time.time() - stage_start
    from electra_tf.training.pretraining_spec import PretrainingJob

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
    estimate = estimate_seconds(settings, plan, configs, corpus_bytes, glue_counts, glue_words, data_ready=True)
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
        record.update(downstream={}, all_metrics={})
        seconds = []
        for task in settings.tasks:
            per_seed, task_seconds = finetune(settings, task, label, checkpoint, glue_dirs[task])
            record["downstream"][task_name(task)] = summarize_scores(per_seed, *primary_metric(task))
            record["all_metrics"][task_name(task)] = per_seed
            seconds.append(task_seconds)
        record["finetuning_seconds"] = known_sum(seconds)

    checkpoints = {}
    # An ELECTRA started from the masked-LM run needs that run's checkpoint first.
    for name in sorted(settings.objectives, key=lambda name: "starts_from" in results["objectives"][name]):
        run_plan = results["objectives"][name]
        checkpoints[name], seconds = pretrain(settings, name, run_plan, records, heldout_records, vocab)
        model_dir = pretraining_dir(settings, name)
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
        # From the run's logs, so that a run finished by an earlier invocation keeps its time.
        run_plan["pretraining_seconds"] = max(
            (entry["wall_seconds"] for entry in run_plan["pretraining_curve"] if "wall_seconds" in entry),
            default=seconds + offset,
        )
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
        for point in run_plan["eval_points"]:
            finetune_all(os.path.join(name, f"step-{point['step']}"), point["checkpoint"], point)
            save()
        run_plan["finetuning_seconds"] = known_sum([point["finetuning_seconds"] for point in run_plan["eval_points"]])
    # The paper's comparison with intervals: each objective at its last evaluation point (the whole budget unless
    # --eval_fractions says otherwise; the first objective is the reference), and random initialisation.
    labels = {
        name: os.path.join(name, f"step-{results['objectives'][name]['eval_points'][-1]['step']}")
        for name in settings.objectives
    }
    if settings.random_init_baseline:
        labels[BASELINE] = BASELINE
    if len(labels) > 1:
        results["comparison"] = downstream_comparison(settings, labels, glue_dirs)
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
