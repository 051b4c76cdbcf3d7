"""keras-hub `ElectraBackbone` presets (a directory with config.json + model.weights.h5, from `save_to_preset`).

keras-hub's backbone has the same variables as ours (the reference's), in keras-hub's layers: they map one to one, by
their public variable paths, onto the discriminator's embeddings and encoder (its attention projections stored per
head). What does not map: the backbone has no discriminator or generator head (load with `allow_missing_head`), and
it adds a tanh `pooled_dense` that ELECTRA does not have (dropped on import; left at its initialiser on export).
keras-hub builds its Transformer layers with the tanh-approximate GELU where the reference uses the exact erf form: an
imported model gets `hidden_activation="gelu_approximate"` and so computes keras-hub's outputs; a model exported to
keras-hub is computed with the approximation there (its outputs differ from ours by the approximation's error, about
1e-3).
"""

import json
import os
import re

import keras_hub
from absl import logging

from electra_tf.checkpoints import tokenizer_files
from electra_tf.checkpoints.naming import (
    DISCRIMINATOR,
    EMBEDDINGS_SCOPE,
    GENERATOR,
    HEADS_BIAS,
    HEADS_IN,
    HEADS_OUT,
    NETWORK_SCOPES,
    PRETRAINER,
    SAME_LAYOUT,
    Slot,
    collect_weights,
    stored_type_vocab_size,
)
from electra_tf.checkpoints.source import KERAS_HUB, CheckpointFormat, Source
from electra_tf.errors import CheckpointError
from electra_tf.io_utils import staged_directory
from electra_tf.tokenizer import BERT_UNCASED

CONFIG_NAME = "config.json"
CLASS_NAME = "ElectraBackbone"
REGISTERED_NAME = "keras_hub>ElectraBackbone"


