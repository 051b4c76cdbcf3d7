"""Fine-tuning throughput on real GLUE text: this project with the reference's padding, this project with
length-bucketed batches, and Hugging Face transformers with dynamic padding and `group_by_length`, in one run.

    .venv/bin/python bench/finetune_throughput.py --task=SST-2 --glue_dir=../shared/data/glue --preset=small
    # a smoke run:
    .venv/bin/python bench/finetune_throughput.py --task=RTE --glue_dir=... --preset=tiny --steps=2 --padded_steps=2

Our side: training steps (forward, backward, the fine-tuning optimizer of `finetune.optimization`) of
`ElectraTextClassifier` at the preset's sizes (random weights: the speed does not depend on them) in Keras `fit`, on
batches of a training epoch of `--task`'s train.tsv (tokenised with `--vocab_file`, cut to `--max_seq_length`), as
`finetune.glue.features.features_to_dataset` builds them for the runner: `--padded_steps` batches padded to the
maximum (`pad_to_max_length`) and `--steps` bucketed (`finetune.batching`). Both sides time batches spread over a
whole epoch (evenly spaced from its first batch to its last), so that their mean width is close to the epoch's: the
first batches of an epoch are not its average on either side (our buckets fill in order of their frequency and the
rare widths come last; the peer's sampler puts each megabatch's longest batches first). Ours run once untimed (the
first batch of each width: every shape traced) and once timed at batch ends, the first step of the timed pass left
out; examples per second count the examples of the timed batches. With `--concurrent_micro_batches=N` our step runs
each batch as N micro-batches at once (`compile(concurrent_micro_batches=N)`), TensorFlow's threads shared between them
(`electra_tf.training.distribution.share_threads_between_micro_batches`: intra-op threads / N per op); the peer keeps
its threads. `our_intra_inter_op_threads` records ours, and `matmul_peak_flops_per_s` is then one op's peak with
those threads.

The peer (`--peer=auto|on|off`, interpreter `--peer_python`, `$ELECTRA_PEER_PYTHON` or `<repo>/.venv-peer/bin/python`,
as `bench/pretrain_throughput.py`): `bench/hf_peer.py --mode=finetune` on the same encoded examples, with
ElectraForSequenceClassification at the same sizes, transformers' LengthGroupedSampler, batches padded to their
longest member, AdamW, the same batch size, steps and threads; under `--mixed_precision=mixed_bfloat16` its forward
runs under torch.autocast bfloat16.

Each run records its host, so that a figure can be read against it: `host` (CPU model, CPUs, load, the AVX-512 and
AMX extensions present) and each framework's dense matmul peak measured in the same run (`matmul_peak_flops_per_s`,
`peer_matmul_peak_flops_per_s`; float32, or bfloat16 under `--mixed_precision=mixed_bfloat16`).

The last line is one JSON object: `examples_per_s_padded`, `examples_per_s` (bucketed), `peer_examples_per_s`,
`speedup_vs_padded` (bucketed over padded) and `ratio_vs_peer` (bucketed over the peer), with the mean example length
and the timed batches' mean widths (`mean_batch_width`, `peer_mean_batch_width`), and `encode_train_seconds`: reading,
tokenising and packing the train split (`finetune.glue.features.encode_examples`, once per fine-tuning run).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import peer_runner
from bench_tf import batch_end_clock, cpu_threads, matmul_peak
from bench_utils import host_facts
from electra_tf.architecture import SIZES

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_VOCAB = os.path.join(os.path.dirname(REPO_ROOT), "shared", "data", "vocab", "bert-uncased-vocab.txt")
TASKS = ("SST-2", "MRPC", "RTE", "CoLA", "QNLI")
PEER_SIZES = SIZES + (
    "layer_norm_epsilon",
    "hidden_dropout",
    "attention_dropout",
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="SST-2", choices=TASKS)
    parser.add_argument("--glue_dir", required=True, help="Directory holding <TASK>/train.tsv.")
    parser.add_argument("--vocab_file", default=DEFAULT_VOCAB)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument(
        "--steps",
        type=int,
        default=480,
        help="Training steps timed on each side, bucketed and the peer, evenly spaced over an epoch: enough for their "
        "mean width to be within a few per cent of the epoch's.",
    )
    parser.add_argument(
        "--padded_steps", type=int, default=40, help="Training steps timed of ours padded to the maximum (one width)."
    )
    parser.add_argument("--warmup_steps", type=int, default=3, help="Untimed steps of the peer.")
    parser.add_argument("--seed", type=int, default=0, help="Shuffling seed of the epoch.")
    parser.add_argument("--mixed_precision", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="Threads of both sides (TensorFlow's intra-op pool, torch.set_num_threads); default: "
        "the CPUs this process may use. On a host busier than its cores, torch's OpenMP threads "
        "wait on each other for far longer than they compute: 1 keeps the comparison fair.",
    )
    parser.add_argument(
        "--concurrent_micro_batches",
        type=int,
        default=1,
        help="Our step's forward and backward passes as this many micro-batches at once "
        "(`compile(concurrent_micro_batches=...)`).",
    )
    parser.add_argument(
        "--matmul_peak_size",
        type=int,
        default=2048,
        help="Side of the square matmul that measures each framework's GEMM peak on this host, in this run (0: not "
        "measured). With the host facts it lets a figure be read against its host.",
    )
    peer_runner.add_peer_flags(parser)
    args = parser.parse_args(argv)
    if min(args.steps, args.padded_steps) < 2:
        parser.error("--steps and --padded_steps must be at least 2 (the first timed step is left out)")
    return args


def encoded_train_split(args):
    """GlueFeatures of `--task`'s training examples."""
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.glue.features import encode_examples
    from finetune.glue.readers import read_examples

    examples = read_examples(args.glue_dir, args.task, "train")
    return encode_examples(examples, ElectraTokenizer(args.vocab_file), args.task, args.max_seq_length)


