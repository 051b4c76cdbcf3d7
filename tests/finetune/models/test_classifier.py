"""The classifier head on the pre-trained encoder: reference structure, weights from the discriminator, config."""

import numpy as np
import pytest

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.models.discriminator import ElectraDiscriminator
from finetune.models import ElectraClassifier

CONFIG = ElectraConfig.from_preset("tiny").with_vocab(50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)


def _inputs(batch=3, length=10, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, 50, size=(batch, length)).astype("int32")
    mask = np.ones_like(ids)
    mask[0, 6:] = 0
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": np.zeros_like(ids)}


def test_classifier_reads_the_cls_vector_of_the_copied_encoder():
    discriminator = ElectraDiscriminator(CONFIG)
    classifier = ElectraClassifier.from_discriminator(discriminator, num_classes=3)
    inputs = _inputs()
    np.testing.assert_allclose(classifier.encode(inputs, training=False), discriminator.encode(inputs, training=False),
                               rtol=1e-6, atol=1e-6)
    logits = classifier(inputs, training=False)
    assert tuple(logits.shape) == (3, 3) and logits.dtype.name == "float32"
    cls_vector = discriminator.encode(inputs, training=False)[:, 0]
    kernel, bias = classifier.classifier.get_weights()
    np.testing.assert_allclose(logits, np.asarray(cls_vector) @ kernel + bias, rtol=1e-5, atol=1e-5)
    assert not np.any(bias), "zero bias, as tf.layers.dense"
    # No pooler and no leftover discriminator head: encoder + one dense layer.
    head_paths = [v.path for v in classifier.trainable_variables if "embeddings" not in v.path
                  and "transformer_layer" not in v.path]
    assert head_paths == ["electra_classifier/classifier/kernel", "electra_classifier/classifier/bias"]
    assert classifier.dropout.rate == 0.1


def test_classifier_copies_are_independent_of_the_discriminator():
    discriminator = ElectraDiscriminator(CONFIG)
    classifier = ElectraClassifier.from_discriminator(discriminator)
    before = discriminator.embeddings.get_weights()[0].copy()
    classifier.embeddings.word_embeddings.embeddings.assign(np.zeros_like(before))
    np.testing.assert_array_equal(discriminator.embeddings.get_weights()[0], before)


def test_regression_gives_one_score_per_example_and_config_round_trips():
    regressor = ElectraClassifier(CONFIG, regression=True)
    assert tuple(regressor(_inputs(), training=False).shape) == (3,)
    clone = ElectraClassifier.from_config(regressor.get_config())
    assert clone.regression and clone.num_classes == 1 and clone.electra_config == CONFIG
    clone.set_weights(regressor.get_weights())
    np.testing.assert_allclose(clone(_inputs(), training=False), regressor(_inputs(), training=False), rtol=1e-6)
    with pytest.raises(ConfigError, match="num_classes >= 2"):
        ElectraClassifier(CONFIG, num_classes=1)
