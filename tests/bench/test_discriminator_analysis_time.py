"""bench/discriminator_analysis_time.py: every analysis on a tiny model against its reference time."""

import json
import os
import sys

import pytest

from tests.bench.bench_runs import load_bench_module


@pytest.mark.benchmark  # every analysis on a tiny model: see tests/bench/test_pretrain_throughput.py
def test_discriminator_analysis_time_smoke(pretrained_tiny, shared_data, monkeypatch, capsys):
    run_dir = os.path.dirname(pretrained_tiny)  # discriminator and generator: every analysis runs
    module = load_bench_module("discriminator_analysis_time")
    monkeypatch.setattr(
        sys,
        "argv",
        [
            module.__file__,
            f"--init_checkpoint={run_dir}",
            f"--data_dir={shared_data}",
            "--max_seq_length=32",
            "--max_sentences=5",
            "--blimp_pairs_per_paradigm=1",
            "--reference_windows=64",
            "--representation_words=200",
            f"--compare_checkpoint={pretrained_tiny}",
        ],
    )
    module.main()  # in this process, as the other smoke tests that need no process of their own
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["analyses"] == ["ged", "calibration", "pos", "blimp", "representations"]
    assert result["skipped"] == {}
    assert result["within_budget"] and 0 < result["reference_seconds"] < result["seconds"]
    assert result["ratio_to_reference"] == pytest.approx(result["seconds"] / result["reference_seconds"])
