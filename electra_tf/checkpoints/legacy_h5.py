"""Reading `<kind>.weights.h5` files written before `ElectraBackbone` (models built on keras-hub's TransformerEncoder).

Those files store Keras' layer tree of the old models (`encoder/transformer_layer_{i}/_self_attention_layer/...`,
attention projections per head), which no longer matches the models' structure. This module maps their datasets onto
the reference's names (`naming`), so old `pretrained/` directories load into the new models through the same path as
every other format.
"""

import re

import numpy as np

from electra_tf.checkpoints.naming import EMBEDDINGS_SCOPE, HEAD_SCOPES, NETWORK_SCOPES, DISCRIMINATOR, GENERATOR
from electra_tf.errors import CheckpointError

LEGACY_MARKER = "_self_attention_layer"
_LEAVES = {"dense": ("kernel", "bias"), "layer_norm": ("gamma", "beta")}
# Old sub-layer path -> (reference scope inside the layer, kind of variables, attention layout).
_LAYER_PARTS = {
    "_self_attention_layer/query_dense": ("attention/self/query", "dense", "heads_in"),
    "_self_attention_layer/key_dense": ("attention/self/key", "dense", "heads_in"),
    "_self_attention_layer/value_dense": ("attention/self/value", "dense", "heads_in"),
    "_self_attention_layer/output_dense": ("attention/output/dense", "dense", "heads_out"),
    "_self_attention_layer_norm": ("attention/output/LayerNorm", "layer_norm", None),
    "_feedforward_intermediate_dense": ("intermediate/dense", "dense", None),
    "_feedforward_output_dense": ("output/dense", "dense", None),
    "_feedforward_layer_norm": ("output/LayerNorm", "layer_norm", None),
}
_EMBEDDING_TABLES = ("word_embeddings", "position_embeddings", "token_type_embeddings")
_LAYER = re.compile(r"encoder/transformer_layer_(\d+)/(.+)/vars/(\d)$")
# Old sub-layer paths outside the Transformer layers -> (kind of variables, reference scope).
_OTHER_PARTS = {
    "embeddings/layer_norm": ("layer_norm", f"{EMBEDDINGS_SCOPE}/LayerNorm"),
    "head/dense": ("dense", f"{HEAD_SCOPES[DISCRIMINATOR]}/dense"),
    "head/dense_prediction": ("dense", f"{HEAD_SCOPES[DISCRIMINATOR]}/dense_1"),
    "lm_head/_intermediate_dense": ("dense", f"{HEAD_SCOPES[GENERATOR]}/dense"),
    "lm_head/_intermediate_layer_norm": ("layer_norm", f"{HEAD_SCOPES[GENERATOR]}/LayerNorm"),
}


def is_legacy_weights_file(path):
    """Whether the .weights.h5 at `path` was written by the models before ElectraBackbone."""
    import h5py

    names = []
    with h5py.File(path, "r") as handle:
        handle.visit(names.append)
    return any(LEGACY_MARKER in name for name in names)


def _reference_layout(value, layout):
    if layout == "heads_in":
        return value.reshape(value.shape[0], -1) if value.ndim == 3 else value.reshape(-1)
    if layout == "heads_out" and value.ndim == 3:
        return value.reshape(-1, value.shape[-1])
    return value


def _reference_name(path, network):
    """The reference's name of one old dataset path, or None for datasets without a counterpart (step counters)."""
    for table in _EMBEDDING_TABLES:
        if path.endswith(f"embeddings/{table}/vars/0"):
            return f"{EMBEDDINGS_SCOPE}/{table}", None
    match = _LAYER.search(path)
    if match and match.group(2) in _LAYER_PARTS:
        scope, kind, layout = _LAYER_PARTS[match.group(2)]
        leaf = _LEAVES[kind][int(match.group(3))]
        layout = layout if leaf == "kernel" or layout == "heads_in" else None
        return f"{NETWORK_SCOPES[network]}/encoder/layer_{match.group(1)}/{scope}/{leaf}", layout
    parts = dict(_OTHER_PARTS, **{"encoder/embeddings_project": ("dense",
                                                                  f"{NETWORK_SCOPES[network]}/embeddings_project")})
    for part, (kind, scope) in parts.items():
        for index, leaf in enumerate(_LEAVES[kind]):
            if path.endswith(f"{part}/vars/{index}"):
                return f"{scope}/{leaf}", None
    if path.endswith("lm_head/vars/0"):
        return f"{HEAD_SCOPES[GENERATOR]}/output_bias", None
    return None, None


def read_legacy_weights(path, kind):
    """{reference name: array} of an old `<kind>.weights.h5` (kind: discriminator, generator or pretrainer)."""
    import h5py

    weights = {}
    try:
        with h5py.File(path, "r") as handle:
            datasets = []
            handle.visititems(lambda name, item: datasets.append((name, item[()])) if hasattr(item, "shape") else None)
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error}") from error
    for name, value in datasets:
        # Old files name the networks by their attribute path; a lone generator's file has no "generator/" prefix.
        network = GENERATOR if kind == GENERATOR or name.startswith("generator/") else DISCRIMINATOR
        reference, layout = _reference_name(name, network)
        if reference is not None:
            weights[reference] = _reference_layout(np.asarray(value), layout)
    return weights
