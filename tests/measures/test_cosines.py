"""Known-answer tests for lmgeometry.measures.cosines: SelfSim, IntraSim, sampled pairs.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from fixtures.references import brute_mean_pairwise, cos

from lmgeometry.measures import cosines, mev, tokens


def test_identical_rows_selfsim_and_mev_are_one():
    v = np.array([0.3, -1.2, 2.0, 0.5])
    X = np.tile(v, (7, 1))
    assert cosines.self_similarity(X) == pytest.approx(1.0, abs=1e-12)
    assert cosines.mean_pairwise_cosine(X) == pytest.approx(1.0, abs=1e-12)
    assert mev.max_explainable_variance(X) == pytest.approx(1.0, abs=1e-12)
    assert cosines.intra_sentence_similarity(X) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(tokens.token_intra_similarity(X), 1.0, atol=1e-12)
    # centred, identical rows have no variance at all: MEV is undefined
    assert math.isnan(mev.max_explainable_variance(X, centered=True))



def test_orthogonal_rows():
    n, d = 5, 9
    X = np.zeros((n, d))
    X[np.arange(n), [0, 2, 4, 6, 8]] = [1.0, 2.0, 0.5, 7.0, 3.0]
    assert cosines.self_similarity(X) == pytest.approx(0.0, abs=1e-15)
    assert cosines.mean_pairwise_cosine(X) == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(tokens.token_intra_similarity(X), 0.0, atol=1e-15)
    # equal norms: cos(e_i, mean of e's) = (1/n) / (sqrt(n)/n) = 1/sqrt(n)
    E = np.eye(n, d)
    assert cosines.intra_sentence_similarity(E) == pytest.approx(1 / math.sqrt(n), abs=1e-12)
    # orthonormal rows: all singular values 1, so MEV = 1/n
    assert mev.max_explainable_variance(E) == pytest.approx(1 / n, abs=1e-12)



def test_selfsim_equals_mean_pairwise_equals_brute_force():
    rng = np.random.default_rng(2)
    for n, d in [(2, 3), (7, 5), (30, 16), (12, 40)]:
        X = rng.standard_normal((n, d)) + rng.standard_normal(d)
        brute = brute_mean_pairwise(X)
        assert cosines.mean_pairwise_cosine(X) == pytest.approx(brute, abs=1e-6)
        assert cosines.self_similarity(X, n_pairs=None) == pytest.approx(brute, abs=1e-6)
        assert cosines.self_similarity(X) == pytest.approx(cosines.mean_pairwise_cosine(X),
                                                           abs=1e-12)



def test_selfsim_with_sentence_ids_excludes_same_sentence_pairs():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((11, 6)) + 1.0
    sid = np.array([0, 0, 1, 2, 2, 2, 3, 4, 4, 5, 6])
    expected = brute_mean_pairwise(X, sentence_ids=sid)
    assert cosines.self_similarity(X, sentence_ids=sid) == pytest.approx(expected, abs=1e-6)
    # the hand case: two identical occurrences in one sentence, one orthogonal in another
    Y = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    assert cosines.self_similarity(Y) == pytest.approx(1 / 3, abs=1e-12)  # pairs: 1, 0, 0
    assert cosines.self_similarity(Y, sentence_ids=[0, 0, 1]) == pytest.approx(0.0, abs=1e-12)



def test_intra_sentence_similarity_matches_definition():
    rng = np.random.default_rng(5)
    S = rng.standard_normal((8, 10)) * rng.uniform(0.1, 50, size=(8, 1))
    mean = S.mean(axis=0)
    expected = np.mean([cos(s, mean) for s in S])
    assert cosines.intra_sentence_similarity(S) == pytest.approx(expected, abs=1e-9)



def test_sample_ordered_pairs_enumerates_when_few():
    i, j = cosines.sample_ordered_pairs(4, 1000)
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == [
        (a, b) for a in range(4) for b in range(4) if a != b
    ]
    i, j = cosines.sample_ordered_pairs(4, 1000, sentence_ids=[0, 0, 1, 1])
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == [
        (0, 2), (0, 3), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 1)
    ]  # fmt: skip



def test_sampled_selfsim_is_a_mean_over_distinct_pairs():
    # 3 rows -> 6 ordered pairs; with n_pairs=2 the estimate must be the mean of two
    # *distinct* ordered pairs. Enumerate every possible subset and check all of them occur.
    X = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.28, 0.96]])
    pairs = [(a, b) for a in range(3) for b in range(3) if a != b]
    possible = {round((cos(X[p[0]], X[p[1]]) + cos(X[q[0]], X[q[1]])) / 2, 9)
                for p, q in itertools.combinations(pairs, 2)}  # fmt: skip
    seen = {round(cosines.self_similarity(X, n_pairs=2, rng=s), 9) for s in range(300)}
    assert seen <= possible
    assert seen == possible  # every subset of two distinct pairs is reachable



def test_sampling_without_replacement_leaves_out_exactly_one_pair():
    # 40 rows, two orthogonal groups of 20: cos 1 within a group, 0 across.
    X = np.zeros((40, 2))
    X[:20, 0] = 1.0
    X[20:, 1] = 1.0
    total = 40 * 39
    exact = 2 * 20 * 19 / total
    for seed in range(5):
        est = cosines.self_similarity(X, n_pairs=total - 1, rng=seed)
        # a mean over all pairs but one differs from the full mean by at most 1 / (total - 1)
        assert abs(est - exact) <= 1 / (total - 1) + 1e-12
    est = cosines.self_similarity(X, n_pairs=1000, rng=0)
    assert abs(est - exact) < 0.05  # hypergeometric sd ~ 0.01
