"""Assigning canonical weights to a model, with errors that say which variable, which shapes and why.

The common mistakes (a generator loaded as a discriminator, a config of the wrong width or depth, a headless encoder
loaded as a full model) are recognised from what the checkpoint holds, so the message names the likely cause rather
than only the first differing shape.
"""

import re

import numpy as np

from electra_tf.checkpoints.naming import (
    CLOZE_HEAD_SCOPE,
    CLOZE_TOWER_SCOPES,
    DISCRIMINATOR,
    EMBEDDINGS_SCOPE,
    GENERATOR,
    HEAD_SCOPES,
    NETWORK_SCOPES,
    PRETRAINER,
    is_head_name,
    model_slots,
)
from electra_tf.errors import CheckpointError

_LAYER = re.compile(r"^(?P<scope>[^/]+)/encoder/layer_(?P<index>\d+)/")


def network_sizes(weights, network):
    """{hidden, layers, intermediate} of the discriminator's or generator's encoder in `weights`, or None."""
    return scope_sizes(weights, NETWORK_SCOPES[network])


def scope_sizes(weights, scope):
    """{hidden, layers, intermediate} of the encoder under the network scope `scope` in `weights`, or None."""
    output = weights.get(f"{scope}/encoder/layer_0/attention/output/dense/kernel")
    if output is None:
        return None
    layers = {int(m.group("index")) for m in map(_LAYER.match, weights) if m and m.group("scope") == scope}
    intermediate = weights.get(f"{scope}/encoder/layer_0/intermediate/dense/kernel")
    return {
        "hidden": int(output.shape[-1]),
        "layers": max(layers) + 1,
        "intermediate": None if intermediate is None else int(intermediate.shape[-1]),
    }


def has_head(weights, network):
    return has_scope(weights, HEAD_SCOPES[network])


def has_scope(weights, scope):
    return any(name.startswith(scope + "/") for name in weights)


def cloze_generator_sizes(weights):
    """The towers' sizes of Electric's two-tower cloze generator with its head in `weights`, or None."""
    sizes = scope_sizes(weights, CLOZE_TOWER_SCOPES[0])
    return sizes if sizes is not None and has_scope(weights, CLOZE_HEAD_SCOPE) else None


def describe(weights):
    """What a checkpoint holds, in words: "a discriminator (hidden 256, 12 layers) and a generator (hidden 64, ...)"."""
    parts = []
    for network in (DISCRIMINATOR, GENERATOR):
        sizes = network_sizes(weights, network)
        if sizes is None:
            continue
        what = network if has_head(weights, network) else f"{network} encoder without its head"
        parts.append(f"a {what} (hidden {sizes['hidden']}, {sizes['layers']} layers)")
    towers = cloze_generator_sizes(weights)
    if towers is not None:
        parts.append(f"a two-tower cloze generator (hidden {towers['hidden']}, {towers['layers']} layers)")
    if not parts:
        return "no ELECTRA encoder" + (" (only embeddings)" if f"{EMBEDDINGS_SCOPE}/word_embeddings" in weights else "")
    return " and ".join(parts)


def _model_network_sizes(model, kind, network):
    backbone = getattr(model, network).backbone if kind == PRETRAINER else model.backbone
    return {"hidden": backbone.hidden_size, "layers": backbone.num_layers, "intermediate": backbone.intermediate_size}


def _network_of_name(name):
    scope = name.split("/", 1)[0]
    for network, network_scope in NETWORK_SCOPES.items():
        if scope in (network_scope, HEAD_SCOPES[network]) and not name.startswith(EMBEDDINGS_SCOPE + "/"):
            return network
    return None


def counterpart_name(name, network):
    """`name` moved to the other network's scope (electra/encoder/... <-> generator/encoder/...)."""
    for source_network, scope in NETWORK_SCOPES.items():
        for prefix in (scope + "/", HEAD_SCOPES[source_network] + "/"):
            if name.startswith(prefix) and not name.startswith(EMBEDDINGS_SCOPE + "/"):
                target = NETWORK_SCOPES[network] if prefix == scope + "/" else HEAD_SCOPES[network]
                return target + "/" + name[len(prefix) :]
    return name


def _missing_cause(weights, kind, model, name):
    network = _network_of_name(name)
    if name.startswith((*CLOZE_TOWER_SCOPES, CLOZE_HEAD_SCOPE)):
        return f"the checkpoint holds {describe(weights)}, not Electric's two-tower cloze generator"
    if network is None:
        return f"the checkpoint holds {describe(weights)} but lacks the embeddings"
    model_sizes = _model_network_sizes(model, kind, network)
    sizes = network_sizes(weights, network)
    if sizes is None:
        other = GENERATOR if network == DISCRIMINATOR else DISCRIMINATOR
        other_sizes = network_sizes(weights, other)
        if other_sizes is not None:
            counterpart = counterpart_name(name, other)
            seen = (
                f"; its {counterpart} has shape {tuple(weights[counterpart].shape)}" if counterpart in weights else ""
            )
            return (
                f"this checkpoint holds {describe(weights)}{seen}, but a {network} of hidden "
                f"{model_sizes['hidden']} was requested (use kind={other})"
            )
        return f"this checkpoint holds {describe(weights)}, not a {network}"
    if is_head_name(name):
        return (
            f"this checkpoint holds {describe(weights)}: the {network} head is missing (e.g. a Hugging Face "
            "ElectraModel or a keras-hub backbone); pass allow_missing_head=True to keep the head at its "
            "initialisation"
        )
    if sizes["layers"] != model_sizes["layers"]:
        return (
            f"the checkpoint's {network} has {sizes['layers']} layers but the model has "
            f"{model_sizes['layers']}: the config does not match the checkpoint"
        )
    if "embeddings_project" in name:
        return (
            f"the checkpoint's {network} has no embeddings_project, so its embedding size equals its hidden "
            f"size {sizes['hidden']}; the model's config has a different embedding_size"
        )
    return f"the checkpoint holds {describe(weights)}"


