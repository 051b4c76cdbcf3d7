"""Serving classifiers: `electra-export --model=classifier` on a fine-tuned model.keras writes a
SavedModel that, in a fresh process importing only tensorflow and tensorflow-text, matches the Keras model on both
signatures (token ids, and raw text: single sentences or pairs)."""

import json
import os
import pathlib

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from electra_tf.config import ElectraConfig
from electra_tf.models import backbone_inputs, build_discriminator
from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor
from finetune.models.serving import export_classifier
from tests.console_commands import run_command
from tests.serving_session import serve_in_fresh_process

MAX_SEQ_LENGTH = 16


def _save_fine_tuned(vocab, path, regression=False):
    """A model.keras as `run_finetuning.py --save_models` writes it (compiled classifier + preprocessor)."""
    keras.utils.set_random_seed(1)
    config = ElectraConfig.from_preset("tiny", vocab_size=200, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    preprocessor = ElectraTextClassifierPreprocessor(vocab, max_seq_length=MAX_SEQ_LENGTH)
    classifier = ElectraTextClassifier(
        build_discriminator(config).backbone, num_classes=3, preprocessor=preprocessor, regression=regression
    )
    classifier.compile(optimizer="adam")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    classifier.save(path)
    return str(path)


def test_single_sentence_classifier_serves_ids_and_text_like_keras(pretraining_data, tmp_path, capfd):
    """The export command in this process (`tests.console_commands`); what it wrote served in a process of its own."""
    run_dir = tmp_path / "finetuning"
    model_file = _save_fine_tuned(pretraining_data[1], str(run_dir / "trial_0" / "model.keras"))
    (run_dir / "results.json").write_text(json.dumps({"task": "SST-2"}))  # auto: SST-2 is single-sentence
    export_dir = str(tmp_path / "export" / "1")
    status = run_command(
        "electra-export", "--model=classifier", f"--init_checkpoint={model_file}", f"--output_dir={export_dir}"
    )
    assert status == 0, capfd.readouterr().err[-3000:]

    texts = ["w1 w2 w3", "w7 w9 w1 w100 w2 w3 " * 4]  # the second is truncated to MAX_SEQ_LENGTH
    ids = np.array([[2, 6, 7, 8, 3, 0, 0, 0], [2, 12, 14, 6, 105, 7, 8, 3]], np.int32)
    features = {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32), "segment_ids": np.zeros_like(ids)}
    by_ids, by_text, by_session = serve_in_fresh_process(
        export_dir,
        [
            ("saved_model", "serving_default", {name: value.tolist() for name, value in features.items()}),
            ("saved_model", "serve_text", {"texts": texts}),
            ("session", "serve_text", {"texts": texts}),
        ],
    )
    served = {"serving_default": by_ids, "serve_text": by_text}

    model = keras.saving.load_model(model_file, compile=False)
    keras_logits = model(backbone_inputs(features), training=False).numpy()
    assert np.array(served["serving_default"]["logits"]).shape == (2, 3)
    np.testing.assert_allclose(served["serving_default"]["logits"], keras_logits, atol=1e-5)
    np.testing.assert_allclose(
        served["serving_default"]["probabilities"], tf.nn.softmax(keras_logits).numpy(), atol=1e-5
    )
    np.testing.assert_allclose(served["serve_text"]["logits"], model.predict(texts, verbose=0), atol=1e-5)
    text_ids = np.array(served["serve_text"]["input_ids"])
    assert text_ids.shape == (2, MAX_SEQ_LENGTH) and text_ids[0, :8].tolist() == ids[0].tolist()

    # The signatures as saved_model_cli lists them (read in this process: the tool's own start costs seconds).
    saved = saved_model_pb2.SavedModel.FromString((pathlib.Path(export_dir) / "saved_model.pb").read_bytes())
    signatures = saved.meta_graphs[0].signature_def
    assert {"serving_default", "serve_text"} <= set(signatures)
    assert "texts" in signatures["serve_text"].inputs and "probabilities" in signatures["serving_default"].outputs
    # TF Serving's loader (a TF1 session) restores the variables and serves the same logits.
    np.testing.assert_allclose(by_session["logits"], served["serve_text"]["logits"], atol=1e-5)


