"""Machine-readable results files written next to each executed chapter.

A chapter that reads another chapter's files (the scorecard reads the results files, the
About page the execution records) reads them with :func:`load_results`, which records each
file and its sha256 in the book's trace: the chapter's execution manifest then lists them as
``inputs``, and the chapter runs again when one of them changes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lmgeometry import trace
from lmgeometry.errors import UsageError
from lmgeometry.io.files import to_jsonable
from lmgeometry.io.paths import user_path

__all__ = [
    "list_results",
    "listed",
    "listing_digest",
    "load_results",
    "RESULTS_GLOB",
    "save_results",
    "to_jsonable",
]

#: The results files of a book folder.
RESULTS_GLOB = "*.results.json"


def listing_digest(names: list[str]) -> str:
    """sha256 of a sorted list of file names (one per line)."""
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()


def listed(folder: Path, pattern: str = RESULTS_GLOB, before: str | None = None) -> list[Path]:
    """The files of ``folder`` matching ``pattern``, sorted by name; with ``before``, only those
    whose names sort before it (the listing :func:`list_results` records and the execution
    cache checks again)."""
    return [p for p in sorted(folder.glob(pattern)) if before is None or p.name < before]


def list_results(folder: str | Path, before: str | None = None) -> list[Path]:
    """The results files of ``folder`` (sorted by name; with ``before``, only those whose names
    sort before it), recorded as one input of the chapter that lists them.

    Under ``lmgeometry book`` the listing itself (its names' :func:`listing_digest`) is a
    recorded input, like each file read with :func:`load_results`: a chapter that gathers every
    results file (the scorecard) runs again when a chapter's results file appears or goes,
    not only when one it read changes.
    """
    folder = user_path(folder).resolve()
    paths = listed(folder, RESULTS_GLOB, before)
    trace.record("input", path=str(folder / RESULTS_GLOB), before=before,
                 sha256=listing_digest([p.name for p in paths]))
    return paths


def save_results(path: str | Path, results: dict[str, Any]) -> Path:
    """Write ``results`` as indented, key-sorted JSON to ``path`` (atomically; ``~`` expanded)."""
    path = user_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(to_jsonable(results), indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def load_results(path: str | Path) -> Any:
    """Read a results file written by :func:`save_results`, or any JSON file of the book
    (``~`` expanded); under ``lmgeometry book`` the file is recorded as an input of the
    chapter reading it (its name and sha256).

    Raises
    ------
    UsageError
        The file is not valid JSON (truncated, or not a results file): the message names it.
    """
    path = user_path(path).resolve()
    data = path.read_bytes()
    trace.record("input", path=str(path), sha256=hashlib.sha256(data).hexdigest())
    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        where = (f" ({exc.msg} at line {exc.lineno}, column {exc.colno})"
                 if isinstance(exc, json.JSONDecodeError) else "")
        raise UsageError(f"{path} is not valid JSON{where}: truncated, or not a results file; "
                         "execute the chapter that writes it again (`lmgeometry book "
                         "--chapters NN`), or pass another file") from None
