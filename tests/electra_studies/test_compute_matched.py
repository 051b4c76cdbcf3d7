"""electra_studies/compute_matched: planning, the table and plots on a synthetic results dict, and the whole
experiment end to end on synthetic gzip text (ELECTRA against MLM, held-out evaluation, fine-tuning at two points and
from random initialisation)."""

import dataclasses
import gzip
import json
import math
import os
import pathlib
import re

import pytest

from electra_studies.compute_matched import experiment as cm
from electra_studies.compute_matched import finetuning_stage, pretraining_stage, report, settings_record
from electra_studies.compute_matched import plan as planning
from electra_studies.compute_matched import settings as experiment_settings
from electra_tf import flops as flops_lib
from electra_tf.errors import ConfigError, DataError
from tests.console_commands import run_command

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _assert_png(path):
    import matplotlib.image

    with open(path, "rb") as handle:
        assert handle.read(8) == PNG_SIGNATURE, path
    image = matplotlib.image.imread(path)
    assert image.shape[0] > 100 and image.shape[1] > 100


# ---------------------------------------------------------------------- planning
def test_steps_for_flops_picks_the_nearest_step():
    assert planning.steps_for_flops(lambda n: 10 * n, 0) == 0
    assert planning.steps_for_flops(lambda n: 10 * n, 4) == 0
    assert planning.steps_for_flops(lambda n: 10 * n, 5) == 1
    assert planning.steps_for_flops(lambda n: 10 * n, 1234) == 123
    assert planning.steps_for_flops(lambda n: 10 * n, 1236) == 124
    # Non-linear (two-stage) cumulative counts too.
    assert planning.steps_for_flops(lambda n: n * n, 50) == 7


def test_seed_groups():
    assert planning.seed_groups([0, 1, 2]) == [(0, 3)]
    assert planning.seed_groups([3, 0, 1, 7]) == [(3, 1), (0, 2), (7, 1)]


def _settings(tmp_path, **overrides):
    values = dict(output_dir=str(tmp_path / "out"), corpus="unused", glue_dir="unused")
    values.update(overrides)
    return experiment_settings.Settings(**values)


def _configs(settings):
    return {name: planning.objective_config(settings, name, 8000) for name in settings.objectives}


def test_plan_matches_flops_and_gives_mlm_more_steps(tmp_path):
    settings = _settings(
        tmp_path,
        objectives=["electra", "mlm", "replace_mlm", "all_tokens_mlm"],
        electra_steps=1000,
        eval_fractions=[0.25, 0.5, 1.0],
    )
    plan = planning.plan_runs(settings, _configs(settings))
    runs = plan["objectives"]
    assert runs["electra"]["steps"] == 1000
    assert plan["budget_flops"] == pytest.approx(1000 * runs["electra"]["flops_per_step"])
    assert runs["mlm"]["steps"] > runs["electra"]["steps"] > runs["all_tokens_mlm"]["steps"]
    for run in runs.values():
        assert [point["fraction"] for point in run["eval_points"]] == [0.25, 0.5, 1.0]
        assert run["eval_points"][-1]["step"] == run["steps"]
        for point in run["eval_points"]:
            # Nearest step: within half a step of the fraction of the budget.
            assert abs(point["flops"] - point["fraction"] * plan["budget_flops"]) <= run["flops_per_step"] / 2 + 1


def test_plan_warmup_and_heldout_evaluation_intervals(tmp_path):
    settings = _settings(tmp_path, objectives=["electra", "mlm"], electra_steps=1000, eval_fractions=[1.0])
    runs = planning.plan_runs(settings, _configs(settings))["objectives"]
    for run in runs.values():  # by default: warm-up a tenth of the steps, held-out evaluation at each log
        assert run["warmup_steps"] == round(0.1 * run["steps"])
        assert run["eval_every_steps"] == run["log_every_steps"] == round(run["steps"] / planning.LOG_POINTS)
    settings = dataclasses.replace(settings, warmup_steps=50, eval_every_steps=100)
    runs = planning.plan_runs(settings, _configs(settings))["objectives"]
    assert {(run["warmup_steps"], run["eval_every_steps"]) for run in runs.values()} == {(50, 100)}
    settings = dataclasses.replace(settings, heldout_files=0)
    assert {
        run["eval_every_steps"] for run in planning.plan_runs(settings, _configs(settings))["objectives"].values()
    } == {0}
    with pytest.raises(ConfigError, match=r"^warmup_steps=1001 is more than objective 'electra''s 1000 steps"):
        planning.plan_runs(dataclasses.replace(settings, warmup_steps=1001), _configs(settings))


