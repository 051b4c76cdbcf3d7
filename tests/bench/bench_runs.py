"""What the benchmark scripts' smoke tests share: running a script in a process of its own or in this one (a subprocess
would only add TensorFlow's import, ~10 s, where the script needs no process of its own), loading a script as a module,
the peer interpreter if there is one, and the keys and sane values of a pre-training measurement. The tests run each
script at the tiny preset for a step or two; the numbers themselves are not checked (a loaded 2-core machine),
docs/PERFORMANCE.md says how the real measurements are taken."""

import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO_ROOT, "bench")
PRETRAIN_KEYS = {
    "preset",
    "batch",
    "seq_len",
    "mixed_precision",
    "seq_per_s",
    "model_flops_per_s",
    "matmul_peak_flops_per_s",
    "mfu",
    "peak_rss_mb",
    "tokens_per_s",
    "seconds_per_step",
    "jit_compile",
    "first_step_loss",
    "expected_first_step_loss",
    "mfu_matmul_only",
    "matmul_flops_per_step",
}
TINY = ["--preset=tiny", "--matmul_peak_size=256"]


def run_script(name, *arguments, timeout=300, check=True):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("ELECTRA_PEER_PYTHON", None)
    result = subprocess.run(
        [sys.executable, os.path.join(BENCH, name), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO_ROOT,
    )
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def last_json(result):
    return json.loads(result.stdout.strip().splitlines()[-1])


def load_bench_module(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", os.path.join(BENCH, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peer_python():
    """The peer interpreter the benchmarks would use, if it exists and imports torch and transformers."""
    sys.path.insert(0, BENCH)
    try:
        import peer_runner
    finally:
        sys.path.remove(BENCH)
    python = peer_runner.default_peer_python()
    return python if peer_runner.check_peer(python)[0] else None


def run_here(name, capsys, *arguments):
    """The last JSON line `bench/<name>.py` prints, run in this process: a subprocess would add TensorFlow's import."""
    load_bench_module(name).main(list(arguments))
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def check_pretrain_result(result, batch, seq_len):
    assert PRETRAIN_KEYS <= set(result), PRETRAIN_KEYS - set(result)
    assert (result["preset"], result["batch"], result["seq_len"]) == ("tiny", batch, seq_len)
    assert result["mixed_precision"] == "float32" and result["jit_compile"] is False
    assert result["seq_per_s"] > 0 and result["tokens_per_s"] == pytest.approx(result["seq_per_s"] * seq_len)
    assert result["seconds_per_step"] == pytest.approx(batch / result["seq_per_s"])
    assert result["model_flops_per_s"] > 0 and result["matmul_peak_flops_per_s"] > 0
    assert 0 < result["mfu"] < 2 and 0 < result["mfu_matmul_only"] < result["mfu"]  # tiny: lookups dominate
    assert 100 < result["peak_rss_mb"] < 24_000
    # A fresh model's loss is ln(V) + 50 ln 2 = 44.98 give or take its initialisation (README).
    assert result["expected_first_step_loss"] == pytest.approx(math.log(30522) + 50 * math.log(2))
    assert abs(result["first_step_loss"] - result["expected_first_step_loss"]) < 6
