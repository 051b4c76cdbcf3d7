import json
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.models import backbone_inputs
from electra_tf.training.pretrainer import ElectraPretrainer


def _tiny(**overrides):
    return ElectraConfig.from_preset(
        "tiny", vocab_size=300, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4, **overrides
    )


def _batch(rng, batch=4, length=32, vocab=300, cls=2, sep=3):
    ids = rng.integers(5, vocab, size=(batch, length)).astype(np.int32)
    ids[:, 0], ids[:, -1] = cls, sep
    mask = np.ones_like(ids)
    mask[0, 20:] = 0
    ids[0, 20:] = 0
    return {"input_ids": ids, "input_mask": mask, "segment_ids": np.zeros_like(ids)}


def _real_text_batch(shared_data, length=128, batch=8):
    from electra_tf.tokenizer import ElectraTokenizer

    tokenizer = ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))
    squad = json.loads((shared_data / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    contexts = [p["context"] for article in squad["data"][:batch] for p in article["paragraphs"][:1]]
    pieces = tokenizer.tokenize(contexts).to_list()
    ids = np.zeros((batch, length), np.int32)
    for row, tokens in enumerate(pieces):
        tokens = [tokenizer.cls_id] + tokens[: length - 2] + [tokenizer.sep_id]
        ids[row, : len(tokens)] = tokens
    return {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32), "segment_ids": np.zeros_like(ids)}


def test_initial_loss_of_small_is_ln_vocab_plus_50_ln_2(shared_data):
    """The first loss is ln(vocab) + 50 ln 2 on average. A single initialisation varies by about +-2.5 around the
    expectation (the discriminator's 1-unit output starts with a random common offset), so the mean over several
    initialisations is checked."""
    features = _real_text_batch(shared_data)
    expected = math.log(30522) + 50 * math.log(2)  # 44.98
    totals = []
    for seed in range(4):
        keras.utils.set_random_seed(seed)
        model = ElectraPretrainer(ElectraConfig.from_preset("small"), max_seq_length=128)
        stats = model.pretraining_statistics(model.pretraining_outputs(features, step=0))
        mlm = float(stats["mlm_loss_sum"] / stats["mlm_count"])
        assert abs(mlm - math.log(30522)) < 0.1
        totals.append(float(model.pretraining_loss(stats, stats)))
    assert abs(np.mean(totals) - expected) < 1.5, totals


def test_embedding_block_is_shared_and_tied():
    """Structure: one embedding block, the generator's softmax uses its word table."""
    model = ElectraPretrainer(_tiny(), max_seq_length=32)
    assert model.generator.backbone.embeddings is model.embeddings is model.discriminator.backbone.embeddings
    assert model.generator.lm_head.word_embeddings is model.embeddings.word_embeddings
    generator_ids = {id(v) for v in model.generator.trainable_variables}
    discriminator_ids = {id(v) for v in model.discriminator.trainable_variables}
    embedding_ids = {id(v) for v in model.embeddings.trainable_variables}
    assert generator_ids & discriminator_ids == embedding_ids and len(embedding_ids) == 5
    vocab_tables = [v for v in model.trainable_variables if v.shape[0] == 300 and len(v.shape) == 2]
    assert len(vocab_tables) == 1, "the generator must not own a second output matrix"
    assert len(model.trainable_variables) == len({id(v) for v in model.trainable_variables})


def test_generator_logits_use_the_shared_word_table():
    model = ElectraPretrainer(_tiny(), max_seq_length=32)
    features = dict(backbone_inputs(_batch(np.random.default_rng(0))), mask_positions=np.array([[1, 2]] * 4, np.int32))
    before = model.generator(features).numpy()
    table = model.embeddings.word_embeddings.embeddings
    # Adding a constant vector c to every word changes each output row by h.c only through the tied projection:
    # logits must move, proving the head reads the shared table.
    table.assign(table + 0.5)
    assert not np.allclose(model.generator(features).numpy(), before)


def test_no_gradient_reaches_the_generator_through_the_sample():
    """Gradients: the discriminator loss gives the generator's own variables no gradient, the MLM loss
    gives the discriminator's none; the shared embeddings get both."""
    model = ElectraPretrainer(_tiny(), max_seq_length=32)
    features = _batch(np.random.default_rng(0))
    generator_only = [
        v for v in model.generator.trainable_variables if all(v is not e for e in model.embeddings.trainable_variables)
    ]
    discriminator_only = [
        v
        for v in model.discriminator.trainable_variables
        if all(v is not e for e in model.embeddings.trainable_variables)
    ]
    with tf.GradientTape(persistent=True) as tape:
        stats = model.pretraining_statistics(model.pretraining_outputs(features, step=0, training=True))
        disc_loss = stats["disc_loss_sum"]
        mlm_loss = stats["mlm_loss_sum"]
    assert all(g is None for g in tape.gradient(disc_loss, generator_only))
    assert all(g is None for g in tape.gradient(mlm_loss, discriminator_only))
    assert all(g is not None for g in tape.gradient(disc_loss, model.embeddings.trainable_variables))
    assert all(g is not None for g in tape.gradient(mlm_loss, model.embeddings.trainable_variables))


def test_pretraining_outputs_are_deterministic_per_step():
    model = ElectraPretrainer(_tiny(hidden_dropout=0.0, attention_dropout=0.0), max_seq_length=32, seed=3)
    features = _batch(np.random.default_rng(0))
    first = model.pretraining_outputs(features, step=7)
    again = model.pretraining_outputs(features, step=7)
    other = model.pretraining_outputs(features, step=8)
    np.testing.assert_array_equal(first["corrupted_ids"], again["corrupted_ids"])
    assert not np.array_equal(first["masked"].masked_lm_positions, other["masked"].masked_lm_positions)
    labels = first["labels"].numpy()
    changed = first["corrupted_ids"].numpy() != features["input_ids"]
    np.testing.assert_array_equal(labels, changed.astype(np.int32))


def test_config_round_trip():
    model = ElectraPretrainer(_tiny(), max_seq_length=32, seed=5, clip_norm=0.5)
    clone = ElectraPretrainer.from_config(model.get_config())
    assert clone.electra_config == model.electra_config
    assert (clone.max_seq_length, clone.seed, clone.clip_norm, clone.max_predictions) == (32, 5, 0.5, 4)
    assert [v.shape for v in clone.weights] == [v.shape for v in model.weights]


def test_sequence_longer_than_position_table_is_refused():
    with pytest.raises(ValueError, match="max_position_embeddings"):
        ElectraPretrainer(_tiny(max_position_embeddings=64), max_seq_length=128)


# ---------------------------------------------------------------------------------------------------------------------
# Objectives and generator variants of the paper's analysis: what each builds, and which variables each loss reaches.


def _ids(variables):
    return {id(v) for v in variables}


def _only(variables, excluded):
    excluded = _ids(excluded)
    return [v for v in variables if id(v) not in excluded]


def _gradients(model, loss_name, variables, features=None, step=0):
    features = features or _batch(np.random.default_rng(0))
    with tf.GradientTape() as tape:
        stats = model.pretraining_statistics(model.pretraining_outputs(features, step=step, training=True))
        loss = stats[loss_name]
    return tape.gradient(loss, variables)


def _reached(gradients):
    return [g is not None and float(tf.reduce_max(tf.abs(tf.convert_to_tensor(g)))) > 0 for g in gradients]


def test_mlm_objective_has_no_generator_and_trains_the_discriminator_sized_network():
    model = ElectraPretrainer(_tiny(objective="mlm"), max_seq_length=32)
    assert model.generator is None and model.model_mlm_head is not None
    outputs = model.pretraining_outputs(_batch(np.random.default_rng(0)), step=0)
    assert outputs["model_mlm_logits"].shape == (4, model.max_predictions, 300)
    assert "disc_logits" not in outputs and "corrupted_ids" not in outputs
    encoder = model.discriminator.backbone.trainable_variables
    assert all(_reached(_gradients(model, "mlm_loss_sum", encoder)))
    head = model.discriminator.replaced_token_head.trainable_variables
    assert all(g is None for g in _gradients(model, "mlm_loss_sum", head))


@pytest.mark.parametrize("objective, positions", [("replace_mlm", 4), ("all_tokens_mlm", 32)])
def test_mlm_variants_predict_from_the_generator_corrupted_input(objective, positions):
    model = ElectraPretrainer(_tiny(objective=objective), max_seq_length=32)
    features = _batch(np.random.default_rng(0))
    outputs = model.pretraining_outputs(features, step=0)
    assert outputs["model_mlm_logits"].shape == (4, positions, 300)
    # The model reads the generator's samples, not [MASK] (id 4), at the masked positions.
    corrupted = outputs["corrupted_ids"].numpy()
    positions_ = outputs["masked"].masked_lm_positions.numpy()
    active = outputs["masked"].masked_lm_weights.numpy() > 0
    at_masked = np.take_along_axis(corrupted, positions_, 1)
    np.testing.assert_array_equal(at_masked[active], outputs["sampled_ids"].numpy()[active])
    assert np.any(outputs["masked"].input_ids.numpy() == 4) and not np.any(corrupted == 4)
    generator_only = _only(model.generator.trainable_variables, model.embeddings.trainable_variables)
    assert not any(_reached(_gradients(model, "model_mlm_loss_sum", generator_only)))
    assert all(_reached(_gradients(model, "model_mlm_loss_sum", model.model_mlm_head.trainable_variables)))


def test_generator_size_fractions():
    model = ElectraPretrainer(_tiny(generator_hidden_fraction=0.5, generator_layers_fraction=0.5), max_seq_length=32)
    assert model.generator.backbone.num_layers == 1 and model.discriminator.backbone.num_layers == 2
    assert model.generator.backbone.hidden_size == 64


def test_untied_embeddings_keep_the_discriminator_loss_out_of_the_generator_tables():
    model = ElectraPretrainer(_tiny(untied_embeddings=True), max_seq_length=32)
    assert model.generator.backbone.embeddings is model.generator_embeddings is not model.embeddings
    assert model.discriminator.backbone.embeddings is model.embeddings
    assert all(g is None for g in _gradients(model, "disc_loss_sum", model.generator_embeddings.trainable_variables))
    assert all(g is None for g in _gradients(model, "mlm_loss_sum", model.embeddings.trainable_variables))


def test_tie_all_weights_makes_the_generator_the_discriminator_encoder():
    model = ElectraPretrainer(_tiny(tie_all_weights=True), max_seq_length=32)
    assert model.generator.backbone is model.discriminator.backbone
    extra = _only(model.trainable_variables, model.discriminator.trainable_variables)
    assert _ids(extra) == _ids(_only(model.generator.lm_head.trainable_variables, model.embeddings.weights))
    # Both losses train the one encoder.
    encoder = model.discriminator.backbone.trainable_variables
    assert all(_reached(_gradients(model, "mlm_loss_sum", encoder)))
    assert all(_reached(_gradients(model, "disc_loss_sum", encoder)))


def test_uniform_generator_has_no_network_and_samples_uniformly():
    model = ElectraPretrainer(_tiny(uniform_generator=True), max_seq_length=32)
    assert model.generator is None
    assert _ids(model.trainable_variables) == _ids(model.discriminator.trainable_variables)
    rng = np.random.default_rng(0)
    stats = model.pretraining_statistics(model.pretraining_outputs(_batch(rng), step=0))
    np.testing.assert_allclose(stats["mlm_loss_sum"] / stats["mlm_count"], math.log(300), rtol=1e-6)
    samples = np.concatenate(
        [model.pretraining_outputs(_batch(rng, batch=32), step=s)["sampled_ids"].numpy().ravel() for s in range(4)]
    )
    counts = np.bincount(samples, minlength=300)
    # 32 x 6 x 4 = 768 draws over 300 ids: a uniform sampler leaves ~23 % of ids unseen and no id above ~10.
    assert (counts > 0).mean() > 0.6 and counts.max() < 12


def test_train_step_logs_the_unclipped_gradient_norm():
    model = ElectraPretrainer(_tiny(hidden_dropout=0.0, attention_dropout=0.0), max_seq_length=32, clip_norm=0.01)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0))
    features = _batch(np.random.default_rng(0))
    gradients, _ = model.replica_gradients(features, step=0)
    expected = float(tf.linalg.global_norm(gradients))
    results = model.train_step(features)
    # Far above clip_norm: the logged norm is the gradient's own, not the clipped one.
    assert expected > 1.0
    np.testing.assert_allclose(float(results["gradient_norm"]), expected, rtol=1e-5)


