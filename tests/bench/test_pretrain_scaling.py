"""bench/pretrain_scaling.py: the grid of configurations, each measured by pretrain_throughput.py, and its table."""

import json
import subprocess
import sys

import pytest

from tests.bench.bench_runs import PRETRAIN_KEYS, TINY, last_json, load_bench_module, run_script


@pytest.mark.benchmark  # runs pretrain_throughput's measurement: see tests/bench/test_pretrain_throughput.py
def test_pretrain_scaling_smoke(tmp_path, monkeypatch, capsys):
    """The script's main in this process, each configuration measured here too (pretrain_throughput.py's main on the
    command the script builds) instead of in an interpreter of its own, which would import TensorFlow again."""
    scaling, throughput = load_bench_module("pretrain_scaling"), load_bench_module("pretrain_throughput")

    def measure_here(command, **_):
        assert command[:2] == [sys.executable, scaling.THROUGHPUT]
        printed = capsys.readouterr().out  # the script's own output so far, written back after the measurement's
        throughput.main(command[2:])
        measured = capsys.readouterr().out
        sys.stdout.write(printed)
        return subprocess.CompletedProcess(command, 0, stdout=measured, stderr="")

    monkeypatch.setattr(scaling, "subprocess", type("Subprocess", (), {"run": staticmethod(measure_here)}))
    output = tmp_path / "scaling.json"
    scaling.main([*TINY, "--grid=2x16", "--reference=2x16", "--steps=1", "--warmup_steps=1", f"--output={output}"])
    stdout = capsys.readouterr().out
    rows = json.loads(stdout.strip().splitlines()[-1])["results"]
    assert [(row["preset"], row["batch"], row["seq_len"]) for row in rows] == [("tiny", 2, 16)]
    row = rows[0]
    assert PRETRAIN_KEYS <= set(row) and row["seq_per_s"] > 0 and 0 < row["mfu"] < 2 and row["peak_rss_mb"] > 100
    assert row["tokens_per_s_relative"] == 1.0 and "| tiny | 2 | 16 |" in stdout
    written = json.loads(output.read_text())
    assert written["results"] == rows and written["table_markdown"].startswith("| preset | batch | seq |")


def test_pretrain_scaling_relative_throughput_and_table():
    scaling = load_bench_module("pretrain_scaling")
    args = scaling.parse_args(["--include_base_512"])
    assert (
        args.configurations
        == [("small", 8, 128), ("small", 32, 128), ("small", 128, 128), ("small", 32, 512), ("base", 8, 512)]
        and args.peer == "off"
    )
    row = dict.fromkeys(
        ["seq_per_s", "seconds_per_step", "model_flops_per_s", "mfu", "mfu_matmul_only", "peak_rss_mb"], 1.0
    )
    rows = [
        dict(row, preset="small", batch=8, seq_len=128, tokens_per_s=500.0),
        dict(row, preset="small", batch=32, seq_len=128, tokens_per_s=1000.0),
        dict(row, preset="base", batch=8, seq_len=512, tokens_per_s=100.0),
        {"preset": "small", "batch": 32, "seq_len": 512, "error": "exit 1: out of memory"},
    ]
    rows = scaling.add_relative_throughput(rows, (32, 128))
    assert [r["tokens_per_s_relative"] for r in rows] == [0.5, 1.0, None, None]
    table = scaling.markdown_table(rows).splitlines()
    assert len(table) == 6 and len({line.count("|") for line in table}) == 1  # every row has every column
    assert "| 0.50 |" in table[2] and "| - |" in table[4] and "failed: exit 1: out of memory" in table[5]


@pytest.mark.benchmark
def test_pretrain_scaling_two_configurations(tmp_path):
    result = run_script(
        "pretrain_scaling.py", *TINY, "--grid=2x16,4x16", "--reference=4x16", "--steps=1", "--warmup_steps=1"
    )
    rows = last_json(result)["results"]
    assert [(row["batch"], row["seq_len"]) for row in rows] == [(2, 16), (4, 16)]
    assert rows[1]["tokens_per_s_relative"] == 1.0
    assert rows[0]["tokens_per_s_relative"] == pytest.approx(rows[0]["tokens_per_s"] / rows[1]["tokens_per_s"])
    assert "tokens/s vs 4x16" in result.stdout
