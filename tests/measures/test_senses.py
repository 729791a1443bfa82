"""Sense separability (lmgeometry.measures.senses) on hand-built cases: 1-NN, the most frequent
sense, silhouettes, per-occurrence credits and natural-frequency samples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lmgeometry.measures.senses import (
    loo_1nn_sense_accuracy,
    most_frequent_sense_baseline,
    sense_separability,
    sense_silhouette,
    separability_summary,
)


def _circle(degrees: list[float]) -> np.ndarray:
    t = np.deg2rad(degrees)
    return np.column_stack([np.cos(t), np.sin(t)])


def _separated(counts: list[int], dim: int = 6) -> tuple[np.ndarray, list[str]]:
    """Sense k's occurrences are all the k-th basis vector (scaled differently)."""
    rows, labels = [], []
    for k, c in enumerate(counts):
        for j in range(c):
            v = np.zeros(dim)
            v[k] = 1.0 + j  # cosine ignores the scale
            rows.append(v)
            labels.append(f"s{k}")
    return np.array(rows), labels


# --- leave-one-out 1-NN -----------------------------------------------------------------------


def test_separated_senses_give_accuracy_one_and_silhouette_one():
    X, y = _separated([3, 4, 2])
    assert loo_1nn_sense_accuracy(X, y) == 1.0
    assert loo_1nn_sense_accuracy(X, y, ties="first") == 1.0
    # a(i) = 0 inside a sense, b(i) = 1 (orthogonal senses): s(i) = 1 for all i.
    assert sense_silhouette(X, y) == pytest.approx(1.0, abs=1e-12)


def test_noisy_separated_senses_silhouette_near_one():
    rng = np.random.default_rng(0)
    X, y = _separated([5, 5, 5], dim=8)
    X = X + rng.normal(scale=0.01, size=X.shape)
    assert loo_1nn_sense_accuracy(X, y) == 1.0
    assert sense_silhouette(X, y) > 0.95


def test_hand_computed_nearest_neighbours_on_circle():
    # angles 0, 10, 100, 115, 200 degrees; nearest: 0->10, 10->0, 100->115, 115->100, 200->115
    X = _circle([0, 10, 100, 115, 200])
    y = ["a", "b", "b", "b", "a"]
    # right: the 100 and 115 points only
    assert loo_1nn_sense_accuracy(X, y) == pytest.approx(2 / 5)
    assert loo_1nn_sense_accuracy(X, y, ties="first") == pytest.approx(2 / 5)


def test_identical_vectors_split_ties_equal_pair_agreement_probability():
    rng = np.random.default_rng(1)
    v = rng.normal(size=16)
    n = 40
    X = np.tile(v, (n, 1)) * rng.uniform(0.5, 3.0, size=(n, 1))  # same direction, any scale
    y = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    counts = pd.Series(y).value_counts().to_numpy()
    expected = (counts * (counts - 1)).sum() / (n * (n - 1))
    assert loo_1nn_sense_accuracy(X, y) == pytest.approx(expected, abs=1e-12)


def test_identical_vectors_first_tie_rule_uses_lowest_index():
    X = np.ones((6, 3))
    y = ["a", "a", "a", "b", "b", "c"]
    # nearest of 0 is 1, nearest of every other occurrence is 0 (sense a): a's right, b/c wrong
    assert loo_1nn_sense_accuracy(X, y, ties="first") == pytest.approx(3 / 6)
    # split: (3*2 + 2*1 + 0) / (6*5)
    assert loo_1nn_sense_accuracy(X, y, ties="split") == pytest.approx(8 / 30)


def test_loo_rejects_bad_input():
    with pytest.raises(ValueError):
        loo_1nn_sense_accuracy(np.ones((1, 2)), ["a"])
    with pytest.raises(ValueError):
        loo_1nn_sense_accuracy(np.ones((3, 2)), ["a", "b"])


# --- most frequent sense ----------------------------------------------------------------------


def test_mfs_hand_computed_with_tie():
    y = ["a", "a", "a", "b", "b", "c"]
    # a sees a:2 b:2 c:1 (tie a/b), b sees a:3 b:1, c sees a:3 b:2
    assert most_frequent_sense_baseline(y, ties="split") == pytest.approx(0.25)
    assert most_frequent_sense_baseline(y, ties="first") == pytest.approx(0.5)