def test_budget_minutes_becomes_the_electra_steps_of_that_estimated_time(tmp_path):
    settings = _settings(tmp_path, objectives=["electra", "mlm"], budget_minutes=10.0)
    plan = planning.plan_runs(settings, _configs(settings))
    steps = plan["objectives"]["electra"]["steps"]
    step_flops = plan["electra_step_flops"]
    assert plan["budget_flops"] == pytest.approx(steps * step_flops)
    assert planning.pretraining_seconds(settings, steps, step_flops) == pytest.approx(600, abs=5)
    assert plan["budget_source"].startswith(f"--budget_minutes=10: {steps} ELECTRA steps")
    assert plan["objectives"]["mlm"]["steps"] > steps  # still matched in FLOPs
    with pytest.raises(ConfigError, match="^budget_minutes=0.1 leaves no time for a pre-training step"):
        planning.plan_runs(dataclasses.replace(settings, budget_minutes=0.1), _configs(settings))
    bfloat16 = dataclasses.replace(settings, mixed_precision="mixed_bfloat16")
    faster = planning.plan_runs(bfloat16, _configs(bfloat16))["objectives"]["electra"]["steps"]
    assert faster > steps and planning.pretraining_seconds(bfloat16, faster, step_flops) == pytest.approx(600, abs=5)


def test_fine_tuning_batches_are_sized_from_the_tasks_words(tmp_path, shared_data):
    """Measured with the project's tokenizer and a 16k vocabulary learned from Wikipedia: CoLA's training examples
    are 14.5 pieces long on average, RTE's 76.3 (their first 2,000); batches are about as wide as their examples."""
    settings = _settings(tmp_path, glue_dir=str(shared_data / "glue"))
    cola = planning.finetuning_width("CoLA", finetuning_stage.mean_train_words(settings, "CoLA"), 128)
    rte = planning.finetuning_width("RTE", finetuning_stage.mean_train_words(settings, "RTE"), 128)
    assert 14.5 <= cola <= 14.5 * 1.2 and 76.3 <= rte <= 76.3 * 1.2
    assert planning.finetuning_width("RTE", finetuning_stage.mean_train_words(settings, "RTE"), 64) == 64


def test_the_time_model_predicts_the_cpu_recipes_measured_phases(tmp_path):
    """docs/cpu_budget.md sections 6-7 (16,186-piece vocabulary, mixed_bfloat16, evaluations of 20 batches every 250
    steps): 1,185 s for the masked-LM phase's 1,750 steps, 5,645 s for the ELECTRA phase's 6,000."""
    settings = _settings(
        tmp_path, model_size="cpu", mixed_precision="mixed_bfloat16", eval_every_steps=250, num_eval_steps=20
    )
    for objective, steps, measured in (("mlm", 1750, 1185), ("electra", 6000, 5645)):
        config = planning.objective_config(settings, objective, vocab_size=16186)
        step_flops = flops_lib.objective_pretraining_flops(config, 128, 32)
        assert planning.pretraining_seconds(settings, steps, step_flops) == pytest.approx(measured, rel=0.1)


def test_electra_from_the_masked_lm_run_counts_its_steps_in_the_budget(tmp_path):
    """With electra_from_mlm_step=300 the budget is 300 masked-LM steps and then 1000 ELECTRA steps; ELECTRA's
    cumulative FLOPs start at those masked-LM steps', its fractions of the budget fall after them, and the masked-LM
    run, which gets the whole budget, keeps its step 300 for ELECTRA to start from."""
    settings = _settings(
        tmp_path, objectives=["electra", "mlm"], electra_steps=1000, electra_from_mlm_step=300, eval_fractions=[0.5, 1]
    )
    configs = _configs(settings)
    plan = planning.plan_runs(settings, configs)
    runs = plan["objectives"]
    mlm_step, electra_step = runs["mlm"]["flops_per_step"], runs["electra"]["flops_per_step"]
    assert electra_step == plan["electra_step_flops"] > mlm_step
    assert plan["budget_flops"] == pytest.approx(300 * mlm_step + 1000 * electra_step)
    assert plan["budget_source"] == "--electra_steps=1000 after 300 masked-LM steps"
    assert runs["electra"]["starts_from"] == {"objective": "mlm", "step": 300, "flops": pytest.approx(300 * mlm_step)}
    assert (runs["electra"]["steps"], runs["electra"]["total_flops"]) == (1000, pytest.approx(plan["budget_flops"]))
    half = runs["electra"]["eval_points"][0]
    assert half["step"] == round((0.5 * plan["budget_flops"] - 300 * mlm_step) / electra_step)
    assert half["flops"] == pytest.approx(300 * mlm_step + half["step"] * electra_step)
    assert runs["mlm"]["steps"] == round(plan["budget_flops"] / mlm_step)
    assert runs["mlm"]["handover_steps"] == [300] and "starts_from" not in runs["mlm"]

    records, vocab = "data/*.tfrecord", "vocab.txt"
    electra = pretraining_stage.pretraining_job(settings, "electra", runs["electra"], records, None, vocab)
    mlm = pretraining_stage.pretraining_job(settings, "mlm", runs["mlm"], records, None, vocab)
    assert electra.init_checkpoint == os.path.join(settings.output_dir, "pretraining", "mlm", "kept-300")
    assert mlm.init_checkpoint is None
    assert 300 in mlm.checkpoint_steps and mlm.checkpoint_steps == tuple(sorted(mlm.checkpoint_steps))
    # Checkpoints at every log point: an interrupted run resumes from there.
    assert [job.save_checkpoints_steps for job in (electra, mlm)] == [runs[name]["log_every_steps"] for name in runs]

    # A budget in minutes counts the masked-LM steps' estimated time first.
    timed = planning.plan_runs(dataclasses.replace(settings, budget_minutes=30.0), configs)
    steps = timed["objectives"]["electra"]["steps"]
    seconds = planning.pretraining_seconds(settings, 300, mlm_step) + planning.pretraining_seconds(
        settings, steps, electra_step
    )
    assert seconds == pytest.approx(1800, abs=5)
    assert timed["budget_source"].startswith(f"--budget_minutes=30: {steps} ELECTRA steps after 300 masked-LM steps")


