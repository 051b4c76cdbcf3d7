"""Smoke tests of the benchmark scripts: each runs at the tiny preset for a step or two and must end with one JSON
line holding the documented keys and sane values. They run in this process where a subprocess would only add
TensorFlow's import (~10 s), in a subprocess where the script needs a process of its own. The numbers themselves are
not checked (a loaded 2-core machine); docs/PERFORMANCE.md says how the real measurements are taken."""

import importlib.util
import json
import math
import os
import subprocess
import sys
import weakref

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


def run_here(name, capsys, *arguments):
    """The last JSON line `bench/<name>.py` prints, run in this process: a subprocess would add TensorFlow's import."""
    load_bench_module(name).main(list(arguments))
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.benchmark  # three serving paths traced and timed: see test_pretrain_throughput_smoke
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


@pytest.mark.benchmark  # runs pretrain_throughput's measurement: see test_pretrain_throughput_smoke
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
    # A check of the unit (FLOP/s, not GFLOP/s), not of speed: with another job keeping both cores busy, torch's
    # 64 x 64 products once measured 6.55e7.
    assert result["peer_matmul_peak_flops_per_s"] > 1e6
    assert result["ratio_vs_peer"] == pytest.approx(result["examples_per_s"] / result["peer_examples_per_s"])


BREAKDOWN_SMOKE = ("--preset=tiny", "--batch=4", "--width=8", "--repeats=2", "--windows=1", "--profile_calls=1")


def test_finetune_step_breakdown_smoke(capsys):
    result = run_here("finetune_step_breakdown", capsys, *BREAKDOWN_SMOKE, "--peer=off")
    assert "peer" not in result
    assert (result["preset"], result["batch"], result["width"]) == ("tiny", 4, 8)
    assert all(result[name] > 0 for name in ("forward_backward_ms", "optimizer_ms", "step_ms", "dense_gemm_ms"))
    assert result["step_over_dense_gemm"] == pytest.approx(result["step_ms"] / result["dense_gemm_ms"])
    # The tiny preset (hidden 128, feed-forward 512, embeddings 64, 2 layers) at 32 tokens: per layer Q, K, V, the
    # attention output, intermediate and output projections, plus the embedding projection; each GEMM three times
    # (forward, input gradient, kernel gradient) at 2 FLOPs per multiply-add.
    hidden, intermediate, embedding, layers, tokens = 128, 512, 64, 2, 32
    per_layer = 4 * hidden * hidden + 2 * hidden * intermediate
    assert result["dense_gemm_flops"] == 3 * 2 * tokens * (layers * per_layer + embedding * hidden)
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


def test_hf_peer_flags_from_json_and_command_line():
    hf_peer = load_bench_module("hf_peer")  # only the standard library at import: torch is imported by its functions
    assert "torch" not in sys.modules
    args = hf_peer.parse_args(["--mode=infer", "--batch=1,32", '--json={"hidden_size": 128, "batch": "4"}'])
    assert args.hidden_size == 128 and args.batches == [1, 32]  # the command line wins over --json
    with pytest.raises(SystemExit):
        hf_peer.parse_args(['--json={"hidden_sise": 128}'])
    with pytest.raises(SystemExit):
        hf_peer.parse_args(["--mode=train", "--batch=1,2"])


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


PERF_REPORT = "\n".join(
    [
        "# Samples: 10K of event 'cpu-clock'",
        " 40.00%  \t[JIT] tid 30861                \t[.] 0x00007fe26ffc00b9",
        " 10.00%  \tlibtensorflow_cc.so.2          \t[.] dnnl::impl::cpu::x64::matmul::brgemm_matmul_t<880>"
        "::compute_kernel",
        "  9.00%  \tlibtensorflow_framework.so.2   \t[.] tsl::random::PhiloxRandom::operator()",
        # An element-wise kernel on the pool, not the pool's own code:
        "  8.00%  \tlibtensorflow_cc.so.2          \t[.] Eigen::internal::EvalRange<Eigen::TensorEvaluator<"
        "Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16>, Eigen::TensorCwiseUnaryOp<"
        "Eigen::internal::scalar_exp_op<float>>>>, Eigen::ThreadPoolDevice>::run",
        "  7.00%  \tlibtensorflow_cc.so.2          \t[.] Eigen::internal::TensorBlockAssignment<Eigen::bfloat16, 4, "
        "Eigen::TensorSelectOp<Eigen::TensorMap<Eigen::Tensor<bool, 4, 1, long>>>>::Run",
        "  6.00%  \tlibtensorflow_cc.so.2          \t[.] Eigen::internal::EvalRange<Eigen::TensorEvaluator<"
        "Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::bfloat16, 1>>, Eigen::TensorConversionOp<"
        "Eigen::bfloat16, Eigen::TensorMap<Eigen::Tensor<float const, 1>>>>>>::run",
        "  5.00%  \tlibtensorflow_cc.so.2          \t[.] Eigen::internal::EvalRange<Eigen::TensorEvaluator<"
        "Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<int, 2>>, Eigen::TensorConversionOp<int, "
        "Eigen::TensorPairReducerOp<Eigen::internal::ArgMaxPairReducer<Eigen::Pair<long, float>>>>>>>::run",
        "  4.00%  \t[kernel.kallsyms]              \t[k] finish_task_switch.isra.0",
        "  3.00%  \tlibc.so.6                      \t[.] __memmove_avx512_unaligned_erms",
        "  2.00%  \tlibtensorflow_cc.so.2          \t[.] Eigen::TensorEvaluator<Eigen::TensorGeneratorOp<"
        "tensorflow::generator::SparseXentGradGenerator<float, int>>>::block",
        "  1.50%  \tlibtensorflow_framework.so.2   \t[.] Eigen::ThreadPoolTempl<tsl::thread::EigenEnvironment>"
        "::GlobalSteal",
        "  1.00%  \tlibpython3.11.so.1.0           \t[.] _PyEval_EvalFrameDefault",
        "",
    ]
)


