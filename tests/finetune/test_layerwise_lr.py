"""Layer-wise learning-rate multipliers for a 12-layer model against the reference's `_get_layer_lrs` values."""

import pytest

from electra_tf.errors import ConfigError
from finetune.layerwise_lr import layer_depth, layerwise_lr_multipliers

NUM_LAYERS = 12

# Powers of 0.8 written out by hand (0.8^k), to compare against without re-deriving the formula.
POWERS_OF_0_8 = {
    0: 1.0,
    1: 0.8,
    2: 0.64,
    3: 0.512,
    4: 0.4096,
    5: 0.32768,
    6: 0.262144,
    7: 0.2097152,
    8: 0.16777216,
    9: 0.134217728,
    10: 0.1073741824,
    11: 0.08589934592,
    12: 0.068719476736,
    13: 0.0549755813888,
    14: 0.04398046511104,
}

# The reference (`_get_layer_lrs` in google-research/electra run_finetuning.py) for 12 layers: exponents of the
# decay per group. Embeddings and embeddings_project 14; encoder layer_i 13 - i; task head 0.
REFERENCE_EXPONENTS = {
    "embeddings": 14,
    "embeddings_project": 14,
    "head": 0,
    **{f"layer_{i}": exponent for i, exponent in enumerate(range(13, 1, -1))},
}
# The paper's description: one power less below the head.
PAPER_EXPONENTS = {
    "embeddings": 13,
    "embeddings_project": 13,
    "head": 0,
    **{f"layer_{i}": exponent for i, exponent in enumerate(range(12, 0, -1))},
}

# Keras 3 variable paths of a 12-layer ELECTRA classifier, one (or more) per group.
PATHS = {
    "embeddings": [
        "electra_classifier/embeddings/word_embeddings/embeddings",
        "electra_classifier/embeddings/position_embeddings/embeddings",
        "electra_classifier/embeddings/token_type_embeddings/embeddings",
        "electra_classifier/embeddings/layer_norm/gamma",
    ],
    "embeddings_project": [
        "electra_classifier/embeddings_project/kernel",
        "electra_classifier/embeddings_project/bias",
    ],
    **{
        f"layer_{i}": [
            f"electra_classifier/transformer_layer_{i}/self_attention/query/kernel",
            f"electra_classifier/transformer_layer_{i}/output_layer_norm/beta",
        ]
        for i in range(NUM_LAYERS)
    },
    "head": [
        "electra_classifier/classifier/kernel",
        "electra_classifier/classifier/bias",
        "task_head/embeddings",
    ],  # a head variable merely *named* "embeddings" stays head
}


@pytest.mark.parametrize("variant,exponents", [("reference", REFERENCE_EXPONENTS), ("paper", PAPER_EXPONENTS)])
def test_twelve_layer_multipliers_equal_the_reference_exactly(variant, exponents):
    all_paths = [path for paths in PATHS.values() for path in paths]
    multipliers = layerwise_lr_multipliers(all_paths, NUM_LAYERS, 0.8, variant=variant)
    assert set(multipliers) == set(all_paths)
    for group, paths in PATHS.items():
        for path in paths:
            # Bit-exact against the reference's own expression, lr * decay ** exponent ...
            assert 1e-4 * multipliers[path] == 1e-4 * 0.8 ** exponents[group], path
            # ... and against the hand-written decimal table.
            assert multipliers[path] == pytest.approx(POWERS_OF_0_8[exponents[group]], rel=1e-13), path


def test_reference_is_the_paper_times_decay_below_the_head():
    paths = [
        "embeddings/word_embeddings/embeddings",
        "transformer_layer_0/ffn/kernel",
        "transformer_layer_11/ffn/kernel",
        "classifier/kernel",
    ]
    reference = layerwise_lr_multipliers(paths, NUM_LAYERS, 0.9, "reference")
    paper = layerwise_lr_multipliers(paths, NUM_LAYERS, 0.9, "paper")
    assert reference["classifier/kernel"] == paper["classifier/kernel"] == 1.0
    for path in paths[:3]:
        assert reference[path] == pytest.approx(0.9 * paper[path], rel=1e-14)
    assert paper["transformer_layer_11/ffn/kernel"] == pytest.approx(0.9)  # the top layer is one step below the head


def test_layer_depths():
    assert layer_depth("embeddings/layer_norm/gamma", 12) == 0
    assert layer_depth("model/embeddings_project/kernel", 12) == 0
    # transformer_layer_1 must not capture transformer_layer_10/11 by prefix.
    assert layer_depth("model/transformer_layer_1/ffn/kernel", 12) == 2
    assert layer_depth("model/transformer_layer_10/ffn/kernel", 12) == 11
    assert layer_depth("model/transformer_layer_11/ffn/kernel", 12) == 12
    assert layer_depth("classifier/kernel", 12) == 14
    assert layer_depth("kernel", 12) == 14


def test_mismatched_depth_and_bad_arguments_are_config_errors():
    with pytest.raises(ConfigError, match="transformer layer 12, but num_layers is 12"):
        layer_depth("model/transformer_layer_12/ffn/kernel", 12)
    with pytest.raises(ConfigError, match="unknown layer-wise decay variant 'bert'"):
        layerwise_lr_multipliers(["classifier/kernel"], 12, 0.8, variant="bert")
    with pytest.raises(ConfigError, match=r"decay must be in \(0, 1\]"):
        layerwise_lr_multipliers(["classifier/kernel"], 12, 1.5)
    with pytest.raises(ConfigError, match="num_layers must be a positive integer"):
        layerwise_lr_multipliers(["classifier/kernel"], 0, 0.8)
