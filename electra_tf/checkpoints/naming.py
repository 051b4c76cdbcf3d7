"""Our Keras variables under the reference's TF1 names: the one naming every checkpoint format is converted through.

Canonical weights are a dict {reference name: NumPy array in the reference's layout} (kernels [in, out], attention
projections [H, H]). The names are those of a reference pre-training checkpoint: the shared embeddings under
`electra/embeddings`, the discriminator's encoder under `electra/`, the generator's under `generator/`, and the heads
under `discriminator_predictions/` and `generator_predictions/`. A lone discriminator or generator uses the subset of
these names it owns, so any of the three models can be read from a full pre-training checkpoint. An Electric
pre-training model (`objective="electric"`) has the two-tower cloze generator instead of the generator: its towers
under `generator_ltr/` and `generator_rtl/`, its head under `cloze_predictions/`.
"""

import dataclasses

import numpy as np

from electra_tf.errors import CheckpointError

DISCRIMINATOR = "discriminator"
GENERATOR = "generator"
PRETRAINER = "pretrainer"
MODEL_KINDS = (DISCRIMINATOR, GENERATOR, PRETRAINER)
# The class of each kind (`electra_tf.models`).
MODEL_CLASS_NAMES = {
    DISCRIMINATOR: "ElectraDiscriminator",
    GENERATOR: "ElectraGenerator",
    PRETRAINER: "ElectraPretrainingModel",
}

EMBEDDINGS_SCOPE = "electra/embeddings"
# The network scope of each model's encoder in a reference checkpoint.
NETWORK_SCOPES = {DISCRIMINATOR: "electra", GENERATOR: "generator"}
HEAD_SCOPES = {DISCRIMINATOR: "discriminator_predictions", GENERATOR: "generator_predictions"}
# Electric's two-tower cloze generator (`models.cloze_generator`): the towers' network scopes and the head's.
CLOZE_TOWER_SCOPES = ("generator_ltr", "generator_rtl")
CLOZE_HEAD_SCOPE = "cloze_predictions"

# keras-hub's attention stores its projections per head ([H, heads, head_dim]); the reference and our
# ElectraTransformerLayer store them flat ([H, H]).
SAME_LAYOUT = "same"
HEADS_IN = "heads_in"  # kernel [in, heads, head_dim] <-> [in, heads * head_dim]
HEADS_BIAS = "heads_bias"  # bias [heads, head_dim] <-> [heads * head_dim]
HEADS_OUT = "heads_out"  # kernel [heads, head_dim, out] <-> [heads * head_dim, out]


@dataclasses.dataclass(frozen=True)
class Slot:
    """One model variable and the reference name (and layout) it is stored under."""

    name: str
    variable: object
    layout: str = SAME_LAYOUT

    @property
    def reference_shape(self):
        shape = tuple(int(d) for d in self.variable.shape)
        if self.layout == HEADS_IN:
            return (shape[0], shape[1] * shape[2])
        if self.layout == HEADS_BIAS:
            return (shape[0] * shape[1],)
        if self.layout == HEADS_OUT:
            return (shape[0] * shape[1], shape[2])
        return shape

    def read(self):
        """The variable's value in the reference layout (a copy, float as stored)."""
        return np.reshape(np.asarray(self.variable.numpy()), self.reference_shape)

    def write(self, value):
        self.variable.assign(np.reshape(value, self.variable.shape).astype(self.variable.dtype, copy=False))


def _dense(scope, layer):
    return [Slot(f"{scope}/kernel", layer.kernel), Slot(f"{scope}/bias", layer.bias)]


def _layer_norm(scope, layer):
    return [Slot(f"{scope}/gamma", layer.gamma), Slot(f"{scope}/beta", layer.beta)]


# Formats always hold a token-type table; a block without one (type_vocab_size=0) is stored with this many rows of
# zeros, which add nothing for any segment id, and a table of zeros reads back as no table.
ZERO_TOKEN_TYPE_ROWS = 2


def stored_type_vocab_size(type_vocab_size):
    """The token-type table size a format that always holds the table stores for `type_vocab_size`."""
    return type_vocab_size or ZERO_TOKEN_TYPE_ROWS


class ZeroTokenTypeTable:
    """Stands in for the token-type table of an embedding block without one: reads as zeros, and accepts only zeros
    (a checkpoint with trained token-type rows cannot go into a block that has none)."""

    def __init__(self, embedding_size):
        self.shape = (ZERO_TOKEN_TYPE_ROWS, embedding_size)
        self.dtype = np.float32

    def numpy(self):
        return np.zeros(self.shape, np.float32)

    def assign(self, value):
        if np.any(value):
            raise CheckpointError(
                f"the checkpoint's {EMBEDDINGS_SCOPE}/token_type_embeddings holds trained rows, but the model has no "
                "token-type table (type_vocab_size=0): build it with the checkpoint's type_vocab_size"
            )


def embedding_slots(embeddings):
    token_type = (
        ZeroTokenTypeTable(embeddings.embedding_size)
        if embeddings.token_type_embeddings is None
        else embeddings.token_type_embeddings.embeddings
    )
    return embedding_table_slots(
        embeddings.word_embeddings.embeddings,
        embeddings.position_embeddings.position_embeddings,
        token_type,
        embeddings.layer_norm,
    )


