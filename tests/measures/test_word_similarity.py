"""Word similarity on hand-built embeddings whose answers are known in advance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fixtures.references import cos
from fixtures.word_cases import angle, similarity_case
from scipy import stats

from lmgeometry.measures.word_similarity import evaluate_similarity


def test_similarity_cosine_linear_in_score_gives_correlations_one():
    vectors, pairs, _ = similarity_case()
    out = evaluate_similarity(vectors, pairs)
    assert out["spearman"] == pytest.approx(1.0)
    assert out["pearson"] == pytest.approx(1.0)
    assert out["n_pairs"] == 5
    assert out["n_total"] == 7
    assert out["coverage"] == pytest.approx(5 / 7)


def test_similarity_monotone_nonlinear_gives_spearman_one():
    scores = np.array([1.0, 2.0, 4.0, 6.0, 9.0])
    cosines = (scores / 10) ** 2
    vectors = {"a": np.array([1.0, 0.0])}
    for i, c in enumerate(cosines):
        vectors[f"b{i}"] = np.array([c, math.sqrt(1 - c * c)])
    pairs = pd.DataFrame({"word1": ["a"] * 5, "word2": [f"b{i}" for i in range(5)],
                          "score": scores})
    out = evaluate_similarity(vectors, pairs)
    assert out["spearman"] == pytest.approx(1.0)
    assert out["pearson"] == pytest.approx(np.corrcoef(scores, cosines)[0, 1])
    assert out["pearson"] < 0.999


def test_similarity_exact_case_misses_upper_case_words():
    vectors, pairs, _ = similarity_case()
    out = evaluate_similarity(vectors, pairs, case="exact")
    # "Anchor"/"W0".. are not keys as written, and the last two pairs have an OOV word
    assert (out["n_pairs"], out["coverage"]) == (0, 0.0)
    assert math.isnan(out["spearman"]) and math.isnan(out["pearson"])


def test_similarity_dot_product():
    # anchor . w_i = score_i exactly; cos is a different (monotone) function of the score
    scores = np.array([1.0, 2.0, 3.5, 8.0])
    vectors = {"x": np.array([1.0, 0.0])}
    vectors.update({f"y{i}": np.array([s, 5.0]) for i, s in enumerate(scores)})
    pairs = pd.DataFrame({"word1": ["x"] * 4, "word2": [f"y{i}" for i in range(4)],
                          "score": scores})
    dot = evaluate_similarity(vectors, pairs, "dot")
    assert dot["pearson"] == pytest.approx(1.0)
    cos = evaluate_similarity(vectors, pairs, "cosine")
    assert cos["spearman"] == pytest.approx(1.0)
    assert cos["pearson"] == pytest.approx(np.corrcoef(scores, scores / np.hypot(scores, 5))[0, 1])


def test_similarity_mean_vector_for_oov_pairs():
    # four covered pairs with cosines increasing in the score, and one pair of two unknown
    # words with the lowest human score: under oov="mean" both get the mean vector, cosine 1,
    # the highest model score. Ranks: model (1,2,3,4,5), human (2,3,4,5,1):
    # sum d^2 = 4 * 1 + 16 = 20, rho = 1 - 6 * 20 / (5 * 24) = 0.
    vectors = {"a": angle(0)}
    for i, deg in enumerate([80, 60, 40, 20]):
        vectors[f"b{i}"] = angle(deg)
    pairs = pd.DataFrame(
        {"word1": ["a"] * 4 + ["nope"], "word2": ["b0", "b1", "b2", "b3", "nada"],
         "score": [2.0, 3.0, 4.0, 5.0, 1.0]}
    )
    skip = evaluate_similarity(vectors, pairs)
    assert skip["spearman"] == pytest.approx(1.0) and skip["n_pairs"] == 4
    mean = evaluate_similarity(vectors, pairs, oov="mean")
    assert mean["n_pairs"] == 5 and mean["coverage"] == pytest.approx(4 / 5)
    assert mean["spearman"] == pytest.approx(0.0, abs=1e-12)


def test_similarity_accepts_a_callable():
    vectors, pairs, _ = similarity_case()
    out = evaluate_similarity(vectors.get, pairs)
    assert out["spearman"] == pytest.approx(1.0) and out["n_pairs"] == 5
    with pytest.raises(ValueError):
        evaluate_similarity(vectors.get, pairs, oov="mean")


def test_spearman_helper_agrees_with_scipy_on_ties():
    # human scores with ties: the similarity evaluation must use tie-aware (average) ranks
    scores = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
    cosines = np.array([0.1, 0.3, 0.2, 0.5, 0.4])
    vectors = {"a": np.array([1.0, 0.0])}
    for i, c in enumerate(cosines):
        vectors[f"b{i}"] = np.array([c, math.sqrt(1 - c * c)])
    pairs = pd.DataFrame({"word1": ["a"] * 5, "word2": [f"b{i}" for i in range(5)],
                          "score": scores})
    # hand: ranks human (1, 2.5, 2.5, 4, 5), model (1, 3, 2, 5, 4)
    rh = np.array([1, 2.5, 2.5, 4, 5])
    rm = np.array([1, 3, 2, 5, 4])
    expected = np.corrcoef(rh, rm)[0, 1]
    assert evaluate_similarity(vectors, pairs)["spearman"] == pytest.approx(expected)
    assert expected == pytest.approx(stats.spearmanr(scores, cosines).statistic)


def test_paired_correlations_share_one_resample():
    from lmgeometry.measures.word_similarity import paired_correlations

    rng = np.random.default_rng(0)
    human = rng.normal(size=100)
    scores = np.vstack([human + rng.normal(size=100), human + 0.1 * rng.normal(size=100)])
    r = paired_correlations(human, scores, n_boot=50, rng=3)
    assert r.shape == (51, 2)
    assert r[0, 0] == pytest.approx(stats.pearsonr(human, scores[0]).statistic)
    idx = np.random.default_rng(3).integers(0, 100, size=(50, 100))[7]
    assert r[8, 1] == pytest.approx(stats.pearsonr(human[idx], scores[1, idx]).statistic)
    rho = paired_correlations(human, scores, n_boot=0, method="spearman")
    assert rho[0, 0] == pytest.approx(stats.spearmanr(human, scores[0]).statistic)


def test_similarity_scores_and_paired_spearman_agree_with_scipy():
    from scipy import stats as sps

    from lmgeometry.measures.word_similarity import paired_correlations, similarity_scores

    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 1.0]), "c": np.array([0.0, 2.0]),
               "d": np.array([-1.0, 0.5])}
    pairs = pd.DataFrame({"word1": ["A", "a", "b", "a", "x"], "word2": ["b", "c", "c", "d", "a"],
                          "score": [8.0, 1.0, 6.0, 0.0, 5.0]})
    s = similarity_scores(vectors, pairs)
    assert s[:4] == pytest.approx([cos([1, 0], [1, 1]), 0.0, cos([1, 1], [0, 2]),
                                   cos([1, 0], [-1, 0.5])])
    assert np.isnan(s[4])  # "x" has no vector
    rng = np.random.default_rng(0)
    human = rng.integers(0, 5, 60).astype(float)  # ties on purpose
    scores = np.c_[human + rng.standard_normal(60), rng.standard_normal(60)]
    r = paired_correlations(human, scores.T, n_boot=40, rng=2, method="spearman")
    assert r[0] == pytest.approx([sps.spearmanr(scores[:, e], human).statistic for e in (0, 1)])
    # replicate b is Spearman's rho on the items of resample b, the same items in each column
    idx = np.random.default_rng(2).integers(0, 60, size=(40, 60))[7]
    assert r[8] == pytest.approx([sps.spearmanr(scores[idx, e], human[idx]).statistic
                                  for e in (0, 1)])
