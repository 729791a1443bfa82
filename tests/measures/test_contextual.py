"""Known-answer tests for lmgeometry.measures.contextual: layer measures under both presets.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures.references import (
    corpus,
    equiangular,
    equiangular_corpus,
    random_layer,
    svd_share,
    tsvd_share,
)

from lmgeometry.measures import contextual


def test_ethayarajh2019_preset_reproduces_hand_computed_example():
    c = 0.3
    X, words = equiangular_corpus(c)
    r = contextual.context_measures(
        X, words, "ethayarajh2019", seed=0, min_contexts=5, n_intra_sentences=None, n_boot=50
    )
    # eligible by occurrences: w (6 occ, 5 sentences), x (6, 6), y (5, 4); "," is punctuation
    assert r["n_words"] == 3
    # all ordered occurrence pairs (<= 1000), same-sentence pairs (cosine 1) included:
    w = (2 * 1 + 28 * c) / 30  # occurrences in sentences 0,0,1,2,3,4: 30 pairs, 2 same-sentence
    x = c  # one occurrence in each of 6 sentences
    y = (2 * 1 + 18 * c) / 20  # sentences 1,2,3,3,4: 20 pairs, 2 same-sentence
    assert r["selfsim"] == pytest.approx(np.mean(np.round([w, x, y], 3)), abs=1e-12)
    # baseline: pool = one word from each of the 6 sentences (all words of a sentence are the
    # same vector), then 6 pairs drawn with replacement: cos 1 for self-pairs, c otherwise
    possible = [round(c + (1 - c) * k / 6, 3) for k in range(7)]
    assert r["baseline_cosine"] in possible
    assert r["selfsim_adj"] == pytest.approx(r["selfsim"] - r["baseline_cosine"], abs=1e-12)
    assert r["intrasim_baseline"] == r["baseline_cosine"]
    # MEV baseline: TruncatedSVD ratio of the equiangular pool is 0 (see test above)
    assert r["mev_baseline"] == 0.0
    # word MEV: the TruncatedSVD ratio of each word's occurrence matrix, rounded to 3 decimals
    # (x's six distinct equiangular rows: the top singular vector is their mean direction, and
    # the centred rows are orthogonal to it, so 0, under the centred floor 1/5)
    V = equiangular(6, c, 10)
    occ = {"w": [0, 0, 1, 2, 3, 4], "x": [0, 1, 2, 3, 4, 5], "y": [1, 2, 3, 3, 4]}
    mevs = [round(tsvd_share(V[rows]), 3) for rows in occ.values()]
    assert mevs[1] == 0.0 and svd_share(V[occ["x"]], centered=True) == pytest.approx(0.2)
    assert r["mev"] == pytest.approx(np.mean(mevs), abs=1e-12)
    assert r["mev_adj"] == pytest.approx(r["mev"], abs=1e-12)
    # IntraSim: every word of a sentence points the same way; sentence 5 has one word
    assert r["n_sentences"] == 5
    assert r["intrasim"] == pytest.approx(1.0, abs=1e-12)



def test_corrected_preset_on_the_same_example():
    c = 0.3
    X, words = equiangular_corpus(c)
    r = contextual.context_measures(X, words, "corrected", seed=0, min_contexts=5, n_boot=50)
    # eligible by distinct sentences: w (5) and x (6); y has only 4
    assert r["n_words"] == 2
    # only pairs from different sentences: every one has cosine c
    assert r["selfsim"] == pytest.approx(c, abs=1e-12)
    # exact baseline over all cross-sentence pairs: also c
    assert r["baseline_cosine"] == pytest.approx(c, abs=1e-12)
    assert r["selfsim_adj"] == pytest.approx(0.0, abs=1e-12)
    table = contextual.word_measures(X, words, "corrected", min_contexts=5)
    assert sorted(table["word"]) == ["w", "x"]
    assert set(table.columns) >= {"selfsim", "mev", "mev_baseline", "n_sentences"}



def test_corrected_preset_finds_no_context_effect_in_random_vectors():
    # isotropic vectors with random word labels: no word or sentence structure at all
    rng = np.random.default_rng(16)
    n_sent, length, d = 400, 12, 32
    X = rng.standard_normal((n_sent * length, d))
    vocab = [f"v{i}" for i in range(60)]
    sentences = [[vocab[i] for i in rng.integers(0, 60, length)] for _ in range(n_sent)]
    words = corpus(sentences, X)
    r = contextual.context_measures(X, words, "corrected", seed=1, n_intra_sentences=None,
                                    n_boot=300)
    assert abs(r["baseline_cosine"]) < 0.01
    assert abs(r["selfsim_adj"]) < 0.01
    # a cosine to a mean of 12 random vectors is ~ 1/sqrt(12), not 0: the pairwise baseline
    # leaves that in, the length-matched baseline removes it
    assert r["intrasim"] == pytest.approx(1 / math.sqrt(length), abs=0.05)
    assert r["intrasim_adj_lo"] < 0 < r["intrasim_adj_hi"]
    assert abs(r["mev_adj"]) < 0.02
    old = contextual.context_measures(X, words, "ethayarajh2019", seed=1, n_intra_sentences=None)
    assert old["intrasim_adj"] > 0.2



def test_presets_are_frozen_and_named():
    assert set(contextual.PRESETS) == {"ethayarajh2019", "corrected"}
    assert contextual.get_preset("corrected") is contextual.PRESETS["corrected"]
    with pytest.raises(AttributeError):
        contextual.PRESETS["corrected"].baseline_n = 5  # type: ignore[misc]
    with pytest.raises(ValueError):
        contextual.get_preset("nope")



def test_lowest_self_similarity_orders_words():
    rng = np.random.default_rng(17)
    d = 16
    base = {w: rng.standard_normal(d) * 5 for w in ["the", "cat", "dog"]}
    noise = {"the": 5.0, "cat": 0.5, "dog": 1.5}
    sentences, rows = [], []
    for _ in range(12):
        toks = ["the", "cat", "dog"]
        sentences.append(toks)
        rows += [base[t] + noise[t] * rng.standard_normal(d) for t in toks]
    X = np.array(rows)
    words = corpus(sentences, X)
    low = contextual.lowest_self_similarity(X, words, n=2)
    assert list(low["word"]) == ["the", "dog"]
    assert (np.diff(low["selfsim"]) >= 0).all()



@pytest.mark.parametrize("preset", list(contextual.PRESETS))
def test_context_tables_hold_the_items_context_measures_averages(preset):
    X, words = random_layer(1, n_sent=30)
    t = contextual.context_tables(X, words, preset, seed=5, min_contexts=2, n_intra_sentences=None)
    m = contextual.context_measures(X, words, preset, seed=5, min_contexts=2,
                                    n_intra_sentences=None, n_boot=0)
    assert t.baseline_cosine == m["baseline_cosine"] and len(t.words) == m["n_words"]
    for name, table in (("selfsim", t.words), ("mev", t.words), ("intrasim", t.sentences)):
        assert table[name].mean() == pytest.approx(m[name])
        assert table[name + "_adj"].mean() == pytest.approx(m[name + "_adj"])
    assert t.intrasim_baseline == pytest.approx(m["intrasim_baseline"])


def test_named_streams_are_the_seed_spawns_in_order_and_a_new_one_moves_none():
    from lmgeometry.measures.contextual import BOOTSTRAP_STREAMS, CONTEXT_STREAMS, _streams

    named = _streams(7, CONTEXT_STREAMS)
    spawned = np.random.default_rng(7).spawn(len(CONTEXT_STREAMS))
    for name, generator in zip(CONTEXT_STREAMS, spawned, strict=True):
        assert named[name].random() == generator.random()
    longer = _streams(7, (*CONTEXT_STREAMS, "new"))
    assert all(longer[n].random() == _streams(7, CONTEXT_STREAMS)[n].random()
               for n in CONTEXT_STREAMS)
    boots = _streams(_streams(7, CONTEXT_STREAMS)["bootstrap"], BOOTSTRAP_STREAMS)
    old = np.random.default_rng(7).spawn(7)[-1].spawn(6)  # the positional spawns before
    assert [boots[n].random() for n in BOOTSTRAP_STREAMS] == [g.random() for g in old[:5]]
