"""Tests for lmgeometry.measures.isotropy against analytic values and independent computations."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.decomposition import PCA

from lmgeometry.measures import isotropy as iso


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


def _brute_mean_cosine(X: np.ndarray) -> float:
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = Xn @ Xn.T
    n = len(X)
    return float((C.sum() - np.trace(C)) / (n * (n - 1)))


# ------------------------------------------------------------------------------------------
# I(W)
# ------------------------------------------------------------------------------------------


def test_isotropy_partition_axis_pairs_closed_form():
    scales = np.array([0.3, 0.7, 1.1, 1.9, 2.6])
    W = _axis_pairs(scales)
    d = scales.size
    expected = (2 * math.cosh(0.3) + 2 * d - 2) / (2 * math.cosh(2.6) + 2 * d - 2)
    for signs in ("larger", "both"):
        assert iso.isotropy_partition(W, signs=signs) == pytest.approx(expected, rel=1e-12)
        assert iso.isotropy_partition(W, signs=signs, chunk_rows=3) == pytest.approx(
            expected, rel=1e-12
        )


def test_isotropy_partition_centred_gaussian_near_one():
    # c.w ~ N(0, 1) for every unit c, so Z(c) = n e^{1/2} (1 + O(sqrt((e - 1)/n)))
    X = _rng(1).standard_normal((50_000, 10))
    X -= X.mean(axis=0)
    assert iso.isotropy_partition(X) > 0.95
    assert iso.isotropy_partition(X, signs="both") > 0.95


def test_isotropy_partition_shifted_gaussian_known_value():
    # shift by m e_1: u_1 = e_1, Z(e_1) ~ n e^{m + 1/2}, Z(-e_1) ~ n e^{-m + 1/2}, others
    # ~ n e^{1/2}; hence I ~ e^{-m} with one sign per axis and e^{-2m} with both signs.
    X = _rng(2).standard_normal((50_000, 10))
    X[:, 0] += 3.0
    assert iso.isotropy_partition(X) == pytest.approx(math.exp(-3), rel=0.1)
    assert iso.isotropy_partition(X, signs="both") == pytest.approx(math.exp(-6), rel=0.15)


def test_isotropy_partition_matches_direct_exp():
    W = _rng(3).standard_normal((400, 8)) * np.linspace(0.2, 1.2, 8) + 0.4
    for signs in ("larger", "both"):
        assert iso.isotropy_partition(W, signs=signs, chunk_rows=64) == pytest.approx(
            _direct_isotropy(W, signs), rel=1e-10
        )
        assert iso.isotropy_partition(W, signs=signs, log=True) == pytest.approx(
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
        log_i = iso.isotropy_partition(W, log=True)
        value = iso.isotropy_partition(W)
    assert log_i == pytest.approx(expected_log, rel=1e-12)
    assert value == 0.0  # exp(-999) underflows, correctly
    # random directions, all rows of norm 1000, float32 input
    R = _rng(4).standard_normal((2000, 16))
    R = (1000 * R / np.linalg.norm(R, axis=1, keepdims=True)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for signs in ("larger", "both"):
            log_r = iso.isotropy_partition(R, signs=signs, log=True)
            assert np.isfinite(log_r) and log_r <= 0
            assert 0.0 <= iso.isotropy_partition(R, signs=signs) <= 1.0


def test_log_partition_function_matches_logsumexp():
    W = _rng(5).standard_normal((101, 6)) * 40
    C = np.linalg.qr(_rng(6).standard_normal((6, 6)))[0]
    expected = logsumexp(W @ C, axis=0)
    np.testing.assert_allclose(iso.log_partition_function(W, C, chunk_rows=7), expected, rtol=1e-12)
    assert iso.log_partition_function(W, C[:, 0]) == pytest.approx(expected[0], rel=1e-12)


# ------------------------------------------------------------------------------------------
# centring, scaled centring, all-but-the-top
# ------------------------------------------------------------------------------------------


def test_center_invariances():
    rng = _rng(7)
    W = rng.standard_normal((300, 12))
    v = rng.standard_normal(12) * 5
    np.testing.assert_allclose(iso.center(W + v), iso.center(W), atol=1e-12)
    np.testing.assert_allclose(iso.center(W).mean(axis=0), 0, atol=1e-14)
    np.testing.assert_allclose(iso.center(iso.center(W)), iso.center(W), atol=1e-14)
    assert iso.isotropy_partition(iso.center(W + v)) == pytest.approx(
        iso.isotropy_partition(iso.center(W)), rel=1e-10
    )
    assert iso.center(W.astype(np.float32)).dtype == np.float32


def test_scaled_center_hand_example():
    # unit rows (1,0), (0,1): mu_hat = (1/2, 1/2); e' = e - ||e|| mu_hat
    W = np.array([[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(iso.scaled_center(W), [[0.5, -0.5], [-1.0, 1.0]], atol=1e-15)


def test_scaled_center_properties():
    rng = _rng(8)
    W = rng.standard_normal((200, 7)) + 2.0
    out = iso.scaled_center(W)
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    # (a) the normalised rows are centred: mean_w e'(w)/||e(w)|| = mean(e_hat) - mu_hat = 0
    np.testing.assert_allclose((out / norms).mean(axis=0), 0, atol=1e-13)
    # (b) rescaling row i by a_i > 0 rescales its output by a_i (mu_hat is unchanged)
    a = rng.uniform(0.1, 10, size=(200, 1))
    np.testing.assert_allclose(iso.scaled_center(a * W), a * out, rtol=1e-10, atol=1e-12)
    # (c) with equal norms it is plain centring (mean(W) = r mu_hat)
    U = 3.0 * W / norms
    np.testing.assert_allclose(iso.scaled_center(U), iso.center(U), atol=1e-12)
    # (d) zero rows stay zero and do not enter mu_hat
    Z = np.vstack([W, np.zeros((5, 7))])
    out_z = iso.scaled_center(Z)
    np.testing.assert_array_equal(out_z[-5:], 0)
    np.testing.assert_allclose(out_z[:-5], out, atol=1e-13)


def test_n_top_pcs_default():
    assert [iso.n_top_pcs(w) for w in (1, 100, 101, 640, 768, 1024)] == [1, 1, 2, 7, 8, 11]


def test_remove_top_pcs_matches_paper_formulas_with_sklearn_pca():
    rng = _rng(9)
    W = rng.standard_normal((500, 150)) * np.geomspace(5, 0.5, 150) + rng.standard_normal(150)
    D = 2  # ceil(150 / 100)
    U = PCA(n_components=D).fit(W).components_  # (D, d), an independent PCA
    mu = W.mean(axis=0)
    Wc = W - mu
    bis = iso.remove_top_pcs(W)  # default d and variant
    mv = iso.remove_top_pcs(W, centered_projection=False)
    # eq. 11 of Biš et al. and Mu & Viswanath's Algorithm 1 (raw rows projected)
    np.testing.assert_allclose(bis, Wc - Wc @ U.T @ U, atol=1e-10)
    np.testing.assert_allclose(mv, Wc - W @ U.T @ U, atol=1e-10)
    # Biš: every row orthogonal to the removed directions; rank drops by D
    np.testing.assert_allclose(bis @ U.T, 0, atol=1e-10)
    assert np.linalg.matrix_rank(bis) == 150 - D
    # Mu & Viswanath: constant component -u_j.mu along u_j (zero variance there)
    np.testing.assert_allclose(mv @ U.T, np.broadcast_to(-(U @ mu), (500, D)), atol=1e-10)
    np.testing.assert_allclose((mv - mv.mean(axis=0)) @ U.T, 0, atol=1e-10)
    assert iso.remove_top_pcs(W.astype(np.float32), d=3).dtype == np.float32


# ------------------------------------------------------------------------------------------
# IsoScore
# ------------------------------------------------------------------------------------------


def test_isoscore_isotropic_gaussian_near_one():
    X = _rng(10).standard_normal((20_000, 10))
    assert iso.isoscore(X) > 0.97
    assert iso.isoscore(X, "package") > 0.97


def test_isoscore_published_extremes():
    # Rudman et al. (2022): variance spread equally over k of n dims -> phi = k/n and
    # IsoScore = (k - 1)/(n - 1); k = 1 (a line) gives 0, k = n gives 1.
    n = 12
    for k in (1, 3, 7, 12):
        eye = np.eye(n)[:k]
        X = np.concatenate([eye, -eye]) + 5.0  # covariance exactly proportional to diag(1_k, 0)
        assert iso.isoscore(X) == pytest.approx((k - 1) / (n - 1), abs=1e-12)
        assert iso.isoscore(X, "package") == pytest.approx((k - 1) / (n - 1), abs=1e-6)
    line = np.outer(_rng(11).standard_normal(300), _rng(12).standard_normal(n))
    assert iso.isoscore(line) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("shape", [(400, 5), (60, 30), (25, 40)])
def test_isoscore_ours_equals_package(shape):
    rng = _rng(sum(shape))
    X = rng.standard_normal(shape) @ rng.standard_normal((shape[1], shape[1])) + 3.0
    assert iso.isoscore(X, chunk_rows=17) == pytest.approx(iso.isoscore(X, "package"), rel=1e-6)


def test_isoscore_invariances():
    rng = _rng(13)
    X = rng.standard_normal((300, 6)) * np.array([3, 2, 1, 1, 0.5, 0.1])
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    base = iso.isoscore(X)
    assert iso.isoscore(X @ Q + 7.0) == pytest.approx(base, rel=1e-10)
    assert iso.isoscore(4.5 * X) == pytest.approx(base, rel=1e-10)


# ------------------------------------------------------------------------------------------
# cosines, spectra, projections, norms, toy
# ------------------------------------------------------------------------------------------


def test_mean_cosine_exact_and_sampled():
    rng = _rng(14)
    X = rng.standard_normal((300, 5)) + 0.8
    exact = _brute_mean_cosine(X)
    assert iso.mean_cosine(X, chunk_rows=32) == pytest.approx(exact, rel=1e-10)
    sampled = iso.mean_cosine(X, n_pairs=200_000, rng=1)
    assert sampled == pytest.approx(exact, abs=0.01)  # standard error ~ 0.4 / sqrt(2e5)
    with_zeros = np.vstack([X, np.zeros((3, 5))])
    assert iso.mean_cosine(with_zeros) == pytest.approx(exact, rel=1e-10)


def test_singular_values_and_projection_match_svd():
    rng = _rng(15)
    W = rng.standard_normal((200, 6)) * np.array([4, 3, 2, 1, 0.5, 0.2]) + 1.5
    np.testing.assert_allclose(
        iso.singular_values(W, chunk_rows=50), np.linalg.svd(W, compute_uv=False), rtol=1e-10
    )
    Wc = W - W.mean(axis=0)
    sv_c = np.linalg.svd(Wc, compute_uv=False)
    np.testing.assert_allclose(iso.singular_values(W, 3, centered=True), sv_c[:3], rtol=1e-10)
    for centered, M in ((False, W), (True, Wc)):
        U, S, _ = np.linalg.svd(M, full_matrices=False)
        coords = iso.project_2d(W, centered=centered)
        np.testing.assert_allclose(np.abs(coords), np.abs(U[:, :2] * S[:2]), atol=1e-9)
    np.testing.assert_allclose(iso.project_2d(W, centered=True).mean(axis=0), 0, atol=1e-12)


def test_norm_distribution():
    W = _rng(16).standard_normal((50, 4)) + 2
    np.testing.assert_allclose(iso.norm_distribution(W), np.linalg.norm(W, axis=1), rtol=1e-12)
    np.testing.assert_allclose(
        iso.norm_distribution(W, centered=True),
        np.linalg.norm(W - W.mean(axis=0), axis=1),
        rtol=1e-12,
    )


def test_toy_sphere_shift_singular_values():
    n, d = 20_000, 3
    first = []
    for shift in (0.0, 0.5, 1.0, 2.0, 4.0):
        points, sv = iso.toy_sphere_shift(n, d, shift, seed=0)
        u = np.ones(d) / math.sqrt(d)
        np.testing.assert_allclose(np.linalg.norm(points - shift * u, axis=1), 1.0, rtol=1e-12)
        # E[x x^T] = I/d + shift^2 u u^T
        assert sv[0] == pytest.approx(math.sqrt(n * (1 / d + shift**2)), rel=0.03)
        np.testing.assert_allclose(sv[1:], math.sqrt(n / d), rtol=0.03)
        first.append(sv[0])
    assert np.all(np.diff(first) > 0)


def test_rare_token_cosines_known_bins():
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    W = np.vstack([np.tile(e2, (4, 1)), np.tile((e1 + e2) * 2.0, (4, 1)), np.tile(3 * e1, (4, 1))])
    W = np.vstack([W, np.ones((1, 3))])  # a token left out by a negative rank
    ranks = np.r_[np.arange(12), -1]
    table = iso.rare_token_cosines(W, ranks, n_bins=3, n_rare=4)
    np.testing.assert_allclose(table["mean_cosine"], [0.0, 1 / math.sqrt(2), 1.0], atol=1e-12)
    assert table["n_tokens"].tolist() == [4, 4, 4]
    assert table["rank_start"].tolist() == [0, 4, 8]
    assert table["rank_end"].tolist() == [3, 7, 11]


def test_rare_token_cosines_matches_brute_force():
    rng = _rng(17)
    W = rng.standard_normal((60, 5)) + 0.5
    ranks = rng.permutation(60)
    rare = np.array([3, 10, 11, 40])
    table = iso.rare_token_cosines(W, ranks, n_bins=4, rare=rare)
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    order = np.argsort(ranks)
    for row, ids in zip(table.itertuples(), np.array_split(order, 4), strict=True):
        values = [Wn[r] @ Wn[b] for r in rare for b in ids if r != b]
        assert row.mean_cosine == pytest.approx(np.mean(values), rel=1e-10)


# ------------------------------------------------------------------------------------------
# Table 1 statistics and models
# ------------------------------------------------------------------------------------------


def test_embedding_statistics_agree_with_direct_computations():
    rng = _rng(18)
    W = rng.standard_normal((900, 120)) * np.geomspace(2, 0.3, 120) + rng.standard_normal(120)
    W[:3] = 0.0  # padding-like rows
    W = W.astype(np.float32)
    W64 = W.astype(np.float64)
    stats = iso.embedding_statistics(W, chunk_rows=128)
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
        "top_pcs_removed": iso.remove_top_pcs(W64),
        "top_pcs_removed_original": iso.remove_top_pcs(W64, centered_projection=False),
    }
    for name, M in variants.items():
        for signs, suffix in (("larger", ""), ("both", "_both_signs")):
            assert stats[f"isotropy_{name}{suffix}"] == pytest.approx(
                iso.isotropy_partition(M, signs=signs), rel=1e-7
            ), (name, signs)
        assert stats[f"log_isotropy_{name}"] == pytest.approx(
            iso.isotropy_partition(M, log=True), rel=1e-7
        )
    assert stats["isoscore"] == pytest.approx(iso.isoscore(W64, "package"), rel=1e-6)
    nz = W64[3:]
    assert stats["mean_cosine"] == pytest.approx(_brute_mean_cosine(nz), rel=1e-8)
    assert stats["mean_cosine_centered"] == pytest.approx(_brute_mean_cosine(W64 - mu), rel=1e-8)
    u1 = np.linalg.svd(W64, full_matrices=False)[2][0]
    assert stats["top_eigvec_mean_cosine"] == pytest.approx(
        abs(u1 @ mu) / np.linalg.norm(mu), rel=1e-8
    )
    sub = iso.embedding_statistics(W, isoscore_rows=300, seed=3)
    rows = np.sort(np.random.default_rng(3).choice(900, size=300, replace=False))
    assert sub["isoscore"] == pytest.approx(iso.isoscore(W64[rows], "package"), rel=1e-6)
    assert sub["isoscore_rows"] == 300


def test_bis2021_table1_is_internally_consistent():
    # the ratio column is ||mu|| / avg ||e(w)|| up to the paper's two-decimal rounding
    assert len(iso.BIS2021_TABLE1) == 8
    for row in iso.BIS2021_TABLE1.values():
        ratio = row["mean_vector_norm"] / row["mean_norm"]
        assert ratio == pytest.approx(row["mean_vector_ratio"], abs=0.01)
        assert 0 < row["isotropy_raw"] < row["isotropy_centered"] < row["isotropy_top_pcs_removed"]


def test_rows_option_returns_the_same_rows():
    W = _rng(3).standard_normal((300, 12)) + 2.0
    rows = np.array([299, 5, 5, 120])
    for fn in (iso.center, iso.scaled_center, iso.remove_top_pcs):
        assert np.allclose(fn(W, rows=rows, chunk_rows=64), fn(W)[rows])
    for centered in (False, True):
        full = iso.project_2d(W, centered=centered)
        assert np.allclose(iso.project_2d(W, centered=centered, rows=rows), full[rows])


def test_spectral_views_match_svd():
    W = _rng(4).standard_normal((200, 6)) * np.arange(1, 7) + 1.5
    views = iso.spectral_views(W, rows=np.arange(10), chunk_rows=32)
    assert np.allclose(views["singular_values"], np.linalg.svd(W, compute_uv=False))
    Wc = W - W.mean(0)
    assert np.allclose(views["singular_values_centered"], np.linalg.svd(Wc, compute_uv=False))
    _, _, Vt = np.linalg.svd(Wc)
    assert np.allclose(np.abs(views["projection_centered"]), np.abs(Wc[:10] @ Vt[:2].T))


def test_rare_token_cosines_bin_size():
    W = _rng(5).standard_normal((2500, 4))
    table = iso.rare_token_cosines(W, np.arange(2500), rare=np.arange(10), bin_size=1000)
    assert table["rank_start"].tolist() == [0, 1000, 2000]
    assert table["n_tokens"].tolist() == [1000, 1000, 500]


# ------------------------------------------------------------------------------------------
# Bootstrap intervals over tokens and sentences
# ------------------------------------------------------------------------------------------


def test_embedding_statistics_intervals_follow_the_resampled_rows():
    rng = _rng(21)
    W = rng.standard_normal((3000, 16)) + 2.0  # a planted shift along the diagonal
    stats = iso.embedding_statistics(W, n_boot=300, rng=1)
    assert stats["isotropy_raw"] < 0.2 < 0.8 < stats["isotropy_centered"]
    gap = (stats["isotropy_centered"] - stats["isotropy_raw"]) / (1 - stats["isotropy_raw"])
    assert stats["isotropy_gap_closed"] == pytest.approx(gap)
    for key in ("isotropy_raw", "isotropy_centered", "isotropy_gap_closed"):
        lo, value, hi = stats[f"{key}_lo"], stats[key], stats[f"{key}_hi"]
        assert lo <= value <= hi and hi - lo < 0.1, key
    # the log-partition replicate of a resample that keeps every row once is the sample's
    again = iso.embedding_statistics(W)
    assert "isotropy_raw_lo" not in again and again["isotropy_raw"] == stats["isotropy_raw"]


def test_isotropy_replicates_match_a_weighted_recomputation():
    rng = _rng(22)
    W = rng.standard_normal((400, 6)) * [3, 2, 1, 1, 0.5, 0.5] + 1.0
    stats = iso.embedding_statistics(W)
    V_raw = np.linalg.eigh(W.T @ W)[1][:, ::-1]
    mu = W.mean(0)
    V_c = np.linalg.eigh((W - mu).T @ (W - mu))[1][:, ::-1]
    pos = np.concatenate([logsumexp(W @ V_raw, axis=0), logsumexp((W - mu) @ V_c, axis=0)])
    neg = np.concatenate([logsumexp(-W @ V_raw, axis=0), logsumexp(-(W - mu) @ V_c, axis=0)])
    reps = iso._isotropy_replicates(W, (V_raw, V_c), (pos, neg), mu, 3,
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


def test_unit_row_sums_and_cosines_match_brute_force():
    rng = _rng(23)
    W = rng.standard_normal((500, 5)) + [1.0, 0, 0, 0, 0]
    W[7] = 0.0
    groups = rng.integers(-1, 3, size=500)
    sums, counts = iso.unit_row_sums(W, groups, 3, n_boot=4, rng=2, chunk_rows=64)
    U = W / np.where(np.linalg.norm(W, axis=1) > 0, np.linalg.norm(W, axis=1), 1)[:, None]
    ok = (groups >= 0) & (np.linalg.norm(W, axis=1) > 0)
    for g in range(3):
        assert np.allclose(sums[0, g], U[ok & (groups == g)].sum(0), atol=1e-4)
        assert counts[0, g] == (ok & (groups == g)).sum()
    assert (counts[1:] != counts[0]).any()  # replicates reweight the rows
    total = iso.mean_cosine_of_sums(sums[0].sum(0), counts[0].sum())
    assert total == pytest.approx(_brute_mean_cosine(W[ok]), abs=1e-6)
    cross = iso.cross_cosines(sums, counts, reference=2)[0]
    brute = (U[ok & (groups == 0)] @ U[ok & (groups == 2)].T).mean()
    assert cross[0] == pytest.approx(brute, abs=1e-6)
    centred, _ = iso.unit_row_sums(W, np.zeros(500, int), 1, shift=W.mean(0))
    Wc = W - W.mean(0)
    assert np.allclose(centred[0, 0], (Wc / np.linalg.norm(Wc, axis=1)[:, None]).sum(0),
                       atol=1e-4)


def test_shift_cosine_replicates_resample_whole_sentences():
    rng = _rng(24)
    X = rng.standard_normal((300, 4)) + 1.5
    groups = np.repeat(np.arange(30), 10)
    reps = iso.shift_cosine_replicates(X, groups, n_boot=5, rng=9)
    k = np.random.default_rng(9).multinomial(30, np.full(30, 1 / 30), size=5)
    for b in range(5):
        rows = np.concatenate([np.flatnonzero(groups == g).repeat(1) for g in
                               np.repeat(np.arange(30), k[b])])
        direct = iso.shift_cosine(X[rows])
        for key in ("mean_cosine", "shift_prediction", "shift_residual"):
            assert reps[key][b] == pytest.approx(direct[key], abs=1e-10)
