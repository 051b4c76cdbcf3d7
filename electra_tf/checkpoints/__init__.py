"""Checkpoints in every format (ours, the reference's TF1, Hugging Face, keras-hub): each format's detector, reader
and writer, the reference's variable names that readers and writers speak, and the tokenizer's files. Nothing here
needs a model class: `electra_tf.models` reads checkpoints into models (`load_checkpoint`) and writes models into them
(`save_checkpoint`)."""

from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, MODEL_KINDS, PRETRAINER, collect_weights
from electra_tf.preflight import require_checkpoint

__all__ = [
    "DISCRIMINATOR",
    "GENERATOR",
    "MODEL_KINDS",
    "PRETRAINER",
    "collect_weights",
    "require_checkpoint",
]
