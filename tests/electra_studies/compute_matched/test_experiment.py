"""The compute-matched experiment end to end on synthetic gzip text: ELECTRA against MLM, held-out evaluation,
fine-tuning at two points and from random initialisation, and a rerun that skips finished stages."""

import dataclasses
import gzip
import json
import math
import os
import pathlib

import pytest

from electra_studies.compute_matched import experiment as cm
from electra_studies.compute_matched import report
from electra_studies.compute_matched import settings as experiment_settings
from electra_tf.errors import ConfigError
from tests.electra_studies.compute_matched.common import assert_png, table_rows

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
    # The networks against each other: each objective at the whole budget and random initialisation, their medians
    # those of the per-task tables, the differences from the first objective's.
    comparison = saved["comparison"]
    assert (comparison["reference"], comparison["tasks"]) == ("electra", ["SST-2"])
    assert list(comparison["networks"]) == ["electra", "mlm", "random_init"]
    for name, record in (
        *((name, run["eval_points"][-1]) for name, run in runs.items()),
        ("random_init", saved["baseline"]),
    ):
        score = comparison["networks"][name]["SST-2"]
        assert score["trials"] == 1 and score["median"] == pytest.approx(record["downstream"]["SST-2"]["median"])
    for other in ("mlm", "random_init"):
        difference = comparison["differences"][other]["SST-2"]
        expected = comparison["networks"]["electra"]["average"] - comparison["networks"][other]["average"]
        assert difference["difference"] == pytest.approx(expected)
        assert difference["low"] <= difference["difference"] <= difference["high"]


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
        assert_png(os.path.join(settings.output_dir, name))
    with open(os.path.join(settings.output_dir, report.RESULTS_MD), encoding="utf-8") as handle:
        table = handle.read()
    for objective in ("electra", "mlm"):
        assert f"\n| {objective} | " in table
    assert table_rows(table, "## Held-out evaluation at the end of pre-training")["electra"].startswith(
        "| electra | 5 | "
    )
    assert "electra-compute-matched --electra_steps=5" in table


@end_to_end
def test_end_to_end_rerun_skips_finished_stages_and_refuses_otherexperiment_settings_with(experiment):
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
        # The reused stages keep the times they took, from the run's logs and the trials' records.
        for stage in ("pretraining_seconds", "finetuning_seconds"):
            assert again["objectives"][name][stage] == results["objectives"][name][stage] > 0
    assert again["baseline"]["finetuning_seconds"] == results["baseline"]["finetuning_seconds"] > 0
    with pytest.raises(ConfigError, match="holds a pre-training run made with other settings"):
        cm.run_experiment(dataclasses.replace(settings, electra_steps=6))
