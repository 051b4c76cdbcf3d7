"""bench/int8_serving.py: a classifier served in float32 and int8 by each runtime."""

import pytest

from tests.bench.bench_runs import run_here


@pytest.mark.benchmark  # four exports and their runtimes: see tests/bench/test_pretrain_throughput.py
def test_int8_serving_smoke(capsys):
    result = run_here("int8_serving", capsys, "--preset=tiny", "--batches=2", "--seq_len=8", "--iterations=1")
    figures = result["batches"]["2"]
    assert figures["int8_over_float32"] == pytest.approx(figures["int8_ms"] / figures["float32_ms"])
    # int8 rounding moves the logits, a little.
    assert 0 < figures["max_logit_difference"] < 0.1 * figures["max_abs_logit"]
    # The projections' kernels shrink to a byte a weight; the word table (a keras-hub layer) stays float.
    assert result["saved_model_mb_int8"] < result["saved_model_mb_float32"]
    # The token-id files, run by their own runtimes: float32 as Keras, int8 smaller and near it.
    for runtime in ("litert", "onnx"):
        float32, int8 = result["runtimes"][f"{runtime}_float32"], result["runtimes"][f"{runtime}_int8"]
        assert int8["mb"] < float32["mb"]
        keras_scale = float32["batches"]["2"]["max_abs_keras_logit"]
        assert float32["batches"]["2"]["max_logit_difference_vs_keras"] < 1e-4 * max(1.0, keras_scale)
        assert int8["batches"]["2"]["max_logit_difference_vs_keras"] < 0.1 * keras_scale
        assert int8["batches"]["2"]["over_own_float32"] == pytest.approx(
            int8["batches"]["2"]["median_ms"] / float32["batches"]["2"]["median_ms"]
        )
