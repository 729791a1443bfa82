"""Seed 001's claims and the per-layer tables, on constructed inputs with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmgeometry.chapters import context_measures
from lmgeometry.io import corpus
from lmgeometry.measures import wordbench


def _per_layer(baseline, selfsim_adj, intrasim_adj, mev_adj, width=100) -> pd.DataFrame:
    n = len(baseline)
    return pd.DataFrame({
        "layer": np.arange(n), "depth": np.arange(n) / (n - 1), "preset": "corrected",
        "width": width, "baseline_cosine": baseline, "selfsim_adj": selfsim_adj,
        "intrasim_adj": intrasim_adj, "mev_adj": mev_adj, "model": "toy",
    })


def _lowest(stop_share_by_layer) -> pd.DataFrame:
    rows = []
    for layer, share in enumerate(stop_share_by_layer):
        n_stop = round(5 * share)
        rows += [{"layer": layer, "word": f"w{layer}{i}", "is_stop": i < n_stop} for i in range(5)]
    return pd.DataFrame(rows)


def _holds(d: pd.DataFrame, lowest: pd.DataFrame) -> pd.Series:
    return context_measures.claims(d, lowest).set_index("claim")["holds"]


BERT_CLAIM = "IntraSim as in BERT: falls with depth, above 0"
GPT2_CLAIM = "IntraSim as in GPT-2: near 0 in most layers"


def test_claims_hold_for_a_model_that_behaves_as_the_paper_says_of_bert() -> None:
    # layer 0 is context-free and must be ignored: give it values that contradict every trend
    d = _per_layer(baseline=[0.0, 0.31, 0.35, 0.5, 0.4], selfsim_adj=[0.0, 0.9, 0.8, 0.5, 0.3],
                   intrasim_adj=[-0.9, 0.3, 0.25, 0.2, 0.1],
                   mev_adj=[0.9, 0.04, 0.03, 0.02, 0.01])
    table = _holds(d, _lowest([0, 1, 1, 0.6, 0.8]))
    assert table.drop(GPT2_CLAIM).all(), table
    assert not table[GPT2_CLAIM]
    assert context_measures.intrasim_pattern(d) == "falls, above 0 (BERT)"


def test_gpt2_pattern_and_the_isotropic_band() -> None:
    # width 100: two random directions have cosines within +-0.3 (3 / sqrt(100))
    d = _per_layer(baseline=[0.1, 0.6, 0.29, 0.7, 0.99], selfsim_adj=[0.5] * 5,
                   intrasim_adj=[0.3, 0.01, -0.02, 0.2, 0.04], mev_adj=[0.0] * 5)
    table = _holds(d, _lowest([1] * 5))
    assert table[GPT2_CLAIM] and not table[BERT_CLAIM]
    assert not table["anisotropic in every non-input layer"]  # layer 2: 0.29 < 0.3
    evidence = context_measures.claims(d, _lowest([1] * 5)).set_index("claim")["evidence"]
    assert evidence["anisotropic in every non-input layer"].startswith(
        "lowest baseline cosine 0.290 (layer 2) against 3/sqrt(d) = 0.300")
    assert context_measures.intrasim_pattern(d) == "near 0 (GPT-2)"
    assert context_measures.isotropic_cosine_band(100) == pytest.approx(0.3)


def test_isotropic_band_contains_random_cosines() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 5000, 256))
    cos = (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
    assert abs(cos.std() - 1 / 16) < 0.005  # variance 1 / width
    assert (np.abs(cos) < context_measures.isotropic_cosine_band(256)).mean() > 0.99


def test_claims_fail_for_the_opposite_model() -> None:
    d = _per_layer(baseline=[0.1, 0.5, 0.4, 0.3, 0.2], selfsim_adj=[0.9, 0.2, 0.3, 0.5, 0.6],
                   intrasim_adj=[0.0, -0.2, 0.1, 0.2, 0.3], mev_adj=[0.0, 0.2, 0.01, 0.01, 0.01],
                   width=4)
    table = _holds(d, _lowest([1, 0, 0.2, 0.4, 0]))
    assert not table.any(), table
    evidence = context_measures.claims(d, _lowest([1, 0, 0.2, 0.4, 0]))["evidence"].tolist()
    assert "max adjusted MEV 0.200 (layer 1)" in evidence
    assert context_measures.intrasim_pattern(d) == "rises (ELMo)"


def test_depth_trend_leaves_layer_zero_out() -> None:
    d = _per_layer(baseline=[100.0, 1, 2, 3, 4], selfsim_adj=[0] * 5, intrasim_adj=[0] * 5,
                   mev_adj=[0] * 5)
    assert context_measures.depth_trend(d, "baseline_cosine") == pytest.approx(1.0)
    assert np.isnan(context_measures.depth_trend(d, "selfsim_adj"))  # constant


def test_summary_and_findings_are_generated_from_the_numbers() -> None:
    d = _per_layer(baseline=[0.05, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.9, 0.8, 0.6, 0.5, 0.3],
                   intrasim_adj=[0.0, 0.01, 0.02, 0.05, 0.08],
                   mev_adj=[0.5, 0.04, 0.03, 0.02, 0.01])
    s = context_measures.summary(d).loc[("toy", "corrected")]
    assert s["layers"] == 5 and s["baseline rises"] and s["last-layer baseline > 0.2"]
    assert s["adjusted MEV < 0.05 everywhere"]
    text = " ".join(context_measures.findings(d, "toy"))
    assert "0.10 in layer 1 and 0.40 in the last layer" in text
    assert "least self-similar in layer 4" in text


def test_claims_table_adds_the_between_model_intrasim_claim() -> None:
    rising = _per_layer(baseline=[0.1, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.9, 0.9, 0.8, 0.5, 0.3],
                        intrasim_adj=[0.0, 0.1, 0.2, 0.3, 0.4], mev_adj=[0.0] * 5)
    falling = rising.assign(model="other", intrasim_adj=[0.0, 0.4, 0.3, 0.2, 0.1])
    flat = rising.assign(model="flat", intrasim_adj=[0.0, 0.3, -0.3, 0.3, -0.3])
    lowest = {"toy": _lowest([1] * 5), "other": _lowest([1] * 5), "flat": _lowest([1] * 5)}
    both = context_measures.claims_table(pd.concat([rising, falling]), lowest)
    row = both[both["claim"] == context_measures.INTRASIM_DIFFERS]
    assert row["holds"].tolist() == [True, True] and row["model"].tolist() == ["toy", "other"]
    assert row["evidence"].iloc[0] == "toy: rises (ELMo); other: falls, above 0 (BERT)"
    same = context_measures.claims_table(pd.concat([rising, rising.assign(model="other")]), lowest)
    assert not same.loc[same["claim"] == context_measures.INTRASIM_DIFFERS, "holds"].any()
    # a model that follows none of the seed's patterns does not make the claim hold
    none = context_measures.claims_table(pd.concat([rising, flat]), lowest)
    assert not none.loc[none["claim"] == context_measures.INTRASIM_DIFFERS, "holds"].any()
    wide = context_measures.holds_matrix(both)
    assert wide.loc[context_measures.INTRASIM_DIFFERS, ("toy", "corrected")] == "holds"
    assert wide.loc[BERT_CLAIM, ("other", "corrected")] == "holds"
    assert wide.loc[BERT_CLAIM, ("toy", "corrected")] == "does not hold"


def test_benchmark_word_weights_count_each_benchmark_equally() -> None:
    frames = {
        "ws353": pd.DataFrame({"word1": ["Cat", "cat"], "word2": ["dog", "mouse"],
                               "score": [1.0, 2.0]}),
        "bless": pd.DataFrame({"word": ["cat", "car", "bus", "van"], "category": list("aabb")}),
    }
    w = corpus.benchmark_word_weights(frames)
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
    chosen = corpus.select_for_words(pool, weights, n=10, min_contexts=2)
    # gain / length: 3 (1.0), then 5 (0.5) completes dog; 1 has fallen to cat only (0.2),
    # so 0 (1/3) goes first, then 1 completes cat; 2 and 4 add nothing
    assert chosen == [0, 1, 3, 5]
    assert corpus.select_for_words(pool, weights, n=1, min_contexts=2) == [3]


def test_table1_beside_marks_the_paper_as_reference() -> None:
    scores = pd.DataFrame({
        "benchmark": ["simlex999", "ws353_sim", "simlex999", "ws353_sim"],
        "value": [0.1, 0.2, 0.3, 0.4], "coverage": [0.5, 0.6, 0.5, 0.6],
        "layer": [1, 1, 2, 2], "model": "toy",
    })
    t = context_measures.table1_beside(scores)
    assert list(t.columns) == list(wordbench.ETHAYARAJH2019_COLUMNS.values())
    assert t.loc[("this run", "toy, layer 2"), "simlex999"] == 0.3
    assert t.loc[("this run: coverage", "toy"), "simlex999"] == 0.5
    assert np.isnan(t.loc[("this run", "toy, layer 1"), "men"])
    ref = t.loc["paper (reference only)"]
    assert ref.loc["GPT-2, Layer 12", "simlex999"] == wordbench.ETHAYARAJH2019_TABLE1[
        "GPT-2, Layer 12"]["simlex999"]


def test_static_findings_name_the_best_layer() -> None:
    rows = [{"benchmark": b, "layer": layer, "value": v, "coverage": c, "n": n}
            for layer, v in ((0, 0.1), (1, 0.5), (2, 0.3))
            for b, c, n in (("simlex999", 0.2, 53), ("ws353", 0.6, 50))]
    rows.append({"benchmark": "google", "layer": 2, "value": 0.9, "coverage": 0.01, "n": 5})
    # a subset of ws353 must not be averaged in (its items would count twice)
    rows += [{"benchmark": "ws353_sim", "layer": layer, "value": -1.0, "coverage": 0.6, "n": 30}
             for layer in (0, 1, 2)]
    text = context_measures.static_findings(pd.DataFrame(rows), "toy")[0]
    assert "in layer 1 (mean Spearman 0.50), against 0.10 in layer 0" in text
    assert "20% to 60%" in text and "103 items in all" in text
    # 1 / sqrt(100) = 0.10; the gap 0.40 is more than twice that
    assert "a difference more than twice the standard error" in text and "(about 0.10)" in text
    small = pd.DataFrame(rows).assign(n=10)
    assert "a difference within twice" in context_measures.static_findings(small, "toy")[0]


def test_saturated_mev_baseline_names_the_layers() -> None:
    d = _per_layer(baseline=[0.1] * 6, selfsim_adj=[0.5] * 6, intrasim_adj=[0] * 6,
                   mev_adj=[0] * 6).assign(mev_baseline_used=[0.1, 0.995, 1.0, 0.999, 0.5, 0.99])
    (text,) = context_measures.saturated_mev_baseline(d)
    assert "at least 0.99 in 4 of 6 layers (layers 1-3, 5), up to 1.000" in text
    assert context_measures.saturated_mev_baseline(d.assign(mev_baseline_used=0.5)) == []
