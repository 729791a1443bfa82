"""Looking after the activation store: what it holds, what can go, and sealing old entries.

``lmgeometry store list`` shows every entry with its model, corpus, size and whether the
running code would still use it; ``lmgeometry store clean`` removes what the running code will
not read: entries keyed on another version of the extraction code or of the store format
(this code never asks for their keys; another checkout or version of lmgeometry sharing the
cache might, and would rebuild them), copies the store set aside (damaged or incomplete entries
kept for inspection) and unfinished builds of dead processes
(:func:`lmgeometry.io.paths.stale_builds`). Entries the running code reads are kept unless
``everything`` is asked for. ``lmgeometry store upgrade`` verifies and seals entries written
before ``meta.json`` carried a checksum (:func:`lmgeometry.activations.store.upgrade_entry`).

Nothing is removed that does not carry the store's own signature (:func:`signature`): a real
folder (never a symbolic link, which is neither followed nor removed) whose ``meta.json`` is
JSON of a store format, records a key whose entry name is the folder's name, and is verified
(against its seal ``meta.sha256``, or, for an entry written before seals, by recomputing the
key from the inputs it records; an entry of an older store format or key scheme, which this
version cannot recompute, is recognised by its key and name alone). A folder the store set
aside is removed only when the store marked it as its own. Any other folder under a store root
(a user's, with or without a ``meta.json``) is listed as kept and never touched. The command
line lists what it would remove and asks first (or needs ``--yes``); each folder is checked
again just before it goes.

No chapter imports this module, so changing it re-executes none.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lmgeometry import sources
from lmgeometry.activations import store
from lmgeometry.activations.integrity import (
    FORMAT_VERSION,
    MAX_META_BYTES,
    META_FILE,
    entry_name,
    recorded_seal,
)
from lmgeometry.errors import PathError, StoreError
from lmgeometry.io import paths

__all__ = [
    "clean_entries",
    "clean_plan",
    "list_entries",
    "remove_planned",
    "SET_ASIDE_PREFIX",
    "signature",
    "upgrade_entries",
]

#: Names of entries the store set aside (damaged, or without ``meta.json``).
SET_ASIDE_PREFIX = store.SET_ASIDE_PREFIX
#: The same, as earlier versions named them.
_OLD_SET_ASIDE_PREFIX = ".incomplete-"

_COLUMNS = ["entry", "model", "corpus", "backend", "words", "layers", "size", "created",
            "sealed", "current"]

_KEY = re.compile(r"[0-9a-f]{64}")

#: ``current`` of a folder that is not a store entry (``list_entries``).
NOT_AN_ENTRY = "not a store entry"


def _folders(targets: Sequence[str | Path]) -> list[Path]:
    return [paths.user_path(t) for t in targets] or [paths.cache_dir("activations")]


def _code_digests() -> dict[str, str]:
    """The running extraction code's digest for each backend (an entry records its own)."""
    return {b: sources.code_digest(store.extraction_code(b)) for b in store.BACKENDS}


def signature(folder: Path) -> tuple[dict[str, Any] | None, str]:
    """Whether ``folder`` carries the store's own signature: ``(meta, "")`` when it does,
    ``(None, why not)`` when it does not (see the module docstring).

    Reads at most ``meta.json`` and ``meta.sha256``; follows no symbolic link.
    """
    if folder.is_symlink():
        return None, "a symbolic link (never followed)"
    meta_path = folder / META_FILE
    if not folder.is_dir() or meta_path.is_symlink() or not meta_path.is_file():
        return None, "it holds no meta.json"
    try:
        if meta_path.stat().st_size > MAX_META_BYTES:
            return None, "its meta.json is too large to be a store entry's"
        data = meta_path.read_bytes()
        meta = json.loads(data)
    except (OSError, UnicodeDecodeError, ValueError):
        return None, "its meta.json is not JSON"
    found = meta.get("format") if isinstance(meta, dict) else None
    if not isinstance(found, int) or isinstance(found, bool) or not 1 <= found <= FORMAT_VERSION:
        return None, "its meta.json is not an lmgeometry store entry's (no store format)"
    key, corpus = meta.get("key"), meta.get("corpus")
    name = corpus.get("name") if isinstance(corpus, dict) else None
    if not isinstance(key, str) or not _KEY.fullmatch(key) or not isinstance(name, str):
        return None, "its meta.json records no store key"
    if folder.name != entry_name(name, key):
        return None, "its name is not the entry name of the key its meta.json records"
    try:
        seal = recorded_seal(folder)
    except StoreError:
        return None, "its meta.sha256 is not the store's seal"
    if seal is not None and hashlib.sha256(data).hexdigest() != seal:
        return None, "its meta.json does not match its seal (damaged: look, then delete by hand)"
    if seal is None and found == FORMAT_VERSION and meta.get("code"):
        try:
            if store.recorded_key(meta, folder) != key:
                return None, "its meta.json's key does not follow from the inputs it records"
        except StoreError:
            return None, "its meta.json lacks the inputs of its key"
    return meta, ""


