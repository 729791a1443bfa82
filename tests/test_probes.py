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


def test_control_task_labels_are_type_consistent_deterministic_and_order_free():
    from lmgeometry.measures.probes import control_task_labels

    rng = np.random.default_rng(0)
    words = rng.choice([f"w{i}" for i in range(50)], size=400)
    tags = rng.choice(["NOUN", "VERB", "DET"], size=400)
    labels = control_task_labels(words, tags, seed=3)
    for w in np.unique(words):
        assert len(set(labels[words == w])) == 1
    assert (control_task_labels(words, tags, seed=3) == labels).all()
    assert (control_task_labels(words, tags, seed=4) != labels).any()
    order = rng.permutation(400)
    assert (control_task_labels(words[order], tags[order], seed=3) == labels[order]).all()


def test_control_task_labels_follow_the_training_tag_distribution():
    from lmgeometry.measures.probes import control_task_labels

    n = 40_000  # one occurrence per type: the labels are draws from the distribution
    words = np.array([f"w{i}" for i in range(n)])
    tags = np.array(["NOUN"] * (n // 2) + ["VERB"] * (3 * n // 10) + ["DET"] * (n // 5))
    labels = control_task_labels(words, tags, seed=0)
    share = {t: np.mean(labels == t) for t in ("NOUN", "VERB", "DET")}
    assert share == pytest.approx({"NOUN": 0.5, "VERB": 0.3, "DET": 0.2}, abs=0.01)
    # only the fitting rows' tags count: "X" sits on the other rows only
    tags_with_other = np.where(np.arange(n) % 2 == 0, tags, "X")
    only = control_task_labels(words, tags_with_other, fit_rows=np.arange(0, n, 2), seed=0)
    assert "X" not in set(only)
    with pytest.raises(ValueError, match="fit_rows"):
        control_task_labels(words, tags, fit_rows=np.array([], dtype=int))
    with pytest.raises(ValueError, match="one length"):
        control_task_labels(words[:3], tags[:2])


def _type_corpus(n_types=60, per_type=30, seed=0):
    """Words of ``n_types`` equally frequent types in sentences of 6; each type has a fixed
    tag (as most words nearly have), so word identity alone predicts it."""
    rng = np.random.default_rng(seed)
    words = rng.permutation(np.repeat(np.arange(n_types), per_type))
    type_tag = rng.choice(["NOUN", "VERB", "DET", "ADJ"], size=n_types)
    return words, type_tag[words], np.arange(len(words)) // 6


def test_control_task_one_hot_identity_is_memorised_and_noise_is_not_selective():
    from lmgeometry.measures.probes import control_task_labels

    words, tags, groups = _type_corpus()
    split = sentence_split(groups, seed=0)
    control = control_task_labels(words.astype(str), tags, fit_rows=split[0], seed=0)
    onehot = np.eye(words.max() + 1)[words]
    pos = linear_probe(onehot, tags, groups, split=split).accuracy
    memorised = linear_probe(onehot, control, groups, split=split).accuracy
    assert memorised > 0.95 and pos > 0.95  # identity features: no selectivity
    noise = np.random.default_rng(1).normal(size=(len(words), 20))
    selectivity = (linear_probe(noise, tags, groups, split=split).accuracy
                   - linear_probe(noise, control, groups, split=split).accuracy)
    assert abs(selectivity) < 0.1


def test_control_task_measures_are_selective_for_features_that_carry_the_tag_only():
    import pandas as pd

    from lmgeometry.chapters.part_of_speech import control_task_measures
    from lmgeometry.measures.probes import control_task_labels
    from lmgeometry.measures.stats import GroupBootstrap

    rng = np.random.default_rng(0)
    n = 1800
    words = pd.DataFrame({"text": rng.choice([f"w{i}" for i in range(300)], size=n),
                          "upos": rng.choice(["NOUN", "VERB", "DET", "ADJ"], size=n),
                          "sentence_id": np.arange(n) // 6})
    X = rng.normal(size=(n, 8))
    X[:, :4] += 6.0 * (words["upos"].to_numpy()[:, None] == ["NOUN", "VERB", "DET", "ADJ"])
    split = sentence_split(words["sentence_id"].to_numpy(), seed=0)
    boot = GroupBootstrap(words["sentence_id"].to_numpy(), 200, 0)
    pos = linear_probe(X, words["upos"].to_numpy(), None, split=split)
    pos_value, pos_reps = boot.ratio(pos.correct, rows=pos.test)
    tags = control_task_labels(words["text"], words["upos"], fit_rows=split[0])
    row, _ = control_task_measures(X, words, split, tags, (pos_value, pos_reps), boot)
    assert row["control_task_accuracy"] < 0.45 and row["selectivity_lo"] > 0.5
    assert row["selectivity_lo"] <= row["selectivity"] <= row["selectivity_hi"]


def test_control_task_claim_reads_the_best_layers_gain_over_layer0():
    import pandas as pd

    from lmgeometry.chapters.part_of_speech import _control_task_claims

    def table(gain_lo, control="none"):
        return pd.DataFrame({
            "model": "m", "control": control, "layer": [0, 3, 6],
            "which": ["layer 0", "best", "last"], "probe_accuracy": [0.8, 0.95, 0.9],
            "control_task_accuracy": [0.7, 0.5, 0.6], "selectivity": [0.1, 0.45, 0.3],
            "selectivity_gain": [0.0, 0.35, 0.2], "selectivity_gain_lo": [0.0, gain_lo, 0.1],
            "selectivity_gain_hi": [0.0, 0.4, 0.3]})

    (held,) = _control_task_claims(table(0.3))
    assert (held.verdict, held.control, held.value) == ("holds", "control task", 0.35)
    (unsure,) = _control_task_claims(table(-0.05, control="first word excluded"))
    assert unsure.verdict == "inconclusive"
    assert unsure.control == "first word excluded, control task"


def test_analyse_checks_the_probe_with_the_control_task(tmp_path):
    from lmgeometry.chapters.part_of_speech import analyse

    # 12 word types with tags random per occurrence: only layer 2 carries the tag, and no
    # layer lets the probe reach more than the control's majority by memorising types
    result = analyse({"mid": _pos_store(tmp_path, 2)}, probe_words=1600, point_budget=100,
                     n_boot=200)
    table = result.tables["selectivity"].set_index("layer")
    assert table.index.tolist() == [0, 2, 6]
    assert table.loc[2, "which"] == "best" and table.loc[2, "selectivity_lo"] > 0.4
    assert abs(table.loc[0, "selectivity"]) < 0.15 and table.loc[0, "selectivity_gain"] == 0
    row = result.claims[result.claims["control"] == "control task"].iloc[0]
    assert (row["role"], row["verdict"]) == ("control", "holds")
    assert row["value"] == table.loc[2, "selectivity_gain"]
    assert [c["verdict"] for c in row["calibration"]] == [None]  # the seed's words only
