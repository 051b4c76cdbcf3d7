"""Tiny models of ours with every variable randomised (so a dropped or swapped variable cannot go unnoticed)."""

import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.models import build_discriminator, build_generator
from electra_tf.training.pretrainer import ElectraPretrainer

TINY = ElectraConfig(
    vocab_size=50,
    embedding_size=16,
    hidden_size=32,
    num_layers=2,
    num_heads=2,
    intermediate_size=64,
    max_position_embeddings=16,
    generator_hidden_fraction=0.25,
    pad_id=0,
    unk_id=1,
    cls_id=2,
    sep_id=3,
    mask_id=4,
)
NUM_HEADS = TINY.num_heads  # 32 // 64 would give 1: TF1 loads need it


def model_weights(model):
    """The model's float weights: the pre-training model's `steps_trained` counter is training state, not a weight,
    and no checkpoint format converts it."""
    return [variable for variable in model.weights if "float" in str(variable.dtype)]


def randomise(model, seed=0):
    rng = np.random.default_rng(seed)
    for variable in model_weights(model):
        variable.assign(rng.standard_normal(variable.shape).astype(variable.dtype))
    return model


def tiny_model(kind, config=TINY, seed=0):
    if kind == "discriminator":
        model = build_discriminator(config)
    elif kind == "generator":
        model = build_generator(config)
    else:
        model = ElectraPretrainer(config, max_seq_length=16)
    return randomise(model, seed)


def variables_by_path(model):
    return {variable.path: np.asarray(variable.numpy()) for variable in model_weights(model)}
