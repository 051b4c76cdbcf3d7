"""Where a fine-tuning step's time goes at one batch width, against the dense GEMMs the step cannot do without.

    .venv/bin/python bench/finetune_step_breakdown.py --preset=small --batch=32 --width=14
    .venv/bin/python bench/finetune_step_breakdown.py --preset=tiny --width=8 --repeats=2   # smoke run

`ElectraTextClassifier` at the preset's sizes (random weights, random token ids, no padding) with the reference's
fine-tuning optimizer (`finetune.optimization.create_finetuning_optimizer`), each part its own `tf.function`, timed
over `--repeats` calls after two untimed ones:
- `forward_backward_ms`: the loss and the gradients of every trainable variable;
- `optimizer_ms`: the optimizer's update of every variable from fixed gradients;
- `step_ms`: both in one function, as a training step runs them (the two may overlap);
- `dense_gemm_ms`: the step's dense matmuls alone, at the same number of tokens (batch x width): per Transformer
  layer the query/key/value, attention-output, intermediate and output projections, each forward, input gradient and
  kernel gradient, plus the embedding projection; the same float32 or bfloat16 operands as the step, in one
  `tf.function`. The last layer's query, attention-output and feed-forward projections are those of [CLS] alone, as
  the classifier's training step computes them (`dense_gemm_shapes`). The attention's per-head batch matmuls and the
  classifier are left out.

With `--jit_compile` the three parts are each compiled whole by XLA (`tf.function(jit_compile=True)`, what
`compile(jit_compile=True)` does to a training step; fine-tuning leaves it off on CPU), their matmuls then XLA's own;
`dense_gemm_ms` stays TensorFlow's kernels, the bound the uncompiled step is measured against.

`step_over_dense_gemm` is `step_ms / dense_gemm_ms`: how far the step is from the bound that its matmuls set on this
host, the rest being element-wise kernels, attention, random numbers, the optimizer's memory traffic and dispatch.
Medians over `--windows` windows.

With `--profile_calls=N`, TensorFlow's profiler then traces N calls of `forward_backward` and N of the optimizer's
update and prints where each spends its time by kind of op: a TensorFlow kernel's type (`_MklMatMul`,
`StatelessRandomUniformV2`, ...), an XLA kernel's name (the fused element-wise chains of `electra_tf.layers.fused_ops`
and the optimizer's compiled update appear as `xla:<fusion>`), and the executor's own time between kernels
(`ExecutorState::Process` and the like: dispatch). Each figure is the kind's self time (its events' time less that of
the events nested in them) summed over the compute threads, per call: with several threads the sum can exceed the
call's wall time. The last line is one JSON object (with `profile` when traced).

The peer (`--peer=auto|on|off`, interpreter as `bench/finetune_throughput.py`'s): `bench/hf_peer.py
--mode=finetune_breakdown`, Hugging Face's ElectraForSequenceClassification at the same sizes with AdamW and
clipping, timed the same way at the same batch, width, threads and dense GEMM shapes, and profiled by torch's profiler
with `--profile_calls` (self time of each op on the calling thread). Its figures are under `peer` in the JSON line,
with `peer_over_ours_*`: the peer's time over ours for each part.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import peer_runner
from bench_utils import median_window_ms

WARMUP_CALLS = 2  # untimed calls of each part before its windows, on both sides


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=14, help="Tokens per example (the batch width).")
    parser.add_argument("--num_labels", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20, help="Calls per timing window.")
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--mixed_precision", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument(
        "--jit_compile",
        action="store_true",
        help="Compile forward + backward, the update and the step each whole with XLA (fine-tuning does not).",
    )
    parser.add_argument(
        "--profile_calls", type=int, default=0, help="Trace this many calls of each part with TensorFlow's profiler."
    )
    parser.add_argument("--profile_top", type=int, default=25, help="Kinds of op printed per traced part.")
    peer_runner.add_peer_flags(parser)
    args = parser.parse_args(argv)
    if args.width < 2 or args.batch < 1 or args.repeats < 1 or args.windows < 1 or args.profile_calls < 0:
        parser.error(
            "--width must be at least 2, --batch, --repeats and --windows at least 1, --profile_calls at least 0"
        )
    return args


def finish(outputs):
    """Waits for `outputs` (a nest of tensors) to be computed."""
    import tensorflow as tf

    for tensor in tf.nest.flatten(outputs, expand_composites=True):
        if tensor is not None:
            tensor.numpy()


def median_ms(function, args, *inputs):
    """Median over windows of the mean milliseconds per call of `function(*inputs)`."""
    return median_window_ms(lambda: function(*inputs), args.windows, args.repeats, WARMUP_CALLS, finish)


def op_kind(name):
    """The kind of one traced event: a TensorFlow kernel's type ("scope/op:Type" -> "Type"), an XLA kernel's name
    without its numeric suffix ("multiply_add_fusion.1" -> "xla:multiply_add_fusion"), else the event's name."""
    if ":" in name and not name.startswith(("ExecutorState", "CpuExecutable", "ThunkExecutor")):
        return name.rsplit(":", 1)[1]
    if "fusion" in name or name.startswith("wrapped_"):
        return "xla:" + re.sub(r"\.\d+$", "", name)
    return name


