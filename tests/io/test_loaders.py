"""Tests of the table loaders: sentence-level task data (:mod:`lmgeometry.io.datasets`) and
word benchmarks (:mod:`lmgeometry.io.benchmarks`), row counts as in the mirror's SOURCES.md.

They read the real data: from ``$LMGEOMETRY_DATA_MIRROR`` (CI sets it) or, without a mirror,
from the original URLs. With neither they are skipped.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lmgeometry.io import benchmarks, datasets

# ---------------------------------------------------------------------------------------------
# loaders: row counts as in SOURCES.md


ROW_COUNTS = [
    ("mnli", datasets.load_mnli, (), 9_815),
    ("sts", datasets.load_sts, (), 26_775),
    ("stsb-train", datasets.load_stsb, ("train",), 5_749),
    ("stsb-dev", datasets.load_stsb, ("dev",), 1_500),
    ("stsb-test", datasets.load_stsb, ("test",), 1_379),
    ("sst2-train", datasets.load_sst2, ("train",), 67_349),
    ("sst2-dev", datasets.load_sst2, ("dev",), 872),
    ("sst2-test", datasets.load_sst2, ("test",), 1_821),
    ("qnli", datasets.load_qnli, (), 5_463),
    ("simlex999", benchmarks.load_word_similarity, ("simlex999",), 999),
    ("men", benchmarks.load_word_similarity, ("men",), 3_000),
    ("ws353", benchmarks.load_word_similarity, ("ws353",), 353),
    ("ws353_sim", benchmarks.load_word_similarity, ("ws353_sim",), 203),
    ("ws353_rel", benchmarks.load_word_similarity, ("ws353_rel",), 252),
    ("rw", benchmarks.load_word_similarity, ("rw",), 2_034),
    ("google", benchmarks.load_analogies, ("google",), 19_544),
    ("msr", benchmarks.load_analogies, ("msr",), 8_000),
    # SOURCES.md says 201 / 403 words: that counts the empty separator row of each category
    ("bless", benchmarks.load_categorisation, ("bless",), 200),
    ("ap", benchmarks.load_categorisation, ("ap",), 402),
    ("semeval2012", benchmarks.load_semeval2012, (), 246 + 3_218),
    ("wic-train", datasets.load_wic, ("train",), 5_428),
    ("wic-dev", datasets.load_wic, ("dev",), 638),
    ("wic-test", datasets.load_wic, ("test",), 1_400),
]


@pytest.mark.data
@pytest.mark.parametrize(("loader", "args", "n_rows"), [r[1:] for r in ROW_COUNTS],
                         ids=[r[0] for r in ROW_COUNTS])
def test_row_counts(loader, args, n_rows):
    frame = loader(*args)
    assert len(frame) == n_rows
    assert frame.index.equals(pd.RangeIndex(n_rows))


# ---------------------------------------------------------------------------------------------
# loaders: column sanity


def _no_empty(frame: pd.DataFrame, columns: list[str]) -> None:
    for column in columns:
        assert frame[column].map(lambda s: isinstance(s, str) and s != "").all(), column


@pytest.mark.data
def test_mnli_labels():
    frame = datasets.load_mnli()
    assert list(frame.columns) == ["premise", "hypothesis", "label"]
    assert frame["label"].value_counts().to_dict() == {
        "entailment": 3_479, "contradiction": 3_213, "neutral": 3_123}
    _no_empty(frame, ["premise", "hypothesis"])


@pytest.mark.data
def test_sts_years_scores_and_unscored_pairs():
    frame = datasets.load_sts()
    assert list(frame.columns) == ["year", "source", "split", "score", "sentence1", "sentence2"]
    per_year = frame.groupby("year")["score"].agg(["size", "count"])
    assert per_year["size"].to_dict() == {2012: 3_842, 2013: 1_500, 2014: 3_750,
                                          2015: 8_500, 2016: 9_183}
    # 2012-2014 are fully scored; 2015 and 2016 also hold pairs released without a score
    assert per_year["count"].to_dict() == {2012: 3_842, 2013: 1_500, 2014: 3_750,
                                           2015: 3_000, 2016: 1_186}
    assert frame["score"].dropna().between(0, 5).all()
    assert "MSRvid" not in set(frame["source"])
    assert set(frame["split"]) == {"train", "test"}
    _no_empty(frame, ["sentence1", "sentence2"])
    only_2016 = datasets.load_sts([2016])
    assert len(only_2016) == 9_183 and set(only_2016["year"]) == {2016}
    assert only_2016["source"].nunique() == 5


@pytest.mark.data
def test_stsb_columns():
    frame = datasets.load_stsb("dev")
    assert list(frame.columns) == ["genre", "source", "year", "id", "score", "sentence1",
                                   "sentence2"]
    assert frame["score"].between(0, 5).all()
    assert set(frame["genre"]) == {"main-captions", "main-forums", "main-news"}
    first = frame.iloc[0]
    assert (first["source"], first["year"], first["score"]) == ("MSRvid", "2012test", 5.0)
    assert first["sentence1"] == "A man with a hard hat is dancing."
    _no_empty(frame, ["sentence1", "sentence2"])


@pytest.mark.data
def test_sst2_labels():
    train, test = datasets.load_sst2("train"), datasets.load_sst2("test")
    assert str(train["label"].dtype) == "Int8"
    assert set(train["label"]) == {0, 1}
    assert test["label"].isna().all()
    assert train.iloc[0]["sentence"] == "hide new secretions from the parental units"
    _no_empty(train, ["sentence"])
    _no_empty(test, ["sentence"])


@pytest.mark.parametrize(("loader", "what"), [(datasets.load_stsb, "STS-B"),
                                              (datasets.load_sst2, "SST-2"),
                                              (datasets.load_wic, "WiC")])
def test_an_unknown_split_is_refused_before_any_file_is_read(loader, what, monkeypatch,
                                                             tmp_path):
    # an empty mirror and cache: fetching first would fail otherwise (no such manifest entry)
    monkeypatch.setenv("LMGEOMETRY_DATA_MIRROR", str(tmp_path))
    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match=rf"^unknown {what} split 'validation'; choose one "
                                         "of train, dev, test$"):
        loader("validation")


@pytest.mark.data
def test_qnli_labels():
    frame = datasets.load_qnli()
    assert frame["label"].value_counts().to_dict() == {"not_entailment": 2_761,
                                                       "entailment": 2_702}
    _no_empty(frame, ["question", "sentence"])


@pytest.mark.data
@pytest.mark.parametrize("name", sorted(benchmarks.SIMILARITY_SCALES))
def test_word_similarity_scores_in_scale(name):
    frame = benchmarks.load_word_similarity(name)
    low, high = benchmarks.SIMILARITY_SCALES[name]
    assert frame["score"].between(low, high).all()
    assert frame["score"].max() > low + 0.8 * (high - low)  # uses the whole scale
    _no_empty(frame, ["word1", "word2"])


@pytest.mark.data
def test_simlex_has_pos_from_the_original_release():
    frame = benchmarks.load_word_similarity("simlex999")
    assert list(frame.columns) == ["word1", "word2", "score", "pos"]
    assert frame["pos"].value_counts().to_dict() == {"N": 666, "V": 222, "A": 111}
    assert frame.iloc[1].tolist() == ["smart", "intelligent", 9.2, "A"]


@pytest.mark.data
def test_analogies_and_categories():
    google, msr = benchmarks.load_analogies("google"), benchmarks.load_analogies("msr")
    assert list(google.columns) == ["a", "b", "c", "d", "category"]
    assert google["category"].nunique() == 14 and msr["category"].nunique() == 16
    assert google.iloc[0].tolist() == ["Athens", "Greece", "Baghdad", "Iraq",
                                       "capital-common-countries"]
    _no_empty(google, ["a", "b", "c", "d"])
    _no_empty(msr, ["a", "b", "c", "d"])
    for name, n_categories in (("bless", 17), ("ap", 21)):
        frame = benchmarks.load_categorisation(name)
        assert list(frame.columns) == ["word", "category"]
        assert frame["category"].nunique() == n_categories
        assert frame["word"].is_unique
        _no_empty(frame, ["word"])


@pytest.mark.data
def test_semeval2012_frame():
    frame = benchmarks.load_semeval2012()
    assert frame["category"].nunique() == 79
    assert frame.groupby("split")["category"].nunique().to_dict() == {"train": 10, "test": 69}
    assert frame["role"].value_counts().to_dict() == {"rated": 3_218, "paradigm": 246}
    paradigms, rated = frame[frame["role"] == "paradigm"], frame[frame["role"] == "rated"]
    assert paradigms["score"].isna().all()
    assert rated["score"].between(-100, 100).all()
    assert (paradigms.groupby("category").size() >= 3).all()
    one = frame[frame["category"] == "1a"].iloc[0]
    assert (one["relation"], one["subcategory"], one["split"]) == (
        "CLASS-INCLUSION", "Taxonomic", "train")
    assert one["definition"] == "Y is a kind/type/instance of X"
    assert (one["word1"], one["word2"]) == ("flower", "tulip")
    laugh = rated[(rated["category"] == "10b") & (rated["word1"] == "laugh")
                  & (rated["word2"] == "happiness")]
    assert laugh["score"].tolist() == [50.0]
    # "popular:shy. right:bad, believe:deny" and "bulwark: flimsy" are read as pairs
    assert paradigms[paradigms["category"] == "4g"]["word1"].tolist() == [
        "popular", "right", "believe"]
    assert ("bulwark", "flimsy") in set(zip(paradigms["word1"], paradigms["word2"], strict=True))
    _no_empty(frame, ["word1", "word2"])


@pytest.mark.data
@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_wic_columns(split):
    frame = datasets.load_wic(split)
    assert list(frame.columns) == ["word", "pos", "index1", "index2", "sentence1", "sentence2",
                                   "label"]
    assert frame["label"].dtype == bool
    assert frame["label"].mean() == pytest.approx(0.5, abs=0.01)
    assert set(frame["pos"]) == {"N", "V"}
    for index, sentence in (("index1", "sentence1"), ("index2", "sentence2")):
        n_tokens = frame[sentence].str.split().str.len()
        assert ((frame[index] >= 0) & (frame[index] < n_tokens)).all()


@pytest.mark.data
def test_wic_dev_first_instance():
    first = datasets.load_wic("dev").iloc[0]
    assert first.tolist() == ["board", "N", 2, 2, "Room and board .",
                              "He nailed boards across the windows .", False]