def test_electra_from_the_masked_lm_run_needs_both_objectives_and_a_budget_past_its_step(tmp_path):
    settings = _settings(tmp_path, objectives=["electra"], electra_from_mlm_step=300)
    with pytest.raises(ConfigError, match=r"^electra_from_mlm_step=300 starts ELECTRA from the masked-LM run: .*"):
        experiment_settings.validate(settings)
    settings = _settings(tmp_path, objectives=["electra", "mlm"], electra_from_mlm_step=-1)
    with pytest.raises(ConfigError, match=r"^electra_from_mlm_step must be >= 0"):
        experiment_settings.validate(settings)
    # 5 ELECTRA steps after 300 masked-LM steps: at a tenth of that budget ELECTRA has no step (the masked-LM steps it
    # starts from take more).
    settings = _settings(
        tmp_path, objectives=["electra", "mlm"], electra_steps=5, electra_from_mlm_step=300, eval_fractions=[0.1, 1]
    )
    with pytest.raises(
        ConfigError, match=r"gives objective 'electra' no step at evaluation fraction 0.1 .* the masked-LM steps it "
    ):
        planning.plan_runs(settings, _configs(settings))


def test_wall_seconds_at_a_step_between_logged_steps():
    from electra_studies.compute_matched.results import wall_seconds_at

    curve = [{"step": 1}, {"step": 10, "wall_seconds": 20.0}, {"step": 20, "wall_seconds": 40.0}]
    assert wall_seconds_at(curve, 5) == pytest.approx(10.0)
    assert wall_seconds_at(curve, 15) == pytest.approx(30.0)
    assert wall_seconds_at(curve, 20) == 40.0 and wall_seconds_at(curve, 25) == 40.0


def test_split_corpus_holds_out_the_last_files_by_name():
    files = ["b/2.txt", "a/3.txt", "c/1.txt"]
    assert experiment_settings.split_corpus(files, 1) == (["b/2.txt", "c/1.txt"], ["a/3.txt"])
    assert experiment_settings.split_corpus(files, 2) == (["c/1.txt"], ["b/2.txt", "a/3.txt"])
    assert experiment_settings.split_corpus(files, 0) == (files, [])
    with pytest.raises(DataError, match=r"^heldout_files=3 needs at least 4 files .* corpus has 3"):
        experiment_settings.split_corpus(files, 3)


def test_plan_refuses_a_budget_too_small(tmp_path):
    settings = _settings(tmp_path, objectives=["electra"], electra_steps=1, eval_fractions=[0.1, 1.0])
    with pytest.raises(ConfigError, match="no step at evaluation fraction 0.1"):
        planning.plan_runs(settings, _configs(settings))


def test_task_subset_samples_rows_and_keeps_the_header(tmp_path, shared_data):
    settings = _settings(tmp_path, glue_dir=str(shared_data / "glue"), train_examples=50, eval_examples=0)
    directory, count = finetuning_stage.task_subset(settings, "sst-2")
    assert count == 50
    train = (tmp_path / "out" / directory / "SST-2" / "train.tsv").read_text(encoding="utf-8").splitlines()
    assert train[0] == "sentence\tlabel" and len(train) == 51
    dev = (tmp_path / "out" / directory / "SST-2" / "dev.tsv").read_bytes()
    assert dev == (shared_data / "glue" / "SST-2" / "dev.tsv").read_bytes()