def time_batches(model, dataset):
    """(examples per second, mean width of the timed batches) of one timed `fit` over `dataset`, after an untimed one
    over the first batch of each width (which traces and compiles the step for every shape)."""
    import numpy as np

    widths, sizes = zip(*((int(inputs["token_ids"].shape[1]), int(labels.shape[0])) for inputs, labels in dataset))
    first_of_width = sorted({width: index for index, width in reversed(list(enumerate(widths)))}.values())
    warmup = batches_at(dataset, first_of_width)
    model.fit(warmup, steps_per_epoch=len(first_of_width), shuffle=False, verbose=0)
    clock = batch_end_clock()
    model.fit(dataset, steps_per_epoch=len(sizes), shuffle=False, verbose=0, callbacks=[clock])
    seconds = clock.times[-1] - clock.times[0]
    return sum(sizes[1:]) / seconds, float(np.mean(widths[1:]))


def batches_at(dataset, positions):
    """The batches of `dataset` at the (0-based) `positions`, in their order."""
    import tensorflow as tf

    wanted = tf.constant(sorted(set(positions)), tf.int64)
    chosen = dataset.enumerate().filter(lambda index, _: tf.reduce_any(tf.equal(index, wanted)))
    return chosen.map(lambda _, batch: batch)


def spread_over_epoch(epoch, num_batches, count):
    """The `count` batches of `epoch` (a dataset of `num_batches` batches) at evenly spaced positions from its first
    to its last: the batches of rare widths, and every bucket's last, partial batch, come at an epoch's end."""
    return batches_at(epoch, [index * num_batches // count for index in range(count)])


def measure_ours(args, features):
    import keras

    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator
    from electra_tf.training.distribution import set_precision
    from finetune.batching import num_shuffled_batches
    from finetune.glue.features import features_to_dataset
    from finetune.glue.tasks import glue_task_spec
    from finetune.models import ElectraTextClassifier
    from finetune.optimization import create_finetuning_optimizer
    from finetune.trial_state import training_batches

    set_precision(args.mixed_precision)
    config = ElectraConfig.from_preset(args.preset)
    keras.utils.set_random_seed(args.seed)
    model = ElectraTextClassifier(
        build_discriminator(config).backbone, num_classes=glue_task_spec(args.task).num_labels
    )
    model.compile(
        optimizer=create_finetuning_optimizer(model.num_layers, 1e-4, 10 * args.steps),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        concurrent_micro_batches=args.concurrent_micro_batches,
    )
    result = {}
    for name, padded, steps in (("padded", True, args.padded_steps), ("bucketed", False, args.steps)):
        examples = features_to_dataset(features)
        epoch = training_batches(examples, args.batch, args.seed, 0, 1, pad_to_max_length=padded)
        num_batches = num_shuffled_batches(examples, args.batch, pad_to_max_length=padded)
        result[name] = time_batches(model, spread_over_epoch(epoch, num_batches, steps).cache())
    keras.mixed_precision.set_global_policy("float32")
    return config, result


def measure_peer(args, config, features, threads):
    import numpy as np

    from finetune.glue.tasks import glue_task_spec

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "features.npz")
        np.savez(
            path,
            input_ids=features.input_ids,
            input_mask=features.input_mask,
            segment_ids=features.segment_ids,
            labels=features.label_ids,
        )
        # The discriminator's sizes: hf_peer.py's flags of the same names.
        sizes = {name: getattr(config, name) for name in PEER_SIZES}
        settings = dict(
            sizes,
            mode="finetune",
            features=path,
            num_labels=glue_task_spec(args.task).num_labels,
            batch=str(args.batch),
            seq_len=args.max_seq_length,
            steps=args.steps,
            warmup_steps=args.warmup_steps,
            threads=threads,
            seed=args.seed,
            matmul_peak_size=args.matmul_peak_size,
            autocast="bfloat16" if args.mixed_precision == "mixed_bfloat16" else "none",
        )
        return peer_runner.run_peer(args.peer_python, settings, timeout=args.peer_timeout)


def main(argv=None):
    args = parse_args(argv)
    run_peer = peer_runner.resolve_peer(args)  # before measuring, so --peer=on fails at once
    if args.threads and args.concurrent_micro_batches == 1:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    from electra_tf.training.distribution import share_threads_between_micro_batches

    threads = args.threads or cpu_threads()  # the peer's threads; ours, shared between concurrent micro-batches
    our_threads = share_threads_between_micro_batches(args.concurrent_micro_batches, threads)
    start = time.perf_counter()
    features = encoded_train_split(args)
    encode_seconds = time.perf_counter() - start
    lengths = features.input_mask.sum(axis=1)
    config, ours = measure_ours(args, features)
    (padded, padded_width), (bucketed, bucketed_width) = ours["padded"], ours["bucketed"]
    result = {
        "task": args.task,
        "preset": args.preset,
        "batch": args.batch,
        "max_seq_length": args.max_seq_length,
        "steps": args.steps,
        "padded_steps": args.padded_steps,
        "mixed_precision": args.mixed_precision,
        "threads": threads,
        "concurrent_micro_batches": args.concurrent_micro_batches,
        "our_intra_inter_op_threads": our_threads,
        "num_train_examples": len(features),
        "encode_train_seconds": encode_seconds,
        "mean_length": float(lengths.mean()),
        "examples_per_s_padded": padded,
        "examples_per_s": bucketed,
        "speedup_vs_padded": bucketed / padded,
        "mean_batch_width_padded": padded_width,
        "mean_batch_width": bucketed_width,
        "peer_examples_per_s": None,
        "peer_mean_batch_width": None,
        "ratio_vs_peer": None,
        "host": host_facts(),
    }
    if args.matmul_peak_size:
        import tensorflow as tf

        dtype = tf.bfloat16 if args.mixed_precision == "mixed_bfloat16" else tf.float32
        result["matmul_peak_flops_per_s"] = matmul_peak(dtype, args.matmul_peak_size)
    # Our figures come first: they survive a peer that fails or times out.
    print(
        json.dumps({name: result[name] for name in ("examples_per_s_padded", "examples_per_s", "speedup_vs_padded")}),
        file=sys.stderr,
        flush=True,
    )
    if run_peer:
        try:
            peer = measure_peer(args, config, features, threads)
        except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as error:  # a timeout included
            if args.peer == "on":
                sys.exit(f"--peer=on: {error}")
            print(f"peer skipped: {error}", file=sys.stderr)
            result["peer_error"] = str(error)
        else:
            result.update(
                peer_examples_per_s=peer["examples_per_s"],
                peer_mean_batch_width=peer["mean_batch_width"],
                ratio_vs_peer=bucketed / peer["examples_per_s"],
                peer_threads=peer["threads"],
                peer_versions=peer["versions"],
                peer_precision="bfloat16 autocast" if peer["autocast"] == "bfloat16" else "float32",
                peer_matmul_peak_flops_per_s=peer.get("matmul_peak_flops_per_s"),
            )
    result["seconds"] = time.perf_counter() - start
    host = result["host"]
    print(
        f"host: {host['cpu_model']}, {host['cpus']} CPUs, load {host['load_average_1min']:.2f}, "
        f"{' '.join(host['isa']) or 'no AVX2 or newer'}"
    )
    for name in (
        "examples_per_s_padded",
        "examples_per_s",
        "peer_examples_per_s",
        "speedup_vs_padded",
        "ratio_vs_peer",
        "mean_length",
        "mean_batch_width",
        "peer_mean_batch_width",
        "matmul_peak_flops_per_s",
        "peer_matmul_peak_flops_per_s",
    ):
        value = result.get(name)
        print(f"{name:>24}: {value:.4g}" if isinstance(value, float) else f"{name:>24}: {value}")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
