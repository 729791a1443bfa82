import numpy as np
import pytest

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
