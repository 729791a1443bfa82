"""Rogue dimensions, CKA and the threshold classifier against known answers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ortho_group

from lmgeometry.chapters import rogue_dimensions
from lmgeometry.measures import probes, similarity
from lmgeometry.measures.contextual import mean_pairwise_cosine


def test_cka_identity_and_invariances() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 20))
    Q = ortho_group.rvs(20, random_state=1)
    assert similarity.linear_cka(X, X) == pytest.approx(1.0)
    # orthogonal transform, isotropic scaling and translation leave CKA at 1
    assert similarity.linear_cka(X, 3.0 * X @ Q + 5.0) == pytest.approx(1.0)
    # widths may differ: a zero-padded copy is the same representation
    assert similarity.linear_cka(X, np.hstack([X, np.zeros((200, 7))])) == pytest.approx(1.0)


def test_cka_of_independent_representations_is_small() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(3000, 5)), rng.normal(size=(3000, 5))
    assert similarity.linear_cka(X, Y) < 0.01


def test_cka_matrix_matches_pairwise() -> None:
    rng = np.random.default_rng(1)
    A = [rng.normal(size=(50, 8)) for _ in range(3)]
    B = [rng.normal(size=(50, 4)) for _ in range(2)]
    M = similarity.cka_matrix(A)
    assert np.allclose(np.diag(M), 1.0)
    assert np.allclose(M, M.T)
    C = similarity.cka_matrix(A, B)
    expected = [[similarity.linear_cka(a, b) for b in B] for a in A]
    assert np.allclose(C, expected, atol=1e-12)
    with pytest.raises(ValueError, match="same items"):
        similarity.cka_matrix(A, [rng.normal(size=(49, 4))])


def test_cosine_contributions_sum_to_mean_cosine() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 10)) + np.array([4.0] + [0.0] * 9)
    cc = similarity.cosine_contributions(X)
    assert cc.sum() == pytest.approx(mean_pairwise_cosine(X), abs=1e-9)
    assert int(np.argmax(cc)) == 0
    # every row along e_3: all cosine comes from dimension 3
    E = np.zeros((5, 4))
    E[:, 3] = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert np.allclose(similarity.cosine_contributions(E), [0, 0, 0, 1])


def test_top_dimensions_and_variance_share() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20000, 50))
    assert similarity.variance_share(X, 5) == pytest.approx(5 / 50, abs=0.01)
    X[:, 17] *= 30
    assert similarity.top_dimensions(X, 1).tolist() == [17]
    assert similarity.variance_share(X, 1) > 0.9
    with pytest.raises(ValueError):
        similarity.top_dimensions(X, 1, by="norm")


def test_threshold_classifier_separable_and_direction() -> None:
    x = np.array([0.1, 0.4, 0.2, 2.0, 3.0, 2.5])
    y = np.array([0, 0, 0, 1, 1, 1])
    clf = probes.ThresholdClassifier().fit(x, y)
    assert clf.train_accuracy == 1.0 and clf.sign == 1
    assert 0.4 < clf.threshold < 2.0
    flipped = probes.ThresholdClassifier().fit(x, 1 - y)
    assert flipped.sign == -1 and flipped.score(x, 1 - y) == 1.0


def test_threshold_classifier_is_optimal_against_brute_force() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=60).round(1)  # ties included
    y = (x + rng.normal(scale=1.0, size=60) > 0).astype(int)
    clf = probes.ThresholdClassifier().fit(x, y)
    candidates = np.concatenate([[x.min() - 1], np.unique(x) + 1e-9])
    best = max(max(((x > t) == y).mean(), ((x <= t) == y).mean()) for t in candidates)
    assert clf.train_accuracy == pytest.approx(best)
    assert clf.score(x, y) == pytest.approx(best)


def _large_mean_label_data(n: int = 2000, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Label carried entirely by dimension 0, which has a large mean (a rogue dimension)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 10))
    X[:, 0] = 100.0 + 10 * (2 * y - 1) + rng.normal(size=n)
    X[:, 9] *= 0.01  # lowest variance, irrelevant
    return X, y


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_ablation_of_the_label_dimension_drops_to_chance(mode: str) -> None:
    X, y = _large_mean_label_data()
    curve = probes.ablation_curve(X[:1000], y[:1000], X[1000:], y[1000:], ks=[0, 1, 5],
                                 mode=mode)
    assert set(curve["mode"]) == {mode} and curve["head_converged"].all()
    acc = curve.set_index(["removed", "k"])["accuracy"]
    majority = max(y[1000:].mean(), 1 - y[1000:].mean())
    assert acc[("top", 0)] == 1.0
    # zero: every logit moves by -w_0 * 100, one class for all; mean: no signal left
    assert acc[("top", 1)] <= majority + 0.03
    # ablating irrelevant (lowest-variance) dimensions changes nothing
    assert acc[("bottom", 1)] == 1.0 and acc[("bottom", 5)] == 1.0


def test_zero_and_mean_ablation_differ_on_a_large_mean_dimension() -> None:
    rng = np.random.default_rng(7)
    n = 2000
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 3)) * 0.1
    X[:, 0] = 50.0 + 3 * (2 * y - 1) + rng.normal(scale=3.0, size=n)  # top variance, big mean
    X[:, 1] = 2 * (2 * y - 1) + rng.normal(scale=0.5, size=n)          # the label, mean 0
    train, test = slice(0, 1000), slice(1000, None)
    fitted = probes.fit_logistic(X[train], y[train], standardise=False, solver="newton-cholesky")
    head = fitted.model
    assert fitted.converged and head.coef_[0, 0] > 0
    acc = {m: probes.ablation_curve(X[train], y[train], X[test], y[test], ks=[1], mode=m)
           .set_index(["removed", "k"]).loc[("top", 1), "accuracy"] for m in ("zero", "mean")}
    majority = max(y[test].mean(), 1 - y[test].mean())
    # mean ablation removes dimension 0's variation; dimension 1 still carries the label
    assert acc["mean"] > 0.95
    # zeroing moves every logit by -w_0 * x_0 (about -w_0 * 50): one class for all
    Z = probes.ablate(X[test], [0], "zero")
    shift = head.decision_function(Z) - head.decision_function(X[test])
    assert np.allclose(shift, -head.coef_[0, 0] * X[test, 0])
    assert acc["zero"] == pytest.approx(float((head.predict(Z) == y[test]).mean()))
    assert acc["zero"] <= majority + 0.01


def test_ablate_values_and_errors() -> None:
    X = np.arange(6, dtype=float).reshape(2, 3)
    assert probes.ablate(X, [1], "zero").tolist() == [[0, 0, 2], [3, 0, 5]]
    assert probes.ablate(X, [0, 2], "mean", X.mean(axis=0)).tolist() == [[1.5, 1, 3.5],
                                                                         [1.5, 4, 3.5]]
    assert X[0, 1] == 1  # not modified in place
    with pytest.raises(ValueError, match="mode"):
        probes.ablate(X, [0], "standardised")
    with pytest.raises(ValueError, match="mean"):
        probes.ablate(X, [0], "mean")


def test_fit_head_converges_on_badly_scaled_raw_features() -> None:
    X, y = _large_mean_label_data(seed=8)
    X[:, 3] *= 1000.0  # a coordinate a thousand times larger than the others
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        head = probes.fit_logistic(X, y, standardise=False, solver="newton-cholesky")
    assert head.converged and head.accuracy(X, y) == 1.0


def test_ablation_findings_name_both_modes() -> None:
    X, y = _large_mean_label_data()
    curve = pd.concat([probes.ablation_curve(X[:1000], y[:1000], X[1000:], y[1000:],
                                            ks=[0, 1, 3], mode=m) for m in ("zero", "mean")])
    text = " ".join(rogue_dimensions.ablation_findings(curve))
    assert "Zero ablation (seed 003's" in text and "Mean ablation" in text
    assert "from 100.0%" in text and "did not converge" not in text
    # both drop the single label dimension to chance: the largest gap is elsewhere or none
    zero, mean = (curve[curve["mode"] == m].set_index(["removed", "k"])["accuracy"]
                  for m in ("zero", "mean"))
    gap = (zero - mean).abs()
    if gap.max() == 0:
        assert "same accuracy at every k" in text
    else:
        assert "differ most" in text


def test_norm_ratio_and_first_word_rows_dominate_cka() -> None:
    rng = np.random.default_rng(9)
    n = 400
    X, Y = rng.normal(size=(n, 6)), rng.normal(size=(n, 5))
    Y[:, :3] += X[:, :3]  # shared signal between the two representations
    first = np.zeros(n, dtype=bool)
    first[::20] = True
    assert similarity.norm_ratio(X, first) == pytest.approx(1.0, abs=0.35)
    base = similarity.linear_cka(X, Y)
    # one model puts huge, unrelated vectors on the first rows (a massive activation)
    Y_sink = Y.copy()
    Y_sink[first] = rng.normal(size=(first.sum(), 5)) * 100.0
    assert similarity.norm_ratio(Y_sink, first) > 50
    assert similarity.linear_cka(X, Y_sink) < 0.2 < base
    # leaving those rows out restores the value computed on the same rows
    assert similarity.linear_cka(X[~first], Y_sink[~first]) == pytest.approx(
        similarity.linear_cka(X[~first], Y[~first]))
    assert np.isnan(similarity.norm_ratio(X, np.ones(n, dtype=bool)))  # one group is empty
    with pytest.raises(ValueError):
        similarity.norm_ratio(X, first[:-1])  # the mask must cover every row


def test_cross_model_cka_table_and_findings_on_a_planted_sink() -> None:
    rng = np.random.default_rng(10)
    n = 600
    first = np.zeros(n, dtype=bool)
    first[::15] = True
    base = rng.normal(size=(n, 6))
    A = [base, base @ ortho_group.rvs(6, random_state=2)]
    clean = np.hstack([base, rng.normal(size=(n, 2)) * 0.1])
    sink = clean.copy()
    sink[first] = rng.normal(size=(first.sum(), 8)) * 300.0  # unrelated huge first rows
    all_rows, without, table = similarity.cross_model_cka(A, [clean, sink], first)
    assert all_rows.shape == without.shape == (2, 2)
    assert table["best_cka_all"][0] == pytest.approx(table["best_cka_without_first"][0],
                                                     abs=0.02)
    assert table["best_cka_all"][1] < 0.2 and table["best_cka_without_first"][1] > 0.95
    assert table["first_word_norm_ratio"][1] > 100 > table["first_word_norm_ratio"][0]
    text = " ".join(rogue_dimensions.cross_cka_findings(table, "a", "b", n, int(first.sum())))
    assert "b layer 1 the first word" in text and "other layer (0)" in text
    assert "stays below" not in text
    # a layer whose rows are dominated by one dimension, without any sink
    table2 = table.assign(best_cka_without_first=[0.1, 0.9],
                          top_dim_variance_share_without_first=[0.6, 0.1])
    text2 = " ".join(rogue_dimensions.cross_cka_findings(table2, "a", "b", n, int(first.sum())))
    assert "stays below 0.3 in b layer 0; in layer 0 one dimension (" in text2
    assert "holds 60% of the variance" in text2
    assert table["best_cka_without_first_and_top_dim"].between(0, 1).all()


def test_best_match_takes_the_column_maximum() -> None:
    M = np.array([[0.1, 0.9, np.nan], [0.5, 0.2, 0.3]])
    assert similarity.best_match(M).tolist() == [0.5, 0.9, 0.3]


def test_sentence_vectors_last_and_mean() -> None:
    words = pd.DataFrame({"sentence_id": [0, 0, 1, 1, 1]})
    layer = np.arange(10, dtype=np.float32).reshape(5, 2)
    last, ids = rogue_dimensions.sentence_vectors(words, layer, "last")
    assert ids.tolist() == [0, 1] and last.tolist() == [[2, 3], [8, 9]]
    mean, _ = rogue_dimensions.sentence_vectors(words, layer, "mean")
    assert mean.tolist() == [[1, 2], [6, 7]]


def test_layer_report_and_findings_on_a_planted_rogue_dimension() -> None:
    rng = np.random.default_rng(6)
    n = 600
    y = rng.integers(0, 2, size=n)
    plain = rng.normal(size=(n, 8))
    rogue_layer = plain.copy()
    rogue_layer[:, 5] = 20 * (2 * y - 1) + rng.normal(size=n)  # huge variance, carries the label
    layers = [plain, rogue_layer]
    report = rogue_dimensions.layer_report([x[:400] for x in layers], y[:400],
                                [x[400:] for x in layers], y[400:])
    assert report["rogue_dim"].iloc[1] == 5
    assert report["threshold_accuracy"].iloc[1] == 1.0
    assert report["threshold_accuracy"].iloc[0] < 0.65
    assert report["variance_share_top1"].iloc[1] > 0.9
    text = " ".join(rogue_dimensions.findings(report, "toy"))
    assert "rogue dimension (5)" in text and "100.0%" in text
    assert "layers [1]" in text
    summary = rogue_dimensions.summary(report.assign(model="toy"))
    assert bool(summary.loc["toy", "last layer: top dimension > half the variance"])
