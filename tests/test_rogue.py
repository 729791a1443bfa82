"""Rogue dimensions, CKA and the threshold classifier against known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ortho_group

from lmgeometry import rogue
from lmgeometry.measures import mean_pairwise_cosine


def test_cka_identity_and_invariances() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 20))
    Q = ortho_group.rvs(20, random_state=1)
    assert rogue.linear_cka(X, X) == pytest.approx(1.0)
    # orthogonal transform, isotropic scaling and translation leave CKA at 1
    assert rogue.linear_cka(X, 3.0 * X @ Q + 5.0) == pytest.approx(1.0)
    # widths may differ: a zero-padded copy is the same representation
    assert rogue.linear_cka(X, np.hstack([X, np.zeros((200, 7))])) == pytest.approx(1.0)


def test_cka_of_independent_representations_is_small() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(3000, 5)), rng.normal(size=(3000, 5))
    assert rogue.linear_cka(X, Y) < 0.01


def test_cka_matrix_matches_pairwise() -> None:
    rng = np.random.default_rng(1)
    A = [rng.normal(size=(50, 8)) for _ in range(3)]
    B = [rng.normal(size=(50, 4)) for _ in range(2)]
    M = rogue.cka_matrix(A)
    assert np.allclose(np.diag(M), 1.0)
    assert np.allclose(M, M.T)
    C = rogue.cka_matrix(A, B)
    expected = [[rogue.linear_cka(a, b) for b in B] for a in A]
    assert np.allclose(C, expected, atol=1e-12)
    with pytest.raises(ValueError, match="same items"):
        rogue.cka_matrix(A, [rng.normal(size=(49, 4))])


def test_cosine_contributions_sum_to_mean_cosine() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 10)) + np.array([4.0] + [0.0] * 9)
    cc = rogue.cosine_contributions(X)
    assert cc.sum() == pytest.approx(mean_pairwise_cosine(X), abs=1e-9)
    assert int(np.argmax(cc)) == 0
    # every row along e_3: all cosine comes from dimension 3
    E = np.zeros((5, 4))
    E[:, 3] = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert np.allclose(rogue.cosine_contributions(E), [0, 0, 0, 1])


def test_top_dimensions_and_variance_share() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20000, 50))
    assert rogue.variance_share(X, 5) == pytest.approx(5 / 50, abs=0.01)
    X[:, 17] *= 30
    assert rogue.top_dimensions(X, 1).tolist() == [17]
    assert rogue.variance_share(X, 1) > 0.9
    with pytest.raises(ValueError):
        rogue.top_dimensions(X, 1, by="norm")


def test_threshold_classifier_separable_and_direction() -> None:
    x = np.array([0.1, 0.4, 0.2, 2.0, 3.0, 2.5])
    y = np.array([0, 0, 0, 1, 1, 1])
    clf = rogue.ThresholdClassifier().fit(x, y)
    assert clf.train_accuracy == 1.0 and clf.sign == 1
    assert 0.4 < clf.threshold < 2.0
    flipped = rogue.ThresholdClassifier().fit(x, 1 - y)
    assert flipped.sign == -1 and flipped.score(x, 1 - y) == 1.0


def test_threshold_classifier_is_optimal_against_brute_force() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=60).round(1)  # ties included
    y = (x + rng.normal(scale=1.0, size=60) > 0).astype(int)
    clf = rogue.ThresholdClassifier().fit(x, y)
    candidates = np.concatenate([[x.min() - 1], np.unique(x) + 1e-9])
    best = max(max(((x > t) == y).mean(), ((x <= t) == y).mean()) for t in candidates)
    assert clf.train_accuracy == pytest.approx(best)
    assert clf.score(x, y) == pytest.approx(best)


def test_ablation_removes_information_held_in_the_top_dimension() -> None:
    rng = np.random.default_rng(5)
    n = 2000
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 10))
    X[:, 0] = 10 * (2 * y - 1) + rng.normal(size=n)  # the label lives in the top dimension
    curve = rogue.ablation_curve(X[:1000], y[:1000], X[1000:], y[1000:], ks=[0, 1, 5])
    acc = curve.set_index(["removed", "k"])["accuracy"]
    assert acc[("top", 0)] == 1.0
    assert acc[("top", 1)] < 0.6
    assert acc[("bottom", 5)] == 1.0


def test_sentence_vectors_last_and_mean() -> None:
    words = pd.DataFrame({"sentence_id": [0, 0, 1, 1, 1]})
    layer = np.arange(10, dtype=np.float32).reshape(5, 2)
    last, ids = rogue.sentence_vectors(words, layer, "last")
    assert ids.tolist() == [0, 1] and last.tolist() == [[2, 3], [8, 9]]
    mean, _ = rogue.sentence_vectors(words, layer, "mean")
    assert mean.tolist() == [[1, 2], [6, 7]]


def test_layer_report_and_findings_on_a_planted_rogue_dimension() -> None:
    rng = np.random.default_rng(6)
    n = 600
    y = rng.integers(0, 2, size=n)
    plain = rng.normal(size=(n, 8))
    rogue_layer = plain.copy()
    rogue_layer[:, 5] = 20 * (2 * y - 1) + rng.normal(size=n)  # huge variance, carries the label
    layers = [plain, rogue_layer]
    report = rogue.layer_report([x[:400] for x in layers], y[:400],
                                [x[400:] for x in layers], y[400:])
    assert report["rogue_dim"].iloc[1] == 5
    assert report["threshold_accuracy"].iloc[1] == 1.0
    assert report["threshold_accuracy"].iloc[0] < 0.65
    assert report["variance_share_top1"].iloc[1] > 0.9
    text = " ".join(rogue.findings(report, "toy"))
    assert "rogue dimension (5)" in text and "100.0%" in text
    assert "layers [1]" in text
    summary = rogue.summary(report.assign(model="toy"))
    assert bool(summary.loc["toy", "last layer: top dimension > half the variance"])
