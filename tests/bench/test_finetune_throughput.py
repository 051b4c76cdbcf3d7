"""bench/finetune_throughput.py: padded against length-bucketed fine-tuning steps on real GLUE text, the host
facts each run records, concurrent micro-batches, and the peer when its interpreter exists."""

import json
import os

import pytest

from tests.bench.bench_runs import peer_python, run_here, run_script

FINETUNE_KEYS = {
    "examples_per_s_padded",
    "examples_per_s",
    "peer_examples_per_s",
    "speedup_vs_padded",
    "ratio_vs_peer",
    "mean_length",
    "mean_batch_width",
    "mean_batch_width_padded",
    "num_train_examples",
}


def run_finetune_throughput(shared_data, capsys, *arguments):
    result = run_here(
        "finetune_throughput",
        capsys,
        "--task=RTE",
        f"--glue_dir={shared_data}/glue",
        f"--vocab_file={shared_data}/vocab/bert-uncased-vocab.txt",
        "--preset=tiny",
        "--batch=4",
        "--max_seq_length=64",
        "--steps=2",
        "--padded_steps=2",
        "--warmup_steps=1",
        "--matmul_peak_size=64",
        *arguments,
    )
    assert FINETUNE_KEYS <= set(result), FINETUNE_KEYS - set(result)
    with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        flags = next(line for line in cpuinfo if line.startswith("flags")).split()
    host = result["host"]
    assert host["isa"] == [
        name
        for name in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")
        if name in flags
    ]
    assert host["cpus"] == len(os.sched_getaffinity(0)) and host["cpu_model"] != "?"
    assert result["matmul_peak_flops_per_s"] > 1e8
    assert (result["task"], result["batch"], result["num_train_examples"]) == ("RTE", 4, 2490)
    assert result["examples_per_s_padded"] > 0 and result["examples_per_s"] > 0
    assert result["speedup_vs_padded"] == pytest.approx(result["examples_per_s"] / result["examples_per_s_padded"])
    # Padded batches are 64 wide; bucketed ones are cut to a width holding their longest member.
    assert result["mean_batch_width_padded"] == 64 and result["mean_batch_width"] <= 64
    assert 10 < result["mean_length"] < 64
    return result


def test_finetune_throughput_smoke(shared_data, capsys):
    result = run_finetune_throughput(shared_data, capsys, "--peer=off")
    assert result["peer_examples_per_s"] is None and result["ratio_vs_peer"] is None


# A benchmark (`pytest -m benchmark`): the threads of concurrent micro-batches are set before TensorFlow starts, so
# this runs in a process of its own. In the suite: the smoke test above, and the concurrent step itself
# (tests/electra_tf/training/test_gradient_accumulation.py).
@pytest.mark.benchmark
def test_finetune_throughput_with_concurrent_micro_batches_in_a_fresh_process(shared_data):
    arguments = ["--task=RTE", f"--glue_dir={shared_data}/glue", "--preset=tiny", "--batch=4", "--max_seq_length=64"]
    result = run_script(
        "finetune_throughput.py",
        *arguments,
        "--steps=2",
        "--padded_steps=2",
        "--matmul_peak_size=0",
        "--peer=off",
        "--concurrent_micro_batches=2",
        f"--vocab_file={shared_data}/vocab/bert-uncased-vocab.txt",
    )
    result = json.loads(result.stdout.strip().splitlines()[-1])
    cpus = len(os.sched_getaffinity(0))
    assert result["concurrent_micro_batches"] == 2 and result["threads"] == cpus
    assert result["our_intra_inter_op_threads"] == [max(1, cpus // 2), max(cpus, 2)]
    assert result["examples_per_s"] > 0 and result["examples_per_s_padded"] > 0


@pytest.mark.skipif(peer_python() is None, reason="no peer interpreter (.venv-peer) with torch and transformers")
def test_finetune_throughput_with_the_peer(shared_data, capsys):
    result = run_finetune_throughput(shared_data, capsys, "--peer=on", f"--peer_python={peer_python()}")
    assert result["peer_examples_per_s"] > 0 and result["peer_threads"] == result["threads"]
    assert 10 < result["peer_mean_batch_width"] <= 64  # padded to the longest of each batch
    # A check of the unit (FLOP/s, not GFLOP/s), not of speed: with another job keeping both cores busy, torch's
    # 64 x 64 products once measured 6.55e7.
    assert result["peer_matmul_peak_flops_per_s"] > 1e6
    assert result["ratio_vs_peer"] == pytest.approx(result["examples_per_s"] / result["peer_examples_per_s"])
