"""finetune/experiments/compute_matched: planning, the table and plots on a synthetic results dict, and the whole
experiment end to end on a slice of the real corpus (about a minute on 2 cores)."""

import dataclasses
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

from electra_tf.errors import ConfigError
from finetune.experiments.compute_matched import experiment as cm
from finetune.experiments.compute_matched import plan as planning
from finetune.experiments.compute_matched import report
from tests.conftest import REPO_ROOT

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
    return planning.Settings(**values)


def _configs(settings):
    return {name: planning.objective_config(settings, name, 8000) for name in settings.objectives}


def test_plan_matches_flops_and_gives_mlm_more_steps(tmp_path):
    settings = _settings(tmp_path, objectives=["electra", "mlm", "replace_mlm", "all_tokens_mlm"],
                         electra_steps=1000, eval_fractions=[0.25, 0.5, 1.0])
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


def test_plan_refuses_a_budget_too_small(tmp_path):
    settings = _settings(tmp_path, objectives=["electra"], electra_steps=1, eval_fractions=[0.1, 1.0])
    with pytest.raises(ConfigError, match="no step at evaluation fraction 0.1"):
        planning.plan_runs(settings, _configs(settings))


def test_task_subset_samples_rows_and_keeps_the_header(tmp_path, shared_data):
    settings = _settings(tmp_path, glue_dir=str(shared_data / "glue"), train_examples=50, eval_examples=0)
    directory, count = cm.task_subset(settings)
    assert count == 50
    train = (tmp_path / "out" / directory / "SST-2" / "train.tsv").read_text(encoding="utf-8").splitlines()
    assert train[0] == "sentence\tlabel" and len(train) == 51
    dev = (tmp_path / "out" / directory / "SST-2" / "dev.tsv").read_bytes()
    assert dev == (shared_data / "glue" / "SST-2" / "dev.tsv").read_bytes()


# ---------------------------------------------------------------------- table and plots
def _synthetic_results():
    def curve(flops_per_step, steps, names):
        return [dict({"step": step, "flops": step * flops_per_step},
                     **{name: 1.0 / (step + index) for index, name in enumerate(names)})
                for step in range(1, steps + 1, 5)]

    def point(fraction, step, flops, scores):
        values = [value for value in scores.values() if value is not None]  # None: an undefined metric (NaN)
        median = sorted(values)[len(values) // 2]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return {"fraction": fraction, "step": step, "flops": flops,
                "downstream": {"scores": scores, "median": median, "mean": mean, "std": std}}

    electra = {"steps": 40, "flops_per_step": 3.0, "total_flops": 120.0, "pretraining_seconds": 10,
               "finetuning_seconds": 20,
               "pretraining_curve": curve(3.0, 40, ["loss", "masked_lm_loss", "disc_loss", "disc_auc"]),
               "eval_points": [point(0.5, 20, 60.0, {"0": 60.0, "1": 62.0, "2": 61.0}),
                               point(1.0, 40, 120.0, {"0": 70.0, "1": 71.0, "2": 69.0})]}
    mlm = {"steps": 60, "flops_per_step": 2.0, "total_flops": 120.0,
           "pretraining_curve": curve(2.0, 60, ["loss", "masked_lm_loss"]),
           "eval_points": [point(0.5, 30, 60.0, {"0": 58.0, "1": 57.0, "2": None}),
                           point(1.0, 60, 120.0, {"0": 65.0, "1": 66.0, "2": 64.0})]}
    return {"settings": {"model_size": "tiny", "seeds": [0, 1, 2]}, "primary_metric": ["SST-2", "accuracy"],
            "budget_flops": 120.0, "budget_source": "--electra_steps=40", "num_train_examples": 100,
            "command": "python -m finetune.experiments.compute_matched --electra_steps=40",
            "machine": {"cpu_count": 2, "platform": "Linux", "tensorflow": "2.21.0", "keras": "3.15.1"},
            "wall_seconds": {"total": 600}, "estimated_seconds": {"total": 700},
            "objectives": {"electra": electra, "mlm": mlm},
            "baseline": {"name": "random_init", "flops": 0,
                         "downstream": {"scores": {"0": 50.0, "1": 51.0, "2": 52.0}, "median": 51.0, "mean": 51.0,
                                        "std": 0.8}}}


def test_markdown_table_on_synthetic_results():
    text = report.markdown_table(_synthetic_results())
    rows = {}
    for line in text.splitlines():  # the first table's rows (the second lists FLOPs per step and wall times)
        if line.startswith("| "):
            rows.setdefault(line.split(" | ")[0].lstrip("| "), line)
    assert "electra" in rows and "mlm" in rows
    assert "| electra | 40 | 120 | loss " in rows["electra"]
    assert "51.00 (51.00 ± 0.80)" in rows["electra"]  # the random-init column, FLOPs 0
    assert "61.00 (61.00 ± 0.82)" in rows["electra"] and "70.00 (70.00 ± 0.82)" in rows["electra"]
    assert "| mlm | 60 | 120 |" in rows["mlm"]
    assert "python -m finetune.experiments.compute_matched --electra_steps=40" in text
    assert "2 CPUs" in text and "TensorFlow 2.21.0" in text


def test_plots_on_synthetic_results(tmp_path):
    results = _synthetic_results()
    report.plot_pretraining_curves(results, str(tmp_path / "curves.png"))
    report.plot_downstream(results, str(tmp_path / "downstream.png"))
    _assert_png(tmp_path / "curves.png")
    _assert_png(tmp_path / "downstream.png")
    assert sorted(os.listdir(tmp_path)) == ["curves.png", "downstream.png"]  # no temporary files left


