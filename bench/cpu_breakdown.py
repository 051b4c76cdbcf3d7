"""Where a pre-training step's CPU time goes, by kind of native code, in float32 and mixed_bfloat16 in the same run.

    .venv/bin/python bench/cpu_breakdown.py --preset=small --batch=32 --seq_len=128 --steps=8
    .venv/bin/python bench/cpu_breakdown.py --preset=tiny --batch=4 --seq_len=32 --steps=2   # smoke run

For each precision a child process builds ElectraPretrainer, runs `--warmup_steps` training steps, then `--steps`
timed ones while `perf record` samples it (the software cpu-clock event, which works in VMs that expose no hardware
counters; idle threads take no samples). Samples are grouped by the native code they land in: oneDNN's matmuls
(its JIT-generated kernels appear to perf as `[JIT]` addresses), Philox random numbers, Eigen's float32 and bfloat16
element-wise kernels, dtype conversions, reductions, softmax cross-entropy, copies and transposes, the thread pool,
the Linux kernel (scheduling, page faults) and the rest. Each group's CPU milliseconds per step is its share of the
samples times the child's measured CPU time per step. The ratio column is float32 / bfloat16 per group: what
bfloat16 saves (> 1) or costs (< 1) in each kind of work, i.e. where `pretrain_throughput.py`'s bfloat16 speed-up
comes from and where it is lost.

Needs `perf` (Debian: linux-perf) allowed to attach to the user's own processes (kernel.perf_event_paranoid <= 2);
without it the script says so and exits with status 2. The last line is one JSON object.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

PRECISIONS = ("float32", "mixed_bfloat16")
GROUPS = (
    "matmul (oneDNN)",
    "random numbers (Philox)",
    "element-wise float32",
    "element-wise bfloat16",
    "dtype conversions",
    "reductions",
    "softmax cross-entropy",
    "copies and transposes",
    "thread pool",
    "kernel (scheduling, page faults)",
    "other",
)
_PERF_LINE = re.compile(r"^\s*([\d.]+)%\s*\t(.*?)\s*\t\[(.)\]\s(.*)$")


def code_group(dso, symbol, kernel=False):
    """The group of one perf sample location: its shared object (`dso`), symbol and whether it is kernel code."""
    if kernel or dso.startswith("[kernel"):
        return "kernel (scheduling, page faults)"
    if dso.startswith("[JIT]") or "dnnl::" in symbol:
        return "matmul (oneDNN)"
    if "Philox" in symbol:
        return "random numbers (Philox)"
    if "ConversionOp" in symbol and "Reduc" not in symbol and "PairReducer" not in symbol:
        return "dtype conversions"
    if "Xent" in symbol:
        return "softmax cross-entropy"
    if "Reduc" in symbol:
        return "reductions"
    # Element-wise kernels run *on* the thread pool (their symbols name Eigen::ThreadPoolDevice); the pool's own code
    # (queues, work stealing, spinning before sleep) does not evaluate a tensor expression.
    if ("ThreadPoolTempl" in symbol or "RunQueue" in symbol or "EigenEnvironment" in symbol) and "Tensor" not in symbol:
        return "thread pool"
    if "Copy" in symbol or "Transpose" in symbol or "Shuffl" in symbol or "memmove" in symbol or "memcpy" in symbol:
        return "copies and transposes"
    if "Eigen" in symbol and "bfloat16" in symbol:
        return "element-wise bfloat16"
    if "Eigen" in symbol:
        return "element-wise float32"
    return "other"


def group_shares(report_text):
    """Shares (summing to ~1) of the groups in the text of `perf report --sort dso,sym -t TAB --stdio`."""
    shares = dict.fromkeys(GROUPS, 0.0)
    for line in report_text.splitlines():
        match = _PERF_LINE.match(line)
        if match:
            percent, dso, kind, symbol = match.groups()
            shares[code_group(dso, symbol, kernel=kind == "k")] += float(percent) / 100.0
    return shares


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--frequency", type=int, default=499, help="perf samples per second of CPU time.")
    parser.add_argument(
        "--keep_perf_data",
        metavar="DIR",
        help="Keep each precision's perf.data under DIR (for `perf report -i`) instead of deleting it.",
    )
    parser.add_argument("--child", choices=PRECISIONS, help=argparse.SUPPRESS)
    parser.add_argument("--work_dir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def run_child(args):
    """The measured process: warm up, announce the pid, train `--steps` steps, report, wait for the parent."""
    import keras
    import tensorflow as tf

    from bench_utils import random_batch
    from electra_tf.config import ElectraConfig
    from electra_tf.data.keras_input import keras_input_options
    from electra_tf.training.distribution import set_precision
    from electra_tf.training.optimizers import create_optimizer
    from electra_tf.training.pretrainer import ElectraPretrainer

    set_precision(args.child)
    config = ElectraConfig.from_preset(args.preset)
    batch = random_batch(args.batch, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
    dataset = tf.data.Dataset.from_tensors(batch).repeat().prefetch(2).with_options(keras_input_options())
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(config, max_seq_length=args.seq_len)
    model.compile(optimizer=create_optimizer("adam_weight_decay", 1e-4))
    model.fit(dataset, steps_per_epoch=max(args.warmup_steps, 1), shuffle=False, verbose=0)
    ready, attached, done, release = (
        os.path.join(args.work_dir, name) for name in ("ready", "attached", "done", "release")
    )
    _write_atomically(ready, str(os.getpid()))
    _wait_for(lambda: os.path.exists(attached), "perf to attach")
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(dataset, steps_per_epoch=args.steps, shuffle=False, verbose=0)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    _write_atomically(
        done, json.dumps({"seconds_per_step": wall / args.steps, "cpu_seconds_per_step": cpu / args.steps})
    )
    _wait_for(lambda: os.path.exists(release), "the parent to stop perf")


def _write_atomically(path, text):
    with open(path + ".tmp", "w") as handle:
        handle.write(text)
    os.replace(path + ".tmp", path)


def _wait_for(condition, what, timeout=600.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f} s")
        time.sleep(0.05)


def measure(args, precision, work_dir):
    """Runs one child under perf; returns its timings and the group shares of its samples."""
    child_dir = os.path.join(work_dir, precision)
    os.makedirs(child_dir)
    command = [
        sys.executable,
        os.path.abspath(__file__),
        f"--child={precision}",
        f"--work_dir={child_dir}",
        f"--preset={args.preset}",
        f"--batch={args.batch}",
        f"--seq_len={args.seq_len}",
        f"--steps={args.steps}",
        f"--warmup_steps={args.warmup_steps}",
    ]
    child = subprocess.Popen(command)
    perf = None
    try:
        _wait_for(lambda: os.path.exists(os.path.join(child_dir, "ready")) or child.poll() is not None, "the child")
        if child.poll() is not None:
            raise RuntimeError(f"the {precision} child exited with status {child.returncode} before training")
        data = os.path.join(child_dir, "perf.data")
        perf = subprocess.Popen(
            ["perf", "record", "-e", "cpu-clock", "-F", str(args.frequency), "-p", str(child.pid), "-o", data],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)  # perf needs a moment to attach to every thread
        _write_atomically(os.path.join(child_dir, "attached"), "")
        _wait_for(lambda: os.path.exists(os.path.join(child_dir, "done")) or child.poll() is not None, "training")
        perf.send_signal(signal.SIGINT)
        _, perf_errors = perf.communicate(timeout=120)
        if child.poll() is not None:
            raise RuntimeError(f"the {precision} child exited with status {child.returncode} while training")
        if perf.returncode not in (0, -signal.SIGINT) or not os.path.exists(data):
            raise RuntimeError(f"perf record failed: {perf_errors.decode(errors='replace').strip()[-500:]}")
        with open(os.path.join(child_dir, "done")) as handle:
            timings = json.load(handle)
        report = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym", "-g", "none", "-t", "\t"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        _write_atomically(os.path.join(child_dir, "release"), "")
        if perf is not None and perf.poll() is None:
            perf.kill()
        child.wait(timeout=120)
    return dict(timings, shares=group_shares(report))


def perf_problem():
    """None when `perf record` can sample this user's processes, else why not (one line)."""
    if shutil.which("perf") is None:
        return "perf is not installed (Debian/Ubuntu: apt install linux-perf)"
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as handle:
            paranoid = int(handle.read())
    except (OSError, ValueError):
        return None
    if paranoid > 2:
        return f"kernel.perf_event_paranoid is {paranoid}; set it to 2 or lower (sysctl kernel.perf_event_paranoid=2)"
    return None


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        run_child(args)
        return 0
    problem = perf_problem()
    if problem:
        print(f"cpu_breakdown.py: {problem}", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory(prefix="cpu_breakdown_") as work_dir:
        for precision in PRECISIONS:
            results[precision] = measure(args, precision, work_dir)
            if args.keep_perf_data:
                os.makedirs(args.keep_perf_data, exist_ok=True)
                kept = os.path.join(args.keep_perf_data, f"perf.{precision}.data")
                shutil.move(os.path.join(work_dir, precision, "perf.data"), kept)
                print(f"kept {kept}")
    float32, bfloat16 = (results[p] for p in PRECISIONS)
    print(f"{args.preset}, batch {args.batch}, seq {args.seq_len}, {args.steps} steps; CPU ms per step by kind of code")
    print(f"{'group':34s} {'float32':>9s} {'bfloat16':>9s} {'f32/bf16':>9s}")
    milliseconds = {
        p: {g: 1e3 * results[p]["cpu_seconds_per_step"] * results[p]["shares"][g] for g in GROUPS} for p in PRECISIONS
    }
    for group in GROUPS:
        f, b = milliseconds["float32"][group], milliseconds["mixed_bfloat16"][group]
        ratio = f"{f / b:9.2f}" if b > 0 else f"{'-':>9s}"
        print(f"{group:34s} {f:9.0f} {b:9.0f} {ratio}")
    for precision, result in results.items():
        print(
            f"{precision}: {result['seconds_per_step']:.3f} s/step wall, "
            f"{result['cpu_seconds_per_step']:.3f} s/step CPU"
        )
    speedup = float32["seconds_per_step"] / bfloat16["seconds_per_step"]
    print(f"bfloat16 speed-up (wall): {speedup:.2f}x")
    print(
        json.dumps(
            {
                "preset": args.preset,
                "batch": args.batch,
                "seq_len": args.seq_len,
                "steps": args.steps,
                "bfloat16_speedup": speedup,
                **{f"{p}_seconds_per_step": results[p]["seconds_per_step"] for p in PRECISIONS},
                **{f"{p}_cpu_seconds_per_step": results[p]["cpu_seconds_per_step"] for p in PRECISIONS},
                "cpu_ms_per_step": milliseconds,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
