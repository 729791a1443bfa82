"""Seed 001's claims and the per-layer tables, on constructed inputs with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry import contextuality, wordbench


def _per_layer(baseline, selfsim_adj, intrasim_adj, mev_adj) -> pd.DataFrame:
    n = len(baseline)
    return pd.DataFrame({
        "layer": np.arange(n), "depth": np.arange(n) / (n - 1), "preset": "corrected",
        "baseline_cosine": baseline, "selfsim_adj": selfsim_adj,
        "intrasim_adj": intrasim_adj, "mev_adj": mev_adj, "model": "toy",
    })


def _lowest(stop_share_by_layer) -> pd.DataFrame:
    rows = []
    for layer, share in enumerate(stop_share_by_layer):
        n_stop = round(5 * share)
        rows += [{"layer": layer, "word": f"w{layer}{i}", "is_stop": i < n_stop} for i in range(5)]
    return pd.DataFrame(rows)


def test_claims_hold_for_a_model_that_behaves_as_the_paper_says() -> None:
    # layer 0 is context-free and must be ignored: give it values that contradict every trend
    d = _per_layer(baseline=[0.9, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.0, 0.9, 0.8, 0.5, 0.3],
                   intrasim_adj=[0.9, 0.01, 0.02, 0.05, 0.08],
                   mev_adj=[0.9, 0.04, 0.03, 0.02, 0.01])
    table = contextuality.claims(d, _lowest([0, 1, 1, 0.6, 0.8])).set_index("claim")["holds"]
    assert table.all(), table


def test_claims_fail_for_the_opposite_model() -> None:
    d = _per_layer(baseline=[0.1, 0.5, 0.4, 0.3, 0.2], selfsim_adj=[0.9, 0.2, 0.3, 0.5, 0.6],
                   intrasim_adj=[0.0, 0.2, 0.1, 0.0, -0.1], mev_adj=[0.0, 0.2, 0.01, 0.01, 0.01])
    table = contextuality.claims(d, _lowest([1, 0, 0.2, 0.4, 0])).set_index("claim")["holds"]
    assert not table.any(), table
    evidence = contextuality.claims(d, _lowest([1, 0, 0.2, 0.4, 0]))["evidence"].tolist()
    assert "max adjusted MEV 0.200 (layer 1)" in evidence


def test_halves_split_layers_one_to_l() -> None:
    d = _per_layer(baseline=[100.0, 1, 2, 3, 4], selfsim_adj=[0] * 5, intrasim_adj=[0] * 5,
                   mev_adj=[0] * 5)
    assert contextuality._halves(d, "baseline_cosine") == (1.5, 3.5)


def test_summary_and_findings_are_generated_from_the_numbers() -> None:
    d = _per_layer(baseline=[0.05, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.9, 0.8, 0.6, 0.5, 0.3],
                   intrasim_adj=[0.0, 0.01, 0.02, 0.05, 0.08],
                   mev_adj=[0.5, 0.04, 0.03, 0.02, 0.01])
    s = contextuality.summary(d).loc[("toy", "corrected")]
    assert s["layers"] == 5 and s["baseline rises"] and s["last-layer baseline > 0.2"]
    assert s["adjusted MEV < 0.05 everywhere"]
    text = " ".join(contextuality.findings(d, "toy"))
    assert "0.10 in layer 1 and 0.40 in the last layer" in text
    assert "least self-similar in layer 4" in text


def test_claims_table_adds_the_between_model_intrasim_claim() -> None:
    rising = _per_layer(baseline=[0.1, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.9, 0.9, 0.8, 0.5, 0.3],
                        intrasim_adj=[0.0, 0.01, 0.02, 0.05, 0.08], mev_adj=[0.0] * 5)
    falling = rising.assign(model="other", intrasim_adj=[0.0, 0.08, 0.05, 0.02, 0.01])
    lowest = {"toy": _lowest([1] * 5), "other": _lowest([1] * 5)}
    both = contextuality.claims_table(pd.concat([rising, falling]), lowest)
    row = both[both["claim"] == contextuality.INTRASIM_DIFFERS]
    assert row["holds"].tolist() == [True, True] and row["model"].tolist() == ["toy", "other"]
    assert row["evidence"].iloc[0] == "toy: rises; other: does not rise"
    same = contextuality.claims_table(pd.concat([rising, rising.assign(model="other")]), lowest)
    assert not same.loc[same["claim"] == contextuality.INTRASIM_DIFFERS, "holds"].any()
    wide = contextuality.holds_matrix(both)
    assert wide.loc[contextuality.INTRASIM_DIFFERS, ("toy", "corrected")] == "holds"
    assert wide.loc["adjusted IntraSim rises with depth", ("other", "corrected")] == "does not hold"


def test_benchmark_word_weights_count_each_benchmark_equally() -> None:
    frames = {
        "ws353": pd.DataFrame({"word1": ["Cat", "cat"], "word2": ["dog", "mouse"],
                               "score": [1.0, 2.0]}),
        "bless": pd.DataFrame({"word": ["cat", "car", "bus", "van"], "category": list("aabb")}),
    }
    w = contextuality.benchmark_word_weights(frames)
    # cat: both ws353 items (2/2) + one of 4 bless items (1/4)
    assert w["cat"] == 1.25 and w["dog"] == 0.5 and w["car"] == 0.25
    assert w.index[0] == "cat"


def test_select_for_words_prefers_short_sentences_that_complete_words() -> None:
    pool = [
        "the cat sat",                         # 0: cat
        "a cat and a dog",                     # 1: cat, dog
        "cat cat cat cat cat cat cat cat",     # 2: cat once (a sentence counts once per word)
        "dog",                                 # 3: dog, shortest
        "nothing useful here",                 # 4
        "the dog",                             # 5: dog
    ]
    weights = {"cat": 1.0, "dog": 1.0, "emu": 5.0}
    # min_contexts=2: emu never occurs, so it is not wanted; cat and dog need 2 sentences each
    chosen = contextuality.select_for_words(pool, weights, n=10, min_contexts=2)
    # gain / length: 3 (1.0), then 5 (0.5) completes dog; 1 has fallen to cat only (0.2),
    # so 0 (1/3) goes first, then 1 completes cat; 2 and 4 add nothing
    assert chosen == [0, 1, 3, 5]
    assert contextuality.select_for_words(pool, weights, n=1, min_contexts=2) == [3]


def test_table1_beside_marks_the_paper_as_reference() -> None:
    scores = pd.DataFrame({
        "benchmark": ["simlex999", "ws353_sim", "simlex999", "ws353_sim"],
        "value": [0.1, 0.2, 0.3, 0.4], "coverage": [0.5, 0.6, 0.5, 0.6],
        "layer": [1, 1, 2, 2], "model": "toy",
    })
    t = contextuality.table1_beside(scores)
    assert list(t.columns) == list(wordbench.ETHAYARAJH2019_COLUMNS.values())
    assert t.loc[("this run", "toy, layer 2"), "simlex999"] == 0.3
    assert t.loc[("this run: coverage", "toy"), "simlex999"] == 0.5
    assert np.isnan(t.loc[("this run", "toy, layer 1"), "men"])
    ref = t.loc["paper (reference only)"]
    assert ref.loc["GPT-2, Layer 12", "simlex999"] == wordbench.ETHAYARAJH2019_TABLE1[
        "GPT-2, Layer 12"]["simlex999"]


def test_static_findings_name_the_best_layer() -> None:
    rows = [{"benchmark": b, "layer": layer, "value": v, "coverage": c}
            for layer, v in ((0, 0.1), (1, 0.5), (2, 0.3))
            for b, c in (("simlex999", 0.2), ("ws353", 0.6))]
    rows.append({"benchmark": "google", "layer": 2, "value": 0.9, "coverage": 0.01})
    text = contextuality.static_findings(pd.DataFrame(rows), "toy")[0]
    assert "in layer 1 (mean Spearman 0.50), against 0.10 in layer 0" in text
    assert "20% to 60%" in text
