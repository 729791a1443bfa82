"""Tests for lmgeometry.measures.mean_cosines against brute-force pairwise cosines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures.references import brute_mean_cosine

from lmgeometry.measures import mean_cosines


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_mean_cosine_exact_and_sampled():
    rng = _rng(14)
    X = rng.standard_normal((300, 5)) + 0.8
    exact = brute_mean_cosine(X)
    assert mean_cosines.mean_cosine(X, chunk_rows=32) == pytest.approx(exact, rel=1e-10)
    sampled = mean_cosines.mean_cosine(X, n_pairs=200_000, rng=1)
    assert sampled == pytest.approx(exact, abs=0.01)  # standard error ~ 0.4 / sqrt(2e5)
    with_zeros = np.vstack([X, np.zeros((3, 5))])
    assert mean_cosines.mean_cosine(with_zeros) == pytest.approx(exact, rel=1e-10)


def test_rare_token_cosines_known_bins():
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    W = np.vstack([np.tile(e2, (4, 1)), np.tile((e1 + e2) * 2.0, (4, 1)), np.tile(3 * e1, (4, 1))])
    W = np.vstack([W, np.ones((1, 3))])  # a token left out by a negative rank
    ranks = np.r_[np.arange(12), -1]
    table = mean_cosines.rare_token_cosines(W, ranks, n_bins=3, n_rare=4)
    np.testing.assert_allclose(table["mean_cosine"], [0.0, 1 / math.sqrt(2), 1.0], atol=1e-12)
    assert table["n_tokens"].tolist() == [4, 4, 4]
    assert table["rank_start"].tolist() == [0, 4, 8]
    assert table["rank_end"].tolist() == [3, 7, 11]


def test_rare_token_cosines_matches_brute_force():
    rng = _rng(17)
    W = rng.standard_normal((60, 5)) + 0.5
    ranks = rng.permutation(60)
    rare = np.array([3, 10, 11, 40])
    table = mean_cosines.rare_token_cosines(W, ranks, n_bins=4, rare=rare)
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    order = np.argsort(ranks)
    for row, ids in zip(table.itertuples(), np.array_split(order, 4), strict=True):
        values = [Wn[r] @ Wn[b] for r in rare for b in ids if r != b]
        assert row.mean_cosine == pytest.approx(np.mean(values), rel=1e-10)


def test_rare_token_cosines_bin_size():
    W = _rng(5).standard_normal((2500, 4))
    table = mean_cosines.rare_token_cosines(W, np.arange(2500), rare=np.arange(10), bin_size=1000)
    assert table["rank_start"].tolist() == [0, 1000, 2000]
    assert table["n_tokens"].tolist() == [1000, 1000, 500]


def test_unit_row_sums_and_cosines_match_brute_force():
    rng = _rng(23)
    W = rng.standard_normal((500, 5)) + [1.0, 0, 0, 0, 0]
    W[7] = 0.0
    groups = rng.integers(-1, 3, size=500)
    sums, counts = mean_cosines.unit_row_sums(W, groups, 3, n_boot=4, rng=2, chunk_rows=64)
    U = W / np.where(np.linalg.norm(W, axis=1) > 0, np.linalg.norm(W, axis=1), 1)[:, None]
    ok = (groups >= 0) & (np.linalg.norm(W, axis=1) > 0)
    for g in range(3):
        assert np.allclose(sums[0, g], U[ok & (groups == g)].sum(0), atol=1e-4)
        assert counts[0, g] == (ok & (groups == g)).sum()
    assert (counts[1:] != counts[0]).any()  # replicates reweight the rows
    total = mean_cosines.mean_cosine_of_sums(sums[0].sum(0), counts[0].sum())
    assert total == pytest.approx(brute_mean_cosine(W[ok]), abs=1e-6)
    cross = mean_cosines.cross_cosines(sums, counts, reference=2)[0]
    brute = (U[ok & (groups == 0)] @ U[ok & (groups == 2)].T).mean()
    assert cross[0] == pytest.approx(brute, abs=1e-6)
    centred, _ = mean_cosines.unit_row_sums(W, np.zeros(500, int), 1, shift=W.mean(0))
    Wc = W - W.mean(0)
    assert np.allclose(centred[0, 0], (Wc / np.linalg.norm(Wc, axis=1)[:, None]).sum(0),
                       atol=1e-4)


def test_rarity_alignment_tells_common_enemies_from_a_frequency_direction():
    from lmgeometry.measures.mean_cosines import rarity_alignment

    rng = np.random.default_rng(0)
    n, d = 400, 16
    counts = rng.integers(0, 1000, size=n)
    rarity = 1.0 - np.log1p(counts) / np.log1p(counts.max())  # 1: the rarest
    common, aside = np.eye(d)[0], np.eye(d)[1]
    sign = np.where(np.arange(n) % 2, 1.0, -1.0)[:, None]  # aside cancels in the mean
    noise = rng.normal(size=(n, d)) * 0.01

    def rows(spread):  # a row's angle to the common direction grows with spread
        return common + sign * (2 * spread)[:, None] * aside + noise

    enemies = rows(1 - rarity)  # the rarest rows the closest to the common direction
    frequency = rows(rarity)
    assert rarity_alignment(enemies, counts)[0] < -0.8
    assert rarity_alignment(frequency, counts)[0] > 0.8
    assert abs(rarity_alignment(rng.normal(size=(n, d)), counts)[0]) < 0.15  # no direction
    # unit rows and ranks: blind to row norms, rotations and a monotone change of the counts
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    scaled = enemies * rng.uniform(0.5, 5, size=(n, 1))
    base, reps = rarity_alignment(enemies, counts, n_boot=50, rng=1)
    assert rarity_alignment(scaled @ Q, counts ** 2)[0] == pytest.approx(base)
    assert reps.shape == (50,) and np.quantile(reps, 0.025) <= base <= np.quantile(reps, 0.975)
    kept = rarity_alignment(enemies, counts, rows=counts > 10)[0]
    assert kept < -0.8
    with pytest.raises(ValueError, match="one count per row"):
        rarity_alignment(enemies, counts[:10])
