"""`electra_tf.analysis.similarity` against the kernel (HSIC) form of CKA and exhaustive cosine averages."""

import numpy as np
import pytest

from electra_tf.analysis.similarity import anisotropy, effective_rank, linear_cka


def _hsic_cka(x, y):
    """CKA as Kornblith et al. define it: centred Gram matrices, HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L))."""
    n = len(x)
    centring = np.eye(n) - np.ones((n, n)) / n
    k, l_ = centring @ x @ x.T @ centring, centring @ y @ y.T @ centring
    return np.trace(k @ l_) / np.sqrt(np.trace(k @ k) * np.trace(l_ @ l_))


def test_linear_cka_equals_the_kernel_form_on_random_inputs():
    rng = np.random.default_rng(0)
    for dims in ((5, 5), (8, 3), (3, 12)):
        x = rng.normal(size=(40, dims[0]))
        y = x[:, :1] @ rng.normal(size=(1, dims[1])) + rng.normal(size=(40, dims[1]))
        assert linear_cka(x, y) == pytest.approx(_hsic_cka(x, y), rel=1e-10)
        assert 0 < linear_cka(x, y) < 1


def test_linear_cka_is_one_under_rotation_scale_and_shift_and_symmetric():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 6))
    rotation, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    assert linear_cka(x, 3.0 * x @ rotation + 7.0) == pytest.approx(1.0, abs=1e-12)
    y = rng.normal(size=(30, 4))
    assert linear_cka(x, y) == pytest.approx(linear_cka(y, x), abs=1e-12)


def test_linear_cka_refuses_different_items():
    with pytest.raises(ValueError, match="same items: 3 rows against 4"):
        linear_cka(np.ones((3, 2)), np.ones((4, 2)))


def test_anisotropy_approaches_the_mean_cosine_over_all_pairs():
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(12, 5)) + np.array([2.0, 0, 0, 0, 0])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ unit.T
    exhaustive = (cosines.sum() - np.trace(cosines)) / (12 * 11)
    assert anisotropy(vectors, num_pairs=400000, seed=3) == pytest.approx(exhaustive, abs=0.005)
    assert anisotropy(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])) == pytest.approx(1.0)
    two = np.array([[1.0, 0.0], [1.0, 1.0]])
    assert anisotropy(two, num_pairs=10) == pytest.approx(np.sqrt(0.5))


def test_effective_rank_counts_evenly_used_directions_and_ignores_the_offset():
    rng = np.random.default_rng(0)
    signs = rng.choice([-1.0, 1.0], size=(4000, 3))
    basis = np.linalg.qr(rng.normal(size=(16, 3)))[0].T  # 3 orthonormal directions in 16 dimensions
    spread = signs @ basis + 5.0  # a common offset: every vector points nearly the same way
    assert effective_rank(spread) == pytest.approx(3.0, abs=0.02)
    assert anisotropy(spread) > 0.9  # the mean cosine calls it collapsed; the rank does not
    along_one = np.outer(rng.normal(size=500), rng.normal(size=16))
    assert effective_rank(along_one) == pytest.approx(1.0, abs=1e-6)
    # Unequal variances: exp(entropy) of the shares (0.8, 0.2) in closed form.
    unequal = np.stack([2 * rng.choice([-1.0, 1.0], 2000), rng.choice([-1.0, 1.0], 2000)], axis=1)
    expected = np.exp(-(0.8 * np.log(0.8) + 0.2 * np.log(0.2)))
    assert effective_rank(unequal) == pytest.approx(expected, abs=0.02)
    assert effective_rank(np.ones((5, 4))) == 0.0
