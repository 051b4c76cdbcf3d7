"""The classifier head composes the pre-trained backbone: reference structure, no weight copies, config."""

import numpy as np
import pytest

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.models import build_discriminator, clone_backbone
from finetune.models import ElectraTextClassifier

CONFIG = ElectraConfig.from_preset("tiny").with_vocab(50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)


def _inputs(batch=3, length=10, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, 50, size=(batch, length)).astype("int32")
    mask = np.ones_like(ids)
    mask[0, 6:] = 0
    return {"token_ids": ids * mask, "segment_ids": np.zeros_like(ids), "padding_mask": mask}


def test_classifier_reads_the_cls_vector_of_the_backbone():
    discriminator = build_discriminator(CONFIG)
    classifier = ElectraTextClassifier(discriminator.backbone, num_classes=3)
    assert classifier.backbone is discriminator.backbone  # composed, not copied
    inputs = _inputs()
    logits = classifier(inputs, training=False)
    assert tuple(logits.shape) == (3, 3) and logits.dtype.name == "float32"
    cls_vector = discriminator.backbone(inputs, training=False)[:, 0]
    kernel, bias = classifier.output_dense.get_weights()
    np.testing.assert_allclose(logits, np.asarray(cls_vector) @ kernel + bias, rtol=1e-5, atol=1e-5)
    assert not np.any(bias), "zero bias, as tf.layers.dense"
    # No pooler and no discriminator head: backbone + one dense layer, named for layer-wise decay.
    backbone_ids = {id(v) for v in discriminator.backbone.trainable_variables}
    head_paths = [v.path for v in classifier.trainable_variables if id(v) not in backbone_ids]
    assert head_paths == ["classifier/kernel", "classifier/bias"]
    assert classifier.output_dropout.rate == 0.1


def test_cloned_backbones_are_independent_of_the_pretrained_one():
    discriminator = build_discriminator(CONFIG)
    classifier = ElectraTextClassifier(clone_backbone(discriminator.backbone))
    np.testing.assert_array_equal(classifier.backbone(_inputs()), discriminator.backbone(_inputs()))
    before = discriminator.backbone.embeddings.word_embeddings.embeddings.numpy().copy()
    classifier.backbone.embeddings.word_embeddings.embeddings.assign(np.zeros_like(before))
    np.testing.assert_array_equal(discriminator.backbone.embeddings.word_embeddings.embeddings.numpy(), before)


def test_regression_gives_one_score_per_example_and_config_round_trips():
    regressor = ElectraTextClassifier(build_discriminator(CONFIG).backbone, regression=True)
    assert tuple(regressor(_inputs(), training=False).shape) == (3,)
    clone = ElectraTextClassifier.from_config(regressor.get_config())
    assert clone.regression and clone.num_classes == 1
    assert clone.backbone.architecture() == regressor.backbone.architecture()
    clone.set_weights(regressor.get_weights())
    np.testing.assert_allclose(clone(_inputs(), training=False), regressor(_inputs(), training=False), rtol=1e-6)
    with pytest.raises(ConfigError, match="num_classes >= 2"):
        ElectraTextClassifier(build_discriminator(CONFIG).backbone, num_classes=1)


def test_compile_without_arguments_is_the_reference_finetuning_optimizer():
    classifier = ElectraTextClassifier(build_discriminator(CONFIG).backbone)  # tiny: hidden 128, 2 layers
    classifier.compile()
    optimizer = classifier.optimizer
    assert type(optimizer).__name__ == "LayerwiseAdamWeightDecay"
    assert optimizer.layerwise_lr_decay == 0.8 and optimizer.num_layers == 2 and not optimizer.bias_correction
    assert float(optimizer.learning_rate) == pytest.approx(3e-4)  # ELECTRA-Small's fine-tuning rate
    assert optimizer.decoupled_weight_decay == 0.01
    classifier.compile(num_train_steps=100)
    schedule = classifier.optimizer.learning_rate
    assert float(schedule) == 0.0  # step 0 of a 10-step linear warm-up
