"""Tests for lmgeometry.measures.centering against the paper's formulas and invariances."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from lmgeometry.measures import centering, isotropy, spectra


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_center_invariances():
    rng = _rng(7)
    W = rng.standard_normal((300, 12))
    v = rng.standard_normal(12) * 5
    np.testing.assert_allclose(centering.center(W + v), centering.center(W), atol=1e-12)
    np.testing.assert_allclose(centering.center(W).mean(axis=0), 0, atol=1e-14)
    np.testing.assert_allclose(centering.center(centering.center(W)), centering.center(W),
                               atol=1e-14)
    assert isotropy.isotropy_partition(centering.center(W + v)) == pytest.approx(
        isotropy.isotropy_partition(centering.center(W)), rel=1e-10
    )
    assert centering.center(W.astype(np.float32)).dtype == np.float32


def test_scaled_center_hand_example():
    # unit rows (1,0), (0,1): mu_hat = (1/2, 1/2); e' = e - ||e|| mu_hat
    W = np.array([[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(centering.scaled_center(W), [[0.5, -0.5], [-1.0, 1.0]], atol=1e-15)


def test_scaled_center_properties():
    rng = _rng(8)
    W = rng.standard_normal((200, 7)) + 2.0
    out = centering.scaled_center(W)
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    # (a) the normalised rows are centred: mean_w e'(w)/||e(w)|| = mean(e_hat) - mu_hat = 0
    np.testing.assert_allclose((out / norms).mean(axis=0), 0, atol=1e-13)
    # (b) rescaling row i by a_i > 0 rescales its output by a_i (mu_hat is unchanged)
    a = rng.uniform(0.1, 10, size=(200, 1))
    np.testing.assert_allclose(centering.scaled_center(a * W), a * out, rtol=1e-10, atol=1e-12)
    # (c) with equal norms it is plain centring (mean(W) = r mu_hat)
    U = 3.0 * W / norms
    np.testing.assert_allclose(centering.scaled_center(U), centering.center(U), atol=1e-12)
    # (d) zero rows stay zero and do not enter mu_hat
    Z = np.vstack([W, np.zeros((5, 7))])
    out_z = centering.scaled_center(Z)
    np.testing.assert_array_equal(out_z[-5:], 0)
    np.testing.assert_allclose(out_z[:-5], out, atol=1e-13)


def test_n_top_pcs_default():
    assert [centering.n_top_pcs(w) for w in (1, 100, 101, 640, 768, 1024)] == [1, 1, 2, 7, 8, 11]


def test_remove_top_pcs_matches_paper_formulas_with_sklearn_pca():
    rng = _rng(9)
    W = rng.standard_normal((500, 150)) * np.geomspace(5, 0.5, 150) + rng.standard_normal(150)
    D = 2  # ceil(150 / 100)
    U = PCA(n_components=D).fit(W).components_  # (D, d), an independent PCA
    mu = W.mean(axis=0)
    Wc = W - mu
    bis = centering.remove_top_pcs(W)  # default d and variant
    mv = centering.remove_top_pcs(W, centered_projection=False)
    # eq. 11 of Biš et al. and Mu & Viswanath's Algorithm 1 (raw rows projected)
    np.testing.assert_allclose(bis, Wc - Wc @ U.T @ U, atol=1e-10)
    np.testing.assert_allclose(mv, Wc - W @ U.T @ U, atol=1e-10)
    # Biš: every row orthogonal to the removed directions; rank drops by D
    np.testing.assert_allclose(bis @ U.T, 0, atol=1e-10)
    assert np.linalg.matrix_rank(bis) == 150 - D
    # Mu & Viswanath: constant component -u_j.mu along u_j (zero variance there)
    np.testing.assert_allclose(mv @ U.T, np.broadcast_to(-(U @ mu), (500, D)), atol=1e-10)
    np.testing.assert_allclose((mv - mv.mean(axis=0)) @ U.T, 0, atol=1e-10)
    assert centering.remove_top_pcs(W.astype(np.float32), d=3).dtype == np.float32


def test_rows_option_returns_the_same_rows():
    W = _rng(3).standard_normal((300, 12)) + 2.0
    rows = np.array([299, 5, 5, 120])
    for fn in (centering.center, centering.scaled_center, centering.remove_top_pcs):
        assert np.allclose(fn(W, rows=rows, chunk_rows=64), fn(W)[rows])
    for centered in (False, True):
        full = spectra.project_2d(W, centered=centered)
        assert np.allclose(spectra.project_2d(W, centered=centered, rows=rows), full[rows])