def test_pair_regression_serves_text_a_and_text_b_like_keras(pretraining_data, tmp_path):
    model_file = _save_fine_tuned(pretraining_data[1], str(tmp_path / "model.keras"), regression=True)
    model = keras.saving.load_model(model_file, compile=False)
    export_dir = export_classifier(model, str(tmp_path / "export" / "1"), text_pairs=True)
    text_a, text_b = ["w1 w2 w3", "w4 w5 " * 10], ["w9", "w6 w7 w8"]
    # The Keras preprocessor's features: serve_text must make the same, so TF Serving's loader is fed them directly.
    features = {name: np.asarray(value).tolist() for name, value in model.preprocessor.pack((text_a, text_b)).items()}
    served, by_session = serve_in_fresh_process(
        export_dir,
        [("saved_model", "serve_text", {"text_a": text_a, "text_b": text_b}), ("session", "serving_default", features)],
    )

    assert np.array(served["logits"]).shape == (2,) and "probabilities" not in served
    np.testing.assert_allclose(served["logits"], model.predict((text_a, text_b), verbose=0), atol=1e-5)
    assert served["segment_ids"][0][:7] == [0, 0, 0, 0, 0, 1, 1]  # [CLS] w1 w2 w3 [SEP] | w9 [SEP]
    assert {name: served[name] for name in features} == features
    np.testing.assert_allclose(by_session["logits"], served["logits"], atol=1e-5)


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing", "model.keras does not exist: a classifier is read from the model.keras file"),
        ("not_a_classifier", "holds a Sequential, not a fine-tuned ElectraTextClassifier"),
        ("no_results_json", "pass --text_inputs=single or --text_inputs=pair"),
    ],
)
def test_bad_classifier_files_give_one_line_errors(pretraining_data, tmp_path, capfd, case, message):
    """The command in this process (`tests.console_commands`): what it prints, not its start-up, is checked here."""
    path = str(tmp_path / "model.keras")
    if case == "not_a_classifier":
        keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save(path)
    elif case == "no_results_json":
        _save_fine_tuned(pretraining_data[1], path)
    status = run_command(
        "electra-export", "--model=classifier", f"--init_checkpoint={path}", f"--output_dir={tmp_path / 'export'}"
    )
    stderr = capfd.readouterr().err
    assert status == 2, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], stderr[-3000:]
    assert "Traceback" not in stderr and not (tmp_path / "export").exists()


def test_a_lora_classifier_is_served_with_merged_kernels_and_its_outputs(pretraining_data, tmp_path):
    from electra_tf.models import ElectraBackbone

    keras.utils.set_random_seed(2)
    backbone = ElectraBackbone(
        vocab_size=200, embedding_size=16, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64
    )
    classifier = ElectraTextClassifier(
        backbone,
        num_classes=3,
        preprocessor=ElectraTextClassifierPreprocessor(pretraining_data[1], max_seq_length=MAX_SEQ_LENGTH),
    )
    plain_variables = len(classifier.weights)
    classifier.enable_lora(2, lora_alpha=8)
    rng = np.random.default_rng(0)
    for dense in classifier.backbone.lora_enabled_layers():  # B = 0 would make the LoRA product vanish
        dense.lora_kernel_b.assign(rng.normal(scale=0.5, size=dense.lora_kernel_b.shape))
    texts = ["w1 w2 w3", "w7 w9 w1 w100 w2 w3"]
    features = classifier.preprocessor(texts)
    lora_logits = classifier(features, training=False).numpy()
    export_dir = export_classifier(classifier, str(tmp_path / "export" / "1"))

    served = tf.saved_model.load(export_dir)
    assert len(served.captured_variables) == plain_variables, "the factors are merged into the kernels"
    logits = served.signatures["serve_text"](texts=tf.constant(texts))["logits"].numpy()
    np.testing.assert_allclose(logits, lora_logits, atol=1e-5)
    for dense in classifier.backbone.lora_enabled_layers():
        dense.lora_kernel_b.assign(np.zeros(dense.lora_kernel_b.shape))
    assert np.abs(classifier(features, training=False).numpy() - logits).max() > 1e-3, "the factors matter"
