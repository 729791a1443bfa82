"""Folders built once into the cache: under a lock, in a temporary folder renamed into place.

A converted offline model (:mod:`lmgeometry.io._offline`) and an untrained twin
(:mod:`lmgeometry.io.untrained`) are built the same way: the builder writes into a temporary
folder beside the result; a marker file naming what was built, how long it took and the
sha256 of every file is written last; an atomic rename publishes the folder. A killed build
leaves only a temporary folder, which is never taken as complete and is removed by the next
build (:func:`build_once`); a lock on the cache folder saves two processes doing the work twice.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from lmgeometry.io import checksums

__all__ = ["build_once", "exclusive", "output_digests"]

logger = logging.getLogger(__name__)


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``lock_path`` (POSIX); elsewhere, no lock.

    Without the lock, correctness still holds (each process writes its own temporary folder and
    only an atomic rename publishes a result); the lock only saves doing the work twice.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def output_digests(folder: Path, marker_name: str) -> dict[str, str]:
    """sha256 of every file under ``folder`` but its marker ``marker_name``, by relative name."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != marker_name)
    return {p.relative_to(folder).as_posix(): checksums.sha256_file(p) for p in files}


def build_once(final: Path, build: Callable[[Path], None], marker: Mapping[str, object], *,
               marker_name: str, complete: Callable[[Path], bool], tmp_prefix: str = ".tmp-"
               ) -> Path:
    """Build ``final`` with ``build(tmp)`` unless another process has, and publish it.

    Under a lock on ``final``'s parent: return ``final`` if ``complete(final)`` now holds;
    otherwise remove the temporary folders (``tmp_prefix*``) of killed builds and any
    incomplete ``final``, run ``build`` into a new temporary folder, write the marker (``marker``
    plus ``seconds`` and the ``outputs``' sha256) and rename the folder into place. The
    checksums are remembered (:func:`lmgeometry.io.checksums.remember`) so the first use does
    not hash the files again.

    Parameters
    ----------
    final : Path
        The folder to publish; its parent is the cache folder (it must exist).
    build : callable
        Writes the folder's files into the directory it is given.
    marker : mapping
        What was built, written (as JSON, with ``seconds`` and ``outputs`` added) to
        ``marker_name`` inside the folder.
    marker_name : str
    complete : callable
        Whether a folder is a complete, undamaged build (checked again under the lock).
    tmp_prefix : str
        Name prefix of the temporary folders.

    Returns
    -------
    Path
        ``final``.
    """
    root = final.parent
    with exclusive(root / ".lock"):
        if complete(final):  # another process built it while we waited
            return final
        for stale in root.glob(f"{tmp_prefix}*"):  # left by killed builds (we hold the lock)
            logger.info("removing unfinished build %s", stale)
            shutil.rmtree(stale, ignore_errors=True)
        if final.exists():  # no marker, or damaged: not ours to trust
            shutil.rmtree(final)
        tmp = root / f"{tmp_prefix}{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir()
        try:
            start = time.perf_counter()
            build(tmp)
            written = {**marker, "seconds": round(time.perf_counter() - start, 1),
                       "outputs": output_digests(tmp, marker_name)}
            (tmp / marker_name).write_text(json.dumps(written, indent=2) + "\n")
            os.rename(tmp, final)
            checksums.remember(final, written["outputs"])
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return final
