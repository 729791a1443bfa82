"""Data files: a hashed manifest, fetching from a mirror or the original URL, checks.
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

The loaders built on :func:`fetch` live beside this module, one idea each
(:mod:`~lmgeometry.io.datasets`, :mod:`~lmgeometry.io.benchmarks`,
:mod:`~lmgeometry.io.lexical`, :mod:`~lmgeometry.io.vectors`,
:mod:`~lmgeometry.io.tokenizer`, :mod:`~lmgeometry.io.released`);
:mod:`lmgeometry.io.data` gathers every public name under its old path.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from lmgeometry.errors import (
    ChecksumMismatch,
    DataError,
    DataFileMissing,
    DataUnavailable,
    one_line,
)
from lmgeometry.io import paths

__all__ = [
    "ChecksumMismatch",
    "DataError",
    "DataFileMissing",
    "DataUnavailable",
    "DOWNLOAD_RETRIES",
    "fetch",
    "manifest",
    "MANIFEST_PATH",
    "verify_all",
]

log = logging.getLogger(__name__)

MANIFEST_PATH = Path(__file__).with_name("manifest.json")


_DOWNLOAD_TIMEOUT_S = 60

#: Further attempts at a download that failed (a dropped connection, a server error, a file
#: that arrived damaged), after a pause of 1, 2, ... seconds (pooch's ``retry_if_failed``).
DOWNLOAD_RETRIES = 2


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
    registry = pooch.create(path=target.parent, base_url="",
                            registry={target.name: f"sha256:{e.sha256}"},
                            urls={target.name: e.url}, retry_if_failed=DOWNLOAD_RETRIES)
    try:
        registry.fetch(target.name, downloader=downloader)
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
