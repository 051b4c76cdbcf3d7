"""What int8 costs in accuracy on a real dev set: a fine-tuned classifier run from each serving file, float32 and int8.

    .venv/bin/python bench/int8_accuracy.py --model=out/sst2/trial_0/model.keras --task=SST-2 \
        --glue_dir=../shared/data/glue
    .venv/bin/python bench/int8_accuracy.py --model=... --task=MRPC --glue_dir=... --runtimes= --max_examples=64

`--model` is the model.keras of `electra-finetune --save_models` (an `ElectraTextClassifier` with its vocabulary).
The task's dev set is encoded as the fine-tuning runner encodes it (`finetune.glue.features.encode_examples`, padded to
`--max_seq_length`) and run through:
- the Keras model in float32 (the reference every other path is compared with),
- the SavedModel that `electra-export --model=classifier` writes (`serving_default`), float32,
- the same SavedModel after Keras' `quantize("int8")` of the backbone (`--keras_int8`),
- the token-id files of `electra-export --format=litert|onnx` (`electra_tf.id_model_export.write_id_model`), float32
  and `--quantize=int8`, run by their own runtimes (`--runtimes`, as bench/int8_serving.py).
Printed per path: the task's dev metrics, the dev examples whose predicted label differs from the float32 Keras
model's (classification; STS-B: the largest change of a predicted score) and the largest logit difference. The last
line is one JSON object.
"""

import argparse
import json
import os
import sys
import tempfile

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH_DIR))
sys.path.insert(0, BENCH_DIR)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from bench_utils import host_facts  # noqa: E402  (bench/ is on sys.path from the lines above)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="model.keras of a fine-tuned text classifier.")
    parser.add_argument("--task", required=True, help="GLUE task of the model (its dev.tsv is read).")
    parser.add_argument("--glue_dir", required=True, help="Directory holding <TASK>/dev.tsv.")
    parser.add_argument("--max_seq_length", type=int, default=128, help="Length every dev example is padded to.")
    parser.add_argument("--max_examples", type=int, default=None, help="Only the first N dev examples.")
    parser.add_argument("--batch", type=int, default=32, help="Examples per call.")
    parser.add_argument("--runtimes", default="litert,onnx", help="Comma-separated: litert, onnx (empty: neither).")
    parser.add_argument(
        "--keras_int8",
        default=True,
        action=argparse.BooleanOptionalAction,
        help="Also the SavedModel of Keras' int8 backbone.",
    )
    args = parser.parse_args(argv)
    args.runtime_names = [item.strip() for item in args.runtimes.split(",") if item.strip()]
    if set(args.runtime_names) - {"litert", "onnx"}:
        parser.error(f"--runtimes={args.runtimes!r}: expected litert and/or onnx")
    if args.batch < 1 or (args.max_examples is not None and args.max_examples < 1):
        parser.error("--batch and --max_examples must be at least 1")
    return args


def batched_logits(call, features, batch):
    """`call` (features -> logits) over `features` in slices of `batch` rows, concatenated."""
    import numpy as np

    rows = len(features["input_ids"])
    return np.concatenate(
        [
            np.asarray(call({key: value[start : start + batch] for key, value in features.items()}))
            for start in range(0, rows, batch)
        ]
    )


def predictions(logits, regression):
    return logits.reshape(-1) if regression else logits.argmax(-1)


def main(argv=None):
    args = parse_args(argv)
    import keras
    import numpy as np
    import tensorflow as tf

    from bench_tf import cpu_threads
    from electra_tf.models import backbone_inputs
    from finetune.glue.features import encode_examples
    from finetune.glue.metrics import task_metrics
    from finetune.glue.readers import read_examples
    from finetune.models.saved_classifier import load_text_classifier
    from finetune.models.serving import ClassifierServingModule, export_classifier
    from int8_serving import directory_mb, file_mb, runtime_calls, write_keras_int8, write_runtime_files

    classifier = load_text_classifier(args.model)
    tokenizer = classifier.preprocessor.require_tokenizer()
    examples = read_examples(args.glue_dir, args.task, "dev")[: args.max_examples]
    encoded = encode_examples(examples, tokenizer, args.task, args.max_seq_length)
    features = {
        "input_ids": encoded.input_ids.astype(np.int32),
        "input_mask": encoded.input_mask.astype(np.int32),
        "segment_ids": encoded.segment_ids.astype(np.int32),
    }
    regression = classifier.regression
    threads = cpu_threads()

    def keras_call(batch):
        return classifier(backbone_inputs(batch), training=False).numpy()

    reference = batched_logits(keras_call, features, args.batch)
    sizes = {}
    with tempfile.TemporaryDirectory() as directory:
        saved_models = {"saved_model_float32": os.path.join(directory, "float32", "1")}
        export_classifier(classifier, saved_models["saved_model_float32"])
        module = ClassifierServingModule(classifier, text_pairs=examples[0].text_b is not None)
        files = write_runtime_files(module, directory, args.runtime_names, args.max_seq_length)
        sizes.update({name: file_mb(path) for name, (_, path) in files.items()})
        if args.keras_int8:
            saved_models["saved_model_int8"] = os.path.join(directory, "int8", "1")
            write_keras_int8(classifier, saved_models["saved_model_int8"])
        calls = {}
        for name, path in saved_models.items():
            sizes[name] = directory_mb(path)
            function = tf.saved_model.load(path).signatures["serving_default"]
            calls[name] = lambda batch, function=function: function(
                **{key: tf.constant(value) for key, value in batch.items()}
            )["logits"].numpy()
        calls.update(runtime_calls(files, threads))
        logits = {name: batched_logits(call, features, args.batch) for name, call in calls.items()}

    labels = encoded.label_ids
    reference_predictions = predictions(reference, regression)
    result = {
        "model": args.model,
        "task": args.task,
        "examples": len(examples),
        "max_seq_length": args.max_seq_length,
        "threads": threads,
        "host": host_facts(),
        "keras_version": keras.__version__,
        "keras_float32": {"metrics": task_metrics(args.task, labels, reference_predictions)},
        "paths": {},
    }
    for name, values in logits.items():
        predicted = predictions(values, regression)
        entry = {
            "metrics": task_metrics(args.task, labels, predicted),
            "mb": sizes[name],
            "max_logit_difference": float(np.abs(values - reference).max()),
        }
        if regression:
            entry["max_score_change"] = float(np.abs(predicted - reference_predictions).max())
        else:
            entry["changed_predictions"] = int((predicted != reference_predictions).sum())
        result["paths"][name] = entry

    print(f"{args.task} dev, {len(examples)} examples; {result['host']['cpu_model']}; keras {keras.__version__}")
    print(f"{'path':<22} {'MiB':>7} {'metrics':<36} {'changed':>8} {'max |logit diff|':>17}")
    rows = [("keras_float32", result["keras_float32"])] + list(result["paths"].items())
    for name, entry in rows:
        metrics = ", ".join(f"{key} {value:.2f}" for key, value in entry["metrics"].items())
        changed = entry.get("changed_predictions", entry.get("max_score_change", "-"))
        changed = f"{changed:.4f}" if isinstance(changed, float) else str(changed)
        print(
            f"{name:<22} {entry.get('mb', 0):>7.1f} {metrics:<36} {changed:>8} "
            f"{entry.get('max_logit_difference', 0.0):>17.2e}"
        )
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