def test_mfs_hand_computed_without_tie():
    y = ["a", "b", "a", "a", "b", "a"]  # a sees a:3 b:2 -> right; b sees a:4 b:1 -> wrong
    assert most_frequent_sense_baseline(y) == pytest.approx(4 / 6)
    assert most_frequent_sense_baseline(y, ties="first") == pytest.approx(4 / 6)


def test_mfs_first_rule_follows_order_of_appearance():
    # b appears first. An 'a' sees b:2 a:2 (tie -> b under "first", wrong; 1/2 under "split");
    # a 'b' sees b:1 a:3 -> a, wrong.
    y = ["b", "b", "a", "a", "a"]
    assert most_frequent_sense_baseline(y, ties="first") == 0.0
    assert most_frequent_sense_baseline(y, ties="split") == pytest.approx(3 * 0.5 / 5)
    # two senses, one occurrence each: every occurrence sees only the other sense
    assert most_frequent_sense_baseline(["x", "y"]) == 0.0


# --- silhouette -------------------------------------------------------------------------------


def test_silhouette_hand_computed():
    s = 1 / math.sqrt(2)
    X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [s, s]])
    y = ["A", "A", "B", "B"]
    # d = 1 - cos: A-A 0, A-B1 1, A-B2 1-s, B1-B2 1-s
    # s(A_i) = 1; s(B1) = (1 - (1-s)) / 1 = s; s(B2) = ((1-s) - (1-s)) / (1-s) = 0
    assert sense_silhouette(X, y) == pytest.approx((2 + s) / 4, abs=1e-12)


def test_silhouette_nan_without_two_repeated_senses():
    X = np.eye(3)
    assert math.isnan(sense_silhouette(X, ["a", "a", "b"]))
    assert math.isnan(sense_silhouette(X, ["a", "b", "c"]))


def test_silhouette_ignores_singleton_senses():
    X, y = _separated([2, 2, 1])
    assert sense_silhouette(X, y) == pytest.approx(1.0, abs=1e-12)


# --- per word ---------------------------------------------------------------------------------


def test_sense_separability_per_word_and_summary():
    rows, vecs = [], []
    # "bank": two senses on orthogonal axes (3 + 2 occurrences), one singleton sense, one
    # untagged occurrence
    for sense, axis, n in [("bank%1", 0, 3), ("bank%2", 1, 2), ("bank%3", 2, 1)]:
        for _ in range(n):
            rows.append({"lemma": "bank", "sense_key": sense})
            vecs.append(np.eye(4)[axis])
    rows.append({"lemma": "bank", "sense_key": None})
    vecs.append(np.eye(4)[3])
    # "run": one sense only
    for _ in range(3):
        rows.append({"lemma": "run", "sense_key": "run%1"})
        vecs.append(np.eye(4)[3])
    frame = pd.DataFrame(rows)
    out = sense_separability(np.array(vecs), frame, "lemma", "sense_key")
    assert list(out["word"]) == ["bank", "run"]
    bank = out.iloc[0]
    assert bank["n_occurrences"] == 5
    assert bank["n_senses"] == 2
    assert bank["n_dropped"] == 1  # the singleton; the untagged row is not sense-tagged
    assert bank["accuracy_1nn"] == 1.0
    # MFS over a a a b b: a sees a:2 b:2 (tie, 1/2 each) -> 1.5; b sees a:3 -> 0
    assert bank["mfs_baseline"] == pytest.approx(1.5 / 5)
    assert bank["gain"] == pytest.approx(1 - 1.5 / 5)
    assert bank["silhouette"] == pytest.approx(1.0, abs=1e-12)
    assert bank["reason"] == ""
    run = out.iloc[1]
    assert math.isnan(run["accuracy_1nn"]) and run["reason"]
    summary = separability_summary(out)
    assert summary["n_words"] == 1 and summary["n_words_total"] == 2
    assert summary["accuracy_1nn"] == 1.0
    assert summary["n_occurrences"] == 5
    assert out.attrs["summary"] == summary


def test_sense_separability_micro_and_macro_averages():
    # word w1: identical vectors, senses a a b b -> split accuracy (2+2)/(4*3) = 1/3
    # word w2: separated, 4 occurrences -> 1; w3: separated, 2+2 -> 1
    X1 = np.ones((4, 2))
    X2, _ = _separated([3, 3], dim=2)
    frame = pd.DataFrame(
        {"w": ["w1"] * 4 + ["w2"] * 6, "s": ["a", "a", "b", "b", "c", "c", "c", "d", "d", "d"]}
    )
    out = sense_separability(np.vstack([X1, X2]), frame, "w", "s")
    assert list(out["accuracy_1nn"]) == pytest.approx([1 / 3, 1.0])
    summary = out.attrs["summary"]
    assert summary["accuracy_1nn"] == pytest.approx((1 / 3 + 1) / 2)
    assert summary["accuracy_1nn_micro"] == pytest.approx((4 / 3 + 6) / 10)


