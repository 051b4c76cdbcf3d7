"""String labels: the one `LabelMapping` (in Python and in-graph), and the classifier's `labels` argument, its errors
and its config."""

import warnings

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.models import build_discriminator
from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor
from finetune.models.labels import LabelMapping, is_text

CONFIG = ElectraConfig.from_preset("tiny").with_vocab(200, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
NAMES = ["negative", "neutral", "positive"]


def test_label_strings_map_to_ids_and_back():
    mapping = LabelMapping(NAMES)
    ids = mapping.ids(["positive", b"negative", None, "neutral"])
    assert ids.dtype == np.int32 and ids.tolist() == [2, 0, -1, 1]
    assert mapping.strings(np.array([[2], [0]])) == ["positive", "negative"]
    assert mapping.unknown(["neutral", "bad", None, "worse"]) == [1, 3]
    with pytest.raises(
        ConfigError,
        match=r"^y_train holds labels \['bad', 'worse'\] that are not in "
        r"labels=\['negative', 'neutral', 'positive'\]$",
    ) as error:
        mapping.ids(["worse", "neutral", "bad"], source="y_train")
    assert error.value.arguments == ("y_train", "labels")
    with pytest.raises(ConfigError, match=r"^tags must name two or more distinct labels in id order, got \['O', 'O'\]"):
        LabelMapping(["O", "O"], argument="tags")


def test_the_in_graph_lookup_equals_the_python_mapping():
    mapping = LabelMapping(NAMES)
    labels = ["neutral", "positive", "negative", "positive"]
    np.testing.assert_array_equal(mapping.lookup(tf.constant(labels)).numpy(), mapping.ids(labels))
    ragged = mapping.lookup(tf.ragged.constant([["positive"], [], ["negative", "neutral"]]))
    assert ragged.to_list() == [[2], [], [0, 1]]
    assert [name.decode() for name in mapping.gather(tf.constant([1, 2])).numpy()] == ["neutral", "positive"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"a label of the dataset is not in labels="):
        mapping.lookup(tf.constant(["positive", "mixed"]))


def test_label_strings_are_told_from_numbers():
    assert is_text(["a"]) and is_text(np.array(["a"])) and is_text(tf.constant(["a"])) and is_text([["O", "B"]])
    assert is_text(np.array(["a"], dtype=object))
    assert not is_text([0, 1]) and not is_text(np.array([0.5])) and not is_text(tf.constant([1])) and not is_text([[0]])


def _backbone():
    return build_discriminator(CONFIG).backbone


def test_labels_give_num_classes_and_survive_the_config(pretraining_data):
    preprocessor = ElectraTextClassifierPreprocessor(pretraining_data[1], max_seq_length=8)
    classifier = ElectraTextClassifier(_backbone(), labels=NAMES, preprocessor=preprocessor)
    assert classifier.num_classes == 3 and classifier.labels == NAMES
    clone = ElectraTextClassifier.from_config(classifier.get_config())
    assert clone.labels == NAMES and clone.num_classes == 3
    clone.set_weights(classifier.get_weights())
    texts = ["w1 w2", "w3", "w150 w7 w9"]
    assert clone.predict_labels(texts) == classifier.predict_labels(texts)
    logits = classifier.predict(texts, verbose=0)
    assert classifier.predict_labels(texts) == [NAMES[i] for i in np.argmax(logits, axis=-1)]
    # Label strings in lists, NumPy arrays and tf.data datasets score as their ids do.
    classifier.compile()
    strings, ids = ["positive", "negative", "neutral"], [2, 0, 1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = classifier.evaluate(texts, ids, return_dict=True, verbose=0)
        for data in (
            (texts, strings),
            (np.array(texts), np.array(strings)),
            (tf.data.Dataset.from_tensor_slices((texts, strings)).batch(2), None),
        ):
            assert classifier.evaluate(*data, return_dict=True, verbose=0) == pytest.approx(expected)
    # Data in memory reach Keras as a dataset it can count: no "Your input ran out of data" at its end.
    assert not [warning for warning in caught if "ran out of data" in str(warning.message)]
    # Without labels the predictions are class ids; a regression gives its scores.
    unnamed = ElectraTextClassifier(classifier.backbone, num_classes=3, preprocessor=preprocessor)
    unnamed.set_weights(classifier.get_weights())
    assert unnamed.predict_labels(texts) == [int(i) for i in np.argmax(logits, axis=-1)]
    regressor = ElectraTextClassifier(classifier.backbone, regression=True, preprocessor=preprocessor)
    scores = regressor.predict_labels(texts)
    assert all(type(score) is float for score in scores)
    np.testing.assert_allclose(scores, regressor.predict(texts, verbose=0), rtol=1e-6)


def test_wrong_label_arguments_are_one_line_errors_naming_them(pretraining_data):
    backbone = _backbone()
    with pytest.raises(
        ConfigError,
        match=r"^num_classes=2 does not match the 3 labels=\['negative', 'neutral', "
        r"'positive'\]; leave num_classes out, labels give it$",
    ) as error:
        ElectraTextClassifier(backbone, num_classes=2, labels=NAMES)
    assert error.value.arguments == ("num_classes", "labels")
    with pytest.raises(ConfigError, match="^a regression model has no labels: pass labels=... or regression=True"):
        ElectraTextClassifier(backbone, regression=True, labels=NAMES)
    with pytest.raises(ConfigError, match=r"^a classifier needs num_classes >= 2, got num_classes=1; use "):
        ElectraTextClassifier(backbone, num_classes=1)
    preprocessor = ElectraTextClassifierPreprocessor(pretraining_data[1], max_seq_length=8)
    unnamed = ElectraTextClassifier(backbone, preprocessor=preprocessor)
    unnamed.compile()
    message = (
        r"^this ElectraTextClassifier has no label names, so y must hold class ids: build it with "
        r"labels=\[...\] \(the label strings in id order\) to fit it on label strings$"
    )
    texts, labels = ["w1 w2", "w3"], ["positive", "negative"]
    for data in ((texts, labels), (tf.data.Dataset.from_tensor_slices((texts, labels)).batch(2), None)):
        with pytest.raises(ConfigError, match=message) as error:
            unnamed.fit(*data, verbose=0)
        assert error.value.arguments == ("labels",)
        with pytest.raises(ConfigError, match=message):
            unnamed.evaluate(*data, verbose=0)
    regressor = ElectraTextClassifier(backbone, regression=True, preprocessor=preprocessor)
    regressor.compile()
    with pytest.raises(ConfigError, match="^a regression model takes numbers as y, not label strings$"):
        regressor.fit(texts, labels, verbose=0)