def is_keras_hub_preset(path):
    try:
        with open(os.path.join(path, CONFIG_NAME), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return False
    # Our ElectraBackbone presets have the same class name, registered under electra_tf.
    return config.get("class_name") == CLASS_NAME and config.get("registered_name") in (None, REGISTERED_NAME)


# keras-hub's variable paths (public `Variable.path`) -> the reference's discriminator names and layouts.
_EMBEDDING_PATHS = {
    "token_embedding/embeddings": "word_embeddings",
    "position_embedding/embeddings": "position_embeddings",
    "segment_embedding/embeddings": "token_type_embeddings",
    "embeddings_layer_norm/gamma": "LayerNorm/gamma",
    "embeddings_layer_norm/beta": "LayerNorm/beta",
}
_LAYER_PATHS = {
    "self_attention_layer/query": ("attention/self/query", HEADS_IN, HEADS_BIAS),
    "self_attention_layer/key": ("attention/self/key", HEADS_IN, HEADS_BIAS),
    "self_attention_layer/value": ("attention/self/value", HEADS_IN, HEADS_BIAS),
    "self_attention_layer/attention_output": ("attention/output/dense", HEADS_OUT, SAME_LAYOUT),
    "self_attention_layer_norm": ("attention/output/LayerNorm", SAME_LAYOUT, SAME_LAYOUT),
    "feedforward_intermediate_dense": ("intermediate/dense", SAME_LAYOUT, SAME_LAYOUT),
    "feedforward_output_dense": ("output/dense", SAME_LAYOUT, SAME_LAYOUT),
    "feedforward_layer_norm": ("output/LayerNorm", SAME_LAYOUT, SAME_LAYOUT),
}
_LAYER_PATH = re.compile(r"^transformer_layer_(\d+)/(.+)/(kernel|bias|gamma|beta)$")


def _reference_slot(variable):
    """The `Slot` of one keras-hub ElectraBackbone variable, or None for its pooler (ELECTRA has none)."""
    path, network = variable.path, NETWORK_SCOPES[DISCRIMINATOR]
    if path in _EMBEDDING_PATHS:
        return Slot(f"{EMBEDDINGS_SCOPE}/{_EMBEDDING_PATHS[path]}", variable)
    if path.startswith("embeddings_projection/"):
        return Slot(f"{network}/embeddings_project/{path.rsplit('/', 1)[1]}", variable)
    match = _LAYER_PATH.match(path)
    if match and match.group(2) in _LAYER_PATHS:
        index, part, leaf = match.groups()
        scope, kernel_layout, bias_layout = _LAYER_PATHS[part]
        layout = kernel_layout if leaf == "kernel" else bias_layout if leaf == "bias" else SAME_LAYOUT
        return Slot(f"{network}/encoder/layer_{index}/{scope}/{leaf}", variable, layout)
    if path.startswith("pooled_dense/"):
        return None
    raise CheckpointError(
        f"keras-hub ElectraBackbone variable {path} has no ELECTRA counterpart (a keras-hub version "
        "this converter does not know)"
    )


def backbone_slots(backbone):
    """The keras-hub backbone's variables under the reference's discriminator names (its pooler left out)."""
    slots = [_reference_slot(variable) for variable in backbone.weights]
    return [slot for slot in slots if slot is not None]


def read_keras_hub_preset(directory):
    """(weights, backbone config dict) of a local ElectraBackbone preset directory."""
    try:
        backbone = keras_hub.models.ElectraBackbone.from_preset(directory)
    except Exception as error:  # keras-hub raises several error types for a bad preset
        raise CheckpointError(f"cannot load the keras-hub ElectraBackbone preset {directory}: {error}") from error
    weights = {slot.name: slot.read() for slot in backbone_slots(backbone)}
    return weights, backbone.get_config()


def write_keras_hub_preset(weights, config, directory, vocab_file=None, tokenizer_settings=None):
    """Write the discriminator's embeddings and encoder of `weights` as an ElectraBackbone preset; with `vocab_file`,
    also its keras-hub `ElectraTokenizer` (`tokenizer_settings`, default BERT uncased)."""
    backbone = keras_hub.models.ElectraBackbone(
        vocab_size=config.vocab_size,
        num_layers=config.num_layers,
        num_heads=config.num_heads,
        hidden_dim=config.hidden_size,
        embedding_dim=config.embedding_size,
        intermediate_dim=config.intermediate_size,
        dropout=config.hidden_dropout,
        max_sequence_length=config.max_position_embeddings,
        num_segments=stored_type_vocab_size(config.type_vocab_size),
    )
    for slot in backbone_slots(backbone):
        if slot.name not in weights:
            raise CheckpointError(
                f"variable {slot.name} is missing: a keras-hub backbone needs the "
                "discriminator's embeddings and encoder"
            )
        slot.write(weights[slot.name])
    with staged_directory(directory) as staging:
        backbone.save_to_preset(staging)
        if vocab_file:
            tokenizer_files.write_keras_hub_tokenizer(staging, vocab_file, tokenizer_settings or BERT_UNCASED)
    return directory


# ---------------------------------------------------------------------------------------------- the format
def _read_source(path, allow_embedding_mismatch=False):
    weights, backbone = read_keras_hub_preset(path)
    return Source(
        path,
        KERAS_HUB,
        weights,
        num_heads=backbone["num_heads"],
        base={
            "hidden_dropout": backbone["dropout"],
            "attention_dropout": backbone["dropout"],
            # keras-hub's ELECTRA computes the tanh GELU: so does the imported model, to give its outputs.
            "hidden_activation": "gelu_approximate",
        },
        vocab_file=tokenizer_files.vocab_file_of(path),
        tokenizer_settings=tokenizer_files.read_tokenizer_json(path),
    )


def _write_model(model, kind, path, vocab_file=None, tokenizer_settings=None):
    if kind == GENERATOR:
        raise CheckpointError(
            "keras-hub has no ELECTRA generator model: only a discriminator (or the "
            "discriminator of a pre-training model) converts to an ElectraBackbone",
            arguments=("format",),
        )
    written = write_keras_hub_preset(
        collect_weights(model, kind), model.electra_config, path, vocab_file, tokenizer_settings
    )
    logging.warning(
        "%s is a keras-hub ElectraBackbone preset, which holds the encoder only: the discriminator's "
        "replaced-token head%s not in it; write another format (ours, hf or tf1) to keep it",
        path,
        " and the generator are" if kind == PRETRAINER else " is",
    )
    return written


FORMAT = CheckpointFormat(
    KERAS_HUB,
    "a keras-hub ElectraBackbone preset",
    is_keras_hub_preset,
    _read_source,
    _write_model,
)
