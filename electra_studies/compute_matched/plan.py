"""The compute-matched experiment's plan: the budget, each objective's steps and evaluation points, the FLOPs behind
them, and the time model that estimates the wall time."""

import dataclasses
import math

from electra_tf import flops as flops_lib
from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError

LOG_POINTS = 25  # metrics.jsonl entries per pre-training run (plus step 1)

# Measured on the 2-core development machine (tiny preset, vocabulary ~7.8k, batch 32, length 128): a step takes
# about STEP_OVERHEAD_SECONDS + FLOPs / FLOPS_PER_SECOND (ELECTRA 2.7e10 FLOPs, 0.20 s; MLM 1.75e10, 0.15 s;
# fine-tuning 1.0e10, 0.12 s), plus fixed costs per job (graph building, data loading, evaluation).
FLOPS_PER_SECOND = 1.7e11
# mixed_bfloat16 pre-training runs its FLOPs this much faster: the CPU recipe's two phases (docs/cpu_budget.md sections
# 6-7, `cpu` preset, 2-core AMD EPYC with AVX512_BF16) took 0.67 s a masked-LM step and 0.94 s an ELECTRA step,
# evaluations included, where the float32 model above gives 1.02 s and 1.48 s (1.52x and 1.57x).
PRECISION_SPEEDUP = {"float32": 1.0, "mixed_bfloat16": 1.5}
STEP_OVERHEAD_SECONDS = 0.05
PRETRAINING_JOB_SECONDS = 15.0
EXPORT_SECONDS = 4.0
FINETUNING_JOB_SECONDS = 12.0
FINETUNING_TRIAL_SECONDS = 6.0
# A fine-tuning batch's width (pieces): its examples are batched by length, so a batch is about as wide as its
# examples (SST-2: 13.3 pieces an example, batches 14.2 wide on average, docs/PERFORMANCE.md), and an example is its
# words in WordPiece pieces (1.27-1.43 a word on the five GLUE tasks with training sets, with a 16k vocabulary learned
# from Wikipedia) plus [CLS] and one [SEP] per text.
PIECES_PER_WORD = 1.35
BATCH_WIDTH_OVER_MEAN_LENGTH = 1.07
VOCAB_SECONDS_PER_MB = 8.0
TFRECORD_SECONDS_PER_MB = 1.0
# A held-out evaluation batch is a forward pass: a third of a training step's FLOPs (the reference's accounting).
EVAL_STEP_FLOPS_FRACTION = 1 / 3


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


def log_every_steps(steps):
    return max(1, int(round(steps / LOG_POINTS)))


def eval_every_steps(settings, steps):
    """Held-out evaluation interval of a run of `steps` (0: no held-out evaluation): `eval_every_steps`, or the run's
    log interval."""
    if not settings.heldout_files:
        return 0
    return settings.eval_every_steps or log_every_steps(steps)


def handover_flops(settings, configs):
    """The FLOPs of the masked-LM steps ELECTRA starts from (`electra_from_mlm_step`; 0 without)."""
    if not settings.electra_from_mlm_step:
        return 0.0
    return flops_lib.objective_pretraining_flops(
        configs["mlm"], settings.max_seq_length, settings.train_batch_size, settings.electra_from_mlm_step
    )


def cumulative_flops(settings, configs, objective):
    """steps -> the pre-training FLOPs of `objective`'s run after that many of its steps, counting the masked-LM steps
    an ELECTRA started from the masked-LM run has behind it."""
    offset = handover_flops(settings, configs) if objective == "electra" else 0.0
    return flops_after(configs[objective], settings.max_seq_length, settings.train_batch_size, offset)


def flops_after(config, max_seq_length, batch_size, first_flops=0.0):
    """steps -> `first_flops` plus the pre-training FLOPs of that many steps of `config`'s objective."""
    return lambda steps: first_flops + flops_lib.objective_pretraining_flops(config, max_seq_length, batch_size, steps)


