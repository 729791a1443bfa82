"""Integrity of activation-store entries: cheap checks on every open, checksums on demand.

A damaged entry must never be served: a truncated layer file would fail later with numpy's
"mmap length is greater than file size" (naming no file), and a ``meta.json`` or
``words.parquet`` that disagrees with the layers would silently pair vectors with the wrong
words. :func:`check_entry` therefore checks, each time an entry is opened (a few header reads,
no data):

- the layer files are exactly ``layer_00.npy`` ... ``layer_{n_layers - 1}.npy`` of
  ``meta.json`` (none missing, none extra), and ``n_layers`` is the model's blocks + 1;
- every layer file is a ``.npy`` array of shape ``(words, width)`` whose size is its header
  plus words x width x itemsize bytes (the itemsize of the dtype its header names: float16
  for a default entry);
- ``words.parquet`` has one row per layer row;
- ``special.npy`` holds ``(n_layers, special tokens, width)`` and ``special.parquet`` one row
  per special token (``counts.special`` of ``meta.json``);
- in a sharded entry (:mod:`lmgeometry.activations.distributed`) the same holds of every shard
  folder ``shards/<name>/`` for its ``rows`` and ``special_rows``, and the shards' row ranges
  follow each other from 0 to the word (special-token) count.

It also compares each file's sha256 with the one recorded in ``meta.json`` (``checksums``)
when the entry was written, which finds changed bytes that keep every size, on every path
(the Python API, the command line, the chapters). The check reads every byte only the first
time a file is seen on this machine: the result is remembered under the file's stamp (size,
mtime, inode and ctime together, :mod:`lmgeometry.io.checksums`), and the writer of an entry
records the sums it has just computed, so a fresh entry costs nothing. With ``full=True``
(``lmgeometry store verify``) every file is hashed again regardless. Entries written before
checksums were recorded are checked by sizes and counts only.

``meta.json`` itself is checked first, on every open (:func:`read_meta`): its sha256 against
the one its writer put beside it in ``meta.sha256`` (:func:`seal_meta`), so that no changed
byte of the metadata is served (a model's ``kind``, a template's ``bos_prepended``: the
chapters branch on them), then its store format; and the key it records against the folder's
name (:func:`check_name`: an entry copied or linked under another entry's name is refused).
An entry written before ``meta.sha256`` existed raises
:class:`~lmgeometry.errors.UnsealedEntryError` until it is verified and sealed
(``lmgeometry store upgrade``; :func:`lmgeometry.activations.store.upgrade_entry`).

Every failure is a :class:`~lmgeometry.errors.StoreError` that names the file and says to
delete the entry and run again to rebuild it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from lmgeometry.errors import StoreError, UnsealedEntryError
from lmgeometry.io import checksums as stamped

__all__ = [
    "check_entry",
    "check_name",
    "checksums",
    "damaged",
    "entry_name",
    "file_sha256",
    "FORMAT_VERSION",
    "layer_file",
    "MAX_META_BYTES",
    "META_FILE",
    "read_meta",
    "recorded_seal",
    "SEAL_FILE",
    "seal_meta",
    "SHARDS_DIR",
    "SPECIAL_FILE",
    "SPECIAL_TABLE",
    "WORDS_FILE",
]


WORDS_FILE = "words.parquet"

#: 2: special tokens stored (``special.npy``, ``special.parquet``); entries of format 1 are
#: rebuilt (the version is part of the key).
FORMAT_VERSION = 2

#: An entry's metadata, and the file holding its sha256 (``<hex>  meta.json``, the format of
#: ``sha256sum``: ``sha256sum -c meta.sha256`` checks it by hand).
META_FILE = "meta.json"
SEAL_FILE = "meta.sha256"

#: A ``meta.json`` larger than this is not a store entry's (they hold a few kilobytes): it is
#: refused unread.
MAX_META_BYTES = 16 * 2**20

#: The special tokens' hidden states, ``(n_layers, special tokens, width)`` float32, and their
#: table (one row per special token, in the array's order).
SPECIAL_FILE = "special.npy"
SPECIAL_TABLE = "special.parquet"

#: The folder of a sharded entry that holds one folder per shard.
SHARDS_DIR = "shards"

_LAYER_NAME = re.compile(r"^layer_\d+\.npy$")


def layer_file(i: int) -> str:
    """File name of layer ``i`` (``layer_00.npy``)."""
    return f"layer_{i:02d}.npy"


def entry_name(corpus_name: str, key: str) -> str:
    """Directory name of an entry: a readable corpus slug and the key prefix."""
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", corpus_name).strip("-.")[:40] or "corpus"
    return f"{slug}-{key[:20]}"


def damaged(path: Path, file: str, problem: str) -> StoreError:
    """The error for a damaged entry: which file, what is wrong, and the fix."""
    return StoreError(
        f"damaged store entry {path}: {file} {problem}. Delete the entry (rm -r '{path}') and "
        "run again to rebuild it.",
        path=path, file=file, problem=problem,
    )


def file_sha256(path: Path) -> str:
    """sha256 (hex) of a file's content."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def checksums(folder: Path, names: Iterable[str]) -> dict[str, str]:
    """``{name: sha256}`` of the named files of ``folder`` (recorded in ``meta.json``)."""
    return {name: file_sha256(folder / name) for name in names}


