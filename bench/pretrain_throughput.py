"""Pre-training throughput of ElectraPretrainer against the machine's matmul peak and a Hugging Face / PyTorch peer.

    .venv/bin/python bench/pretrain_throughput.py --preset=small --batch=32 --seq_len=128 --steps=20
    .venv/bin/python bench/pretrain_throughput.py --preset=tiny --steps=2 --warmup_steps=1 --peer=off   # smoke run

Our side: Keras `fit` steps of ElectraPretrainer (the project's train_step: masking, Gumbel sampling, generator +
discriminator loss, clipping, AdamW-with-weight-decay) on one fixed random batch: `--repeats` windows of `--steps`
after `--warmup_steps` (the first of which compiles), each timed at batch ends inside a `fit`, so that fit's set-up
and teardown stay out of the figures (`fit_teardown_s` reports the longest teardown). `--baseline_repo=DIR` also
times another checkout of this project (e.g. `git worktree add /tmp/before <commit>`) in alternating windows of the
same run: a second process imports `electra_tf` from DIR, builds the same model on the same batch and runs its windows
when this one waits, so both see the same host (`ratio_vs_baseline` = baseline seconds/step over ours: above 1, this
checkout is faster). `--gradient_accumulation_steps=N` runs each step as N micro-batches; with `--baseline_repo=.
--baseline_gradient_accumulation_steps=1` the baseline is this checkout on whole batches, and `ratio_vs_baseline` is
what accumulation costs (below 1: slower). Prints sequences/s, tokens/s, seconds/step, the first step's loss beside
the value a fresh model should have (ln V + 50 ln 2 = 44.98 for the BERT vocabulary), model FLOP/s, the dense matmul
peak measured by TensorFlow in the same run (float32 and bfloat16), MFU against the peak of the chosen precision, and
this process's peak RSS (VmHWM, i.e. ru_maxrss of its own address space).

FLOPs: `model_flops_per_step` is the reference accounting of `electra_tf.flops.pretraining_flops` (embedding lookups
as one-hot matmuls, backward = forward, element-wise costs included; the figures behind the paper's compute numbers),
with the generator's output layer at the step's real max_predictions slots; `mfu` uses it.
`matmul_flops_per_step` / `mfu_matmul_only` count the dense matmuls alone, with backward = 2 x forward
(`electra_tf.flops.pretraining_matmul_flops`). See docs/PERFORMANCE.md.

The peer (`--peer=auto|on|off`): after our measurement has finished and our model has been freed, `bench/hf_peer.py`
runs in a separate interpreter (`--peer_python`, default `$ELECTRA_PEER_PYTHON`, else `<repo>/.venv-peer/bin/python`;
create it with `python3.11 -m venv .venv-peer && .venv-peer/bin/pip install torch==2.13.0 transformers numpy`).
It does the same step with Hugging Face's ElectraForMaskedLM + ElectraForPreTraining at the preset's sizes (shared
embeddings, tied output table, 15 % masking with 85 % [MASK], float32 Gumbel-max sampling, loss mlm + 50 x disc,
backward, clipping to 1.0, AdamW) on the same number of threads as TensorFlow, with the same step counts;
under `--mixed_precision=mixed_bfloat16` its forward passes run under torch.autocast("cpu", dtype=torch.bfloat16).
Its generator computes vocabulary logits at every position, as ElectraForMaskedLM does (`--peer_mlm_positions=all`);
`--peer_mlm_positions=masked` applies the same modules at the chosen positions only, the work our generator does.
Its seq/s, ratio ours/peer, first loss, own peak RSS, torch's matmul peak on this machine and the peer's MFU (our model
FLOPs over its time and torch's peak) are added, and the ratio split into its two factors, `matmul_peak_ratio_vs_peer`
(oneDNN's GEMM peak over torch's on this host) x `mfu_ratio_vs_peer` (our MFU over the peer's). torch is never
imported into this process.

The last line is one JSON object.
"""

