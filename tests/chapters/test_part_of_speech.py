"""Chapter 2 (part of speech, lmgeometry.chapters.part_of_speech.analysis): the word baseline, the
best-layer plateau, the control task's selectivity and claims, and ``analyse`` on planted stores.
"""

from __future__ import annotations

import numpy as np
from conftest import array_store

from lmgeometry.measures.probes import linear_probe, sentence_split


def test_word_baseline_and_plateau_known_answers():
    import pandas as pd

    from lmgeometry.chapters.part_of_speech.analysis import plateau, word_baseline

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
    from lmgeometry.chapters.part_of_speech.analysis import analyse

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



def test_every_probe_and_cluster_row_gets_its_null_with_the_tags_permuted(tmp_path):
    from lmgeometry.chapters.part_of_speech import analyse

    result = analyse({"mid": _pos_store(tmp_path, 2)}, probe_words=1600, point_budget=100,
                     n_boot=200)
    claims = result.claims
    middle = claims["claim"].str.contains("middle layers")
    # where the best layer lies reads no tag: its null is the layers in random orders, where
    # the best layer falls anywhere from the middle (0) to either end (0.5 from it)
    rows = claims[middle]
    assert (rows["null_model"] == "layers shuffled: mid").all()
    assert (rows["null_ci_low"] == 0.0).all() and (rows["null_ci_high"] == 0.5).all()
    assert (rows["verdict"] == "holds").all() and (rows["null_verdict"] != "holds").all()
    assert rows["discriminates"].all()
    labelled = claims[~middle]
    assert len(labelled) == 5  # probe, clusters, each against layer 0, the control task
    assert (labelled["null_model"] == "labels permuted: mid").all()
    # the planted tags hold; the same rules on the permuted tags do not: they discriminate
    assert (labelled["verdict"] == "holds").all()
    assert (labelled["null_verdict"] != "holds").all() and labelled["discriminates"].all()
    # the probe trained on permuted tags sits at the majority rate, its interval covering it
    majority = result.tables["layers"].set_index("layer").loc[2, "majority_baseline"]
    best = result.tables["selectivity"].set_index("which").loc["best"]
    assert best["probe_accuracy_permuted_lo"] <= majority <= best["probe_accuracy_permuted_hi"]
    assert best["probe_accuracy"] > 0.95
    # the clusters' null: the same clusters against shuffled tags, at chance
    layer2 = result.tables["layers"].set_index("layer").loc[2]
    assert layer2["purity_adjusted"] > 0.8 and abs(layer2["purity_adjusted_permuted"]) < 0.05
    again = analyse({"mid": _pos_store(tmp_path / "again", 2)}, probe_words=1600,
                    point_budget=100, n_boot=200)
    assert again.claims["null_value"].equals(claims["null_value"])  # a fixed seed


def test_untrained_twins_fill_every_row_s_null_when_run(tmp_path):
    from lmgeometry.chapters.part_of_speech import analyse

    # a "twin" that carries the tag too: every rule holds on it, so none discriminates
    result = analyse({"mid": _pos_store(tmp_path, 2)}, probe_words=1600, point_budget=100,
                     n_boot=200, null_stores={"untrained:mid": _pos_store(tmp_path / "t", 2,
                                                                          seed=1)})
    claims = result.claims
    assert (claims["null_model"] == "untrained:mid").all()  # middle-layer rows too
    assert not claims["discriminates"].astype(bool).any()


def test_control_task_measures_are_selective_for_features_that_carry_the_tag_only():
    import pandas as pd

    from lmgeometry.chapters.part_of_speech.analysis import control_task_measures
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

    from lmgeometry.chapters.part_of_speech.analysis import _control_task_claims

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
    from lmgeometry.chapters.part_of_speech.analysis import analyse

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


def test_probe_check_is_the_notebook_s_old_loop():
    """Chapter 2's check cell, moved into ``probe_check``: the old loop is the reference."""
    import pandas as pd

    from lmgeometry.chapters.part_of_speech.analysis import probe_check

    layers = pd.DataFrame({
        "model": ["b", "b", "b", "a", "a", "a", "a"],
        "control": ["none", "none", "first", "none", "first", "none", "none"],
        "probe_gain_lo": [0.1, 0.2, -1.0, 0.3, 0.1, -0.01, 0.2]})
    old = [(spec, len(part), bool((part["probe_gain_lo"] > 0).all()))
           for spec, part in layers[layers["control"] == "none"].groupby("model", sort=False)]
    got = probe_check(layers)
    assert [(r.model, r.layers, r.above) for r in got.itertuples()] == old
    assert old == [("b", 2, True), ("a", 3, False)]
