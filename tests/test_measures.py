"""Known-answer tests for lmgeometry.measures.contextual (Ethayarajh 2019; seed 000).

Every expected value is derived by hand or by a brute-force loop written here straight from the
definition, never from the function under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA, TruncatedSVD

from lmgeometry.measures import contextual as M
from lmgeometry.measures import similarity, stats

# ---------------------------------------------------------------------------------------------
# brute-force references, straight from the definitions
# ---------------------------------------------------------------------------------------------


def cos(a: np.ndarray, b: np.ndarray) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def brute_mean_pairwise(X: np.ndarray, sentence_ids=None) -> float:
    vals = []
    for i in range(len(X)):
        for j in range(len(X)):
            if i == j or (sentence_ids is not None and sentence_ids[i] == sentence_ids[j]):
                continue
            vals.append(cos(X[i], X[j]))
    return float(np.mean(vals))


def brute_token_intra(S: np.ndarray) -> np.ndarray:
    n = len(S)
    return np.array([np.mean([cos(S[i], S[j]) for j in range(n) if j != i]) for i in range(n)])


def brute_knn(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = len(X)
    idx = np.zeros((n, k), dtype=np.int64)
    val = np.zeros((n, k))
    for i in range(n):
        cands = sorted((-cos(X[i], X[j]), j) for j in range(n) if j != i)[:k]
        idx[i] = [j for _, j in cands]
        val[i] = [-c for c, _ in cands]
    return idx, val


def svd_share(X: np.ndarray, centered: bool) -> float:
    X = np.asarray(X, dtype=np.float64)
    if centered:
        X = X - X.mean(axis=0)
    s = np.linalg.svd(X, compute_uv=False)
    return float(s[0] ** 2 / np.sum(s**2))


def equiangular(m: int, c: float, d: int) -> np.ndarray:
    """m unit vectors with pairwise cosine exactly c: sqrt(c) e0 + sqrt(1 - c) e_{s+1}."""
    V = np.zeros((m, d))
    V[:, 0] = math.sqrt(c)
    V[np.arange(m), np.arange(1, m + 1)] = math.sqrt(1 - c)
    return V


def corpus(
    sentences: list[list[str]], vectors: np.ndarray, punct: set[str] = frozenset()
) -> pd.DataFrame:
    rows = []
    for s, toks in enumerate(sentences):
        for i, t in enumerate(toks):
            rows.append(
                dict(
                    sentence_id=s,
                    word_index=i,
                    text=t,
                    upos="PUNCT" if t in punct else ("DET" if t.lower() == "the" else "NOUN"),
                    is_stop=t.lower() == "the",
                    is_punct=t in punct,
                )
            )
    words = pd.DataFrame(rows)
    assert len(words) == len(vectors)
    return words


# ---------------------------------------------------------------------------------------------
# single-matrix measures
# ---------------------------------------------------------------------------------------------


def test_identical_rows_selfsim_and_mev_are_one():
    v = np.array([0.3, -1.2, 2.0, 0.5])
    X = np.tile(v, (7, 1))
    assert M.self_similarity(X) == pytest.approx(1.0, abs=1e-12)
    assert M.mean_pairwise_cosine(X) == pytest.approx(1.0, abs=1e-12)
    assert M.max_explainable_variance(X) == pytest.approx(1.0, abs=1e-12)
    assert M.intra_sentence_similarity(X) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(M.token_intra_similarity(X), 1.0, atol=1e-12)
    # centred, identical rows have no variance at all: MEV is undefined
    assert math.isnan(M.max_explainable_variance(X, centered=True))


def test_rank_one_matrix_has_mev_one():
    rng = np.random.default_rng(1)
    v = rng.standard_normal(12)
    a = np.array([3.0, -1.0, 0.5, 2.0, -4.0, 1.5])  # signs and sizes vary
    X = a[:, None] * v[None, :]
    assert M.max_explainable_variance(X) == pytest.approx(1.0, abs=1e-12)
    assert M.max_explainable_variance(X, centered=True) == pytest.approx(1.0, abs=1e-12)


def test_orthogonal_rows():
    n, d = 5, 9
    X = np.zeros((n, d))
    X[np.arange(n), [0, 2, 4, 6, 8]] = [1.0, 2.0, 0.5, 7.0, 3.0]
    assert M.self_similarity(X) == pytest.approx(0.0, abs=1e-15)
    assert M.mean_pairwise_cosine(X) == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(M.token_intra_similarity(X), 0.0, atol=1e-15)
    # equal norms: cos(e_i, mean of e's) = (1/n) / (sqrt(n)/n) = 1/sqrt(n)
    E = np.eye(n, d)
    assert M.intra_sentence_similarity(E) == pytest.approx(1 / math.sqrt(n), abs=1e-12)
    # orthonormal rows: all singular values 1, so MEV = 1/n
    assert M.max_explainable_variance(E) == pytest.approx(1 / n, abs=1e-12)


def test_selfsim_equals_mean_pairwise_equals_brute_force():
    rng = np.random.default_rng(2)
    for n, d in [(2, 3), (7, 5), (30, 16), (12, 40)]:
        X = rng.standard_normal((n, d)) + rng.standard_normal(d)
        brute = brute_mean_pairwise(X)
        assert M.mean_pairwise_cosine(X) == pytest.approx(brute, abs=1e-6)
        assert M.self_similarity(X, n_pairs=None) == pytest.approx(brute, abs=1e-6)
        assert M.self_similarity(X) == pytest.approx(M.mean_pairwise_cosine(X), abs=1e-12)


def test_selfsim_with_sentence_ids_excludes_same_sentence_pairs():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((11, 6)) + 1.0
    sid = np.array([0, 0, 1, 2, 2, 2, 3, 4, 4, 5, 6])
    expected = brute_mean_pairwise(X, sentence_ids=sid)
    assert M.self_similarity(X, sentence_ids=sid) == pytest.approx(expected, abs=1e-6)
    # the hand case: two identical occurrences in one sentence, one orthogonal in another
    Y = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    assert M.self_similarity(Y) == pytest.approx(1 / 3, abs=1e-12)  # pairs: 1, 0, 0
    assert M.self_similarity(Y, sentence_ids=[0, 0, 1]) == pytest.approx(0.0, abs=1e-12)


def test_token_intra_similarity_matches_brute_force():
    rng = np.random.default_rng(4)
    for n in (2, 3, 9, 25):
        S = rng.standard_normal((n, 13)) + 0.5
        np.testing.assert_allclose(M.token_intra_similarity(S), brute_token_intra(S), atol=1e-6)


def test_intra_sentence_similarity_matches_definition():
    rng = np.random.default_rng(5)
    S = rng.standard_normal((8, 10)) * rng.uniform(0.1, 50, size=(8, 1))
    mean = S.mean(axis=0)
    expected = np.mean([cos(s, mean) for s in S])
    assert M.intra_sentence_similarity(S) == pytest.approx(expected, abs=1e-9)


def test_max_explainable_variance_matches_svd_and_sklearn_pca():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 12)) @ rng.standard_normal((12, 12)) + 3.0
    assert M.max_explainable_variance(X) == pytest.approx(svd_share(X, False), abs=1e-10)
    assert M.max_explainable_variance(X, centered=True) == pytest.approx(
        svd_share(X, True), abs=1e-10
    )
    pca = PCA(n_components=1, svd_solver="full").fit(X)
    assert M.max_explainable_variance(X, centered=True) == pytest.approx(
        pca.explained_variance_ratio_[0], abs=1e-10
    )
    # the Lanczos path (more than 64 rows and columns) against a dense SVD
    Y = rng.standard_normal((300, 80)) + rng.standard_normal(80)
    for centered in (False, True):
        assert M.max_explainable_variance(Y, centered) == pytest.approx(
            svd_share(Y, centered), abs=1e-8
        )


def test_truncated_svd_ratio_matches_sklearn():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 15)) * np.linspace(0.2, 3, 15) + 2.0
    svd = TruncatedSVD(n_components=2, algorithm="arpack").fit(X)
    assert M.truncated_svd_variance_ratio(X) == pytest.approx(
        svd.explained_variance_ratio_[0], abs=1e-8
    )


def test_mev_estimators_on_equiangular_pool():
    # m unit vectors with pairwise cosine c. Gram = (1-c) I + c 11^T:
    #   uncentred: sigma_1^2 / sum = (1 + (m-1)c) / m
    #   centred: a regular simplex, m-1 equal singular values -> 1/(m-1)
    #   TruncatedSVD: v_1 along the mean, every projection equal -> no variance -> 0
    m, c = 6, 0.3
    V = equiangular(m, c, 10)
    sid = np.arange(m)
    assert M.mev_baseline(V, sid, n=m, method="uncentered") == pytest.approx(
        (1 + (m - 1) * c) / m, abs=1e-12
    )
    assert M.mev_baseline(V, sid, n=m, method="centered") == pytest.approx(1 / (m - 1), abs=1e-12)
    assert M.mev_baseline(V, sid, n=m, method="truncated_svd") == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# sampling as in the authors' code
# ---------------------------------------------------------------------------------------------


def test_sample_ordered_pairs_enumerates_when_few():
    i, j = M.sample_ordered_pairs(4, 1000)
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == [
        (a, b) for a in range(4) for b in range(4) if a != b
    ]
    i, j = M.sample_ordered_pairs(4, 1000, sentence_ids=[0, 0, 1, 1])
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
    seen = {round(M.self_similarity(X, n_pairs=2, rng=s), 9) for s in range(300)}
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
        est = M.self_similarity(X, n_pairs=total - 1, rng=seed)
        # a mean over all pairs but one differs from the full mean by at most 1 / (total - 1)
        assert abs(est - exact) <= 1 / (total - 1) + 1e-12
    est = M.self_similarity(X, n_pairs=1000, rng=0)
    assert abs(est - exact) < 0.05  # hypergeometric sd ~ 0.01


def test_baseline_with_replacement_pairs_words_with_themselves():
    # m sentences, one orthonormal word each: distinct pairs have cosine 0, self-pairs 1.
    m = 4
    V = np.eye(m, 6)
    sid = np.arange(m)
    with_repl = M.anisotropy_baseline(
        V, sid, n=m, rng=0, replace=True, scheme="sentence", n_pairs=200_000
    )
    assert with_repl == pytest.approx(1 / m, abs=0.01)  # P(same pool member) = 1/m
    assert M.anisotropy_baseline(V, sid, n=m, rng=0, replace=False) == pytest.approx(0.0)
    assert M.anisotropy_baseline(V, sid, n=None) == pytest.approx(0.0, abs=1e-15)
    # a pool of one word: every pair drawn with replacement is that word with itself
    assert M.anisotropy_baseline(V, sid, n=1, rng=3, replace=True, scheme="sentence") == 1.0
    assert math.isnan(M.anisotropy_baseline(V, sid, n=1, rng=3, replace=False))


def test_baseline_exact_excludes_same_sentence_pairs():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((15, 4)) + 0.7
    sid = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4, 5, 5, 6, 6])
    expected = brute_mean_pairwise(X, sentence_ids=sid)
    assert M.anisotropy_baseline(X, sid, n=None) == pytest.approx(expected, abs=1e-6)
    # a pool as large as the corpus, without replacement, is the same population
    assert M.anisotropy_baseline(X, sid, n=1000, rng=0) == pytest.approx(expected, abs=1e-6)


def test_isotropic_gaussian_baseline_is_near_zero():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((3000, 64))
    sid = np.repeat(np.arange(300), 10)
    assert abs(M.anisotropy_baseline(X, sid, n=None)) < 0.005
    for scheme in ("sentence", "occurrence"):
        b = M.anisotropy_baseline(X, sid, n=1000, rng=1, scheme=scheme, replace=False)
        assert abs(b) < 0.01
    b = M.anisotropy_baseline(X, sid, n=1000, rng=1, scheme="sentence", replace=True)
    assert abs(b) < 0.03  # 1,000 pairs, sd ~ 0.125 / sqrt(1000), plus ~1/1000 from self-pairs


# ---------------------------------------------------------------------------------------------
# invariances and numerical safety
# ---------------------------------------------------------------------------------------------


def test_invariance_to_positive_row_scaling():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((25, 8)) + 1.0
    scales = rng.uniform(1e-3, 1e3, size=(25, 1))
    sid = np.repeat(np.arange(5), 5)
    Y = X * scales
    assert M.self_similarity(Y) == pytest.approx(M.self_similarity(X), abs=1e-12)
    np.testing.assert_allclose(M.token_intra_similarity(Y), M.token_intra_similarity(X), atol=1e-12)
    assert M.anisotropy_baseline(Y, sid, n=None) == pytest.approx(
        M.anisotropy_baseline(X, sid, n=None), abs=1e-12
    )
    assert M.anisotropy_baseline(Y, sid, n=10, rng=4, scheme="sentence", replace=True) == (
        pytest.approx(
            M.anisotropy_baseline(X, sid, n=10, rng=4, scheme="sentence", replace=True), abs=1e-12
        )
    )
    ix, _ = M.nearest_neighbours(X, 3, dtype=np.float64)
    iy, _ = M.nearest_neighbours(Y, 3, dtype=np.float64)
    np.testing.assert_array_equal(ix, iy)
    # MEV and IntraSim use raw vectors: invariant to one global positive scale only
    assert M.max_explainable_variance(7.5 * X, True) == pytest.approx(
        M.max_explainable_variance(X, True), abs=1e-12
    )
    assert M.intra_sentence_similarity(7.5 * X) == pytest.approx(
        M.intra_sentence_similarity(X), abs=1e-12
    )


def test_numerically_safe_with_large_norms():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((40, 32))
    for big, dtype in [(1e4, np.float32), (1e4, np.float16), (1e200, np.float64)]:
        Xs = X / np.linalg.norm(X, axis=1, keepdims=True)  # unit rows
        Y = (Xs * big).astype(dtype)
        ref = Y.astype(np.float64) / big  # the same directions, at norm ~1
        assert M.mean_pairwise_cosine(Y) == pytest.approx(brute_mean_pairwise(ref), abs=1e-6)
        np.testing.assert_allclose(M.token_intra_similarity(Y), brute_token_intra(ref), atol=1e-6)
        assert M.intra_sentence_similarity(Y) == pytest.approx(
            M.intra_sentence_similarity(ref), abs=1e-9
        )
        assert M.max_explainable_variance(Y, True) == pytest.approx(svd_share(ref, True), abs=1e-9)
        U, norms = similarity.unit_rows(Y)
        np.testing.assert_allclose(norms / big, np.linalg.norm(ref, axis=1), rtol=1e-9)
        np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-12)


def test_zero_rows_are_left_out():
    X = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    # non-zero rows 0, 2, 3: cosines 1/sqrt2, 0, 1/sqrt2
    assert M.mean_pairwise_cosine(X) == pytest.approx(math.sqrt(2) / 3, abs=1e-12)
    t = M.token_intra_similarity(X)
    assert math.isnan(t[1])
    assert t[0] == pytest.approx((1 / math.sqrt(2) + 0) / 2, abs=1e-12)
    assert math.isnan(M.mean_pairwise_cosine(np.zeros((3, 2))))
    with pytest.raises(ValueError):
        similarity.unit_rows(np.array([[np.nan, 1.0]]))


# ---------------------------------------------------------------------------------------------
# nearest neighbours
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block_size", [1, 7, 64, 150, 1000])
def test_blocked_knn_equals_brute_force(block_size):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((150, 12)) + 0.3
    k = 10
    idx, val = M.nearest_neighbours(X, k, block_size=block_size)
    bidx, bval = brute_knn(X, k)
    np.testing.assert_array_equal(idx, bidx)
    np.testing.assert_allclose(val, bval, atol=1e-5)


def test_knn_query_subset_and_zero_rows():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((60, 5))
    X[17] = 0.0
    q = np.array([3, 17, 40])
    idx, val = M.nearest_neighbours(X, 4, block_size=2, queries=q, dtype=np.float64)
    keep = np.flatnonzero(np.any(X != 0, axis=1))
    bidx, bval = brute_knn(X[keep], 4)
    for r, row in enumerate(q):
        if row == 17:
            assert (idx[r] == -1).all() and np.isnan(val[r]).all()
            continue
        local = int(np.flatnonzero(keep == row)[0])
        np.testing.assert_array_equal(idx[r], keep[bidx[local]])
        np.testing.assert_allclose(val[r], bval[local], atol=1e-12)
    assert 17 not in idx


def test_neighbour_measures_same_word_share():
    # three words, each 12 occurrences tightly clustered around its own direction
    rng = np.random.default_rng(14)
    centers = np.eye(3, 8) * 10
    X = np.repeat(centers, 12, axis=0) + 0.01 * rng.standard_normal((36, 8))
    sentences = [[w] for w in ["cat"] * 12 + ["dog"] * 12 + ["The"] * 12]
    words = corpus(sentences, X)
    table = M.neighbour_measures(X, words, k=10, block_size=5)
    np.testing.assert_allclose(table["same_word_share"], 1.0)
    assert (table["mean_neighbour_cosine"] > 0.99).all()
    # with k=15 each token has 11 same-word neighbours and 4 others
    table = M.neighbour_measures(X, words, k=15, queries=5, seed=0)
    assert len(table) == 5
    np.testing.assert_allclose(table["same_word_share"], 11 / 15)


# ---------------------------------------------------------------------------------------------
# bootstrap
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# corpus-level engine and presets
# ---------------------------------------------------------------------------------------------


def equiangular_corpus(c: float = 0.3):
    # every word of sentence s is the same unit vector v_s, pairwise cos(v_s, v_t) = c
    sentences = [
        ["w", "W", "x"],  # "W" is "w" lower-cased: two occurrences in one sentence
        ["w", "x", "y"],
        ["w", "x", "y"],
        ["w", "x", "y", "y"],
        ["w", "x", "y", ","],
        ["x"],
    ]
    V = equiangular(len(sentences), c, 10)
    X = np.concatenate([np.tile(V[s], (len(t), 1)) for s, t in enumerate(sentences)])
    return X, corpus(sentences, X, punct={","})


def test_ethayarajh2019_preset_reproduces_hand_computed_example():
    c = 0.3
    X, words = equiangular_corpus(c)
    r = M.context_measures(
        X, words, "ethayarajh2019", seed=0, min_contexts=5, n_intra_sentences=None, n_boot=50
    )
    # eligible by occurrences: w (6 occ, 5 sentences), x (6, 6), y (5, 4); "," is punctuation
    assert r["n_words"] == 3
    # all ordered occurrence pairs (<= 1000), same-sentence pairs (cosine 1) included:
    w = (2 * 1 + 28 * c) / 30  # occurrences in sentences 0,0,1,2,3,4: 30 pairs, 2 same-sentence
    x = c  # one occurrence in each of 6 sentences
    y = (2 * 1 + 18 * c) / 20  # sentences 1,2,3,3,4: 20 pairs, 2 same-sentence
    assert r["selfsim"] == pytest.approx(np.mean(np.round([w, x, y], 3)), abs=1e-12)
    # baseline: pool = one word from each of the 6 sentences (all words of a sentence are the
    # same vector), then 6 pairs drawn with replacement: cos 1 for self-pairs, c otherwise
    possible = [round(c + (1 - c) * k / 6, 3) for k in range(7)]
    assert r["baseline_cosine"] in possible
    assert r["selfsim_adj"] == pytest.approx(r["selfsim"] - r["baseline_cosine"], abs=1e-12)
    assert r["intrasim_baseline"] == r["baseline_cosine"]
    # MEV baseline: TruncatedSVD ratio of the equiangular pool is 0 (see test above)
    assert r["mev_baseline"] == 0.0
    # word MEV: centred PCA of each word's occurrence matrix, rounded to 3 decimals
    V = equiangular(6, c, 10)
    occ = {"w": [0, 0, 1, 2, 3, 4], "x": [0, 1, 2, 3, 4, 5], "y": [1, 2, 3, 3, 4]}
    mevs = [round(svd_share(V[rows], centered=True), 3) for rows in occ.values()]
    assert r["mev"] == pytest.approx(np.mean(mevs), abs=1e-12)
    assert r["mev_adj"] == pytest.approx(r["mev"], abs=1e-12)
    # IntraSim: every word of a sentence points the same way; sentence 5 has one word
    assert r["n_sentences"] == 5
    assert r["intrasim"] == pytest.approx(1.0, abs=1e-12)


def test_corrected_preset_on_the_same_example():
    c = 0.3
    X, words = equiangular_corpus(c)
    r = M.context_measures(X, words, "corrected", seed=0, min_contexts=5, n_boot=50)
    # eligible by distinct sentences: w (5) and x (6); y has only 4
    assert r["n_words"] == 2
    # only pairs from different sentences: every one has cosine c
    assert r["selfsim"] == pytest.approx(c, abs=1e-12)
    # exact baseline over all cross-sentence pairs: also c
    assert r["baseline_cosine"] == pytest.approx(c, abs=1e-12)
    assert r["selfsim_adj"] == pytest.approx(0.0, abs=1e-12)
    table = M.word_measures(X, words, "corrected", min_contexts=5)
    assert sorted(table["word"]) == ["w", "x"]
    assert set(table.columns) >= {"selfsim", "mev", "mev_baseline", "n_sentences"}


def test_corrected_preset_finds_no_context_effect_in_random_vectors():
    # isotropic vectors with random word labels: no word or sentence structure at all
    rng = np.random.default_rng(16)
    n_sent, length, d = 400, 12, 32
    X = rng.standard_normal((n_sent * length, d))
    vocab = [f"v{i}" for i in range(60)]
    sentences = [[vocab[i] for i in rng.integers(0, 60, length)] for _ in range(n_sent)]
    words = corpus(sentences, X)
    r = M.context_measures(X, words, "corrected", seed=1, n_intra_sentences=None, n_boot=300)
    assert abs(r["baseline_cosine"]) < 0.01
    assert abs(r["selfsim_adj"]) < 0.01
    # a cosine to a mean of 12 random vectors is ~ 1/sqrt(12), not 0: the pairwise baseline
    # leaves that in, the length-matched baseline removes it
    assert r["intrasim"] == pytest.approx(1 / math.sqrt(length), abs=0.05)
    assert r["intrasim_adj_lo"] < 0 < r["intrasim_adj_hi"]
    assert abs(r["mev_adj"]) < 0.02
    old = M.context_measures(X, words, "ethayarajh2019", seed=1, n_intra_sentences=None)
    assert old["intrasim_adj"] > 0.2


def test_presets_are_frozen_and_named():
    assert set(M.PRESETS) == {"ethayarajh2019", "corrected"}
    assert M.get_preset("corrected") is M.PRESETS["corrected"]
    with pytest.raises(AttributeError):
        M.PRESETS["corrected"].baseline_n = 5  # type: ignore[misc]
    with pytest.raises(ValueError):
        M.get_preset("nope")


def test_lowest_self_similarity_orders_words():
    rng = np.random.default_rng(17)
    d = 16
    base = {w: rng.standard_normal(d) * 5 for w in ["the", "cat", "dog"]}
    noise = {"the": 5.0, "cat": 0.5, "dog": 1.5}
    sentences, rows = [], []
    for _ in range(12):
        toks = ["the", "cat", "dog"]
        sentences.append(toks)
        rows += [base[t] + noise[t] * rng.standard_normal(d) for t in toks]
    X = np.array(rows)
    words = corpus(sentences, X)
    low = M.lowest_self_similarity(X, words, n=2)
    assert list(low["word"]) == ["the", "dog"]
    assert (np.diff(low["selfsim"]) >= 0).all()


# ---------------------------------------------------------------------------------------------
# token-level engine
# ---------------------------------------------------------------------------------------------


def test_token_measures_match_brute_force():
    rng = np.random.default_rng(18)
    sentences = [["The", "cat", "the"], ["cat", "sat"], ["the", "dog", "sat", "."], ["dog"]]
    n = sum(len(s) for s in sentences)
    X = rng.standard_normal((n, 6)) + 0.4
    words = corpus(sentences, X, punct={"."})
    table = M.token_measures(X, words, min_contexts=2)
    sid = words["sentence_id"].to_numpy()
    key = words["text"].str.lower().to_numpy()
    for i in range(n):
        same_sent = [j for j in range(n) if sid[j] == sid[i] and j != i]
        if same_sent:
            expected = np.mean([cos(X[i], X[j]) for j in same_sent])
            assert table["token_intra"][i] == pytest.approx(expected, abs=1e-9)
        else:
            assert math.isnan(table["token_intra"][i])
        others = [j for j in range(n) if key[j] == key[i] and sid[j] != sid[i]]
        if others:
            expected = np.mean([cos(X[i], X[j]) for j in others])
            assert table["token_self"][i] == pytest.approx(expected, abs=1e-9)
        else:
            assert math.isnan(table["token_self"][i])
    by_upos = M.summarise_tokens(table, "token_intra", "upos")
    assert by_upos.loc["DET", "n"] == 3
    det = table.loc[table["upos"] == "DET", "token_intra"]
    assert by_upos.loc["DET", "mean"] == pytest.approx(det.mean())
    by_pos = M.summarise_tokens(table, "token_intra", "word_index")
    assert list(by_pos.index) == [0, 1, 2, 3]


# ---------------------------------------------------------------------------------------------
# static embeddings
# ---------------------------------------------------------------------------------------------


def test_static_embeddings_pc1_orientation_and_centring():
    rng = np.random.default_rng(19)
    d = 20
    mean = np.zeros(d)
    mean[0] = 10.0
    direction = np.zeros(d)
    direction[1] = 1.0
    # 8 occurrences: mean + large spread along `direction` + small noise
    a = np.array([-3.0, -2, -1, 0, 1, 2, 3, 4])
    X = mean + a[:, None] * direction + 0.01 * rng.standard_normal((8, d))
    words = corpus([["tok"] for _ in range(8)], X)
    centered = M.static_embeddings(X, words, min_contexts=5)["tok"]
    raw = M.static_embeddings(X, words, min_contexts=5, centered=False)["tok"]
    assert abs(centered @ direction) > 0.999  # centred PC1: the direction of variation
    assert raw @ mean / np.linalg.norm(mean) > 0.95  # uncentred PC1: near the mean direction
    assert raw @ X.mean(axis=0) > 0 and centered @ X.mean(axis=0) >= 0
    pca = PCA(n_components=1, svd_solver="full").fit(X).components_[0]
    assert abs(centered @ pca) == pytest.approx(1.0, abs=1e-9)  # same axis as the authors'
    # identical occurrences: no variance, the static embedding is the (unit) vector itself
    Y = np.tile(mean + direction, (6, 1))
    same = M.static_embeddings(Y, corpus([["a"]] * 6, Y), min_contexts=5)["a"]
    np.testing.assert_allclose(same, (mean + direction) / np.linalg.norm(mean + direction))
    # too few sentences: left out
    assert M.static_embeddings(X[:4], corpus([["tok"]] * 4, X[:4]), min_contexts=5) == {}


def test_static_embedding_of_identical_occurrences_beyond_the_dense_size() -> None:
    """More identical occurrences than the dense eigensolver handles: the centred matrix is
    zero, so the unit mean is returned (no ARPACK failure on a zero matrix)."""
    import pandas as pd

    from lmgeometry.measures.contextual import static_embeddings

    n = 100  # > _DENSE_EIG_MAX rows
    v = np.arange(1.0, 9.0)
    X = np.tile(v, (n, 1))
    words = pd.DataFrame({"sentence_id": np.arange(n), "text": ["w"] * n})
    out = static_embeddings(X, words, min_contexts=5)
    np.testing.assert_allclose(out["w"], v / np.linalg.norm(v))


def test_norm_ratio_median_and_mean_known_answers() -> None:
    from lmgeometry.measures.similarity import norm_ratio

    # norms 3, 4 (selected) and 1, 1, 10 (others): medians 3.5 / 1, means 3.5 / 4
    X = np.array([[3.0, 0.0], [0.0, 4.0], [1.0, 0.0], [0.0, 1.0], [6.0, 8.0]])
    rows = np.array([True, True, False, False, False])
    assert norm_ratio(X, rows) == pytest.approx(3.5)
    assert norm_ratio(X, rows, statistic="mean") == pytest.approx(3.5 / 4)
    assert norm_ratio(2 * X, rows) == pytest.approx(3.5)  # scale invariant
    assert np.isnan(norm_ratio(X, np.zeros(5, dtype=bool)))
    with pytest.raises(ValueError, match="statistic"):
        norm_ratio(X, rows, statistic="max")


# ---------------------------------------------------------------------------------------------
# shared unit rows, per-item tables, resampled baselines, neighbours under several subsets
# ---------------------------------------------------------------------------------------------


def _random_layer(seed: int = 0, n_sent: int = 12, width: int = 6):
    rng = np.random.default_rng(seed)
    vocab = ["the", "cat", "dog", "a", "sat", "ran", ","]
    sentences = [[vocab[j] for j in rng.integers(0, len(vocab), rng.integers(2, 7))]
                 for _ in range(n_sent)]
    n = sum(len(s) for s in sentences)
    X = rng.standard_normal((n, width)) + 1.5
    return X, corpus(sentences, X, punct={","})


def test_unit_rows_give_the_same_numbers_as_the_raw_layer():
    X, words = _random_layer()
    ur = M.UnitRows.of(X)
    assert M.UnitRows.of(ur) is ur and len(ur) == len(X)
    for preset in M.PRESETS:
        a = M.context_measures(X, words, preset, seed=3, min_contexts=2, n_boot=50)
        b = M.context_measures(ur, words, preset, seed=3, min_contexts=2, n_boot=50)
        assert a == pytest.approx(b, nan_ok=True)
    pd.testing.assert_frame_equal(M.token_measures(X, words), M.token_measures(ur, words))
    assert M.anisotropy_baseline(ur, words["sentence_id"], None) == pytest.approx(
        brute_mean_pairwise(X, words["sentence_id"].to_numpy()))


@pytest.mark.parametrize("preset", list(M.PRESETS))
def test_context_tables_hold_the_items_context_measures_averages(preset):
    X, words = _random_layer(1, n_sent=30)
    t = M.context_tables(X, words, preset, seed=5, min_contexts=2, n_intra_sentences=None)
    m = M.context_measures(X, words, preset, seed=5, min_contexts=2, n_intra_sentences=None,
                           n_boot=0)
    assert t.baseline_cosine == m["baseline_cosine"] and len(t.words) == m["n_words"]
    for name, table in (("selfsim", t.words), ("mev", t.words), ("intrasim", t.sentences)):
        assert table[name].mean() == pytest.approx(m[name])
        assert table[name + "_adj"].mean() == pytest.approx(m[name + "_adj"])
    assert t.intrasim_baseline == pytest.approx(m["intrasim_baseline"])


def test_cross_sentence_replicates_weight_sentences_by_their_counts():
    X, words = _random_layer(2)
    sid = words["sentence_id"].to_numpy()
    n_s = len(np.unique(sid))
    counts = np.ones((1, n_s))
    exact = M.cross_sentence_replicates(X, sid, counts)[0]
    assert exact == pytest.approx(brute_mean_pairwise(X, sid))
    # taking sentence 0 twice and dropping sentence 1: copies are one sentence, so the
    # pairs inside them are left out and each pair with another sentence counts twice
    m = np.ones(n_s)
    m[0], m[1] = 2, 0
    keep = sid != 1
    Y = np.vstack([X[keep], X[sid == 0]])
    ids = np.r_[sid[keep], sid[sid == 0]]
    vals = []
    for i in range(len(Y)):
        for j in range(len(Y)):
            if i != j and ids[i] != ids[j]:
                vals.append(cos(Y[i], Y[j]))
    assert M.cross_sentence_replicates(X, sid, m[None])[0] == pytest.approx(np.mean(vals))
    with pytest.raises(ValueError):
        M.cross_sentence_replicates(X, sid, np.ones((2, n_s + 1)))


def test_neighbour_subsets_equal_separate_searches():
    X, words = _random_layer(3, n_sent=20, width=8)
    rest = words["word_index"].to_numpy() > 0
    both = M.neighbour_measures(X, words, k=3, queries=25, seed=1,
                                subsets={"all": np.ones(len(X), bool), "rest": rest})
    alone = M.neighbour_measures(X, words, k=3, queries=25, seed=1)
    got = both[both["subset"] == "all"].drop(columns="subset").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, alone)
    sub = both[both["subset"] == "rest"]
    assert rest[sub["row"]].all() and len(sub) == rest[alone["row"]].sum()
    idx, _ = M.nearest_neighbours(X, 3, queries=sub["row"].to_numpy(), candidates=rest)
    assert rest[idx].all()
    kept = np.flatnonzero(rest)  # the subset searched on its own, as a smaller layer
    ref = M.neighbour_measures(X[rest], words[rest].reset_index(drop=True), k=3,
                               queries=np.searchsorted(kept, sub["row"]))
    assert sub["same_word_share"].to_numpy() == pytest.approx(ref["same_word_share"].to_numpy())


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


def test_similarity_scores_and_paired_spearman_agree_with_scipy():
    from scipy import stats as sps

    from lmgeometry.measures import wordbench

    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 1.0]), "c": np.array([0.0, 2.0]),
               "d": np.array([-1.0, 0.5])}
    pairs = pd.DataFrame({"word1": ["A", "a", "b", "a", "x"], "word2": ["b", "c", "c", "d", "a"],
                          "score": [8.0, 1.0, 6.0, 0.0, 5.0]})
    s = wordbench.similarity_scores(vectors, pairs)
    assert s[:4] == pytest.approx([cos([1, 0], [1, 1]), 0.0, cos([1, 1], [0, 2]),
                                   cos([1, 0], [-1, 0.5])])
    assert np.isnan(s[4])  # "x" has no vector
    rng = np.random.default_rng(0)
    human = rng.integers(0, 5, 60).astype(float)  # ties on purpose
    scores = np.c_[human + rng.standard_normal(60), rng.standard_normal(60)]
    r = wordbench.paired_correlations(human, scores.T, n_boot=40, rng=2, method="spearman")
    assert r[0] == pytest.approx([sps.spearmanr(scores[:, e], human).statistic for e in (0, 1)])
    # replicate b is Spearman's rho on the items of resample b, the same items in each column
    idx = np.random.default_rng(2).integers(0, 60, size=(40, 60))[7]
    assert r[8] == pytest.approx([sps.spearmanr(scores[idx, e], human[idx]).statistic
                                  for e in (0, 1)])


def test_mean_embeddings_are_the_unit_mean_of_the_occurrences():
    X, words = _random_layer(4, n_sent=20)
    means = M.mean_embeddings(X, words, min_contexts=3)
    pc1 = M.static_embeddings(X, words, min_contexts=3)
    assert set(means) == set(pc1) and "," not in means
    key = words["text"].str.lower()
    for w, v in means.items():
        ref = X[(key == w).to_numpy()].mean(axis=0)
        assert v == pytest.approx(ref / np.linalg.norm(ref))
