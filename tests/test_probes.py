import numpy as np
import pytest
from conftest import array_store

from lmgeometry.measures.clusters import cluster_purity, purity
from lmgeometry.measures.probes import linear_probe, sentence_split


def test_sentence_split_keeps_sentences_whole():
    groups = np.repeat(np.arange(40), 5)
    train, test = sentence_split(groups, seed=0)
    assert not set(groups[train]) & set(groups[test])
    assert len(train) + len(test) == len(groups)


def test_probe_decodes_a_linear_label_and_beats_majority():
    rng = np.random.default_rng(0)
    n = 600
    labels = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 8))
    X[np.arange(n), labels] += 6.0
    result = linear_probe(X, labels, groups=np.arange(n) // 6)
    assert result.accuracy > 0.95
    assert result.majority_baseline < 0.5


def test_probe_is_at_chance_on_noise():
    rng = np.random.default_rng(1)
    n = 600
    labels = rng.integers(0, 2, size=n)
    result = linear_probe(rng.normal(size=(n, 5)), labels, groups=np.arange(n) // 6)
    assert result.accuracy < 0.6


def test_purity_hand_computed():
    truth = np.array(["a", "a", "a", "b", "b", "c"])
    pred = np.array([0, 0, 1, 1, 1, 1])
    # cluster 0: {a,a} -> 2; cluster 1: {a,b,b,c} -> 2
    assert purity(truth, pred) == pytest.approx(4 / 6)
    assert purity(truth, np.zeros(6)) == pytest.approx(3 / 6)
    assert purity(truth, np.arange(6)) == 1.0


def test_cluster_purity_on_separated_directions():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 50)
    X = np.eye(3)[labels] * 10 + rng.normal(scale=0.1, size=(150, 3))
    assert cluster_purity(X, labels) == 1.0


def test_findings_state_the_numbers():
    import pandas as pd

    from lmgeometry.chapters.part_of_speech import findings

    table = pd.DataFrame(
        {
            "model": ["m"] * 3,
            "layer": [0, 1, 2],
            "probe_accuracy": [0.5, 0.9, 0.8],
            "majority_baseline": [0.2] * 3,
            "cluster_purity": [0.3, 0.4, 0.6],
        }
    )
    (text,) = findings(table)
    assert "layer 1 of 2 (90.0%" in text and "beats" in text and "layer 2 (purity 0.60;" in text
    assert "50.0% at layer 0" in text and "context adds 40.0 points" in text
    assert "least pure at layer 0 (0.30)" in text


def test_probe_by_layer_separates_a_decodable_layer_from_noise(tmp_path):
    import pandas as pd

    from lmgeometry.chapters.part_of_speech import probe_by_layer

    rng = np.random.default_rng(0)
    n = 400
    tags = rng.choice(["NOUN", "VERB", "DET"], size=n)
    words = pd.DataFrame({"upos": tags, "sentence_id": np.arange(n) // 8})
    noise = rng.normal(size=(n, 6)).astype(np.float16)
    signal = noise.astype(np.float32).copy()
    signal[:, :3] += 5.0 * (tags[:, None] == np.array(["NOUN", "VERB", "DET"]))
    table = probe_by_layer(array_store(tmp_path, [noise, signal], words), "m", n_words=300)
    assert table["layer"].tolist() == [0, 1] and table["depth"].tolist() == [0.0, 1.0]
    assert (table["n_train"] + table["n_test"] == 300).all()
    assert table.loc[1, "probe_accuracy"] > 0.95 > 0.6 > table.loc[0, "probe_accuracy"]
    assert table.loc[1, "cluster_purity"] > table.loc[0, "cluster_purity"]
