"""Known-answer tests for lmgeometry.measures.static: PC1 and mean static embeddings.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fixtures.references import corpus, random_layer
from sklearn.decomposition import PCA

from lmgeometry.measures import static


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
    centered = static.static_embeddings(X, words, min_contexts=5)["tok"]
    raw = static.static_embeddings(X, words, min_contexts=5, centered=False)["tok"]
    assert abs(centered @ direction) > 0.999  # centred PC1: the direction of variation
    assert raw @ mean / np.linalg.norm(mean) > 0.95  # uncentred PC1: near the mean direction
    assert raw @ X.mean(axis=0) > 0 and centered @ X.mean(axis=0) >= 0
    pca = PCA(n_components=1, svd_solver="full").fit(X).components_[0]
    assert abs(centered @ pca) == pytest.approx(1.0, abs=1e-9)  # same axis as the authors'
    # identical occurrences: no variance, the static embedding is the (unit) vector itself
    Y = np.tile(mean + direction, (6, 1))
    same = static.static_embeddings(Y, corpus([["a"]] * 6, Y), min_contexts=5)["a"]
    np.testing.assert_allclose(same, (mean + direction) / np.linalg.norm(mean + direction))
    # too few sentences: left out
    assert static.static_embeddings(X[:4], corpus([["tok"]] * 4, X[:4]), min_contexts=5) == {}



def test_static_embedding_of_identical_occurrences_beyond_the_dense_size() -> None:
    """More identical occurrences than the dense eigensolver handles: the centred matrix is
    zero, so the unit mean is returned (no ARPACK failure on a zero matrix)."""

    from lmgeometry.measures.static import static_embeddings

    n = 100  # > _DENSE_EIG_MAX rows
    v = np.arange(1.0, 9.0)
    X = np.tile(v, (n, 1))
    words = pd.DataFrame({"sentence_id": np.arange(n), "text": ["w"] * n})
    out = static_embeddings(X, words, min_contexts=5)
    np.testing.assert_allclose(out["w"], v / np.linalg.norm(v))



def test_mean_embeddings_are_the_unit_mean_of_the_occurrences():
    X, words = random_layer(4, n_sent=20)
    means = static.mean_embeddings(X, words, min_contexts=3)
    pc1 = static.static_embeddings(X, words, min_contexts=3)
    assert set(means) == set(pc1) and "," not in means
    key = words["text"].str.lower()
    for w, v in means.items():
        ref = X[(key == w).to_numpy()].mean(axis=0)
        assert v == pytest.approx(ref / np.linalg.norm(ref))


def test_context_ranks_order_each_word_s_sentences_once_and_repeat_for_a_seed():
    _, words = random_layer(5, n_sent=30)
    rank = static.context_ranks(words, [7, 12])
    assert (rank[words["is_punct"].to_numpy()] == -1).all()
    kept = words.assign(rank=rank)[~words["is_punct"]]
    kept = kept.assign(key=kept["text"].str.lower())
    for _, part in kept.groupby("key"):
        per_sentence = part.groupby("sentence_id")["rank"].unique()
        assert (per_sentence.map(len) == 1).all()  # a sentence's rows share one rank
        assert sorted(per_sentence.map(lambda r: r[0])) == list(range(len(per_sentence)))
    np.testing.assert_array_equal(rank, static.context_ranks(words, [7, 12]))
    assert not np.array_equal(rank, static.context_ranks(words, [8, 12]))


def test_budget_embeddings_are_pc1_and_mean_of_the_same_drawn_contexts():
    """At budget k both embeddings come from the rows of the k first-drawn sentences of each
    word (the same rows: a paired comparison), PC1 as scikit-learn's PCA axis of those rows."""
    X, words = random_layer(6, n_sent=40, width=8)
    rank = static.context_ranks(words, 3)
    found = static.budget_embeddings(X, words, [1, 2, 4], 3)
    assert set(found[1]) == {"mean"} and set(found[2]) == set(found[4]) == {"PC1", "mean"}
    key = words["text"].str.lower().to_numpy()
    for k, vecs in found.items():
        for w, v in vecs["mean"].items():
            rows = (key == w) & (rank >= 0) & (rank < k)
            assert words.loc[rows, "sentence_id"].nunique() == k
            ref = X[rows].mean(axis=0)
            np.testing.assert_allclose(v, ref / np.linalg.norm(ref), atol=1e-12)
            if k >= 2 and rows.sum() >= 2:
                axis = PCA(n_components=1, svd_solver="full").fit(X[rows]).components_[0]
                assert abs(vecs["PC1"][w] @ axis) == pytest.approx(1.0, abs=1e-9)
                assert vecs["PC1"][w] @ ref > 0
        assert set(vecs["mean"]) == set(vecs.get("PC1", vecs["mean"]))
    with pytest.raises(ValueError, match="at least 1"):
        static.budget_embeddings(X, words, [0, 2])


