import json
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.models.pretrainer import ElectraPretrainer


def _tiny(**overrides):
    return ElectraConfig.from_preset("tiny", vocab_size=300, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4,
                                     **overrides)


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
        tokens = [tokenizer.cls_id] + tokens[:length - 2] + [tokenizer.sep_id]
        ids[row, :len(tokens)] = tokens
    return {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32), "segment_ids": np.zeros_like(ids)}


def test_initial_loss_of_small_is_ln_vocab_plus_50_ln_2(shared_data):
    """Must-show 1. A single initialisation varies by about +-2.5 around the expectation (the discriminator's
    1-unit output starts with a random common offset), so the mean over several initialisations is checked."""
    features = _real_text_batch(shared_data)
    expected = math.log(30522) + 50 * math.log(2)  # 44.98
    totals = []
    for seed in range(4):
        keras.utils.set_random_seed(seed)
        model = ElectraPretrainer(ElectraConfig.from_preset("small"), max_seq_length=128)
        stats = model.pretraining_statistics(model.pretraining_outputs(features, step=0))
        mlm = float(stats["mlm_loss_sum"] / stats["mlm_count"])
        assert abs(mlm - math.log(30522)) < 0.1
        totals.append(float(model._total_loss(stats, stats)))
    assert abs(np.mean(totals) - expected) < 1.5, totals


def test_embedding_block_is_shared_and_tied():
    """Must-show 3, structure: one embedding block, the generator's softmax uses its word table."""
    model = ElectraPretrainer(_tiny(), max_seq_length=32)
    assert model.generator.embeddings is model.embeddings is model.discriminator.embeddings
    assert model.generator.lm_head.token_embedding is model.embeddings.word_embeddings
    generator_ids = {id(v) for v in model.generator.trainable_variables}
    discriminator_ids = {id(v) for v in model.discriminator.trainable_variables}
    embedding_ids = {id(v) for v in model.embeddings.trainable_variables}
    assert generator_ids & discriminator_ids == embedding_ids and len(embedding_ids) == 5
    vocab_tables = [v for v in model.trainable_variables if v.shape[0] == 300 and len(v.shape) == 2]
    assert len(vocab_tables) == 1, "the generator must not own a second output matrix"
    assert len(model.trainable_variables) == len({id(v) for v in model.trainable_variables})


def test_generator_logits_use_the_shared_word_table():
    model = ElectraPretrainer(_tiny(), max_seq_length=32)
    features = dict(_batch(np.random.default_rng(0)), masked_lm_positions=np.array([[1, 2]] * 4, np.int32))
    before = model.generator(features).numpy()
    table = model.embeddings.word_embeddings.embeddings
    # Adding a constant vector c to every word changes each output row by h.c only through the tied projection:
    # logits must move, proving the head reads the shared table.
    table.assign(table + 0.5)
    assert not np.allclose(model.generator(features).numpy(), before)


def test_no_gradient_reaches_the_generator_through_the_sample():
    """Must-show 3, gradients: the discriminator loss gives the generator's own variables no gradient, the MLM loss
    gives the discriminator's none; the shared embeddings get both."""
    model = ElectraPretrainer(_tiny(), max_seq_length=32)
    features = _batch(np.random.default_rng(0))
    generator_only = [v for v in model.generator.trainable_variables
                      if all(v is not e for e in model.embeddings.trainable_variables)]
    discriminator_only = [v for v in model.discriminator.trainable_variables
                          if all(v is not e for e in model.embeddings.trainable_variables)]
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
