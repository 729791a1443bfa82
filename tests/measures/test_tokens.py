"""Known-answer tests for lmgeometry.measures.tokens: seed 000's token and neighbour measures.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fixtures.references import (
    brute_knn,
    brute_token_intra,
    corpus,
    cos,
    exact_cosine_rows,
    partition_knn,
    random_layer,
)

from lmgeometry.measures import tokens


def test_token_intra_similarity_matches_brute_force():
    rng = np.random.default_rng(4)
    for n in (2, 3, 9, 25):
        S = rng.standard_normal((n, 13)) + 0.5
        np.testing.assert_allclose(tokens.token_intra_similarity(S), brute_token_intra(S),
                                   atol=1e-6)



@pytest.mark.parametrize("block_size", [1, 7, 64, 150, 1000])
def test_blocked_knn_equals_brute_force(block_size):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((150, 12)) + 0.3
    k = 10
    idx, val = tokens.nearest_neighbours(X, k, block_size=block_size)
    bidx, bval = brute_knn(X, k)
    np.testing.assert_array_equal(idx, bidx)
    np.testing.assert_allclose(val, bval, atol=1e-5)



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n", "k", "block_size"), [(12, 7, 5), (300, 3, 64), (1300, 10, 256)])
def test_knn_with_exact_ties_equals_full_row_partition(n, k, block_size, dtype):
    # exact cosines with many ties: the candidate search must give what one argpartition of
    # each whole masked row gives, including which tied rows fill the last places
    X = exact_cosine_rows(n, 64, seed=n)
    rng = np.random.default_rng(n)
    q = np.sort(rng.choice(n, min(n, 400), replace=False))
    everyone = np.ones(n, dtype=bool)
    some = (rng.random(n) < 0.8) | (n < 100)
    top1 = partition_knn(X, k, q, everyone, dtype)[0][:, 0]
    some[top1[: len(top1) // 4]] = False  # each of these queries loses its nearest row
    for allowed in (some, everyone):
        idx, val = tokens.nearest_neighbours(X, k, block_size=block_size, queries=q,
                                             dtype=dtype, candidates=allowed)
        ridx, rval = partition_knn(X, k, q, allowed, dtype)
        np.testing.assert_array_equal(idx, ridx)
        np.testing.assert_array_equal(val, rval)
    # and from the definition alone (every row a candidate): the k largest cosines in
    # decreasing order, and where no tie straddles the k-th place, the rows sorted by
    # decreasing cosine, ties by index
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = unit[q] @ unit.T
    C[np.arange(len(q)), q] = -np.inf
    ranked = np.lexsort((np.broadcast_to(np.arange(n), C.shape), -C), axis=1)[:, :k + 1]
    best = np.take_along_axis(C, ranked, axis=1)
    np.testing.assert_array_equal(val, best[:, :k])
    tied = best[:, k - 1] == best[:, k]
    np.testing.assert_array_equal(idx[~tied], ranked[~tied, :k])
    # both cases occur: a tie across the k-th place, and (all but the smallest layer, where
    # every query has one) a k-th cosine above the next
    assert tied.any() and (n < 100 or not tied.all())



@pytest.mark.parametrize("chunks", [1, 4, 7])
def test_candidates_hold_every_entry_down_to_the_mth(monkeypatch, chunks):
    rng = np.random.default_rng(chunks)
    G = rng.integers(0, 6, size=(9, 23)).astype(np.float32)  # integers: many ties
    G[2, 5] = -np.inf
    monkeypatch.setattr(tokens, "_CHUNKS", chunks)
    m = 3
    r, col, v = tokens._candidates(G, m)
    np.testing.assert_array_equal(v, G[r, col])
    for i in range(len(G)):
        mine = r == i
        mth = np.sort(G[i])[::-1][m - 1]
        assert set(col[mine]) >= set(np.flatnonzero(G[i] >= mth))  # all down to the m-th
        assert mine.sum() >= m
        expected = sorted(col[mine], key=lambda j: (-G[i, j], j))  # decreasing, ties by index
        assert list(col[mine]) == expected
    assert (np.diff(r) >= 0).all()



def test_knn_query_subset_and_zero_rows():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((60, 5))
    X[17] = 0.0
    q = np.array([3, 17, 40])
    idx, val = tokens.nearest_neighbours(X, 4, block_size=2, queries=q, dtype=np.float64)
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
    table = tokens.neighbour_measures(X, words, k=10, block_size=5)
    np.testing.assert_allclose(table["same_word_share"], 1.0)
    assert (table["mean_neighbour_cosine"] > 0.99).all()
    # with k=15 each token has 11 same-word neighbours and 4 others
    table = tokens.neighbour_measures(X, words, k=15, queries=5, seed=0)
    assert len(table) == 5
    np.testing.assert_allclose(table["same_word_share"], 11 / 15)



def test_token_measures_match_brute_force():
    rng = np.random.default_rng(18)
    sentences = [["The", "cat", "the"], ["cat", "sat"], ["the", "dog", "sat", "."], ["dog"]]
    n = sum(len(s) for s in sentences)
    X = rng.standard_normal((n, 6)) + 0.4
    words = corpus(sentences, X, punct={"."})
    table = tokens.token_measures(X, words, min_contexts=2)
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
    by_upos = tokens.summarise_tokens(table, "token_intra", "upos")
    assert by_upos.loc["DET", "n"] == 3
    det = table.loc[table["upos"] == "DET", "token_intra"]
    assert by_upos.loc["DET", "mean"] == pytest.approx(det.mean())
    by_pos = tokens.summarise_tokens(table, "token_intra", "word_index")
    assert list(by_pos.index) == [0, 1, 2, 3]



def test_neighbour_subsets_equal_separate_searches():
    X, words = random_layer(3, n_sent=20, width=8)
    rest = words["word_index"].to_numpy() > 0
    both = tokens.neighbour_measures(X, words, k=3, queries=25, seed=1,
                                subsets={"all": np.ones(len(X), bool), "rest": rest})
    alone = tokens.neighbour_measures(X, words, k=3, queries=25, seed=1)
    got = both[both["subset"] == "all"].drop(columns="subset").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, alone)
    sub = both[both["subset"] == "rest"]
    assert rest[sub["row"]].all() and len(sub) == rest[alone["row"]].sum()
    idx, _ = tokens.nearest_neighbours(X, 3, queries=sub["row"].to_numpy(), candidates=rest)
    assert rest[idx].all()
    kept = np.flatnonzero(rest)  # the subset searched on its own, as a smaller layer
    ref = tokens.neighbour_measures(X[rest], words[rest].reset_index(drop=True), k=3,
                               queries=np.searchsorted(kept, sub["row"]))
    assert sub["same_word_share"].to_numpy() == pytest.approx(ref["same_word_share"].to_numpy())