def seal_meta(folder: Path, data: bytes | None = None) -> str:
    """Write ``meta.sha256``: the sha256 of ``meta.json``'s bytes (``data``, default the file's).

    Written to a temporary file and renamed over the old one, so a reader sees the old seal or
    the new one, never half of one. Returns the digest.
    """
    data = (folder / META_FILE).read_bytes() if data is None else data
    digest = hashlib.sha256(data).hexdigest()
    tmp = folder / f".{SEAL_FILE}.{os.getpid()}.tmp"
    tmp.write_text(f"{digest}  {META_FILE}\n")
    os.replace(tmp, folder / SEAL_FILE)
    return digest


def recorded_seal(path: Path) -> str | None:
    """The sha256 ``meta.sha256`` records, or None when the entry has no seal."""
    seal = path / SEAL_FILE
    if not seal.exists() and not seal.is_symlink():
        return None
    try:
        text = seal.read_text() if seal.is_file() and not seal.is_symlink() else ""
    except (OSError, UnicodeDecodeError):
        text = ""
    match = re.fullmatch(rf"([0-9a-f]{{64}})  {re.escape(META_FILE)}\n", text)
    if match is None:
        raise damaged(path, SEAL_FILE, "is not the seal the store writes (one sha256 and the "
                                       "name meta.json)")
    return match.group(1)


def read_meta(path: Path, *, sealed: bool = True) -> dict[str, Any]:
    """An entry's ``meta.json`` as its writer wrote it.

    Its bytes are compared with the sha256 in ``meta.sha256`` (when there is one), then read
    as JSON of this version's store format.

    Parameters
    ----------
    path : pathlib.Path
        The entry's folder.
    sealed : bool
        Require the seal (every open); False reads an entry written before seals existed
        (:func:`lmgeometry.activations.store.upgrade_entry`, which verifies it otherwise).

    Raises
    ------
    StoreError
        No ``meta.json`` (not an entry), one that does not match its seal, is not JSON or is
        of another format.
    UnsealedEntryError
        With ``sealed``, for an entry without ``meta.sha256``.
    """
    meta_path = path / META_FILE
    if not meta_path.is_file():
        raise StoreError(
            f"{path} is not a store entry (no meta.json): pass an entry folder (one holding "
            "meta.json), or delete this leftover folder and run again to rebuild it.",
            path=path, file=META_FILE,
        )
    try:
        if meta_path.stat().st_size > MAX_META_BYTES:
            raise damaged(path, META_FILE, f"is larger than {MAX_META_BYTES:,} bytes")
        data = meta_path.read_bytes()
    except OSError as exc:
        raise damaged(path, META_FILE, f"cannot be read ({exc.strerror or exc})") from exc
    seal = recorded_seal(path)
    if seal is not None and hashlib.sha256(data).hexdigest() != seal:
        raise damaged(path, META_FILE, f"does not match the sha256 recorded in {SEAL_FILE} "
                                       "when the entry was written (its content has changed)")
    try:
        meta = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise damaged(path, META_FILE, f"is not valid JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise damaged(path, META_FILE, f"has store format {found}, but this version of "
                                       f"lmgeometry reads format {FORMAT_VERSION}")
    if seal is None and sealed:
        raise UnsealedEntryError(
            f"store entry {path} was written before lmgeometry recorded the sha256 of "
            f"meta.json ({SEAL_FILE}), so its metadata cannot be verified: run `lmgeometry "
            f"store upgrade '{path}'` (it checks the key against the inputs meta.json records "
            "and the folder's name, and every file against its sha256, then records it), or "
            f"delete the entry (rm -r '{path}') to rebuild it.",
            path=path, file=SEAL_FILE, problem="is missing (written before seals)")
    return meta


