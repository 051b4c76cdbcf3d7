"""bench/lora_finetune.py: LoRA against full fine-tuning, step time and peak memory."""

import json
import subprocess
import sys

import pytest

from tests.bench.bench_runs import load_bench_module


@pytest.mark.benchmark  # two fine-tuning modes traced and timed: see tests/bench/test_pretrain_throughput.py
def test_lora_finetune_smoke(monkeypatch, capsys):
    """The script's main in this process, each mode measured here too instead of in an interpreter of its own (which
    would import TensorFlow again): the command `run_mode` builds is parsed back, so every flag must reach the mode."""
    lora = load_bench_module("lora_finetune")
    modes = []

    def measure_here(command, **_):
        assert command[:2] == [sys.executable, lora.__file__]
        args = lora.parse_args(command[2:])
        modes.append(args.mode)
        return subprocess.CompletedProcess(command, 0, stdout=json.dumps(lora.measure(args)) + "\n", stderr="")

    monkeypatch.setattr(lora, "subprocess", type("Subprocess", (), {"run": staticmethod(measure_here)}))
    lora.main(["--preset=tiny", "--batch=2", "--seq_len=8", "--steps=2", "--repeats=1", "--rank=4"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert modes == ["full", "lora"]
    assert (result["preset"], result["batch"], result["seq_len"], result["rank"], result["steps"]) == (
        "tiny",
        2,
        8,
        4,
        2,
    )
    # The tiny preset (hidden 128, 2 layers) with a 2-class head: rank-4 factors of query and value per layer,
    # A [128, 4] + B [4, 128] each, and the head's 128 x 2 kernel and its bias.
    head = 128 * 2 + 2
    assert result["lora_trainable_parameters"] == 2 * 2 * (128 * 4 + 4 * 128) + head
    assert result["full_trainable_parameters"] == result["parameters"] > 1_000_000
    assert result["trainable_ratio"] == pytest.approx(result["lora_trainable_parameters"] / result["parameters"])
    assert all(result[f"{mode}_step_ms"] > 0 for mode in ("full", "lora"))
    assert result["step_ratio"] == pytest.approx(result["lora_step_ms"] / result["full_step_ms"])
    assert result["peak_rss_ratio"] == pytest.approx(result["lora_peak_rss_mb"] / result["full_peak_rss_mb"])
    assert all(100 < result[f"{mode}_peak_rss_mb"] < 24_000 for mode in ("full", "lora"))
