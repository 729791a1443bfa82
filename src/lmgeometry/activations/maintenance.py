"""Looking after the activation store: what it holds, and what can go.

``lmgeometry store list`` shows every entry with its model, corpus, size and whether the
running code would still use it; ``lmgeometry store clean`` removes what the running code will
not read: entries keyed on another version of the extraction code or of the store format
(this code never asks for their keys; another checkout or version of lmgeometry sharing the
cache might, and would rebuild them), copies the store set aside (``.set-aside-*`` and the
``.incomplete-*`` of earlier versions: damaged or incomplete entries kept for inspection) and
unfinished builds of dead processes (:func:`lmgeometry.io.paths.remove_stale`). Entries the
running code reads are kept unless ``everything`` is asked for.

No chapter imports this module, so changing it re-executes none.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lmgeometry import sources
from lmgeometry.activations import store
from lmgeometry.errors import PathError
from lmgeometry.io import paths

__all__ = ["clean_entries", "list_entries", "SET_ASIDE_PREFIX"]

#: Names of entries the store set aside (damaged, or without ``meta.json``).
SET_ASIDE_PREFIX = ".set-aside-"
#: The same, as earlier versions named them.
_OLD_SET_ASIDE_PREFIX = ".incomplete-"

_COLUMNS = ["entry", "model", "corpus", "words", "layers", "size", "created", "current"]


def _folders(targets: Sequence[str | Path]) -> list[Path]:
    return [paths.user_path(t) for t in targets] or [paths.cache_dir("activations")]


def _code_digests() -> dict[str, str]:
    """The running extraction code's digest for each backend (an entry records its own)."""
    return {b: sources.code_digest(store.extraction_code(b)) for b in store.BACKENDS}


def _current(meta: dict[str, Any], code_digests: dict[str, str]) -> str:
    """"yes", or why the current code would never ask for this entry's key again."""
    if meta.get("format") != store.FORMAT_VERSION:
        return f"no: store format {meta.get('format')}"
    code = meta.get("code")
    if not code:
        return "no: written before entries recorded their code"
    backend = (meta.get("options") or {}).get("backend", "torch")
    if backend not in code_digests:
        return f"no: backend {backend!r} is not one of this version's"
    current = sources.code_digest(code) == code_digests[backend]
    return "yes" if current else "no: older extraction code"


def _row(entry: Path, code_digests: dict[str, str]) -> dict[str, Any]:
    try:
        meta = json.loads((entry / "meta.json").read_text())
    except (OSError, ValueError):
        meta = {}
    model = meta.get("model") or {}
    return {"entry": str(entry), "model": model.get("spec") or model.get("name") or "?",
            "corpus": (meta.get("corpus") or {}).get("name", "?"),
            "words": (meta.get("counts") or {}).get("words"), "layers": meta.get("n_layers"),
            "size": sum(p.stat().st_size for p in entry.rglob("*") if p.is_file()),
            "created": meta.get("created", ""),
            "current": _current(meta, code_digests) if meta else "no: unreadable meta.json"}


def list_entries(targets: Sequence[str | Path] = ()) -> pd.DataFrame:
    """Every store entry under ``targets`` (default the cache's store root).

    Returns
    -------
    pandas.DataFrame
        One row per entry: ``entry`` (path), ``model``, ``corpus``, ``words``, ``layers``,
        ``size`` (bytes), ``created``, and ``current`` (``"yes"`` when the running code would
        still read it, else ``"no: <why>"``).
    """
    digests = _code_digests()
    rows = [_row(e, digests) for folder in _folders(targets)
            for e in store._entries_under(folder)]  # noqa: SLF001 - the store's own walk
    return pd.DataFrame(rows, columns=_COLUMNS)


def clean_entries(targets: Sequence[str | Path] = (), *, everything: bool = False,
                  dry_run: bool = False) -> pd.DataFrame:
    """Remove what no build will read again (see the module docstring).

    Parameters
    ----------
    targets : sequence of str or pathlib.Path
        Store roots (default the cache's).
    everything : bool
        Remove every entry, current ones included (they are rebuilt on demand).
    dry_run : bool
        Only report what would be removed.

    Returns
    -------
    pandas.DataFrame
        One row per removed (or, with ``dry_run``, removable) folder: ``entry``, ``size`` and
        ``reason``.
    """
    digests = _code_digests()
    gone = []
    for folder in _folders(targets):
        if not folder.is_dir():
            raise PathError(f"{folder} is not a folder: pass store roots")
        paths.remove_stale(folder)  # unfinished builds of dead processes
        for entry in sorted(folder.iterdir()):
            if not entry.is_dir():
                continue
            if entry.name.startswith((SET_ASIDE_PREFIX, _OLD_SET_ASIDE_PREFIX)):
                reason = "set aside by the store (damaged or incomplete)"
            elif entry.name.startswith(".") or not (entry / "meta.json").is_file():
                continue
            else:
                current = _row(entry, digests)["current"]
                if current == "yes" and not everything:
                    continue
                reason = "removed on request (--all)" if current == "yes" else current[4:]
            size = sum(p.stat().st_size for p in entry.rglob("*") if p.is_file())
            gone.append({"entry": str(entry), "size": size, "reason": reason})
            if not dry_run:
                shutil.rmtree(entry)
    return pd.DataFrame(gone, columns=["entry", "size", "reason"])

