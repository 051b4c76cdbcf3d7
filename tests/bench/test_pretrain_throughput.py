"""bench/pretrain_throughput.py: one measurement against this checkout in a second process, the refusals of its
flags, and the peer when its interpreter exists."""

import json
import weakref

import pytest

from tests.bench.bench_runs import (
    REPO_ROOT,
    TINY,
    check_pretrain_result,
    last_json,
    load_bench_module,
    peer_python,
    run_script,
)


# Benchmarks (`pytest -m benchmark`) as the scripts they run: each costs CI 20-45 s (a second TensorFlow process for the
# baseline, SavedModel, LiteRT and ONNX exports, every analysis), while the parts they measure have their own tests
# (the pretrainer's step, tests/electra_tf/test_id_model_export.py, tests/electra_studies).
@pytest.mark.benchmark
def test_pretrain_throughput_smoke(capsys):
    throughput = load_bench_module("pretrain_throughput")
    measured_models, timed_model = [], throughput.timed_model

    def recorded_timed_model(args):
        model, *rest = timed_model(args)
        measured_models.append(weakref.ref(model))
        return (model, *rest)

    throughput.timed_model = recorded_timed_model
    throughput.main(
        [
            *TINY,
            "--batch=4",
            "--seq_len=32",
            "--steps=2",
            "--warmup_steps=1",
            "--repeats=2",
            "--peer=off",
            f"--baseline_repo={REPO_ROOT}",
            "--gradient_accumulation_steps=2",
        ]
    )
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    check_pretrain_result(result, 4, 32)
    # Released once measured: bench/pretrain_scaling.py measures one configuration after another in one process.
    assert len(measured_models) == 1 and measured_models[0]() is None
    assert not any(key.startswith("peer") or key == "ratio_vs_peer" for key in result)
    # The baseline is this same checkout in a second process: same model, same micro-batches (the setting reaches
    # it), same first loss, its own windows.
    assert result["gradient_accumulation_steps"] == result["baseline_gradient_accumulation_steps"] == 2
    assert len(result["seconds_per_step_windows"]) == len(result["baseline_windows"]) == 2
    assert result["baseline_first_step_loss"] == pytest.approx(result["first_step_loss"], rel=1e-5)
    assert result["ratio_vs_baseline"] == pytest.approx(
        result["baseline_seconds_per_step"] / result["seconds_per_step"]
    )


def test_peer_on_without_an_interpreter_fails_in_one_line_naming_the_fix(tmp_path):
    result = run_script(
        "pretrain_throughput.py",
        *TINY,
        "--peer=on",
        f"--peer_python={tmp_path}/missing/python",
        check=False,
        timeout=120,
    )
    assert result.returncode != 0
    message = result.stderr.strip().splitlines()[-1]
    assert "--peer=on" in message and "python3.11 -m venv .venv-peer" in message
    assert "torch==2.13.0 transformers numpy" in message


def test_pretrain_throughput_refuses_a_run_without_the_peak_its_mfu_needs(capsys):
    throughput = load_bench_module("pretrain_throughput")
    with pytest.raises(SystemExit):
        throughput.parse_args(["--matmul_peak_size=0"])
    assert "--matmul_peak_size=0 must be at least 1: the MFU figures divide by the peak" in capsys.readouterr().err


@pytest.mark.skipif(peer_python() is None, reason="no peer interpreter (.venv-peer) with torch and transformers")
def test_pretrain_throughput_with_the_peer():
    result = last_json(
        run_script(
            "pretrain_throughput.py",
            *TINY,
            "--batch=2",
            "--seq_len=16",
            "--steps=1",
            "--warmup_steps=1",
            "--peer=on",
            f"--peer_python={peer_python()}",
        )
    )
    check_pretrain_result(result, 2, 16)
    assert result["peer_seq_per_s"] > 0 and result["peer_peak_rss_mb"] > 50
    assert result["ratio_vs_peer"] == pytest.approx(result["seq_per_s"] / result["peer_seq_per_s"])
    assert result["peer_threads"] == result["threads"] and result["peer_precision"] == "float32"
    assert result["peer_matmul_peak_flops_per_s"] > 0 and result["peer_mfu"] > 0
    # The ratio splits into the two frameworks' GEMM peaks and how much of its own peak each step uses.
    assert result["matmul_peak_ratio_vs_peer"] == pytest.approx(
        result["matmul_peak_flops_per_s"] / result["peer_matmul_peak_flops_per_s"]
    )
    assert result["matmul_peak_ratio_vs_peer"] * result["mfu_ratio_vs_peer"] == pytest.approx(result["ratio_vs_peer"])
    # The peer's fresh model starts at the same loss as ours.
    assert abs(result["peer_first_step_loss"] - result["expected_first_step_loss"]) < 6
