"""bench/finetune_step_breakdown.py: one fine-tuning step against its dense GEMMs, and the profile by kind of op."""

import json

import pytest

from tests.bench.bench_runs import load_bench_module, peer_python, run_here

BREAKDOWN_SMOKE = ("--preset=tiny", "--batch=4", "--width=8", "--repeats=2", "--windows=1", "--profile_calls=1")


def test_finetune_step_breakdown_smoke(capsys):
    result = run_here("finetune_step_breakdown", capsys, *BREAKDOWN_SMOKE, "--peer=off")
    assert "peer" not in result
    assert (result["preset"], result["batch"], result["width"]) == ("tiny", 4, 8)
    assert all(result[name] > 0 for name in ("forward_backward_ms", "optimizer_ms", "step_ms", "dense_gemm_ms"))
    assert result["step_over_dense_gemm"] == pytest.approx(result["step_ms"] / result["dense_gemm_ms"])
    # The tiny preset (hidden 128, feed-forward 512, embeddings 64, 2 layers) at 4 x 8 tokens: per layer Q, K, V, the
    # attention output, intermediate and output projections, plus the embedding projection, except that the last layer
    # computes K and V of every token and the rest for the 4 [CLS] tokens alone (the classifier's training step); each
    # GEMM three times (forward, input gradient, kernel gradient) at 2 FLOPs per multiply-add.
    hidden, intermediate, embedding, layers, batch, tokens = 128, 512, 64, 2, 4, 32
    per_layer = 4 * hidden * hidden + 2 * hidden * intermediate
    every_token = (layers - 1) * per_layer + 2 * hidden * hidden + embedding * hidden
    cls_alone = 2 * hidden * hidden + 2 * hidden * intermediate
    assert result["dense_gemm_flops"] == 3 * 2 * (tokens * every_token + batch * cls_alone)
    # The trace of one call of each part: at least each layer's four projections (query/key/value as one) forward,
    # input gradient and kernel gradient; the optimizer's compiled update as XLA kernels.
    forward_backward, optimizer = result["profile"]["forward_backward"], result["profile"]["optimizer"]
    matmuls = sum(entry["count"] for kind, entry in forward_backward.items() if kind.endswith("MatMul"))
    assert matmuls >= 3 * 4 * layers
    assert any(kind.startswith("xla:") for kind in optimizer)
    assert all(entry["ms"] >= 0 for part in (forward_backward, optimizer) for entry in part.values())


@pytest.mark.benchmark  # three XLA compilations (39.5 s beside another job); the script: the smoke test above
def test_finetune_step_breakdown_compiled_whole_runs_no_tensorflow_kernel_of_the_pass(capsys):
    result = run_here("finetune_step_breakdown", capsys, *BREAKDOWN_SMOKE, "--peer=off", "--jit_compile")
    assert result["jit_compile"] is True and result["step_ms"] > 0
    # Compiled whole, the pass's matmuls are XLA's own: no TensorFlow (oneDNN) matmul kernel is left in its trace.
    forward_backward = result["profile"]["forward_backward"]
    assert not [kind for kind in forward_backward if kind.endswith("MatMul")], sorted(forward_backward)
    assert any(kind.startswith("xla:") for kind in forward_backward)


@pytest.mark.skipif(peer_python() is None, reason="no peer interpreter (.venv-peer) with torch and transformers")
def test_finetune_step_breakdown_with_the_peer(capsys):
    load_bench_module("finetune_step_breakdown").main([*BREAKDOWN_SMOKE, "--peer=on", f"--peer_python={peer_python()}"])
    printed = capsys.readouterr().out
    assert "peer forward_backward:" in printed and "peer optimizer:" in printed
    result = json.loads(printed.strip().splitlines()[-1])
    peer = result["peer"]
    assert peer["batch"] == 4 and peer["threads"] > 0
    for part in ("forward_backward_ms", "optimizer_ms", "step_ms", "dense_gemm_ms"):
        assert peer[part] > 0 and result[f"peer_over_ours_{part}"] == pytest.approx(peer[part] / result[part])
    # The peer's profile of one call: its linear layers' matmuls forward and backward, AdamW's update.
    forward_backward, optimizer = peer["profile"]["forward_backward"], peer["profile"]["optimizer"]
    assert sum(entry["count"] for name, entry in forward_backward.items() if name in ("aten::addmm", "aten::mm")) >= 3
    assert any("adam" in name.lower() for name in optimizer)


def test_step_profile_self_times_and_kinds():
    breakdown = load_bench_module("finetune_step_breakdown")
    # An executor event holding two kernels, then a kernel of its own; picoseconds.
    events = [("ExecutorState::Process", 0, 100), ("layer/MatMul:_MklMatMul", 10, 30), ("add_fusion.2", 50, 20)]
    events.append(("layer/Mul:Mul", 200, 5))
    assert sorted(breakdown.self_times(events)) == sorted(
        [("ExecutorState::Process", 50), ("layer/MatMul:_MklMatMul", 30), ("add_fusion.2", 20), ("layer/Mul:Mul", 5)]
    )
    kinds = [breakdown.op_kind(name) for name, *_ in events]
    assert kinds == ["ExecutorState::Process", "_MklMatMul", "xla:add_fusion", "Mul"]