# ---------------------------------------------------------------------- table and plots
def _synthetic_results():
    def curve(flops_per_step, steps, names, every=5):
        return [
            dict(
                {"step": step, "flops": step * flops_per_step, "wall_seconds": 0.2 * step},
                **{name: 1.0 / (step + index) for index, name in enumerate(names)},
            )
            for step in range(1, steps + 1, every)
        ]

    def summary(scores):
        values = [value for value in scores.values() if value is not None]  # None: an undefined metric (NaN)
        median = sorted(values)[len(values) // 2]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return {"scores": scores, "median": median, "mean": mean, "std": std}

    def point(fraction, step, flops, scores, cola_scores):
        return {
            "fraction": fraction,
            "step": step,
            "flops": flops,
            "downstream": {"SST-2": summary(scores), "CoLA": summary(cola_scores)},
        }

    electra = {
        "steps": 40,
        "flops_per_step": 3.0,
        "total_flops": 120.0,
        "pretraining_seconds": 10,
        "finetuning_seconds": 20,
        "pretraining_curve": curve(3.0, 40, ["loss", "masked_lm_loss", "disc_loss", "disc_auc"]),
        "heldout_curve": curve(3.0, 40, ["loss", "masked_lm_accuracy", "disc_auc", "disc_recall"], every=10),
        "eval_points": [
            point(0.5, 20, 60.0, {"0": 60.0, "1": 62.0, "2": 61.0}, {"0": 1.0, "1": 2.0, "2": 3.0}),
            point(1.0, 40, 120.0, {"0": 70.0, "1": 71.0, "2": 69.0}, {"0": 4.0, "1": 5.0, "2": 6.0}),
        ],
    }
    mlm = {
        "steps": 60,
        "flops_per_step": 2.0,
        "total_flops": 120.0,
        "pretraining_curve": curve(2.0, 60, ["loss", "masked_lm_loss"]),
        "heldout_curve": curve(2.0, 60, ["loss", "masked_lm_accuracy"], every=10),
        "eval_points": [
            point(0.5, 30, 60.0, {"0": 58.0, "1": 57.0, "2": None}, {"0": 7.0, "1": 8.0, "2": 9.0}),
            point(1.0, 60, 120.0, {"0": 65.0, "1": 66.0, "2": 64.0}, {"0": 7.0, "1": 7.0, "2": 7.0}),
        ],
    }
    return {
        "settings": {"model_size": "tiny", "seeds": [0, 1, 2]},
        "tasks": {
            "SST-2": {"primary_metric": ["SST-2", "accuracy"], "num_train_examples": 100},
            "CoLA": {"primary_metric": ["CoLA", "mcc"], "num_train_examples": 50},
        },
        "budget_flops": 120.0,
        "budget_source": "--electra_steps=40",
        "heldout": {
            "files": ["/data/z-book.txt"],
            "tfrecords": "/out/data/heldout_tfrecords/*.tfrecord*",
            "num_examples": 300,
            "num_eval_steps": 20,
            "eval_batch_size": 32,
        },
        "command": "python -m electra_studies.commands.compute_matched --electra_steps=40",
        "machine": {"cpu_count": 2, "platform": "Linux", "tensorflow": "2.21.0", "keras": "3.15.1"},
        "wall_seconds": {"total": 600},
        "estimated_seconds": {"total": 700},
        "objectives": {"electra": electra, "mlm": mlm},
        "baseline": {
            "name": "random_init",
            "flops": 0,
            "downstream": {
                "SST-2": summary({"0": 50.0, "1": 51.0, "2": 52.0}),
                "CoLA": summary({"0": 0.0, "1": 0.0, "2": 0.0}),
            },
        },
    }


def _table_rows(text, heading):
    """{first cell: row} of the first Markdown table under `heading` in `text`, its header row included."""
    lines = text.split(heading, 1)[1].splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("| "))
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows[line.split(" | ")[0].lstrip("| ")] = line
    return rows


def test_markdown_table_on_synthetic_results():
    text = report.markdown_table(_synthetic_results())
    rows = _table_rows(text, "## SST-2 dev accuracy (100 training examples)")
    assert set(rows) == {"objective", "electra", "mlm"}
    assert rows["electra"].startswith("| electra | 40 | 120 | loss ")
    assert "51.00 (51.00 ± 0.82)" in rows["electra"]  # the random-init column, FLOPs 0
    assert "61.00 (61.00 ± 0.82)" in rows["electra"] and "70.00 (70.00 ± 0.82)" in rows["electra"]
    assert rows["mlm"].startswith("| mlm | 60 | 120 |")
    rows = _table_rows(text, "## CoLA dev mcc (50 training examples)")
    assert "2.00 (2.00 ± 0.82)" in rows["electra"] and "| 7.00 (7.00 ± 0.00) |" in rows["mlm"]
    # The last held-out evaluation of each objective (step 31 of electra's, 51 of mlm's), metrics it lacks as "–".
    assert "20 batches of 32 from z-book.txt" in text
    rows = _table_rows(text, "## Held-out evaluation at the end of pre-training")
    assert rows["objective"] == (
        "| objective | step | FLOPs | wall s | loss | masked_lm_accuracy | disc_recall | disc_auc |"
    )
    assert rows["electra"].startswith("| electra | 31 | 93 | 6 | 0.0323 | 0.0312 | ")
    assert rows["mlm"].endswith("| – | – |")
    assert "python -m electra_studies.commands.compute_matched --electra_steps=40" in text
    assert "2 CPUs" in text and "TensorFlow 2.21.0" in text


