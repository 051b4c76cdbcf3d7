"""Layer-wise learning-rate decay for fine-tuning: a multiplier per variable from its depth in the encoder.

Depths follow the reference (google-research/electra `_get_layer_lrs`): the embedding block (`embeddings/`, and
`embeddings_project/` when E != H) is depth 0, `transformer_layer_{i}/` is depth i + 1 and everything else (the
task head) is depth L + 2. With decay d:

* variant "reference": multiplier d^(L + 2 - depth): embeddings d^(L+2), layer i d^(L+1-i), head 1. This is one
  power more than the paper describes (acknowledged by the reference's authors on its GitHub tracker) and is what
  produced its results.
* variant "paper": one power less below the head: embeddings d^(L+1), layer i d^(L-i), head 1.
"""

import re

from electra_tf.errors import ConfigError

VARIANTS = ("reference", "paper")
EMBEDDING_LAYER_NAMES = ("embeddings", "embeddings_project")
_TRANSFORMER_LAYER = re.compile(r"transformer_layer_(\d+)")


def layer_depth(variable_path, num_layers):
    """Depth of the variable at `variable_path` (e.g. "classifier/transformer_layer_3/ffn/kernel"): 0..L+2.

    Only the path's directory parts count, so a head variable that happens to be named "embeddings" is still head.
    """
    for part in variable_path.split("/")[:-1]:
        if part in EMBEDDING_LAYER_NAMES:
            return 0
        match = _TRANSFORMER_LAYER.fullmatch(part)
        if match:
            layer = int(match.group(1))
            if layer >= num_layers:
                raise ConfigError(
                    f"variable {variable_path} belongs to transformer layer {layer}, but num_layers is "
                    f"{num_layers}; pass the model's number of layers"
                )
            return layer + 1
    return num_layers + 2


def layerwise_lr_multipliers(variable_paths, num_layers, decay, variant="reference"):
    """{variable path: learning-rate multiplier} under layer-wise decay `decay` (see the module docstring)."""
    if variant not in VARIANTS:
        raise ConfigError(f"unknown layer-wise decay variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if not isinstance(num_layers, int) or num_layers < 1:
        raise ConfigError(f"num_layers must be a positive integer, got {num_layers!r}")
    if not 0.0 < decay <= 1.0:
        raise ConfigError(f"layer-wise learning-rate decay must be in (0, 1], got {decay!r}")
    head_depth = num_layers + 2
    multipliers = {}
    for path in variable_paths:
        depth = layer_depth(path, num_layers)
        exponent = head_depth - depth
        if variant == "paper" and depth < head_depth:
            exponent -= 1
        # Same float operation as the reference (decay ** exponent) so values match it bit for bit.
        multipliers[path] = decay**exponent
    return multipliers
