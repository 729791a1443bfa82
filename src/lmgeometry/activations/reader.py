"""Reading an activation-store entry: :class:`Store` (its words, layers and special tokens),
:class:`LayerView` and :func:`open_store`.

The entry's layout, its key and how it is built are described in
:mod:`lmgeometry.activations.store`, which writes entries and re-exports these names.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lmgeometry import trace
from lmgeometry.activations.integrity import (
    SHARDS_DIR,
    SPECIAL_FILE,
    SPECIAL_TABLE,
    WORDS_FILE,
    check_entry,
    check_name,
    damaged,
    layer_file,
    read_meta,
)
from lmgeometry.io import paths

__all__ = [
    "LayerView",
    "open_store",
    "Store",
]


class LayerView:
    """One layer of a sharded entry as a lazy ``(rows, width)`` matrix: rows are read from the
    shards' memory maps only when indexed, like a memory map of one file.

    Supports ``shape``, ``dtype``, ``ndim``, ``len``, indexing by an int, a slice, an integer
    or boolean row array (optionally followed by a column index), and ``numpy.asarray`` (which
    reads every row). Measures that read a matrix in row chunks (``X[start:stop]``, e.g.
    :mod:`lmgeometry.measures.isotropy`) therefore stream over the shards.
    """

    def __init__(self, maps: Sequence[np.ndarray]) -> None:
        self._maps = list(maps)
        self._starts = np.cumsum([0, *(len(m) for m in self._maps)])
        self.shape: tuple[int, int] = (int(self._starts[-1]), int(self._maps[0].shape[1]))
        self.dtype: np.dtype = self._maps[0].dtype
        self.ndim = 2

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> np.ndarray:
        rows, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if np.isscalar(rows):  # one row: a 1-D result, as numpy gives
            return self[(np.array([rows]), *rest)][0]
        if isinstance(rows, slice) and rows.step in (None, 1):
            lo, hi, _ = rows.indices(self.shape[0])
            parts = [m[max(lo - a, 0):max(min(hi - a, len(m)), 0)]
                     for m, a in zip(self._maps, self._starts, strict=False)
                     if a < hi and a + len(m) > lo]
            out = np.concatenate(parts) if parts else np.zeros((0, self.shape[1]), self.dtype)
        else:
            index = np.arange(self.shape[0])[rows]
            shard = np.searchsorted(self._starts, index, side="right") - 1
            out = np.empty((len(index), self.shape[1]), self.dtype)
            for k in np.unique(shard):
                at = shard == k
                out[at] = self._maps[k][index[at] - self._starts[k]]
        return out[(slice(None), *rest)] if rest else out

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None
                  ) -> np.ndarray:
        return np.asarray(self[:], dtype=dtype)


class Store:
    """A complete store entry, opened read-only.

    Opening checks ``meta.json`` against its seal and its key against the folder's name (and
    ``key``, when given), then the files against ``meta.json``
    (:mod:`lmgeometry.activations.integrity`); a failure is a
    :class:`~lmgeometry.errors.StoreError` naming the file.

    Attributes
    ----------
    path : pathlib.Path
        The entry's directory.
    meta : dict
        Contents of ``meta.json``.
    n_layers : int
        Number of layer files (transformer blocks + 1).
    label : str
        The model as the caller named it (the spec given to :func:`activations`; by default the
        spec recorded in ``meta.json``): the ``model`` column of every per-layer table.
    words : pandas.DataFrame
        ``words.parquet``: one row per stored word, in store order (read on first access).
    special : pandas.DataFrame
        ``special.parquet``: one row per stored special token, in the order of
        :meth:`special_layer`'s rows (never mixed with the words).
    """

    def __init__(self, path: str | Path, label: str | None = None, *,
                 verify: bool = False, key: str | None = None) -> None:
        self.path = paths.user_path(path)
        self.meta: dict[str, Any] = read_meta(self.path)
        check_name(self.path, self.meta, key)
        model = self.meta.get("model", {})
        self.label: str = label or model.get("spec") or model.get("name") or self.path.name
        check_entry(self.path, self.meta, full=verify)
        self.n_layers: int = int(self.meta["n_layers"])
        trace.record("store", entry=self.path.name, key=self.meta.get("key"), model=self.label,
                     fingerprint=self.meta.get("fingerprint"),
                     corpus=self.meta.get("corpus", {}).get("name"),
                     corpus_digest=self.meta.get("corpus", {}).get("digest"))
        if self.meta.get("code"):  # the code that computed the entry: the chapter depends on it
            trace.record("code", files=self.meta["code"])

    def verify(self) -> None:
        """Compare every file's sha256 with the one recorded when the entry was written.

        Raises
        ------
        StoreError
            Naming the damaged file (entries without recorded checksums are checked by file
            sizes and counts only).
        """
        check_entry(self.path, self.meta, full=True)

    @cached_property
    def words(self) -> pd.DataFrame:
        """The stored words (``words.parquet``), one row per layer row."""
        return pd.read_parquet(self.path / WORDS_FILE)

    @cached_property
    def special(self) -> pd.DataFrame:
        """The stored special tokens (``special.parquet``): ``row``, ``sentence_id``,
        ``position`` (input position), ``n_tokens`` (the sentence's input length),
        ``token_id``, ``token`` (``[CLS]``, ``</s>``, ``<bos>``); one row per row of
        :meth:`special_layer`."""
        return pd.read_parquet(self.path / SPECIAL_TABLE)

    @property
    def n_words(self) -> int:
        """Rows of every layer array."""
        return int(self.meta["counts"]["words"])

    @property
    def n_special(self) -> int:
        """Rows of every special-token layer."""
        return int(self.meta["counts"]["special"])

    @property
    def width(self) -> int:
        """Hidden size."""
        return int(self.meta["width"])

    @property
    def dtype(self) -> np.dtype:
        """Storage dtype of the layer arrays."""
        return np.dtype(self.meta["dtype"])

    @property
    def skipped(self) -> list[int]:
        """Sentence ids left out because they exceeded the model's window."""
        return list(self.meta["skipped_sentence_ids"])

    @property
    def shards(self) -> list[dict[str, Any]]:
        """A sharded entry's shards (name, sentence ids, ``rows``, ``special_rows``); empty
        for a single-file entry (:mod:`lmgeometry.activations.distributed`)."""
        return list(self.meta.get("shards") or [])

    def _folders(self) -> list[Path]:
        """The folders holding the arrays: the entry, or its shards in row order."""
        if not self.shards:
            return [self.path]
        return [self.path / SHARDS_DIR / shard["name"] for shard in self.shards]

    def _map(self, folder: Path, name: str) -> np.ndarray:
        try:
            return np.load(folder / name, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise damaged(self.path, str((folder / name).relative_to(self.path)),
                          f"cannot be read ({exc})") from exc

    def layer_paths(self) -> list[Path]:
        """Paths of the layer files, layer 0 first (of every shard, shard after shard, for a
        sharded entry)."""
        return [folder / layer_file(i) for i in range(self.n_layers)
                for folder in self._folders()]

    def layer_blocks(self, i: int, block_rows: int | None = None
                     ) -> Iterator[tuple[int, np.ndarray]]:
        """Layer ``i`` block by block, as memory maps in the store's dtype (read lazily).

        Parameters
        ----------
        i : int
            Layer index (negative counts from the last).
        block_rows : int, optional
            At most this many rows per block; default one block per file (the whole layer of
            a single-file entry, one shard of a sharded entry).

        Yields
        ------
        (row_start, block)
            ``block`` holds rows ``row_start:row_start + len(block)`` of the layer.
        """
        name = layer_file(self._index(i))
        start = 0
        for folder in self._folders():
            X = self._map(folder, name)
            step = len(X) if block_rows is None else block_rows
            for lo in range(0, len(X), max(step, 1)):
                yield start + lo, X[lo:lo + step]
            start += len(X)

    def _index(self, i: int) -> int:
        if not -self.n_layers <= i < self.n_layers:
            raise IndexError(f"layer {i} out of range for {self.n_layers} layers")
        return i % self.n_layers

    def layer(self, i: int, rows: np.ndarray | slice | None = None,
              dtype: npt.DTypeLike | None = np.float32) -> np.ndarray:
        """Word vectors of layer ``i`` (negative counts from the last).

        Parameters
        ----------
        i : int
            Layer index: 0 is the embedding output, ``n_layers - 1`` (or -1) the last layer.
        rows : array of int or bool, or slice, optional
            Only these rows (word occurrences), in this order; default all.
        dtype : numpy dtype or None
            The returned array's dtype (default float32, a copy in memory); None returns the
            layer in the store's own dtype (float16 by default), read lazily: the file's
            memory map for a single-file entry, a :class:`LayerView` over the shards' maps
            for a sharded one (both read only the rows a measure indexes).

        Returns
        -------
        numpy.ndarray or LayerView
            ``(n_rows, width)``.
        """
        name = layer_file(self._index(i))
        maps = [self._map(folder, name) for folder in self._folders()]
        X = maps[0] if len(maps) == 1 else LayerView(maps)
        if rows is not None:
            X = X[rows]
        return X if dtype is None else np.asarray(X, dtype=dtype)

    def special_layer(self, i: int, rows: np.ndarray | slice | None = None,
                      dtype: npt.DTypeLike | None = np.float32) -> np.ndarray:
        """Hidden states of the special tokens at layer ``i`` (rows of :attr:`special`).

        Same call as :meth:`layer`; the array is stored in float32 whatever the words' dtype
        (a decoder's BOS, its attention sink, can exceed float16's range).

        Returns
        -------
        numpy.ndarray
            ``(n_rows, width)``.
        """
        i = self._index(i)
        maps = [self._map(folder, SPECIAL_FILE)[i] for folder in self._folders()]
        X = maps[0] if len(maps) == 1 else np.concatenate(maps)
        if rows is not None:
            X = X[rows]
        return X if dtype is None else np.asarray(X, dtype=dtype)

    def layers(self) -> Iterator[np.ndarray]:
        """Iterate over all layers, layer 0 first (memory maps in the store's dtype)."""
        for i in range(self.n_layers):
            yield self.layer(i, dtype=None)

    def depth(self, layer: int) -> float:
        """``layer / last layer``: where a layer sits in the model, 0 (input) to 1 (last)."""
        last = self.n_layers - 1
        return layer / last if last else 0.0

    def size_bytes(self) -> int:
        """Bytes on disk of the entry's files."""
        return _du(self.path)

    def __repr__(self) -> str:
        m = self.meta
        return (f"Store({m['model'].get('name')!r}, corpus={m['corpus']['name']!r}, "
                f"words={self.n_words}, special={self.n_special}, layers={self.n_layers}, "
                f"width={self.width}, "
                f"dtype={m['dtype']}, path='{self.path}')")


def open_store(path: str | Path, *, verify: bool = False) -> Store:
    """Open an existing store entry.

    Parameters
    ----------
    path : str or pathlib.Path
        The entry's directory (the one holding ``meta.json``).
    verify : bool
        Also compare every file's sha256 with the one recorded at write time (reads every
        byte); file sizes and counts are always checked.

    Returns
    -------
    Store

    Raises
    ------
    StoreError
        The entry is damaged or incomplete (the message names the file).
    """
    return Store(path, verify=verify)


def _du(path: Path) -> int:
    """Bytes of the regular files under ``path``; symbolic links are neither followed nor
    counted (a link to ``/usr`` inside a store root costs nothing to list)."""
    if path.is_symlink():
        return 0
    total = 0
    for folder, _, files in os.walk(path):  # never into a linked folder
        for name in files:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total
