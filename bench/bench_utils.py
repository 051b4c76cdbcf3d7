"""Helpers shared by the benchmarks and by the peer (`hf_peer.py` and its modules), which runs in its own interpreter:
standard library only (NumPy imported where needed)."""

import math
import statistics
import time


def peak_rss_mb():
    """Peak resident memory of this process in MiB: VmHWM of /proc/self/status, else ru_maxrss.

    Not ru_maxrss first: Linux carries the RSS high-water mark of the image a process replaced by exec into its
    ru_maxrss, so a benchmark started from a big parent (pytest, the TensorFlow process starting the peer) would report
    the parent's peak. VmHWM belongs to the process's own address space.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def random_batch(batch, seq_len, vocab_size, cls_id, sep_id, seed=0):
    """The benchmarks' input, the same on both sides: random ids in [1000, vocab), [CLS] first, [SEP] last, no
    padding."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.integers(min(1000, vocab_size - 1), vocab_size, size=(batch, seq_len)).astype(np.int32)
    ids[:, 0], ids[:, -1] = cls_id, sep_id
    return {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}


def median_window_ms(call, windows, calls_per_window, warmup_calls, finish=None):
    """Median over `windows` windows of the mean milliseconds per call of `call()`, after `warmup_calls` untimed calls.
    `finish(outputs)`, when given, waits for the outputs of a call (a warm-up, or a window's last) before the clock
    reads: for frameworks whose calls return before their work is done."""
    for _ in range(warmup_calls):
        outputs = call()
        if finish:
            finish(outputs)
    medians = []
    for _ in range(windows):
        start = time.perf_counter()
        for _ in range(calls_per_window):
            outputs = call()
        if finish:
            finish(outputs)
        medians.append(1e3 * (time.perf_counter() - start) / calls_per_window)
    return statistics.median(medians)


def percentile(values, q):
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_stats(latencies_s, batch):
    """Median, p90 and mean latency in ms of one call, and sequences/s = batch / median latency."""
    median = percentile(latencies_s, 0.5)
    return {
        "batch": batch,
        "iterations": len(latencies_s),
        "median_ms": 1e3 * median,
        "p90_ms": 1e3 * percentile(latencies_s, 0.9),
        "mean_ms": 1e3 * sum(latencies_s) / len(latencies_s),
        "seq_per_s": batch / median,
    }


# The instruction-set extensions that decide which oneDNN (and torch) kernels a host runs.
ISA_EXTENSIONS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")


def host_facts():
    """The CPU model, the CPUs this process may run on, the 1-minute load average (other jobs on the host) and which
    of `ISA_EXTENSIONS` the CPU has."""
    import os

    model, flags = "?", set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name") and model == "?":
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu_model": model,
        "cpus": cpus,
        "load_average_1min": os.getloadavg()[0],
        "isa": [name for name in ISA_EXTENSIONS if name in flags],
    }