def test_sampling_warmup_moves_the_samples_from_uniform_to_the_generator():
    warmed = ElectraPretrainer(_tiny(sampling_warmup_steps=10), max_seq_length=32)
    # A generator that puts nearly all its mass on id 7, so that its samples and uniform ones differ.
    bias = np.zeros(300, np.float32)
    bias[7] = 30.0
    warmed.generator.lm_head.output_bias.assign(bias)
    plain = ElectraPretrainer(_tiny(), max_seq_length=32)
    plain.set_weights(warmed.get_weights())
    uniform = ElectraPretrainer(_tiny(uniform_generator=True), max_seq_length=32)
    batch = _batch(np.random.default_rng(0), batch=16)

    def samples(model, step):
        return model.pretraining_outputs(batch, step=step)["sampled_ids"].numpy()

    # Same seed, same step: the same noise, so the draws are comparable id for id.
    np.testing.assert_array_equal(samples(warmed, 0), samples(uniform, 0))
    assert (samples(warmed, 0) == 7).mean() < 0.05
    for step in (10, 25):
        np.testing.assert_array_equal(samples(warmed, step), samples(plain, step))
        assert (samples(warmed, step) == 7).mean() > 0.95
    # At step s the logits count s / 10: id 7 has probability e^(3s) / (e^(3s) + 299): 6 % at step 1, 57 % at 2.
    assert (samples(warmed, 1) == 7).mean() < 0.2
    assert 0.3 < (samples(warmed, 2) == 7).mean() < 0.85


