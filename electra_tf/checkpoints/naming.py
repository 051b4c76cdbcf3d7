"""Our Keras variables under the reference's TF1 names: the one naming every checkpoint format is converted through.

Canonical weights are a dict {reference name: NumPy array in the reference's layout} (kernels [in, out], attention
projections [H, H]). The names are those of a reference pre-training checkpoint: the shared embeddings under
`electra/embeddings`, the discriminator's encoder under `electra/`, the generator's under `generator/`, and the heads
under `discriminator_predictions/` and `generator_predictions/`. A lone discriminator or generator uses the subset of
these names it owns, so any of the three models can be read from a full pre-training checkpoint.
"""

import dataclasses

import numpy as np

from electra_tf.errors import CheckpointError

DISCRIMINATOR = "discriminator"
GENERATOR = "generator"
PRETRAINER = "pretrainer"
MODEL_KINDS = (DISCRIMINATOR, GENERATOR, PRETRAINER)

EMBEDDINGS_SCOPE = "electra/embeddings"
# The network scope of each model's encoder in a reference checkpoint.
NETWORK_SCOPES = {DISCRIMINATOR: "electra", GENERATOR: "generator"}
HEAD_SCOPES = {DISCRIMINATOR: "discriminator_predictions", GENERATOR: "generator_predictions"}

# Attention weights are stored per head by Keras ([H, heads, head_dim]) and flat by the reference ([H, H]).
_SAME = "same"
_HEADS_IN = "heads_in"      # kernel [in, heads, head_dim] <-> [in, heads * head_dim]
_HEADS_BIAS = "heads_bias"  # bias [heads, head_dim] <-> [heads * head_dim]
_HEADS_OUT = "heads_out"    # kernel [heads, head_dim, out] <-> [heads * head_dim, out]


@dataclasses.dataclass(frozen=True)
class Slot:
    """One model variable and the reference name (and layout) it is stored under."""

    name: str
    variable: object
    layout: str = _SAME

    @property
    def reference_shape(self):
        shape = tuple(int(d) for d in self.variable.shape)
        if self.layout == _HEADS_IN:
            return (shape[0], shape[1] * shape[2])
        if self.layout == _HEADS_BIAS:
            return (shape[0] * shape[1],)
        if self.layout == _HEADS_OUT:
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


def embedding_slots(embeddings):
    return embedding_table_slots(embeddings.word_embeddings.embeddings,
                                 embeddings.position_embeddings.position_embeddings,
                                 embeddings.token_type_embeddings.embeddings, embeddings.layer_norm)


def embedding_table_slots(word, position, token_type, layer_norm):
    scope = EMBEDDINGS_SCOPE
    return [Slot(f"{scope}/word_embeddings", word), Slot(f"{scope}/position_embeddings", position),
            Slot(f"{scope}/token_type_embeddings", token_type), *_layer_norm(f"{scope}/LayerNorm", layer_norm)]


def encoder_slots(encoder, network_scope):
    """`embeddings_project` (when E != H) and every Transformer layer of one network."""
    return stack_slots(encoder.embeddings_project, encoder.transformer_layers, network_scope)


def stack_slots(embeddings_project, transformer_layers, network_scope):
    """An optional E -> H Dense and a list of keras-hub `TransformerEncoder`s under the reference's names."""
    slots = []
    if embeddings_project is not None:
        slots += _dense(f"{network_scope}/embeddings_project", embeddings_project)
    for i, layer in enumerate(transformer_layers):
        slots += transformer_layer_slots(layer, f"{network_scope}/encoder/layer_{i}")
    return slots


def transformer_layer_slots(layer, scope):
    attention = layer._self_attention_layer
    slots = []
    for part, dense in (("query", attention._query_dense), ("key", attention._key_dense),
                        ("value", attention._value_dense)):
        slots += [Slot(f"{scope}/attention/self/{part}/kernel", dense.kernel, _HEADS_IN),
                  Slot(f"{scope}/attention/self/{part}/bias", dense.bias, _HEADS_BIAS)]
    slots += [Slot(f"{scope}/attention/output/dense/kernel", attention._output_dense.kernel, _HEADS_OUT),
              Slot(f"{scope}/attention/output/dense/bias", attention._output_dense.bias)]
    slots += _layer_norm(f"{scope}/attention/output/LayerNorm", layer._self_attention_layer_norm)
    slots += _dense(f"{scope}/intermediate/dense", layer._feedforward_intermediate_dense)
    slots += _dense(f"{scope}/output/dense", layer._feedforward_output_dense)
    slots += _layer_norm(f"{scope}/output/LayerNorm", layer._feedforward_layer_norm)
    return slots


def discriminator_head_slots(discriminator):
    scope = HEAD_SCOPES[DISCRIMINATOR]
    # The reference's second tf.layers.dense is auto-named dense_1 (HF calls it dense_prediction).
    return _dense(f"{scope}/dense", discriminator.head.dense) + _dense(f"{scope}/dense_1",
                                                                        discriminator.head.dense_prediction)


def generator_head_slots(generator):
    scope = HEAD_SCOPES[GENERATOR]
    head = generator.lm_head
    # The output kernel is the shared word table (tied), so only the bias is the head's own.
    return (_dense(f"{scope}/dense", head._intermediate_dense)
            + _layer_norm(f"{scope}/LayerNorm", head._intermediate_layer_norm)
            + [Slot(f"{scope}/output_bias", head._bias)])


def model_slots(model, kind):
    """Every variable of `model` (an ElectraDiscriminator, ElectraGenerator or ElectraPretrainer) with its name."""
    if kind == DISCRIMINATOR:
        return (embedding_slots(model.embeddings) + encoder_slots(model.encoder, NETWORK_SCOPES[DISCRIMINATOR])
                + discriminator_head_slots(model))
    if kind == GENERATOR:
        return (embedding_slots(model.embeddings) + encoder_slots(model.encoder, NETWORK_SCOPES[GENERATOR])
                + generator_head_slots(model))
    if kind == PRETRAINER:
        config = model.electra_config
        if not config.reference_layout:
            raise CheckpointError(
                f"a pre-training model with objective={config.objective!r}, untied_embeddings="
                f"{config.untied_embeddings}, uniform_generator={config.uniform_generator}, two_stage_steps="
                f"{config.two_stage_steps}, embedding_sharing={config.embedding_sharing!r} has no reference checkpoint "
                "layout; use its discriminator instead: the run's <model_dir>/pretrained directory")
        return (embedding_slots(model.embeddings)
                + encoder_slots(model.discriminator.encoder, NETWORK_SCOPES[DISCRIMINATOR])
                + discriminator_head_slots(model.discriminator)
                + encoder_slots(model.generator.encoder, NETWORK_SCOPES[GENERATOR])
                + generator_head_slots(model.generator))
    raise ValueError(f"unknown model kind {kind!r}; expected one of {MODEL_KINDS}")


def is_head_name(name):
    return name.split("/", 1)[0] in HEAD_SCOPES.values()


def collect_weights(model, kind):
    """{reference name: array} of every variable of `model`."""
    return {slot.name: slot.read() for slot in model_slots(model, kind)}


def model_kind_of(model):
    """The kind of one of our model objects (by class, without importing the models eagerly)."""
    names = {"ElectraDiscriminator": DISCRIMINATOR, "ElectraGenerator": GENERATOR, "ElectraPretrainer": PRETRAINER}
    for cls in type(model).__mro__:
        if cls.__name__ in names:
            return names[cls.__name__]
    raise ValueError(f"{type(model).__name__} is not an ELECTRA discriminator, generator or pre-training model")
