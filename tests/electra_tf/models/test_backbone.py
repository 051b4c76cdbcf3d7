"""`ElectraBackbone`: keras-hub presets round trip, keras-hub's own ELECTRA weights give its outputs, shared blocks."""

import keras_hub
import numpy as np
import pytest

from electra_tf.architecture import ElectraArchitecture
from electra_tf.layers import ElectraEmbeddings
from electra_tf.models import ElectraBackbone, load_checkpoint

ARCHITECTURE = dict(
    vocab_size=120,
    embedding_size=16,
    hidden_size=32,
    num_layers=2,
    num_heads=4,
    intermediate_size=64,
    max_position_embeddings=40,
)


def _inputs(batch=3, length=12, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 120, size=(batch, length)).astype("int32")
    mask = np.ones_like(ids)
    mask[1, 7:] = 0
    segments = np.zeros_like(ids)
    segments[:, 6:] = 1
    return {"token_ids": ids * mask, "segment_ids": segments * mask, "padding_mask": mask}


def test_save_to_preset_and_from_preset_give_equal_outputs(tmp_path):
    backbone = ElectraBackbone(**ARCHITECTURE)
    expected = backbone(_inputs()).numpy()
    backbone.save_to_preset(str(tmp_path / "preset"))
    for restored in (
        ElectraBackbone.from_preset(str(tmp_path / "preset")),
        keras_hub.models.Backbone.from_preset(str(tmp_path / "preset")),
    ):
        assert type(restored) is ElectraBackbone and restored.architecture() == backbone.architecture()
        np.testing.assert_array_equal(restored(_inputs()).numpy(), expected)


def test_padding_does_not_change_the_real_tokens():
    backbone = ElectraBackbone(**ARCHITECTURE)
    inputs = _inputs()
    short = {name: value[1:2, :7] for name, value in inputs.items()}
    np.testing.assert_allclose(backbone(inputs).numpy()[1, :7], backbone(short).numpy()[0], atol=1e-5)


def test_hidden_states_are_the_functional_graph_s_layer_outputs():
    import keras

    backbone = ElectraBackbone(**ARCHITECTURE)
    inputs = _inputs()
    states = [state.numpy() for state in backbone.hidden_states(inputs)]
    assert len(states) == ARCHITECTURE["num_layers"] + 1
    names = ["embeddings_project"] + [f"transformer_layer_{i}" for i in range(ARCHITECTURE["num_layers"])]
    for name, state in zip(names, states):
        tap = keras.Model(backbone.input, backbone.get_layer(name).output)
        np.testing.assert_allclose(state, tap(inputs).numpy(), atol=1e-6, err_msg=name)
    np.testing.assert_allclose(states[-1], backbone(inputs).numpy(), atol=1e-6)


def test_keras_hub_electra_weights_give_keras_hub_outputs(tmp_path):
    """keras-hub's ElectraBackbone (same variables, per-head attention kernels, tanh GELU) converted into ours."""
    reference = keras_hub.models.ElectraBackbone(
        vocab_size=120,
        num_layers=2,
        num_heads=4,
        hidden_dim=32,
        embedding_dim=16,
        intermediate_dim=64,
        max_sequence_length=40,
    )
    rng = np.random.default_rng(1)
    for variable in reference.weights:  # non-trivial LayerNorms and biases too
        variable.assign(rng.normal(scale=0.2, size=variable.shape).astype("float32"))
    reference.save_to_preset(str(tmp_path / "keras_hub"))
    ours = load_checkpoint(str(tmp_path / "keras_hub"), "discriminator", allow_missing_head=True).model.backbone
    assert ours.hidden_activation == "gelu_approximate"
    expected = reference(_inputs())["sequence_output"].numpy()
    np.testing.assert_allclose(ours(_inputs()).numpy(), expected, atol=1e-5, rtol=0)
    # The reference's exact GELU is a different function: the approximation's error is visible.
    exact = ElectraBackbone(**{**ours.architecture(), "hidden_activation": "gelu"})
    exact.set_weights(ours.get_weights())
    assert np.abs(exact(_inputs()).numpy() - expected).max() > 1e-5


def test_a_shared_embedding_block_is_one_object_in_both_backbones():
    embeddings = ElectraEmbeddings.for_architecture(ElectraArchitecture(**ARCHITECTURE))
    first = ElectraBackbone(**ARCHITECTURE, embeddings=embeddings)
    second = ElectraBackbone(
        **{**ARCHITECTURE, "hidden_size": 8, "num_heads": 1, "intermediate_size": 32}, embeddings=embeddings
    )
    assert first.embeddings is second.embeddings is embeddings
    shared = {id(v) for v in embeddings.weights}
    assert shared <= {id(v) for v in first.weights} and shared <= {id(v) for v in second.weights}
    with pytest.raises(ValueError, match="embedding_size=32"):
        ElectraBackbone(**{**ARCHITECTURE, "embedding_size": 32}, embeddings=embeddings)


