"""Discriminator scoring latency and throughput: Keras, the exported SavedModel, and the Hugging Face / PyTorch peer.

    .venv/bin/python bench/inference_latency.py --preset=small --batches=1,32 --seq_len=128 --iterations=50
    .venv/bin/python bench/inference_latency.py --preset=tiny --batches=1,4 --seq_len=32 --iterations=3 --peer=off

A randomly initialised `ElectraDiscriminator` of `--preset` scores fixed random batches ([CLS] ids [SEP], no padding)
in float32, one call per iteration, `--warmup` untimed calls first, for each batch size of `--batches`:

- keras_function: the Keras model called inside a `tf.function` with a [None, None] int32 input signature (traced
  once), returning the logits and their sigmoid, inputs already tf tensors;
- keras_predict_on_batch: `model.predict_on_batch` on numpy inputs (Keras' own inference entry point; sigmoid in
  numpy);
- keras_xla (with `--jit_compile`): the tf.function compiled with XLA (one compilation per input shape);
- saved_model: the discriminator exported by the project's export code (`electra_tf.export.export_discriminator`,
  what `export_model.py` writes) to a temporary directory, loaded with `tf.saved_model.load`, its `serving_default`
  signature called (outputs `logits` and `replaced_probability`);
- peer: Hugging Face's ElectraForPreTraining of the same sizes (logits and sigmoid) under torch.inference_mode, run by
  `bench/hf_peer.py --mode=infer` in the peer interpreter after ours finished (`--peer`, `--peer_python` as in
  bench/pretrain_throughput.py), with torch.set_num_threads equal to TensorFlow's thread count.

Each call's latency includes fetching the outputs as numpy arrays. Reported per batch size and path: median, p90 and
mean latency in ms, sequences/s (= batch / median latency), and against the peer: seq_per_s ours/peer (> 1: ours
faster) and median latency ours/peer (< 1: ours faster). The last line is one JSON object.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import peer_runner
from bench_utils import latency_stats, peak_rss_mb, random_batch


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--batches", default="1,32", help="Comma-separated batch sizes.")
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--iterations", type=int, default=50, help="Timed calls per batch size and path.")
    parser.add_argument("--warmup", type=int, default=5, help="Untimed calls per batch size and path before timing.")
    parser.add_argument("--jit_compile", action="store_true", help="Also measure the tf.function compiled with XLA.")
    peer_runner.add_peer_flags(parser)
    args = parser.parse_args(argv)
    args.batch_sizes = [int(b) for b in args.batches.split(",") if b.strip()]
    if not args.batch_sizes or min(args.batch_sizes) < 1 or args.iterations < 1 or args.warmup < 1:
        parser.error("--batches must be positive integers, --iterations and --warmup at least 1")
    return args


def time_calls(call, warmup, iterations):
    for _ in range(warmup):
        call()
    latencies = []
    for _ in range(iterations):
        start = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - start)
    return latencies


def write_vocab(path, config):
    """A vocabulary of config.vocab_size placeholder pieces with the special tokens at the config's ids."""
    tokens = [f"w{i}" for i in range(config.vocab_size)]
    for token, index in (
        ("[PAD]", config.pad_id),
        ("[UNK]", config.unk_id),
        ("[CLS]", config.cls_id),
        ("[SEP]", config.sep_id),
        ("[MASK]", config.mask_id),
    ):
        tokens[index] = token
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(tokens) + "\n")
    return path


