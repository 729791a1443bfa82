"""Tests of the lexical resources: WordNet, sense counts, Brown and SemCor (real data)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmgeometry.io import datafiles, lexical, paths


def _wordnet_or_skip():
    try:
        return lexical.wordnet()
    except datafiles.DataUnavailable as exc:
        pytest.skip(f"no WordNet: {exc}")


def test_wordnet_is_version_3_0():
    wn = _wordnet_or_skip()
    assert wn.get_version() == "3.0"
    assert len(wn.synsets("bank")) == 18
    assert len(wn.synsets("bank", pos="n")) == 10
    assert wn.lemma_from_key("say%2:32:00::").synset().name() == "state.v.01"
    assert lexical.wordnet() is wn  # cached


def test_n_senses():
    _wordnet_or_skip()
    assert lexical.n_senses("bank", "NOUN") == 10
    assert lexical.n_senses("good", "ADJ") == 21  # head and satellite adjective senses
    assert lexical.n_senses("run", "VERB") == 41
    assert lexical.n_senses("Bank", "NOUN") == 10
    assert lexical.n_senses("primary election", "NOUN") == 1
    assert lexical.n_senses("qwzxv", "NOUN") == 0
    assert lexical.n_senses("geese", "NOUN") == 0  # not a lemma
    assert lexical.n_senses("better", "ADJ") == 4  # its own senses, not those of "good"
    assert lexical.n_senses("the", "DET") is None
    assert lexical.n_senses("London", "PROPN") is None


@pytest.mark.mirror
def test_wordnet_files_are_copied_not_linked():
    lexical.wordnet()
    folder = paths.cache_dir("nltk_data") / "corpora" / "wordnet"
    for row in datafiles.manifest().query("dataset == 'wordnet'").itertuples():
        copy = folder / Path(row.path).name
        assert copy.is_file() and not copy.is_symlink()
        assert copy.stat().st_size == row.size



def test_brown_words():
    words = lexical.brown_words()
    assert len(words) == 1_161_192
    assert words[:7] == ["The", "Fulton", "County", "Grand", "Jury", "said", "Friday"]
    words.clear()  # callers get their own list
    assert len(lexical.brown_words()) == 1_161_192



# ---------------------------------------------------------------------------------------------
# SemCor (parses ~220 MB of XML: slow)


@pytest.mark.mirror
@pytest.mark.slow
def test_semcor_parse_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    frame = lexical.load_semcor()
    assert list(frame.columns) == ["doc", "sentence_id", "token_index", "text", "lemma", "pos",
                                   "sense_key"]
    assert len(frame) == 778_587
    assert frame["doc"].nunique() == 352
    assert frame["sentence_id"].nunique() == 37_176
    assert frame["sense_key"].notna().sum() == 224_716
    # sentence ids run 0..n-1 in order; token indices restart at 0 in each sentence
    ids = frame["sentence_id"].to_numpy()
    assert ids[0] == 0 and np.all(np.diff(ids) >= 0) and np.all(np.diff(ids) <= 1)
    starts = np.r_[True, np.diff(ids) == 1]
    assert np.all(frame["token_index"].to_numpy()[starts] == 0)
    tokens = frame["token_index"].to_numpy()
    assert np.all((tokens[1:] == tokens[:-1] + 1) | starts[1:])
    first = frame.iloc[:3]
    assert first["text"].tolist() == ["The", "Fulton_County_Grand_Jury", "said"]
    assert first["sense_key"].tolist() == [None, "group%1:03:00::", "say%2:32:00::"]
    assert frame.loc[frame["lemma"].isna(), "sense_key"].isna().all()
    assert frame.loc[frame["lemma"].isna(), "pos"].isna().all()
    assert frame.loc[frame["text"] == ",", "pos"].isna().mean() > 0.999  # punctuation: no term
    keys = frame["sense_key"].dropna()
    assert keys.map(lambda k: re.fullmatch(r"[^%\s]+%[1-5]:\d\d:\d\d:[^:]*:\d*", k)
                    is not None).all()
    wn = _wordnet_or_skip()
    for key in keys.sample(300, random_state=0):
        wn.lemma_from_key(key)  # raises if the key is not in WordNet 3.0
    # the table was cached atomically and is read back unchanged
    derived = paths.cache_dir("data", "derived")
    assert [p.suffix for p in derived.iterdir()] == [".parquet"]
    pd.testing.assert_frame_equal(lexical.load_semcor(), frame)
