"""LoRA on `ElectraBackbone`: the factors' gradients through the project's fused Transformer layer against keras-hub's
`TransformerEncoder` run on the effective kernels, what trains afterwards, and what is refused."""

import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.errors import ConfigError
from electra_tf.models import ElectraBackbone

HIDDEN, HEADS, INTERMEDIATE, RANK, ALPHA = 32, 4, 64, 3, 12.0
ARCHITECTURE = dict(
    vocab_size=60,
    embedding_size=16,
    hidden_size=HIDDEN,
    num_layers=2,
    num_heads=HEADS,
    intermediate_size=INTERMEDIATE,
    max_position_embeddings=20,
    hidden_dropout=0.0,
    attention_dropout=0.0,
)
# keras-hub's TransformerEncoder names for ours (`ElectraTransformerLayer`'s sub-layers).
KERAS_HUB_NAMES = {
    "query": "self_attention_layer/query",
    "key": "self_attention_layer/key",
    "value": "self_attention_layer/value",
    "attention_output": "self_attention_layer/attention_output",
    "attention_layer_norm": "self_attention_layer_norm",
    "intermediate": "feedforward_intermediate_dense",
    "output": "feedforward_output_dense",
    "output_layer_norm": "feedforward_layer_norm",
}


def _lora_backbone(seed=0, targets=None):
    """A backbone with LoRA on `targets` (default query and value), every weight (the B factors, biases, LayerNorms)
    away from its initial value so that no gradient vanishes by construction (B = 0 would give A a zero gradient)."""
    backbone = ElectraBackbone(**ARCHITECTURE)
    backbone.enable_lora(RANK, target_layer_names=targets, lora_alpha=ALPHA)
    rng = np.random.default_rng(seed)
    for variable in backbone.weights:
        variable.assign(
            rng.normal(scale=0.3, size=variable.shape).astype("float32")
            + (1.0 if variable.path.endswith("gamma") else 0.0)
        )
    return backbone


def _own_weights(layer):
    """{"query/kernel": value, "query/lora_kernel_a": ..., ...} of one Transformer layer."""
    return {variable.path.split("/", 1)[1]: variable.numpy() for variable in layer.weights}


def _keras_hub_encoder(weights, targets):
    """keras-hub's post-LayerNorm encoder (exact GELU, its own multi-head attention with per-head kernels) holding
    `weights`, with each LoRA projection's kernel replaced by its effective W + (alpha / rank) A B."""
    encoder = keras_hub.layers.TransformerEncoder(
        INTERMEDIATE, HEADS, dropout=0.0, activation="gelu", layer_norm_epsilon=1e-12
    )
    encoder.build((None, None, HIDDEN))
    values = dict(weights)
    for name in targets:
        values[f"{name}/kernel"] = weights[f"{name}/kernel"] + ALPHA / RANK * (
            weights[f"{name}/lora_kernel_a"] @ weights[f"{name}/lora_kernel_b"]
        )
    ours = {
        f"{theirs}/{leaf}": f"{own}/{leaf}"
        for own, theirs in KERAS_HUB_NAMES.items()
        for leaf in ("kernel", "bias", "gamma", "beta")
    }
    for variable in encoder.weights:
        variable.assign(values[ours[variable.path.split("/", 1)[1]]].reshape(variable.shape))
    return encoder