def test_sampling_warmup_steps_must_be_a_non_negative_integer():
    from electra_tf.errors import ConfigError

    with pytest.raises(ConfigError, match="sampling_warmup_steps must be a non-negative integer, got -1"):
        _tiny(sampling_warmup_steps=-1)


def test_gdes_gives_the_generator_table_no_gradient_from_the_discriminator_loss():
    model = ElectraPretrainer(_tiny(embedding_sharing="gdes"), max_seq_length=32)
    shared_table = model.embeddings.word_embeddings.trainable_variables
    delta = model.word_embedding_delta.trainable_variables
    assert all(g is None for g in _gradients(model, "disc_loss_sum", shared_table))
    assert all(_reached(_gradients(model, "disc_loss_sum", delta)))
    assert all(g is None for g in _gradients(model, "mlm_loss_sum", delta))
    assert all(_reached(_gradients(model, "mlm_loss_sum", shared_table)))
    # With ELECTRA's sharing the same table gets the discriminator's gradient.
    shared = ElectraPretrainer(_tiny(), max_seq_length=32)
    assert all(_reached(_gradients(shared, "disc_loss_sum", shared.embeddings.word_embeddings.trainable_variables)))


def test_gdes_pretrained_discriminator_merges_the_tables():
    model = ElectraPretrainer(_tiny(embedding_sharing="gdes"), max_seq_length=32)
    delta = np.random.default_rng(0).normal(size=(300, 64)).astype(np.float32)
    model.word_embedding_delta.embeddings.assign(delta)
    standalone = model.pretrained_discriminator()
    assert standalone.backbone.embeddings is not model.embeddings
    np.testing.assert_allclose(
        standalone.backbone.embeddings.word_embeddings.embeddings.numpy(),
        model.embeddings.word_embeddings.embeddings.numpy() + delta,
        rtol=1e-6,
    )
    # Same function: the standalone discriminator scores as the pre-training one with its delta.
    features = _batch(np.random.default_rng(1))
    hidden = model.discriminator.backbone.encode(features, word_vectors=model.discriminator_word_vectors(features))
    pretraining_logits = model.discriminator.replaced_token_head(hidden)
    np.testing.assert_allclose(standalone(backbone_inputs(features)).numpy(), pretraining_logits.numpy(), atol=1e-5)