def check_name(path: Path, meta: dict[str, Any], key: str | None = None) -> None:
    """The key ``meta.json`` records is that of the folder's name (and ``key``, when given).

    An entry's folder is named after its key (:func:`entry_name`); the files of one entry
    copied or linked under another entry's name would otherwise be served for that entry. An
    entry that records no key (written from arrays by hand) passes unless ``key`` is asked for.

    Raises
    ------
    StoreError
        Naming ``meta.json`` and both keys.
    """
    recorded = meta.get("key")
    if key is not None and recorded != key:
        raise damaged(path, META_FILE, f"records the key {str(recorded)[:20]}, not the key "
                                       f"{key[:20]} of the entry asked for (another entry's "
                                       "files under this entry's name)")
    if recorded is None:
        return
    corpus = meta.get("corpus")
    name = corpus.get("name") if isinstance(corpus, dict) else None
    if not isinstance(recorded, str) or not isinstance(name, str) \
            or path.name != entry_name(name, recorded):
        expected = entry_name(name, recorded) if isinstance(name, str) and \
            isinstance(recorded, str) else "?"
        raise damaged(path, META_FILE, f"records the key of the entry {expected}, not of its "
                                       f"folder {path.name} (an entry copied or linked under "
                                       "another entry's name)")


def check_entry(path: Path, meta: dict[str, Any], *, full: bool = False) -> None:
    """Check an entry's files against its ``meta.json`` (see the module docstring).

    Parameters
    ----------
    path : pathlib.Path
        The entry's folder.
    meta : dict
        Its ``meta.json``.
    full : bool
        Hash every file again, whatever this machine remembers of it (reads every byte);
        otherwise each file is hashed only the first time its stamp is seen.

    Raises
    ------
    StoreError
        Naming the damaged or missing file.
    """
    try:
        n_layers, n_words = int(meta["n_layers"]), int(meta["counts"]["words"])
        width = int(meta["width"])
        n_special = int(meta["counts"]["special"])
        parts = _parts(meta, n_words, n_special)
    except (KeyError, TypeError, ValueError) as exc:
        raise damaged(path, "meta.json", f"lacks or garbles a field ({exc})") from exc
    for name in (WORDS_FILE, SPECIAL_TABLE):
        if not (path / name).is_file():
            raise damaged(path, name, "is missing")
    for folder, rows, special_rows in parts:
        _check_files(path, folder, meta, n_layers)
        for i in range(n_layers):
            _check_layer(path, f"{folder}{layer_file(i)}", (rows, width))
        _check_layer(path, f"{folder}{SPECIAL_FILE}", (n_layers, special_rows, width))
    _check_words(path, n_words)
    _check_words(path, n_special, SPECIAL_TABLE, "special tokens")
    _check_checksums(path, meta.get("checksums") or {}, full)


