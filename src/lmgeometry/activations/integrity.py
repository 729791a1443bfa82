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

Every failure is a :class:`~lmgeometry.errors.StoreError` that names the file and says to
delete the entry and run again to rebuild it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from lmgeometry.errors import StoreError
from lmgeometry.io import checksums as stamped

__all__ = [
    "check_entry",
    "checksums",
    "damaged",
    "file_sha256",
    "layer_file",
    "SHARDS_DIR",
    "SPECIAL_FILE",
    "SPECIAL_TABLE",
    "WORDS_FILE",
]


WORDS_FILE = "words.parquet"

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