def _set_aside_signature(folder: Path) -> str:
    """"" when the store set ``folder`` aside and marked it its own, else why it is kept."""
    if folder.is_symlink():
        return "a symbolic link (never followed)"
    marker = folder / store.SET_ASIDE_MARKER
    prefix = SET_ASIDE_PREFIX if folder.name.startswith(SET_ASIDE_PREFIX) \
        else _OLD_SET_ASIDE_PREFIX
    if marker.is_file() and not marker.is_symlink():
        try:
            info = json.loads(marker.read_text())
        except (OSError, UnicodeDecodeError, ValueError):
            return "set aside, but its marker is unreadable"
        if isinstance(info, dict) and info.get("store_written") is True \
                and folder.name.startswith(f"{prefix}{info.get('entry')}-"):
            return ""
        return "set aside, but not written by the store"
    # Set aside by an earlier version (no marker): its meta.json must name it.
    original = folder.name.removeprefix(prefix).rpartition("-")[0]
    try:
        meta = json.loads((folder / META_FILE).read_bytes())
        key, corpus = meta["key"], meta["corpus"]["name"]
        if isinstance(key, str) and _KEY.fullmatch(key) and entry_name(corpus, key) == original:
            return ""
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        pass
    return "set aside, but nothing in it shows that the store wrote it"


def _current(meta: dict[str, Any], code_digests: dict[str, str]) -> str:
    """"yes", or why the current code would never ask for this entry's key again."""
    if meta.get("format") != FORMAT_VERSION:
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
    meta, why = signature(entry)
    size = store._du(entry)  # noqa: SLF001 - the store's own size count (no links followed)
    if meta is None:
        return {"entry": str(entry), "model": "?", "corpus": "?", "backend": "", "words": None,
                "layers": None, "size": size, "created": "", "sealed": "",
                "current": f"{NOT_AN_ENTRY}: {why}"}
    model = meta.get("model") or {}
    return {"entry": str(entry), "model": model.get("spec") or model.get("name") or "?",
            "corpus": (meta.get("corpus") or {}).get("name", "?"),
            "backend": (meta.get("options") or {}).get("backend", "torch"),
            "words": (meta.get("counts") or {}).get("words"), "layers": meta.get("n_layers"),
            "size": size, "created": meta.get("created", ""),
            "sealed": "yes" if (entry / store.SEAL_FILE).is_file() else "no",
            "current": _current(meta, code_digests)}


def _children(folder: Path, *, set_aside: bool = False) -> list[Path]:
    """What a store root holds that could be an entry: its folders and links to anything,
    not hidden (with ``set_aside``, the folders the store set aside too)."""
    if not folder.is_dir():
        raise PathError(f"{folder} is not a folder: pass store roots")
    kept = (SET_ASIDE_PREFIX, _OLD_SET_ASIDE_PREFIX) if set_aside else ()
    return sorted(p for p in folder.iterdir()
                  if (p.is_dir() or p.is_symlink())
                  and (not p.name.startswith(".") or p.name.startswith(kept)))


def list_entries(targets: Sequence[str | Path] = ()) -> pd.DataFrame:
    """Every folder under ``targets`` (default the cache's store root): the store entries,
    and the other folders, which the store leaves alone.

    Returns
    -------
    pandas.DataFrame
        One row per folder: ``entry`` (path), ``model``, ``corpus``, ``backend`` (what
        extracted it: ``"torch"``, ``"onnxruntime"``), ``words``, ``layers``,
        ``size`` (bytes; symbolic links not followed), ``created``, ``sealed`` (``"yes"``,
        ``"no"``: see :func:`upgrade_entries`) and ``current`` (``"yes"`` when the running
        code would still read it, ``"no: <why>"``, or ``"not a store entry: <why>"``).
    """
    digests = _code_digests()
    rows = []
    for folder in _folders(targets):
        if (folder / META_FILE).is_file() and not folder.is_symlink():
            rows.append(_row(folder, digests))
            continue
        rows.extend(_row(e, digests) for e in _children(folder))
    return pd.DataFrame(rows, columns=_COLUMNS)


def _plan_row(entry: Path, reason: str, remove: bool) -> dict[str, Any]:
    return {"entry": str(entry), "size": store._du(entry),  # noqa: SLF001
            "reason": reason, "remove": remove}


