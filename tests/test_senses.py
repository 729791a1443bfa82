"""Sense separability, WiC thresholds and the polysemy regression on hand-built cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

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


def test_selfsim_by_bins_means_and_labels() -> None:
    from lmgeometry.chapters.senses import selfsim_by_bins

    tables = pd.DataFrame({"layer": [1, 1, 1, 1, 2], "n_senses": [1, 2, 3, 9, 1],
                           "selfsim": [0.5, 0.2, 0.4, 0.1, 0.7]})
    out = selfsim_by_bins(tables, "n_senses", [1, 2, 4, math.inf])
    assert out["bin"].tolist() == ["1", "2-3", "4+", "1"]
    assert out["layer"].tolist() == [1, 1, 1, 2]
    assert out["mean_selfsim"].tolist() == pytest.approx([0.5, 0.3, 0.1, 0.7])
    assert out["n_words"].tolist() == [1, 2, 1, 1]


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


def test_cohens_h_known_values() -> None:
    from lmgeometry.measures.stats import cohens_h

    assert cohens_h(0.6, 0.5) == pytest.approx(0.2014, abs=1e-4)  # 10 points above 50%
    assert cohens_h(0.5, 0.5) == 0.0 and cohens_h(1.0, 0.0) == pytest.approx(math.pi)
    np.testing.assert_allclose(cohens_h([0.95, 0.5], 0.85), [0.3444, -0.7754], atol=1e-4)


# --- the chapter on planted stores --------------------------------------------------------------


def _semcor_store(folder, rng, *, n_words=6, kind="decoder", shards=None):
    """Targets whose two senses separate from layer 1 on (mixed at layer 0), sampled
    60/40 while the natural weights are 3:1; and filler words for the fits."""
    rows, vectors = [], []
    d = 16
    for w in range(n_words):
        base = rng.normal(size=d) * 3
        direction = rng.normal(size=d)
        for k, count in enumerate((30, 20)):
            for _ in range(count):
                sid = len(rows)
                rows.append({"sentence_id": sid, "word_index": int(sid % 7 != 0),
                             "text": f"w{w}", "target": f"w{w}.n",
                             "sense_key": f"w{w}%1:0{k}:00::"})
                noise = rng.normal(size=d) * 0.3
                vectors.append((base + noise, base + (2 * k - 1) * 2 * direction + noise))
    for i in range(300):
        rows.append({"sentence_id": 1000 + i, "word_index": i % 5, "text": "filler",
                     "target": None, "sense_key": None})
        v = rng.normal(size=d) * 3
        vectors.append((v, v))
    layer0 = np.array([v[0] for v in vectors])
    later = np.array([v[1] for v in vectors])
    words = pd.DataFrame(rows)
    weights = {k: (3.0 if k.endswith("%1:00:00::") else 1.0)
               for k in words["sense_key"].dropna().unique()}
    store = array_store(folder, [layer0, later, later * 1.1], words, name=f"toy-{kind}",
                        kind=kind, shards=shards)
    return store, weights


def _wic_store(folder, rng, kind="decoder", shards=None):
    """Same-sense pairs share a vector (up to noise) from layer 1 on; other pairs do not."""
    d, pairs, vectors, words = 8, [], [], []
    for i, split in enumerate(["train"] * 100 + ["dev"] * 60 + ["test"] * 80):
        same = i % 2 == 0
        a = rng.normal(size=d)
        b = a + rng.normal(size=d) * 0.1 if same else rng.normal(size=d)
        for k, v in enumerate((a, b)):
            words.append({"sentence_id": 2 * i + k, "word_index": 1, "text": "t"})
            vectors.append((rng.normal(size=d), v))
        pairs.append({"split": split, "label": same, "row1": 2 * i, "row2": 2 * i + 1})
    layer0 = np.array([v[0] for v in vectors])
    later = np.array([v[1] for v in vectors])
    store = array_store(folder, [layer0, later, later], pd.DataFrame(words),
                        name=f"toy-{kind}", kind=kind, shards=shards)
    return store, pd.DataFrame(pairs)


def _sts_store(folder, rng, kind="decoder", shards=None):
    """A word's vectors spread more the more sentences it is in; its sense count is
    unrelated; 'the' has no WordNet entry."""
    d, words, vectors, sid = 12, [], [], 0
    for w in range(120):
        contexts = int(rng.integers(5, 60))
        senses = int(rng.integers(1, 12))
        base = rng.normal(size=d)
        spread = 0.2 + 0.4 * np.log(contexts)
        for _ in range(contexts):
            words.append({"sentence_id": sid, "word_index": 1, "text": f"w{w}",
                          "n_senses": senses, "is_punct": False})
            vectors.append(base + rng.normal(size=d) * spread)
            sid += 1
    for _ in range(30):
        words.append({"sentence_id": sid, "word_index": 0, "text": "the", "n_senses": None,
                      "is_punct": False})
        vectors.append(rng.normal(size=d))
        sid += 1
    X = np.array(vectors)
    frame = pd.DataFrame(words).astype({"n_senses": "Int16"})
    return array_store(folder, [X, X, X * 2], frame, name=f"toy-{kind}", kind=kind,
                       shards=shards)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    from lmgeometry.chapters import senses as chapter

    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("senses")
    semcor, weights = _semcor_store(root / "semcor", rng)
    wic, pairs = _wic_store(root / "wic", rng)
    sts = _sts_store(root / "sts", rng)
    result = chapter.analyse({"toy": semcor}, {"toy": wic}, {"toy": sts}, wic_pairs=pairs,
                             sense_weights=weights, n_boot=200, n_draws=3, fit_rows=200,
                             umap_words=0, view_layers=3)  # UMAP: see the slow test
    return result, weights


def test_chapter_tables_are_tidy_per_layer(planted) -> None:
    result, _ = planted
    sep = result.tables["separability"]
    assert list(sep.columns[:4]) == ["model", "layer", "depth", "control"]
    assert set(sep["control"]) == {"none", "first word excluded"}
    assert set(sep["protocol"]) == {"natural", "as sampled"}
    raw = sep[(sep["transform"] == "raw") & (sep["control"] == "none")].set_index(
        ["protocol", "layer"])
    # planted: senses mixed at layer 0, separated after; the natural MFS is 3/4-ish, the
    # balanced sample's 60%
    assert raw.loc[("natural", 2), "accuracy_1nn"] == pytest.approx(1.0)
    assert raw.loc[("natural", 0), "mfs_baseline"] > 0.7
    assert raw.loc[("as sampled", 0), "mfs_baseline"] == pytest.approx(0.6, abs=0.02)
    assert raw.loc[("as sampled", 2), "silhouette"] > 0.5
    for col in ("accuracy_1nn", "cohen_h", "gain"):
        assert (sep[f"{col}_lo"] <= sep[col] + 1e-12).all()
        assert (sep[col] <= sep[f"{col}_hi"] + 1e-12).all()
    views = result.tables["views"]
    assert set(views["method"]) == {"PCA of all words", "PCA of one word"}
    by = views[(views["control"] == "none")].set_index(["method", "layer"])
    # senses separated from layer 1 on: each word's own PCA shows them, the PCA of all
    # words (dominated by the words' own offsets) less so
    assert by.loc[("PCA of one word", 2), "accuracy_view"] == pytest.approx(1.0)
    assert by.loc[("PCA of one word", 0), "accuracy_full"] < 0.9
    wic = result.tables["wic"]
    best = wic[(wic["transform"] == "raw") & (wic["layer"] == 1)].iloc[0]
    assert best["test_accuracy"] == 1.0 and best["n_test"] == 80
    poly = result.tables["polysemy"]
    assert set(poly["sample"]) == {"WordNet words", "all words, no entry = 1 sense"}
    wn = poly[(poly["sample"] == "WordNet words") & (poly["control"] == "none")]
    assert (wn["n_words"] == 120).all() and (wn["n_without_entry"] == 1).all()  # "the"
    assert (poly["layer"] >= 1).all()


def test_chapter_claims_follow_the_planted_structure(planted) -> None:
    result, _ = planted
    claims = result.claims.set_index(["claim", "control"])
    verdict = claims["verdict"]
    for control in ("none", "first word excluded"):
        def v(prefix: str, control: str = control) -> str:
            return verdict[[c for c, k in verdict.index if c.startswith(prefix)
                            and k == control][0], control]
        assert v("senses separate") == "holds"  # 100% against ~75%
        assert v("a word's occurrences are not") == "does not hold"  # tight sense clusters
        assert v("beyond the paper: a cosine threshold") == "holds"
        assert v("words seen in more contexts") == "holds"
    assert len(result.claims) == 2 * len(senses_chapter_claims())
    finite = result.claims.dropna(subset=["value"])
    assert (finite["ci_low"] <= finite["value"] + 1e-12).all()
    senses = claims.loc[[c for c in claims.index if c[0].startswith("more senses")]]
    assert (senses["value"].abs() < 0.2).all()  # planted: the sense count does nothing
    assert any("no WordNet entry" in s for s in result.sentences)
    assert any(s.startswith("The most-frequent-sense baseline is") for s in result.sentences)


def test_chapter_views_are_drawn_for_the_figures(planted) -> None:
    result, _ = planted
    views = result.views["toy"]
    assert set(views) == {"pca"}
    pca = views["pca"]
    assert pca["layers"] == [0, 1, 2] and len(pca["coords"]) == 6
    assert len(pca["coords"]["w0.n"]) == 3 and pca["coords"]["w0.n"][0].shape == (50, 2)
    assert pca["hover"]["w0.n"][0] == "w0"
    umap = result.claims[result.claims["claim"] == "senses cluster in UMAP views"]
    assert (umap["verdict"] == "inconclusive").all()
    assert umap["evidence"].str.contains("not computed").all()


@pytest.mark.slow
def test_chapter_umap_views_show_planted_senses(tmp_path) -> None:
    from lmgeometry.chapters import senses as chapter

    rng = np.random.default_rng(5)
    semcor, weights = _semcor_store(tmp_path / "semcor", rng, n_words=3, kind="encoder")
    wic, pairs = _wic_store(tmp_path / "wic", rng, kind="encoder")
    sts = _sts_store(tmp_path / "sts", rng, kind="encoder")
    result = chapter.analyse({"toy": semcor}, {"toy": wic}, {"toy": sts}, wic_pairs=pairs,
                             sense_weights=weights, n_boot=100, n_draws=2, fit_rows=200,
                             umap_words=2, view_layers=3)
    views = result.tables["views"]
    umap = views[views["method"] == "UMAP of one word"].set_index("layer")
    assert (umap["n_words"] == 2).all() and umap.loc[2, "accuracy_view"] > 0.95
    claim = result.claims.set_index("claim").loc["senses cluster in UMAP views"]
    assert claim["verdict"] == "holds"
    assert len(result.views["toy"]["umap"]["coords"]) == 2


def senses_chapter_claims():
    from lmgeometry.chapters.senses import CLAIMS

    return CLAIMS


def test_chapter_is_the_same_on_sharded_stores(tmp_path, planted) -> None:
    """The senses chapter reads its stores through `Store` only: the planted stores laid out
    as sharded entries (three shards of whole sentences each) give the same tables."""
    from lmgeometry.chapters import senses as chapter

    rng = np.random.default_rng(0)  # the planted fixture's draws, in its order
    semcor, weights = _semcor_store(tmp_path / "semcor", rng, shards=3)
    wic, pairs = _wic_store(tmp_path / "wic", rng, shards=3)
    sts = _sts_store(tmp_path / "sts", rng, shards=3)
    assert all(len(s.shards) == 3 for s in (semcor, wic, sts))
    result = chapter.analyse({"toy": semcor}, {"toy": wic}, {"toy": sts}, wic_pairs=pairs,
                             sense_weights=weights, n_boot=200, n_draws=3, fit_rows=200,
                             umap_words=0, view_layers=3)
    expected = planted[0]
    assert result.tables.keys() == expected.tables.keys()
    for name, table in result.tables.items():
        pd.testing.assert_frame_equal(table, expected.tables[name], obj=name)
    pd.testing.assert_frame_equal(result.claims, expected.claims)
