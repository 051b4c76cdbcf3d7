"""Checkpoint interoperability: the reference's TF1 checkpoints, Hugging Face safetensors, keras-hub presets."""

from electra_tf.checkpoints.conversion import (FORMATS, LoadedModel, detect_format, load_model, load_weights_into,
                                               read_source, save_model)
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, MODEL_KINDS, PRETRAINER, collect_weights