def _reason(entry: Path, digests: dict[str, str], everything: bool) -> tuple[str, bool]:
    """Why ``entry`` (a child of a store root) goes or stays: (reason, remove)."""
    if entry.name.startswith((SET_ASIDE_PREFIX, _OLD_SET_ASIDE_PREFIX)):
        why = _set_aside_signature(entry)
        return (why, False) if why else ("set aside by the store (damaged or incomplete)", True)
    meta, why = signature(entry)
    if meta is None:
        return f"{NOT_AN_ENTRY}: {why}", False
    current = _current(meta, digests)
    if current == "yes":
        return ("removed on request (--all)", True) if everything else ("current", False)
    return current[4:], True


def clean_plan(targets: Sequence[str | Path] = (), *, everything: bool = False
               ) -> pd.DataFrame:
    """What :func:`remove_planned` would remove under ``targets``, and what it leaves alone.

    Parameters
    ----------
    targets : sequence of str or pathlib.Path
        Store roots (default the cache's).
    everything : bool
        Remove current entries too (they are rebuilt on demand).

    Returns
    -------
    pandas.DataFrame
        One row per folder of the roots (current entries left out): ``entry``, ``size``,
        ``reason`` and ``remove`` (False for a folder without the store's signature, which is
        never touched).
    """
    digests = _code_digests()
    rows = []
    for folder in _folders(targets):
        rows.extend(_plan_row(tmp, "an unfinished build of a dead process", True)
                    for tmp in paths.stale_builds(folder))
        for entry in _children(folder, set_aside=True):
            reason, remove = _reason(entry, digests, everything)
            if reason != "current":
                rows.append(_plan_row(entry, reason, remove))
    # typed even when empty: an empty object column used as a mask would select columns
    return pd.DataFrame(rows, columns=["entry", "size", "reason", "remove"]).astype(
        {"remove": bool})


def _still_removable(entry: Path, reason: str, digests: dict[str, str],
                     everything: bool) -> bool:
    """The check of :func:`clean_plan` again, just before ``entry`` goes."""
    if reason == "an unfinished build of a dead process":
        return entry in paths.stale_builds(entry.parent)
    return _reason(entry, digests, everything) == (reason, True)


def remove_planned(plan: pd.DataFrame, *, everything: bool = False) -> pd.DataFrame:
    """Remove the folders of a :func:`clean_plan` marked ``remove``, each checked again first
    (under its lock, so an entry being sealed or built meanwhile is not touched halfway).

    Returns
    -------
    pandas.DataFrame
        The rows removed (``entry``, ``size``, ``reason``).
    """
    digests = _code_digests()
    gone = []
    for row in plan[plan["remove"]].itertuples():
        entry = Path(row.entry)
        with paths.folder_lock(entry, "the store entry"):
            if not _still_removable(entry, row.reason, digests, everything):
                continue
            shutil.rmtree(entry)
        gone.append({"entry": row.entry, "size": row.size, "reason": row.reason})
    return pd.DataFrame(gone, columns=["entry", "size", "reason"])


def clean_entries(targets: Sequence[str | Path] = (), *, everything: bool = False,
                  dry_run: bool = False) -> pd.DataFrame:
    """Remove what no build will read again (:func:`clean_plan`, then
    :func:`remove_planned`).

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
        ``reason``. Folders without the store's signature are never removed (see
        :func:`clean_plan` for them).
    """
    plan = clean_plan(targets, everything=everything)
    if dry_run:
        return plan[plan["remove"]].drop(columns="remove").reset_index(drop=True)
    return remove_planned(plan, everything=everything)


def upgrade_entries(targets: Sequence[str | Path] = ()) -> pd.DataFrame:
    """Verify and seal every entry under ``targets`` written before ``meta.json`` was sealed
    (:func:`lmgeometry.activations.store.upgrade_entry`, reading every byte).

    Returns
    -------
    pandas.DataFrame
        One row per entry: ``entry``, ``status`` (``"sealed"`` now, ``"ok"``: sealed before
        and its seal holds, ``"refused"``), ``size`` and ``message`` (why it was refused).
    """
    rows = []
    for folder in _folders(targets):
        entries = [folder] if (folder / META_FILE).is_file() and not folder.is_symlink() \
            else [e for e in _children(folder) if not e.is_symlink()
                  and (e / META_FILE).is_file()]
        for entry in entries:
            row = {"entry": str(entry), "status": "ok", "size": store._du(entry),  # noqa: SLF001
                   "message": ""}
            try:
                if store.upgrade_entry(entry, full=True):
                    row["status"] = "sealed"
            except StoreError as exc:
                row.update(status="refused", message=str(exc))
            rows.append(row)
    return pd.DataFrame(rows, columns=["entry", "status", "size", "message"])
