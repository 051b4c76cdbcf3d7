"""Checkpoints in every format (ours, the reference's TF1, Hugging Face, keras-hub): `load_checkpoint` reads any of
them into a model, `save_checkpoint` writes a model in any of them."""

from electra_tf.checkpoints.formats import FORMAT_NAMES
from electra_tf.checkpoints.loading import LoadedModel, load_checkpoint, save_checkpoint
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, MODEL_KINDS, PRETRAINER, collect_weights
from electra_tf.preflight import require_checkpoint

__all__ = [
    "DISCRIMINATOR",
    "FORMAT_NAMES",
    "GENERATOR",
    "MODEL_KINDS",
    "PRETRAINER",
    "LoadedModel",
    "collect_weights",
    "load_checkpoint",
    "require_checkpoint",
    "save_checkpoint",
]
