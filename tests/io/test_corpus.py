"""Tests of lmgeometry.io.corpus: the spaCy word table, the builders and their caches.

Word tables need WordNet 3.0 (``n_senses``), so every test here needs the data mirror
(``$LMGEOMETRY_DATA_MIRROR``, as CI sets it) or an installed NLTK WordNet plus network access
for the data sets; without them the tests are skipped with the reason. The first run parses
about 5,000 sentences with spaCy (a minute or two on 2 cores); later runs read the parquet
caches under ``paths.cache_dir("corpora")``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from lmgeometry.io import corpus, data
from lmgeometry.io.corpus import mnli, table
from lmgeometry.io.corpus import targets as corpus_targets

pytestmark = pytest.mark.data

HARD = [
    "I don't like the café's  coffee -- it's 3.5 well-known e-mails, isn't it?",
    "  Leading spaces,\ttabs and a newline\nin one \"sentence\" (really).",
    "Naïve résumé: 1,000,000 km² in 2019-2020; Mr. O'Neil's dog—barked!!",
    "The bank banks on banking.",
]


def _check_table(words: pd.DataFrame, texts: list[str]) -> None:
    """Invariants every word table must satisfy."""
    assert list(words.columns[: len(corpus.WORD_COLUMNS)]) == list(corpus.WORD_COLUMNS)
    for col, dtype in corpus.WORD_COLUMNS.items():
        assert str(words[col].dtype) == dtype, col
    assert isinstance(words.index, pd.RangeIndex) and words.index.start == 0
    assert sorted(words["sentence_id"].unique().tolist()) == list(range(len(texts)))
    for sid, g in words.groupby("sentence_id"):
        text = texts[sid]
        assert g["word_index"].tolist() == list(range(len(g)))
        assert all(text[s:e] == t for s, e, t in zip(g["start"], g["end"], g["text"],
                                                     strict=True))
        assert not g["text"].str.isspace().any() and (g["text"].str.len() > 0).all()
        rebuilt = text[: g["start"].iloc[0]] + "".join(g["text"] + g["whitespace"])
        assert rebuilt == text
        assert all(w == "" or w.isspace() for w in g["whitespace"])


# ---------------------------------------------------------------------------------------------
# word table


def test_invisible_words_leave_the_table_but_not_the_text():
    """Words of only zero-width or control characters get no row; their characters join the
    whitespace before them, so the sentence still rebuilds; the corpus counts them."""
    texts = ["\u200b Lead.", "a \u200b \x07 b", "Soft\u00adhyphen inside stays."]
    c = corpus.sentences(texts, name="invisible-table")
    for sid, g in c.words.groupby("sentence_id"):
        assert g["word_index"].tolist() == list(range(len(g)))
        assert texts[sid][: g["start"].iloc[0]] + "".join(g["text"] + g["whitespace"]) \
            == texts[sid]
    assert c.words["text"].tolist()[:4] == ["Lead", ".", "a", "b"]
    assert "Soft\u00adhyphen" in c.words["text"].tolist()  # inside a word: kept
    assert c.params["invisible_words_dropped"] == 3 == c.info["invisible_words_dropped"]
    assert corpus.invisible_words_dropped(c) == 3


def test_hard_sentences_offsets_slice_back_to_the_words():
    c = corpus.sentences(HARD)
    _check_table(c.words, HARD)
    first = c.words[c.words["sentence_id"] == 0]
    assert first["text"].tolist()[:3] == ["I", "do", "n't"]
    assert "café" in first["text"].tolist() and "3.5" in first["text"].tolist()
    coffee = first[first["text"] == "coffee"].iloc[0]
    before = first[first["word_index"] == coffee["word_index"] - 1].iloc[0]
    assert before["text"] == "'s" and before["whitespace"] == "  "  # the double space is kept
    second = c.words[c.words["sentence_id"] == 1]
    assert second["start"].iloc[0] == 2  # leading spaces are kept in the sentence, not a word
    assert c.sentences == HARD  # text is never normalised


def test_word_table_columns_lemma_pos_and_n_senses():
    c = corpus.sentences(["The bank is closed.", "They bank the fire."])
    w = c.words.set_index(["sentence_id", "text"])
    bank_noun, bank_verb = w.loc[(0, "bank")], w.loc[(1, "bank")]
    assert (bank_noun["upos"], bank_noun["lemma"], bank_noun["n_senses"]) == ("NOUN", "bank", 10)
    assert (bank_verb["upos"], bank_verb["n_senses"]) == ("VERB", 8)
    assert data.n_senses("bank", "NOUN") == 10
    assert pd.isna(w.loc[(0, "The"), "n_senses"]) and pd.isna(w.loc[(0, "."), "n_senses"])
    assert w.loc[(0, "."), "is_punct"] and w.loc[(0, "The"), "is_stop"]
    assert not c.words["is_target"].any()


def test_targets_flag_lemma_or_text_matches():
    c = corpus.sentences(HARD, targets=["bank", "coffee"])
    flagged = c.words[c.words["is_target"]]
    assert flagged["text"].tolist() == ["coffee", "bank", "banks"]
    assert flagged["target"].tolist() == ["coffee", "bank", "bank"]
    assert c.words.loc[c.words["text"] == "banking", "target"].isna().all()


@pytest.mark.parametrize("texts, error, match", [
    ([], ValueError, "empty corpus"),
    (["A sentence.", ""], ValueError, "sentence 1 is empty"),
    (["A sentence.", " \t "], ValueError, "whitespace only"),
    ("A single string.", TypeError, "wrap it in a list"),
    (["A sentence.", 3], TypeError, "sentence 1 is a int"),
])
def test_bad_input_gives_clear_errors(texts, error, match):
    with pytest.raises(error, match=match):
        corpus.sentences(texts)


def test_word_table_is_cached_and_reused(monkeypatch):
    texts = ["A sentence only this cache test parses (lmgeometry corpus tests, v1)."]
    path = table._cache_path(texts)
    path.unlink(missing_ok=True)
    first = corpus.word_table(texts)
    assert path.is_file()

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed again despite the cache")

    monkeypatch.setattr(table, "_parse", no_parse)
    again = corpus.word_table(texts)
    pd.testing.assert_frame_equal(first, again)
    with pytest.raises(AssertionError, match="parsed again"):
        corpus.word_table(texts, cache=False)


def test_digest_covers_sentences_params_and_code_version(monkeypatch):
    a = corpus.sentences(["One sentence.", "Two sentences."])
    b = corpus.sentences(["One sentence.", "Two sentences."])
    assert a.digest() == b.digest() and len(a.digest()) == 64
    assert corpus.sentences(["One sentence.", "Two sentences!"]).digest() != a.digest()
    assert corpus.sentences(["One sentence.", "Two sentences."], name="x").digest() != a.digest()
    assert corpus.sentences(["One sentence.", "Two sentences."],
                            targets=["one"]).digest() != a.digest()
    # a change to the word-table code changes every digest (and every cache key)
    before = a.digest()
    monkeypatch.setattr(table, "WORD_TABLE_CODE_VERSION", table.WORD_TABLE_CODE_VERSION + 1)
    corpus.word_table_version.cache_clear()
    try:
        assert a.digest() != before
    finally:
        monkeypatch.undo()
        corpus.word_table_version.cache_clear()
    assert a.digest() == before


def test_corpus_rejects_a_word_table_without_the_binding_columns():
    c = corpus.sentences(["A sentence."])
    with pytest.raises(ValueError, match="lacks columns"):
        corpus.Corpus("x", c.sentences, c.words.drop(columns=["upos"]), {})


# ---------------------------------------------------------------------------------------------
# targets and mnli_polysemy


def test_target_list_follows_its_documented_rule():
    table = corpus.polysemy_target_table()
    assert 30 <= len(table) <= 60 and table["word"].is_unique
    assert table["word"].tolist() == sorted(table["word"])
    for row in table.itertuples():
        assert row.noun_senses == data.n_senses(row.word, "NOUN"), row.word
        assert row.verb_senses == data.n_senses(row.word, "VERB"), row.word
        assert max(row.noun_senses, row.verb_senses) >= 3, row.word
    counts = corpus.mnli_target_counts()
    merged = table.merge(counts, on="word", suffixes=("", "_now"))
    assert len(merged) == len(table)
    assert (merged["mnli_sentences"] == merged["mnli_sentences_now"]).all()
    assert (merged["mnli_noun_verb_sentences"] >= 10).all()


def test_prefilter_keeps_every_inflection_spacy_lemmatises_to_a_target():
    texts = ["He ran home.", "Lightning struck twice.", "They were tying knots.",
             "Two parties met.", "She is charging it.", "The banks closed.",
             "It was 3banks away.", "Nothing to see here.", "A tiger ate lunch."]
    kept = mnli._prefilter(texts, ["run", "strike", "tie", "party", "charge", "bank"])
    assert kept == [0, 1, 2, 3, 4, 5, 6]
    words = corpus.word_table(texts)
    flagged = set(words.loc[corpus_targets._flag_targets(
        words, ["run", "strike", "tie", "party", "charge", "bank"]).notna(), "sentence_id"])
    assert flagged <= set(kept)


def test_mnli_polysemy_flags_every_target_and_every_sentence_has_one():
    c = corpus.mnli_polysemy(n=300, seed=0)
    targets = set(c.params["targets"])
    _check_table(c.words, c.sentences)
    w = c.words
    should = w["lemma"].str.lower().isin(targets) | w["text"].str.lower().isin(targets)
    assert (w["is_target"] == should).all()
    assert w.loc[w["is_target"], "target"].isin(targets).all()
    assert w.loc[~w["is_target"], "target"].isna().all()
    assert w.loc[w["is_target"], "sentence_id"].nunique() == len(c.sentences) == 300
    assert len(set(c.sentences)) == 300
    # balanced sampling: no target is crowded out
    per_target = c.info["sentences_per_target"]
    assert min(per_target.values()) >= 5
    assert corpus.build("mnli_polysemy", n=300, seed=0).digest() == c.digest()


def test_mnli_polysemy_is_deterministic_and_seeds_differ():
    a, b = corpus.mnli_polysemy(n=100, seed=1), corpus.mnli_polysemy(n=100, seed=1)
    assert a.sentences == b.sentences and a.digest() == b.digest()
    pd.testing.assert_frame_equal(a.words, b.words)
    c = corpus.mnli_polysemy(n=100, seed=2)
    assert c.sentences != a.sentences and c.digest() != a.digest()


def test_a_corpus_slice_equals_parsing_its_sentences_alone():
    c = corpus.mnli_polysemy(n=25, seed=3)
    alone = corpus.word_table(c.sentences, cache=False)
    pd.testing.assert_frame_equal(c.words[list(corpus.WORD_COLUMNS)].drop(columns="is_target"),
                                  alone.drop(columns="is_target"))


def test_mnli_polysemy_too_large_or_bad_n():
    with pytest.raises(ValueError, match=r"only [\d,]+ MNLI dev-matched sentences contain a "
                                         r"target word; pass n <="):
        corpus.mnli_polysemy(n=100_000)
    with pytest.raises(ValueError, match="positive integer"):
        corpus.mnli_polysemy(n=0)
    with pytest.raises(ValueError, match="single alphabetic words"):
        corpus.mnli_polysemy(n=5, targets=["new york"])


def test_balanced_sample_keeps_rare_targets():
    rng = np.random.default_rng(0)
    sets = [frozenset({"common"})] * 200 + [frozenset({"rare"})] * 4
    picked = mnli._balanced_sample(sets, 20, rng)
    assert len(picked) == 20 == len(set(picked)) and picked == sorted(picked)
    assert {200, 201, 202, 203} <= set(picked)


# ---------------------------------------------------------------------------------------------
# STS and word contexts


def test_sts_deduplicates_and_samples_deterministically():
    c = corpus.sts(n=200, seed=0)
    assert len(c.sentences) == 200 == len(set(c.sentences))
    assert all(s == s.strip() and s for s in c.sentences)
    _check_table(c.words, c.sentences)
    frame = data.load_sts()
    pool = {s.strip() for s in pd.concat([frame["sentence1"], frame["sentence2"]]) if s.strip()}
    assert c.info["unique_sentences"] == len(pool) < 2 * len(frame)
    assert set(c.sentences) <= pool
    assert corpus.sts(n=200, seed=0).sentences == c.sentences
    assert corpus.sts(n=200, seed=1).sentences != c.sentences
    with pytest.raises(ValueError, match="unique STS sentences"):
        corpus.sts(n=10_000_000)
    with pytest.raises(ValueError, match="2011"):
        corpus.sts(n=10, years=[2011])


def test_word_contexts_threshold_and_rows():
    texts = ["The dog runs.", "A dog sleeps.", "Dog and dog play.", "My dog eats.",
             "That dog barks.", "A cat runs.", "The cat sleeps.", "My cat eats.",
             "That cat purrs."]
    words = corpus.sentences(texts).words
    ctx = corpus.word_contexts(words, min_contexts=5)
    assert "dog" in ctx.index and "cat" not in ctx.index and "." not in ctx.index
    dog = ctx.loc["dog"]
    assert (dog["n_contexts"], dog["n_occurrences"]) == (5, 6)
    assert words.loc[dog["rows"], "text"].str.lower().eq("dog").all()
    assert len(dog["first_rows"]) == 5
    assert words.loc[dog["first_rows"], "sentence_id"].is_unique
    assert "." in corpus.word_contexts(words, min_contexts=5, include_punct=True).index
    assert set(corpus.word_contexts(words, min_contexts=4).index) >= {"dog", "cat"}


def test_default_sts_gives_a_few_hundred_words_with_five_contexts():
    ctx = corpus.word_contexts(corpus.build("sts").words, min_contexts=5)
    assert (ctx["n_contexts"] >= 5).all()
    assert 200 <= len(ctx) <= 1000


# ---------------------------------------------------------------------------------------------
# SemCor and WiC


@pytest.mark.mirror
def test_semcor_targets_sense_keys_are_valid_and_map_to_the_right_words():
    wn = data.wordnet()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = corpus.semcor_targets(n_words=4, max_per_word=12, seed=0)
    assert not [w for w in caught if "could not be mapped" in str(w.message)]
    _check_table(c.words, c.sentences)
    info = pd.DataFrame(c.info["targets"])
    assert len(info) == 4 and (info["target_senses"] >= 2).all()
    assert sorted(info["pos"]) == ["n", "n", "v", "v"]
    w = c.words
    assert (w["is_target"] == w["sense_key"].notna()).all()
    assert (w["is_target"] == w["target"].notna()).all()
    labelled = w[w["is_target"]]
    assert len(labelled) >= 4 * 12 and c.info["unmapped_targets"] == []
    for row in labelled.itertuples():
        lemma = wn.lemma_from_key(row.sense_key)
        name, pos = row.target.rsplit(".", 1)
        assert lemma.name().lower() == name and lemma.synset().pos() == pos
        assert row.text.lower().startswith(name[:2]) or row.lemma == name
    assert set(labelled["target"]) == {f"{r.lemma}.{r.pos}" for r in info.itertuples()}
    # text comes from SemCor tokens joined by spaces, with multiword underscores as spaces
    assert not any("_" in s for s in c.sentences)
    again = corpus.semcor_targets(n_words=4, max_per_word=12, seed=0)
    assert again.digest() == c.digest() and again.sentences == c.sentences
    with pytest.raises(ValueError, match="pass n_words <="):
        corpus.semcor_targets(n_words=100_000)


def test_wic_pairs_locate_every_target():
    c, pairs = corpus.wic_pairs("dev")
    assert len(pairs) == 638 and len(c.sentences) == 2 * 638
    assert pairs["mapped"].all() and c.info["unmapped_targets"] == []
    frame = data.load_wic("dev")
    for side in (1, 2):
        rows = pairs[f"row{side}"].astype(int).to_numpy()
        sids = pairs[f"sentence_id{side}"].to_numpy()
        assert (c.words.loc[rows, "sentence_id"].to_numpy() == sids).all()
        released = [s.split()[i] for s, i in zip(frame[f"sentence{side}"], frame[f"index{side}"],
                                                 strict=True)]
        assert c.words.loc[rows, "text"].tolist() == released
    assert int(c.words["is_target"].sum()) == 2 * 638
    assert pairs["label"].dtype == bool and 0.4 < pairs["label"].mean() < 0.6


def test_build_dispatches_and_names_the_choices():
    assert corpus.build("sts", n=30, seed=4).sentences == corpus.sts(n=30, seed=4).sentences
    with pytest.raises(ValueError, match="unknown corpus 'mnli'; choose one of mnli_polysemy, "
                                         "sts, semcor_targets"):
        corpus.build("mnli")


def test_qnli_corpus_joins_each_pair_and_splits_it_once():
    c, labels, is_test = corpus.qnli_corpus(n_train=30, n_test=12, seed=3, separator="[SEP]")
    assert len(c.sentences) == len(labels) == len(is_test) == 42 and is_test.sum() == 12
    assert not is_test[:30].any() and set(np.unique(labels)) <= {0, 1}
    w = c.words
    assert all(c.sentences[s][a:b] == t
               for s, a, b, t in zip(w["sentence_id"], w["start"], w["end"], w["text"],
                                     strict=True))
    for sid, part in w.groupby("sentence_id"):
        assert part["word_index"].tolist() == list(range(len(part)))
        assert part["segment"].is_monotonic_increasing and set(part["segment"]) == {0, 1}
        q_end = part.loc[part["segment"] == 0, "end"].max()
        assert c.sentences[sid][q_end:].lstrip().startswith("[SEP] ")
    frame = data.load_qnli()
    pairs = set(zip(frame["question"], frame["sentence"], strict=True))
    first = c.sentences[0].split(" [SEP] ")
    assert tuple(first) in pairs
    plain, _, _ = corpus.qnli_corpus(n_train=30, n_test=12, seed=3)
    assert plain.sentences[0] == " ".join(first)  # the same pairs, in the same order
    assert plain.digest() != c.digest()
    with pytest.raises(ValueError, match="sum to at most"):
        corpus.qnli_corpus(n_train=5000, n_test=1000)


# ---------------------------------------------------------------------------------------------
# benchmark contexts (static embeddings, seed 001's Table 1)

TINY_POOL = [
    "Every morning the old dog sleeps near the warm red door.",       # 0
    "My neighbour says the dog barks at every passing car today.",    # 1
    "A small dog ran across the busy road after the ball.",          # 2
    "They bought a car last year and sold it again soon.",           # 3
    "Her brother parked the car beside the house in the rain.",      # 4
    "We painted the house white before the long winter came.",       # 5
    "Nobody lived in that house after the great fire of 1871.",      # 6
    "Yesterday our two cats slept on the sofa during the film.",     # 7
    "At night the cats chased a mouse under the kitchen table.",      # 8
    "Dog",                                                            # 9 too short
    "The lonely zebra appears in this sentence only.",               # 10
    ("This is a very long sentence in which the car appears far from both of its ends so "
     "that the window has to trim it to a few words around the car."),  # 11
]
TINY_SOURCES = ["brown"] * 9 + ["sts"] * 3
TINY_BENCH = {"toy": pd.DataFrame({"word1": ["dog", "car", "cat", "zebra"],
                                   "word2": ["car", "house", "dog", "dog"],
                                   "score": [3.0, 2.0, 8.0, 5.0]})}


def _contexts(**kwargs):
    args = {"k": 2, "window": 4, "min_contexts": 2, "pool": (TINY_POOL, TINY_SOURCES),
            "frames": TINY_BENCH, **kwargs}
    return corpus.benchmark_contexts(**args)


def test_benchmark_contexts_cover_the_coverable_items_with_k_distinct_contexts():
    c = _contexts()
    info = c.info["benchmarks"]["toy"]
    # zebra occurs in one sentence: its pair is never targeted; the other three are covered
    assert (info["items"], info["coverable_items"], info["covered_items"]) == (4, 3, 3)
    assert info["coverage"] == 0.75
    t = c.words[c.words["is_target"]]
    per_word = t.groupby("target")["sentence_id"].nunique()
    assert per_word.to_dict() == {"car": 2, "cat": 2, "dog": 2, "house": 2}
    assert t.groupby("target").size().to_dict() == per_word.to_dict()  # one row per context
    # "cat" occurs only as "cats": its contexts are the plural's, flagged as "cat"
    assert set(t.loc[t["target"] == "cat", "text"]) == {"cats"}
    assert c.info["plural_target_rows"] == 2 and c.info["targets_unmatched"] == 0
    assert c.info["pool_sentences_too_short"] == 1 and "Dog" not in c.sentences
    assert c.info["target_words"] == c.info["target_words_covered"] == 4
    _check_table(c.words, c.sentences)


def test_benchmark_contexts_are_short_windows_with_left_context():
    c = _contexts(k=5)  # ask for more than the pool has: every usable sentence is taken
    assert c.info["context_words_max"] <= 2 * 4 + 1
    for sid, g in c.words.groupby("sentence_id"):
        assert len(c.sentences[sid].split()) <= 9
        # a target is never among a context's first two words (margin 2)
        assert (g.loc[g["is_target"], "word_index"] >= 2).all()
    long = [s for s in c.sentences if s in TINY_POOL[11]]
    assert long and all(s != TINY_POOL[11] and "car" in s for s in long)
    assert c.info["contexts_trimmed"] >= 1
    # every context is a verbatim slice of a pool sentence
    assert all(any(s in p for p in TINY_POOL) for s in c.sentences)


def test_benchmark_contexts_are_deterministic_for_a_seed():
    a, b = _contexts(seed=3), _contexts(seed=3)
    assert a.sentences == b.sentences and a.digest() == b.digest()
    pd.testing.assert_frame_equal(a.words, b.words)
    assert _contexts(seed=4).params["seed"] == 4


def test_benchmark_contexts_reject_k_below_min_contexts():
    with pytest.raises(ValueError, match="k >= min_contexts"):
        _contexts(k=1)


def test_detokenize_brown_tokens():
    tokens = ["``", "Only", "a", "handful", "''", ",", "the", "jury", "said", "(", "in",
              "$", "5", ")", "."]
    assert corpus.detokenize(tokens) == '"Only a handful", the jury said (in $5).'


def test_a_changed_cached_word_table_is_parsed_again(capsys):
    """One flipped byte in the cached parquet: its sha256 no longer matches the one recorded
    when it was written, so the table is parsed again (with a one-line notice), never served
    with changed values; a table without a recorded sha256 is parsed again too."""
    texts = ["A sentence only the damaged-cache test parses (lmgeometry corpus tests, v2)."]
    path = table._cache_path(texts)
    path.unlink(missing_ok=True)
    first = corpus.word_table(texts)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    capsys.readouterr()
    again = corpus.word_table(texts)
    err = capsys.readouterr().err
    assert "does not match the sha256 recorded" in err and "parsing the sentences again" in err
    pd.testing.assert_frame_equal(first, again)
    assert corpus.word_table(texts) is not None and capsys.readouterr().err == ""
    path.with_name(path.name + table.SUM_SUFFIX).unlink()
    corpus.word_table(texts)
    assert "has no recorded sha256" in capsys.readouterr().err
