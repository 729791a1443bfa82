"""Tests for lmgeometry.drift: token frequencies, single-token lookups, tables, findings."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from lmgeometry import drift, isotropy


def _word_level() -> PreTrainedTokenizerFast:
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "c": 3, "[unused0]": 4, "the": 5}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")


def _word_piece() -> PreTrainedTokenizerFast:
    vocab = {"[UNK]": 0, "the": 1, "bank": 2, "##s": 3, "river": 4, "money": 5, "loan": 6}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")


def test_token_counts_word_level():
    counts = drift.token_counts(_word_level(), ["a b a", "c a", "zzz"], n_rows=8)
    assert counts.tolist() == [1, 3, 1, 1, 0, 0, 0, 0]
    with pytest.raises(ValueError):
        drift.token_counts(_word_level(), ["the"], n_rows=3)


def test_frequency_ranks_ties_and_exclusions():
    ranks = drift.frequency_ranks([5, 0, 5, 2, 7], exclude=[4])
    assert ranks.tolist() == [0, -1, 1, 2, -1]
    assert drift.unseen_tokens([0, 3, 0, 1], exclude=[0]).tolist() == [2]


def test_zipf_curve_and_coverage():
    z = drift.zipf_curve([1, 4, 2, 0, 8], n_points=50)
    assert z["rank"].tolist() == [1, 2, 3, 4]
    assert z["count"].tolist() == [8, 4, 2, 1]
    assert z["frequency"].sum() == pytest.approx(1.0)
    cov = drift.coverage([50, 30, 10, 10, 0], fractions=(0.3, 0.5, 0.8, 0.98))
    assert cov == {0.3: 1, 0.5: 1, 0.8: 2, 0.98: 4, "seen": 4, "total": 100}
    assert drift.word_counts(["a b a", "b c"]).tolist() == [2, 2, 1]


def test_single_token_ids_wordpiece():
    ids = drift.single_token_ids(_word_piece(), ["bank", "banks", "river", "zzz"])
    # "banks" is two pieces, "zzz" is the unknown token
    assert ids == {"bank": 2, "river": 4}


def test_variant_rows_match_full_transforms():
    W = np.random.default_rng(0).standard_normal((50, 4)) + 3.0
    rows = np.array([7, 0, 31])
    assert np.allclose(drift.variant_rows(W, rows, "original"), W[rows])
    assert np.allclose(drift.variant_rows(W, rows, "centered"), (W - W.mean(0))[rows])
    assert np.allclose(
        drift.variant_rows(W, rows, "centered_scaled"), isotropy.scaled_center(W)[rows]
    )
    post = isotropy.remove_top_pcs(W)[rows]
    assert np.allclose(drift.variant_rows(W, rows, "post_process"), post)
    with pytest.raises(ValueError):
        drift.variant_rows(W, rows, "whitened")


def test_word_similarity_perfect_order_and_coverage():
    # rows: money and loan close to bank, river orthogonal; human scores in the same order
    W = np.zeros((7, 3))
    W[2] = [1.0, 0.0, 0.0]  # bank
    W[4] = [0.0, 1.0, 0.0]  # river
    W[5] = [0.9, 0.1, 0.0]  # money
    W[6] = [0.6, 0.4, 0.0]  # loan
    pairs = pd.DataFrame(
        {
            "word1": ["bank", "bank", "bank", "banks"],
            "word2": ["money", "loan", "river", "money"],
            "score": [9.0, 6.0, 1.0, 5.0],
        }
    )
    table = drift.word_similarity(
        W, _word_piece(), benchmarks=["toy"], variants=["original"], frames={"toy": pairs}
    )
    cos = table[table["score"] == "cosine"].iloc[0]
    assert cos["spearman"] == pytest.approx(1.0)
    assert cos["n_pairs"] == 3 and cos["n_total"] == 4 and cos["coverage"] == pytest.approx(0.75)


def test_norm_histograms_and_norm_count_spearman():
    h = drift.norm_histograms({"x": np.array([0.5, 1.0, 2.0]), "y": np.array([4.0])}, bins=8)
    width = h["norm"].iloc[1] - h["norm"].iloc[0]
    for _, part in h.groupby("label"):
        assert (part["density"] * width).sum() == pytest.approx(1.0)
    assert drift.norm_count_spearman([3.0, 2.0, 1.0, 9.0], [1, 5, 10, 0]) == pytest.approx(-1.0)


def test_hidden_state_isotropy_shift_vanishes_with_centring():
    rng = np.random.default_rng(0)
    layers = [rng.standard_normal((2000, 8)) + shift for shift in (0.0, 5.0)]
    store = SimpleNamespace(n_layers=2, layer=lambda i: layers[i])
    table = drift.hidden_state_isotropy(store, n_rows=1000, seed=0)
    assert table["n_rows"].tolist() == [1000, 1000]
    assert abs(table.loc[0, "mean_cosine"]) < 0.02
    assert table.loc[1, "mean_cosine"] > 0.9  # a shift of 5 * sqrt(8) vs unit spread
    assert table["mean_cosine_centered"].abs().max() < 0.02
    assert table["isoscore"].min() > 0.9  # isotropic spread, translation invariant


def test_rare_token_table_protocols():
    tok = _word_level()
    V = 2500
    W = np.random.default_rng(1).standard_normal((V, 6))
    counts = np.zeros(V, dtype=np.int64)
    counts[:6] = [0, 9, 5, 3, 0, 7]  # ids 0 and 4 unseen, but 0 is [UNK] (special), 4 [unused0]
    counts[100:200] = 1
    table = drift.rare_token_table(W, counts, tok, n_bins=4)
    assert set(table["protocol"]) == {"frequency", "index"}
    freq = table[(table["protocol"] == "frequency") & (table["variant"] == "raw")]
    assert freq["n_tokens"].sum() == 104 and freq["n_rare"].iloc[0] == V - 105
    index = table[(table["protocol"] == "index") & (table["variant"] == "raw")]
    assert index["rank_start"].tolist() == [0, 1000, 2000] and index["n_rare"].iloc[0] == 1


def test_findings_verdict_follows_numbers():
    table1 = pd.DataFrame(
        [{"model": "m", "n_rows": 10, "width": 4, "isotropy_raw": 0.1, "isotropy_centered": 0.9,
          "n_pcs_removed": 1, "isotropy_top_pcs_removed": 0.99,
          "isotropy_top_pcs_removed_original": 0.2, "mean_vector_ratio": 0.6,
          "top_eigvec_mean_cosine": 0.99}]
    )
    hidden = pd.DataFrame(
        {"model": "m", "layer": [0, 1], "mean_cosine": [0.2, 0.7],
         "mean_cosine_centered": [0.0, 0.5], "isoscore": [0.3, 0.1],
         "mean_vector_ratio": [0.2, 0.8]}
    )
    text = drift.findings(table1, pd.DataFrame(), hidden, pd.DataFrame())
    assert "raises I(W) by 0.80" in text[0]
    assert "does not vanish" in text[1] and "layer 1" in text[1]
    hidden["mean_cosine_centered"] = [0.0, 0.01]
    assert "vanishes" in drift.findings(table1, pd.DataFrame(), hidden, pd.DataFrame())[1]