def test_an_int8_backbone_stays_near_float_and_a_task_model_on_it_saves_and_loads(tmp_path):
    """Keras' `quantize("int8")` of the backbone: every projection and the token-type table become int8 (the
    Transformer layer then computes them with their own calls); keras-hub's config records each one's policy by
    path, which the project's layers, building their sub-layers with their own policy, resolve on reload."""
    import warnings

    import keras

    from finetune.models import ElectraTextClassifier

    keras.utils.set_random_seed(0)
    classifier = ElectraTextClassifier(ElectraBackbone(**ARCHITECTURE), num_classes=3)
    inputs = _inputs()
    expected = classifier(inputs, training=False).numpy()
    with warnings.catch_warnings():  # the layers without weights to quantize say so
        warnings.simplefilter("ignore")
        classifier.backbone.quantize("int8")
    quantized = [dense for layer in classifier.backbone.transformer_layers for dense in layer.dense_layers()]
    assert {dense.quantization_mode for dense in quantized} == {"int8"}
    outputs = classifier(inputs, training=False).numpy()
    # Per-channel int8 kernels and per-token int8 inputs: 0.031 off float logits up to 2.06 here (1.5 %).
    assert 0 < np.abs(outputs - expected).max() < 0.03 * np.abs(expected).max()
    classifier.save(str(tmp_path / "int8.keras"))
    restored = keras.saving.load_model(str(tmp_path / "int8.keras"), compile=False)
    assert restored.backbone.transformer_layer_1.query_dense.quantization_mode == "int8"
    np.testing.assert_array_equal(restored(inputs, training=False).numpy(), outputs)


def _without_position_table(backbone):
    shape = (ARCHITECTURE["max_position_embeddings"], ARCHITECTURE["embedding_size"])
    backbone.embeddings.position_embeddings.set_weights([np.zeros(shape)])
    return backbone


def test_alibi_gives_an_encoder_without_a_position_table_the_distances_between_tokens():
    """Without positions, an encoder is permutation-equivariant: permuting the tokens permutes the outputs. ALiBi's
    bias depends on where tokens stand, so with it a permutation changes what each token sees."""
    inputs = {name: value[:1, :10] for name, value in _inputs().items()}
    inputs["segment_ids"] = np.zeros_like(inputs["segment_ids"])
    order = np.random.default_rng(1).permutation(10)
    permuted = {name: value[:, order] for name, value in inputs.items()}
    plain = _without_position_table(ElectraBackbone(**ARCHITECTURE))
    alibi = _without_position_table(ElectraBackbone(**ARCHITECTURE, alibi=True))
    alibi.set_weights(plain.get_weights())
    np.testing.assert_allclose(plain(permuted).numpy(), plain(inputs).numpy()[:, order], atol=1e-5)
    # At initialisation attention is near uniform and the values small: the change is small, but 100x the tolerance.
    assert np.abs(alibi(permuted).numpy() - alibi(inputs).numpy()[:, order]).max() > 1e-3
    # Every path applies it: the functional graph, encode and hidden_states.
    np.testing.assert_allclose(alibi.encode(inputs).numpy(), alibi(inputs).numpy(), atol=1e-6)
    np.testing.assert_allclose(alibi.hidden_states(inputs)[-1].numpy(), alibi(inputs).numpy(), atol=1e-6)


def test_an_alibi_backbone_keeps_it_through_a_preset_and_ignores_padding(tmp_path):
    backbone = ElectraBackbone(**ARCHITECTURE, alibi=True)
    inputs = _inputs()
    short = {name: value[1:2, :7] for name, value in inputs.items()}
    np.testing.assert_allclose(backbone(inputs).numpy()[1, :7], backbone(short).numpy()[0], atol=1e-5)
    backbone.save_to_preset(str(tmp_path / "preset"))
    restored = ElectraBackbone.from_preset(str(tmp_path / "preset"))
    assert restored.alibi is True and restored.get_config()["alibi"] is True
    np.testing.assert_array_equal(restored(inputs).numpy(), backbone(inputs).numpy())


def test_alibi_must_be_a_boolean():
    from electra_tf.errors import ConfigError

    with pytest.raises(ConfigError, match="ElectraArchitecture.alibi must be True or False, got 'yes'"):
        ElectraArchitecture(alibi="yes")