def embedding_table_slots(word, position, token_type, layer_norm):
    scope = EMBEDDINGS_SCOPE
    return [
        Slot(f"{scope}/word_embeddings", word),
        Slot(f"{scope}/position_embeddings", position),
        Slot(f"{scope}/token_type_embeddings", token_type),
        *_layer_norm(f"{scope}/LayerNorm", layer_norm),
    ]


def encoder_slots(backbone, network):
    """An `ElectraBackbone` with its own embedding block as `network`'s encoder: the embeddings and
    `backbone_slots`."""
    return embedding_slots(backbone.embeddings) + backbone_slots(backbone, NETWORK_SCOPES[network])


def backbone_slots(backbone, network_scope):
    """`embeddings_project` (when E != H) and every Transformer layer of one `ElectraBackbone` (not its embedding
    block, which the generator and the discriminator share)."""
    slots = []
    if backbone.embeddings_project is not None:
        slots += _dense(f"{network_scope}/embeddings_project", backbone.embeddings_project)
    for i, layer in enumerate(backbone.transformer_layers):
        slots += transformer_layer_slots(layer, f"{network_scope}/encoder/layer_{i}")
    return slots


def transformer_layer_slots(layer, scope):
    """The variables of one `ElectraTransformerLayer` under the reference's names (same layout)."""
    return (
        _dense(f"{scope}/attention/self/query", layer.query_dense)
        + _dense(f"{scope}/attention/self/key", layer.key_dense)
        + _dense(f"{scope}/attention/self/value", layer.value_dense)
        + _dense(f"{scope}/attention/output/dense", layer.attention_output_dense)
        + _layer_norm(f"{scope}/attention/output/LayerNorm", layer.attention_layer_norm)
        + _dense(f"{scope}/intermediate/dense", layer.intermediate_dense)
        + _dense(f"{scope}/output/dense", layer.output_dense)
        + _layer_norm(f"{scope}/output/LayerNorm", layer.output_layer_norm)
    )


def discriminator_head_slots(discriminator):
    scope = HEAD_SCOPES[DISCRIMINATOR]
    head = discriminator.replaced_token_head
    # The reference's second tf.layers.dense is auto-named dense_1 (HF calls it dense_prediction).
    return _dense(f"{scope}/dense", head.dense) + _dense(f"{scope}/dense_1", head.dense_prediction)


def generator_head_slots(generator):
    return masked_lm_head_slots(generator.lm_head, HEAD_SCOPES[GENERATOR])


def masked_lm_head_slots(head, scope):
    """An `ElectraMaskedLMHead`: the output kernel is the shared word table (tied), so only the bias is its own."""
    return (
        _dense(f"{scope}/dense", head.dense)
        + _layer_norm(f"{scope}/LayerNorm", head.layer_norm)
        + [Slot(f"{scope}/output_bias", head.output_bias)]
    )


def cloze_generator_slots(generator):
    """Both towers of a `TwoTowerClozeGenerator` and its head (not the shared embedding block)."""
    slots = []
    for backbone, scope in zip(generator.backbones, CLOZE_TOWER_SCOPES):
        slots += backbone_slots(backbone, scope)
    return slots + masked_lm_head_slots(generator.cloze_head, CLOZE_HEAD_SCOPE)


def model_slots(model, kind):
    """Every variable of `model` (an ElectraDiscriminator, ElectraGenerator or ElectraPretrainingModel) with its
    name."""
    if kind == DISCRIMINATOR:
        return encoder_slots(model.backbone, DISCRIMINATOR) + discriminator_head_slots(model)
    if kind == GENERATOR:
        return encoder_slots(model.backbone, GENERATOR) + generator_head_slots(model)
    if kind == PRETRAINER:
        config = model.electra_config
        if not config.reference_layout:
            raise CheckpointError(
                f"a pre-training model with {' and '.join(config.non_reference_choices())} has no reference "
                "checkpoint layout; use its discriminator instead: the run's <model_dir>/pretrained directory"
            )
        discriminator = (
            embedding_slots(model.embeddings)
            + backbone_slots(model.discriminator.backbone, NETWORK_SCOPES[DISCRIMINATOR])
            + discriminator_head_slots(model.discriminator)
        )
        if model.objective.cloze_generator:
            return discriminator + cloze_generator_slots(model.generator)
        return (
            discriminator
            + backbone_slots(model.generator.backbone, NETWORK_SCOPES[GENERATOR])
            + generator_head_slots(model.generator)
        )
    raise ValueError(f"unknown model kind {kind!r}; expected one of {MODEL_KINDS}")


def is_head_name(name):
    return name.split("/", 1)[0] in (*HEAD_SCOPES.values(), CLOZE_HEAD_SCOPE)


def collect_weights(model, kind):
    """{reference name: array} of every variable of `model`."""
    return {slot.name: slot.read() for slot in model_slots(model, kind)}


def model_kind_of(model):
    """The kind of one of our model objects (by class, without importing the models eagerly)."""
    return model_class_kind(type(model))


def model_class_kind(model_class):
    """The kind of one of our model classes or of a subclass of one (by name, without importing the models)."""
    names = {name: kind for kind, name in MODEL_CLASS_NAMES.items()}
    for cls in model_class.__mro__:
        if cls.__name__ in names:
            return names[cls.__name__]
    raise ValueError(f"{model_class.__name__} is not an ELECTRA discriminator, generator or pre-training model")
