"""Tests for lmgeometry.chapters.drift: token frequencies, single-token lookups, findings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import array_store
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from lmgeometry.chapters import drift
from lmgeometry.measures import isotropy


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


def test_hidden_state_isotropy_shift_is_predicted_by_the_mean(tmp_path):
    rng = np.random.default_rng(0)
    layers = [rng.standard_normal((2000, 8)) + shift for shift in (0.0, 5.0)]
    store = array_store(tmp_path, layers, {"word_index": np.arange(2000) % 10})
    table = drift.hidden_state_isotropy(store, n_rows=1000, seed=0)
    full = table[table["subset"] == "all words"].reset_index(drop=True)
    assert full["n_rows"].tolist() == [1000, 1000]
    assert (table.loc[table["subset"] == "first word excluded", "n_rows"] < 1000).all()
    assert abs(full.loc[0, "mean_cosine"]) < 0.02
    assert full.loc[1, "mean_cosine"] > 0.9  # a shift of 5 * sqrt(8) vs unit spread
    assert table["shift_residual"].abs().max() < 0.02  # the mean vector accounts for it
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
    # [unused0] (id 4) and [UNK] (id 0) are left out of the bin they fall in
    assert index["n_excluded"].tolist() == [2, 0, 0]
    assert index["n_tokens"].tolist() == [998, 1000, 500]
    assert (table.loc[table["protocol"] == "frequency", "n_excluded"] == 0).all()


def test_index_bins_leave_out_reference_tokens_and_drop_reference_bins():
    W = np.random.default_rng(3).standard_normal((3000, 5))
    rare = np.arange(10, 900)  # most of the first bin
    W[rare] = [5.0, 0, 0, 0, 0] + 0.01 * W[rare]  # reference tokens nearly parallel
    t = drift._index_bins(W, rare, rare, 1000, 0.5)
    assert t["bin"].tolist() == [1, 2]  # ids 0-999 keep 110 of 1000 ids: dropped
    assert abs(t["mean_cosine"]).max() < 0.1  # no reference-vs-reference pairs
    t_all = drift._index_bins(W, rare, rare, 1000, 0.0)
    assert t_all["bin"].tolist() == [0, 1, 2] and t_all.loc[0, "n_excluded"] == 890


def test_findings_verdict_follows_numbers():
    table1 = pd.DataFrame(
        [{"model": "m", "n_rows": 10, "width": 4, "isotropy_raw": 0.1, "isotropy_centered": 0.9,
          "n_pcs_removed": 1, "isotropy_top_pcs_removed": 0.99,
          "isotropy_top_pcs_removed_original": 0.2, "mean_vector_ratio": 0.6,
          "top_eigvec_mean_cosine": 0.99}]
    )
    hidden = pd.DataFrame(
        {"model": "m", "subset": ["all words"] * 2 + ["first word excluded"] * 2,
         "layer": [0, 1, 0, 1], "width": 11, "mean_cosine": [0.2, 0.7, 0.2, 0.6],
         "shift_prediction": [0.19, 0.1, 0.19, 0.3], "mean_cosine_centered": [0.0, 0.8, 0.0, 0.01],
         "isoscore": [0.3, 0.1, 0.3, 0.2], "mean_vector_ratio": [0.2, 0.8, 0.2, 0.5],
         "mean_vector_norm": [1.0, 50.0, 1.0, 5.0], "first_word_norm_ratio": [1.0, 120.0] * 2}
    )
    hidden["shift_residual"] = hidden["mean_cosine"] - hidden["shift_prediction"]
    longest = pd.DataFrame(
        {"model": "m", "layer": [1], "n_longest": [40], "word": ["the"], "share": [0.9],
         "norm_ratio": [4.0]}
    )
    text = drift.findings(table1, pd.DataFrame(), hidden, pd.DataFrame(), longest)
    assert "raises I(W) by 0.80" in text[0]
    h = text[1]
    assert "within 0.05 of the measured value in 1 of 2 layers" in h
    assert "largest gap, measured minus predicted, 0.60 in layer 1" in h
    assert "up to 120.0 times" in h and "10.0 times as long" in h
    assert "0.010 without the first words, so it is made by them" in h
    assert '"the" in 1 of the 1 layers (90% of those rows' in h
    assert "IsoScore from 0.10 to 0.30 (as if the variance were spread evenly over 2 to 4" in h
    hidden["mean_cosine_centered"] = [0.0, 0.01, 0.0, 0.01]
    h = drift.findings(table1, pd.DataFrame(), hidden, pd.DataFrame())[1]
    assert "Leaving them out changes the raw mean cosine by at most 0.100" in h


def test_findings_rare_trend_uses_all_bins():
    rows = []
    for variant, values in (("raw", [0.1, 0.5, 0.0, 0.4, -0.1, 0.3, -0.2, 0.2]),
                            ("centered", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])):
        for k, v in enumerate(values):
            rows.append({"model": "m", "protocol": "frequency", "variant": variant,
                         "n_rare": 5, "bin": k, "rank_start": k, "rank_end": k,
                         "n_tokens": 1, "n_excluded": 0, "mean_cosine": v})
    text = drift.findings(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(rows))
    # the last bin is above the first, yet there is no monotone trend
    assert "0.10 with the most frequent bin, 0.20 with the rarest, no monotone trend" in text[0]
    assert "rising as frequency falls (Spearman rho 1.00 over 8 bins)" in text[0]


def _store(folder, layers, word_index):
    words = {"word_index": np.asarray(word_index), "text": [f"w{i % 7}" for i in word_index]}
    return array_store(folder, layers, words)


def test_shift_cosine_identical_rows():
    out = isotropy.shift_cosine(np.tile([1.0, 2.0, -0.5], (50, 1)))
    assert out["mean_cosine"] == pytest.approx(1.0)
    assert out["shift_share"] == pytest.approx(1.0)
    assert out["shift_prediction"] == pytest.approx(1.0)
    assert out["shift_residual"] == pytest.approx(0.0, abs=1e-12)


def test_shift_cosine_offset_cloud_and_isotropic_gaussian():
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((4000, 8))
    iso = isotropy.shift_cosine(noise)
    assert abs(iso["mean_cosine"]) < 0.01 and abs(iso["shift_prediction"]) < 0.01
    # offset 5 per coordinate: s -> ||mu||^2 / (||mu||^2 + tr Sigma) = 200 / 208
    shifted = isotropy.shift_cosine(noise + 5.0)
    assert shifted["shift_share"] == pytest.approx(200 / 208, abs=0.01)
    assert shifted["mean_cosine"] == pytest.approx(shifted["shift_prediction"], abs=0.01)
    assert shifted["mean_cosine"] > 0.9


def test_shift_cosine_exact_for_equal_norms():
    # rows of one norm, any directions: the prediction is the mean cosine exactly
    X = np.random.default_rng(1).standard_normal((300, 5)) + [2.0, 0, 0, 0, 0]
    X = 3.0 * X / np.linalg.norm(X, axis=1, keepdims=True)
    out = isotropy.shift_cosine(X)
    assert out["shift_residual"] == pytest.approx(0.0, abs=1e-12)
    assert out["mean_cosine"] == pytest.approx(isotropy.mean_cosine(X))


def test_long_first_rows_make_centring_create_a_shared_direction(tmp_path):
    # 95% of the rows: an isotropic cloud around an offset; 5%: rows 100x longer elsewhere
    rng = np.random.default_rng(2)
    n, d = 2000, 16
    word_index = np.tile(np.arange(20), n // 20)
    X = rng.standard_normal((n, d)) + 2.0
    sink = np.zeros(d)
    sink[0] = 1.0
    X[word_index == 0] = 300.0 * sink + rng.standard_normal(((word_index == 0).sum(), d))
    store = _store(tmp_path, [X], word_index)
    table = drift.hidden_state_isotropy(store, seed=0)
    full = table[table["subset"] == "all words"].iloc[0]
    excl = table[table["subset"] == "first word excluded"].iloc[0]
    assert excl["n_rows"] == n - n // 20 and full["n_rows"] == n
    assert full["first_word_norm_ratio"] > 20
    assert full["mean_cosine_centered"] > 0.5  # centring creates the shared offset
    assert abs(excl["mean_cosine_centered"]) < 0.02
    assert full["shift_residual"] > 0.3  # the mean vector no longer predicts the cosines
    assert abs(excl["shift_residual"]) < 0.02
    assert excl["isoscore"] > 0.9 and full["isoscore"] < 0.1
    longest = drift.longest_words(store, [0], top_share=0.05)
    assert longest.loc[0, "n_longest"] == 95
    with pytest.raises(ValueError):
        drift.hidden_state_isotropy(store, subsets=["nouns"])


def test_first_word_mask_and_longest_words(tmp_path):
    words = pd.DataFrame({"word_index": [0, 1, 2, 0, 1], "text": list("abcab")})
    assert drift.first_word_mask(words).tolist() == [True, False, False, True, False]
    X = np.ones((6, 2))
    X[[2, 5]] *= 10.0  # "c" twice, far longer than the rest
    words = {"word_index": [0, 1, 2, 0, 1, 2], "text": list("abcabc")}
    store = array_store(tmp_path, [X], words)
    t = drift.longest_words(store, [0], top_share=0.5)
    row = t.iloc[0]
    assert row["word"] == "c" and row["n_longest"] == 2 and row["share"] == 1.0
    assert row["n_occurrences"] == 2 and row["norm_ratio"] == pytest.approx(10.0)


def test_bin_trend_rules():
    up = pd.DataFrame({"bin": range(10), "mean_cosine": np.linspace(0, 1, 10) ** 2})
    t = drift.bin_trend(up)
    assert t["rho"] == pytest.approx(1.0) and t["direction"] == "rising" and t["n_bins"] == 10
    down = up.assign(mean_cosine=-up["mean_cosine"])
    assert drift.bin_trend(down)["direction"] == "falling"
    # first < last but no monotone trend across the bins
    zigzag = pd.DataFrame({"bin": range(8), "mean_cosine": [0, 5, -1, 4, -2, 3, -3, 1]})
    assert drift.bin_trend(zigzag)["direction"] == "no monotone trend"
    assert drift.bin_trend(up.head(2))["direction"] == "too few bins"
