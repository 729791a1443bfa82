"""Chapter 4 (lmgeometry.chapters.drift.analysis): numbers and verdicts on planted shifts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import array_store
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from lmgeometry.chapters.common import per_layer
from lmgeometry.chapters.drift import analysis as drift
from lmgeometry.chapters.drift import claims as drift_verdicts
from lmgeometry.chapters.drift import matrix as drift_matrix
from lmgeometry.chapters.drift import tokens as drift_tokens
from lmgeometry.chapters.drift import words as drift_words
from lmgeometry.measures import centering, mean_cosines


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
    counts = drift_tokens.token_counts(_word_level(), ["a b a", "c a", "zzz"], n_rows=8)
    assert counts.tolist() == [1, 3, 1, 1, 0, 0, 0, 0]
    with pytest.raises(ValueError):
        drift_tokens.token_counts(_word_level(), ["the"], n_rows=3)


def test_frequency_ranks_ties_and_exclusions():
    ranks = drift_tokens.frequency_ranks([5, 0, 5, 2, 7], exclude=[4])
    assert ranks.tolist() == [0, -1, 1, 2, -1]
    assert drift_tokens.unseen_tokens([0, 3, 0, 1], exclude=[0]).tolist() == [2]


def test_zipf_curve_and_coverage():
    z = drift_tokens.zipf_curve([1, 4, 2, 0, 8], n_points=50)
    assert z["rank"].tolist() == [1, 2, 3, 4]
    assert z["count"].tolist() == [8, 4, 2, 1]
    assert z["frequency"].sum() == pytest.approx(1.0)
    cov = drift_tokens.coverage([50, 30, 10, 10, 0], fractions=(0.3, 0.5, 0.8, 0.98))
    assert cov == {0.3: 1, 0.5: 1, 0.8: 2, 0.98: 4, "seen": 4, "total": 100}
    assert drift_tokens.word_counts(["a b a", "b c"]).tolist() == [2, 2, 1]


def test_single_token_ids_wordpiece():
    ids = drift_tokens.single_token_ids(_word_piece(), ["bank", "banks", "river", "zzz"])
    # "banks" is two pieces, "zzz" is the unknown token
    assert ids == {"bank": 2, "river": 4}


def test_variant_rows_match_full_transforms():
    W = np.random.default_rng(0).standard_normal((50, 4)) + 3.0
    rows = np.array([7, 0, 31])
    assert np.allclose(drift_matrix.variant_rows(W, rows, "original"), W[rows])
    assert np.allclose(drift_matrix.variant_rows(W, rows, "centered"), (W - W.mean(0))[rows])
    assert np.allclose(
        drift_matrix.variant_rows(W, rows, "centered_scaled"), centering.scaled_center(W)[rows]
    )
    post = centering.remove_top_pcs(W)[rows]
    assert np.allclose(drift_matrix.variant_rows(W, rows, "post_process"), post)
    with pytest.raises(ValueError):
        drift_matrix.variant_rows(W, rows, "whitened")


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
    table, change = drift_words.word_similarity(
        W, _word_piece(), benchmarks=["toy"], variants=["original"], frames={"toy": pairs}
    )
    cos = table[table["score"] == "cosine"].iloc[0]
    assert cos["spearman"] == pytest.approx(1.0)
    assert cos["n_pairs"] == 3 and cos["n_total"] == 4 and cos["coverage"] == pytest.approx(0.75)
    assert change.empty  # no variant to compare, and too few pairs to average


def _shifted_vocabulary(n_words: int = 400, d: int = 12, seed: int = 0, scale: float = 1.0,
                        spread: float = 0.5):
    """A word-level tokenizer over w0..w{n-1}, rows = meaning + a long random-norm offset.

    Human similarity follows the meaning; the offset (a shared direction whose length varies
    from row to row, as a drifted W's does) swamps the inner product and pulls every cosine
    up, so removing the mean must help both scores.
    """
    rng = np.random.default_rng(seed)
    vocab = {"[UNK]": 0} | {f"w{i}": i + 1 for i in range(n_words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")
    meaning = rng.standard_normal((n_words + 1, d))
    offset = np.zeros(d)
    offset[0] = 1.0
    lengths = 6.0 * scale * rng.uniform(1 - spread, 1 + spread, (n_words + 1, 1))
    W = scale * meaning + lengths * offset
    a, b = rng.integers(1, n_words + 1, size=(2, 300))
    human = np.einsum("ij,ij->i", meaning[a], meaning[b])
    frame = pd.DataFrame({"word1": [f"w{i - 1}" for i in a], "word2": [f"w{i - 1}" for i in b],
                          "score": human})
    return W, tokenizer, frame


def test_centring_a_planted_offset_improves_word_similarity_with_an_interval():
    W, tok, frame = _shifted_vocabulary()
    table, change = drift_words.word_similarity(W, tok, benchmarks=["toy"], frames={"toy": frame},
                                          n_boot=200, rng=0)
    assert set(table["variant"]) == set(drift_matrix.VARIANTS) and (table["n_pairs"] == 300).all()
    row = change.set_index(["variant", "score"]).loc[("centered", "dot")]
    assert row["change_x100"] > 20 and row["change_x100_lo"] > 1.0  # a clear gain
    assert row["change_x100_lo"] <= row["change_x100"] <= row["change_x100_hi"]
    claims = drift_verdicts.drift_claims("toy", _statistics(), _trends(), change)
    gains = [c for c in claims if c.claim == "centring improves word similarity"]
    assert {c.verdict for c in gains} == {"holds"} and len(gains) == 2


def test_the_inner_product_gains_more_where_the_offset_swamps_it():
    """The planted offset's length varies from row to row: it swamps the inner product more
    than the cosine (which divides the length out), so removing it helps the inner product
    more; the gap is the dot row's change minus the cosine row's, with its own interval."""
    W, tok, frame = _shifted_vocabulary()
    _, change = drift_words.word_similarity(W, tok, benchmarks=["toy"], frames={"toy": frame},
                                            n_boot=200, rng=0)
    rows = change.set_index(["variant", "score"])
    dot, cos = rows.loc[("centered", "dot")], rows.loc[("centered", "cosine")]
    assert dot["over_cosine_x100"] == pytest.approx(dot["change_x100"] - cos["change_x100"])
    assert dot["over_cosine_x100_lo"] > 0 and np.isnan(cos["over_cosine_x100"])
    claims = drift_verdicts.drift_claims("toy", _statistics(), _trends(), change)
    gap = [c for c in claims if c.claim == "centring gains more with the inner product than "
           "with the cosine"]
    assert [c.verdict for c in gap] == ["holds"]


def _statistics(**over):
    base = {k: 0.5 for k in ("mean_cosine", "mean_cosine_lo", "mean_cosine_hi",
                             "mean_cosine_centered", "mean_vector_ratio",
                             "top_eigvec_mean_cosine", "top_eigvec_mean_cosine_lo",
                             "top_eigvec_mean_cosine_hi", "isotropy_raw", "isotropy_centered",
                             "isotropy_centered_lo", "isotropy_centered_hi",
                             "isotropy_gap_closed", "isotropy_gap_closed_lo",
                             "isotropy_gap_closed_hi", "norm_count_spearman",
                             "norm_count_spearman_lo", "norm_count_spearman_hi")}
    return base | over


def _trends():
    return pd.DataFrame({"protocol": ["frequency"], "variant": ["raw"], "rho": [0.9],
                         "rho_lo": [0.8], "rho_hi": [0.95], "n_bins": [30]})


def test_w_tables_on_a_planted_shift_give_the_seed_verdicts(monkeypatch):
    W, tok, frame = _shifted_vocabulary(seed=1, scale=0.2, spread=0.0)  # a pure shift
    counts = np.zeros(len(W), dtype=np.int64)
    counts[1:301] = np.arange(300, 0, -1)  # w0 most frequent; w300.. never seen
    original = drift_words.word_similarity
    monkeypatch.setattr(drift, "word_similarity", lambda W, tokenizer, **kw: original(
        W, tokenizer, benchmarks=["toy"], frames={"toy": frame}, **kw))
    out = drift.w_tables(W, tok, counts, point_budget=50, n_bins=6, n_boot=100, seed=0)
    s = out["statistics"]
    assert s["mean_cosine_lo"] <= s["mean_cosine"] <= s["mean_cosine_hi"]
    claims = {c.claim: c for c in drift_verdicts.drift_claims("toy", s, out["rare_trends"],
                                                              out["wordsim_change"])}
    assert claims["W's rows share a common direction"].verdict == "holds"
    assert claims["centring makes W nearly isotropic"].verdict == "holds"
    assert claims["centring closes most of the gap to isotropy"].verdict == "holds"
    assert claims["the top eigenvector of W^T W points along the mean vector"].verdict == "holds"
    assert len(out["projection"]) == 50 and set(out["spectra"]["variant"]) == {"raw", "centered"}
    assert out["coverage"]["seen"] == 300


def test_rare_token_bins_rise_when_rare_rows_drift_furthest():
    rng = np.random.default_rng(2)
    V, d = 3000, 8
    counts = np.zeros(V, dtype=np.int64)
    counts[:2400] = np.arange(2400, 0, -1)  # ids in frequency order; 2400.. never seen
    drift_len = np.linspace(0.0, 3.0, V)[:, None]  # the rarer, the further along e_0
    W = rng.standard_normal((V, d)) + drift_len * np.eye(d)[0]
    bins, trends, total = drift_matrix.rare_token_table(W, counts, _word_level(), n_bins=8,
                                                        n_boot=100, rng=0)
    raw = bins[(bins["protocol"] == "frequency") & (bins["variant"] == "raw")]
    assert raw["n_tokens"].sum() == 2400 - 1 and raw["n_rare"].iloc[0] == V - 2400  # [UNK] out
    assert raw["mean_cosine"].is_monotonic_increasing
    assert (raw["mean_cosine_lo"] <= raw["mean_cosine"]).all()
    t = trends.set_index(["protocol", "variant"]).loc[("frequency", "raw")]
    assert t["rho"] == pytest.approx(1.0) and t["rho_lo"] > 0.5
    assert total[0] == pytest.approx(mean_cosines.mean_cosine(W), abs=1e-5) and len(total) == 101
    claims = drift_verdicts.drift_claims("toy", _statistics(), trends, pd.DataFrame())
    rare = [c for c in claims if c.claim.startswith("rare tokens")]
    # ids are in frequency order here, so the paper's id bins ([unused0] as R) rise too
    assert [c.verdict for c in rare] == ["holds", "holds"]


def test_index_protocol_leaves_out_reference_tokens_and_drops_reference_bins():
    tok = _word_level()  # [unused0] is id 4, [UNK] id 0 (special)
    V = 2500
    W = np.random.default_rng(1).standard_normal((V, 6))
    counts = np.zeros(V, dtype=np.int64)
    counts[[1, 2, 3, 5]] = [9, 5, 3, 7]
    counts[100:200] = 1
    bins, trends, _ = drift_matrix.rare_token_table(W, counts, tok, n_bins=4)
    index = bins[(bins["protocol"] == "index") & (bins["variant"] == "raw")]
    assert index["rank_start"].tolist() == [0, 1000, 2000] and index["n_rare"].iloc[0] == 1
    assert index["n_excluded"].tolist() == [2, 0, 0]
    assert index["n_tokens"].tolist() == [998, 1000, 500]
    freq = bins[(bins["protocol"] == "frequency") & (bins["variant"] == "raw")]
    assert freq["n_tokens"].sum() == 104 and freq["n_rare"].iloc[0] == V - 105
    assert set(trends["protocol"]) == {"frequency", "index"}


def test_hidden_state_layers_controls_and_the_first_word_sink(tmp_path):
    # 95% of the rows: an isotropic cloud around an offset; first words: rows 300x longer
    rng = np.random.default_rng(2)
    n, d = 2000, 16
    word_index = np.tile(np.arange(20), n // 20)
    sentence = np.repeat(np.arange(n // 20), 20)
    X = rng.standard_normal((n, d)) + 2.0
    sink = np.zeros(d)
    sink[0] = 1.0
    X[word_index == 0] = 300.0 * sink + rng.standard_normal(((word_index == 0).sum(), d))
    words = {"word_index": word_index, "sentence_id": sentence,
             "text": ["the" if i == 3 else f"w{i}" for i in word_index]}
    store = array_store(tmp_path, [X, X], words, kind="decoder")
    out = drift.hidden_state_layers(store, n_rows=None, seed=0, n_boot=100)
    hidden = out["hidden"].set_index(["layer", "control"])
    full, excl = hidden.loc[(0, "none")], hidden.loc[(0, "first word excluded")]
    assert full["n_rows"] == n and excl["n_rows"] == n - n // 20
    assert full["mean_cosine_centered"] > 0.5  # centring creates the shared offset
    assert abs(excl["mean_cosine_centered"]) < 0.02
    assert full["shift_residual"] > 0.3 and abs(excl["shift_residual"]) < 0.02
    assert excl["shift_residual_lo"] <= excl["shift_residual"] <= excl["shift_residual_hi"]
    assert excl["isoscore"] > 0.9 and full["isoscore"] < 0.1
    layer = out["layers"].iloc[0]  # the flag belongs to the layer, not to a control
    assert layer["first_word_norm_ratio"] > 20 and "control" not in out["layers"]
    table = per_layer([store], lambda s: out["hidden"])
    claims = {c.control: c for c in drift_verdicts.hidden_claims(table)}
    assert claims["none"].verdict == "does not hold"
    assert claims["first word excluded"].verdict == "holds"
    encoder = array_store(tmp_path / "enc", [X], words, kind="encoder")
    assert set(drift.hidden_state_layers(encoder, 500, n_boot=10)["hidden"]["control"]) == \
        {"none"}


def test_notebook_tables_are_the_old_notebook_expressions():
    """Chapter 4's hidden cells, moved into named calls: the old expressions are the
    reference, on planted frames."""
    import pandas as pd

    from lmgeometry.chapters.common import claims_per_model
    from lmgeometry.chapters.drift.analysis import hidden_check, isotropy_long, wordsim_table

    table1 = pd.DataFrame({"model": ["b", "a"]} | {
        f"{k}{end}": [i + 0.1, i + 0.2] for i, k in enumerate(
            ("isotropy_raw", "isotropy_centered", "mean_cosine")) for end in ("", "_lo", "_hi")})
    t = {"table1": table1}
    old = pd.concat(
        [t["table1"].assign(measure=label, value=t["table1"][key],
                            lo=t["table1"][f"{key}_lo"], hi=t["table1"][f"{key}_hi"])
         for key, label in (("isotropy_raw", "I(W)"), ("isotropy_centered", "I(W_c)"),
                            ("mean_cosine", "mean cosine of W"))],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(isotropy_long(table1), old)
    assert old["measure"].tolist() == ["I(W)"] * 2 + ["I(W_c)"] * 2 + ["mean cosine of W"] * 2

    wordsim = pd.DataFrame({"model": ["z", "z", "z", "a"], "benchmark": ["ws", "ws", "rg", "ws"],
                            "score": ["cos", "cos", "cos", "cos"],
                            "variant": ["orig", "centred", "orig", "orig"],
                            "pearson_x100": [10.0, 20.0, 30.0, 40.0]})
    old = wordsim.pivot_table(index=["model", "benchmark"], columns=["score", "variant"],
                              values="pearson_x100", sort=False)
    pd.testing.assert_frame_equal(wordsim_table(wordsim), old)
    assert old.index.tolist() == [("z", "ws"), ("z", "rg"), ("a", "ws")]

    hidden = pd.DataFrame({"model": ["z", "z", "z", "a"], "control": ["none", "first", "none",
                                                                    "none"],
                           "mean_cosine": [0.6, 0.4, 0.1, 0.2]})
    old = [(spec, control, len(part), bool(part["mean_cosine"].max() > 0.5))
           for (spec, control), part in hidden.groupby(["model", "control"], sort=False)]
    got = hidden_check(hidden)
    assert [(r.model, r.control, r.layers, r.above_half) for r in got.itertuples()] == old
    assert old == [("z", "none", 2, True), ("z", "first", 1, False), ("a", "none", 1, False)]

    claims = pd.DataFrame({"model": ["z", "a", "z"]})
    assert claims_per_model(claims) == claims.groupby("model").size().to_dict() == {"a": 1, "z": 2}


def test_token_counts_are_shared_only_by_identical_tokenizers():
    """A model and its untrained twin share one tokenizer, so chapter 4 counts its corpus once;
    a tokenizer that differs in any way gets counts of its own."""
    from transformers import AutoTokenizer

    from lmgeometry.chapters.drift import analysis as drift
    from lmgeometry.io import _offline

    folder = _offline.alias_folder("minilm-l6")
    base, other = AutoTokenizer.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    assert other.add_tokens(["zzqxw"]) == 1
    texts = ["the cat sat", "on the zzqxw"]
    n = len(other)
    first = drift._shared_counts(base, texts, n)
    assert (first == drift.token_counts(base, texts, n)).all()
    first[:] = -1  # a caller's copy: the memo is not changed through it
    assert (drift._shared_counts(base, texts, n) == drift.token_counts(base, texts, n)).all()
    mine = drift._shared_counts(other, texts, n)
    assert mine[n - 1] == 1 and (mine != drift._shared_counts(base, texts, n)).any()
