import json

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

from lmgeometry.activations.store import Store
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
    (store.path / "meta.json").write_text(json.dumps(meta))
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
    from lmgeometry.chapters import geometry

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
    verdicts = result.claims.set_index(["claim", "control"])["verdict"]
    assert verdicts[("the representations split into two well-separated clusters",
                     "none")] == "holds"
    assert verdicts[("one of the clusters is the sentences' first words", "none")] == "holds"
    assert verdicts[("the separation of the clusters decreases in the last layer",
                     "none")] == "holds"
    manifold = "within the larger cluster, position runs along a manifold (a Swiss roll)"
    assert verdicts[(manifold, "none")] == verdicts[(manifold, "first word excluded")] == "holds"
    assert verdicts[("position is the dominant global feature", "none")] == "holds"
    # the sentence's split count comes from the same table
    assert "dec 3 of 5 (layers 1-3)" in result.sentences[0]
    assert result.views["dec"].split_layer in (1, 2, 3)


def test_analyse_calls_an_encoder_of_word_clouds_unsplit_and_not_led_by_position(tmp_path):
    from lmgeometry.chapters import geometry

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
