"""Chapter 5 (senses, lmgeometry.chapters.senses.analysis): its helpers, and ``analyse`` on planted
SemCor, WiC and STS stores (tidy tables, claims, views, sharded stores)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import array_store


def test_context_snippet_brackets_the_word() -> None:
    from lmgeometry.chapters.senses.analysis import context_snippet

    assert context_snippet("I ran home", 2, 5, 3) == "I [ran] ho..."
    assert context_snippet("We ran", 3, 6, 40) == "We [ran]"
    assert context_snippet("abcdefgh ran", 9, 12, 2) == "...h [ran]"



def test_spread_layers_keeps_ends() -> None:
    from lmgeometry.chapters.senses.analysis import spread_layers

    assert spread_layers(31, 16) == list(range(0, 31, 2))
    assert spread_layers(13, 20) == list(range(13))
    assert spread_layers(13, 3) == [0, 6, 12]
    assert spread_layers(5, 1) == [4]



def test_selfsim_by_bins_means_and_labels() -> None:
    from lmgeometry.chapters.senses.analysis import selfsim_by_bins

    tables = pd.DataFrame({"layer": [1, 1, 1, 1, 2], "n_senses": [1, 2, 3, 9, 1],
                           "selfsim": [0.5, 0.2, 0.4, 0.1, 0.7]})
    out = selfsim_by_bins(tables, "n_senses", [1, 2, 4, math.inf])
    assert out["bin"].tolist() == ["1", "2-3", "4+", "1"]
    assert out["layer"].tolist() == [1, 1, 1, 2]
    assert out["mean_selfsim"].tolist() == pytest.approx([0.5, 0.3, 0.1, 0.7])
    assert out["n_words"].tolist() == [1, 2, 1, 1]



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
    from lmgeometry.chapters.senses import analysis as chapter

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


def test_claims_that_read_senses_get_their_null_with_the_senses_permuted(planted) -> None:
    result, _ = planted
    claims = result.claims[result.claims["control"] == "none"].set_index("claim")
    polysemy = [c for c in claims.index if c.startswith(("words seen", "more senses"))]
    # more contexts, less self-similar: the planted effect fails with the counts permuted
    contexts = claims.loc[polysemy[0]] if polysemy[0].startswith("words") else \
        claims.loc[polysemy[1]]
    assert contexts["null_model"] == "labels permuted: toy"
    assert contexts["verdict"] == "holds" and contexts["null_verdict"] != "holds"
    assert contexts["null_ci_low"] <= 0 <= contexts["null_ci_high"] and contexts["discriminates"]
    # more senses, no less self-similar: a claim of absence keeps no null (a permuted null
    # would meet it by construction)
    absence = [c for c in polysemy if c.startswith("more senses")]
    assert (claims.loc[absence, "null_model"] == "").all()
    assert (claims.loc["senses cluster in UMAP views", "null_model"] == "")  # no UMAP views
    labelled = claims.drop(index=[*polysemy, "senses cluster in UMAP views"])
    assert len(labelled) == 4 and (labelled["null_model"] == "labels permuted: toy").all()

    def row(prefix: str) -> pd.Series:
        return labelled.loc[[c for c in labelled.index if c.startswith(prefix)][0]]

    # the planted senses separate; permuted, the nearest occurrence is right less often than
    # the most frequent sense (1-NN on random senses scores sum p^2 < max p): the rule fails
    separate = row("senses separate")
    assert separate["verdict"] == "holds" and separate["null_ci_high"] < 0
    assert separate["discriminates"]
    # a claim of absence holds on permuted senses by construction (no sense clusters there)
    points = row("a word's occurrences are not")
    assert points["null_verdict"] == "holds" and abs(points["null_value"]) < 0.15
    # WiC's threshold on permuted labels: about half right on a balanced test set
    wic = row("beyond the paper: a cosine threshold")
    assert wic["null_ci_low"] <= 0.5 <= wic["null_ci_high"] and wic["discriminates"]
    table = result.tables["wic"]
    assert table.loc[table["transform"] == "raw", "permuted_test_accuracy"].notna().all()
    assert table.loc[table["transform"] != "raw", "permuted_test_accuracy"].isna().all()


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
    from lmgeometry.chapters.senses import analysis as chapter

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
    from lmgeometry.chapters.senses.analysis import CLAIMS

    return CLAIMS


def test_chapter_is_the_same_on_sharded_stores(tmp_path, planted) -> None:
    """The senses chapter reads its stores through `Store` only: the planted stores laid out
    as sharded entries (three shards of whole sentences each) give the same tables."""
    from lmgeometry.chapters.senses import analysis as chapter

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


def test_notebook_tables_are_the_old_notebook_expressions():
    """Chapter 5's hidden cells, moved into named calls: the old expressions are the
    reference, on planted frames."""
    from lmgeometry.chapters.senses.analysis import (
        best_rows,
        coefficients_long,
        polysemy_means,
        view_accuracy_table,
    )

    views = pd.DataFrame({"model": ["z", "z", "z", "a"], "method": ["pca", "pca", "umap", "pca"],
                          "control": ["none", "none", "first", "none"],
                          "accuracy_view": [0.5, 0.7, 0.9, 0.2],
                          "accuracy_full": [0.8, 0.6, 0.9, 0.3],
                          "mfs_baseline": [0.4, 0.4, 0.4, 0.1]})
    old = views[views["control"] == "none"].groupby(["model", "method"])[
        ["accuracy_view", "accuracy_full", "mfs_baseline"]].max()
    pd.testing.assert_frame_equal(view_accuracy_table(views), old)
    assert old.loc[("z", "pca")].tolist() == [0.7, 0.8, 0.4]

    sep = pd.DataFrame({"model": ["z", "z", "a", "a"], "control": ["none"] * 4,
                        "transform": ["raw"] * 4, "protocol": ["natural"] * 4,
                        "layer": [0, 1, 0, 1], "cohen_h": [0.1, 0.3, 0.3, 0.3]})
    keys = ["model", "control", "transform", "protocol"]
    old = sep.loc[sep.groupby(keys)["cohen_h"].idxmax()]
    pd.testing.assert_frame_equal(best_rows(sep, keys, "cohen_h"), old)
    assert old["layer"].tolist() == [0, 1]  # a's tie: its first row; groups sorted

    poly = pd.DataFrame({"model": ["z", "z", "a"], "control": ["none"] * 3,
                         "sample": ["WordNet words"] * 3, "n_words": [10, 20, 5],
                         "n_without_entry": [1, 3, 0], "r2": [0.1, 0.3, 0.2]}
                        | {f"beta_{c}{end}": [0.1, 0.2, 0.3] for c in ("senses", "contexts")
                           for end in ("", "_lo", "_hi")})
    old = pd.concat(
        [poly.assign(predictor=name, beta=poly[f"beta_{col}"], lo=poly[f"beta_{col}_lo"],
                     hi=poly[f"beta_{col}_hi"])
         for name, col in (("senses", "senses"), ("contexts", "contexts"))],
        ignore_index=True)
    pd.testing.assert_frame_equal(coefficients_long(poly), old)
    assert old["predictor"].tolist() == ["senses"] * 3 + ["contexts"] * 3
    old = poly.groupby(["model", "control", "sample"])[
        ["n_words", "n_without_entry", "beta_senses", "beta_contexts", "r2"]].mean()
    pd.testing.assert_frame_equal(polysemy_means(poly), old)
    assert old.loc[("z", "none", "WordNet words"), "n_words"] == 15
