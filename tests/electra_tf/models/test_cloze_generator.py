"""Electric's two-tower cloze generator: causal towers, the one-position shifts and the cloze head, against an
independent computation (each tower's state at t equals a bidirectional pass that sees only the tokens on its side)."""

import numpy as np
from scipy.special import erf

from electra_tf.config import ElectraConfig
from electra_tf.models import TwoTowerClozeGenerator

LENGTH = 7


def _generator():
    config = ElectraConfig.from_preset("tiny", vocab_size=300)
    return TwoTowerClozeGenerator(config.generator_architecture().architecture())


def _inputs(padding_mask=None):
    ids = np.random.default_rng(0).integers(5, 300, size=(2, LENGTH)).astype(np.int32)
    mask = np.ones_like(ids) if padding_mask is None else padding_mask
    return {"token_ids": ids, "padding_mask": mask, "segment_ids": np.zeros_like(ids)}


def _visible_only(backbone, keep):
    """A bidirectional pass of `backbone` in which only the keys where `keep` (a [LENGTH] bool) are visible."""
    inputs = _inputs(np.tile(keep.astype(np.int32), (2, 1)))
    return backbone.encode(inputs, training=False).numpy()


def _head(generator, context):
    head = generator.cloze_head
    hidden = context @ head.dense.kernel.numpy() + head.dense.bias.numpy()
    hidden = 0.5 * hidden * (1.0 + erf(hidden / np.sqrt(2.0)))
    mean, variance = hidden.mean(-1, keepdims=True), hidden.var(-1, keepdims=True)
    hidden = (hidden - mean) / np.sqrt(variance + 1e-12) * head.layer_norm.gamma.numpy() + head.layer_norm.beta.numpy()
    table = generator.embeddings.word_embeddings.embeddings.numpy()
    return hidden @ table.T + head.output_bias.numpy()


def test_towers_are_causal_and_position_t_reads_the_states_beside_it():
    generator = _generator()
    inputs = _inputs()
    positions = np.arange(LENGTH)
    ltr = generator.ltr_backbone.encode(inputs, training=False, direction="left_to_right").numpy()
    rtl = generator.rtl_backbone.encode(inputs, training=False, direction="right_to_left").numpy()
    for t in range(LENGTH):
        np.testing.assert_allclose(ltr[:, t], _visible_only(generator.ltr_backbone, positions <= t)[:, t], atol=5e-4)
        np.testing.assert_allclose(rtl[:, t], _visible_only(generator.rtl_backbone, positions >= t)[:, t], atol=5e-4)
    # Position t: the left-to-right state of t - 1 and the right-to-left state of t + 1, wrapping at the ends.
    context = np.concatenate([ltr[:, (positions - 1) % LENGTH], rtl[:, (positions + 1) % LENGTH]], axis=-1)
    logits = generator(inputs, training=False).numpy()
    assert logits.shape == (2, LENGTH, 300)
    np.testing.assert_allclose(logits, _head(generator, context), rtol=1e-4, atol=5e-4)


def test_the_logits_at_t_never_depend_on_the_token_at_t():
    generator = _generator()
    inputs = _inputs()
    before = generator(inputs, training=False).numpy()
    changed = dict(inputs, token_ids=inputs["token_ids"].copy())
    changed["token_ids"][:, 3] = 4
    after = generator(changed, training=False).numpy()
    np.testing.assert_allclose(after[:, 3], before[:, 3], atol=1e-5)
    assert np.abs(after[:, [1, 2, 4, 5]] - before[:, [1, 2, 4, 5]]).max() > 1e-3


def test_names_and_config():
    generator = _generator()
    assert [backbone.name for backbone in generator.backbones] == ["generator_ltr", "generator_rtl"]
    assert generator.cloze_head.name == "cloze_predictions"
    assert generator.ltr_backbone.embeddings is generator.rtl_backbone.embeddings is generator.embeddings
    assert tuple(generator.cloze_head.dense.kernel.shape) == (64, 64)  # 2 x the towers' 32 -> E = 64
    rebuilt = TwoTowerClozeGenerator.from_config(generator.get_config())
    assert rebuilt.architecture == generator.architecture


def _variable_ids(layer):
    return {id(variable) for variable in layer.trainable_variables}


def test_each_electric_loss_reaches_only_its_networks():
    import tensorflow as tf

    from electra_tf.models import ElectraPretrainingModel

    config = ElectraConfig.from_preset(
        "tiny", vocab_size=300, objective="electric", cls_id=1, sep_id=2, mask_id=3, pad_id=0, unk_id=4
    )
    model = ElectraPretrainingModel(config, max_seq_length=16)
    ids = np.random.default_rng(1).integers(5, 300, size=(4, 16)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 1, 2
    features = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
    with tf.GradientTape(persistent=True) as tape:
        outputs = model.pretraining_outputs(features, step=0, training=True)
        stats = model.objective.statistics(outputs)
        terms = model.objective.loss_terms(stats, stats, config)
    variables = model.trainable_variables
    embeddings = _variable_ids(model.embeddings)
    generator = _variable_ids(model.generator) - embeddings
    discriminator = _variable_ids(model.discriminator) - embeddings
    assert generator and discriminator and not generator & discriminator
    assert {id(v) for v in variables} == generator | discriminator | embeddings
    for term, reached, untouched in (("generator", generator, discriminator), ("model", discriminator, generator)):
        gradients = tape.gradient(terms[term], variables)
        touched = {
            id(v)
            for v, g in zip(variables, gradients)
            if g is not None and float(tf.reduce_max(tf.abs(tf.convert_to_tensor(g)))) > 0
        }
        assert touched & reached == reached, term
        assert not touched & untouched, term
        word_table = model.embeddings.word_embeddings.embeddings
        assert id(word_table) in touched, term  # shared: the towers' inputs and the cloze head's output table
