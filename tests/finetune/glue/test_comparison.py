"""Comparing fine-tuned networks on the real GLUE dev sets: medians over trials and paired bootstrap intervals."""

import json
import subprocess
import sys

import numpy as np
import pytest

from electra_tf.errors import ConfigError, DataError
from finetune.glue.comparison import bootstrap_differences, compare, interval, markdown, parse_runs
from finetune.glue.predictions import write_predictions
from finetune.glue.readers import split_labels


@pytest.fixture(scope="module")
def glue_dir(shared_data):
    return str(shared_data / "glue")


def _write_run(run_dir, task, trials):
    for index, predictions in enumerate(trials):
        write_predictions(str(run_dir / task / f"trial_{index}" / "dev_predictions.tsv"), predictions, task)


def _noisy(labels, flip_fraction, seed):
    """Label ids with `flip_fraction` of them flipped (binary tasks)."""
    rng = np.random.default_rng(seed)
    flipped = rng.random(len(labels)) < flip_fraction
    return np.where(flipped, 1 - labels, labels)


def test_bootstrap_differences_equal_a_direct_resampling(glue_dir):
    labels = split_labels(glue_dir, "MRPC")
    first = [_noisy(labels, fraction, seed) for seed, fraction in enumerate((0.1, 0.2, 0.3))]
    second = [_noisy(labels, 0.4, 10 + seed) for seed in range(3)]
    resampled = bootstrap_differences(["MRPC"], {"MRPC": labels}, {"MRPC": first}, {"MRPC": second}, 50, seed=3)

    rng = np.random.default_rng(3)
    expected = []
    for _ in range(50):
        rows = rng.integers(0, len(labels), len(labels))
        accuracy = [np.median([100 * np.mean(p[rows] == labels[rows]) for p in trials]) for trials in (first, second)]
        expected.append(accuracy[0] - accuracy[1])
    np.testing.assert_allclose(resampled["MRPC"], expected, atol=1e-9)
    np.testing.assert_allclose(resampled["average"], expected, atol=1e-9)


def test_compare_reports_medians_spreads_and_intervals(glue_dir, tmp_path):
    mrpc, sts = split_labels(glue_dir, "MRPC"), split_labels(glue_dir, "STS-B")
    rng = np.random.default_rng(0)
    _write_run(
        tmp_path / "good", "MRPC", [_noisy(mrpc, fraction, seed) for seed, fraction in enumerate((0.1, 0.15, 0.2))]
    )
    _write_run(tmp_path / "good", "STS-B", [np.clip(sts + rng.normal(0, 0.5, len(sts)), 0, 5) for _ in range(3)])
    _write_run(tmp_path / "poor", "MRPC", [_noisy(mrpc, 0.45, 10 + seed) for seed in range(3)])
    _write_run(tmp_path / "poor", "STS-B", [rng.uniform(0, 5, len(sts)) for _ in range(3)])
    runs = {"good": str(tmp_path / "good"), "poor": str(tmp_path / "poor"), "same": str(tmp_path / "good")}

    result = compare(glue_dir, runs, ["mrpc", "STS-B"], num_resamples=200)

    good = result["networks"]["good"]
    accuracies = sorted(100 * np.mean(_noisy(mrpc, f, s) == mrpc) for s, f in enumerate((0.1, 0.15, 0.2)))
    assert good["MRPC"] == pytest.approx(
        {"median": accuracies[1], "min": accuracies[0], "max": accuracies[2], "trials": 3}
    )
    assert good["average"] == pytest.approx((good["MRPC"]["median"] + good["STS-B"]["median"]) / 2)
    against_poor = result["differences"]["poor"]
    for part in ("MRPC", "STS-B", "average"):
        assert 0 < against_poor[part]["low"] <= against_poor[part]["difference"] <= against_poor[part]["high"]
    assert against_poor["average"]["difference"] == pytest.approx(
        (against_poor["MRPC"]["difference"] + against_poor["STS-B"]["difference"]) / 2
    )
    assert result["differences"]["same"]["average"] == {"difference": 0.0, "low": 0.0, "high": 0.0}
    table = markdown(result)
    assert f"| good | {accuracies[1]:.1f} ({accuracies[0]:.1f}-{accuracies[2]:.1f}) |" in table
    assert "| same | +0.0 [+0.0, +0.0] | +0.0 [+0.0, +0.0] | +0.0 [+0.0, +0.0] |" in table