@pytest.mark.parametrize("training", ["mle", "adversarial"])
def test_adversarial_training_passes_the_discriminator_loss_to_the_generator(training):
    model = ElectraPretrainer(
        _tiny(generator_training=training, hidden_dropout=0.0, attention_dropout=0.0),
        max_seq_length=32,
        num_train_steps=100,
    )
    generator_only = _only(model.generator.trainable_variables, model.embeddings.trainable_variables)
    gradients = _gradients(model, "disc_loss_sum", generator_only)
    if training == "mle":
        assert all(g is None for g in gradients)
    else:
        assert all(_reached(gradients))
    # The relaxation changes gradients only: the discriminator still sees the hard samples.
    reference = ElectraPretrainer(_tiny(hidden_dropout=0.0, attention_dropout=0.0), max_seq_length=32)
    reference.set_weights(model.get_weights())
    features = _batch(np.random.default_rng(0))
    np.testing.assert_allclose(
        model.pretraining_outputs(features, step=3)["disc_logits"].numpy(),
        reference.pretraining_outputs(features, step=3)["disc_logits"].numpy(),
        atol=1e-5,
    )


def test_adversarial_loss_drops_the_generator_mle_term():
    model = ElectraPretrainer(_tiny(generator_training="adversarial"), max_seq_length=32)
    stats = model.pretraining_statistics(model.pretraining_outputs(_batch(np.random.default_rng(0)), step=0))
    np.testing.assert_allclose(
        model.pretraining_loss(stats, stats), 50.0 * stats["disc_loss_sum"] / stats["disc_count"], rtol=1e-6
    )


