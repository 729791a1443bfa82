"""Sense separability, WiC thresholds and the polysemy regression on hand-built cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

from lmgeometry.measures.senses import (
    evaluate_wic,
    fit_wic_threshold,
    loo_1nn_sense_accuracy,
    most_frequent_sense_baseline,
    polysemy_regression,
    sense_separability,
    sense_silhouette,
    separability_summary,
    wic_accuracy,
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


# --- WiC --------------------------------------------------------------------------------------


def test_wic_threshold_on_separable_data():
    sims = [0.3, 0.1, 0.8, 0.2, 0.6]
    labels = ["F", "F", "T", "F", "T"]
    t = fit_wic_threshold(sims, labels)
    assert 0.3 < t < 0.6
    assert t == pytest.approx(0.45)  # the midpoint between the classes
    assert wic_accuracy(sims, labels, t) == 1.0


def test_wic_threshold_ties_go_to_smallest_candidate():
    sims = [0.1, 0.2, 0.3, 0.4, 0.5]
    labels = [True, False, True, False, True]
    # training accuracy of the candidates -0.9, .15, .25, .35, .45, 1.5: 3, 2, 3, 2, 3, 2 of 5
    t = fit_wic_threshold(sims, labels)
    assert t == pytest.approx(0.1 - 1.0)
    assert wic_accuracy(sims, labels, t) == pytest.approx(0.6)


def test_wic_threshold_handles_repeated_values_and_numeric_labels():
    sims = [0.5, 0.5, 0.5, 0.9]
    labels = [0, 0, 1, 1]
    # candidates: -0.5 (acc 2/4), 0.7 (acc 3/4), 1.9 (acc 2/4)
    assert fit_wic_threshold(sims, labels) == pytest.approx(0.7)


def test_evaluate_wic_reports_every_split():
    out = evaluate_wic(
        [0.1, 0.2, 0.7, 0.9], [False, False, True, True],
        [0.0, 0.5, 0.6], ["F", "T", "F"],
        [0.95, 0.05], [1, 0],
    )
    assert out["threshold"] == pytest.approx(0.45)
    assert out["train_accuracy"] == 1.0
    assert out["dev_accuracy"] == pytest.approx(2 / 3)
    assert out["test_accuracy"] == 1.0
    assert (out["n_train"], out["n_dev"], out["n_test"]) == (4, 3, 2)
    # training labels are balanced: the majority label is True (>= 0.5)
    assert out["majority_dev"] == pytest.approx(1 / 3)
    no_test = evaluate_wic([0.1, 0.9], [0, 1], [0.2], [0])
    assert math.isnan(no_test["test_accuracy"]) and no_test["n_test"] == 0


def test_wic_labels_are_validated():
    with pytest.raises(ValueError):
        wic_accuracy([0.1], ["maybe"], 0.0)
    with pytest.raises(ValueError):
        fit_wic_threshold([0.1, 0.2], [2, 0])


# --- regression -------------------------------------------------------------------------------


def test_polysemy_regression_hand_computed():
    # predictors +-1 (population SD 1, mean 0), orthogonal; y = 1.75 + 1.25 x + 0.75 w + e,
    # residuals +-0.25, RSS 0.25, dof 1, se = sqrt(0.25 / 4) = 0.25, TSS 8.75
    frame = pd.DataFrame(
        {
            "selfsim": [0.0, 1.0, 2.0, 4.0, 9.0],
            "n_senses": [-1, -1, 1, 1, None],
            "n_contexts": [-1, 1, -1, 1, 3],
        }
    )
    out = polysemy_regression(frame)
    t975_1 = 12.706204736174707  # Student t, 1 dof, 97.5% quantile (tabulated)
    assert out["n"] == 4
    assert out["intercept"] == pytest.approx(1.75)
    b = out["coefficients"]
    assert b["n_senses"]["coef"] == pytest.approx(1.25)
    assert b["n_contexts"]["coef"] == pytest.approx(0.75)
    assert b["n_senses"]["se"] == pytest.approx(0.25)
    assert b["n_senses"]["ci_low"] == pytest.approx(1.25 - t975_1 * 0.25)
    assert b["n_contexts"]["ci_high"] == pytest.approx(0.75 + t975_1 * 0.25)
    assert b["n_senses"]["t"] == pytest.approx(5.0)
    assert out["r2"] == pytest.approx(1 - 0.25 / 8.75)
    assert out["adj_r2"] == pytest.approx(1 - 3 * 0.25 / 8.75)
    assert out["predictor_correlation"]["n_senses"]["n_contexts"] == pytest.approx(0.0)


def test_polysemy_regression_exact_fit_with_correlated_predictors():
    rng = np.random.default_rng(3)
    senses = rng.integers(1, 30, size=50).astype(float)
    contexts = senses * 2 + rng.integers(5, 100, size=50)
    zs = (senses - senses.mean()) / senses.std()
    zc = (contexts - contexts.mean()) / contexts.std()
    y = 0.5 - 0.2 * zs + 0.1 * zc
    frame = pd.DataFrame({"selfsim": y, "n_senses": senses, "n_contexts": contexts})
    out = polysemy_regression(frame)
    assert out["coefficients"]["n_senses"]["coef"] == pytest.approx(-0.2)
    assert out["coefficients"]["n_contexts"]["coef"] == pytest.approx(0.1)
    assert out["intercept"] == pytest.approx(0.5)
    assert out["r2"] == pytest.approx(1.0)
    assert out["predictor_sd"]["n_senses"] == pytest.approx(senses.std())


def test_polysemy_regression_rejects_constant_predictor():
    with pytest.raises(ValueError):
        polysemy_regression(pd.DataFrame({"selfsim": [1, 2, 3], "n_senses": [1, 1, 1],
                                          "n_contexts": [1, 2, 3]}))


def test_transforms_have_their_defining_properties() -> None:
    from lmgeometry.measures import senses

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 200)) * np.linspace(1, 50, 200) + 7.0
    np.testing.assert_array_equal(senses.transform(X, "raw"), X)
    Z = senses.transform(X, "standardised")
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(Z.std(axis=0), 1, atol=1e-9)
    R = senses.transform(X, "top PCs removed")  # ceil(200 / 100) = 2 directions removed
    Xc = X - X.mean(axis=0)
    top = np.linalg.svd(Xc, full_matrices=False)[2][:2]
    np.testing.assert_allclose(R @ top.T, 0, atol=1e-6)
    with pytest.raises(ValueError, match="how must be"):
        senses.transform(X, "whitened")


def _toy_tables(gain: list[float], test: list[float] | None) -> tuple[pd.DataFrame, ...]:
    sep = pd.DataFrame({
        "layer": [0, 1, 2, 0, 1, 2], "transform": ["raw"] * 3 + ["standardised"] * 3,
        "accuracy_1nn": [0.4 + g for g in gain] + [0.3, 0.7, 0.5], "mfs_baseline": [0.4] * 6,
        "gain": gain + [-0.1, 0.3, 0.1], "n_words": [10] * 6, "model": "toy",
        "n_occurrences": [400] * 6,
        "silhouette": [0.01, 0.08, 0.05, 0.0, 0.1, 0.0],
    })
    wic = pd.DataFrame({"layer": [0, 1, 2], "transform": "raw", "model": "toy",
                        "dev_accuracy": [0.5, 0.52, 0.61],
                        "test_accuracy": test if test else [math.nan] * 3,
                        "n_test": [400 if test else 0] * 3})
    return sep, wic


def test_chapter_findings_and_summary_follow_the_numbers() -> None:
    from lmgeometry.chapters import senses as senses_chapter
    from lmgeometry.measures import stats

    sep, wic = _toy_tables([-0.1, 0.2, 0.1], [0.5, 0.5, 0.6])
    views = pd.DataFrame({"layer": [0, 2, 0, 2], "method": ["pca", "pca", "umap", "umap"],
                          "n_words": 3, "accuracy_1nn": [0.3, 0.35, 0.5, 0.45],
                          "accuracy_full": [0.5, 0.6, 0.5, 0.6], "mfs_baseline": 0.4})
    text = " ".join(senses_chapter.findings(sep, wic, "toy", views))
    assert "beats the most-frequent-sense baseline in 2 of 3 layers" in text
    assert "best at layer 1 of 2 (50% of the depth), with 60.0% against 40.0% (+20.0 points" in text
    assert "at layer 0 the gain is -10.0 points" in text
    lo, hi = stats.wilson_interval(0.6, 400)  # layer 2 (50%) is below lo: no plateau
    assert f"No other layer reaches the 95% Wilson interval of the best accuracy ({lo:.1%}" in text
    flat, _ = _toy_tables([-0.1, 0.2, 0.19], None)
    assert "Layers 1-2 all reach" in " ".join(senses_chapter.findings(flat, wic, "toy"))
    assert "silhouette peaks at 0.08 (layer 1;" in text
    assert "best on dev at layer 2 (61.0%; layer 0: 50.0%" in text
    lo, hi = stats.wilson_interval(0.6, 400)
    assert f"test accuracy is 60.0% (95% interval {lo:.1%} to {hi:.1%}" in text
    assert "above chance" in text
    assert "With standardised, the best 1-NN gain is +30.0 points (layer 1; raw: +20.0" in text
    assert "2-D PCA views (3 words) at most 35.0% (layer 2; the same occurrences" in text
    assert "full space: 60.0%, MFS 40.0%; the view keeps -25% of the full space's gain" in text
    assert "2-D UMAP views (3 words) at most 50.0% (layer 0" in text and "keeps 100%" in text
    summ = senses_chapter.summary(sep, wic).loc["toy"]
    assert summ["1-NN beats MFS by > 5 points somewhere"] and summ["WiC dev > 55% somewhere"]


def test_chapter_findings_say_when_baselines_win_and_test_labels_are_missing() -> None:
    from lmgeometry.chapters import senses as senses_chapter

    sep, wic = _toy_tables([-0.1, -0.02, -0.05], None)
    text = " ".join(senses_chapter.findings(sep, wic, "toy"))
    assert "never beats the most-frequent-sense baseline (in any of 3 layers)" in text
    assert "comes closest at layer 1 of 2" in text
    assert "no test labels were available, so only dev is reported" in text
    assert not senses_chapter.summary(sep, wic).loc["toy", "1-NN beats MFS by > 5 points somewhere"]


def test_wilson_interval_textbook_value() -> None:
    from lmgeometry.measures.stats import wilson_interval

    lo, hi = wilson_interval(0.5, 100)  # 50 of 100: 0.4038 to 0.5962
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(0.0, 10)  # 0 of 10: 0 to z^2 / (n + z^2) = 0.2775
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0.5, 0))


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


def test_context_snippet_brackets_the_word() -> None:
    from lmgeometry.chapters.senses import context_snippet

    assert context_snippet("I ran home", 2, 5, 3) == "I [ran] ho..."
    assert context_snippet("We ran", 3, 6, 40) == "We [ran]"
    assert context_snippet("abcdefgh ran", 9, 12, 2) == "...h [ran]"


def test_view_separability_scores_the_projection_not_the_full_space(tmp_path) -> None:
    from lmgeometry.chapters.senses import view_separability

    # the full space: senses perfectly separated along one axis each
    full = np.array([[1, 0], [1, 0.1], [0, 1], [0.1, 1]], dtype=np.float64)
    store = array_store(tmp_path, [full] * 4, {"text": ["w"] * 4})

    # 2-D view at layer 0 mixes the senses (each point's nearest is the other sense);
    # at layer 3 it separates them.
    mixed = np.array([[0.0, 0], [2, 0], [1, 0], [3, 0]])
    clean = np.array([[0.0, 0], [0.1, 0], [5, 0], [5.1, 0]])
    views = {"coords": {"w": [mixed, clean]}, "keys": {"w": np.array(["a", "a", "b", "b"])},
             "rows": {"w": np.arange(4)}}
    out = view_separability(views, [0, 3], "pca", store)
    assert out["layer"].tolist() == [0, 3] and (out["n_words"] == 1).all()
    # mixed: 0->[1] b wrong; 2->ties 1 and 3 (b, b) wrong; 1->ties 0 and 2 (a, a) wrong;
    # 3->2 a wrong
    assert out["accuracy_1nn"].tolist() == pytest.approx([0.0, 1.0])
    assert out["accuracy_full"].tolist() == pytest.approx([1.0, 1.0])
    assert out["mfs_baseline"].tolist() == pytest.approx([0.0, 0.0])


def test_choice_layer_slider_dropdown_and_slider_touch_different_properties() -> None:
    from lmgeometry.report.plots import choice_layer_slider

    coords = {"bank": [np.zeros((3, 2)), np.ones((3, 2))],
              "run": [np.full((2, 2), 2.0), np.full((2, 2), 3.0)]}
    color = {"bank": np.array(["river", "money", "river"]), "run": np.array(["go", "go"])}
    fig = choice_layer_slider(coords, ["0", "6"], color, "sense", title="t", background="river")
    assert [t.name for t in fig.data] == ["money", "river", "go"]
    assert fig.data[1].marker.color == "rgba(160,160,160,0.6)"
    assert [t.visible for t in fig.data] == [True, True, False]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["bank", "run"]
    assert buttons[1].args[0] == {"visible": [False, False, True]}
    steps = fig.layout.sliders[0].steps
    assert [st.label for st in steps] == ["0", "6"]
    assert set(steps[1].args[0]) == {"x", "y"}  # the slider leaves visibility alone
    assert steps[1].args[0]["x"] == [[1.0], [1.0, 1.0], [3.0, 3.0]]
    with pytest.raises(ValueError, match="layers"):
        choice_layer_slider({"bank": [np.zeros((3, 2))]}, ["0", "6"], color, "sense")


def test_spread_layers_keeps_ends() -> None:
    from lmgeometry.chapters.senses import spread_layers

    assert spread_layers(31, 16) == list(range(0, 31, 2))
    assert spread_layers(13, 20) == list(range(13))
    assert spread_layers(13, 3) == [0, 6, 12]
    assert spread_layers(5, 1) == [4]


def _polysemy_toy() -> pd.DataFrame:
    ctx = np.array([5, 6, 8, 10, 20, 40, 7, 12], dtype=float)
    sen = np.array([1, 2, 1, 2, 1, 2, 1, 2], dtype=float)  # uncorrelated with ctx
    frames = []
    for layer, slope in ((1, -0.2), (2, 0.0)):
        frames.append(pd.DataFrame({
            "layer": layer, "word": [f"w{i}" for i in range(8)], "n_senses": sen,
            "n_sentences": ctx, "log_senses": np.log(sen), "log_contexts": np.log(ctx),
            "selfsim": 0.9 + slope * np.log(ctx) + 0.05 * (layer == 2) * np.log(sen),
        }))
    return pd.concat(frames, ignore_index=True)


def test_polysemy_by_layer_recovers_exact_coefficients() -> None:
    from lmgeometry.chapters.senses import polysemy_by_layer

    tables = _polysemy_toy()
    out = polysemy_by_layer(tables).set_index("layer")
    sd_ctx = np.log(tables["n_sentences"][:8]).std(ddof=0)
    sd_sen = np.log(tables["n_senses"][:8]).std(ddof=0)
    assert out.loc[1, "coef_log_contexts"] == pytest.approx(-0.2 * sd_ctx)
    assert out.loc[1, "coef_log_senses"] == pytest.approx(0.0, abs=1e-12)
    assert out.loc[2, "coef_log_contexts"] == pytest.approx(0.0, abs=1e-12)
    assert out.loc[2, "coef_log_senses"] == pytest.approx(0.05 * sd_sen)
    assert out.loc[1, "r2"] == pytest.approx(1.0) and (out["n_words"] == 8).all()


def test_selfsim_by_bins_means_and_labels() -> None:
    from lmgeometry.chapters.senses import selfsim_by_bins

    tables = pd.DataFrame({"layer": [1, 1, 1, 1, 2], "n_senses": [1, 2, 3, 9, 1],
                           "selfsim": [0.5, 0.2, 0.4, 0.1, 0.7]})
    out = selfsim_by_bins(tables, "n_senses", [1, 2, 4, math.inf])
    assert out["bin"].tolist() == ["1", "2-3", "4+", "1"]
    assert out["layer"].tolist() == [1, 1, 1, 2]
    assert out["mean_selfsim"].tolist() == pytest.approx([0.5, 0.3, 0.1, 0.7])
    assert out["n_words"].tolist() == [1, 2, 1, 1]


def test_polysemy_findings_count_layers_from_the_intervals() -> None:
    from lmgeometry.chapters.senses import polysemy_findings

    frame = pd.DataFrame({
        "layer": [1, 2, 3], "n_words": 50, "r2": [0.1, 0.2, 0.3],
        "coef_log_contexts": [-0.3, -0.2, 0.01], "ci_low_log_contexts": [-0.4, -0.3, -0.1],
        "ci_high_log_contexts": [-0.2, -0.1, 0.1],
        "coef_log_senses": [-0.1, 0.3, 0.0], "ci_low_log_senses": [-0.2, 0.1, -0.1],
        "ci_high_log_senses": [0.05, 0.5, 0.1],
    })
    text = polysemy_findings(frame, "toy")[0]
    assert "(50 words)" in text
    assert "excludes zero in 2 of 3 layers (2 of them negative" in text
    assert "the number of senses in 1 of 3 (0 negative)" in text
    assert "larger in size in 2 of 3 layers" in text and "median R^2 is 0.20" in text


def test_occurrence_views_lump_rare_senses_but_keep_their_keys(tmp_path) -> None:
    from lmgeometry.chapters.senses import RARE_SENSES, occurrence_views, word_views

    rng = np.random.default_rng(0)
    keys = ["x%1"] * 4 + ["y%1"] * 3 + ["z%1"] * 2 + [None]
    words = pd.DataFrame({
        "target": ["w.n"] * 9 + ["w.n"], "sense_key": keys, "text": ["w"] * 10,
        "sentence_id": range(10), "start": 2, "end": 3,
    })

    X = rng.normal(size=(10, 5))
    st = array_store(tmp_path, [X * (i + 1) for i in range(3)], words)
    v = occurrence_views(st, "w.n", [0, 2], "pca", sentences=["a w b"] * 10)
    assert v["rows"].tolist() == list(range(9))  # the untagged occurrence is left out
    assert v["keys"].tolist() == keys[:9]
    assert (v["senses"][7:] == RARE_SENSES.format(k=3)).all()
    assert len(set(v["senses"][:7])) == 2 and v["hover"][0] == "a [w] b"
    assert len(v["panels"]) == 2 and v["panels"][1].shape == (9, 2)
    both = word_views(st, ["w.n"], [0], "pca")
    assert set(both) == {"coords", "color", "hover", "keys", "rows", "background"}
    assert both["background"] == RARE_SENSES.format(k=3)
    with pytest.raises(ValueError, match="method"):
        occurrence_views(st, "w.n", [0], "tsne")
