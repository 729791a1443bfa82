"""Tests of the data manifest, fetching/verification and every loader.

Loader tests read the real data: from ``$LMGEOMETRY_DATA_MIRROR`` (CI sets it) or, without a
mirror, from the original URLs. With neither they are skipped. The error-path tests build their
own small mirror in a temporary folder and run everywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmgeometry.io import data, paths

MIRROR = paths.data_mirror()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entry(name: str) -> pd.Series:
    table = data.manifest()
    return table.set_index("name").loc[name]


# ---------------------------------------------------------------------------------------------
# manifest


def test_manifest_entries_are_complete():
    table = data.manifest()
    assert table["name"].is_unique and table["path"].is_unique
    assert table["sha256"].str.fullmatch(r"[0-9a-f]{64}").all()
    assert (table["size"] > 0).all()
    for column in ("licence", "citation", "source"):
        assert table[column].str.len().gt(10).all(), column
    with_url = table["url"].notna()
    # raw GitHub files at a commit, or (GPT-2's tokenizer) OpenAI's own release location
    hosts = ("https://raw.githubusercontent.com/", "https://openaipublic.blob.core.windows.net/")
    assert table.loc[with_url, "url"].str.startswith(hosts).all()
    # only the mirror-made SemCor tarball and the Debian WordNet files lack a URL
    assert set(table.loc[~with_url, "dataset"]) == {"semcor", "wordnet"}


@pytest.mark.mirror
def test_manifest_agrees_with_the_mirrors_own_checksums():
    sums = {}
    for line in (MIRROR / "SHA256SUMS").read_text().splitlines():
        digest, path = line.split(None, 1)
        sums[path.strip().removeprefix("./")] = digest
    table = data.manifest()
    for row in table.itertuples():
        assert sums.get(row.path) == row.sha256, row.name
        assert (MIRROR / row.path).stat().st_size == row.size, row.name


@pytest.mark.mirror
def test_verify_all_on_the_mirror_is_all_ok():
    table = data.verify_all()
    assert len(table) == len(data.manifest())
    assert {"name", "path", "status", "expected", "actual", "message"} <= set(table.columns)
    bad = table[table["status"] != "ok"]
    assert bad.empty, bad[["name", "status", "message"]].to_string()
    assert (table["expected"] == table["actual"]).all()


# ---------------------------------------------------------------------------------------------
# error paths (own temporary mirror or cache; no real data needed)


@pytest.fixture
def tmp_mirror(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv(paths.MIRROR_ENV, str(mirror))
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    return mirror


def test_corrupted_mirror_file_names_file_and_both_hashes(tmp_mirror):
    entry = _entry("ws353_sim")
    target = tmp_mirror / entry.path
    target.parent.mkdir(parents=True)
    target.write_text("tiger\tcat\t7.35\n")  # a damaged copy: one line of 203
    actual = _sha(target)
    with pytest.raises(data.ChecksumMismatch) as info:
        data.load_word_similarity("ws353_sim")
    assert (info.value.expected, info.value.actual) == (entry.sha256, actual)
    message = str(info.value)
    assert "'ws353_sim'" in message and entry.path in message
    assert entry.sha256 in message and actual in message
    assert "LMGEOMETRY_DATA_MIRROR" in message


@pytest.mark.mirror
def test_corrupted_copy_beside_intact_symlinked_files(tmp_mirror):
    """One corrupted copy fails; the symlinked originals next to it still load."""
    damaged, intact = _entry("wic_dev_gold"), _entry("wic_dev_data")
    for entry in (damaged, intact):
        (tmp_mirror / entry.path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_mirror / intact.path).symlink_to(MIRROR / intact.path)
    copy = tmp_mirror / damaged.path
    copy.write_bytes((MIRROR / damaged.path).read_bytes().replace(b"F", b"T", 1))
    assert data.fetch("wic_dev_data") == tmp_mirror / intact.path
    with pytest.raises(data.ChecksumMismatch) as info:
        data.load_wic("dev")
    assert damaged.sha256 in str(info.value) and _sha(copy) in str(info.value)
    table = data.verify_all().set_index("name")
    assert table.loc["wic_dev_gold", "status"] == "checksum mismatch"
    assert table.loc["wic_dev_gold", "actual"] == _sha(copy)
    assert table.loc["wic_dev_data", "status"] == "ok"
    assert table.loc["wic_train_data", "status"] == "missing"


@pytest.mark.mirror
def test_checks_are_remembered_until_the_file_changes(tmp_mirror, monkeypatch):
    entry = _entry("ws353_rel")
    copy = tmp_mirror / entry.path
    copy.parent.mkdir(parents=True)
    original = (MIRROR / entry.path).read_bytes()
    copy.write_bytes(original)
    backup = copy.with_name("backup.txt")
    shutil.copy2(copy, backup)
    assert data.fetch("ws353_rel") == copy
    memo = json.loads((paths.cache_dir("data") / "verified.json").read_text())
    record = memo[str(copy.absolute())]
    assert record["sha256"] == entry.sha256
    assert {"size", "mtime_ns", "inode", "ctime_ns"} <= set(record)
    # An unchanged file: the remembered check is trusted (no re-hash) ...
    real_sha256 = data._sha256
    monkeypatch.setattr(data, "_sha256", lambda path: pytest.fail("re-hashed"))
    assert data.fetch("ws353_rel") == copy
    monkeypatch.setattr(data, "_sha256", real_sha256)
    # ... but new content with size and mtime restored has a new ctime: re-hashed, refused ...
    stat = copy.stat()
    time.sleep(0.05)  # the kernel's file clock ticks every few milliseconds
    copy.write_bytes(original.replace(b"computer", b"COMPUTER", 1))
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(data.ChecksumMismatch):
        data.fetch("ws353_rel")
    # ... and the good file put back with `cp -p` (the damaged copy's mtime) is accepted.
    time.sleep(0.05)
    shutil.copy2(backup, copy)
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert data.fetch("ws353_rel") == copy
    assert data.verify_all().set_index("name").loc["ws353_rel", "status"] == "ok"


def test_missing_mirror_file_names_file_hash_and_fix(tmp_mirror):
    entry = _entry("wic_dev_gold")
    with pytest.raises(data.DataFileMissing) as info:
        data.fetch("wic_dev_gold")
    message = str(info.value)
    assert "'wic_dev_gold'" in message and entry.path in message
    assert entry.sha256 in message and "LMGEOMETRY_DATA_MIRROR" in message
    assert isinstance(info.value, FileNotFoundError)


def test_mirror_that_is_not_a_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.MIRROR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(data.DataFileMissing, match="is not a folder"):
        data.fetch("men")


def test_cache_root_env_then_platform_cache_folder(tmp_path, monkeypatch):
    """$LMGEOMETRY_CACHE first; else platformdirs' user cache folder, which honours
    XDG_CACHE_HOME and, without it on Linux, is the ~/.cache/lmgeometry of earlier versions."""
    import sys

    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_root() == tmp_path / "mine"
    monkeypatch.delenv(paths.CACHE_ENV)
    if sys.platform.startswith("linux"):
        assert paths.cache_root() == tmp_path / "xdg" / "lmgeometry"
        assert paths.cache_dir("data") == tmp_path / "xdg" / "lmgeometry" / "data"
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert paths.cache_root() == tmp_path / "home" / ".cache" / "lmgeometry"
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "file"))
    with pytest.raises(paths.PathError, match="is a file, not a folder"):
        paths.cache_root()


def test_unknown_name_and_bad_arguments():
    with pytest.raises(KeyError, match="no data file named 'wic_dev'"):
        data.fetch("wic_dev")
    with pytest.raises(ValueError, match="choose one of train, dev, test"):
        data.load_wic("validation")
    with pytest.raises(ValueError, match="no STS files for year 2017"):
        data.load_sts([2017])
    with pytest.raises(ValueError, match="word-similarity benchmark"):
        data.load_word_similarity("simlex")


@pytest.fixture
def no_mirror_no_network(tmp_path, monkeypatch):
    """No mirror, an empty cache, and every HTTPS request sent to a closed local proxy port."""
    monkeypatch.delenv(paths.MIRROR_ENV, raising=False)
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    return tmp_path / "cache"


def test_without_mirror_and_network_the_error_says_so(no_mirror_no_network):
    entry = _entry("ws353_sim")
    with pytest.raises(data.DataUnavailable) as info:
        data.fetch("ws353_sim")
    message = str(info.value)
    assert "no network" in message and "LMGEOMETRY_DATA_MIRROR" in message
    assert entry.url in message and entry.sha256 in message
    assert not (no_mirror_no_network / "data" / entry.path).exists()


def test_without_mirror_a_file_without_url_says_so(no_mirror_no_network):
    with pytest.raises(data.DataUnavailable, match="no public URL serves this exact file"):
        data.fetch("semcor_naf")


def test_verify_all_without_mirror_and_network_reports_all_missing(no_mirror_no_network):
    table = data.verify_all()
    assert (table["status"] == "missing").all()
    assert table["actual"].isna().all()
    # after the first failed download the rest are not attempted, and say why
    has_url = table["name"].isin(data.manifest().dropna(subset=["url"])["name"])
    assert table.loc[has_url, "message"].str.contains("no network").all()
    assert table.loc[~has_url, "message"].str.contains("no public URL").all()


def test_corrupted_cached_download_says_delete_it(no_mirror_no_network):
    entry = _entry("men")
    cached = no_mirror_no_network / "data" / entry.path
    cached.parent.mkdir(parents=True)
    cached.write_text("sun\tsunlight\t50.0\n")
    with pytest.raises(data.ChecksumMismatch) as info:
        data.fetch("men")
    message = str(info.value)
    assert "delete the cached copy" in message and str(cached) in message
    assert entry.sha256 in message and _sha(cached) in message


# ---------------------------------------------------------------------------------------------
# loaders: row counts as in SOURCES.md


ROW_COUNTS = [
    ("mnli", data.load_mnli, (), 9_815),
    ("sts", data.load_sts, (), 26_775),
    ("stsb-train", data.load_stsb, ("train",), 5_749),
    ("stsb-dev", data.load_stsb, ("dev",), 1_500),
    ("stsb-test", data.load_stsb, ("test",), 1_379),
    ("sst2-train", data.load_sst2, ("train",), 67_349),
    ("sst2-dev", data.load_sst2, ("dev",), 872),
    ("sst2-test", data.load_sst2, ("test",), 1_821),
    ("qnli", data.load_qnli, (), 5_463),
    ("simlex999", data.load_word_similarity, ("simlex999",), 999),
    ("men", data.load_word_similarity, ("men",), 3_000),
    ("ws353", data.load_word_similarity, ("ws353",), 353),
    ("ws353_sim", data.load_word_similarity, ("ws353_sim",), 203),
    ("ws353_rel", data.load_word_similarity, ("ws353_rel",), 252),
    ("rw", data.load_word_similarity, ("rw",), 2_034),
    ("google", data.load_analogies, ("google",), 19_544),
    ("msr", data.load_analogies, ("msr",), 8_000),
    # SOURCES.md says 201 / 403 words: that counts the empty separator row of each category
    ("bless", data.load_categorisation, ("bless",), 200),
    ("ap", data.load_categorisation, ("ap",), 402),
    ("semeval2012", data.load_semeval2012, (), 246 + 3_218),
    ("wic-train", data.load_wic, ("train",), 5_428),
    ("wic-dev", data.load_wic, ("dev",), 638),
    ("wic-test", data.load_wic, ("test",), 1_400),
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
    frame = data.load_mnli()
    assert list(frame.columns) == ["premise", "hypothesis", "label"]
    assert frame["label"].value_counts().to_dict() == {
        "entailment": 3_479, "contradiction": 3_213, "neutral": 3_123}
    _no_empty(frame, ["premise", "hypothesis"])


@pytest.mark.data
def test_sts_years_scores_and_unscored_pairs():
    frame = data.load_sts()
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
    only_2016 = data.load_sts([2016])
    assert len(only_2016) == 9_183 and set(only_2016["year"]) == {2016}
    assert only_2016["source"].nunique() == 5


@pytest.mark.data
def test_stsb_columns():
    frame = data.load_stsb("dev")
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
    train, test = data.load_sst2("train"), data.load_sst2("test")
    assert str(train["label"].dtype) == "Int8"
    assert set(train["label"]) == {0, 1}
    assert test["label"].isna().all()
    assert train.iloc[0]["sentence"] == "hide new secretions from the parental units"
    _no_empty(train, ["sentence"])
    _no_empty(test, ["sentence"])


@pytest.mark.data
def test_qnli_labels():
    frame = data.load_qnli()
    assert frame["label"].value_counts().to_dict() == {"not_entailment": 2_761,
                                                       "entailment": 2_702}
    _no_empty(frame, ["question", "sentence"])


@pytest.mark.data
@pytest.mark.parametrize("name", sorted(data.SIMILARITY_SCALES))
def test_word_similarity_scores_in_scale(name):
    frame = data.load_word_similarity(name)
    low, high = data.SIMILARITY_SCALES[name]
    assert frame["score"].between(low, high).all()
    assert frame["score"].max() > low + 0.8 * (high - low)  # uses the whole scale
    _no_empty(frame, ["word1", "word2"])


@pytest.mark.data
def test_simlex_has_pos_from_the_original_release():
    frame = data.load_word_similarity("simlex999")
    assert list(frame.columns) == ["word1", "word2", "score", "pos"]
    assert frame["pos"].value_counts().to_dict() == {"N": 666, "V": 222, "A": 111}
    assert frame.iloc[1].tolist() == ["smart", "intelligent", 9.2, "A"]


@pytest.mark.data
def test_analogies_and_categories():
    google, msr = data.load_analogies("google"), data.load_analogies("msr")
    assert list(google.columns) == ["a", "b", "c", "d", "category"]
    assert google["category"].nunique() == 14 and msr["category"].nunique() == 16
    assert google.iloc[0].tolist() == ["Athens", "Greece", "Baghdad", "Iraq",
                                       "capital-common-countries"]
    _no_empty(google, ["a", "b", "c", "d"])
    _no_empty(msr, ["a", "b", "c", "d"])
    for name, n_categories in (("bless", 17), ("ap", 21)):
        frame = data.load_categorisation(name)
        assert list(frame.columns) == ["word", "category"]
        assert frame["category"].nunique() == n_categories
        assert frame["word"].is_unique
        _no_empty(frame, ["word"])


@pytest.mark.data
def test_semeval2012_frame():
    frame = data.load_semeval2012()
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
    frame = data.load_wic(split)
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
    first = data.load_wic("dev").iloc[0]
    assert first.tolist() == ["board", "N", 2, 2, "Room and board .",
                              "He nailed boards across the windows .", False]


# ---------------------------------------------------------------------------------------------
# WordNet, Brown, word frequencies


def _wordnet_or_skip():
    try:
        return data.wordnet()
    except data.DataUnavailable as exc:
        pytest.skip(f"no WordNet: {exc}")


def test_wordnet_is_version_3_0():
    wn = _wordnet_or_skip()
    assert wn.get_version() == "3.0"
    assert len(wn.synsets("bank")) == 18
    assert len(wn.synsets("bank", pos="n")) == 10
    assert wn.lemma_from_key("say%2:32:00::").synset().name() == "state.v.01"
    assert data.wordnet() is wn  # cached


def test_n_senses():
    _wordnet_or_skip()
    assert data.n_senses("bank", "NOUN") == 10
    assert data.n_senses("good", "ADJ") == 21  # head and satellite adjective senses
    assert data.n_senses("run", "VERB") == 41
    assert data.n_senses("Bank", "NOUN") == 10
    assert data.n_senses("primary election", "NOUN") == 1
    assert data.n_senses("qwzxv", "NOUN") == 0
    assert data.n_senses("geese", "NOUN") == 0  # not a lemma
    assert data.n_senses("better", "ADJ") == 4  # its own senses, not those of "good"
    assert data.n_senses("the", "DET") is None
    assert data.n_senses("London", "PROPN") is None


@pytest.mark.mirror
def test_wordnet_files_are_copied_not_linked():
    data.wordnet()
    folder = paths.cache_dir("nltk_data") / "corpora" / "wordnet"
    for row in data.manifest().query("dataset == 'wordnet'").itertuples():
        copy = folder / Path(row.path).name
        assert copy.is_file() and not copy.is_symlink()
        assert copy.stat().st_size == row.size


@pytest.mark.data
@pytest.mark.data
def test_gpt2_tokenizer_is_gpt2s():
    tok = data.gpt2_tokenizer()
    assert len(tok) == data.GPT2_VOCAB_SIZE == 50_257
    assert tok.is_fast and tok.model_max_length == 1024
    assert tok.bos_token == tok.eos_token == tok.unk_token == "<|endoftext|>"
    assert tok.convert_tokens_to_ids("<|endoftext|>") == 50256
    # known ids of the released vocabulary; GPT-2 adds no special token to a text
    assert tok("Hello world")["input_ids"] == [15496, 995]
    assert tok("The cat, the end.")["input_ids"][:1] == [464]
    assert tok(" the")["input_ids"] == [262] and tok(",")["input_ids"] == [11]
    # a leading space is part of the next piece (Ġ); non-ASCII letters are byte pieces
    pieces = tok.convert_ids_to_tokens(tok("Hello naïve world")["input_ids"])
    assert pieces[0] == "Hello" and pieces[-1] == "Ġworld"
    assert "".join(pieces[1:-1]).startswith("Ġna")
    assert tok.decode(tok("Hello naïve world")["input_ids"]) == "Hello naïve world"


def test_brown_words():
    words = data.brown_words()
    assert len(words) == 1_161_192
    assert words[:7] == ["The", "Fulton", "County", "Grand", "Jury", "said", "Friday"]
    words.clear()  # callers get their own list
    assert len(data.brown_words()) == 1_161_192


def test_word_frequency():
    the, bank = data.word_frequency("the"), data.word_frequency("bank")
    assert 0.01 < the < 0.1
    assert 0 < bank < the
    assert data.word_frequency("qwzxvqwzxv") == 0.0


# ---------------------------------------------------------------------------------------------
# SemCor (parses ~220 MB of XML: slow)


@pytest.mark.mirror
@pytest.mark.slow
def test_semcor_parse_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    frame = data.load_semcor()
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
    pd.testing.assert_frame_equal(data.load_semcor(), frame)
