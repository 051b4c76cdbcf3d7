"""LoRA against full fine-tuning: trainable parameters, training step time and peak memory, in one run.

    .venv/bin/python bench/lora_finetune.py --preset=small --batch=32 --seq_len=128 --rank=8
    .venv/bin/python bench/lora_finetune.py --preset=tiny --batch=4 --seq_len=16 --steps=3 --repeats=1   # smoke

Each measurement is a fresh interpreter (this script with `--mode=full` or `--mode=lora`), so its peak RSS is its
own: `ElectraTextClassifier` at the preset's sizes (random weights and token ids, no padding: the speed does not
depend on them), with `enable_lora(--rank, lora_alpha=--alpha)` in LoRA mode (query and value of every layer, the
head trainable), compiled with the reference's fine-tuning optimizer (`finetune.optimization`) as the runner does, and
trained in Keras `fit` for `--steps` steps after two untimed ones (tracing). The step time is the median interval
between batch ends; the peak RSS is VmHWM at the end (`bench_utils.peak_rss_mb`), `rss_before_training_mb` the
resident memory with the model built and compiled, before the first step. `--repeats` alternates the two modes that
many times; the figures are medians over repeats.

Printed: both modes' trainable parameters, step ms, peak RSS and the ratios LoRA / full of each (`step_ratio`,
`peak_rss_ratio`, `trainable_ratio`). The last line is one JSON object.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH_DIR))
sys.path.insert(0, BENCH_DIR)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from bench_utils import peak_rss_mb, random_batch  # noqa: E402  (bench/ is on sys.path from the lines above)

MODES = ("full", "lora")
FIGURES = ("trainable_parameters", "step_ms", "peak_rss_mb", "rss_before_training_mb")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--num_labels", type=int, default=2)
    parser.add_argument("--rank", type=int, default=8, help="LoRA rank (PEFT's default).")
    parser.add_argument("--alpha", type=float, default=None, help="LoRA alpha (default: the rank).")
    parser.add_argument("--steps", type=int, default=20, help="Timed steps per measurement.")
    parser.add_argument("--repeats", type=int, default=2, help="Measurements of each mode, alternating.")
    parser.add_argument("--mixed_precision", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--mode", default=None, choices=MODES, help="Measure one mode in this process (internal).")
    parser.add_argument("--timeout", type=float, default=1800, help="Seconds per measurement.")
    args = parser.parse_args(argv)
    if args.steps < 2 or args.repeats < 1 or args.rank < 1 or args.batch < 1 or args.seq_len < 2:
        parser.error("--steps must be at least 2, --seq_len 2, and --repeats, --rank and --batch at least 1")
    return args


def _resident_mb():
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(args):
    """One mode's figures, in this process."""
    import keras
    import numpy as np
    import tensorflow as tf

    from bench_tf import batch_end_clock
    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator
    from electra_tf.training.distribution import set_precision
    from finetune.models import ElectraTextClassifier
    from finetune.optimization import create_finetuning_optimizer

    set_precision(args.mixed_precision)
    config = ElectraConfig.from_preset(args.preset)
    keras.utils.set_random_seed(0)
    model = ElectraTextClassifier(build_discriminator(config).backbone, num_classes=args.num_labels)
    if args.mode == "lora":
        model.enable_lora(args.rank, lora_alpha=args.alpha)
    model.compile(
        optimizer=create_finetuning_optimizer(model.num_layers, 1e-4, 10 * args.steps),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    batch = random_batch(args.batch, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
    inputs = {"token_ids": batch["input_ids"], "segment_ids": batch["segment_ids"], "padding_mask": batch["input_mask"]}
    labels = np.arange(args.batch, dtype=np.int32) % args.num_labels
    dataset = tf.data.Dataset.from_tensors((inputs, labels)).repeat()
    resident = _resident_mb()
    model.fit(dataset, steps_per_epoch=2, verbose=0)  # traces the step
    clock = batch_end_clock()
    model.fit(dataset, steps_per_epoch=args.steps, verbose=0, callbacks=[clock])
    intervals = np.diff(clock.times)
    keras.mixed_precision.set_global_policy("float32")
    return {
        "mode": args.mode,
        "trainable_parameters": int(sum(np.prod(v.shape) for v in model.trainable_variables)),
        "parameters": int(sum(np.prod(v.shape) for v in model.weights)),
        "step_ms": 1e3 * float(np.median(intervals)),
        "peak_rss_mb": peak_rss_mb(),
        "rss_before_training_mb": resident,
    }


def run_mode(args, mode):
    command = [
        sys.executable,
        os.path.abspath(__file__),
        f"--mode={mode}",
        f"--preset={args.preset}",
        f"--batch={args.batch}",
        f"--seq_len={args.seq_len}",
        f"--num_labels={args.num_labels}",
        f"--rank={args.rank}",
        f"--steps={args.steps}",
        f"--mixed_precision={args.mixed_precision}",
    ]
    if args.alpha is not None:
        command.append(f"--alpha={args.alpha}")
    result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    lines = result.stdout.strip().splitlines()
    if result.returncode or not lines:
        sys.exit(f"{mode} failed (exit {result.returncode}):\n" + "\n".join(result.stderr.strip().splitlines()[-8:]))
    return json.loads(lines[-1])


def main(argv=None):
    args = parse_args(argv)
    if args.mode:
        print(json.dumps(measure(args)))
        return
    start = time.perf_counter()
    runs = {mode: [] for mode in MODES}
    for repeat in range(args.repeats):
        for mode in MODES:
            runs[mode].append(run_mode(args, mode))
            print(f"repeat {repeat} {mode}: {json.dumps(runs[mode][-1])}", file=sys.stderr, flush=True)
    figures = {mode: {name: statistics.median(run[name] for run in runs[mode]) for name in FIGURES} for mode in MODES}
    for mode in MODES:  # the same in every repeat
        figures[mode]["trainable_parameters"] = runs[mode][0]["trainable_parameters"]
    result = {
        "preset": args.preset,
        "batch": args.batch,
        "seq_len": args.seq_len,
        "rank": args.rank,
        "alpha": args.alpha,
        "steps": args.steps,
        "repeats": args.repeats,
        "mixed_precision": args.mixed_precision,
        "parameters": runs["full"][0]["parameters"],
        "cpu_count": len(os.sched_getaffinity(0)),
        **{f"{mode}_{name}": figures[mode][name] for mode in MODES for name in FIGURES},
        "step_ms_per_repeat": {mode: [run["step_ms"] for run in runs[mode]] for mode in MODES},
        "trainable_ratio": figures["lora"]["trainable_parameters"] / figures["full"]["trainable_parameters"],
        "step_ratio": figures["lora"]["step_ms"] / figures["full"]["step_ms"],
        "peak_rss_ratio": figures["lora"]["peak_rss_mb"] / figures["full"]["peak_rss_mb"],
    }
    result["seconds"] = time.perf_counter() - start
    for mode in MODES:
        print(
            f"{mode:>5}: {figures[mode]['trainable_parameters']:>11,} trainable, "
            f"{figures[mode]['step_ms']:8.1f} ms/step, peak RSS {figures[mode]['peak_rss_mb']:7.0f} MiB "
            f"({figures[mode]['rss_before_training_mb']:.0f} before training)"
        )
    print(
        f"LoRA / full: trainable {result['trainable_ratio']:.4f}, step time {result['step_ratio']:.3f}, "
        f"peak RSS {result['peak_rss_ratio']:.3f}"
    )
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