# The default targets, and every projection (the fused blocks after attention read the others' kernels).
@pytest.mark.parametrize(
    "targets", [("query", "value"), ("query", "key", "value", "attention_output", "intermediate", "output")]
)
def test_lora_gradients_through_the_fused_layer_equal_keras_hub_encoder_on_the_effective_kernels(targets):
    backbone = _lora_backbone(targets=list(targets))
    layer = backbone.transformer_layer_1
    weights = _own_weights(layer)
    encoder = _keras_hub_encoder(weights, targets)
    rng = np.random.default_rng(1)
    hidden = tf.constant(rng.normal(size=(3, 9, HIDDEN)).astype("float32"))
    mask = np.ones((3, 9), "int32")
    mask[1, 5:] = mask[2, 2:] = 0
    upstream = tf.constant(rng.normal(size=(3, 9, HIDDEN)).astype("float32"))

    with tf.GradientTape() as tape:
        tape.watch(hidden)
        expected = encoder(hidden, padding_mask=tf.constant(mask), training=True)
    kernels = {
        own: variable
        for variable in encoder.weights
        for own, theirs in KERAS_HUB_NAMES.items()
        if own in targets and variable.path.endswith(f"/{theirs}/kernel")
    }
    *kernel_gradients, hidden_gradient = tape.gradient(expected, [*kernels.values(), hidden], output_gradients=upstream)
    kernel_gradients = dict(zip(kernels, kernel_gradients))
    bias = tf.constant((1.0 - mask[:, None, None, :].astype("float32")) * -10000.0)
    # The layer itself is frozen (its `trainable_weights` are []); the backbone trains these of its variables.
    factors = [variable for variable in layer.weights if variable.trainable]
    assert [variable.path.split("/", 1)[1] for variable in factors] == [
        f"{name}/lora_kernel_{factor}" for name in targets for factor in "ab"
    ]
    for training in (True, False):  # the fused training kernels, and the Keras sub-layers
        with tf.GradientTape() as tape:
            tape.watch(hidden)
            outputs = layer(hidden, bias, training=training)
        *gradients, own_hidden_gradient = tape.gradient(outputs, [*factors, hidden], output_gradients=upstream)
        np.testing.assert_allclose(outputs.numpy() * mask[..., None], expected.numpy() * mask[..., None], atol=2e-5)
        # What the layer below learns from: the input's gradient (the product of each factor is in the kernel once).
        np.testing.assert_allclose(own_hidden_gradient.numpy(), hidden_gradient.numpy(), rtol=1e-4, atol=1e-4)
        for index, name in enumerate(targets):
            # W_eff = W + s A B: dL/dA = s dL/dW_eff B^T, dL/dB = s A^T dL/dW_eff.
            a = weights[f"{name}/lora_kernel_a"]
            kernel_gradient = kernel_gradients[name].numpy().reshape(a.shape[0], -1)
            a, b = weights[f"{name}/lora_kernel_a"], weights[f"{name}/lora_kernel_b"]
            expected_a = ALPHA / RANK * kernel_gradient @ b.T
            expected_b = ALPHA / RANK * a.T @ kernel_gradient
            assert np.abs(expected_a).max() > 0.1 and np.abs(expected_b).max() > 0.1, name
            np.testing.assert_allclose(gradients[2 * index].numpy(), expected_a, rtol=1e-4, atol=1e-4, err_msg=name)
            np.testing.assert_allclose(gradients[2 * index + 1].numpy(), expected_b, rtol=1e-4, atol=1e-4, err_msg=name)


def _weight_gradient_gemms(layer, variables):
    """Output shapes of the GEMMs over the tokens with a fixed-size result that a training step's gradient of
    `variables` runs: its kernel-shaped gradients (the token count is unknown when traced; the LoRA product A B of
    Keras' `kernel`, from two variables, is not over the tokens). Only ops the gradients depend on count: TensorFlow
    prunes the rest of the traced graph before running it."""

    @tf.function(input_signature=[tf.TensorSpec([None, None, HIDDEN]), tf.TensorSpec([None, 1, 1, None])])
    def step(hidden, bias):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(hidden, bias, training=True)))
        return tape.gradient(loss, variables)

    graph = step.get_concrete_function().graph
    needed, pending = set(), [tensor.op for tensor in graph.outputs]
    while pending:
        op = pending.pop()
        if op.name not in needed:
            needed.add(op.name)
            pending.extend([tensor.op for tensor in op.inputs] + list(op.control_inputs))
    return sorted(
        tuple(op.outputs[0].shape)
        for op in graph.get_operations()
        if op.name in needed
        and op.type == "MatMul"
        and op.outputs[0].shape.is_fully_defined()
        and not all(tensor.shape.is_fully_defined() for tensor in op.inputs)
    )