def test_plots_on_synthetic_results(tmp_path):
    results = _synthetic_results()
    report.write_outputs(results, str(tmp_path))
    for name in (report.CURVES_PNG, report.HELDOUT_PNG, report.DOWNSTREAM_PNG):
        _assert_png(tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == sorted(
        [report.CURVES_PNG, report.HELDOUT_PNG, report.DOWNSTREAM_PNG, report.RESULTS_JSON, report.RESULTS_MD]
    )  # no temporary files


def test_heldout_panels_pair_compute_with_wall_time_where_a_run_logged_it(tmp_path):
    results = _synthetic_results()
    for entry in results["objectives"]["mlm"]["heldout_curve"]:  # a run whose times were not logged
        del entry["wall_seconds"]
    both = ("flops", "wall_seconds")
    assert report.curve_panels(results, "heldout_curve", x_axes=both) == [
        (name, x) for name in ("loss", "masked_lm_accuracy", "disc_auc", "disc_recall") for x in both
    ]
    for entry in results["objectives"]["electra"]["heldout_curve"]:
        del entry["wall_seconds"]
    assert report.curve_panels(results, "heldout_curve", lambda name: name.endswith("auc"), both) == [
        ("disc_auc", "flops")
    ]
    report.plot_heldout_curves(results, str(tmp_path / report.HELDOUT_PNG))
    _assert_png(tmp_path / report.HELDOUT_PNG)


# ---------------------------------------------------------------------- errors
def _cli(capfd, *args):
    """(exit status, stderr lines) of electra-compute-matched run in this process with `args`."""
    capfd.readouterr()
    status = run_command("electra-compute-matched", *args)
    return status, capfd.readouterr().err.strip().splitlines()


def test_a_job_recorded_before_a_field_was_added_resumes_at_the_fields_default(tmp_path):
    from electra_tf.training.pretraining_spec import PretrainingJob

    job = PretrainingJob(
        pretrain_tfrecords="data/*.tfrecord", model_dir=str(tmp_path / "run"), learning_rate=1e-3, progress_bar=False
    )
    settings_record.check_or_record_job(job)
    path = tmp_path / "run" / "experiment_job.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert "progress_bar" not in recorded and recorded["learning_rate"] == 1e-3
    # Written before these fields existed (a plain default, a tuple's and a default factory's).
    added = ("allow_embedding_mismatch", "checkpoint_steps", "model_overrides")
    older = {key: value for key, value in recorded.items() if key not in added}
    path.write_text(json.dumps(older), encoding="utf-8")
    settings_record.check_or_record_job(job)
    assert json.loads(path.read_text(encoding="utf-8")) == older
    # How often a run saves does not change what it computes: it resumes under other values.
    settings_record.check_or_record_job(dataclasses.replace(job, save_checkpoints_steps=7, keep_checkpoint_max=1))
    # Away from its default, a field the file lacks is a change; so is any other setting.
    for changed, message in (
        ({"allow_embedding_mismatch": True}, "allow_embedding_mismatch: False -> True"),
        (
            {"checkpoint_steps": (10,), "learning_rate": 5e-4},
            r"checkpoint_steps: \[\] -> \[10\], learning_rate: 0.001 -> 0.0005",
        ),
    ):
        with pytest.raises(
            ConfigError,
            match=f"^{tmp_path / 'run'} holds a pre-training run made with other "
            rf"settings \({message}\); use another output_dir, or the settings of "
            "that run to resume it$",
        ):
            settings_record.check_or_record_job(dataclasses.replace(job, **changed))


def test_unknown_objective_is_a_one_line_error(tmp_path, capfd):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text.\n", encoding="utf-8")
    status, lines = _cli(
        capfd,
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus}",
        f"--glue_dir={tmp_path}",
        "--objectives=electra,bert",
    )
    assert status == 2
    assert lines[-1].startswith("error: unknown objective 'bert' in --objectives")
    assert not any("Traceback" in line for line in lines)
    assert not (tmp_path / "out").exists()