def _shape_cause(weights, kind, model, name, stored_shape, expected_shape):
    if name.startswith(EMBEDDINGS_SCOPE + "/"):
        table = name.rsplit("/", 1)[-1]
        if table == "word_embeddings" and stored_shape[0] != expected_shape[0]:
            return (
                f"vocabulary sizes differ (checkpoint {stored_shape[0]}, model {expected_shape[0]}): the model "
                "config's vocab_size must be the checkpoint's"
            )
        if table == "position_embeddings" and stored_shape[0] != expected_shape[0]:
            return f"max_position_embeddings differs (checkpoint {stored_shape[0]}, model {expected_shape[0]})"
        return (
            f"embedding sizes differ (checkpoint {stored_shape[-1]}, model {expected_shape[-1]}): the config's "
            "embedding_size does not match the checkpoint"
        )
    network = _network_of_name(name)
    if network is None:  # Electric's towers and cloze head
        return f"the checkpoint holds {describe(weights)}, which does not match the model's config"
    sizes = network_sizes(weights, network)
    model_sizes = _model_network_sizes(model, kind, network)
    if sizes is not None and sizes["hidden"] != model_sizes["hidden"]:
        other = GENERATOR if network == DISCRIMINATOR else DISCRIMINATOR
        hint = ""
        other_sizes = _model_network_sizes(model, kind, other) if kind == PRETRAINER else None
        if other_sizes is not None and other_sizes["hidden"] == sizes["hidden"]:
            hint = f" (the model's {other} has that width: are the two networks swapped?)"
        elif not has_head(weights, network) and has_head(weights, other):
            hint = f" (it looks like a {other} checkpoint)"
        return (
            f"this checkpoint's {network} has hidden {sizes['hidden']} but a {network} of hidden "
            f"{model_sizes['hidden']} was requested{hint}"
        )
    if sizes is not None and sizes["intermediate"] != model_sizes["intermediate"]:
        return (
            f"this checkpoint's {network} has intermediate (FFN) size {sizes['intermediate']} but the model's "
            f"is {model_sizes['intermediate']}"
        )
    return f"the checkpoint holds {describe(weights)}, which does not match the model's config"


def check_shared_embeddings(
    discriminator, generator, source, copies, allow_embedding_mismatch=False, *, arguments=(), without_flag=None
):
    """ELECTRA's generator and discriminator share one embedding block, so a discriminator and a generator read from
    two places (an HF discriminator/ + generator/ pair, a generator checkpoint beside a discriminator's) must hold the
    same copy of it: a `CheckpointError` names every embedding weight whose copies differ, with its largest
    difference (or both shapes), unless `allow_embedding_mismatch` (the caller then keeps the discriminator's).

    `discriminator` and `generator` are canonical weights; the message reads "{source}: the shared embeddings differ
    between {copies}: ...". `arguments` and `without_flag` are added to the error's (the arguments the message speaks
    of, and what a program without an allow_embedding_mismatch flag should do instead).
    """
    if allow_embedding_mismatch:
        return
    differences = []
    for name, value in generator.items():
        if not name.startswith(EMBEDDINGS_SCOPE + "/") or name not in discriminator:
            continue
        kept = discriminator[name]
        if value.shape != kept.shape:
            differences.append(f"{name} (shapes {kept.shape} and {value.shape})")
        elif not np.array_equal(value, kept):
            largest = np.max(np.abs(np.asarray(value, np.float64) - np.asarray(kept, np.float64)))
            differences.append(f"{name} (largest difference {largest:.3g})")
    if differences:
        raise CheckpointError(
            f"{source}: the shared embeddings differ between {copies}: {', '.join(differences)}; ELECTRA shares "
            "them, so these are not one pre-training run's pair (pass allow_embedding_mismatch=True to keep the "
            "discriminator's)",
            arguments=(*arguments, "allow_embedding_mismatch"),
            without_flag=without_flag,
        )


def assign_weights(model, kind, weights, source, allow_missing_head=False):
    """Write canonical `weights` into `model`; every variable of the model must be present with its shape.

    Extra checkpoint variables (the other network of a pre-training checkpoint, optimizer slots) are ignored.
    With `allow_missing_head`, head variables absent from the checkpoint keep their current values.
    Raises CheckpointError naming the variable, both shapes and the likely cause.
    """
    slots = model_slots(model, kind)
    for slot in slots:
        value = weights.get(slot.name)
        if value is None:
            if allow_missing_head and is_head_name(slot.name):
                continue
            raise CheckpointError(
                f"{source}: variable {slot.name} (shape {slot.reference_shape}) is missing: "
                f"{_missing_cause(weights, kind, model, slot.name)}",
                arguments=("kind", "allow_missing_head"),
            )
        if tuple(value.shape) != slot.reference_shape:
            raise CheckpointError(
                f"{source}: variable {slot.name} has shape {tuple(value.shape)} in the checkpoint but "
                f"{slot.reference_shape} in the {kind}: "
                f"{_shape_cause(weights, kind, model, slot.name, tuple(value.shape), slot.reference_shape)}"
            )
    for slot in slots:
        if slot.name in weights:
            slot.write(weights[slot.name])