def self_times(events):
    """[(name, self picoseconds)] of one thread's events [(name, start, duration)]: each event's duration less the
    durations of the events directly nested in it."""
    result, stack = [], []  # stack: [name, end, self time]
    for name, start, duration in sorted(events, key=lambda event: (event[1], -event[2])):
        while stack and stack[-1][1] <= start:
            result.append((stack[-1][0], stack.pop()[2]))
        if stack:
            stack[-1][2] -= duration
        stack.append([name, start + duration, duration])
    result.extend((name, own) for name, _, own in stack)
    return result


def read_trace(logdir):
    """{kind: [milliseconds, events]} summed over the compute threads of the trace TensorFlow's profiler wrote."""
    import glob

    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    totals = {}
    for path in glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True):
        space = xplane_pb2.XSpace()
        with open(path, "rb") as handle:
            space.ParseFromString(handle.read())
        for plane in space.planes:
            for line in plane.lines:
                if line.name == "python":  # the calling thread: it waits for the compute threads
                    continue
                events = [(plane.event_metadata[e.metadata_id].name, e.offset_ps, e.duration_ps) for e in line.events]
                for name, own in self_times(events):
                    entry = totals.setdefault(op_kind(name), [0.0, 0])
                    entry[0] += own / 1e9
                    entry[1] += 1
    return totals


def profile_per_call(function, calls, *inputs):
    """{kind: {"ms": milliseconds per call, "count": events per call}} of `calls` traced calls of `function`."""
    import tempfile

    import tensorflow as tf

    with tempfile.TemporaryDirectory(prefix="finetune_step_profile_") as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(calls):
            outputs = function(*inputs)
        finish(outputs)
        tf.profiler.experimental.stop()
        totals = read_trace(logdir)
    return {kind: {"ms": ms / calls, "count": count / calls} for kind, (ms, count) in totals.items()}


OUR_PROFILE = ("ms", "of thread time per call, by kind of op (self time; events per call)")
PEER_PROFILE = ("self_cpu_ms", "of self time per call on the calling thread, by op (calls per call)")


def print_profile(label, profile, top, reading=OUR_PROFILE):
    """`label`'s total, then its `top` entries by time; `reading` is (the key of an entry's milliseconds, what the
    total is)."""
    key, what = reading
    total = sum(entry[key] for entry in profile.values())
    print(f"{label}: {total:.1f} ms {what}")
    for name, entry in sorted(profile.items(), key=lambda item: -item[1][key])[:top]:
        print(f"  {entry[key]:8.2f} ms {100 * entry[key] / total:5.1f} % {entry['count']:7.1f}  {name}")


PARTS = ("forward_backward_ms", "optimizer_ms", "step_ms", "dense_gemm_ms")


def measure_peer(args, config, shapes):
    """The peer's breakdown (`bench/hf_peer.py --mode=finetune_breakdown`) at `args`' batch, width and timing, the
    sizes of `config` and the dense GEMMs `shapes`, with as many threads as TensorFlow's."""
    from bench_tf import cpu_threads

    settings = dict(
        peer_runner.peer_sizes(config),
        mode="finetune_breakdown",
        num_labels=args.num_labels,
        batch=str(args.batch),
        seq_len=args.width,
        steps=args.repeats,
        warmup_steps=WARMUP_CALLS,
        windows=args.windows,
        gemm_shapes=json.dumps(shapes),
        profile_calls=args.profile_calls,
        threads=cpu_threads(),
        matmul_peak_size=0,
        autocast="bfloat16" if args.mixed_precision == "mixed_bfloat16" else "none",
    )
    peer = peer_runner.run_peer(args.peer_python, settings, timeout=args.peer_timeout)
    peer["step_over_dense_gemm"] = peer["step_ms"] / peer["dense_gemm_ms"]
    return peer


def dense_gemm_shapes(config, batch, width, cls_alone_in_last_layer=True):
    """(m, k, n) of every dense GEMM of one training step at `batch` sequences of `width` tokens: forward, input
    gradient, kernel gradient of each projection. With `cls_alone_in_last_layer` (our classifier's training step,
    `ElectraTextClassifier.call`) the last layer projects keys and values of every token and computes the query, the
    attention output and the feed-forward block for [CLS] alone; without it (the peer) every layer does all tokens."""
    hidden, intermediate, tokens = config.hidden_size, config.intermediate_size, batch * width
    layer = [(tokens, hidden, 3 * hidden), (tokens, hidden, hidden), (tokens, hidden, intermediate)]
    layer.append((tokens, intermediate, hidden))
    projections = layer * config.num_layers
    if cls_alone_in_last_layer:
        projections[-4:] = [(tokens, hidden, 2 * hidden), (batch, hidden, hidden), (batch, hidden, hidden)]
        projections += [(batch, hidden, intermediate), (batch, intermediate, hidden)]
    if config.embedding_size != hidden:
        projections.append((tokens, config.embedding_size, hidden))
    return [shape for m, k, n in projections for shape in ((m, k, n), (m, n, k), (k, m, n))]


