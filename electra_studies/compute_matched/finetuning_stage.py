"""The experiment's fine-tuning stage: the GLUE subsets under <output_dir>/glue/ and a `FinetuningJob` per checkpoint,
task and run of seeds under <output_dir>/finetune/, finished jobs reused."""

import os
import random

from electra_studies.compute_matched.plan import finetune_hyperparameters, seed_groups
from electra_studies.compute_matched.results import known_sum, task_name


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


def output_dirs(settings, task, label):
    """The fine-tuning output directories of network `label` on `task`: <output_dir>/finetune/<TASK>/<label>/
    seeds-<first>-<last>, one per run of consecutive seeds (`plan.seed_groups`), in that order."""
    return [
        os.path.join(settings.output_dir, "finetune", task_name(task), label, f"seeds-{first}-{first + count - 1}")
        for first, count in seed_groups(settings.seeds)
    ]


def finetune(settings, task, label, checkpoint, glue_dir):
    """Fine-tunes `checkpoint` on `task` once per seed (one FinetuningJob per run of consecutive seeds), reusing
    finished jobs (`finetune.runner.finished_results`); returns ({seed: {score key: {metric: value}}}, the wall
    seconds the trials recorded: also those of reused jobs, None if one lacks them)."""
    from finetune.finetuning_spec import FinetuningJob
    from finetune.runner import finished_results, run

    scores, seconds = {}, []
    hyper = finetune_hyperparameters(settings, task)
    for (first, count), output_dir in zip(seed_groups(settings.seeds), output_dirs(settings, task, label)):
        job = FinetuningJob(
            task=task,
            init_checkpoint=checkpoint,
            data_dir=glue_dir,
            model_size=settings.model_size,
            output_dir=output_dir,
            num_trials=count,
            seed=first,
            learning_rate=hyper.learning_rate,
            num_train_epochs=hyper.num_train_epochs,
            train_batch_size=hyper.train_batch_size,
            max_seq_length=hyper.max_seq_length,
            progress_bar=False,
        )
        results = finished_results(job)
        if results is None:
            print(f"fine-tuning {label} on {task_name(task)}, seeds {first}..{first + count - 1}", flush=True)
            results = run(job)
        for trial in results["trials"]:
            scores[trial["seed"]] = trial["metrics"]
            seconds.append(trial.get("seconds"))
    return scores, known_sum(seconds)


def downstream_comparison(settings, labels, glue_dirs):
    """`finetune.glue.comparison.compare` of the fine-tuned networks `labels` ({name: fine-tuning label}, the first
    the reference) on the experiment's tasks (their subsets in `glue_dirs`): each task's median over the seeds and the
    differences from the reference with paired bootstrap intervals (seeded with --seed), NaNs as None."""
    from electra_tf.io_utils import json_safe
    from finetune.glue.comparison import compare

    (glue_dir,) = set(glue_dirs.values())  # `task_subset` writes every task's subset into one directory
    runs = {
        name: {task_name(task): output_dirs(settings, task, label) for task in settings.tasks}
        for name, label in labels.items()
    }
    return json_safe(compare(glue_dir, runs, settings.tasks, seed=settings.seed))


def train_count(settings, task):
    from finetune.glue.readers import task_file
    from finetune.glue.tasks import glue_task_spec

    spec = glue_task_spec(task)
    path = task_file(settings.glue_dir, spec, "train")
    with open(path, "rb") as handle:
        rows = sum(1 for line in handle if line.strip()) - (1 if spec.splits["train"].layout.has_header else 0)
    return min(rows, settings.train_examples) if settings.train_examples else rows


def mean_train_words(settings, task, sample=2000):
    """Words (whitespace-separated, both texts of a pair) per example of the first `sample` examples of the task's
    train split: what the time model sizes a fine-tuning batch from."""
    from finetune.glue.readers import read_examples

    examples = read_examples(settings.glue_dir, task, "train")[:sample]
    words = sum(len(example.text_a.split()) + len((example.text_b or "").split()) for example in examples)
    return words / max(1, len(examples))
