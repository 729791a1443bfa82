"""An ``--out`` book folder: whether the pipeline may write there, and what it may overwrite.

``lmgeometry book --out DIR`` writes a whole book into ``DIR`` (``_config.yml``,
``references.bib``, ``pages/*.md``, ``_toc.yml``, ``book/``, ``_build/``). It takes a folder
that does not exist yet (it creates it), an empty one, or one that holds an earlier book of the
pipeline: the marker :data:`BOOK_MARKER` it writes first, or, for a book of an earlier version,
a ``_toc.yml`` beginning with the header the pipeline writes (:data:`TOC_HEADER`). Any other
folder is refused before anything is written (:func:`check_out`), so a user's ``_config.yml``,
bibliography or pages are never replaced.

The marker records the sha256 of each file the pipeline wrote at the top of the folder
(:func:`write_owned`); a file the pipeline would write again is replaced only while it still has
that content, so an edit made since is never lost. One build at a time writes a book folder
(:func:`book_lock`; a second one waits for the first, then finds its chapters current).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lmgeometry.errors import BookUsageError, PathError
from lmgeometry.io import paths

__all__ = [
    "BOOK_MARKER",
    "book_lock",
    "check_out",
    "claim_out",
    "TOC_HEADER",
    "write_owned",
]

#: Written first into an ``--out`` folder: the files the pipeline wrote there, with sha256.
BOOK_MARKER = ".lmgeometry-book.json"

#: The first line of the ``_toc.yml`` the pipeline writes into an ``--out`` folder.
TOC_HEADER = "# Written by `lmgeometry book --out`"

#: The files at the top of a book folder the pipeline writes (pages are added by name).
_TOP_FILES = ("_config.yml", "references.bib", "_toc.yml")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_marker(book_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((book_dir / BOOK_MARKER).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("written"), dict) else None


def _write_marker(book_dir: Path, written: dict[str, str]) -> None:
    tmp = book_dir / f"{BOOK_MARKER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"format": 1, "written": dict(sorted(written.items()))},
                              indent=1) + "\n")
    os.replace(tmp, book_dir / BOOK_MARKER)


def _earlier_book(book_dir: Path) -> bool:
    """A book an earlier version of the pipeline wrote (no marker): its ``_toc.yml`` starts
    with the pipeline's header."""
    try:
        with open(book_dir / "_toc.yml", encoding="utf-8") as handle:
            return handle.readline().startswith(TOC_HEADER)
    except (OSError, UnicodeDecodeError):
        return False


def check_out(out: Path) -> None:
    """Refuse an ``--out`` folder the pipeline may not write into; creates nothing.

    Raises
    ------
    BookUsageError
        ``out`` is a folder that holds files but no book of the pipeline (exit status 2).
    """
    if not out.is_dir() or _read_marker(out) is not None or _earlier_book(out):
        return
    held = sorted(p.name for p in out.iterdir())
    if held:
        shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
        raise BookUsageError(
            f"the book folder (--out) {out} holds files that lmgeometry did not write ({shown}) "
            "and no book of its own; a book there would replace them. Pass a new or empty "
            "folder, or one an earlier `lmgeometry book --out` wrote")


def claim_out(out: Path) -> Path:
    """Create ``out`` (checked by :func:`check_out`) and write its marker if it has none.

    A book of an earlier version gets a marker that records its top files as they are (the
    pipeline wrote them there).

    Returns
    -------
    pathlib.Path
        ``out``.
    """
    check_out(out)
    paths.writable_folder(out, "the book folder (--out)")
    if _read_marker(out) is None:
        adopted = {}
        if _earlier_book(out):
            names = [*_TOP_FILES, *(f"pages/{p.name}" for p in sorted((out / "pages").glob(
                "*.md")))]
            adopted = {n: _sha256(out / n) for n in names if (out / n).is_file()}
        _write_marker(out, adopted)
    return out


def write_owned(book_dir: Path, name: str, data: bytes) -> None:
    """Write ``book_dir/name`` unless that would overwrite a file the pipeline did not write
    (or one changed since it did); record its sha256 in the marker.

    Raises
    ------
    BookUsageError
        The file exists with content the marker does not record; nothing is written.
    """
    target = book_dir / name
    written = (_read_marker(book_dir) or {}).get("written", {})
    digest = hashlib.sha256(data).hexdigest()
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise BookUsageError(f"{target} is not a plain file; lmgeometry writes {name} there. "
                             "Move it away, or pass another --out folder")
    if target.is_file() and _sha256(target) not in (written.get(name), digest):
        raise BookUsageError(
            f"{target} was not written by lmgeometry, or was changed since; the book would "
            f"replace it with the project's {name}. Move it away (or delete it), or pass "
            "another --out folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    if written.get(name) != digest:
        _write_marker(book_dir, {**written, name: digest})


@contextmanager
def book_lock(book_dir: Path) -> Iterator[None]:
    """Hold the lock of a book folder for a whole build (its ``_build/``, its notebooks and
    their manifests); a second build of the same folder waits, with one line saying so."""
    build = book_dir / "_build"
    try:
        build.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(f"the book folder {book_dir} cannot be written ({exc.strerror or exc})"
                        "; pass a folder you can write to") from exc
    with paths.folder_lock(build / "book", "the book folder"):
        yield
