"""Known-answer tests for lmgeometry.measures.mev: MEV and the authors' TruncatedSVD ratio.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.references import svd_share
from sklearn.decomposition import PCA, TruncatedSVD

from lmgeometry.measures import mev


def test_rank_one_matrix_has_mev_one():
    rng = np.random.default_rng(1)
    v = rng.standard_normal(12)
    a = np.array([3.0, -1.0, 0.5, 2.0, -4.0, 1.5])  # signs and sizes vary
    X = a[:, None] * v[None, :]
    assert mev.max_explainable_variance(X) == pytest.approx(1.0, abs=1e-12)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(1.0, abs=1e-12)



def test_max_explainable_variance_matches_svd_and_sklearn_pca():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 12)) @ rng.standard_normal((12, 12)) + 3.0
    assert mev.max_explainable_variance(X) == pytest.approx(svd_share(X, False), abs=1e-10)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(
        svd_share(X, True), abs=1e-10
    )
    pca = PCA(n_components=1, svd_solver="full").fit(X)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(
        pca.explained_variance_ratio_[0], abs=1e-10
    )
    # the Lanczos path (more than 64 rows and columns) against a dense SVD
    Y = rng.standard_normal((300, 80)) + rng.standard_normal(80)
    for centered in (False, True):
        assert mev.max_explainable_variance(Y, centered) == pytest.approx(
            svd_share(Y, centered), abs=1e-8
        )



def test_truncated_svd_ratio_matches_sklearn():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 15)) * np.linspace(0.2, 3, 15) + 2.0
    svd = TruncatedSVD(n_components=2, algorithm="arpack").fit(X)
    assert mev.truncated_svd_variance_ratio(X) == pytest.approx(
        svd.explained_variance_ratio_[0], abs=1e-8
    )



def _four_rows(m: float, tau: float, a: float) -> np.ndarray:
    """Rows ``(m + t_i) e_0 + e_i`` with ``t = tau (1, -1, 1, -1)`` and ``e = a (e_1, e_1, -e_1,
    -e_1)``: ``sum t_i = 0``, ``sum e_i = 0`` and ``sum t_i e_i = 0``, so ``X^T X`` has ``e_0``
    and ``e_1`` as exact eigenvectors (eigenvalues ``4 m^2 + 4 tau^2`` and ``4 a^2``)."""
    X = np.zeros((4, 5))
    X[:, 0] = m + tau * np.array([1.0, -1, 1, -1])
    X[:, 1] = a * np.array([1.0, 1, -1, -1])
    return X


def test_truncated_svd_ratio_of_a_cloud_whose_mean_dominates():
    """The uncentred first direction is the mean's (e_0), so the ratio is the share of the
    centred variance along the mean, tau^2 / (tau^2 + a^2), by hand; the centred PCA takes the
    larger share, a^2 / (tau^2 + a^2). With no spread along the mean (tau = 0) the ratio is 0,
    below the centred floor 1 / (n - 1) = 1/3."""
    X = _four_rows(m=10.0, tau=0.5, a=2.0)
    assert mev.truncated_svd_variance_ratio(X) == pytest.approx(0.25 / 4.25, abs=1e-12)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(4 / 4.25, abs=1e-12)
    flat = _four_rows(m=10.0, tau=0.0, a=2.0)
    assert mev.truncated_svd_variance_ratio(flat) == pytest.approx(0.0, abs=1e-12)
    assert mev.max_explainable_variance(flat, centered=True) == pytest.approx(1.0, abs=1e-12)
    svd = TruncatedSVD(n_components=3, algorithm="arpack").fit(X)
    assert svd.explained_variance_ratio_[0] == pytest.approx(0.25 / 4.25, abs=1e-10)
    # 20 isotropic rows around a far mean in 128 dimensions: the ratio is that of the
    # authors' own call, TruncatedSVD(n_components=100) with its randomized solver
    rng = np.random.default_rng(11)
    Y = rng.standard_normal((20, 128)) + 30 * rng.standard_normal(128)
    authors = TruncatedSVD(n_components=100, random_state=0).fit(Y)
    assert mev.truncated_svd_variance_ratio(Y) == pytest.approx(
        authors.explained_variance_ratio_[0], abs=1e-9)
    assert mev.truncated_svd_variance_ratio(Y) < 1 / 19 <= mev.max_explainable_variance(Y, True)


def test_truncated_svd_ratio_of_a_rank_one_cloud_is_one():
    """Rows a_i w: all the centred variance is along w, the uncentred first direction."""
    w = np.random.default_rng(2).standard_normal(9)
    for a in ([1.0, 2.0, 3.5, 0.5, 4.0], [3.0, -1.0, 0.5, 2.0, -4.0, 1.5]):
        X = np.array(a)[:, None] * w
        assert mev.truncated_svd_variance_ratio(X) == pytest.approx(1.0, abs=1e-12)
    assert np.isnan(mev.truncated_svd_variance_ratio(np.tile(w, (5, 1))))  # no variance


def test_isotropic_gaussian_centred_and_truncated_svd_ratios():
    """Isotropic N(mu, I_d) rows. Centred, the first share is lambda_1(C) / tr(C), about 1/d
    (at most the Marchenko-Pastur edge (1 + sqrt(d/n))^2 / d). Far from the origin the
    uncentred first direction is mu's, along which the variance is 1 of the total d: the
    TruncatedSVD ratio is 1/d (sampling sd about sqrt(2/n)/d). At the origin the uncentred and
    the centred first directions agree. With few rows (n = 10 in d = 300), the ratio is still
    about 1/d on average while the centred share is at least 1/9."""
    rng = np.random.default_rng(3)
    d, n = 8, 20000
    edge = (1 + np.sqrt(d / n)) ** 2 / d
    far = rng.standard_normal((n, d)) + 10.0 * np.eye(d)[0]
    assert mev.truncated_svd_variance_ratio(far) == pytest.approx(1 / d, abs=0.006)
    assert 1 / d <= mev.max_explainable_variance(far, centered=True) <= edge + 0.005
    origin = rng.standard_normal((n, d))
    assert mev.max_explainable_variance(origin, centered=True) == pytest.approx(1 / d, abs=0.02)
    assert mev.truncated_svd_variance_ratio(origin) == pytest.approx(
        mev.max_explainable_variance(origin, centered=True), abs=1e-3)
    d, n = 300, 10
    few = [rng.standard_normal((n, d)) + 1e3 * np.eye(d)[0] for _ in range(200)]
    assert np.mean([mev.truncated_svd_variance_ratio(X) for X in few]) == pytest.approx(
        1 / d, rel=0.15)
    assert min(mev.max_explainable_variance(X, centered=True) for X in few) >= 1 / (n - 1)


def test_truncated_svd_ratio_invariances():
    """Unchanged by a positive scale, a rotation and the order of the rows; changed by a
    translation (the uncentred direction moves), which leaves the centred MEV unchanged."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 6)) * np.array([3.0, 2, 1, 1, 0.5, 0.2]) + 1.0
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    r = mev.truncated_svd_variance_ratio(X)
    assert mev.truncated_svd_variance_ratio(7.5 * X) == pytest.approx(r, abs=1e-12)
    assert mev.truncated_svd_variance_ratio(X @ Q) == pytest.approx(r, abs=1e-10)
    assert mev.truncated_svd_variance_ratio(X[rng.permutation(30)]) == pytest.approx(r, abs=1e-12)
    shifted = X + 50.0 * np.eye(6)[5]  # the mean now lies along the least-varying axis
    assert mev.truncated_svd_variance_ratio(shifted) < r / 10
    assert mev.max_explainable_variance(shifted, centered=True) == pytest.approx(
        mev.max_explainable_variance(X, centered=True), abs=1e-10)


def test_batched_mev_of_every_method_matches_one_matrix_at_a_time():
    """_mev_many (batched by size, one by one above 64 rows) gives each group's MEV as the
    single-matrix functions do, for the three methods."""
    from lmgeometry.measures.similarity import unit_rows

    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 70)) + 2.0 * rng.standard_normal(70)
    U, norms = unit_rows(X)
    groups = [np.arange(0, 5), np.arange(5, 10), np.arange(10, 13), np.arange(13, 100),
              np.arange(100, 300)]
    for method in ("centered", "uncentered", "truncated_svd"):
        got = mev._mev_many(U, norms, groups, method)
        want = [mev._mev_of(X[g], method) for g in groups]
        np.testing.assert_allclose(got, want, atol=1e-9, err_msg=method)
    with pytest.raises(ValueError, match="truncated_svd"):
        mev._mev_many(U, norms, groups, "pca")