def test_a_training_step_computes_no_gradient_of_the_frozen_kernels():
    backbone = _lora_backbone(targets=["query", "value", "intermediate"])
    layer = backbone.transformer_layer_0
    factors = [variable for variable in layer.weights if variable.trainable]
    # Each adapted projection's A [in, r] and B [r, out] only.
    assert _weight_gradient_gemms(layer, factors) == sorted(
        [(HIDDEN, RANK), (RANK, HIDDEN)] * 2 + [(HIDDEN, RANK), (RANK, INTERMEDIATE)]
    )
    # Full fine-tuning computes every kernel's: the [H, 3H] of query, key and value, and the three after attention.
    plain = ElectraBackbone(**ARCHITECTURE).transformer_layer_0
    kernels = [variable for variable in plain.weights if variable.path.endswith("/kernel")]
    assert _weight_gradient_gemms(plain, kernels) == sorted(
        [(HIDDEN, 3 * HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, INTERMEDIATE), (INTERMEDIATE, HIDDEN)]
    )


def test_only_the_factors_train_and_their_number_is_four_layers_hidden_rank():
    backbone = ElectraBackbone(**ARCHITECTURE)
    before = {variable.path: variable.numpy() for variable in backbone.weights}
    backbone.enable_lora(RANK)
    trainable = backbone.trainable_weights
    assert sorted(variable.path for variable in trainable) == sorted(
        f"transformer_layer_{i}/{name}/lora_kernel_{factor}"
        for i in range(2)
        for name in ("query", "value")
        for factor in "ab"
    )
    # Per layer, query and value each: A [H, r] + B [r, H].
    assert sum(int(np.prod(variable.shape)) for variable in trainable) == 2 * 2 * (HIDDEN * RANK + RANK * HIDDEN)
    assert [dense.lora_alpha for dense in backbone.lora_enabled_layers()] == [RANK] * 4  # Keras' default scale 1
    # Keras starts B at zero: the adapted backbone computes what the pre-trained one did.
    inputs = {
        "token_ids": np.array([[2, 7, 9, 3]]),
        "segment_ids": np.zeros((1, 4), "int32"),
        "padding_mask": np.ones((1, 4), "int32"),
    }
    plain = ElectraBackbone(**ARCHITECTURE)
    plain.set_weights([before[variable.path] for variable in plain.weights])
    np.testing.assert_allclose(backbone(inputs).numpy(), plain(inputs).numpy(), atol=1e-6)


def test_other_targets_and_refusals():
    backbone = ElectraBackbone(**ARCHITECTURE)
    backbone.enable_lora(2, target_layer_names=["intermediate", "embeddings_project"], lora_alpha=4)
    assert [dense.path for dense in backbone.lora_enabled_layers()] == [
        "transformer_layer_0/intermediate",
        "transformer_layer_1/intermediate",
        "embeddings_project",
    ]
    assert {dense.lora_alpha for dense in backbone.lora_enabled_layers()} == {4}
    with pytest.raises(ConfigError, match="^LoRA is already enabled on this backbone") as raised:
        backbone.enable_lora(2)
    assert raised.value.arguments == ("rank",)
    fresh = ElectraBackbone(**ARCHITECTURE)
    with pytest.raises(
        ConfigError,
        match=r"names no projection of this backbone \(\['query_dense'\]\); choose among "
        r"\['attention_output', 'embeddings_project', 'intermediate', 'key', "
        r"'output', 'query', 'value'\]$",
    ) as raised:
        fresh.enable_lora(2, target_layer_names=["query_dense", "value"])
    assert raised.value.arguments == ("target_layer_names",)
    for rank, alpha, argument in ((0, None, "rank"), (2.0, None, "rank"), (2, 0, "lora_alpha")):
        with pytest.raises(ConfigError, match=f"^{argument} must be") as raised:
            fresh.enable_lora(rank, lora_alpha=alpha)
        assert raised.value.arguments == (argument,)
    assert not fresh.lora_enabled_layers() and all(variable.trainable for variable in fresh.weights)