def test_missing_corpus_too_few_files_and_unknown_task_are_one_line_errors(tmp_path, capfd):
    status, lines = _cli(
        capfd, f"--output_dir={tmp_path / 'out'}", f"--corpus={tmp_path / 'missing.txt'}", f"--glue_dir={tmp_path}"
    )
    assert status == 2 and lines[-1].startswith("error: --corpus entry")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text.\n", encoding="utf-8")
    # One file: nothing to hold out.
    status, lines = _cli(capfd, f"--output_dir={tmp_path / 'out'}", f"--corpus={corpus}", f"--glue_dir={tmp_path}")
    assert status == 2
    assert lines[-1].startswith(
        "error: --heldout_files=1 needs at least 2 files (the last 1 by name are held out) and --corpus has 1"
    )
    status, lines = _cli(
        capfd,
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus}",
        f"--glue_dir={tmp_path}",
        "--heldout_files=0",
        "--tasks=sst-2,nope",
    )
    assert status == 2 and lines[-1].startswith("error: unknown GLUE task")
    assert not (tmp_path / "out").exists()


def test_the_settings_errors_name_fields_and_the_command_shows_them_as_flags(tmp_path, shared_data, capfd):
    with pytest.raises(ConfigError, match="^output_dir is required$") as raised:
        experiment_settings.validate(_settings(tmp_path, output_dir=""))
    assert raised.value.arguments == ("output_dir",)
    corpus = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in corpus:
        path.write_text("Some text.\n", encoding="utf-8")
    settings = (
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus[0]},{corpus[1]}",
        f"--glue_dir={shared_data / 'glue'}",
        "--dry_run",
    )
    for arguments, error in (
        (["--output_dir="], r"--output_dir is required"),
        (["--warmup_steps=-1"], r"--warmup_steps must be >= 0, got -1"),
        (
            ["--heldout_files=2"],
            r"--heldout_files=2 needs at least 3 files \(the last 2 by name are held out\) and --corpus has 2; pass "
            r"more files in --corpus, or a smaller --heldout_files \(0: no held-out evaluation\)",
        ),
        (
            ["--electra_steps=1", "--eval_fractions=0.1,1"],
            r"the budget \(--electra_steps=1: \S+ FLOPs\) gives objective 'electra' no step at evaluation fraction "
            r"0.1 \(one step costs \S+ FLOPs\); raise the budget or the smallest --eval_fractions",
        ),
        (
            ["--budget_minutes=0.1"],
            r"--budget_minutes=0.1 leaves no time for a pre-training step \(starting a run alone takes about 15 s\); "
            "raise it",
        ),
    ):
        assert run_command("electra-compute-matched", *settings, *arguments) == 2
        errors = [line for line in capfd.readouterr().err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and re.fullmatch(f"error: {error}", errors[0]), errors
    assert not (tmp_path / "out").exists()


def test_the_recipes_flag_file_plans_the_recipe(tmp_path, shared_data, capfd):
    """configs/compute_matched_cpu.flags: ELECTRA from the masked-LM run's step 1,750 plus 6,000 steps, and the
    masked-LM twin of equal FLOPs."""
    corpus = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in corpus:
        path.write_text("Some text.\n\nMore text.\n", encoding="utf-8")
    status = run_command(
        "electra-compute-matched",
        "--flagfile=configs/compute_matched_cpu.flags",
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus[0]},{corpus[1]}",
        f"--glue_dir={shared_data / 'glue'}",
        "--dry_run",
    )
    output = capfd.readouterr()
    assert status == 0, output.err[-3000:]
    assert re.search(r"electra: mlm's 1750 steps \(\S+ FLOPs\) \+ 6000 steps x ", output.out), output.out
    assert re.search(r"mlm: 105\d\d steps x ", output.out), output.out  # the vocabulary's size moves it by a few
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------- end to end
# Benchmarks (`pytest -m benchmark`): the experiment's pre-training, held-out evaluation and fine-tuning stages in one
# run take close to two minutes. The suite keeps the checks above (the plan, the corpus split, a resumed results file,
# the tables, the plots, the errors); the pre-training and fine-tuning jobs the experiment calls have their own tests.
end_to_end = pytest.mark.benchmark