def measure_ours(args, config, workdir):
    import numpy as np
    import tensorflow as tf

    from electra_tf import progress
    from electra_tf.export import export_discriminator
    from electra_tf.models import backbone_inputs, build_discriminator
    from electra_tf.tokenizer import ElectraTokenizer

    model = build_discriminator(config)
    spec = tf.TensorSpec([None, None], tf.int32)

    def scores(input_ids, input_mask, segment_ids):
        logits = model({"token_ids": input_ids, "padding_mask": input_mask, "segment_ids": segment_ids}, training=False)
        return logits, tf.math.sigmoid(logits)

    paths = {"keras_function": tf.function(scores, input_signature=[spec] * 3)}
    if args.jit_compile:
        paths["keras_xla"] = tf.function(scores, input_signature=[spec] * 3, jit_compile=True)

    export_dir = os.path.join(workdir, "discriminator", "1")
    tokenizer = ElectraTokenizer(write_vocab(os.path.join(workdir, "vocab.txt"), config))
    # On stderr: stdout's last line is the result.
    with progress.step(f"writing the SavedModel to {export_dir}", stream=sys.stderr):
        export_discriminator(model, tokenizer, export_dir, max_seq_length=args.seq_len)
    with progress.step(f"loading {export_dir}", stream=sys.stderr):
        serving = tf.saved_model.load(export_dir).signatures["serving_default"]

    results = {}
    for batch_size in args.batch_sizes:
        batch = random_batch(batch_size, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
        tensors = {name: tf.constant(value) for name, value in batch.items()}
        calls = {name: (lambda f=function: [t.numpy() for t in f(**tensors)]) for name, function in paths.items()}
        inputs = backbone_inputs(batch)  # converted once, outside the timed calls

        def predict_on_batch():
            logits = model.predict_on_batch(inputs)
            return logits, 1 / (1 + np.exp(-logits))

        calls["keras_predict_on_batch"] = predict_on_batch
        calls["saved_model"] = lambda: {k: v.numpy() for k, v in serving(**tensors).items()}
        results[batch_size] = {
            name: latency_stats(time_calls(call, args.warmup, args.iterations), batch_size)
            for name, call in calls.items()
        }
        # The paths must agree (same weights): a guard against timing something that computes something else.
        reference = calls["keras_function"]()[0]
        np.testing.assert_allclose(calls["saved_model"]()["logits"], reference, atol=1e-4)
        np.testing.assert_allclose(calls["keras_predict_on_batch"]()[0], reference, atol=1e-4)
    return results


def measure_peer(args, config, threads):
    settings = dict(
        peer_runner.peer_sizes(config),
        mode="infer",
        batch=args.batches,
        seq_len=args.seq_len,
        steps=args.iterations,
        warmup_steps=args.warmup,
        threads=threads,
        autocast="none",
        matmul_peak_size=0,
    )
    peer = peer_runner.run_peer(args.peer_python, settings, timeout=args.peer_timeout)
    return peer, {entry["batch"]: entry for entry in peer["per_batch"]}


def main(argv=None):
    args = parse_args(argv)
    run_peer = peer_runner.resolve_peer(args)
    from bench_tf import cpu_threads
    from electra_tf.config import ElectraConfig
    from electra_tf.flops import inference_flops

    config = ElectraConfig.from_preset(args.preset)
    config.check_sequence_length(args.seq_len)
    threads = cpu_threads()
    with tempfile.TemporaryDirectory(prefix="electra_inference_bench_") as workdir:
        results = measure_ours(args, config, workdir)
    peak_rss = peak_rss_mb()
    output = {
        "preset": args.preset,
        "seq_len": args.seq_len,
        "batches": args.batch_sizes,
        "precision": "float32",
        "iterations": args.iterations,
        "warmup": args.warmup,
        "threads": threads,
        "peak_rss_mb": peak_rss,
        "inference_flops_per_seq": inference_flops(config, args.seq_len),
    }
    if run_peer:
        try:
            peer, peer_by_batch = measure_peer(args, config, threads)
        except (RuntimeError, OSError, ValueError) as error:
            if args.peer == "on":
                sys.exit(f"--peer=on: {error}")
            print(f"peer skipped: {error}", file=sys.stderr)
            output["peer_error"] = str(error)
        else:
            output.update(
                peer_peak_rss_mb=peer["peak_rss_mb"],
                peer_threads=peer["threads"],
                peer_versions=peer["versions"],
                peer_python=args.peer_python,
            )
            for batch_size, paths in results.items():
                paths["peer"] = peer_by_batch[batch_size]
    per_batch = {}
    for batch_size, paths in results.items():
        ours = {name: stats for name, stats in paths.items() if name != "peer"}
        entry = {"paths": paths, "fastest_ours": min(ours, key=lambda name: ours[name]["median_ms"])}
        if "peer" in paths:
            entry["seq_per_s_ratio_vs_peer"] = {
                name: stats["seq_per_s"] / paths["peer"]["seq_per_s"] for name, stats in ours.items()
            }
            entry["latency_ratio_vs_peer"] = {
                name: stats["median_ms"] / paths["peer"]["median_ms"] for name, stats in ours.items()
            }
        per_batch[str(batch_size)] = entry
    output["per_batch"] = per_batch

    print(f"{'batch':>5} {'path':<24} {'median ms':>10} {'p90 ms':>10} {'seq/s':>10} {'seq/s vs peer':>14}")
    for batch_size, entry in per_batch.items():
        for name, stats in entry["paths"].items():
            ratio = entry.get("seq_per_s_ratio_vs_peer", {}).get(name)
            print(
                f"{batch_size:>5} {name:<24} {stats['median_ms']:>10.3f} {stats['p90_ms']:>10.3f} "
                f"{stats['seq_per_s']:>10.1f} {'' if ratio is None else f'{ratio:.3f}':>14}"
            )
        print(f"{batch_size:>5} fastest of ours: {entry['fastest_ours']}")
    print(json.dumps(output, sort_keys=True))


if __name__ == "__main__":
    main()
