"""Labels permuted within groups (lmgeometry.measures.permutation): the null of a statistic
that reads labels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmgeometry.measures.permutation import layer_order_null, permute_within
from lmgeometry.measures.probes import ThresholdClassifier, linear_probe, sentence_split
from lmgeometry.measures.stats import GroupBootstrap, wilson_interval


def test_labels_move_only_within_their_group_and_keep_its_counts():
    rng = np.random.default_rng(0)
    labels = rng.choice(["a", "b", "c"], size=400)
    groups = rng.integers(0, 5, size=400)
    out = permute_within(labels, groups, seed=3)
    assert out.dtype == labels.dtype and len(out) == len(labels)
    for g in range(5):
        assert sorted(out[groups == g]) == sorted(labels[groups == g])
    assert (out != labels).mean() > 0.4  # shuffled, not left in place
    # a group holding one label only keeps it everywhere
    assert permute_within([1, 1, 2, 2, 2], groups=[0, 0, 1, 1, 1], seed=9).tolist() == \
        [1, 1, 2, 2, 2]
    assert permute_within(np.array([], dtype=int)).tolist() == []


def test_a_fixed_seed_gives_the_same_permutation_and_another_seed_another():
    labels = np.arange(50) % 7
    first = permute_within(labels, seed=0)
    assert np.array_equal(first, permute_within(labels, seed=0))
    assert not np.array_equal(first, permute_within(labels, seed=1))
    assert not np.array_equal(permute_within(labels, seed=(0, 1)), permute_within(labels,
                                                                                 seed=(0, 2)))
    # not the first draw of a generator seeded with the same number
    assert not np.array_equal(first, np.random.default_rng(0).permutation(labels))


def test_every_arrangement_is_equally_likely():
    # over 4,000 seeds, position 0 receives each of four labels a quarter of the time
    got = np.array([permute_within([0, 1, 2, 3], seed=s)[0] for s in range(4000)])
    assert np.allclose(np.bincount(got, minlength=4) / 4000, 0.25, atol=0.03)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="one group a row"):
        permute_within([0, 1, 2], groups=[0, 1])
    with pytest.raises(ValueError, match="1-D"):
        permute_within(np.zeros((2, 2)))


def _planted(n: int = 1200, seed: int = 0):
    """Two far-apart clouds, 70% of the rows in the first: the labels are perfectly separable
    (by a probe on every dimension, or a threshold on dimension 0); sentences of 6 rows."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    X = rng.normal(size=(n, 5))
    X[:, 0] += 12 * y
    return X, y, np.arange(n) // 6


def test_a_separable_set_scores_high_and_its_permuted_null_sits_at_the_majority_rate():
    X, y, sentence = _planted()
    train, test = sentence_split(sentence, seed=0)
    boot = GroupBootstrap(sentence, 500, 0)
    real = linear_probe(X, y, sentence, split=(train, test))
    assert real.accuracy == 1.0
    side = np.isin(np.arange(len(y)), test)
    permuted = permute_within(y, side, seed=0)
    null = linear_probe(X, permuted, sentence, split=(train, test))
    # within-split permutation keeps each side's balance: the majority baseline is unchanged
    assert null.majority_baseline == real.majority_baseline
    value, replicates = boot.ratio(null.correct, rows=test)
    low, high = np.percentile(replicates, [2.5, 97.5])
    assert low <= real.majority_baseline <= high
    assert abs(value - real.majority_baseline) < 0.06 and high < 0.9


def test_a_threshold_on_permuted_labels_falls_to_the_majority_rate():
    X, y, _ = _planted(seed=1)
    fit, test = np.arange(800), np.arange(800, 1200)
    side = np.arange(len(y)) >= 800
    majority = max(y[test].mean(), 1 - y[test].mean())
    cut = ThresholdClassifier().fit(X[fit, 0], y[fit])
    assert cut.score(X[test, 0], y[test]) == 1.0
    permuted = permute_within(y, side, seed=0)
    null = ThresholdClassifier().fit(X[fit, 0], permuted[fit]).score(X[test, 0], permuted[test])
    low, high = wilson_interval(null, len(test))
    assert low <= majority <= high


def _rho(values: np.ndarray):
    """Spearman rho of ``values`` in a given order with the position (no ties)."""
    n = len(values)

    def statistic(order: np.ndarray) -> float:
        ranks = np.argsort(np.argsort(values[order]))
        return 1 - 6 * float(((ranks - np.arange(n)) ** 2).sum()) / (n * (n * n - 1))

    return statistic


def test_layer_order_null_of_a_trend_is_its_exact_permutation_distribution():
    """Over all 5! orders Spearman's rho takes each value as often as its negative: median
    0, and the 2.5% and 97.5% quantiles of the exact distribution (rho = -0.9 and 0.9 are
    each reached by 4 of 120 orders, rho = -1 and 1 by one)."""
    statistic = _rho(np.array([5.0, 4.0, 3.0, 2.0, 1.0]))
    assert statistic(np.arange(5)) == -1.0  # the observed order: a perfect fall
    median, low, high = layer_order_null(statistic, 5)
    assert median == 0.0 and low == pytest.approx(-0.9) and high == pytest.approx(0.9)
    # a statistic that ignores the order is its own null
    assert layer_order_null(lambda order: 0.3, 6) == (0.3, 0.3, 0.3)


def test_layer_order_null_samples_seeded_orders_beyond_its_budget():
    values = np.arange(12.0)
    statistic = _rho(values)
    first = layer_order_null(statistic, 12, n_orders=500, seed=3)
    assert first == layer_order_null(statistic, 12, n_orders=500, seed=3)  # seeded
    assert first != layer_order_null(statistic, 12, n_orders=500, seed=4)
    median, low, high = first
    # rho over random orders of 12: about N(0, 1/11), so its 95% range about +-0.59
    assert abs(median) < 0.1 and -0.75 < low < -0.45 and 0.45 < high < 0.75
    seen = []
    layer_order_null(lambda order: seen.append(order.copy()) or 0.0, 12, n_orders=50)
    assert len(seen) == 50 and all(sorted(o) == list(range(12)) for o in seen)
    # NaN values (a degenerate order) are left out; none left gives NaN
    assert all(math.isnan(v) for v in layer_order_null(lambda order: math.nan, 3))


@pytest.mark.parametrize(("n_layers", "level"), [(1, 0.95), (4, 1.0), (4, 0.0)])
def test_layer_order_null_refuses_what_has_no_order(n_layers, level):
    with pytest.raises(ValueError, match="layer|level"):
        layer_order_null(lambda order: 0.0, n_layers, level=level)
