"""Serving an int8 classifier against the float32 one: SavedModel size, logits and latency, in one run.

    .venv/bin/python bench/int8_serving.py --preset=small --batches=1,32 --seq_len=128
    .venv/bin/python bench/int8_serving.py --preset=tiny --batches=2 --seq_len=8 --iterations=2   # smoke

`ElectraTextClassifier` at the preset's sizes (random weights, 3 classes) exported with
`finetune.models.serving.export_classifier` (what `electra-export --model=classifier` writes) before and after Keras'
`quantize("int8")` of its backbone (per-channel int8 kernels of every projection and of the token-type table, inputs
quantised per token at every call; the word and position tables are keras-hub layers that stay float). Both
SavedModels are loaded with `tf.saved_model.load` and `serving_default` is called on the same random token ids
(`bench_utils.random_batch`), alternating, `--iterations` times per batch size after one untimed call each.

Printed per batch size: the median latency of each and their ratio int8 / float32 (> 1: int8 slower), the largest
difference of their logits; and both SavedModels' sizes. The last line is one JSON object.
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

from bench_utils import random_batch  # noqa: E402  (standard library only)

REPO_ROOT = os.path.dirname(BENCH_DIR)
DEFAULT_VOCAB = os.path.join(os.path.dirname(REPO_ROOT), "shared", "data", "vocab", "bert-uncased-vocab.txt")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--vocab_file", default=DEFAULT_VOCAB, help="The preprocessor's vocabulary (its size is the "
                        "model's).")
    parser.add_argument("--batches", default="1,32", help="Comma-separated batch sizes.")
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--iterations", type=int, default=10, help="Timed calls of each model per batch size.")
    args = parser.parse_args(argv)
    try:
        args.batch_sizes = [int(item) for item in args.batches.split(",") if item.strip()]
    except ValueError:
        parser.error(f"--batches={args.batches!r}: expected comma-separated integers")
    if not args.batch_sizes or min(args.batch_sizes) < 1 or args.iterations < 1 or args.seq_len < 2:
        parser.error("--batches must hold positive sizes, --iterations must be at least 1 and --seq_len 2")
    return args


def directory_mb(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names) / 2**20


def main(argv=None):
    args = parse_args(argv)
    import keras
    import numpy as np
    import tensorflow as tf

    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor
    from finetune.models.serving import export_classifier

    tokenizer = ElectraTokenizer(args.vocab_file)
    config = ElectraConfig.from_preset(args.preset).with_vocab(
        len(tokenizer.vocab), pad_id=tokenizer.pad_id, unk_id=tokenizer.unk_id, cls_id=tokenizer.cls_id,
        sep_id=tokenizer.sep_id, mask_id=tokenizer.mask_id)
    keras.utils.set_random_seed(0)
    classifier = ElectraTextClassifier(build_discriminator(config).backbone, num_classes=3,
                                       preprocessor=ElectraTextClassifierPreprocessor.from_tokenizer(tokenizer,
                                                                                                      args.seq_len))
    result = {"preset": args.preset, "seq_len": args.seq_len, "iterations": args.iterations, "batches": {}}
    with tempfile.TemporaryDirectory() as directory:
        paths = {"float32": os.path.join(directory, "float32", "1"), "int8": os.path.join(directory, "int8", "1")}
        export_classifier(classifier, paths["float32"])
        with warnings.catch_warnings():  # the layers without weights to quantize say so
            warnings.simplefilter("ignore")
            classifier.backbone.quantize("int8")
        export_classifier(classifier, paths["int8"])
        result.update({f"saved_model_mb_{name}": directory_mb(path) for name, path in paths.items()})
        serve = {name: tf.saved_model.load(path).signatures["serving_default"] for name, path in paths.items()}
        for batch_size in args.batch_sizes:
            features = random_batch(batch_size, args.seq_len, config.vocab_size, config.cls_id, config.sep_id)
            features = {name: tf.constant(value) for name, value in features.items()}
            logits = {name: function(**features)["logits"].numpy() for name, function in serve.items()}
            latencies = {name: [] for name in serve}
            for _ in range(args.iterations):
                for name, function in serve.items():
                    start = time.perf_counter()
                    function(**features)["logits"].numpy()
                    latencies[name].append(time.perf_counter() - start)
            medians = {name: 1e3 * statistics.median(values) for name, values in latencies.items()}
            result["batches"][str(batch_size)] = {
                "float32_ms": medians["float32"], "int8_ms": medians["int8"],
                "int8_over_float32": medians["int8"] / medians["float32"],
                "max_logit_difference": float(np.abs(logits["int8"] - logits["float32"]).max()),
                "max_abs_logit": float(np.abs(logits["float32"]).max())}
    result["saved_model_size_ratio"] = result["saved_model_mb_int8"] / result["saved_model_mb_float32"]
    for batch_size, figures in result["batches"].items():
        print(f"batch {batch_size:>3}: float32 {figures['float32_ms']:9.1f} ms, int8 {figures['int8_ms']:9.1f} ms, "
              f"int8 / float32 {figures['int8_over_float32']:.2f}; logits differ by up to "
              f"{figures['max_logit_difference']:.4f} (largest {figures['max_abs_logit']:.3f})")
    print(f"SavedModel: float32 {result['saved_model_mb_float32']:.1f} MiB, int8 {result['saved_model_mb_int8']:.1f} "
          f"MiB ({result['saved_model_size_ratio']:.2f})")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