import argparse
import functools
import gc
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import peer_runner
from bench_tf import batch_end_clock, cpu_threads, matmul_peak
from bench_utils import peak_rss_mb, random_batch


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--mixed_precision", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--jit_compile", action="store_true")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="Time this many consecutive windows of --steps steps and report the median window.",
    )
    parser.add_argument(
        "--initial_loss_seeds",
        type=int,
        default=0,
        help="Also report the mean step-0 loss (forward only) over this many initialisations, in the "
        "run's precision: one initialisation varies by about 2.5 around ln V + 50 ln 2.",
    )
    parser.add_argument("--seed", type=int, default=0, help="Initialisation seed of the timed model.")
    parser.add_argument(
        "--gradient_accumulation_steps",
        type=int,
        default=1,
        help="Micro-batches per step (each of --batch / N examples), as electra-pretrain's flag.",
    )
    parser.add_argument(
        "--baseline_gradient_accumulation_steps",
        type=int,
        default=None,
        help="The --baseline_repo side's micro-batches per step (default: as ours); with "
        "--baseline_repo=. this measures what accumulation costs against whole batches.",
    )
    parser.add_argument(
        "--baseline_repo",
        default=None,
        help="Another checkout of this project to time in alternating windows of the same run (its "
        "own process); reports baseline_seconds_per_step and ratio_vs_baseline.",
    )
    parser.add_argument("--serve_windows", action="store_true", help=argparse.SUPPRESS)  # the baseline's process
    parser.add_argument(
        "--matmul_peak_size",
        type=int,
        default=2048,
        help="Side of the square matrices of the matmul-peak measurement (at least 1: the MFU figures need the peak).",
    )
    peer_runner.add_peer_flags(parser)
    parser.add_argument(
        "--peer_mlm_positions",
        default="all",
        choices=["all", "masked"],
        help="all: the peer's generator is ElectraForMaskedLM's own forward (vocabulary logits at "
        "every position); masked: its modules applied at the chosen positions only, as ours.",
    )
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup_steps < 1:
        parser.error("--steps and --warmup_steps must be at least 1 (the first warm-up step compiles)")
    if args.matmul_peak_size < 1:
        parser.error(
            f"--matmul_peak_size={args.matmul_peak_size} must be at least 1: the MFU figures divide by the peak"
        )
    if args.baseline_gradient_accumulation_steps is None:
        args.baseline_gradient_accumulation_steps = args.gradient_accumulation_steps
    for name in ("gradient_accumulation_steps", "baseline_gradient_accumulation_steps"):
        if getattr(args, name) < 1 or args.batch % getattr(args, name):
            parser.error(f"--{name}={getattr(args, name)} must be at least 1 and divide --batch={args.batch}")
    return args


