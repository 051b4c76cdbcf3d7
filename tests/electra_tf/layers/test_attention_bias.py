"""The additive attention biases every layer of a backbone shares: ALiBi's distance bias against the paper's slopes and
a direct computation."""

import numpy as np
import pytest

from electra_tf.layers.transformer_layer import alibi_attention_bias, alibi_slopes


@pytest.mark.parametrize(
    "num_heads, exponents",
    [
        (1, [8]),
        (4, [2, 4, 6, 8]),
        (8, [1, 2, 3, 4, 5, 6, 7, 8]),
        # Not a power of two: the 8-head slopes, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...).
        (12, [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]),
    ],
)
def test_slopes_are_the_alibi_paper_s(num_heads, exponents):
    np.testing.assert_allclose(alibi_slopes(num_heads), [2.0**-exponent for exponent in exponents], rtol=1e-12)


def test_slopes_need_a_head():
    with pytest.raises(ValueError, match="num_heads must be positive, got 0"):
        alibi_slopes(0)


def test_bias_is_minus_the_head_s_slope_times_the_distance_padding_included():
    padding_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype="int32")
    bias = np.asarray(alibi_attention_bias(padding_mask, 4, "float32"))
    assert bias.shape == (2, 4, 5, 5)
    slopes = [0.25, 0.0625, 0.015625, 0.00390625]
    for row in range(2):
        for head, slope in enumerate(slopes):
            for query in range(5):
                for key in range(5):
                    assert bias[row, head, query, key] == -slope * abs(query - key)
