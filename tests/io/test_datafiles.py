"""Tests of the data manifest and of fetching and verifying data files.

The error-path tests build their own small mirror in a temporary folder and run everywhere;
the others read ``$LMGEOMETRY_DATA_MIRROR`` (CI sets it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from lmgeometry.io import benchmarks, datafiles, datasets, paths

MIRROR = paths.data_mirror()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entry(name: str) -> pd.Series:
    table = datafiles.manifest()
    return table.set_index("name").loc[name]


# ---------------------------------------------------------------------------------------------
# manifest


def test_manifest_entries_are_complete():
    table = datafiles.manifest()
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
    table = datafiles.manifest()
    for row in table.itertuples():
        assert sums.get(row.path) == row.sha256, row.name
        assert (MIRROR / row.path).stat().st_size == row.size, row.name


@pytest.mark.mirror
def test_verify_all_on_the_mirror_is_all_ok():
    table = datafiles.verify_all()
    assert len(table) == len(datafiles.manifest())
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
    with pytest.raises(datafiles.ChecksumMismatch) as info:
        benchmarks.load_word_similarity("ws353_sim")
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
    assert datafiles.fetch("wic_dev_data") == tmp_mirror / intact.path
    with pytest.raises(datafiles.ChecksumMismatch) as info:
        datasets.load_wic("dev")
    assert damaged.sha256 in str(info.value) and _sha(copy) in str(info.value)
    table = datafiles.verify_all().set_index("name")
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
    assert datafiles.fetch("ws353_rel") == copy
    memo = json.loads((paths.cache_dir("data") / "verified.json").read_text())
    record = memo[str(copy.absolute())]
    assert record["sha256"] == entry.sha256
    assert {"size", "mtime_ns", "inode", "ctime_ns"} <= set(record)
    # An unchanged file: the remembered check is trusted (no re-hash) ...
    real_sha256 = datafiles._sha256
    monkeypatch.setattr(datafiles, "_sha256", lambda path: pytest.fail("re-hashed"))
    assert datafiles.fetch("ws353_rel") == copy
    monkeypatch.setattr(datafiles, "_sha256", real_sha256)
    # ... but new content with size and mtime restored has a new ctime: re-hashed, refused ...
    stat = copy.stat()
    time.sleep(0.05)  # the kernel's file clock ticks every few milliseconds
    copy.write_bytes(original.replace(b"computer", b"COMPUTER", 1))
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(datafiles.ChecksumMismatch):
        datafiles.fetch("ws353_rel")
    # ... and the good file put back with `cp -p` (the damaged copy's mtime) is accepted.
    time.sleep(0.05)
    shutil.copy2(backup, copy)
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert datafiles.fetch("ws353_rel") == copy
    assert datafiles.verify_all().set_index("name").loc["ws353_rel", "status"] == "ok"


def test_missing_mirror_file_names_file_hash_and_fix(tmp_mirror):
    entry = _entry("wic_dev_gold")
    with pytest.raises(datafiles.DataFileMissing) as info:
        datafiles.fetch("wic_dev_gold")
    message = str(info.value)
    assert "'wic_dev_gold'" in message and entry.path in message
    assert entry.sha256 in message and "LMGEOMETRY_DATA_MIRROR" in message
    assert isinstance(info.value, FileNotFoundError)


def test_mirror_that_is_not_a_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.MIRROR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(datafiles.DataFileMissing, match="is not a folder"):
        datafiles.fetch("men")


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
        datafiles.fetch("wic_dev")
    with pytest.raises(ValueError, match="choose one of train, dev, test"):
        datasets.load_wic("validation")
    with pytest.raises(ValueError, match="no STS files for year 2017"):
        datasets.load_sts([2017])
    with pytest.raises(ValueError, match="word-similarity benchmark"):
        benchmarks.load_word_similarity("simlex")


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
    with pytest.raises(datafiles.DataUnavailable) as info:
        datafiles.fetch("ws353_sim")
    message = str(info.value)
    assert "no network" in message and "LMGEOMETRY_DATA_MIRROR" in message
    assert entry.url in message and entry.sha256 in message
    assert not (no_mirror_no_network / "data" / entry.path).exists()


def test_without_mirror_a_file_without_url_says_so(no_mirror_no_network):
    with pytest.raises(datafiles.DataUnavailable, match="no public URL serves this exact file"):
        datafiles.fetch("semcor_naf")


def test_verify_all_without_mirror_and_network_reports_all_missing(no_mirror_no_network):
    table = datafiles.verify_all()
    assert (table["status"] == "missing").all()
    assert table["actual"].isna().all()
    # after the first failed download the rest are not attempted, and say why
    has_url = table["name"].isin(datafiles.manifest().dropna(subset=["url"])["name"])
    assert table.loc[has_url, "message"].str.contains("no network").all()
    assert table.loc[~has_url, "message"].str.contains("no public URL").all()


def test_corrupted_cached_download_says_delete_it(no_mirror_no_network):
    entry = _entry("men")
    cached = no_mirror_no_network / "data" / entry.path
    cached.parent.mkdir(parents=True)
    cached.write_text("sun\tsunlight\t50.0\n")
    with pytest.raises(datafiles.ChecksumMismatch) as info:
        datafiles.fetch("men")
    message = str(info.value)
    assert "delete the cached copy" in message and str(cached) in message
    assert entry.sha256 in message and _sha(cached) in message
