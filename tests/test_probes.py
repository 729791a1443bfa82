import numpy as np
import pytest
from conftest import array_store

from lmgeometry.measures.clusters import cluster_purity, purity, purity_credit
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


def test_purity_credit_marks_each_clusters_majority_class():
    truth = np.array(["a", "a", "a", "b", "b", "c"])
    pred = np.array([0, 0, 1, 1, 1, 1])
    assert purity_credit(truth, pred).tolist() == [True, True, False, True, True, False]


def test_probe_returns_per_row_hits_on_a_given_split():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=200)
    X = rng.normal(size=(200, 3))
    X[:, 0] += 8 * labels
    split = (np.arange(150), np.arange(150, 200))
    result = linear_probe(X, labels, groups=np.arange(200), split=split)
    assert result.test.tolist() == list(range(150, 200))
    assert result.accuracy == pytest.approx(result.correct.mean()) and result.accuracy > 0.95


def test_word_baseline_and_plateau_known_answers():
    import pandas as pd

    from lmgeometry.chapters.part_of_speech import plateau, word_baseline

    train = pd.Series(["The", "run", "run", "run", "dog"])
    tags = np.array(["DET", "VERB", "NOUN", "VERB", "NOUN"])
    got = word_baseline(train, tags, pd.Series(["the", "Run", "cat"]))
    # unseen words get the most frequent training tag (NOUN and VERB tie: the first sorted)
    assert got.tolist() == ["DET", "VERB", "NOUN"]
    value = np.array([0.5, 0.8, 0.9, 0.85, 0.6])
    assert plateau(value, value - 0.06, value + 0.06).tolist() == [1, 2, 3]
    assert plateau(value, value - 0.04, value + 0.04).tolist() == [2, 3]


def _pos_store(tmp_path, signal_layer, n_layers=7, seed=0):
    """Sentences of random words whose tag is random per occurrence (so the word's identity
    says nothing of it); only ``signal_layer`` encodes the tag, as a direction per tag."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = 1600
    tags = rng.choice(["NOUN", "VERB", "DET", "ADJ"], size=n)
    words = pd.DataFrame({"upos": tags, "sentence_id": np.arange(n) // 8,
                          "word_index": np.arange(n) % 8,
                          "text": rng.choice(list("abcdefghijkl"), size=n)})
    layers = [rng.normal(size=(n, 8)).astype(np.float32) for _ in range(n_layers)]
    onehot = tags[:, None] == np.array(["NOUN", "VERB", "DET", "ADJ"])
    layers[signal_layer][:, :4] += 6.0 * onehot
    return array_store(tmp_path / str(signal_layer), layers, words)


def test_analyse_finds_pos_in_the_planted_middle_layer_only(tmp_path):
    from lmgeometry.chapters.part_of_speech import analyse

    # layer 2 of 6 sits at depth 1/3, the edge of the (closed) middle third
    result = analyse({"mid": _pos_store(tmp_path, 2), "top": _pos_store(tmp_path, 6)},
                     probe_words=1600, point_budget=100, n_boot=200)
    layers = result.tables["layers"].set_index(["model", "layer"])
    assert list(result.tables["layers"].columns[:4]) == ["model", "layer", "depth", "control"]
    assert layers.loc[("mid", 2), "probe_accuracy"] > 0.95 > 0.5 > layers.loc[("mid", 0),
                                                                            "probe_accuracy"]
    # the word baseline is at the majority level: the words carry no tag
    assert abs(layers.loc[("mid", 2), "word_baseline"]
               - layers.loc[("mid", 2), "majority_baseline"]) < 0.1
    assert layers.loc[("mid", 2), "purity_adjusted"] > 0.8
    assert abs(layers.loc[("mid", 0), "purity_adjusted"]) < 0.1
    assert (result.claims.loc[result.claims["model"] == "mid", "verdict"] == "holds").all()
    verdicts = result.claims.set_index(["model", "claim", "control"])["verdict"]
    assert verdicts[("top", "POS is best represented in the middle layers (probe)", "none")] \
        == "does not hold"
    assert verdicts[("top", "POS tags form clusters", "none")] == "holds"
    # layer 0 carries no tag here: the signal layer's gain over it holds (a control row)
    against = result.claims[result.claims["control"] == "against layer 0"]
    assert set(against["role"]) == {"control"} and (against["verdict"] == "holds").all()
