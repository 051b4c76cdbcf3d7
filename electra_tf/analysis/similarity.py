"""Measures of hidden representations: linear CKA between two sets of vectors of the same items, and anisotropy.

Rows are items (e.g. the words of a corpus), columns features; both measures are NumPy on float64.
"""

import numpy as np


def _matrix(values, name):
    values = np.asarray(values, np.float64)
    if values.ndim != 2 or len(values) < 2:
        raise ValueError(f"{name} must be [items, features] with at least 2 items, got shape {values.shape}")
    return values


def linear_cka(x, y):
    """Linear centred kernel alignment (Kornblith et al., 2019) of `x` [n, d1] and `y` [n, d2] (row i of both is
    item i): ||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F) with column-centred Xc, Yc; in [0, 1], 1 when one is
    an orthogonal transform of the other up to scale. Computed in feature space (d x d products), so n may be large.
    """
    x, y = _matrix(x, "x"), _matrix(y, "y")
    if len(x) != len(y):
        raise ValueError(f"x and y must describe the same items: {len(x)} rows against {len(y)}")
    x = x - x.mean(axis=0)
    y = y - y.mean(axis=0)
    cross = np.linalg.norm(y.T @ x) ** 2
    scale = np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)
    return float(cross / scale) if scale > 0 else float("nan")


def anisotropy(vectors, num_pairs=10000, seed=0):
    """Mean cosine similarity of `num_pairs` random pairs of distinct rows of `vectors` (Ethayarajh, 2019): near 0
    for directions spread evenly, near 1 when every vector points one way. Pairs are drawn uniformly with a seeded
    generator; a zero vector has cosine 0 with anything."""
    vectors = _matrix(vectors, "vectors")
    rng = np.random.default_rng(seed)
    first = rng.integers(0, len(vectors), num_pairs)
    second = (first + rng.integers(1, len(vectors), num_pairs)) % len(vectors)  # never the row itself
    norms = np.linalg.norm(vectors, axis=1)
    dots = np.einsum("ij,ij->i", vectors[first], vectors[second])
    denominators = norms[first] * norms[second]
    cosines = np.divide(dots, denominators, out=np.zeros_like(dots), where=denominators > 0)
    return float(np.mean(cosines))


def effective_rank(vectors):
    """Effective rank (Roy and Vetterli, 2007) of the column-centred `vectors` [n, d]: exp of the entropy of the
    normalised squared singular values. k for vectors spread evenly over k orthogonal directions, 1 when they vary
    along one direction only; it shows a representation collapse that the mean cosine alone can miss (vectors far
    from the origin but varying in few directions)."""
    vectors = _matrix(vectors, "vectors")
    energies = np.linalg.svd(vectors - vectors.mean(axis=0), compute_uv=False) ** 2
    if energies.sum() == 0:
        return 0.0
    shares = energies[energies > 0] / energies.sum()
    return float(np.exp(-np.sum(shares * np.log(shares))))