def test_cpu_breakdown_groups_perf_samples_by_kind_of_code():
    breakdown = load_bench_module("cpu_breakdown")
    shares = breakdown.group_shares(PERF_REPORT)
    assert set(shares) == set(breakdown.GROUPS)
    expected = {
        "matmul (oneDNN)": 0.50,
        "random numbers (Philox)": 0.09,
        "element-wise float32": 0.08,
        "element-wise bfloat16": 0.07,
        "dtype conversions": 0.06,
        "reductions": 0.05,
        "kernel (scheduling, page faults)": 0.04,
        "copies and transposes": 0.03,
        "softmax cross-entropy": 0.02,
        "thread pool": 0.015,
        "other": 0.01,
    }
    assert shares == pytest.approx(expected)
    assert breakdown.group_shares("no samples\n") == dict.fromkeys(breakdown.GROUPS, 0.0)


@pytest.mark.benchmark  # a minute of perf sampling at two precisions; the grouping itself is tested above
def test_cpu_breakdown_smoke():
    breakdown = load_bench_module("cpu_breakdown")
    problem = breakdown.perf_problem()
    if problem:
        result = run_script("cpu_breakdown.py", check=False)
        assert result.returncode == 2 and problem in result.stderr
        pytest.skip(problem)
    result = run_script("cpu_breakdown.py", *TINY[:1], "--batch=4", "--seq_len=32", "--steps=2", "--warmup_steps=1")
    if "matmul (oneDNN)" not in result.stdout:
        pytest.fail(result.stdout[-2000:] + result.stderr[-2000:])
    summary = last_json(result)
    assert set(summary["cpu_ms_per_step"]) == {"float32", "mixed_bfloat16"}
    for precision in ("float32", "mixed_bfloat16"):
        groups = summary["cpu_ms_per_step"][precision]
        assert set(groups) == set(breakdown.GROUPS)
        total = summary[f"{precision}_cpu_seconds_per_step"] * 1e3
        # The groups split the measured CPU time by the samples' shares (each rounded to 0.01 % by perf report).
        assert sum(groups.values()) == pytest.approx(total, rel=0.02)
        assert groups["matmul (oneDNN)"] > 0
    assert summary["bfloat16_speedup"] == pytest.approx(
        summary["float32_seconds_per_step"] / summary["mixed_bfloat16_seconds_per_step"]
    )


@pytest.mark.benchmark  # every analysis on a tiny model: see test_pretrain_throughput_smoke
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


def test_peer_sizes_give_the_generator_the_sizing_rule_of_the_config():
    """The peer builds its generator from these flags: they must be the generator our pre-training model builds."""
    from electra_tf.config import ElectraConfig

    peer_runner = load_bench_module("peer_runner")
    config = ElectraConfig.from_preset("small")
    generator = config.generator_architecture()
    sizes = peer_runner.peer_sizes(config)
    assert (
        sizes["generator_hidden_size"],
        sizes["generator_num_layers"],
        sizes["generator_num_heads"],
        sizes["generator_intermediate_size"],
    ) == (generator.hidden_size, generator.num_layers, generator.num_heads, generator.intermediate_size)
    assert sizes["hidden_size"] == config.hidden_size and generator.hidden_size == config.hidden_size // 4


@pytest.mark.benchmark  # two fine-tuning modes traced and timed: see test_pretrain_throughput_smoke
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


@pytest.mark.benchmark  # four exports and their runtimes: see test_pretrain_throughput_smoke
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


@pytest.mark.benchmark  # three exported files scored: see test_pretrain_throughput_smoke
def test_int8_accuracy_scores_the_dev_set_from_each_file(shared_data, tmp_path, capsys):
    import csv

    import keras
    import numpy as np

    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor

    tokenizer = ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))
    config = ElectraConfig.from_preset("tiny").with_vocab(len(tokenizer.vocab), pad_id=tokenizer.pad_id)
    keras.utils.set_random_seed(3)
    classifier = ElectraTextClassifier(
        build_discriminator(config).backbone,
        num_classes=2,
        preprocessor=ElectraTextClassifierPreprocessor.from_tokenizer(tokenizer, 16),
    )
    classifier.save(tmp_path / "model.keras")
    result = run_here(
        "int8_accuracy",
        capsys,
        f"--model={tmp_path / 'model.keras'}",
        "--task=SST-2",
        f"--glue_dir={shared_data / 'glue'}",
        "--max_seq_length=16",
        "--max_examples=24",
        "--runtimes=",
        "--no-keras_int8",
    )
    # The reference, computed here from raw text through the model's own preprocessor.
    with open(shared_data / "glue" / "SST-2" / "dev.tsv", encoding="utf-8") as file:
        rows = list(csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE))[1:25]
    predicted = classifier.predict([row[0] for row in rows], verbose=0).argmax(-1)
    expected = 100.0 * float(np.mean(predicted == np.array([int(row[1]) for row in rows])))
    assert result["examples"] == 24 and set(result["paths"]) == {"saved_model_float32"}
    assert result["keras_float32"]["metrics"] == {"accuracy": pytest.approx(expected)}
    saved_model = result["paths"]["saved_model_float32"]
    assert saved_model["changed_predictions"] == 0 and saved_model["max_logit_difference"] < 1e-4
    assert saved_model["metrics"] == result["keras_float32"]["metrics"] and saved_model["mb"] > 0