def main(argv=None):
    args = parse_args(argv)
    run_peer = peer_runner.resolve_peer(args)  # before measuring, so --peer=on fails at once
    import keras
    import tensorflow as tf

    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator
    from electra_tf.training.distribution import set_precision
    from finetune.models import ElectraTextClassifier
    from finetune.optimization import create_finetuning_optimizer

    set_precision(args.mixed_precision)
    config = ElectraConfig.from_preset(args.preset)
    keras.utils.set_random_seed(0)
    model = ElectraTextClassifier(build_discriminator(config).backbone, num_classes=args.num_labels)
    optimizer = create_finetuning_optimizer(model.num_layers, 1e-4, 1000)
    loss_function = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    shape = [args.batch, args.width]
    inputs = {
        "token_ids": tf.random.uniform(shape, 1, config.vocab_size, tf.int32),
        "segment_ids": tf.zeros(shape, tf.int32),
        "padding_mask": tf.ones(shape, tf.int32),
    }
    labels = tf.random.uniform([args.batch], 0, args.num_labels, tf.int32)
    model(inputs)
    variables = model.trainable_variables
    optimizer.build(variables)

    compiled = tf.function(jit_compile=True) if args.jit_compile else tf.function

    def gradients_of(inputs, labels):
        with tf.GradientTape() as tape:
            loss = loss_function(labels, model(inputs, training=True))
        return tape.gradient(loss, variables)

    forward_backward = compiled(gradients_of)

    @compiled
    def update(gradients):
        optimizer.apply(gradients, variables)
        return optimizer.iterations

    # The step traces the pass itself rather than calling `forward_backward`: a compiled function called inside
    # another compiled one made XLA's step 62x slower than its two parts (21,185 ms against 287.6 + 50.5 ms, width 14).
    @compiled
    def step(inputs, labels):
        optimizer.apply(gradients_of(inputs, labels), variables)
        return optimizer.iterations

    gemm_dtype = tf.bfloat16 if args.mixed_precision == "mixed_bfloat16" else tf.float32
    shapes = dense_gemm_shapes(config, args.batch, args.width)
    operands = [
        (
            tf.Variable(tf.random.normal([m, k], dtype=gemm_dtype)),
            tf.Variable(tf.random.normal([k, n], dtype=gemm_dtype)),
        )
        for m, k, n in shapes
    ]

    @tf.function
    def dense_gemms():
        # Variables, not constants: Grappler would fold matmuls of constants away at trace time.
        return tf.add_n([tf.cast(tf.reduce_sum(tf.matmul(a, b)), tf.float32) for a, b in operands])

    gradients = forward_backward(inputs, labels)
    result = {
        "preset": args.preset,
        "batch": args.batch,
        "width": args.width,
        "mixed_precision": args.mixed_precision,
        "jit_compile": args.jit_compile,
        "trainable_variables": len(variables),
        "forward_backward_ms": median_ms(forward_backward, args, inputs, labels),
        "optimizer_ms": median_ms(update, args, gradients),
        "step_ms": median_ms(step, args, inputs, labels),
        "dense_gemm_ms": median_ms(dense_gemms, args),
        "dense_gemm_flops": float(sum(2 * m * k * n for m, k, n in shapes)),
    }
    result["dense_gemm_flops_per_s"] = result["dense_gemm_flops"] / (result["dense_gemm_ms"] / 1e3)
    result["step_over_dense_gemm"] = result["step_ms"] / result["dense_gemm_ms"]
    if args.profile_calls:
        result["profile"] = {
            "forward_backward": profile_per_call(forward_backward, args.profile_calls, inputs, labels),
            "optimizer": profile_per_call(update, args.profile_calls, gradients),
        }
    keras.mixed_precision.set_global_policy("float32")
    if run_peer:
        result["peer"] = measure_peer(args, config, dense_gemm_shapes(config, args.batch, args.width, False))
        for part in PARTS:
            result[f"peer_over_ours_{part}"] = result["peer"][part] / result[part]
    for name in PARTS + ("step_over_dense_gemm",):
        print(f"{name:>22}: {result[name]:.4g}" + (f"   peer {result['peer'][name]:.4g}" if run_peer else ""))
    for part, profile in result.get("profile", {}).items():
        print_profile(part, profile, args.profile_top)
    for part, profile in result.get("peer", {}).get("profile", {}).items():
        print_profile(f"peer {part}", profile, args.profile_top, PEER_PROFILE)
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
