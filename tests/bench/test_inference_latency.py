"""bench/inference_latency.py: the serving paths at two batch sizes."""

import pytest

from tests.bench.bench_runs import run_here


@pytest.mark.benchmark  # three serving paths traced and timed: see tests/bench/test_pretrain_throughput.py
def test_inference_latency_smoke(capsys):
    result = run_here(
        "inference_latency",
        capsys,
        "--preset=tiny",
        "--batches=1,2",
        "--seq_len=16",
        "--iterations=3",
        "--warmup=1",
        "--peer=off",
    )
    assert (result["preset"], result["seq_len"], result["batches"], result["precision"]) == (
        "tiny",
        16,
        [1, 2],
        "float32",
    )
    assert set(result["per_batch"]) == {"1", "2"}
    for batch, entry in result["per_batch"].items():
        assert set(entry["paths"]) == {"keras_function", "keras_predict_on_batch", "saved_model"}
        assert entry["fastest_ours"] in entry["paths"]
        for stats in entry["paths"].values():
            assert stats["batch"] == int(batch) and stats["iterations"] == 3
            assert 0 < stats["median_ms"] <= stats["p90_ms"]
            assert stats["seq_per_s"] == pytest.approx(int(batch) / stats["median_ms"] * 1e3)
    assert result["peak_rss_mb"] > 100 and "peer_peak_rss_mb" not in result