# --- regression -------------------------------------------------------------------------------


def test_loo_1nn_euclidean_differs_from_cosine_on_a_line() -> None:
    X = np.array([[0.0], [1.0], [3.0], [10.0]])
    y = ["a", "a", "b", "b"]
    # Euclidean: 0->1 (a, right), 1->0 (a, right), 3->1 (a, wrong), 10->3 (b, right)
    assert loo_1nn_sense_accuracy(X, y, metric="euclidean") == pytest.approx(0.75)
    # cosine: the point at 0 is a zero vector (cos 0 with all: ties over 3 others, 1 shares
    # its sense = 1/3); the other three all have cosine 1 with each other (point 1 ties
    # between 3 and 10: 0; 3 ties 1 and 10: 1/2; 10 ties 1 and 3: 1/2)
    assert loo_1nn_sense_accuracy(X, y) == pytest.approx((1 / 3 + 0 + 0.5 + 0.5) / 4)
    with pytest.raises(ValueError, match="metric"):
        loo_1nn_sense_accuracy(X, y, metric="manhattan")


# --- per-occurrence credits, silhouette from similarities, natural samples --------------------


def test_credits_average_to_the_accuracies() -> None:
    from lmgeometry.measures.senses import mfs_credit, nn_credit, similarity_matrix

    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 4))
    y = list("aaabbbbccdda")
    S = similarity_matrix(X)
    assert nn_credit(S, y).mean() == pytest.approx(loo_1nn_sense_accuracy(X, y))
    assert mfs_credit(y).mean() == pytest.approx(most_frequent_sense_baseline(y))
    # integer codes give the same credits as the labels they stand for
    codes = np.array([ord(c) for c in y])
    np.testing.assert_allclose(nn_credit(S, codes), nn_credit(S, y))
    # a singleton sense can never be right: its occurrence earns 0 under both rules
    assert nn_credit(S, y)[list(y).index("c")] >= 0 and mfs_credit(y)[7] == 0.0


def test_similarity_silhouette_equals_sklearn() -> None:
    from sklearn.metrics import silhouette_score

    from lmgeometry.measures.senses import similarity_matrix, similarity_silhouette

    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 5)) + np.repeat(np.eye(5)[:3] * 2, 10, axis=0)
    y = np.repeat(np.array(["a", "b", "c"], dtype=object), 10)
    y[0] = "lonely"  # a singleton sense is dropped, as sense_silhouette drops it
    keep = y != "lonely"
    expected = silhouette_score(X[keep], y[keep], metric="cosine")
    assert similarity_silhouette(similarity_matrix(X), y) == pytest.approx(expected)
    assert sense_silhouette(X, y) == pytest.approx(expected)
    assert math.isnan(similarity_silhouette(similarity_matrix(X[:3]), ["a", "a", "b"]))


def test_natural_sample_keeps_the_natural_proportions() -> None:
    from lmgeometry.measures.senses import most_frequent_sense_baseline, natural_sample

    # as sampled: 20 / 15 / 12 (round-robin); in running text 76% / 20% / 4%
    y = np.repeat(["a", "b", "c"], [20, 15, 12])
    w = np.select([y == "a", y == "b"], [76.0, 20.0], 4.0)
    idx = natural_sample(y, w, np.random.default_rng(0))
    # m = min(20 / .76, 15 / .2, 12 / .04) = 26.3: floor(26.3 p) = 20, 5, 1
    assert pd.Series(y[idx]).value_counts().to_dict() == {"a": 20, "b": 5, "c": 1}
    assert (np.diff(idx) > 0).all()
    # the MFS baseline of the natural sample is the one a WSD paper reports, not the
    # deflated one of the balanced sample
    assert most_frequent_sense_baseline(y) == pytest.approx(20 / 47)
    assert most_frequent_sense_baseline(y[idx]) == pytest.approx(20 / 26)
    other = natural_sample(y, w, np.random.default_rng(1))
    assert len(other) == 26 and not np.array_equal(other, idx)  # a different draw
    with pytest.raises(ValueError, match="positive"):
        natural_sample(y, np.zeros(len(y)), np.random.default_rng(0))