def _noisy_words(n_words: int, n_contexts: int, d: int, noise: float, seed: int):
    """Occurrences ``t_w + noise * e`` (``e`` isotropic, ``E|e|^2 = 1``), ``t_w`` unit vectors
    in a 3-dimensional subspace (their cosines spread over [-1, 1]), each word in
    ``n_contexts`` sentences; and the ratings of every pair: the cosines of the ``t_w``."""
    rng = np.random.default_rng(seed)
    T = np.zeros((n_words, d))
    T[:, :3] = rng.standard_normal((n_words, 3))
    T /= np.linalg.norm(T, axis=1, keepdims=True)
    names = [f"w{i}" for i in range(n_words)]
    sentences = [[names[w]] for w in range(n_words) for _ in range(n_contexts)]
    code = np.repeat(np.arange(n_words), n_contexts)
    X = T[code] + noise * rng.standard_normal((len(code), d)) / np.sqrt(d)
    pairs = [(a, b) for a in range(n_words) for b in range(a + 1, n_words)]
    human = np.array([T[a] @ T[b] for a, b in pairs])
    return X, corpus(sentences, X), names, pairs, human


def _budget_rhos(noise: float, budgets: list[int]) -> dict[tuple[int, str], float]:
    from scipy.stats import spearmanr

    X, words, names, pairs, human = _noisy_words(60, 8, 64, noise, seed=11)
    found = static.budget_embeddings(X, words, budgets, 0)
    return {(k, e): spearmanr(human, [v[names[a]] @ v[names[b]] for a, b in pairs])[0]
            for k, vecs in found.items() for e, v in vecs.items()}


def test_budget_on_isotropic_noise_mean_vectors_approach_the_truth_centred_pc1_never():
    """Occurrences ``t_w + e_j``: the mean of k of them is ``t_w`` plus noise of squared norm
    ``E|e|^2 / k``, so its rho with the true cosines rises with k towards 1; the centred rows
    ``e_j - mean(e)`` do not contain ``t_w``, so centred PC1 is a random noise direction tied to
    ``t_w`` by its sign only, at every k (its cosines carry a signal of order 1 / d against a
    spread of order 1 / sqrt(d): rho near 0)."""
    budgets = [1, 2, 4, 8]
    rho = _budget_rhos(2.0, budgets)
    mean = [rho[k, "mean"] for k in budgets]
    assert mean == sorted(mean) and mean[0] < 0.8 and mean[-1] > 0.9
    assert all(abs(rho[k, "PC1"]) < 0.2 for k in budgets[1:])
    # without noise every occurrence is t_w: the mean vector is the truth from one context
    exact = _budget_rhos(0.0, budgets)
    assert all(exact[k, "mean"] == pytest.approx(1.0) for k in budgets)



def _pc1(X: np.ndarray, **kwargs) -> np.ndarray:
    return static.static_embeddings(X, corpus([["w"]] * len(X), X), min_contexts=2,
                                    **kwargs)["w"]