def plan_runs(settings, configs):
    """{objective: run plan} for the FLOP budget: steps, warm-up, log and held-out evaluation intervals, FLOPs per step
    and the evaluation points (fraction, step, cumulative FLOPs); with `electra_from_mlm_step`, ELECTRA's
    `starts_from` (objective, step, FLOPs) and the masked-LM run's `handover_steps`. ConfigError when the budget gives
    some objective no step at some evaluation point, or fewer steps than `warmup_steps`."""
    length, batch = settings.max_seq_length, settings.train_batch_size
    electra = dataclasses.replace(configs[settings.objectives[0]], objective="electra")
    electra_step_flops = flops_lib.objective_pretraining_flops(electra, length, batch)
    start_flops, start_step = handover_flops(settings, configs), settings.electra_from_mlm_step
    after = f" after {start_step} masked-LM steps" if start_step else ""
    if settings.budget_flops:
        budget, budget_argument = float(settings.budget_flops), "budget_flops"
        budget_setting = f"budget_flops={settings.budget_flops:g}"
    elif settings.budget_minutes:
        steps = steps_for_minutes(settings, electra_step_flops, configs)
        budget, budget_argument = start_flops + steps * electra_step_flops, "budget_minutes"
        budget_setting = (
            f"budget_minutes={settings.budget_minutes:g}: {steps} ELECTRA steps{after} by the time model of "
            f"a step, {_step_seconds(electra_step_flops, settings.mixed_precision):.3g} s"
        )
    else:
        budget, budget_argument = start_flops + settings.electra_steps * electra_step_flops, "electra_steps"
        budget_setting = f"electra_steps={settings.electra_steps}{after}"
    fractions = sorted(set(settings.eval_fractions))
    plans = {}
    for objective in settings.objectives:
        cumulative = cumulative_flops(settings, configs, objective)
        starts_from = start_step and objective == "electra"
        points = []
        for fraction in fractions:
            step = steps_for_flops(cumulative, fraction * budget)
            if step < 1:
                behind = f"; the masked-LM steps it starts from take {start_flops:.3g}" if starts_from else ""
                raise ConfigError(
                    f"the budget ({budget_setting}: {budget:.3g} FLOPs) gives objective {objective!r} no "
                    f"step at evaluation fraction {fraction:g} (one step costs "
                    f"{cumulative(1) - cumulative(0):.3g} FLOPs{behind}); raise the budget or the smallest "
                    "eval_fractions",
                    arguments=(budget_argument, "eval_fractions"),
                )
            points.append({"fraction": fraction, "step": step, "flops": cumulative(step)})
        steps = points[-1]["step"] if fractions[-1] == 1.0 else steps_for_flops(cumulative, budget)
        if settings.warmup_steps is not None and settings.warmup_steps > steps:
            raise ConfigError(
                f"warmup_steps={settings.warmup_steps} is more than objective {objective!r}'s "
                f"{steps} steps; lower it, or raise the budget",
                arguments=("warmup_steps",),
            )
        plans[objective] = {
            "steps": steps,
            "warmup_steps": (
                settings.warmup_steps
                if settings.warmup_steps is not None
                else int(round(settings.warmup_fraction * steps))
            ),
            "log_every_steps": log_every_steps(steps),
            "eval_every_steps": eval_every_steps(settings, steps),
            "flops_per_step": cumulative(1) - cumulative(0),
            "total_flops": cumulative(steps),
            "eval_points": points,
        }
        if starts_from:
            plans[objective]["starts_from"] = {"objective": "mlm", "step": start_step, "flops": start_flops}
    if start_step:  # within the masked-LM run: the budget gave ELECTRA steps after it
        plans["mlm"]["handover_steps"] = [start_step]
    return {
        "budget_flops": budget,
        # How the budget was set, as the experiment's command line gives it (printed, and in results.md).
        "budget_source": f"--{budget_setting}",
        "electra_step_flops": electra_step_flops,
        "objectives": plans,
    }


def steps_for_minutes(settings, electra_step_flops, configs):
    """The ELECTRA step count whose estimated pre-training time (`pretraining_seconds`, after the masked-LM run's
    steps to `electra_from_mlm_step` when ELECTRA starts from there) is nearest `budget_minutes`."""
    start_step, start_seconds = settings.electra_from_mlm_step, 0.0
    if start_step:
        start_seconds = pretraining_seconds(settings, start_step, cumulative_flops(settings, configs, "mlm")(1))
    steps = steps_for_flops(
        lambda n: start_seconds + pretraining_seconds(settings, n, electra_step_flops), 60 * settings.budget_minutes
    )
    if steps < 1:
        raise ConfigError(
            f"budget_minutes={settings.budget_minutes:g} leaves no time for a pre-training step "
            f"(starting a run alone takes about {PRETRAINING_JOB_SECONDS:.0f} s); raise it",
            arguments=("budget_minutes",),
        )
    return steps