# ---------------------------------------------------------------------- errors
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "finetune.experiments.compute_matched", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def test_unknown_objective_is_a_one_line_error(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text.\n", encoding="utf-8")
    result = _cli(f"--output_dir={tmp_path / 'out'}", f"--corpus={corpus}", f"--glue_dir={tmp_path}",
                  "--objectives=electra,bert")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: unknown objective 'bert' in --objectives")
    assert not any("Traceback" in line for line in lines)
    assert not (tmp_path / "out").exists()


def test_missing_corpus_and_unknown_task_are_one_line_errors(tmp_path):
    result = _cli(f"--output_dir={tmp_path / 'out'}", f"--corpus={tmp_path / 'missing.txt'}",
                  f"--glue_dir={tmp_path}")
    assert result.returncode == 2 and result.stderr.strip().splitlines()[-1].startswith("error: --corpus entry")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text.\n", encoding="utf-8")
    result = _cli(f"--output_dir={tmp_path / 'out'}", f"--corpus={corpus}", f"--glue_dir={tmp_path}", "--task=nope")
    assert result.returncode == 2 and result.stderr.strip().splitlines()[-1].startswith("error: unknown GLUE task")


# ---------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def experiment(shared_data, tmp_path_factory):
    """The experiment on a slice of the Gutenberg corpus: 20 ELECTRA steps (8 x 32) of budget, ELECTRA vs MLM,
    evaluations at half and all of it, 64 SST-2 training examples, one seed."""
    root = tmp_path_factory.mktemp("compute_matched")
    corpus = root / "corpus"
    corpus.mkdir()
    for name in ("austen-emma.txt", "melville-moby_dick.txt"):
        with open(shared_data / "corpus" / "nltk-gutenberg" / name, encoding="utf-8", errors="replace") as handle:
            lines = [next(handle) for _ in range(300)]
        (corpus / name).write_text("".join(lines), encoding="utf-8")
    settings = planning.Settings(
        output_dir=str(root / "out"), corpus=str(corpus), glue_dir=str(shared_data / "glue"),
        objectives=["electra", "mlm"], electra_steps=20, eval_fractions=[0.5, 1.0], max_seq_length=32,
        train_batch_size=8, vocab_size=1000, train_examples=64, eval_examples=64, seeds=[0], finetune_max_seq_length=32)
    results = cm.run_experiment(settings, command="python -m finetune.experiments.compute_matched --electra_steps=20")
    return settings, results


def test_end_to_end_results(experiment):
    settings, results = experiment
    with open(os.path.join(settings.output_dir, report.RESULTS_JSON), encoding="utf-8") as handle:
        saved = json.load(handle)
    assert saved == json.loads(json.dumps(results))
    for key in ("settings", "command", "machine", "budget_flops", "objectives", "baseline", "wall_seconds",
                "primary_metric"):
        assert key in saved, key
    assert {"cpu_count", "platform", "tensorflow"} <= set(saved["machine"])
    runs = saved["objectives"]
    assert list(runs) == ["electra", "mlm"]
    assert runs["electra"]["steps"] == 20
    assert runs["mlm"]["steps"] > runs["electra"]["steps"]
    budget = saved["budget_flops"]
    for fraction_index, fraction in enumerate([0.5, 1.0]):
        flops = []
        for name, run in runs.items():
            point = run["eval_points"][fraction_index]
            assert point["fraction"] == fraction
            assert abs(point["flops"] - fraction * budget) <= run["flops_per_step"]
            flops.append(point["flops"])
            assert set(point["downstream"]["scores"]) == {"0"}
            assert point["downstream"]["median"] is not None
            assert os.path.isfile(os.path.join(point["checkpoint"], "config.json"))
        # The objectives agree within one step's FLOPs at every evaluation point.
        assert abs(flops[0] - flops[1]) <= max(run["flops_per_step"] for run in runs.values())
    for run in runs.values():
        curve = run["pretraining_curve"]
        assert curve[0]["step"] == 1 and curve[-1]["step"] == run["steps"]
        assert curve[-1]["flops"] == pytest.approx(run["total_flops"])
    assert "disc_loss" in runs["electra"]["pretraining_curve"][-1]
    assert "disc_loss" not in runs["mlm"]["pretraining_curve"][-1]
    assert saved["baseline"]["flops"] == 0 and saved["baseline"]["downstream"]["median"] is not None


def test_end_to_end_outputs(experiment):
    settings, _ = experiment
    for name in (report.CURVES_PNG, report.DOWNSTREAM_PNG):
        _assert_png(os.path.join(settings.output_dir, name))
    with open(os.path.join(settings.output_dir, report.RESULTS_MD), encoding="utf-8") as handle:
        table = handle.read()
    for objective in ("electra", "mlm"):
        assert f"\n| {objective} | " in table
    assert "python -m finetune.experiments.compute_matched --electra_steps=20" in table


def test_end_to_end_rerun_skips_finished_stages_and_refuses_other_settings(experiment):
    settings, results = experiment
    checkpoints = {path: path.stat().st_mtime_ns for path in pathlib.Path(settings.output_dir).rglob("ckpt-*")}
    again = cm.run_experiment(settings, command=results["command"])
    # Nothing was trained again: every checkpoint is the one the first run wrote, and no new one appeared.
    assert checkpoints and {path: path.stat().st_mtime_ns
                            for path in pathlib.Path(settings.output_dir).rglob("ckpt-*")} == checkpoints
    for name in ("electra", "mlm"):
        for before, after in zip(results["objectives"][name]["eval_points"], again["objectives"][name]["eval_points"]):
            assert (after["step"], after["downstream"]) == (before["step"], before["downstream"])
    with pytest.raises(ConfigError, match="holds a pre-training run made with other settings"):
        cm.run_experiment(dataclasses.replace(settings, electra_steps=30))
