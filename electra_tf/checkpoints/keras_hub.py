"""keras-hub `ElectraBackbone` presets (a directory with config.json + model.weights.h5, from `save_to_preset`).

The backbone is built from the same keras-hub layers as our encoder (ReversibleEmbedding, PositionEmbedding,
TransformerEncoder), so its variables map one to one onto the discriminator's embeddings and encoder. What does not
map: the backbone has no discriminator or generator head (load with `allow_missing_head`), and it adds a tanh
`pooled_dense` that ELECTRA does not have (dropped on import; left at its initialiser on export). Note that keras-hub
builds its Transformer layers with the tanh-approximate GELU where the reference (and our model) uses the exact erf
form, so the same weights give slightly different activations in the two implementations.
"""

import json
import os

from electra_tf.checkpoints.naming import NETWORK_SCOPES, DISCRIMINATOR, embedding_table_slots, stack_slots
from electra_tf.io_utils import staged_directory
from electra_tf.errors import CheckpointError

CONFIG_NAME = "config.json"
CLASS_NAME = "ElectraBackbone"


def is_keras_hub_preset(path):
    try:
        with open(os.path.join(path, CONFIG_NAME), encoding="utf-8") as handle:
            return json.load(handle).get("class_name") == CLASS_NAME
    except (OSError, ValueError):
        return False


def backbone_slots(backbone):
    """The backbone's variables under the reference's discriminator names."""
    layer_norm = backbone.embeddings_layer_norm
    project = getattr(backbone, "embeddings_projection", None)
    return (embedding_table_slots(backbone.token_embedding.embeddings, backbone.position_embedding.position_embeddings,
                                  backbone.segment_embedding.embeddings, layer_norm)
            + stack_slots(project, backbone.transformer_layers, NETWORK_SCOPES[DISCRIMINATOR]))


def read_keras_hub_preset(directory):
    """(weights, backbone config dict) of a local ElectraBackbone preset directory."""
    import keras_hub

    try:
        backbone = keras_hub.models.ElectraBackbone.from_preset(directory)
    except Exception as error:  # keras-hub raises several error types for a bad preset
        raise CheckpointError(f"cannot load the keras-hub ElectraBackbone preset {directory}: {error}") from error
    weights = {slot.name: slot.read() for slot in backbone_slots(backbone)}
    return weights, backbone.get_config()


def write_keras_hub_preset(weights, config, directory):
    """Write the discriminator's embeddings and encoder of `weights` as an ElectraBackbone preset."""
    import keras_hub

    backbone = keras_hub.models.ElectraBackbone(
        vocab_size=config.vocab_size, num_layers=config.num_layers, num_heads=config.num_heads,
        hidden_dim=config.hidden_size, embedding_dim=config.embedding_size,
        intermediate_dim=config.intermediate_size, dropout=config.hidden_dropout,
        max_sequence_length=config.max_position_embeddings, num_segments=config.type_vocab_size)
    for slot in backbone_slots(backbone):
        if slot.name not in weights:
            raise CheckpointError(f"variable {slot.name} is missing: a keras-hub backbone needs the "
                                  "discriminator's embeddings and encoder")
        slot.write(weights[slot.name])
    with staged_directory(directory) as staging:
        backbone.save_to_preset(staging)
    return directory