def timed_model(args):
    """(model, dataset, config, first step's loss): the ElectraPretrainer of the `electra_tf` on sys.path, compiled,
    one step trained on the fixed random batch."""
    import keras
    import tensorflow as tf

    from electra_tf.config import ElectraConfig
    from electra_tf.data.keras_input import keras_input_options
    from electra_tf.training.distribution import set_precision
    from electra_tf.training.optimizers import create_optimizer

    try:
        from electra_tf.training.pretrainer import ElectraPretrainer
    except ImportError:  # a --baseline_repo from before the training step moved to training/
        from electra_tf.models.pretrainer import ElectraPretrainer

    set_precision(args.mixed_precision)
    config = ElectraConfig.from_preset(args.preset)
    batch = random_batch(args.batch, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
    dataset = tf.data.Dataset.from_tensors(batch).repeat().prefetch(2).with_options(keras_input_options())
    keras.utils.set_random_seed(args.seed)
    # Only when asked: a --baseline_repo from before accumulation existed takes no such argument.
    accumulation = (
        {"gradient_accumulation_steps": args.gradient_accumulation_steps}
        if args.gradient_accumulation_steps > 1
        else {}
    )
    model = ElectraPretrainer(config, max_seq_length=args.seq_len, **accumulation)
    model.compile(optimizer=create_optimizer("adam_weight_decay", 1e-4), jit_compile=args.jit_compile)
    first = model.fit(dataset, steps_per_epoch=1, shuffle=False, verbose=0).history["loss"][0]
    return model, dataset, config, float(first)


def time_window(model, dataset, untimed, steps):
    """(seconds per step, fit's teardown) of one `fit` timed at batch ends after `untimed` steps."""
    clock = batch_end_clock()
    model.fit(dataset, steps_per_epoch=untimed + steps, shuffle=False, verbose=0, callbacks=[clock])
    return (clock.times[-1] - clock.times[untimed - 1]) / steps, time.perf_counter() - clock.times[-1]


class BaselineProcess:
    """The same model of another checkout (`--baseline_repo`) in its own process, timing a window on request."""

    def __init__(self, args):
        import subprocess

        argv = [
            sys.executable,
            os.path.abspath(__file__),
            "--serve_windows",
            f"--baseline_repo={args.baseline_repo}",
            f"--preset={args.preset}",
            f"--batch={args.batch}",
            f"--seq_len={args.seq_len}",
            f"--mixed_precision={args.mixed_precision}",
            f"--seed={args.seed}",
            f"--gradient_accumulation_steps={args.baseline_gradient_accumulation_steps}",
        ]
        if args.jit_compile:
            argv.append("--jit_compile")
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        )
        self.first_step_loss = self._reply()["first_step_loss"]

    def _reply(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the --baseline_repo process ended (exit {self.process.wait()}); run it alone to see why"
            )
        return json.loads(line)

    def window(self, untimed, steps):
        self.process.stdin.write(f"{untimed} {steps}\n")
        self.process.stdin.flush()
        reply = self._reply()
        return reply["seconds_per_step"], reply["teardown"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def serve_windows(args):
    """The baseline side: import electra_tf from --baseline_repo, then time the windows the parent asks for."""
    sys.path.insert(0, os.path.abspath(args.baseline_repo))
    model, dataset, _, first = timed_model(args)
    print(json.dumps({"first_step_loss": first}), flush=True)
    for line in sys.stdin:
        untimed, steps = map(int, line.split())
        seconds, teardown = time_window(model, dataset, untimed, steps)
        print(json.dumps({"seconds_per_step": seconds, "teardown": teardown}), flush=True)


def measure_ours(args):
    import keras

    from electra_tf.flops import pretraining_flops, pretraining_matmul_flops

    baseline = BaselineProcess(args) if args.baseline_repo else None
    model, dataset, config, first = timed_model(args)
    batch = next(iter(dataset))
    initial_losses = [initial_loss(config, args.seq_len, batch, seed) for seed in range(args.initial_loss_seeds)]
    runners = {"ours": functools.partial(time_window, model, dataset, steps=args.steps)}
    if baseline is not None:
        runners["baseline"] = functools.partial(baseline.window, steps=args.steps)
    # Each window is one `fit` timed at batch ends after its untimed first step(s) (the rest of the warm-up in the
    # first window), so nothing of fit's set-up or teardown enters it; with a baseline the two alternate.
    windows = {name: [] for name in runners}
    teardowns = []
    for repeat in range(args.repeats):
        untimed = max(args.warmup_steps - 1, 1) if repeat == 0 else 1
        for name in list(runners) if repeat % 2 == 0 else list(runners)[::-1]:
            seconds, teardown = runners[name](untimed)
            windows[name].append(seconds)
            if name == "ours":
                teardowns.append(teardown)
    seconds_per_step = statistics.median(windows["ours"])
    # FLOPs with the step's real number of prediction slots rather than the reference's fixed 15.625 %.
    output_fraction = model.max_predictions / args.seq_len
    result = {
        "seconds_per_step": seconds_per_step,
        "seconds_per_step_windows": windows["ours"],
        "first_step_loss": first,
        "expected_first_step_loss": math.log(config.vocab_size) + config.disc_weight * math.log(2.0),
        "step_flops": pretraining_flops(config, args.seq_len, args.batch, output_fraction=output_fraction),
        "matmul_flops": pretraining_matmul_flops(config, args.seq_len, args.batch, output_fraction=output_fraction),
        "peak_rss_mb": peak_rss_mb(),
        "fit_teardown_s": max(teardowns),
        "config": config,
    }
    if baseline is not None:
        baseline.close()
        result.update(
            baseline_seconds_per_step=statistics.median(windows["baseline"]),
            baseline_windows=windows["baseline"],
            baseline_first_step_loss=baseline.first_step_loss,
            baseline_repo=args.baseline_repo,
            baseline_gradient_accumulation_steps=args.baseline_gradient_accumulation_steps,
            ratio_vs_baseline=statistics.median(windows["baseline"]) / seconds_per_step,
        )
    if initial_losses:
        result["initial_loss_mean"] = sum(initial_losses) / len(initial_losses)
        result["initial_losses"] = initial_losses
    # The next configuration measured in this process (bench/pretrain_scaling.py) starts without this model.
    del runners, model, dataset, batch
    keras.mixed_precision.set_global_policy("float32")
    keras.backend.clear_session()
    gc.collect()
    return result


def initial_loss(config, seq_len, batch, seed):
    """The step-0 loss (forward, training=False) of a model initialised with `seed`, in the current dtype policy."""
    import keras
    import tensorflow as tf

    from electra_tf.training.pretrainer import ElectraPretrainer

    keras.utils.set_random_seed(seed)
    model = ElectraPretrainer(config, max_seq_length=seq_len)

    @tf.function  # as in training
    def loss(features):
        stats = model.pretraining_statistics(model.pretraining_outputs(features, step=0))
        return model.pretraining_loss(stats, stats)

    return float(loss(batch))


def measure_peer(args, config, threads):
    """The same step with Hugging Face transformers on PyTorch, in the peer interpreter (bench/hf_peer.py)."""
    settings = dict(
        peer_runner.peer_sizes(config),
        mode="train",
        batch=str(args.batch),
        seq_len=args.seq_len,
        steps=args.steps,
        warmup_steps=args.warmup_steps,
        threads=threads,
        autocast="bfloat16" if args.mixed_precision == "mixed_bfloat16" else "none",
        mlm_positions=args.peer_mlm_positions,
        matmul_peak_size=args.matmul_peak_size,
    )
    return peer_runner.run_peer(args.peer_python, settings, timeout=args.peer_timeout)


def main(argv=None):
    args = parse_args(argv)
    if args.serve_windows:
        return serve_windows(args)
    run_peer = peer_runner.resolve_peer(args)  # before measuring, so --peer=on fails at once
    import tensorflow as tf

    threads = cpu_threads()

    def measure_peaks():
        return {
            "float32": matmul_peak(tf.float32, args.matmul_peak_size),
            "mixed_bfloat16": matmul_peak(tf.bfloat16, args.matmul_peak_size),
        }

    # Measured before and after the model and the best kept: a host that is briefly slower during one measurement
    # must not lower the peak and so inflate the MFU.
    peak_before = measure_peaks()
    ours = measure_ours(args)
    peak = {name: max(value, peak_before[name]) for name, value in measure_peaks().items()}
    model_flops_per_s = ours["step_flops"] / ours["seconds_per_step"]
    matmul_flops_per_s = ours["matmul_flops"] / ours["seconds_per_step"]
    result = {
        "preset": args.preset,
        "batch": args.batch,
        "seq_len": args.seq_len,
        "mixed_precision": args.mixed_precision,
        "jit_compile": args.jit_compile,
        "steps": args.steps,
        "warmup_steps": args.warmup_steps,
        "seconds_per_step": ours["seconds_per_step"],
        "seq_per_s": args.batch / ours["seconds_per_step"],
        "tokens_per_s": args.batch * args.seq_len / ours["seconds_per_step"],
        "model_flops_per_step": ours["step_flops"],
        "model_flops_per_s": model_flops_per_s,
        "matmul_flops_per_step": ours["matmul_flops"],
        "matmul_flops_per_s": matmul_flops_per_s,
        "matmul_peak_flops_per_s": peak[args.mixed_precision],
        "matmul_peak_float32": peak["float32"],
        "matmul_peak_bfloat16": peak["mixed_bfloat16"],
        "mfu": model_flops_per_s / peak[args.mixed_precision],
        "mfu_matmul_only": matmul_flops_per_s / peak[args.mixed_precision],
        "first_step_loss": ours["first_step_loss"],
        "expected_first_step_loss": ours["expected_first_step_loss"],
        "threads": threads,
        "peak_rss_mb": ours["peak_rss_mb"],
        "repeats": args.repeats,
        "seconds_per_step_windows": ours["seconds_per_step_windows"],
        "seed": args.seed,
        "fit_teardown_s": ours["fit_teardown_s"],
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
    }
    for name in (
        "initial_loss_mean",
        "initial_losses",
        "baseline_seconds_per_step",
        "baseline_windows",
        "baseline_first_step_loss",
        "baseline_repo",
        "baseline_gradient_accumulation_steps",
        "ratio_vs_baseline",
    ):
        if name in ours:
            result[name] = ours[name]
    if run_peer:
        try:
            peer = measure_peer(args, ours["config"], threads)
        except (RuntimeError, OSError, ValueError) as error:  # ValueError: unparsable output
            if args.peer == "on":
                sys.exit(f"--peer=on: {error}")
            print(f"peer skipped: {error}", file=sys.stderr)
            result["peer_error"] = str(error)
        else:
            # The same model FLOPs over the peer's time and torch's own matmul peak: how well each framework uses the
            # kernels it has (torch's CPU GEMM can be much slower than TensorFlow's oneDNN one).
            peer_mfu = ours["step_flops"] / peer["seconds_per_step"] / peer["matmul_peak_flops_per_s"]
            result.update(
                peer_seq_per_s=peer["seq_per_s"],
                ratio_vs_peer=result["seq_per_s"] / peer["seq_per_s"],
                peer_seconds_per_step=peer["seconds_per_step"],
                peer_first_step_loss=peer["first_step_loss"],
                peer_peak_rss_mb=peer["peak_rss_mb"],
                peer_threads=peer["threads"],
                peer_precision="bfloat16 autocast" if peer["autocast"] == "bfloat16" else "float32",
                peer_mlm_positions=args.peer_mlm_positions,
                peer_versions=peer["versions"],
                peer_python=args.peer_python,
                peer_matmul_peak_flops_per_s=peer["matmul_peak_flops_per_s"],
                peer_mfu=peer_mfu,
                # ratio_vs_peer = matmul_peak_ratio_vs_peer x mfu_ratio_vs_peer: how much faster oneDNN's GEMM is
                # than torch's on this host, times how much more of its own peak our step uses. The first factor
                # changes from host to host (docs/PERFORMANCE.md), so the ratio does too.
                matmul_peak_ratio_vs_peer=peak[args.mixed_precision] / peer["matmul_peak_flops_per_s"],
                mfu_ratio_vs_peer=result["mfu"] / peer_mfu,
            )
    for name in (
        "seq_per_s",
        "tokens_per_s",
        "seconds_per_step",
        "first_step_loss",
        "initial_loss_mean",
        "expected_first_step_loss",
        "model_flops_per_s",
        "matmul_peak_flops_per_s",
        "mfu",
        "mfu_matmul_only",
        "peak_rss_mb",
        "peer_seq_per_s",
        "ratio_vs_peer",
        "peer_first_step_loss",
        "peer_peak_rss_mb",
        "peer_precision",
        "peer_matmul_peak_flops_per_s",
        "peer_mfu",
        "matmul_peak_ratio_vs_peer",
        "mfu_ratio_vs_peer",
        "baseline_seconds_per_step",
        "ratio_vs_baseline",
    ):
        if name in result:
            value = result[name]
            print(f"{name:>24}: {value:.4g}" if isinstance(value, float) else f"{name:>24}: {value}")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
