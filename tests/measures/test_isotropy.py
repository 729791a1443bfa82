"""Tests for lmgeometry.measures.isotropy against analytic values and independent computations."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from fixtures.references import brute_mean_cosine
from scipy.special import logsumexp

from lmgeometry.measures import centering, isoscore, isotropy


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _axis_pairs(scales: np.ndarray) -> np.ndarray:
    """Rows +s_k e_k and -s_k e_k: W^T W = diag(2 s_k^2), eigenvectors e_k, and
    Z(+-e_k) = exp(s_k) + exp(-s_k) + (2d - 2) exactly."""
    d = scales.size
    eye = np.eye(d) * scales[:, None]
    return np.concatenate([eye, -eye])


def _direct_isotropy(W: np.ndarray, signs: str) -> float:
    """The definition written out with a plain exp (valid only where nothing overflows)."""
    _, V = np.linalg.eigh(W.T @ W)
    z_pos = np.exp(W @ V).sum(axis=0)
    z_neg = np.exp(-W @ V).sum(axis=0)
    if signs == "larger":
        z = np.maximum(z_pos, z_neg)
    else:
        z = np.concatenate([z_pos, z_neg])
    return float(z.min() / z.max())


# ------------------------------------------------------------------------------------------
# I(W)
# ------------------------------------------------------------------------------------------


def test_isotropy_partition_axis_pairs_closed_form():
    scales = np.array([0.3, 0.7, 1.1, 1.9, 2.6])
    W = _axis_pairs(scales)
    d = scales.size
    expected = (2 * math.cosh(0.3) + 2 * d - 2) / (2 * math.cosh(2.6) + 2 * d - 2)
    for signs in ("larger", "both"):
        assert isotropy.isotropy_partition(W, signs=signs) == pytest.approx(expected, rel=1e-12)
        assert isotropy.isotropy_partition(W, signs=signs, chunk_rows=3) == pytest.approx(
            expected, rel=1e-12
        )


def test_isotropy_partition_centred_gaussian_near_one():
    # c.w ~ N(0, 1) for every unit c, so Z(c) = n e^{1/2} (1 + O(sqrt((e - 1)/n)))
    X = _rng(1).standard_normal((50_000, 10))
    X -= X.mean(axis=0)
    assert isotropy.isotropy_partition(X) > 0.95
    assert isotropy.isotropy_partition(X, signs="both") > 0.95


def test_isotropy_partition_shifted_gaussian_known_value():
    # shift by m e_1: u_1 = e_1, Z(e_1) ~ n e^{m + 1/2}, Z(-e_1) ~ n e^{-m + 1/2}, others
    # ~ n e^{1/2}; hence I ~ e^{-m} with one sign per axis and e^{-2m} with both signs.
    X = _rng(2).standard_normal((50_000, 10))
    X[:, 0] += 3.0
    assert isotropy.isotropy_partition(X) == pytest.approx(math.exp(-3), rel=0.1)
    assert isotropy.isotropy_partition(X, signs="both") == pytest.approx(math.exp(-6), rel=0.15)


def test_isotropy_partition_matches_direct_exp():
    W = _rng(3).standard_normal((400, 8)) * np.linspace(0.2, 1.2, 8) + 0.4
    for signs in ("larger", "both"):
        assert isotropy.isotropy_partition(W, signs=signs, chunk_rows=64) == pytest.approx(
            _direct_isotropy(W, signs), rel=1e-10
        )
        assert isotropy.isotropy_partition(W, signs=signs, log=True) == pytest.approx(
            math.log(_direct_isotropy(W, signs)), rel=1e-10
        )


def test_isotropy_partition_no_overflow_for_norm_1000():
    scales = np.array([0.5, 3.0, 20.0, 1000.0])
    W = _axis_pairs(scales)
    d = scales.size
    rest = math.log(2 * d - 2)
    expected_log = np.logaddexp.reduce([0.5, -0.5, rest]) - np.logaddexp.reduce(
        [1000.0, -1000.0, rest]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_i = isotropy.isotropy_partition(W, log=True)
        value = isotropy.isotropy_partition(W)
    assert log_i == pytest.approx(expected_log, rel=1e-12)
    assert value == 0.0  # exp(-999) underflows, correctly
    # random directions, all rows of norm 1000, float32 input
    R = _rng(4).standard_normal((2000, 16))
    R = (1000 * R / np.linalg.norm(R, axis=1, keepdims=True)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for signs in ("larger", "both"):
            log_r = isotropy.isotropy_partition(R, signs=signs, log=True)
            assert np.isfinite(log_r) and log_r <= 0
            assert 0.0 <= isotropy.isotropy_partition(R, signs=signs) <= 1.0


def test_log_partition_function_matches_logsumexp():
    W = _rng(5).standard_normal((101, 6)) * 40
    C = np.linalg.qr(_rng(6).standard_normal((6, 6)))[0]
    expected = logsumexp(W @ C, axis=0)
    np.testing.assert_allclose(isotropy.log_partition_function(W, C, chunk_rows=7), expected,
                               rtol=1e-12)
    assert isotropy.log_partition_function(W, C[:, 0]) == pytest.approx(expected[0], rel=1e-12)


# ------------------------------------------------------------------------------------------
# Table 1 statistics and models
# ------------------------------------------------------------------------------------------


def test_embedding_statistics_agree_with_direct_computations():
    rng = _rng(18)
    W = rng.standard_normal((900, 120)) * np.geomspace(2, 0.3, 120) + rng.standard_normal(120)
    W[:3] = 0.0  # padding-like rows
    W = W.astype(np.float32)
    W64 = W.astype(np.float64)
    stats = isotropy.embedding_statistics(W, chunk_rows=128)
    norms = np.linalg.norm(W64, axis=1)
    mu = W64.mean(axis=0)
    assert stats["n_rows"] == 900 and stats["width"] == 120 and stats["n_zero_rows"] == 3
    assert stats["n_pcs_removed"] == 2
    assert stats["mean_norm"] == pytest.approx(norms.mean(), rel=1e-10)
    assert stats["mean_vector_norm"] == pytest.approx(np.linalg.norm(mu), rel=1e-10)
    assert stats["mean_vector_ratio"] == pytest.approx(np.linalg.norm(mu) / norms.mean(), rel=1e-10)
    variants = {
        "raw": W64,
        "centered": W64 - mu,
        "top_pcs_removed": centering.remove_top_pcs(W64),
        "top_pcs_removed_original": centering.remove_top_pcs(W64, centered_projection=False),
    }
    for name, M in variants.items():
        for signs, suffix in (("larger", ""), ("both", "_both_signs")):
            assert stats[f"isotropy_{name}{suffix}"] == pytest.approx(
                isotropy.isotropy_partition(M, signs=signs), rel=1e-7
            ), (name, signs)
        assert stats[f"log_isotropy_{name}"] == pytest.approx(
            isotropy.isotropy_partition(M, log=True), rel=1e-7
        )
    assert stats["isoscore"] == pytest.approx(isoscore.isoscore(W64, "package"), rel=1e-6)
    nz = W64[3:]
    assert stats["mean_cosine"] == pytest.approx(brute_mean_cosine(nz), rel=1e-8)
    assert stats["mean_cosine_centered"] == pytest.approx(brute_mean_cosine(W64 - mu), rel=1e-8)
    u1 = np.linalg.svd(W64, full_matrices=False)[2][0]
    assert stats["top_eigvec_mean_cosine"] == pytest.approx(
        abs(u1 @ mu) / np.linalg.norm(mu), rel=1e-8
    )
    sub = isotropy.embedding_statistics(W, isoscore_rows=300, seed=3)
    rows = np.sort(np.random.default_rng(3).choice(900, size=300, replace=False))
    assert sub["isoscore"] == pytest.approx(isoscore.isoscore(W64[rows], "package"), rel=1e-6)
    assert sub["isoscore_rows"] == 300


def test_bis2021_table1_is_internally_consistent():
    # the ratio column is ||mu|| / avg ||e(w)|| up to the paper's two-decimal rounding
    assert len(isotropy.BIS2021_TABLE1) == 8
    for row in isotropy.BIS2021_TABLE1.values():
        ratio = row["mean_vector_norm"] / row["mean_norm"]
        assert ratio == pytest.approx(row["mean_vector_ratio"], abs=0.01)
        assert 0 < row["isotropy_raw"] < row["isotropy_centered"] < row["isotropy_top_pcs_removed"]


# ------------------------------------------------------------------------------------------
# Bootstrap intervals over tokens and sentences
# ------------------------------------------------------------------------------------------


def test_embedding_statistics_intervals_follow_the_resampled_rows():
    rng = _rng(21)
    W = rng.standard_normal((3000, 16)) + 2.0  # a planted shift along the diagonal
    stats = isotropy.embedding_statistics(W, n_boot=300, rng=1)
    assert stats["isotropy_raw"] < 0.2 < 0.8 < stats["isotropy_centered"]
    gap = (stats["isotropy_centered"] - stats["isotropy_raw"]) / (1 - stats["isotropy_raw"])
    assert stats["isotropy_gap_closed"] == pytest.approx(gap)
    for key in ("isotropy_raw", "isotropy_centered", "isotropy_gap_closed"):
        lo, value, hi = stats[f"{key}_lo"], stats[key], stats[f"{key}_hi"]
        assert lo <= value <= hi and hi - lo < 0.1, key
    # the log-partition replicate of a resample that keeps every row once is the sample's
    again = isotropy.embedding_statistics(W)
    assert "isotropy_raw_lo" not in again and again["isotropy_raw"] == stats["isotropy_raw"]


def test_isotropy_replicates_match_a_weighted_recomputation():
    rng = _rng(22)
    W = rng.standard_normal((400, 6)) * [3, 2, 1, 1, 0.5, 0.5] + 1.0
    stats = isotropy.embedding_statistics(W)
    V_raw = np.linalg.eigh(W.T @ W)[1][:, ::-1]
    mu = W.mean(0)
    V_c = np.linalg.eigh((W - mu).T @ (W - mu))[1][:, ::-1]
    pos = np.concatenate([logsumexp(W @ V_raw, axis=0), logsumexp((W - mu) @ V_c, axis=0)])
    neg = np.concatenate([logsumexp(-W @ V_raw, axis=0), logsumexp(-(W - mu) @ V_c, axis=0)])
    reps = isotropy._isotropy_replicates(W, (V_raw, V_c), (pos, neg), mu, 3,
                                         np.random.default_rng(5), n_axes=6, chunk_rows=128)
    gen = np.random.default_rng(5)  # the same draws, chunk by chunk, as the measure
    k = np.concatenate([gen.poisson(1.0, size=(3, n)) for n in (128, 128, 128, 16)], axis=1)
    for b in range(3):
        w = k[b]
        mu_b = (w @ W) / w.sum()

        def log_i(M, V, w=w):
            z = np.maximum(logsumexp(M @ V, axis=0, b=w[:, None]),
                           logsumexp(-M @ V, axis=0, b=w[:, None]))
            return z.min() - z.max()

        assert reps["raw"][b] == pytest.approx(log_i(W, V_raw), abs=1e-9)
        assert reps["centered"][b] == pytest.approx(log_i(W - mu_b, V_c), abs=1e-9)
    assert stats["log_isotropy_raw"] == pytest.approx(
        np.maximum(pos[:6], neg[:6]).min() - np.maximum(pos[:6], neg[:6]).max())


def _top_eigvec_cosine(W: np.ndarray, w: np.ndarray) -> float:
    """|cos(u_1, mu)| of the rows of W weighted by w, by a full eigendecomposition."""
    G = (W * w[:, None]).T @ W
    u1 = np.linalg.eigh(G)[1][:, -1]
    mu = (w @ W) / w.sum()
    return float(abs(u1 @ mu) / np.linalg.norm(mu))


@pytest.mark.parametrize("shift", [3.0, 0.4])
def test_top_eigvec_replicates_match_a_full_eigendecomposition(shift):
    """The first-order replicates of |cos(u_1, mu)| against each resample's own eigh: close
    when the mean dominates the top eigenvalue (shift 3) and when it only leads it (0.4)."""
    rng = _rng(23)
    W = rng.standard_normal((600, 8)) * np.linspace(1.0, 0.5, 8) + shift * rng.standard_normal(8)
    lam, V = np.linalg.eigh(W.T @ W)
    lam, V = lam[::-1], V[:, ::-1]
    K = np.random.default_rng(9).poisson(1.0, size=(40, 600)).astype(np.float64)
    moments = isotropy._top_eigvec_moments(W, V[:, 0], K)
    got = isotropy._top_eigvec_replicates(moments, K.sum(1), lam, V, W.mean(0), 600)
    exact = np.array([_top_eigvec_cosine(W, k) for k in K])
    assert np.abs(got - exact).max() < (1e-6 if shift > 1 else 2e-3)
    assert np.std(exact) > 0  # the resamples do move the eigenvector


def test_top_eigvec_mean_cosine_and_its_interval_known_cases():
    """A planted common direction: u_1 is the mean's direction (|cos| near 1, the seed's 0.99
    for RoBERTa-large); rows of an isotropic Gaussian around 0: no common direction, the
    top eigenvector is as likely any direction, |cos| near 1 / sqrt(width)."""
    rng = _rng(24)
    shifted = isotropy.embedding_statistics(rng.standard_normal((4000, 32)) + 1.5, n_boot=200,
                                            rng=3)
    lo, value, hi = (shifted[f"top_eigvec_mean_cosine{s}"] for s in ("_lo", "", "_hi"))
    assert 0.99 < lo <= value <= hi <= 1.0
    iso = isotropy.embedding_statistics(rng.standard_normal((4000, 32)), n_boot=200, rng=3)
    assert iso["top_eigvec_mean_cosine_lo"] <= iso["top_eigvec_mean_cosine"] < 0.6
    assert iso["top_eigvec_mean_cosine_hi"] < 0.9  # the claim's threshold: the rule fails
    # invariant to scaling W and to rotating it
    W = rng.standard_normal((500, 8)) + 0.3
    Q = np.linalg.qr(rng.standard_normal((8, 8)))[0]
    base = isotropy.embedding_statistics(W)["top_eigvec_mean_cosine"]
    for M in (3.0 * W, W @ Q):
        assert isotropy.embedding_statistics(M)["top_eigvec_mean_cosine"] == pytest.approx(base)
