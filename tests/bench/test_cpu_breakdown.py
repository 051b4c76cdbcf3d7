"""bench/cpu_breakdown.py: perf samples grouped by kind of native code."""

import pytest

from tests.bench.bench_runs import TINY, last_json, load_bench_module, run_script

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