def test_authors_pc1_is_their_truncated_svd_component_with_its_2019_sign():
    """Uncentred PC1 signed by ``svd_flip`` is ``TruncatedSVD(n_components=100)``'s
    ``components_[0]`` as scikit-learn computed it in 2019: ``randomized_svd(X, 100,
    n_iter=5)`` with its default sign flip (the installed ``TruncatedSVD`` flips on the right
    singular vector instead). Centred, it is 2019's ``PCA``: ``svd_flip`` on the centred U."""
    from sklearn.utils.extmath import randomized_svd, svd_flip

    rng = np.random.default_rng(8)
    for n, d in ((6, 40), (30, 40), (70, 40), (90, 80)):  # batched, single, n > d, n > 64
        X = rng.standard_normal((n, d)) * rng.uniform(0.2, 2, d) + rng.standard_normal(d)
        Vt = randomized_svd(X, min(100, d - 1), n_iter=5, random_state=0)[2]
        np.testing.assert_allclose(_pc1(X, centered=False, orientation="svd_flip"), Vt[0],
                                   atol=1e-8, err_msg=f"{n} x {d}")
        Z = X - X.mean(axis=0)
        U, _, Vt = np.linalg.svd(Z, full_matrices=False)
        np.testing.assert_allclose(_pc1(X, orientation="svd_flip"), svd_flip(U, Vt)[1][0],
                                   atol=1e-8, err_msg=f"{n} x {d}")


def test_pc1_orientations_on_a_rank_one_cloud_by_hand():
    """Rows a_i w: uncentred PC1 is +-w/|w|, its projections a_i |w|. The mean rule signs it
    with sum(a) > 0 (+w); svd_flip with the largest |a_i|, here a_5 = -4 (so -w)."""
    w = np.array([1.0, -2.0, 0.5, 3.0])
    unit = w / np.linalg.norm(w)
    X = np.array([3.0, -1.0, 0.5, 2.0, -4.0, 1.5])[:, None] * w
    np.testing.assert_allclose(_pc1(X, centered=False), unit, atol=1e-12)
    np.testing.assert_allclose(_pc1(X, centered=False, orientation="svd_flip"), -unit,
                               atol=1e-12)
    positive = np.array([1.0, 2.0, 3.5, 0.5, 4.0])[:, None] * w  # every projection positive
    for orientation in ("mean", "svd_flip"):
        np.testing.assert_allclose(_pc1(positive, centered=False, orientation=orientation),
                                   unit, atol=1e-12)


def test_authors_pc1_of_a_cloud_whose_mean_dominates_is_the_mean_direction():
    """Rows (m + t_i) e_0 + e_i with the spread e_i orthogonal to e_0 and uncorrelated with t
    (see test_mev): the uncentred PC1 is e_0, the direction of the mean, exactly, and svd_flip
    signs it towards the mean (every projection m + t_i > 0); the centred PC1 is the spread's
    axis e_1, orthogonal to the mean."""
    X = np.zeros((4, 5))
    X[:, 0] = 10.0 + 0.5 * np.array([1.0, -1, 1, -1])
    X[:, 1] = 2.0 * np.array([1.0, 1, -1, -1])
    e0, e1 = np.eye(5)[0], np.eye(5)[1]
    np.testing.assert_allclose(_pc1(X, centered=False, orientation="svd_flip"), e0, atol=1e-12)
    assert abs(_pc1(X) @ e1) == pytest.approx(1.0, abs=1e-12)
    # isotropic spread around a far mean: uncentred PC1 within a few degrees of the mean
    rng = np.random.default_rng(9)
    mean = 20.0 * rng.standard_normal(50)
    Y = mean + rng.standard_normal((12, 50))
    authors = _pc1(Y, centered=False, orientation="svd_flip")
    assert authors @ mean / np.linalg.norm(mean) > 0.99
    assert abs(_pc1(Y) @ mean) / np.linalg.norm(mean) < 0.5


def test_svd_flip_pc1_turns_with_the_rows():
    """PC1 of rotated rows is the rotated PC1, sign included; of negated rows, its negation."""
    rng = np.random.default_rng(10)
    X = rng.standard_normal((9, 7)) + 0.5
    Q = np.linalg.qr(rng.standard_normal((7, 7)))[0]
    for centered in (False, True):
        v = _pc1(X, centered=centered, orientation="svd_flip")
        np.testing.assert_allclose(_pc1(X @ Q, centered=centered, orientation="svd_flip"),
                                   v @ Q, atol=1e-10)
        np.testing.assert_allclose(_pc1(-X, centered=centered, orientation="svd_flip"), -v,
                                   atol=1e-10)
    with pytest.raises(ValueError, match="svd_flip"):
        _pc1(X, orientation="sklearn")
