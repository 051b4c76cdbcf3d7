"""LiteRT and ONNX files of a fine-tuned classifier and tagger: run by their own runtimes, they give the Keras
model's outputs (and the SavedModel's `serving_default` outputs derived from them)."""

import numpy as np
import pytest

from electra_tf.models import backbone_inputs, build_discriminator
from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor
from finetune.models.serving import ClassifierServingModule, export_classifier
from finetune.models.tagger_serving import TaggerServingModule, export_tagger
from finetune.models.token_classifier import ElectraTokenClassifier
from finetune.models.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor
from tests.electra_tf.checkpoints.models import TINY
from tests.id_model_runtimes import RUNTIMES, converter_or_skip, fixed_inputs, with_trained_scale

MAX_SEQ_LENGTH = 16
FORMATS = ["litert", "onnx"]


def assert_outputs_match(served, expected):
    """Every output of the SavedModel's id signature, under its name: numbers within 1e-5, ids and strings equal."""
    assert set(served) == set(expected)
    for name, value in expected.items():
        value = np.asarray(value)
        if value.dtype.kind == "f":
            np.testing.assert_allclose(served[name], value, rtol=0, atol=1e-5, err_msg=name)
        else:
            assert np.asarray(served[name]).tolist() == value.tolist(), name


@pytest.mark.parametrize("export_format", FORMATS)
def test_classifier_file_matches_keras(export_format, pretraining_data, tmp_path):
    converter_or_skip(export_format)
    preprocessor = ElectraTextClassifierPreprocessor(pretraining_data[1], max_seq_length=MAX_SEQ_LENGTH)
    classifier = with_trained_scale(
        ElectraTextClassifier(
            build_discriminator(TINY).backbone, preprocessor=preprocessor, labels=["negative", "neutral", "positive"]
        )
    )
    path = export_classifier(classifier, str(tmp_path / "export"), export_format=export_format)

    inputs = fixed_inputs(4, MAX_SEQ_LENGTH, TINY.vocab_size)
    served = RUNTIMES[export_format](path, inputs)
    np.testing.assert_allclose(
        served["logits"], classifier(backbone_inputs(inputs), training=False).numpy(), rtol=0, atol=1e-5
    )
    expected = ClassifierServingModule(classifier, text_pairs=False).serve_ids(**inputs)
    if "labels" in served:  # strings come back as bytes
        served["labels"] = np.char.decode(np.asarray(served["labels"]).astype(bytes))
        expected["labels"] = np.char.decode(expected["labels"].numpy().astype(bytes))
    assert_outputs_match(served, expected)


@pytest.mark.parametrize("export_format", FORMATS)
def test_tagger_file_matches_keras(export_format, pretraining_data, tmp_path):
    converter_or_skip(export_format)
    preprocessor = ElectraTokenClassifierPreprocessor(pretraining_data[1], max_seq_length=MAX_SEQ_LENGTH)
    tagger = with_trained_scale(
        ElectraTokenClassifier(build_discriminator(TINY).backbone, tags=["O", "B-X", "I-X"], preprocessor=preprocessor)
    )
    path = export_tagger(tagger, str(tmp_path / "export"), export_format=export_format)

    inputs = fixed_inputs(3, MAX_SEQ_LENGTH, TINY.vocab_size)
    # Words of one or two pieces: the first piece of word k at word_positions[:, k], 0 after the last word.
    words = [np.arange(1, length - 1, 2) for length in inputs["input_mask"].sum(axis=1)]
    inputs["word_positions"] = np.array([np.pad(row, (0, MAX_SEQ_LENGTH - len(row))) for row in words], np.int32)
    served = RUNTIMES[export_format](path, inputs)
    keras_logits = tagger(
        backbone_inputs({name: value for name, value in inputs.items() if name != "word_positions"})
        | {"word_positions": inputs["word_positions"]},
        training=False,
    ).numpy()
    np.testing.assert_allclose(served["logits"], keras_logits, rtol=0, atol=1e-5)
    assert_outputs_match(served, TaggerServingModule(tagger).serve_ids(**inputs))