def test_interval_leaves_out_undefined_resamples():
    assert interval([1.0, 2.0, 3.0, np.nan], confidence=0.5) == (1.5, 2.5)
    assert np.isnan(interval([1.0, np.nan, np.nan, np.nan])[0])


def test_a_network_given_as_output_directories_per_task_reads_every_trial_of_each(glue_dir, tmp_path):
    """A network fine-tuned in runs of seeds (the compute-matched experiment's layout): its trials are those of all
    its output directories, and compare as the same trials in one run directory do."""
    labels = split_labels(glue_dir, "RTE")
    trials = [_noisy(labels, fraction, seed) for seed, fraction in enumerate((0.1, 0.2, 0.3))]
    for index, predictions in enumerate(trials[:2]):
        write_predictions(str(tmp_path / "seeds-0-1" / f"trial_{index}" / "dev_predictions.tsv"), predictions, "RTE")
    write_predictions(str(tmp_path / "seeds-5-5" / "trial_0" / "dev_predictions.tsv"), trials[2], "RTE")
    _write_run(tmp_path / "whole", "RTE", trials)
    _write_run(tmp_path / "other", "RTE", [_noisy(labels, 0.4, 10)])
    by_seeds = {"RTE": [str(tmp_path / "seeds-0-1"), str(tmp_path / "seeds-5-5")]}
    runs = {"other": str(tmp_path / "other"), "whole": str(tmp_path / "whole"), "by_seeds": by_seeds}

    result = compare(glue_dir, runs, ["rte"], num_resamples=50)

    assert result["networks"]["by_seeds"] == result["networks"]["whole"]
    assert result["networks"]["by_seeds"]["RTE"]["trials"] == 3
    assert result["differences"]["by_seeds"] == result["differences"]["whole"]
    missing = {"other": str(tmp_path / "other"), "missing": {"RTE": [str(tmp_path / "seeds-9-9")]}}
    with pytest.raises(DataError, match=r"no .*seeds-9-9/trial_\*/dev_predictions.tsv; .* on RTE .*seeds-9-9$"):
        compare(glue_dir, missing, ["RTE"])


def test_an_interval_left_open_reads_n_a_also_after_a_json_round_trip():
    comparison = {
        "tasks": ["CoLA"],
        "reference": "a",
        "confidence": 0.95,
        "networks": {name: {"CoLA": {"median": 0.0, "min": 0.0, "max": 0.0}, "average": 0.0} for name in "ab"},
        "differences": {"b": {part: {"difference": 0.0, "low": np.nan, "high": None} for part in ("CoLA", "average")}},
    }
    assert "| b | +0.0 [n/a, n/a] | +0.0 [n/a, n/a] |" in markdown(comparison)


def test_missing_trials_and_bad_runs_are_refused(glue_dir, tmp_path):
    _write_run(tmp_path / "a", "RTE", [split_labels(glue_dir, "RTE")])
    with pytest.raises(
        DataError,
        match=r"no .*b/RTE/trial_\*/dev_predictions.tsv; fine-tune the network on RTE with its output_dir .*b/RTE",
    ):
        compare(glue_dir, {"a": str(tmp_path / "a"), "b": str(tmp_path / "b")}, ["RTE"])
    with pytest.raises(ConfigError, match="at least two networks"):
        compare(glue_dir, {"a": str(tmp_path / "a")}, ["RTE"])
    with pytest.raises(ConfigError, match="'a' is not name=directory"):
        parse_runs(["a"])
    with pytest.raises(ConfigError, match="names 'a' twice"):
        parse_runs(["a=x", "a=y"])
    assert parse_runs(["electra=x", "random=y=z"]) == {"electra": "x", "random": "y=z"}


def test_command_prints_the_tables_and_json(glue_dir, tmp_path):
    labels = split_labels(glue_dir, "RTE")
    _write_run(tmp_path / "a", "RTE", [labels, labels, 1 - labels])
    _write_run(tmp_path / "b", "RTE", [1 - labels])
    output = subprocess.run(
        [
            sys.executable,
            "-m",
            "finetune.commands.glue_compare",
            f"--data_dir={glue_dir}",
            "--tasks=RTE",
            f"--runs=a={tmp_path / 'a'},b={tmp_path / 'b'}",
            "--num_resamples=20",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| a | 100.0 (0.0-100.0) | 100.0 |" in output
    assert "| b | +100.0 [+100.0, +100.0] | +100.0 [+100.0, +100.0] |" in output
    result = json.loads(output.strip().splitlines()[-1])
    assert result["networks"]["b"]["RTE"] == {"median": 0.0, "min": 0.0, "max": 0.0, "trials": 1}