def _parts(meta: dict[str, Any], n_words: int, n_special: int) -> list[tuple[str, int, int]]:
    """``(folder prefix, rows, special rows)`` of each array folder: ``""`` for a single-file
    entry, ``"shards/<name>/"`` per shard; the shards' ranges must tile the counts."""
    shards = meta.get("shards")
    if not shards:
        return [("", n_words, n_special)]
    parts, rows, special = [], 0, 0
    for shard in shards:
        (lo, hi), (slo, shi) = shard["rows"], shard["special_rows"]
        if lo != rows or slo != special or hi < lo or shi < slo:
            raise ValueError(f"shard {shard['name']} has rows {lo}:{hi} after row {rows}")
        parts.append((f"{SHARDS_DIR}/{shard['name']}/", hi - lo, shi - slo))
        rows, special = hi, shi
    if (rows, special) != (n_words, n_special):
        raise ValueError(f"the shards hold {rows} words, counts.words is {n_words}")
    return parts


def _check_files(path: Path, folder: str, meta: dict[str, Any], n_layers: int) -> None:
    """The layer files of ``path / folder`` are exactly those of ``n_layers``."""
    where = path / folder
    if not where.is_dir():
        raise damaged(path, folder.rstrip("/"), "is missing")
    expected = {layer_file(i) for i in range(n_layers)}
    on_disk = {p.name for p in where.iterdir() if _LAYER_NAME.match(p.name)}
    if not (where / SPECIAL_FILE).is_file():
        raise damaged(path, f"{folder}{SPECIAL_FILE}", "is missing")
    missing = sorted(expected - on_disk)
    if missing:
        raise damaged(path, f"{folder}{missing[0]}", "is missing")
    blocks = (meta.get("model") or {}).get("n_layers")
    extra = sorted(on_disk - expected)
    if extra or (blocks is not None and int(blocks) + 1 != n_layers):
        model = "" if blocks is None else f" for a model of {blocks} blocks (blocks + 1 layers)"
        raise damaged(path, "meta.json", f"says n_layers={n_layers} but {folder or 'the entry'} "
                                         f"holds {len(on_disk)} layer files{model}")


def _check_layer(path: Path, name: str, shape: tuple[int, ...]) -> None:
    fmt = np.lib.format
    try:
        with open(path / name, "rb") as handle:
            version = fmt.read_magic(handle)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            found, fortran, dtype = read(handle)
            offset = handle.tell()
            size = handle.seek(0, 2)
    except (OSError, ValueError) as exc:
        raise damaged(path, name, f"is not a readable .npy file ({exc})") from exc
    if tuple(found) != shape or fortran:
        raise damaged(path, name, f"holds an array of shape {tuple(found)}, but meta.json says "
                                  f"{shape}")
    expected = offset + int(np.prod(shape)) * dtype.itemsize
    if size != expected:
        raise damaged(path, name, f"has {size:,} bytes instead of {expected:,} "
                                  f"({'truncated' if size < expected else 'overlong'})")


def _check_words(path: Path, n_words: int, name: str = WORDS_FILE, what: str = "words"
                 ) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.ParquetFile(path / name).metadata.num_rows
    except (OSError, pa.ArrowException) as exc:
        raise damaged(path, name, f"is not a readable parquet file ({exc})") from exc
    if rows != n_words:
        raise damaged(path, name, f"has {rows:,} rows but the layers hold {n_words:,} {what}")


def _check_checksums(path: Path, recorded: dict[str, str], full: bool) -> None:
    if full:
        found = {n: file_sha256(path / n) for n in sorted(recorded)}
        changed = [n for n, d in found.items() if d != recorded[n]]
        stamped.remember(path, {n: d for n, d in found.items() if d == recorded[n]})
    else:
        changed = stamped.changed_files(path, recorded)
    if changed:
        raise damaged(path, changed[0], "does not match the sha256 recorded when the entry was "
                                        "written (its content has changed)")