def _tiny_experiment_settings(root, glue_dir, **overrides):
    """Settings of an experiment on 2 tiny gzip files of Wikipedia-style text (paragraph lines, a blank line between
    articles) written under `root`, the second held out; ELECTRA vs MLM, batches of 8 x 32, held-out evaluation on 2
    batches, fine-tuning on 32 examples of the synthetic keyword SST-2, one seed; `overrides` on top."""
    from tests.finetune.synthetic_glue import keyword_examples

    corpus = root / "corpus"
    corpus.mkdir()
    for index in range(2):
        sentences = [sentence for sentence, _ in keyword_examples(240, seed=100 + index)]
        articles = ["\n".join(sentences[start : start + 12]) for start in range(0, len(sentences), 12)]
        with gzip.open(corpus / f"wiki-{index:02d}.txt.gz", "wt", encoding="utf-8") as handle:
            handle.write("\n\n".join(articles) + "\n")
    values = dict(
        output_dir=str(root / "out"),
        corpus=f"{corpus}/*.txt.gz",
        glue_dir=str(glue_dir),
        document_mode="blank_line",
        objectives=["electra", "mlm"],
        max_seq_length=32,
        train_batch_size=8,
        warmup_steps=1,
        vocab_size=300,
        num_eval_steps=2,
        train_examples=32,
        eval_examples=32,
        seeds=[0],
        finetune_max_seq_length=32,
    )
    values.update(overrides)
    return experiment_settings.Settings(**values)


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, keyword_glue_dir):
    """The tiny experiment with a budget of 5 ELECTRA steps in mixed_bfloat16, held-out evaluation every 2 steps,
    fine-tuning at half and all of the budget and from random initialisation."""
    settings = _tiny_experiment_settings(
        tmp_path_factory.mktemp("compute_matched"),
        keyword_glue_dir,
        electra_steps=5,
        eval_fractions=[0.5, 1.0],
        mixed_precision="mixed_bfloat16",
        eval_every_steps=2,
    )
    results = cm.run_experiment(settings, command="electra-compute-matched --electra_steps=5")
    return settings, results


@pytest.fixture(scope="module")
def experiment_from_mlm(tmp_path_factory, keyword_glue_dir):
    """The tiny experiment with ELECTRA started from the masked-LM run at its step 3: 3 masked-LM steps and 3 ELECTRA
    steps of budget, held-out evaluation every step, fine-tuning at its end only, no random-initialisation
    baseline."""
    settings = _tiny_experiment_settings(
        tmp_path_factory.mktemp("compute_matched_from_mlm"),
        keyword_glue_dir,
        electra_steps=3,
        electra_from_mlm_step=3,
        eval_fractions=[1.0],
        eval_every_steps=1,
        random_init_baseline=False,
    )
    results = cm.run_experiment(settings, command="electra-compute-matched --electra_from_mlm_step=3")
    return settings, results


@end_to_end
def test_end_to_end_electra_from_the_masked_lm_run(experiment_from_mlm):
    """ELECTRA's run starts from the masked-LM run's kept step-3 checkpoint; its curves count that run's FLOPs and wall
    time up to there."""
    from electra_studies.compute_matched.results import wall_seconds_at

    settings, results = experiment_from_mlm
    runs = results["objectives"]
    start = runs["electra"]["starts_from"]
    assert (start["objective"], start["step"]) == ("mlm", 3)
    mlm_dir = os.path.join(settings.output_dir, "pretraining", "mlm")
    assert os.path.isfile(os.path.join(mlm_dir, "kept-3.index"))
    with open(os.path.join(settings.output_dir, "pretraining", "electra", "pretraining_job.json")) as handle:
        assert json.load(handle)["init_checkpoint"] == os.path.join(mlm_dir, "kept-3")
    assert runs["electra"]["steps"] == 3 and runs["mlm"]["steps"] >= 6
    assert results["budget_flops"] == pytest.approx(start["flops"] + 3 * runs["electra"]["flops_per_step"])
    curve = runs["electra"]["heldout_curve"]
    assert [entry["step"] for entry in curve] == [1, 2, 3]
    for entry in curve:
        assert entry["flops"] == pytest.approx(start["flops"] + entry["step"] * runs["electra"]["flops_per_step"])
    started = wall_seconds_at(runs["mlm"]["pretraining_curve"], 3)
    assert started > 0 and curve[0]["wall_seconds"] > started
    assert runs["electra"]["eval_points"][0]["downstream"]["SST-2"]["median"] is not None
    with open(os.path.join(settings.output_dir, report.RESULTS_MD), encoding="utf-8") as handle:
        assert "\n| electra (from mlm step 3) | 3 | " in handle.read()


