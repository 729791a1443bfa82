"""Content checks of cached files, paid once per file and machine.

Every cache (store entries, converted models, fine-tuned checkpoints) records the sha256 of
each file it wrote. Checking it reads every byte, so the result is remembered: under the
file's *stamp*, its resolved path, size, ``mtime_ns``, inode and ``ctime_ns`` together, in
``<cache>/fingerprints/sha256.json``. A file rewritten with its modification time restored
by hand, or replaced by ``cp -p``, has a new ``ctime`` (which no user can set), so it is hashed
again. A writer that has just computed a file's sha256 records it (:func:`remember`), so the
first use after a build costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from lmgeometry.errors import PathError
from lmgeometry.io import paths

__all__ = ["changed_files", "remember", "sha256_file", "stamped_sha256"]

logger = logging.getLogger(__name__)

_memo: dict[str, str] = {}


def sha256_file(path: Path) -> str:
    """sha256 (hex) of a file's bytes, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> str:
    real = path.resolve()
    stat = real.stat()
    return f"{real}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}|{stat.st_ctime_ns}"


def _record_file() -> Path:
    return paths.cache_dir("fingerprints") / "sha256.json"


def _read_records() -> dict[str, str]:
    try:
        stored = json.loads(_record_file().read_text())
    except (OSError, ValueError, PathError):  # no usable cache root: nothing remembered
        return {}
    return stored if isinstance(stored, dict) else {}


def _store(new: Mapping[str, str]) -> None:
    """Merge ``new`` into the record file and replace it atomically (a lost race between two
    processes only costs a second hash later)."""
    if not new:
        return
    stored = _read_records()
    stored.update(new)
    try:
        target = _record_file()
    except PathError as exc:  # no usable cache root: the checks still ran
        logger.info("could not record checksums: %s", exc)
        return
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        tmp.write_text(json.dumps(stored, indent=0, sort_keys=True))
        os.replace(tmp, target)
    except OSError as exc:  # a read-only or full cache: the checks still ran
        tmp.unlink(missing_ok=True)
        logger.info("could not record checksums in %s: %s", target, exc)


def stamped_sha256(files: Iterable[Path]) -> dict[Path, str]:
    """sha256 of each file, hashing only files whose stamp was not seen before.

    Parameters
    ----------
    files : iterable of pathlib.Path
        Existing files.

    Returns
    -------
    dict
        Each path as given -> its sha256 (hex).
    """
    stored: dict[str, str] | None = None
    result, new = {}, {}
    for path in files:
        stamp = _stamp(path)
        digest = _memo.get(stamp)
        if digest is None:
            stored = _read_records() if stored is None else stored
            digest = stored.get(stamp)
        if digest is None:
            size = path.stat().st_size
            if size > 10_000_000:
                logger.info("hashing %s (%.0f MB, once)", path, size / 1e6)
            digest = new[stamp] = sha256_file(path)
        _memo[stamp] = digest
        result[path] = digest
    _store(new)
    return result


def remember(folder: Path, digests: Mapping[str, str]) -> None:
    """Record sha256 values a writer has just computed, for the files as they now lie.

    Call it after the folder is in its final place (a rename keeps each file's stamp but
    changes its path).

    Parameters
    ----------
    folder : pathlib.Path
        The folder the names are relative to.
    digests : mapping
        File name (relative) -> sha256.
    """
    new = {}
    for name, digest in digests.items():
        stamp = _stamp(folder / name)
        _memo[stamp] = new[stamp] = digest
    _store(new)


def changed_files(folder: Path, recorded: Mapping[str, str]) -> list[str]:
    """The files of ``folder`` that are missing or differ from their recorded sha256.

    Parameters
    ----------
    folder : pathlib.Path
    recorded : mapping
        File name (relative to ``folder``) -> sha256, as written.

    Returns
    -------
    list of str
        Names, sorted (empty when every file is as written).
    """
    present = [name for name in recorded if (folder / name).is_file()]
    now = stamped_sha256(folder / name for name in present)
    missing = set(recorded) - set(present)
    return sorted(missing | {n for n in present if now[folder / n] != recorded[n]})
