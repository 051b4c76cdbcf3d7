"""The fine-tuning optimizer: per-variable layer-wise learning rates really scale each update; reference schedule."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.models import build_discriminator
from electra_tf.training.schedules import WarmupLinearDecay
from finetune.layerwise_lr import layerwise_lr_multipliers
from finetune.models import ElectraTextClassifier
from finetune.models.squad_model import ElectraSquadModel
from finetune.optimization import (
    LayerwiseAdamWeightDecay,
    create_finetuning_optimizer,
    reference_finetuning_optimizer,
)
from tests.electra_tf.training.reference_optimizer import decayed_by, reference_adam_weight_decay

CONFIG = ElectraConfig.from_preset("tiny").with_vocab(50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)


def _gradients(model):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 50, size=(4, 12)).astype("int32")
    inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": np.ones_like(ids)}
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(model(inputs, training=False)))
    return tape.gradient(loss, model.trainable_variables)


def _one_step_deltas(model, initial, optimizer, gradients):
    model.set_weights(initial)
    before = [v.numpy().copy() for v in model.trainable_variables]
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return [v.numpy() - b for v, b in zip(model.trainable_variables, before)], before


@pytest.mark.parametrize("variant", ["reference", "paper"])
def test_one_step_updates_are_the_plain_updates_times_the_layer_multipliers(variant):
    model = ElectraTextClassifier(build_discriminator(CONFIG).backbone, num_classes=2)
    initial = model.get_weights()
    gradients = _gradients(model)
    gradients = [tf.convert_to_tensor(g) for g in gradients]  # embedding gradients come as IndexedSlices
    # A large step keeps every update well above float32 rounding of the weights, so ratios are exact to ~1e-5.
    settings = dict(learning_rate=0.1, num_layers=2, weight_decay=0.01)
    plain, _ = _one_step_deltas(model, initial, LayerwiseAdamWeightDecay(layerwise_lr_decay=1.0, **settings), gradients)
    decayed, _ = _one_step_deltas(
        model,
        initial,
        LayerwiseAdamWeightDecay(layerwise_lr_decay=0.5, layerwise_lr_variant=variant, **settings),
        gradients,
    )
    multipliers = layerwise_lr_multipliers([v.path for v in model.trainable_variables], 2, 0.5, variant)
    assert sorted(set(multipliers.values())) == (
        [0.0625, 0.125, 0.25, 1.0] if variant == "reference" else [0.125, 0.25, 0.5, 1.0]
    )
    checked = set()
    for variable, plain_delta, decayed_delta in zip(model.trainable_variables, plain, decayed):
        moved = np.abs(plain_delta) > 1e-3
        if not moved.any():  # attention key biases: softmax is invariant to them, their gradient is ~0
            continue
        ratios = decayed_delta[moved] / plain_delta[moved]
        np.testing.assert_allclose(ratios, multipliers[variable.path], rtol=1e-4, err_msg=variable.path)
        checked.add(multipliers[variable.path])
    assert len(checked) == 4, "embeddings, both layers and the head are all checked"


def test_lora_factors_take_the_learning_rate_of_their_layer():
    model = ElectraTextClassifier(build_discriminator(CONFIG).backbone, num_classes=2)
    model.enable_lora(2)
    rng = np.random.default_rng(1)
    for dense in model.backbone.lora_enabled_layers():  # B = 0 would give A a zero gradient
        dense.lora_kernel_b.assign(rng.normal(scale=0.1, size=dense.lora_kernel_b.shape))
    initial = model.get_weights()
    gradients = _gradients(model)
    settings = dict(learning_rate=0.1, num_layers=2, weight_decay=0.01)
    plain, _ = _one_step_deltas(model, initial, LayerwiseAdamWeightDecay(layerwise_lr_decay=1.0, **settings), gradients)
    decayed, _ = _one_step_deltas(
        model, initial, LayerwiseAdamWeightDecay(layerwise_lr_decay=0.5, **settings), gradients
    )
    # The reference's rule by hand: transformer_layer_i gets 0.5^(L + 1 - i) with L = 2, the head 1.
    expected = {
        f"transformer_layer_{i}/{name}/lora_kernel_{factor}": 0.5 ** (3 - i)
        for i in range(2)
        for name in ("query", "value")
        for factor in "ab"
    }
    expected.update({"classifier/kernel": 1.0, "classifier/bias": 1.0})
    assert sorted(variable.path for variable in model.trainable_variables) == sorted(expected)
    for variable, plain_delta, decayed_delta in zip(model.trainable_variables, plain, decayed):
        moved = np.abs(plain_delta) > 1e-3
        assert moved.any(), variable.path
        np.testing.assert_allclose(
            decayed_delta[moved] / plain_delta[moved], expected[variable.path], rtol=1e-4, err_msg=variable.path
        )


def _decays(path):
    """The reference's rule written out for these models: kernels and embedding tables decay, LayerNorm parameters and
    biases do not."""
    return path.endswith(("/kernel", "/embeddings"))


def test_weight_decay_uses_the_layer_learning_rate_and_skips_layer_norm_and_biases():
    model = ElectraTextClassifier(build_discriminator(CONFIG).backbone, num_classes=2)
    initial = model.get_weights()
    zero_gradients = [tf.zeros_like(v) for v in model.trainable_variables]
    optimizer = LayerwiseAdamWeightDecay(learning_rate=0.1, num_layers=2, layerwise_lr_decay=0.5, weight_decay=0.2)
    deltas, before = _one_step_deltas(model, initial, optimizer, zero_gradients)
    multipliers = layerwise_lr_multipliers([v.path for v in model.trainable_variables], 2, 0.5)
    for variable, delta, value in zip(model.trainable_variables, deltas, before):
        if not _decays(variable.path):
            assert not np.any(delta), variable.path
        else:
            np.testing.assert_allclose(
                delta, -0.1 * multipliers[variable.path] * 0.2 * value, rtol=1e-4, atol=1e-9, err_msg=variable.path
            )


def test_squad_model_decays_kernels_and_embedding_tables_only():
    model = ElectraSquadModel(build_discriminator(CONFIG).backbone, head="joint", version_2=True, beam_size=3)
    decayed = decayed_by(LayerwiseAdamWeightDecay(learning_rate=0.1, num_layers=2, weight_decay=0.5), model)
    assert [flag for _, flag in decayed] == [_decays(path) for path, _ in decayed]
    assert ("span_head/end_norm/gamma", False) in decayed and ("span_head/end_hidden/kernel", True) in decayed


@pytest.mark.parametrize("bias_correction", [False, True])
def test_several_steps_match_the_numpy_transcription_with_layer_learning_rates(bias_correction):
    model = ElectraTextClassifier(build_discriminator(CONFIG).backbone, num_classes=2)
    variables = model.trainable_variables
    assert len({v.path for v in variables}) == len(variables)
    schedule = WarmupLinearDecay(0.1, num_train_steps=10, num_warmup_steps=2)
    optimizer = LayerwiseAdamWeightDecay(
        schedule, num_layers=2, layerwise_lr_decay=0.5, weight_decay=0.01, bias_correction=bias_correction
    )
    rng = np.random.default_rng(4)
    initial = {v.path: v.numpy() for v in variables}
    steps = [{v.path: rng.normal(size=v.shape) for v in variables} for _ in range(4)]
    for grads in steps:
        optimizer.apply([grads[v.path].astype(np.float32) for v in variables], variables)
    multipliers = layerwise_lr_multipliers([v.path for v in variables], 2, 0.5)
    expected = reference_adam_weight_decay(
        initial,
        steps,
        [float(schedule(step)) for step in range(4)],
        {v.path: _decays(v.path) for v in variables},
        multipliers,
        bias_correction=bias_correction,
    )
    for variable in variables:
        np.testing.assert_allclose(
            variable.numpy(), expected[variable.path], rtol=1e-6, atol=1e-6, err_msg=variable.path
        )


def test_factory_gives_the_reference_settings_and_serialises():
    steps = 115 * 3  # MRPC's 3668 examples in batches of 32, 3 epochs
    optimizer = create_finetuning_optimizer(12, 3e-4, steps, layerwise_lr_decay=0.8)
    schedule = keras.optimizers.schedules.deserialize(optimizer.get_config()["learning_rate"])
    assert isinstance(schedule, WarmupLinearDecay)
    assert (schedule.num_warmup_steps, schedule.num_train_steps, schedule.mode) == (34, 345, "multiply")
    assert float(schedule(34)) == pytest.approx(3e-4 * (1 - 34 / 345))
    assert optimizer.epsilon == 1e-6 and optimizer.decoupled_weight_decay == 0.01 and not optimizer.bias_correction
    clone = LayerwiseAdamWeightDecay.from_config(optimizer.get_config())
    assert (clone.num_layers, clone.layerwise_lr_decay, clone.layerwise_lr_variant, clone.decoupled_weight_decay) == (
        12,
        0.8,
        "reference",
        0.01,
    )
    assert clone.get_config() == optimizer.get_config()
    assert float(optimizer.learning_rate) == 0.0  # warm-up multiplied: the first step's rate is 0


def test_the_fine_tuning_optimizers_clip_the_gradient_at_the_reference_norm():
    """The reference clips every fine-tuning update's gradient to global norm 1.0 (what clipping does is tested in
    tests/electra_tf/training/test_optimizers.py, on one device and on two replicas)."""
    backbone = build_discriminator(CONFIG).backbone
    assert create_finetuning_optimizer(2, 1e-4, 100).clip_norm == 1.0
    assert reference_finetuning_optimizer(backbone, 100).clip_norm == 1.0
    constant_rate = reference_finetuning_optimizer(backbone)
    assert LayerwiseAdamWeightDecay.from_config(constant_rate.get_config()).clip_norm == 1.0