def finetune_hyperparameters(settings, task):
    from finetune.registry import reference_hyperparameters

    return reference_hyperparameters(
        task,
        settings.model_size,
        learning_rate=settings.finetune_learning_rate,
        num_train_epochs=settings.finetune_epochs,
        max_seq_length=settings.finetune_max_seq_length,
        train_batch_size=settings.finetune_batch_size,
    )


def _step_seconds(step_flops, precision="float32"):
    return STEP_OVERHEAD_SECONDS + step_flops / (FLOPS_PER_SECOND * PRECISION_SPEEDUP[precision])


def pretraining_seconds(settings, steps, flops_per_step):
    """Estimated wall time of a pre-training run of `steps`: starting the job, the steps, and the held-out evaluations
    (every `eval_every_steps` and at the end, `num_eval_steps` forward batches each)."""
    precision = settings.mixed_precision
    seconds = PRETRAINING_JOB_SECONDS + steps * _step_seconds(flops_per_step, precision)
    every = eval_every_steps(settings, steps)
    if every:
        evaluations = math.ceil(steps / every)
        eval_step = _step_seconds(EVAL_STEP_FLOPS_FRACTION * flops_per_step, precision)
        seconds += evaluations * settings.num_eval_steps * eval_step
    return seconds


def finetuning_width(task, mean_words, max_seq_length):
    """The mean width of `task`'s fine-tuning batches for examples of `mean_words` words, at most `max_seq_length`."""
    from finetune.glue.tasks import glue_task_spec

    specials = 3 if glue_task_spec(task).is_pair_task else 2
    length = specials + PIECES_PER_WORD * mean_words
    return min(max_seq_length, math.ceil(BATCH_WIDTH_OVER_MEAN_LENGTH * length))


def estimate_seconds(settings, plan, configs, corpus_bytes, num_train_examples, train_words, data_ready=False):
    """Estimated wall time per stage (seconds) on the development machine's 2 idle cores; `corpus_bytes` is (training,
    held-out) text bytes, `num_train_examples` {task: fine-tuning examples}, `train_words` {task: words per
    example}."""
    from finetune.glue.tasks import glue_task_spec

    train_megabytes, heldout_megabytes = (size / 1e6 for size in corpus_bytes)
    data = (
        0.0
        if data_ready
        else (0 if settings.vocab_file else VOCAB_SECONDS_PER_MB * train_megabytes)
        + (5 + TFRECORD_SECONDS_PER_MB * train_megabytes)
        + ((5 + TFRECORD_SECONDS_PER_MB * heldout_megabytes) if settings.heldout_files else 0)
    )
    pretraining = sum(
        pretraining_seconds(settings, run["steps"], run["flops_per_step"])
        + EXPORT_SECONDS * (len(run["eval_points"]) - 1)
        for run in plan["objectives"].values()
    )
    config = next(iter(configs.values()))
    checkpoints = sum(len({p["step"] for p in run["eval_points"]}) for run in plan["objectives"].values())
    checkpoints += 1 if settings.random_init_baseline else 0
    groups = len(seed_groups(settings.seeds))
    finetuning = 0.0
    for task, examples in num_train_examples.items():
        hyper = finetune_hyperparameters(settings, task)
        examples *= 2 if glue_task_spec(task).swap_augment else 1
        steps = hyper.num_train_epochs * math.ceil(examples / hyper.train_batch_size)
        width = finetuning_width(task, train_words[task], hyper.max_seq_length)
        ft_step_flops = 2 * hyper.train_batch_size * flops_lib.inference_flops(config, width)
        trial = FINETUNING_TRIAL_SECONDS + steps * _step_seconds(ft_step_flops)
        finetuning += checkpoints * (groups * FINETUNING_JOB_SECONDS + len(settings.seeds) * trial)
    return {
        "data": data,
        "pretraining": pretraining,
        "finetuning": finetuning,
        "total": data + pretraining + finetuning,
    }


def seed_groups(seeds):
    """Runs of consecutive seeds [(first, count)]: one FinetuningJob (seed, seed + 1, ...) per run."""
    groups = []
    for seed in seeds:
        if groups and seed == groups[-1][0] + groups[-1][1]:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((seed, 1))
    return groups
