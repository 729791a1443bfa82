"""Known-answer tests for lmgeometry.measures.stats: the bootstrap interval, the standardised
difference, the cluster Spearman, Wilson's interval and Cohen's h.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmgeometry.measures import stats


def test_bootstrap_interval_contains_mean_and_shrinks_with_n():
    rng = np.random.default_rng(15)
    small = rng.standard_normal(50) + 2.0
    large = rng.standard_normal(5000) + 2.0
    m1, lo1, hi1 = stats.bootstrap_ci(small, 1000, rng=0)
    m2, lo2, hi2 = stats.bootstrap_ci(large, 1000, rng=0)
    assert m1 == pytest.approx(small.mean()) and m2 == pytest.approx(large.mean())
    assert lo1 < m1 < hi1 and lo2 < m2 < hi2
    # width ~ 2 * 1.96 / sqrt(n): a 100x larger sample gives a ~10x narrower interval
    assert (hi1 - lo1) == pytest.approx(2 * 1.96 / math.sqrt(50), rel=0.25)
    assert (hi2 - lo2) < (hi1 - lo1) / 5
    assert stats.bootstrap_ci([3.0, np.nan], 100, rng=0) == (3.0, 3.0, 3.0)
    assert all(math.isnan(x) for x in stats.bootstrap_ci([], 100, rng=0))


def test_bootstrap_interval_agrees_with_scipys_percentile_bootstrap():
    from scipy.stats import bootstrap

    values = np.random.default_rng(7).exponential(size=2000)

    def scipy_ci(seed: int) -> tuple[float, float]:
        ci = bootstrap((values,), np.mean, n_resamples=2000, vectorized=True,
                       method="percentile", rng=np.random.default_rng(seed)).confidence_interval
        return ci.low, ci.high

    mean, low, high = stats.bootstrap_ci(values, 2000, rng=np.random.default_rng(0))
    # the same Generator draws the same resamples: equal up to the quantile's rounding
    assert (low, high) == pytest.approx(scipy_ci(0), rel=1e-12)
    # other draws: the same interval up to Monte Carlo error (about 0.04 of its half-width;
    # a 90% interval in place of the 95% one is 0.15 off)
    half = (high - low) / 2
    for seed in (1, 2):
        other_low, other_high = scipy_ci(seed)
        assert abs(low - other_low) < 0.1 * half and abs(high - other_high) < 0.1 * half
    assert low < mean < high


def test_standardised_difference_known_answers():
    # two groups of equal spread one pooled standard deviation apart: d = 1
    v = np.array([0.0, 2.0, 0.0, 2.0, 3.0, 5.0, 3.0, 5.0])
    g = np.array([False] * 4 + [True] * 4)
    s = math.sqrt(4 / 3)  # both groups: variance of (0, 2, 0, 2) with n - 1
    d, lo, hi = stats.standardised_difference(v, g, n_boot=200, rng=0)
    assert d == pytest.approx(3 / s)
    assert lo <= d <= hi
    assert math.isnan(stats.standardised_difference(v[:5], g[:5])[0])  # one item in a group
    # clusters of identical items: the cluster bootstrap is wider than the item bootstrap
    rng = np.random.default_rng(0)
    base = rng.standard_normal(40)
    vals, grp = np.repeat(base, 10), np.repeat(np.arange(40) % 2 == 0, 10)
    _, lo_i, hi_i = stats.standardised_difference(vals, grp, n_boot=300, rng=1)
    _, lo_c, hi_c = stats.standardised_difference(vals, grp, np.repeat(np.arange(40), 10),
                                                   n_boot=300, rng=1)
    assert hi_c - lo_c > 2 * (hi_i - lo_i)


def test_cluster_spearman_known_answers():
    x = np.arange(1.0, 31.0)
    clusters = np.repeat(np.arange(10), 3)
    # a monotone map gives 1 (or -1) in every resample: the interval is a point
    assert stats.cluster_spearman(x, x ** 3, clusters, 200, rng=0) == pytest.approx((1, 1, 1))
    assert stats.cluster_spearman(x, -np.exp(x / 10), clusters, 200, rng=0) == pytest.approx(
        (-1, -1, -1))
    # ties are averaged: positions shared by many tokens give scipy's rho
    from scipy import stats as sps

    rng = np.random.default_rng(0)
    pos = rng.integers(1, 6, 200).astype(float)
    y = np.round(rng.standard_normal(200) - 0.2 * pos, 1)
    rho = stats.cluster_spearman(pos, y, np.arange(200), 0)[0]
    assert rho == pytest.approx(sps.spearmanr(pos, y).statistic)
    # a resample's weighted mid-ranks are the ranks of the sample with every item copied
    w = rng.integers(0, 4, 200)
    assert stats._weighted_spearman(pos, y, w[None].astype(float))[0] == pytest.approx(
        sps.spearmanr(np.repeat(pos, w), np.repeat(y, w)).statistic)
    # independent variables: the interval covers 0; NaN pairs are dropped
    a, b = rng.standard_normal(600), rng.standard_normal(600)
    r, lo, hi = stats.cluster_spearman(a, b, np.arange(600) // 6, 300, rng=1)
    assert lo < 0 < hi and lo <= r <= hi
    assert stats.cluster_spearman(np.r_[a, np.nan], np.r_[b, 1.0], np.arange(601), 0)[0] == r
    # clusters of identical items: resampling the clusters widens the interval
    base_x, base_y = rng.standard_normal(40), rng.standard_normal(40)
    rep_x, rep_y = np.repeat(base_x, 10), np.repeat(base_y + base_x, 10)
    _, lo_i, hi_i = stats.cluster_spearman(rep_x, rep_y, np.arange(400), 300, rng=2)
    _, lo_c, hi_c = stats.cluster_spearman(rep_x, rep_y, np.repeat(np.arange(40), 10), 300,
                                           rng=2)
    assert hi_c - lo_c > 2 * (hi_i - lo_i)
    assert math.isnan(stats.cluster_spearman(x[:2], x[:2], clusters[:2])[0])
    with pytest.raises(ValueError, match="one entry per item"):
        stats.cluster_spearman(x, x, clusters[:5])


def test_wilson_interval_textbook_value() -> None:
    from lmgeometry.measures.stats import wilson_interval

    lo, hi = wilson_interval(0.5, 100)  # 50 of 100: 0.4038 to 0.5962
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(0.0, 10)  # 0 of 10: 0 to z^2 / (n + z^2) = 0.2775
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0.5, 0))


def test_wilson_interval_is_scipys() -> None:
    """The hand-written formula is scipy's Wilson interval, to rounding (docs/LIBRARIES.md)."""
    from scipy.stats import binomtest

    from lmgeometry.measures.stats import wilson_interval

    for n in (10, 57, 400, 872, 5000):
        for k in range(0, n + 1, max(1, n // 37)):
            mine = wilson_interval(k / n, n)
            theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            assert mine == pytest.approx((theirs.low, theirs.high), abs=1e-12), (k, n)


def test_cohens_h_known_values() -> None:
    from lmgeometry.measures.stats import cohens_h

    assert cohens_h(0.6, 0.5) == pytest.approx(0.2014, abs=1e-4)  # 10 points above 50%
    assert cohens_h(0.5, 0.5) == 0.0 and cohens_h(1.0, 0.0) == pytest.approx(math.pi)
    np.testing.assert_allclose(cohens_h([0.95, 0.5], 0.85), [0.3444, -0.7754], atol=1e-4)