@end_to_end
def test_end_to_end_results(experiment):
    settings, results = experiment
    with open(os.path.join(settings.output_dir, report.RESULTS_JSON), encoding="utf-8") as handle:
        saved = json.load(handle)
    assert saved == json.loads(json.dumps(results))
    for key in (
        "settings",
        "command",
        "machine",
        "budget_flops",
        "objectives",
        "baseline",
        "wall_seconds",
        "tasks",
        "heldout",
    ):
        assert key in saved, key
    assert saved["tasks"] == {"SST-2": {"primary_metric": ["SST-2", "accuracy"], "num_train_examples": 32}}
    assert {"cpu_count", "platform", "tensorflow"} <= set(saved["machine"])
    runs = saved["objectives"]
    assert list(runs) == ["electra", "mlm"]
    assert (runs["electra"]["steps"], runs["electra"]["warmup_steps"], runs["electra"]["eval_every_steps"]) == (5, 1, 2)
    assert runs["mlm"]["steps"] > runs["electra"]["steps"]
    budget = saved["budget_flops"]
    for fraction_index, fraction in enumerate([0.5, 1.0]):
        flops = []
        for run in runs.values():
            point = run["eval_points"][fraction_index]
            assert point["fraction"] == fraction
            assert abs(point["flops"] - fraction * budget) <= run["flops_per_step"]
            flops.append(point["flops"])
            assert set(point["downstream"]["SST-2"]["scores"]) == {"0"}
            assert point["downstream"]["SST-2"]["median"] is not None
            assert os.path.isfile(os.path.join(point["checkpoint"], "config.json"))
        # The objectives agree within one step's FLOPs at every evaluation point.
        assert abs(flops[0] - flops[1]) <= max(run["flops_per_step"] for run in runs.values())
    for run in runs.values():
        curve = run["pretraining_curve"]
        assert curve[0]["step"] == 1 and curve[-1]["step"] == run["steps"]
        assert curve[-1]["flops"] == pytest.approx(run["total_flops"])
    assert "disc_loss" in runs["electra"]["pretraining_curve"][-1]
    assert "disc_loss" not in runs["mlm"]["pretraining_curve"][-1]
    assert saved["baseline"]["flops"] == 0 and saved["baseline"]["downstream"]["SST-2"]["median"] is not None


@end_to_end
def test_end_to_end_records_the_heldout_curves(experiment):
    settings, results = experiment
    assert [os.path.basename(path) for path in results["heldout"]["files"]] == ["wiki-01.txt.gz"]
    assert results["heldout"]["num_examples"] > 0
    runs = results["objectives"]
    for name, run in runs.items():
        curve = run["heldout_curve"]
        # Every 2 steps and at the end.
        assert [entry["step"] for entry in curve] == [*range(2, run["steps"], 2), run["steps"]], name
        for entry in curve:
            assert entry["eval_batches"] == 2
            assert entry["flops"] == pytest.approx(entry["step"] * run["flops_per_step"])
            for key in ("loss", "masked_lm_loss", "masked_lm_accuracy"):
                assert math.isfinite(entry[key]), (name, key)
        seconds = [entry["wall_seconds"] for entry in curve]
        assert seconds == sorted(seconds) and seconds[0] > 0
        assert seconds[-1] == pytest.approx(run["pretraining_curve"][-1]["wall_seconds"], abs=30)
    assert [entry["step"] for entry in runs["electra"]["heldout_curve"]] == [2, 4, 5]
    for entry in runs["electra"]["heldout_curve"]:
        for key in ("disc_loss", "disc_accuracy", "disc_auc"):
            assert math.isfinite(entry[key]), key
    assert "disc_auc" not in runs["mlm"]["heldout_curve"][-1]


@end_to_end
def test_end_to_end_outputs(experiment):
    settings, _ = experiment
    for name in (report.CURVES_PNG, report.HELDOUT_PNG, report.DOWNSTREAM_PNG):
        _assert_png(os.path.join(settings.output_dir, name))
    with open(os.path.join(settings.output_dir, report.RESULTS_MD), encoding="utf-8") as handle:
        table = handle.read()
    for objective in ("electra", "mlm"):
        assert f"\n| {objective} | " in table
    assert _table_rows(table, "## Held-out evaluation at the end of pre-training")["electra"].startswith(
        "| electra | 5 | "
    )
    assert "electra-compute-matched --electra_steps=5" in table


@end_to_end
def test_end_to_end_rerun_skips_finished_stages_and_refuses_other_settings(experiment):
    settings, results = experiment
    checkpoints = {path: path.stat().st_mtime_ns for path in pathlib.Path(settings.output_dir).rglob("ckpt-*")}
    again = cm.run_experiment(settings, command=results["command"])
    # Nothing was trained again: every checkpoint is the one the first run wrote, and no new one appeared.
    assert (
        checkpoints
        and {path: path.stat().st_mtime_ns for path in pathlib.Path(settings.output_dir).rglob("ckpt-*")} == checkpoints
    )
    for name in ("electra", "mlm"):
        for before, after in zip(results["objectives"][name]["eval_points"], again["objectives"][name]["eval_points"]):
            assert (after["step"], after["downstream"]) == (before["step"], before["downstream"])
        assert again["objectives"][name]["heldout_curve"] == results["objectives"][name]["heldout_curve"]
    with pytest.raises(ConfigError, match="holds a pre-training run made with other settings"):
        cm.run_experiment(dataclasses.replace(settings, electra_steps=6))