def _task_models(backbone_factory):
    """(model, number of head weights) for each task model on a fresh backbone."""
    from finetune.models import ElectraTextClassifier, ElectraTokenClassifier
    from finetune.models.squad_model import ElectraSquadModel

    return [
        (ElectraTextClassifier(backbone_factory(), num_classes=3), HIDDEN * 3 + 3),
        (ElectraTokenClassifier(backbone_factory(), tags=["B", "I", "O", "X", "Y"]), HIDDEN * 5 + 5),
        (ElectraSquadModel(backbone_factory(), head="simple"), HIDDEN * 2 + 2),
    ]


def _batch(rng, batch=4, length=7):
    ids = rng.integers(5, 60, size=(batch, length)).astype("int32")
    mask = np.ones_like(ids)
    mask[0, 4:] = 0
    return {"token_ids": ids * mask, "segment_ids": np.zeros_like(ids), "padding_mask": mask}


def test_task_models_train_the_factors_and_their_head_only():
    for model, head_weights in _task_models(lambda: ElectraBackbone(**ARCHITECTURE)):
        model.enable_lora(RANK)
        assert model.lora_enabled
        head = [variable for variable in model.trainable_variables if "lora_kernel" not in variable.path]
        assert len(model.trainable_variables) == 2 * 2 * 2 + 2 and len(head) == 2, type(model).__name__
        assert (
            sum(int(np.prod(variable.shape)) for variable in model.trainable_variables)
            == 2 * 2 * 2 * HIDDEN * RANK + head_weights
        ), type(model).__name__

    # A training step moves those and nothing else.
    from finetune.models import ElectraTextClassifier

    classifier = ElectraTextClassifier(ElectraBackbone(**ARCHITECTURE), num_classes=3)
    classifier.enable_lora(RANK)
    classifier.compile(optimizer="adam")
    before = {variable.path: variable.numpy() for variable in classifier.weights}
    trainable = {variable.path for variable in classifier.trainable_variables}
    # Two steps: B starts at zero, so A's first gradient is zero.
    classifier.fit(_batch(np.random.default_rng(2)), np.array([0, 1, 2, 1]), epochs=2, verbose=0)
    for variable in classifier.weights:
        changed = not np.array_equal(variable.numpy(), before[variable.path])
        assert changed == (variable.path in trainable), variable.path


def test_merged_model_computes_the_lora_model_with_merged_kernels_and_no_factors():
    from electra_tf.models.lora import merged_lora
    from finetune.models import ElectraTextClassifier

    backbone = _lora_backbone(seed=3)
    classifier = ElectraTextClassifier(backbone, num_classes=3)
    assert merged_lora(ElectraTextClassifier(ElectraBackbone(**ARCHITECTURE))).lora_enabled is False
    inputs = _batch(np.random.default_rng(4))
    merged = merged_lora(classifier)
    assert type(merged) is ElectraTextClassifier and not merged.lora_enabled
    assert not [variable for variable in merged.weights if "lora" in variable.path]
    assert len(merged.trainable_variables) == len(merged.weights)
    np.testing.assert_allclose(
        merged(inputs, training=False).numpy(), classifier(inputs, training=False).numpy(), atol=1e-5
    )
    weights = _own_weights(backbone.transformer_layer_0)
    np.testing.assert_allclose(
        merged.backbone.transformer_layer_0.query_dense.kernel.numpy(),
        weights["query/kernel"] + ALPHA / RANK * weights["query/lora_kernel_a"] @ weights["query/lora_kernel_b"],
        rtol=1e-6,
        atol=1e-6,
    )
    # Without merging, the LoRA product is a visible change.
    assert np.abs(merged.backbone.transformer_layer_0.query_dense.kernel.numpy() - weights["query/kernel"]).max() > 0.1
