import json

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

from lmgeometry.activations.entry import write_meta
from lmgeometry.activations.store import Store
from lmgeometry.chapters.geometry.special import PUNCTUATION
from lmgeometry.measures.clusters import (
    detect_clusters,
    pca_project,
    position_bins,
    r2_replicates,
    separation_ratio,
    separation_replicates,
    variance_explained_by,
    variance_explained_jackknife,
)
from lmgeometry.measures.similarity import subsample
from lmgeometry.measures.stats import GroupBootstrap


def two_blobs(n=400, d=20, gap=20.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[: n // 4, 0] += gap  # a small cluster far along one axis
    labels = np.zeros(n, dtype=int)
    labels[: n // 4] = 1
    return X, labels


def test_subsample_is_seeded_and_bounded():
    a, b = subsample(1000, 100, seed=3), subsample(1000, 100, seed=3)
    assert np.array_equal(a, b) and len(a) == 100 and len(np.unique(a)) == 100
    assert np.array_equal(subsample(50, 100), np.arange(50))


def test_pca_on_rank_one_data_explains_everything():
    rng = np.random.default_rng(0)
    X = np.outer(rng.normal(size=200), rng.normal(size=10))
    _, explained = pca_project(X, n_components=2)
    assert explained[0] == pytest.approx(1.0, abs=1e-6)


def test_detect_clusters_finds_two_separated_blobs_with_largest_first():
    X, truth = two_blobs()
    result = detect_clusters(X, max_k=4)
    assert result.k == 2
    assert result.silhouette > 0.5
    assert result.separation > 3
    # cluster 0 is the larger one (the 75% without the shift)
    agreement = (result.labels == (truth == 1).astype(int)).mean()
    assert agreement == 1.0


def test_detect_clusters_calls_a_gaussian_one_cloud():
    X = np.random.default_rng(1).normal(size=(400, 20))
    result = detect_clusters(X, max_k=4)
    assert result.k == 1 and np.all(result.labels == 0)


def test_separation_ratio_is_scale_and_shift_invariant():
    X, labels = two_blobs()
    r = separation_ratio(X, labels)
    assert separation_ratio(5.0 * X + 3.0, labels) == pytest.approx(r)
    # centroid gap 20 along one axis, radius sqrt(20) in each blob
    assert r == pytest.approx(20 / np.sqrt(20), rel=0.1)


def test_variance_explained_by_known_cases():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(10), 50)
    means = rng.normal(size=(10, 5)) * 10
    exact = means[groups]
    assert variance_explained_by(
        exact + 1e-9 * rng.normal(size=exact.shape), groups
    ) == pytest.approx(1.0, abs=1e-6)
    noise = rng.normal(size=(500, 5))
    assert abs(variance_explained_by(noise, groups)) < 0.02  # unrelated grouping: about 0
    assert variance_explained_by(noise, groups, adjusted=False) > variance_explained_by(
        noise, groups
    )
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    X = exact + noise
    assert variance_explained_by(X @ Q * 7 + 1, groups) == pytest.approx(
        variance_explained_by(X, groups)
    )


def test_position_bins():
    assert list(position_bins(np.array([0, 1, 2, 3, 4, 7, 8, 40]))) == [0, 1, 2, 2, 3, 3, 4, 6]


def test_variance_explained_jackknife_replicates_are_the_statistic_without_each_block():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 40, 500)
    X = rng.normal(size=(500, 6)) + 3 * rng.normal(size=(40, 6))[groups]
    blocks = np.arange(500) // 5 % 10
    value, reps = variance_explained_jackknife(X, groups, blocks)
    assert value == pytest.approx(variance_explained_by(X, groups))
    for j in (0, 7):
        keep = blocks != j
        assert reps[j] == pytest.approx(variance_explained_by(X[keep], groups[keep]))
    # a group that lives only in one block vanishes from that replicate
    groups[blocks == 3] = 99
    value, reps = variance_explained_jackknife(X, groups, blocks)
    keep = blocks != 3
    assert reps[3] == pytest.approx(variance_explained_by(X[keep], groups[keep]))


def test_separation_and_r2_replicates_match_their_statistics():
    X, labels = two_blobs()
    boot = GroupBootstrap(np.arange(len(X)) // 4, n_boot=200, rng=1)
    value, reps = separation_replicates(X, labels, boot)
    assert value == pytest.approx(separation_ratio(X, labels))
    assert np.quantile(reps, 0.025) < value < np.quantile(reps, 0.975)
    y = np.arange(len(X), dtype=float)
    assert r2_replicates(y, y, boot)[0] == 1.0
    assert r2_replicates(y, np.full_like(y, y.mean()))[0] == pytest.approx(0.0)


def _store(tmp_path, layers, words, kind):
    """An array store whose meta names the model's kind (decoders get both controls)."""
    store = array_store(tmp_path / kind, layers, words, name=f"toy-{kind}")
    meta = json.loads((store.path / "meta.json").read_text())
    meta["model"].update(kind=kind, spec=f"toy-{kind}")
    write_meta(store.path, meta)  # sealed again
    return Store(store.path)


def _sentences(n_sent=80, length=10, seed=0):
    rng = np.random.default_rng(seed)
    position = np.tile(np.arange(length), n_sent)
    return rng, pd.DataFrame({
        "sentence_id": np.repeat(np.arange(n_sent), length), "word_index": position,
        "text": rng.choice(list("abcdefghij"), size=len(position)),
        "upos": rng.choice(["NOUN", "DET", "VERB"], size=len(position))})


def _decoder_layers(rng, words, width=12):
    """Five layers: noise; then the first words far out (an attention sink) and the later
    words on a Swiss roll of their position; the last layer brings the first words back."""
    position = words["word_index"].to_numpy()
    first = position == 0
    t = 1.5 * np.pi * (1 + 2 * position / position.max())
    roll = np.zeros((len(words), width))
    roll[:, 0], roll[:, 1], roll[:, 2] = t * np.cos(t), 8 * rng.random(len(words)), t * np.sin(t)
    layers = [rng.normal(size=(len(words), width))]
    for offset in (60.0, 60.0, 60.0, 10.0):
        X = roll + 0.1 * rng.normal(size=roll.shape)
        X[first] = 0.1 * rng.normal(size=(first.sum(), width))
        X[first, 5] += offset
        layers.append(X.astype(np.float32))
    return layers


def test_analyse_finds_the_planted_decoder_geometry(tmp_path):
    from lmgeometry.chapters.geometry import analysis as geometry

    rng, words = _sentences()
    store = _store(tmp_path, _decoder_layers(rng, words), words, "decoder")
    result = geometry.analyse({"dec": store}, n_words=800, point_budget=200, umap_layers=0,
                              n_boot=200)
    layers = result.tables["layers"]
    assert list(layers.columns[:4]) == ["model", "layer", "depth", "control"]
    none = layers[layers["control"] == "none"].set_index("layer")
    assert none["split"].tolist() == [False, True, True, True, False]
    assert (none.loc[1:3, "first_share"] == 1.0).all()
    assert (none.loc[1:3, "first_recall"] == 1.0).all()
    assert (none.loc[1:3, "knn_r2"] > 0.9).all()
    # the first principal component is the gap: the roll's third axis falls off the 3-D view
    assert (none.loc[1:3, "larger_planar"] > 0.99).all()
    assert none.loc[[0, 4], "larger_planar"].isna().all()  # no split, no larger cluster
    verdicts = result.claims.set_index(["claim", "control"])["verdict"]
    assert verdicts[("the representations split into two well-separated clusters",
                     "none")] == "holds"
    assert verdicts[("one of the clusters is the sentences' first words", "none")] == "holds"
    assert verdicts[("the separation of the clusters decreases in the last layer",
                     "none")] == "holds"
    manifold = "within the larger cluster, position runs along a manifold (a Swiss roll)"
    assert verdicts[(manifold, "none")] == verdicts[(manifold, "first word excluded")] == "holds"
    assert verdicts[("position is the dominant global feature", "none")] == "holds"
    assert verdicts[("in a 3-D projection of both clusters the larger one is almost "
                     "two-dimensional", "none")] == "holds"
    # the sentence's split count comes from the same table
    assert "dec 3 of 5 (layers 1-3)" in result.sentences[0]
    assert result.views["dec"].split_layer in (1, 2, 3)
    # no BOS in the template: the first word is the sequence's first token (the roll's own
    # points have negative cosines with each other, so it is not the least similar here)
    first = result.claims.set_index("claim").loc[
        "the first token is the least similar to the rest of its sentence, in every layer"]
    assert first["control"] == "none" and "first word (first token)" in first["evidence"]


def test_analyse_calls_an_encoder_of_word_clouds_unsplit_and_not_led_by_position(tmp_path):
    from lmgeometry.chapters.geometry import analysis as geometry

    rng, words = _sentences(seed=1)
    codes = pd.factorize(words["text"])[0]
    centres = rng.normal(size=(10, 16))
    layers = [(centres[codes] + rng.normal(size=(len(words), 16))).astype(np.float32)
              for _ in range(4)]
    store = _store(tmp_path, layers, words, "encoder")
    result = geometry.analyse({"enc": store}, n_words=800, point_budget=200, umap_layers=0,
                              n_boot=200)
    assert set(result.tables["layers"]["control"]) == {"none"}
    claims = result.claims.set_index("claim")
    assert claims.loc["no layer splits into well-separated clusters", "verdict"] == "holds"
    position = claims.loc["position is not the dominant global feature"]
    assert position["verdict"] == "holds" and position["value"] < -0.3
    # the same unsplit clouds from a decoder: no clusters whose separation could decrease
    result = geometry.analyse({"dec": _store(tmp_path, layers, words, "decoder")}, n_words=800,
                              point_budget=200, umap_layers=0, n_boot=100)
    last = result.claims.set_index(["claim", "control"]).loc[
        ("the separation of the clusters decreases in the last layer", "none")]
    assert last["verdict"] == "inconclusive" and np.isnan(last["value"])


def test_first_word_norm_ratio_known_answer():
    from lmgeometry.measures.clusters import first_word_norm_ratio

    X = np.zeros((5, 3))
    X[:, 0] = [100.0, 1.0, -1.0, 1.0, 1.0]  # first row 100 times as long as the others
    first = np.array([True, False, False, False, False])
    assert first_word_norm_ratio(X, first) == pytest.approx(100.0)
    assert np.isnan(first_word_norm_ratio(X, np.zeros(5, dtype=bool)))


def test_knn_r2_is_about_one_on_a_swiss_roll_and_about_zero_for_random_values():
    from sklearn.datasets import make_swiss_roll

    from lmgeometry.measures.clusters import knn_r2, position_knn_r2

    X, t = make_swiss_roll(n_samples=1500, noise=0.05, random_state=0)
    # t (the position along the roll) is monotone in no single coordinate or component ...
    coords, _ = pca_project(X, 3)
    assert max(abs(np.corrcoef(coords[:, j], t)[0, 1]) for j in range(3)) < 0.8
    # ... but a smooth function of where a point lies
    assert knn_r2(coords, t) > 0.98
    result = position_knn_r2(coords, t)
    assert result.r2 > 0.98 and result.shuffled < 0.05 and result.r2_reps is None
    # values unrelated to the coordinates: about 0, no better than the shuffled baseline
    rng = np.random.default_rng(0)
    groups = np.arange(len(t)) // 10
    result = position_knn_r2(coords, rng.integers(1, 30, size=len(t)), seed=1,
                             boot=GroupBootstrap(groups, 200, 0))
    assert result.r2 < 0.05 and result.r2 <= result.shuffled + 0.05
    assert result.r2_reps.shape == result.shuffled_reps.shape == (200,)
    # grouped folds (all rows of a group held out together) give the same answer on the roll
    assert knn_r2(coords, t, groups=groups) > 0.98


def _with_special_tokens(tmp_path, kind, sep_like_words=False, seed=2):
    """Sentences of word clouds sharing a common direction, with [CLS] ... [SEP] (encoder) or
    <bos> (decoder) stored as special tokens, each sentence's last word a punctuation mark.
    In the upper layers [SEP] (or <bos>) and the punctuation marks point away from the words,
    unless ``sep_like_words``."""
    rng, words = _sentences(n_sent=60, length=10, seed=seed)
    n_sent, length, width = 60, 10, 16
    words["first_piece"] = words["word_index"] + 1
    punct = (words["word_index"] == length - 1).to_numpy()
    words.loc[punct, ["text", "upos"]] = [".", "PUNCT"]
    codes = pd.factorize(words["text"])[0]
    centres = rng.normal(size=(codes.max() + 1, width))
    common = np.zeros(width)
    common[0] = 6.0
    tokens = ["[CLS]", "[SEP]"] if kind == "encoder" else ["<bos>"]
    rows = [{"sentence_id": s, "position": 0 if t != "[SEP]" else length + 1,
             "n_tokens": length + len(tokens), "token_id": i, "token": t}
            for s in range(n_sent) for i, t in enumerate(tokens)]
    special = pd.DataFrame(rows)
    layers, specials = [], []
    for layer in range(5):
        X = common + centres[codes] + rng.normal(size=(len(words), width))
        S = common + rng.normal(size=(len(special), width))
        apart = layer >= 2 and not sep_like_words
        target = special["token"].to_numpy() != "[CLS]"
        if apart:
            S[target] = -common + rng.normal(size=(target.sum(), width))
            X[punct] = -common + rng.normal(size=(punct.sum(), width))
        layers.append(X.astype(np.float32))
        specials.append(S.astype(np.float32))
    store = array_store(tmp_path / f"{kind}-{sep_like_words}", layers, words,
                        name=f"toy-{kind}", kind=kind, special=specials, special_words=special)
    return store


def test_special_tokens_set_apart_are_found(tmp_path):
    from lmgeometry.chapters.geometry import analysis as geometry

    enc = _with_special_tokens(tmp_path, "encoder")
    dec = _with_special_tokens(tmp_path, "decoder")
    result = geometry.analyse({"enc": enc, "dec": dec}, n_words=400, point_budget=100,
                              umap_layers=0, n_boot=200)
    special = result.tables["special"]
    assert list(special.columns[:4]) == ["model", "layer", "depth", "token"]
    assert set(special["token"]) == {"[CLS] (first token)", "[SEP] (last token)",
                                     "<bos> (first token)", PUNCTUATION}
    punct = special[(special["token"] == PUNCTUATION) & (special["model"] == "enc")]
    assert (punct["role"] == "word class").all() and (punct["n"] == 60).all()
    assert (punct.set_index("layer").loc[2:, "difference_hi"] < 0).all()
    sep = special[special["token"] == "[SEP] (last token)"].set_index("layer")
    assert (sep.loc[2:, "difference_hi"] < 0).all()  # apart from layer 2 on
    assert (sep.loc[:1, "difference_lo"] > 0).all()  # like the words before
    assert (sep["n"] == 60).all() and (sep["intra_lo"] <= sep["intra"]).all()
    claims = result.claims
    sep_claim = claims[(claims["model"] == "enc") & claims["claim"].str.startswith("[SEP]")]
    assert sep_claim["verdict"].tolist() == ["holds"]
    marks = claims[claims["claim"].str.startswith("punctuation marks")]
    assert marks["model"].tolist() == ["enc"] and marks["verdict"].tolist() == ["holds"]
    assert marks["evidence"].iloc[0].startswith("60 punctuation marks; layers 2-4")
    (line,) = [t for t in geometry.special_sentences(special) if t.startswith("enc, punct")]
    assert line.startswith("enc, punctuation marks: less similar to the rest of its sentence "
                           "than every other part of speech in 3 of 5 layers (2-4)")
    assert "times the other words' mean norm" in line
    bos = claims[(claims["model"] == "dec")
                 & claims["claim"].str.startswith("the first token")].iloc[0]
    # <bos> is like the words in layer 1: not the least similar in *every* layer
    assert bos["verdict"] == "does not hold" and "<bos> (first token)" in bos["evidence"]
    assert "stored apart from the words" not in result.sentences[0]  # meta has no template


def test_special_token_like_the_words_is_not_the_lowest(tmp_path):
    from lmgeometry.chapters.geometry import analysis as geometry

    enc = _with_special_tokens(tmp_path, "encoder", sep_like_words=True)
    result = geometry.analyse({"enc": enc}, n_words=400, point_budget=100, umap_layers=0,
                              n_boot=200)
    claim = result.claims.set_index("claim").loc[
        "[SEP] has the lowest token intra-sentence similarity in the upper layers"]
    assert claim["verdict"] == "does not hold" and claim["ci_low"] > 0
    marks = result.claims.set_index("claim").loc[
        "punctuation marks have the lowest token intra-sentence similarity in the upper layers"]
    assert marks["verdict"] == "does not hold" and marks["ci_low"] > 0
    ratio = result.tables["special"].query("token == '[SEP] (last token)'")["norm_ratio"]
    assert ratio.between(0.8, 1.2).all()  # same norms as the words


def test_special_measures_known_answers(tmp_path):
    """Words along e1 (norm 1), [CLS] along e1 (norm 2), [SEP] along -e1 (norm 3), in
    sentences of L words: a word's and [CLS]'s mean cosine to the other L + 1 tokens is
    (L - 1) / (L + 1), [SEP]'s is -1; the norm ratios are 2 and 3; every token of a kind
    alike, so every interval is a point."""
    from lmgeometry.chapters.geometry import analysis as geometry
    from lmgeometry.chapters.geometry import special as geometry_special

    n_sent, length, width = 20, 6, 4
    words = pd.DataFrame({
        "sentence_id": np.repeat(np.arange(n_sent), length),
        "word_index": np.tile(np.arange(length), n_sent),
        "first_piece": np.tile(np.arange(length), n_sent) + 1,
        "text": "w", "upos": np.tile(["NOUN", "VERB"], n_sent * length // 2)})
    special = pd.DataFrame([{"sentence_id": s, "position": p, "n_tokens": length + 2,
                             "token_id": i, "token": t} for s in range(n_sent)
                            for i, (t, p) in enumerate((("[CLS]", 0), ("[SEP]", length + 1)))])
    e1 = np.eye(width, dtype=np.float32)[0]
    X = np.tile(e1, (len(words), 1))
    S = np.where((special["token"] == "[CLS]").to_numpy()[:, None], 2 * e1, -3 * e1)
    store = array_store(tmp_path / "known", [X, X], words, kind="encoder",
                        special=[S, S], special_words=special)
    plan = geometry_special.special_plan(store, n_boot=50, seed=0)
    rows, reps = geometry_special.special_measures(store.layer(1), store.special_layer(1), plan)
    found = pd.DataFrame(rows).set_index("token")
    assert set(found.index) == {"[CLS] (first token)", "[SEP] (last token)"}
    word_intra = (length - 1) / (length + 1)
    sep, cls = found.loc["[SEP] (last token)"], found.loc["[CLS] (first token)"]
    assert sep["intra"] == pytest.approx(-1) and sep["reference"] in ("NOUN", "VERB")
    assert sep["reference_intra"] == pytest.approx(word_intra)
    assert sep["difference"] == pytest.approx(-1 - word_intra)
    assert sep["norm_ratio"] == pytest.approx(3) and cls["norm_ratio"] == pytest.approx(2)
    assert cls["difference"] == pytest.approx(0, abs=1e-6)
    # the words fill positions 1 to 6 (after [CLS]): three groups, all alike here
    assert cls["reference"] in ("position 1", "positions 2-3", "positions 4-7")
    for name in ("intra", "difference", "norm_ratio"):
        assert sep[f"{name}_lo"] == pytest.approx(sep[name])
        assert sep[f"{name}_hi"] == pytest.approx(sep[name])
    assert reps["[SEP] (last token)"].shape == (50,)
    text = geometry.special_sentences(
        pd.DataFrame([{"model": "m", "layer": 1, "depth": 1.0, **r} for r in rows]))
    assert text[1].startswith("m, `[SEP]` (last token): less similar to the rest of its sentence "
                              "than every part of speech (punctuation left out) in 1 of 1 "
                              "layer (1)")
    assert "its norm is 3.00 times the words' mean norm" in text[1]


def test_first_word_norm_ratio_is_over_the_other_words(tmp_path):
    """A decoder without BOS: first words of norm 4, the 7 other words of each sentence of
    norm 1. The ratio is 4, not 4 over the mean of all eight words (32 / 11)."""
    from lmgeometry.chapters.geometry import analysis as geometry
    from lmgeometry.chapters.geometry import special as geometry_special

    _, words = _sentences(n_sent=30, length=8, seed=4)
    first = (words["word_index"] == 0).to_numpy()
    X = np.zeros((len(words), 6), dtype=np.float32)
    X[:, 0] = np.where(first, 4.0, 1.0)
    store = array_store(tmp_path / "first", [X], words, kind="decoder")
    plan = geometry_special.special_plan(store, n_boot=50, seed=0)
    (row,), _ = geometry_special.special_measures(store.layer(0), store.special_layer(0), plan)
    assert row["token"] == "first word (first token)"
    assert row["norm_ratio"] == pytest.approx(4.0)
    assert row["norm_ratio_lo"] == pytest.approx(4.0) and row["norm_ratio_hi"] == pytest.approx(4.0)
    (text,) = geometry.special_sentences(pd.DataFrame([{"model": "m", "layer": 0,
                                                        "depth": 0.0, **row}]))
    assert "its norm is 4.00 times the other words' mean norm" in text


def test_special_measures_skip_a_token_alone_in_its_sentence(tmp_path):
    """A decoder without BOS: the first word is the subject; a one-word sentence has no
    intra-sentence similarity and is left out of the means instead of making them NaN."""
    from lmgeometry.chapters.geometry import special as geometry_special

    rng, words = _sentences(n_sent=30, length=8, seed=4)
    words = words[(words["sentence_id"] != 0) | (words["word_index"] == 0)]
    words = words.reset_index(drop=True)
    X = rng.normal(size=(len(words), 6)).astype(np.float32)
    store = array_store(tmp_path / "alone", [X], words, kind="decoder")
    plan = geometry_special.special_plan(store, n_boot=50, seed=0)
    rows, _ = geometry_special.special_measures(store.layer(0), store.special_layer(0), plan)
    (row,) = rows
    assert row["token"] == "first word (first token)" and row["n"] == 30
    assert np.isfinite([row["intra"], row["difference"], row["difference_lo"],
                        row["norm_ratio"]]).all()


def test_check_tables_are_the_notebook_s_old_loops():
    """Chapter 1's check cell, moved into ``split_check`` and ``special_check``: the old
    loops are the reference (models and tokens in their order of appearance)."""
    from lmgeometry.chapters.geometry.analysis import special_check, split_check

    layers = pd.DataFrame({"model": ["z", "z", "z", "a", "a"],
                           "control": ["none", "none", "first", "none", "none"],
                           "split": [True, False, True, True, True]})
    old = [(spec, len(part), int(part["split"].sum()))
           for spec, part in layers[layers["control"] == "none"].groupby("model", sort=False)]
    assert [(r.model, r.layers, r.split) for r in split_check(layers).itertuples()] == old
    assert old == [("z", 2, 1), ("a", 2, 2)]
    special = pd.DataFrame({"model": ["z", "z", "z", "a"],
                            "token": ["[SEP]", "[CLS]", "[SEP]", "<s>"]})
    old = [(spec, token, len(part))
           for (spec, token), part in special.groupby(["model", "token"], sort=False)]
    assert [(r.model, r.token, r.layers) for r in special_check(special).itertuples()] == old
    assert old == [("z", "[SEP]", 2), ("z", "[CLS]", 1), ("a", "<s>", 1)]
