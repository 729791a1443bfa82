"""The model-zoo chapter on planted stores: known CKA, anisotropy, sink, split and rogue answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

from lmgeometry.chapters.common import STANDARDISED_BASELINE
from lmgeometry.chapters.zoo import analysis as model_zoo

N_SENT, LENGTH, WIDTH = 60, 8, 16


def _words(n_sent: int = N_SENT) -> pd.DataFrame:
    """Sentences of LENGTH words drawn from 20 word types, so every type recurs."""
    rng = np.random.default_rng(0)
    sid = np.repeat(np.arange(n_sent), LENGTH)
    return pd.DataFrame({
        "sentence_id": sid.astype(np.int32),
        "word_index": np.tile(np.arange(LENGTH), n_sent).astype(np.int32),
        "text": [f"w{i}" for i in rng.integers(0, 20, n_sent * LENGTH)],
        "upos": "NOUN", "is_punct": False, "is_stop": False,
    })


def _facts(kind: str, W: np.ndarray) -> dict:
    return {"architecture": "Planted", "kind": kind, "n_parameters": 1, "n_layers": 2,
            "hidden_size": WIDTH, "position_scheme": "none found", "normalisation": "n/a",
            "tied_embeddings": "yes", "vocab_size": len(W), "objective": "planted",
            "caveats": ["planted"], **model_zoo.w_statistics(W, n_boot=50, seed=0)}


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """Three planted models on the same words.

    ``enc-a``: independent Gaussian layers (isotropic; layer 2 in two far clusters);
    ``enc-b``: ``enc-a`` rotated and scaled (the same structure: CKA 1);
    ``dec-c``: independent of both, every vector shifted along one direction (mean cosine about
    0.7) from layer 1 on, first words 100 times longer from layer 1 on, one rogue dimension
    in layer 0.
    """
    root = tmp_path_factory.mktemp("zoo")
    rng = np.random.default_rng(1)
    words = _words()
    n = len(words)
    first = words["word_index"].to_numpy() == 0
    a = [rng.normal(size=(n, WIDTH)) for _ in range(3)]
    a[2][: n // 2] += 20.0  # two well-separated clusters
    Q, _ = np.linalg.qr(rng.normal(size=(WIDTH, WIDTH)))
    b = [3.0 * x @ Q for x in a]
    shift = np.zeros(WIDTH)
    shift[1] = 6.0
    c = [rng.normal(size=(n, WIDTH)) + shift for _ in range(3)]
    for x in c[1:]:
        x[first] *= 100.0
    c[0][:, 0] *= 30.0
    stores = {
        "enc-a": array_store(root / "a", [x.astype(np.float32) for x in a], words,
                             name="enc-a", kind="encoder"),
        "enc-b": array_store(root / "b", [x.astype(np.float32) for x in b], words,
                             name="enc-b", kind="encoder"),
        "dec-c": array_store(root / "c", [x.astype(np.float32) for x in c], words,
                             name="dec-c", kind="decoder"),
    }
    W_iso = rng.normal(size=(3000, WIDTH))
    facts = {"enc-a": _facts("encoder", W_iso), "enc-b": _facts("encoder", W_iso),
             "dec-c": _facts("decoder", W_iso + 4.0)}
    return model_zoo.analyse(stores, facts=facts, n_words=400, point_budget=400, n_boot=200,
                             min_contexts=5, n_intra_sentences=40)


def _verdicts(result, claim_start: str) -> dict:
    c = result.claims[result.claims["claim"].str.startswith(claim_start)]
    return {(r.model, r.control): r.verdict for r in c.itertuples()}


@pytest.mark.data
def test_cka_between_models(zoo):
    cka = zoo.tables["cka"].set_index(["model_a", "model_b", "layer", "control"])["cka"]
    for layer in (0, 1):
        assert cka[("enc-a", "enc-b", layer, "none")] == pytest.approx(1.0)
        assert cka[("enc-a", "dec-c", layer, "none")] < 0.2
    assert _verdicts(zoo, "layer 0") == {
        ("enc-a", "none"): "does not hold", ("enc-b", "none"): "does not hold",
        ("dec-c", "none"): "holds", ("dec-c", "first word excluded"): "holds"}
    assert set(_verdicts(zoo, "the first block").values()) == {"does not hold", "holds"}


@pytest.mark.data
def test_anisotropy_sink_split_and_rogue_dimension(zoo):
    found = _verdicts(zoo, "the word vectors")
    assert found[("dec-c", "none")] == found[("dec-c", "first word excluded")] == "holds"
    # isotropic layer 1 (mean cosine about 0), layer 2 in two clusters: below the decoder's
    rows = zoo.claims[zoo.claims["claim"] == "the word vectors are extremely anisotropic"]
    enc = rows[rows["model"].str.startswith("enc")]
    assert (enc["value"] < 0.2).all() and "holds" not in set(enc["verdict"])
    layers = zoo.tables["layers"].set_index(["model", "layer", "control"])
    # the shift: E cos = 36 / (36 + 16); longer first words keep their direction
    for control in ("none", "first word excluded"):
        assert layers.loc[("dec-c", 1, control), "baseline_cosine"] == pytest.approx(
            36 / 52, abs=0.05)
    assert abs(layers.loc[("enc-a", 1, "none"), "baseline_cosine"]) < 0.05
    # first words 100 times longer: the median norm ratio, only where first words are kept
    assert layers.loc[("dec-c", 1, "none"), "first_word_norm_ratio"] == pytest.approx(100, rel=0.1)
    assert layers.loc[("dec-c", 0, "none"), "first_word_norm_ratio"] == pytest.approx(1, abs=0.2)
    assert np.isnan(layers.loc[("dec-c", 1, "first word excluded"), "first_word_norm_ratio"])
    assert bool(layers.loc[("enc-a", 2, "none"), "split"])
    assert not layers.loc[("enc-a", 1, "none"), "split"]
    assert layers.loc[("dec-c", 0, "first word excluded"), "top_dim_share"] > 0.9
    assert layers.loc[("enc-a", 1, "none"), "top_dim_share"] < 0.2
    for key in ("baseline_cosine", "silhouette", "top_dim_share", "selfsim_adj"):
        part = zoo.tables["layers"]
        assert (part[f"{key}_lo"] <= part[key] + 1e-12).all()
        assert (part[key] <= part[f"{key}_hi"] + 1e-12).all()


@pytest.mark.data
def test_facts_embeddings_summary_and_gallery(zoo):
    facts = zoo.tables["models"].set_index("model")
    assert list(facts.columns) == ["architecture", "kind", "parameters", "layers x width",
                                   "position scheme", "normalisation", "tied embeddings",
                                   "vocabulary", "objective", "caveats"]
    assert facts.loc["dec-c", "caveats"] == "planted"
    w = zoo.tables["embeddings"].set_index("model")
    assert w.loc["enc-a", "isotropy"] > 0.8 > 0.3 > w.loc["dec-c", "isotropy"]
    summary = zoo.tables["summary"].set_index(["model", "control"])
    assert summary.loc[("enc-a", "none"), "layers that split"] == "1 of 3"
    assert list(zoo.gallery.coords) == ["enc-a", "enc-b", "dec-c"]
    assert all(xy.shape == (len(zoo.gallery.words), 2) for pair in zoo.gallery.coords.values()
               for xy in pair)
    assert zoo.sentences[0].startswith("Linear CKA between the models, same words")


@pytest.mark.data
def test_a_single_model_has_no_pairs(tmp_path):
    words = _words(20)
    X = np.random.default_rng(2).normal(size=(len(words), WIDTH)).astype(np.float32)
    store = array_store(tmp_path / "one", [X, X], words, name="one", kind="encoder")
    W = np.random.default_rng(3).normal(size=(500, WIDTH))
    result = model_zoo.analyse({"one": store}, facts={"one": _facts("encoder", W)},
                               n_words=100, point_budget=100, n_boot=20, n_intra_sentences=10)
    assert result.tables["cka"].empty and "cka" in result.tables["cka"]
    assert list(result.claims["claim"]) == ["the word vectors are extremely anisotropic"] * 2
    assert list(result.claims["control"]) == ["none", "standardised dimensions"]
    assert result.sentences[0] == "With a single model there is no pair of models to compare."


def test_common_rows_match_words_across_skipped_sentences(tmp_path):
    words = _words(4)
    X = np.random.default_rng(0).normal(size=(len(words), WIDTH)).astype(np.float32)
    full = array_store(tmp_path / "full", [X], words)
    keep = words["sentence_id"] != 1  # a model that skipped sentence 1
    part = array_store(tmp_path / "part", [X[keep.to_numpy()]], words[keep])
    rows = model_zoo.common_rows({"full": full, "part": part})
    assert len(rows["full"]) == len(rows["part"]) == 3 * LENGTH
    a = full.words.iloc[rows["full"]][["sentence_id", "word_index"]].to_numpy()
    b = part.words.iloc[rows["part"]][["sentence_id", "word_index"]].to_numpy()
    assert (a == b).all() and 1 not in a[:, 0]


def test_fingerprint_long_keeps_intervals():
    layers = pd.DataFrame({"model": ["m", "m"], "layer": [0, 1], "depth": [0.0, 1.0],
                           "control": "none", "baseline_cosine": [0.1, 0.2],
                           "baseline_cosine_lo": [0.0, 0.1], "baseline_cosine_hi": [0.2, 0.3],
                           "first_word_norm_ratio": [1.0, np.nan]})
    long = model_zoo.fingerprint_long(layers, ["baseline_cosine", "first_word_norm_ratio"])
    assert len(long) == 3  # the NaN ratio is dropped
    ratio = long[long["measure"] == model_zoo.FINGERPRINT["first_word_norm_ratio"]]
    assert ratio[["value", "lo", "hi"]].to_numpy().tolist() == [[1.0, 1.0, 1.0]]


@pytest.mark.data
def test_standardised_dimensions_remove_the_planted_shift(zoo):
    # dec-c's shared shift (E cos = 36 / 52 in layer 1) is the same vector in every row:
    # z-scoring each dimension removes it, so without its 100-times-longer first words the
    # control finds no extreme anisotropy; with them, their spread sets every dimension's
    # moments and the other words, standardised, share one offset direction
    found = _verdicts(zoo, "the word vectors")
    assert found[("dec-c", "first word excluded, standardised dimensions")] == "does not hold"
    assert found[("dec-c", "standardised dimensions")] == "holds"
    assert found[("enc-a", "standardised dimensions")] == "does not hold"
    layers = zoo.tables["layers"].set_index(["model", "layer", "control"])
    assert abs(layers.loc[("dec-c", 1, "first word excluded"),
                          "baseline_cosine_standardised"]) < 0.05
    part = zoo.tables["layers"]
    key = "baseline_cosine_standardised"
    assert ((part[f"{key}_lo"] <= part[key] + 1e-12)
            & (part[key] <= part[f"{key}_hi"] + 1e-12)).all()
    rows = zoo.claims[zoo.claims["control"].str.endswith("standardised dimensions")]
    assert set(rows["role"]) == {"control"} and len(rows) == 4  # 2 encoders, 2 decoder controls
    # near 0 by construction once every dimension is centred: shown, never a test
    assert not rows["applies"].astype(bool).any()
    assert (rows["applies_reason"] == STANDARDISED_BASELINE).all()
    said = [s for s in zoo.sentences if s.startswith("On standardised dimensions")]
    assert len(said) == 1 and "near 0 by construction" in said[0]