def test_two_stage_trains_the_generator_then_a_copy_of_it_as_discriminator():
    from electra_tf.training.optimizers import create_optimizer

    model = ElectraPretrainer(_tiny(two_stage_steps=2, hidden_dropout=0.0, attention_dropout=0.0), max_seq_length=32)
    assert model.generator.backbone.num_layers == model.discriminator.backbone.num_layers
    assert model.generator_embeddings is not None
    model.compile(optimizer=create_optimizer("adam_weight_decay", 1e-3))
    dataset = tf.data.Dataset.from_tensors(_batch(np.random.default_rng(0))).repeat()
    generator_vars = model.generator.trainable_variables
    discriminator_vars = model.discriminator.trainable_variables

    def values(variables):
        return [v.numpy().copy() for v in variables]

    def changed(before, variables):
        return [not np.array_equal(b, v.numpy()) for b, v in zip(before, variables)]

    generator_start, discriminator_start = values(generator_vars), values(discriminator_vars)
    model.fit(dataset, steps_per_epoch=2, verbose=0)  # stage 1: the generator alone
    assert any(changed(generator_start, generator_vars))
    assert not any(changed(discriminator_start, discriminator_vars))

    # Step 3 starts stage 2: the discriminator's embeddings and encoder are copied from the generator's (a zero
    # learning rate isolates the copy from the update).
    generator_end = values(generator_vars)
    model.optimizer.learning_rate.assign(0.0)
    model.fit(dataset, steps_per_epoch=1, verbose=0)
    for target, source in (
        (model.embeddings, model.generator_embeddings),
        (model.discriminator.backbone, model.generator.backbone),
    ):
        for t, s in zip(target.weights, source.weights):
            np.testing.assert_array_equal(t.numpy(), s.numpy())
    model.optimizer.learning_rate.assign(1e-3)
    model.fit(dataset, steps_per_epoch=2, verbose=0)  # stage 2: the generator stays frozen
    assert not any(changed(generator_end, generator_vars))
    assert all(changed(values(model.generator.backbone.weights), model.discriminator.backbone.weights))


def _total_loss_gradients(model, step, variables):
    features = _batch(np.random.default_rng(0))
    with tf.GradientTape() as tape:
        stats = model.pretraining_statistics(model.pretraining_outputs(features, step=step, training=True))
        loss = model.pretraining_loss(stats, stats, step=step)
    return loss, tape.gradient(loss, variables)


def _dense(gradients):
    return [np.zeros(()) if g is None else tf.convert_to_tensor(g).numpy() for g in gradients]


def test_annealed_generator_training_is_mle_at_the_start_adversarial_at_the_end_and_their_mix_between():
    config = dict(hidden_dropout=0.0, attention_dropout=0.0)
    annealed = ElectraPretrainer(_tiny(generator_training="annealed", **config), max_seq_length=32, num_train_steps=100)
    twins = {
        training: ElectraPretrainer(
            _tiny(generator_training=training, **config), max_seq_length=32, num_train_steps=100
        )
        for training in ("mle", "adversarial")
    }
    for twin in twins.values():
        twin.set_weights(annealed.get_weights())
    results = {}
    for name, model in {"annealed": annealed, **twins}.items():
        for step in (0, 50, 100):
            loss, gradients = _total_loss_gradients(model, step, model.trainable_variables)
            results[name, step] = (float(loss), _dense(gradients))
    for step, twin in ((0, "mle"), (100, "adversarial")):
        assert results["annealed", step][0] == pytest.approx(results[twin, step][0], rel=1e-6)
        for ours, theirs in zip(results["annealed", step][1], results[twin, step][1]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)
    # Halfway, every gradient is the mean of the two objectives' (the discriminator's are the same in both).
    for ours, mle, adversarial in zip(results["annealed", 50][1], results["mle", 50][1], results["adversarial", 50][1]):
        np.testing.assert_allclose(ours, (mle + adversarial) / 2, rtol=1e-4, atol=1e-6)
    assert float(annealed.adversarial_share(25)) == 0.25 and float(annealed.adversarial_share(500)) == 1.0


def test_annealed_generator_training_needs_a_length_and_its_own_schedule_wins():
    from electra_tf.errors import ConfigError

    with pytest.raises(
        ConfigError, match="generator_training=annealed needs num_train_steps or generator_annealing_steps"
    ):
        ElectraPretrainer(_tiny(generator_training="annealed"), max_seq_length=32)
    model = ElectraPretrainer(
        _tiny(generator_training="annealed", generator_annealing_steps=10), max_seq_length=32, num_train_steps=1000
    )
    assert float(model.adversarial_share(5)) == 0.5
    with pytest.raises(ConfigError, match="uniform_generator and generator_training=annealed cannot be combined"):
        _tiny(generator_training="annealed", uniform_generator=True)
