"""Serving an int8 classifier against the float32 one, per runtime: size, outputs and latency, in one run.

    .venv/bin/python bench/int8_serving.py --preset=small --batches=1,32 --seq_len=128
    .venv/bin/python bench/int8_serving.py --preset=small --runtimes=litert,onnx --no-keras_int8   # files only
    .venv/bin/python bench/int8_serving.py --preset=tiny --batches=2 --seq_len=8 --iterations=2   # smoke

`ElectraTextClassifier` at the preset's sizes (random weights, 3 classes) exported with
`finetune.models.serving.export_classifier` (what `electra-export --model=classifier` writes) before and after Keras'
`quantize("int8")` of its backbone (per-channel int8 kernels of every projection and of the token-type table, inputs
quantised per token at every call; the word and position tables are keras-hub layers that stay float). Both
SavedModels are loaded with `tf.saved_model.load` and `serving_default` is called on the same random token ids
(`bench_utils.random_batch`), alternating, `--iterations` times per batch size after one untimed call each.

With `--runtimes` (default litert,onnx) the same float32 classifier is also written as the token-id files
`electra-export --format=litert|onnx` writes (`electra_tf.id_model_export.write_id_model`, [batch, seq_len]) in
float32 and int8: LiteRT dynamic-range int8 (`tf.lite.Optimize.DEFAULT`, no representative dataset), run by
`ai_edge_litert`'s interpreter with `num_threads`; ONNX Runtime's `quantize_dynamic` (QInt8 weights), run by an
InferenceSession on the CPU with `intra_op_num_threads`; both at TensorFlow's thread count. With the peer (`--peer`,
as in bench/inference_latency.py) Hugging Face's ElectraForPreTraining of the same sizes runs in PyTorch eager
float32 on the same ids, after ours (a discriminator, not a classifier: the head differs by one 256 x 256 layer).

Every path is called `--warmup` times untimed, then `--iterations` times per batch size, the paths alternating.
Printed per batch size: each path's median latency and its ratio to the float32 SavedModel (> 1: slower), to its own
runtime's float32 and to the peer; the largest difference of its logits from the float32 Keras model's; the sizes on
disk. The host line names the CPU, the threads and the load average (other jobs). The last line is one JSON object.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH_DIR))
sys.path.insert(0, BENCH_DIR)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import peer_runner  # noqa: E402  (bench/ is on sys.path from the lines above)
from bench_utils import host_facts, random_batch  # noqa: E402

REPO_ROOT = os.path.dirname(BENCH_DIR)
DEFAULT_VOCAB = os.path.join(os.path.dirname(REPO_ROOT), "shared", "data", "vocab", "bert-uncased-vocab.txt")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument(
        "--vocab_file", default=DEFAULT_VOCAB, help="The preprocessor's vocabulary (its size is the model's)."
    )
    parser.add_argument("--batches", default="1,32", help="Comma-separated batch sizes.")
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--iterations", type=int, default=10, help="Timed calls of each model per batch size.")
    parser.add_argument("--warmup", type=int, default=2, help="Untimed calls of each model per batch size.")
    parser.add_argument("--runtimes", default="litert,onnx", help="Comma-separated: litert, onnx (empty: neither).")
    parser.add_argument(
        "--keras_int8",
        default=True,
        action=argparse.BooleanOptionalAction,
        help="Also the SavedModel of Keras' int8 backbone (10 s a call at batch 32 on 2 cores).",
    )
    peer_runner.add_peer_flags(parser)
    args = parser.parse_args(argv)
    try:
        args.batch_sizes = [int(item) for item in args.batches.split(",") if item.strip()]
    except ValueError:
        parser.error(f"--batches={args.batches!r}: expected comma-separated integers")
    if not args.batch_sizes or min(args.batch_sizes) < 1 or args.iterations < 1 or args.seq_len < 2:
        parser.error("--batches must hold positive sizes, --iterations must be at least 1 and --seq_len 2")
    args.runtime_names = [item.strip() for item in args.runtimes.split(",") if item.strip()]
    if set(args.runtime_names) - {"litert", "onnx"}:
        parser.error(f"--runtimes={args.runtimes!r}: expected litert and/or onnx")
    return args


def directory_mb(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names) / 2**20


def file_mb(path):
    return os.path.getsize(path) / 2**20


def runtime_calls(paths, threads):
    """{name: function(features) -> logits} of the LiteRT / ONNX files `paths` ({name: (runtime, path)})."""
    import numpy as np

    calls = {}
    for name, (runtime, path) in paths.items():
        if runtime == "litert":
            from ai_edge_litert.interpreter import Interpreter

            runner = Interpreter(model_path=path, num_threads=threads).get_signature_runner("serving_default")
            calls[name] = lambda features, runner=runner: runner(**features)["logits"]
        else:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            calls[name] = lambda features, session=session: session.run(["logits"], features)[0]
    return {name: (lambda features, call=call: np.asarray(call(features))) for name, call in calls.items()}


def write_runtime_files(module, directory, runtime_names, seq_len):
    """{name: (runtime, path)}: `module.serve_ids` as the token-id file of each runtime (litert, onnx) in float32 and
    int8 (`<runtime>_<precision>` under `directory`), as `electra-export --format=... [--quantize=int8]` writes it."""
    from electra_tf import progress
    from electra_tf.id_model_export import write_id_model

    files = {}
    for runtime in runtime_names:
        for precision, quantize in (("float32", None), ("int8", "int8")):
            name = f"{runtime}_{precision}"
            with progress.step(f"writing {name}", stream=sys.stderr):
                files[name] = (
                    runtime,
                    write_id_model(
                        module, module.serve_ids, os.path.join(directory, name), runtime, seq_len, quantize=quantize
                    ),
                )
    return files


def write_keras_int8(classifier, path):
    """Quantizes `classifier`'s backbone with Keras' `quantize("int8")` (in place) and exports it as a SavedModel."""
    from electra_tf import progress
    from finetune.models.serving import export_classifier

    with warnings.catch_warnings():  # the layers without weights to quantize say so
        warnings.simplefilter("ignore")
        classifier.backbone.quantize("int8")
    with progress.step(f"writing {path}", stream=sys.stderr):
        export_classifier(classifier, path)


def measure_peer(args, config, threads):
    """{batch: latency stats} of the Hugging Face discriminator in PyTorch eager float32, or None (says why)."""
    if not peer_runner.resolve_peer(args):
        return None
    from inference_latency import measure_peer as run

    try:
        return run(args, config, threads)[1]
    except (RuntimeError, OSError, ValueError) as error:
        if args.peer == "on":
            sys.exit(f"--peer=on: {error}")
        print(f"peer skipped: {error}", file=sys.stderr)
        return None


def main(argv=None):
    args = parse_args(argv)
    import keras
    import numpy as np
    import tensorflow as tf

    from bench_tf import cpu_threads
    from electra_tf import progress
    from electra_tf.config import ElectraConfig
    from electra_tf.models import backbone_inputs, build_discriminator
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor
    from finetune.models.serving import ClassifierServingModule, export_classifier

    tokenizer = ElectraTokenizer(args.vocab_file)
    config = ElectraConfig.from_preset(args.preset).with_vocab(
        len(tokenizer.vocab),
        pad_id=tokenizer.pad_id,
        unk_id=tokenizer.unk_id,
        cls_id=tokenizer.cls_id,
        sep_id=tokenizer.sep_id,
        mask_id=tokenizer.mask_id,
    )
    keras.utils.set_random_seed(0)
    classifier = ElectraTextClassifier(
        build_discriminator(config).backbone,
        num_classes=3,
        preprocessor=ElectraTextClassifierPreprocessor.from_tokenizer(tokenizer, args.seq_len),
    )
    threads = cpu_threads()
    versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
    result = {
        "preset": args.preset,
        "seq_len": args.seq_len,
        "iterations": args.iterations,
        "warmup": args.warmup,
        "threads": threads,
        "host": host_facts(),
        "versions": versions,
        "batches": {},
        "runtimes": {},
    }
    batches = {
        batch_size: random_batch(batch_size, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
        for batch_size in args.batch_sizes
    }
    keras_logits = {
        batch_size: classifier(backbone_inputs(features), training=False).numpy()
        for batch_size, features in batches.items()
    }
    sizes = {}
    with tempfile.TemporaryDirectory() as directory:
        paths = {"float32": os.path.join(directory, "float32", "1"), "int8": os.path.join(directory, "int8", "1")}
        # Progress on stderr: stdout's last line is the result.
        with progress.step(f"writing {paths['float32']}", stream=sys.stderr):
            export_classifier(classifier, paths["float32"])
        sizes["saved_model_float32"] = directory_mb(paths["float32"])
        module = ClassifierServingModule(classifier, text_pairs=False)
        for runtime in args.runtime_names:
            if runtime == "litert":
                import ai_edge_litert

                versions["ai_edge_litert"] = getattr(ai_edge_litert, "__version__", "?")
            else:
                import onnxruntime
                import tf2onnx

                versions.update(onnxruntime=onnxruntime.__version__, tf2onnx=tf2onnx.__version__)
        files = write_runtime_files(module, directory, args.runtime_names, args.seq_len)
        sizes.update({name: file_mb(path) for name, (_, path) in files.items()})
        if args.keras_int8:
            write_keras_int8(classifier, paths["int8"])
            sizes["saved_model_int8"] = directory_mb(paths["int8"])
        else:
            del paths["int8"]
        result.update({f"saved_model_mb_{name}": directory_mb(path) for name, path in paths.items()})
        serve = {}
        for name, path in paths.items():
            with progress.step(f"loading {path}", stream=sys.stderr):
                serve[f"saved_model_{name}"] = tf.saved_model.load(path).signatures["serving_default"]
        calls = {
            name: (
                lambda features, function=function: function(
                    **{key: tf.constant(value) for key, value in features.items()}
                )["logits"].numpy()
            )
            for name, function in serve.items()
        }
        calls.update(runtime_calls(files, threads))
        medians, differences = {}, {}
        for batch_size, features in batches.items():
            logits = {}
            for name, call in calls.items():
                for _ in range(args.warmup):
                    logits[name] = call(features)
            latencies = {name: [] for name in calls}
            for _ in range(args.iterations):
                for name, call in calls.items():
                    start = time.perf_counter()
                    call(features)
                    latencies[name].append(time.perf_counter() - start)
            medians[batch_size] = {name: 1e3 * statistics.median(values) for name, values in latencies.items()}
            differences[batch_size] = {
                name: float(np.abs(value - keras_logits[batch_size]).max()) for name, value in logits.items()
            }
            if args.keras_int8:  # the keys of the Keras int8 SavedModel against the float32 one, as before
                result["batches"][str(batch_size)] = {
                    "float32_ms": medians[batch_size]["saved_model_float32"],
                    "int8_ms": medians[batch_size]["saved_model_int8"],
                    "int8_over_float32": medians[batch_size]["saved_model_int8"]
                    / medians[batch_size]["saved_model_float32"],
                    "max_logit_difference": float(
                        np.abs(logits["saved_model_int8"] - logits["saved_model_float32"]).max()
                    ),
                    "max_abs_logit": float(np.abs(logits["saved_model_float32"]).max()),
                }
    peer = measure_peer(args, config, threads)
    if peer is None:
        result["peer"] = "not run (see stderr)"
    for name in calls:
        runtime = name.rsplit("_", 1)[0]
        entry = {
            "mb": sizes[name],
            "size_over_saved_model_float32": sizes[name] / sizes["saved_model_float32"],
            "size_over_own_float32": sizes[name] / sizes[f"{runtime}_float32"],
            "batches": {},
        }
        for batch_size in args.batch_sizes:
            ms = medians[batch_size][name]
            figures = {
                "median_ms": ms,
                "over_saved_model_float32": ms / medians[batch_size]["saved_model_float32"],
                "over_own_float32": ms / medians[batch_size][f"{runtime}_float32"],
                "max_logit_difference_vs_keras": differences[batch_size][name],
                "max_abs_keras_logit": float(np.abs(keras_logits[batch_size]).max()),
            }
            if peer is not None:
                figures["over_peer"] = ms / peer[batch_size]["median_ms"]
            entry["batches"][str(batch_size)] = figures
        result["runtimes"][name] = entry
    if peer is not None:
        result["peer_median_ms"] = {str(batch_size): peer[batch_size]["median_ms"] for batch_size in args.batch_sizes}
    if args.keras_int8:
        result["saved_model_size_ratio"] = result["saved_model_mb_int8"] / result["saved_model_mb_float32"]

    host = result["host"]
    print(
        f"host: {host['cpu_model']}, {host['cpus']} CPUs, load average {host['load_average_1min']:.2f}; "
        f"{threads} threads; " + ", ".join(f"{key} {value}" for key, value in versions.items())
    )
    print(
        f"{'path':<20} {'MiB':>7} {'/ SM f32':>8} {'batch':>5} {'median ms':>10} {'/ SM f32':>8} {'/ own f32':>9} "
        f"{'/ peer':>7} {'max |diff|':>10}"
    )
    for name, entry in result["runtimes"].items():
        for batch_size, figures in entry["batches"].items():
            over_peer = figures.get("over_peer")
            print(
                f"{name:<20} {entry['mb']:>7.1f} {entry['size_over_saved_model_float32']:>8.2f} {batch_size:>5} "
                f"{figures['median_ms']:>10.1f} {figures['over_saved_model_float32']:>8.2f} "
                f"{figures['over_own_float32']:>9.2f} {'-' if over_peer is None else f'{over_peer:.2f}':>7} "
                f"{figures['max_logit_difference_vs_keras']:>10.2e}"
            )
    for batch_size, median in result.get("peer_median_ms", {}).items():
        print(f"{'peer (HF, PyTorch)':<20} {'':>7} {'':>8} {batch_size:>5} {median:>10.1f}")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
