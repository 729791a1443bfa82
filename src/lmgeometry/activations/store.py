"""On-disk activation store: every layer's word vectors of one (model, corpus, options).

Layout of one entry (a directory; docs/STORE.md, "The activation store", lists the columns)::

    <root>/<corpus name>-<key[:20]>/
        meta.json          model facts, options, counts, library versions, creation time
        words.parquet      one row per stored word occurrence, in store order (column ``row``)
        layer_00.npy       (words, width) float16 or float32: layer 0 = embedding output
        ...
        layer_LL.npy       the last layer
        special.parquet    one row per special token ([CLS], [SEP], BOS, ...; column ``row``)
        special.npy        (layers, special tokens, width) float32: their hidden states

An entry written on a Ray cluster (``engine="ray"``) holds the layer files and ``special.npy``
once per shard of the corpus, under ``shards/<name>/``, and the same ``meta.json`` and tables
at its top (:mod:`lmgeometry.activations.distributed`); :class:`Store` reads both layouts.

Special tokens are kept apart from the words on purpose: ``Store.words``, ``Store.layer`` and
``Store.n_words`` see words only, as before, so no word measure can take them in by accident;
``Store.special`` and ``Store.special_layer`` read them when a measure asks (format 2).

``key`` is a sha256 over the model fingerprint, the corpus digest, the options that change
the numbers (pooling, prepend_bos, too_long, dtype, format version) and the code that computes
the stored vectors (:func:`extraction_code`: the extraction modules by their syntax, so that a
changed comment keeps the entry and a changed line of code rebuilds it). An entry is
built in a temporary sibling directory and renamed into place when complete, so a directory
with the final name is always whole; temporary directories of dead processes are removed
on the next call, and a folder with the final name but no ``meta.json`` (left by hand) is
moved aside before building. ``meta.json`` records each file's sha256 (``checksums``).
Opening an entry checks its files against ``meta.json`` (sizes, counts; checksums on demand:
:mod:`lmgeometry.activations.integrity`). Only numpy and pyarrow are needed to read an entry.

Under ``lmgeometry book`` every opened entry and the time :func:`activations` spends (cache hit
or build) are recorded through :mod:`lmgeometry.trace`: the book re-executes a chapter when a
model behind one of the entries it read has changed, and ``--profile`` reports the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lmgeometry import sources, trace
from lmgeometry.activations.entry import (
    EXTRACTION_MODULE,
    FORMAT_VERSION,
    encoding_counts,
    entry_files,
    entry_meta,
    extraction_code,
    template_facts,
    write_arrays,
    write_meta,
)
from lmgeometry.activations.extract import (
    OUTPUT_DTYPES,
    POOLINGS,
    TOO_LONG,
    default_batch_tokens,
    encode,
)
from lmgeometry.activations.integrity import (
    SHARDS_DIR,
    SPECIAL_FILE,
    SPECIAL_TABLE,
    WORDS_FILE,
    check_entry,
    checksums,
    damaged,
    layer_file,
)
from lmgeometry.errors import PathError, SentenceTooLongError, StoreError, UsageError
from lmgeometry.io import checksums as checksums_io
from lmgeometry.io import corpus as corpora
from lmgeometry.io import models, paths
from lmgeometry.io.files import human_size

if TYPE_CHECKING:
    import argparse

    from lmgeometry.activations.extract import Encoding, Pooling, TooLong
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.models import LoadedModel

__all__ = [
    "activations",
    "DTYPES",
    "encoding_counts",
    "Engine",
    "ENGINES",
    "entry_files",
    "entry_meta",
    "entry_name",
    "EXTRACTION_MODULE",
    "extraction_code",
    "extract_cli",
    "FORMAT_VERSION",
    "layer_file",
    "LayerView",
    "model_fingerprint",
    "open_store",
    "SHARD_SENTENCES",
    "Store",
    "store_key",
    "template_facts",
    "verify_entries",
    "write_arrays",
    "write_meta",
]


DTYPES: tuple[str, ...] = OUTPUT_DTYPES

Engine = Literal["local", "ray"]

ENGINES: tuple[str, ...] = ("local", "ray")

SHARD_SENTENCES = 4096
"""Sentence ids per shard on Ray (:func:`activations`): small enough that a 40,000-sentence
corpus spreads over ten workers, large enough that length-sorted batches within a shard pad as
little as over the whole corpus. The local engine plans over the whole corpus unless given
``shard_sentences`` (then both engines write the same bytes)."""

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
                 verify: bool = False) -> None:
        self.path = paths.user_path(path)
        self.meta: dict[str, Any] = _read_meta(self.path)
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


def _read_meta(path: Path) -> dict[str, Any]:
    """An entry's ``meta.json``, of this version's format."""
    meta_path = path / "meta.json"
    if not meta_path.is_file():
        raise StoreError(
            f"{path} is not a store entry (no meta.json): pass an entry folder (one holding "
            "meta.json), or delete this leftover folder and run again to rebuild it.",
            path=path, file="meta.json",
        )
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise damaged(path, "meta.json", f"is not valid JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise damaged(path, "meta.json", f"has store format {found}, but this version of "
                                         f"lmgeometry reads format {FORMAT_VERSION}")
    return meta


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


def store_key(fingerprint: str, corpus_digest: str, *, pooling: str, prepend_bos: bool | None,
              too_long: str, dtype: str, code: dict[str, str] | None = None) -> str:
    """sha256 naming one (model, corpus, options, extraction code) entry.

    ``code`` defaults to :func:`extraction_code`. ``batch_tokens`` and the device are not part
    of the key: they change results only by floating-point reassociation (below 1e-5).
    """
    code = extraction_code() if code is None else code
    payload = {"format": FORMAT_VERSION, "model": fingerprint, "corpus": corpus_digest,
               "pooling": pooling, "prepend_bos": prepend_bos, "too_long": too_long,
               "dtype": dtype, "code": sources.code_digest(code)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def entry_name(corpus_name: str, key: str) -> str:
    """Directory name of an entry: a readable corpus slug and the key prefix."""
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", corpus_name).strip("-.")[:40] or "corpus"
    return f"{slug}-{key[:20]}"


def model_fingerprint(spec: str) -> str:
    """Fingerprint of a model spec without loading the weights where possible.

    :func:`lmgeometry.io.models.resolve_fingerprint`: equals ``load_model(spec).fingerprint``.
    """
    return models.resolve_fingerprint(spec)


def _write_entry(tmp: Path, model: LoadedModel, corpus: Corpus, encoding: Encoding, *,
                 key: str, options: dict[str, Any], batch_tokens: int | None, progress: bool,
                 callback: Callable[[int, int], None] | None,
                 shard_sentences: int | None) -> None:
    seconds = write_arrays(tmp, model, corpus, encoding, options=options,
                           batch_tokens=batch_tokens, progress=progress, callback=callback,
                           shard_sentences=shard_sentences)
    n_layers = model.n_layers + 1
    extraction = {"seconds": round(seconds, 3),
                  "words_per_s": round(encoding.n_words / seconds, 1) if seconds else None,
                  "batch_tokens": batch_tokens or default_batch_tokens(model.device),
                  "shard_sentences": shard_sentences,
                  "engine": "local",
                  "device": str(model.device)}
    write_meta(tmp, entry_meta(key=key, facts=model.facts(), fingerprint=model.fingerprint,
                               corpus=corpus, options=options, template=template_facts(encoding),
                               counts=encoding_counts(encoding), skipped=encoding.skipped,
                               extraction=extraction,
                               digests=checksums(tmp, entry_files(n_layers))))


def activations(
    model: str | LoadedModel,
    corpus: Corpus,
    *,
    pooling: Pooling = "mean",
    prepend_bos: bool | None = None,
    too_long: TooLong = "error",
    dtype: str = "float16",
    root: str | Path | None = None,
    batch_tokens: int | None = None,
    progress: bool = True,
    callback: Callable[[int, int], None] | None = None,
    verify: bool = False,
    shard_sentences: int | None = None,
    engine: Engine = "local",
    workers: int | None = None,
    address: str | None = None,
    cpus_per_worker: float = 1,
    gpus_per_worker: float = 0,
) -> Store:
    """Hidden states of every word of ``corpus`` at every layer of ``model``, cached.

    A cache hit returns the existing entry without loading the model (for a spec string the
    key comes from ``models.resolve_fingerprint``, which hashes files).

    Parameters
    ----------
    model : str or LoadedModel
        A model spec for :func:`lmgeometry.io.models.load_model` or an already loaded model.
    corpus : Corpus
        Sentences and word table.
    pooling : {"mean", "first", "last"}
        How a word's pieces become one vector (see :mod:`lmgeometry.activations.extract`).
    prepend_bos : bool or None
        None: the tokenizer's template; True/False force a decoder's BOS token.
    too_long : {"error", "skip"}
        Sentences longer than the model's window raise, or are left out and counted in
        ``meta.json`` (``counts.sentences_skipped``, ``skipped_sentence_ids``).
    dtype : {"float16", "float32"}
        Storage dtype. float16 halves the disk and memory; a value beyond float16's range
        raises ``OverflowError`` (use float32 then) instead of turning into inf.
    root : str or pathlib.Path, optional
        Store root (``~`` expanded; created if needed); default
        ``paths.cache_dir("activations")``.
    batch_tokens : int, optional
        Padded-token budget per forward pass (memory vs speed; not part of the key); default
        1,024 on a CPU, 16,384 on a GPU
        (:func:`lmgeometry.activations.extract.default_batch_tokens`).
    progress : bool
        Show a progress bar on stderr.
    callback : callable, optional
        ``callback(sentences_done, total)`` after each batch; an exception it raises aborts
        the extraction and leaves no entry.
    verify : bool
        On a cache hit, also compare every file's sha256 with the one recorded when the entry
        was written (reads every byte; file sizes and counts are always checked).
    shard_sentences : int, optional
        Batches never mix two shards of this many sentence ids (``plan_sharded``); on Ray a
        shard is the unit of work and retry (default :data:`SHARD_SENTENCES` there; one plan
        over the corpus locally). Not in the key; same value, same bytes on both engines.
    engine : {"local", "ray"}
        This process, or a Ray cluster writing a sharded entry (needs a spec), with
        ``workers``, ``address``, ``cpus_per_worker``, ``gpus_per_worker``
        (:func:`lmgeometry.activations.distributed.build_sharded`).

    Returns
    -------
    Store

    Raises
    ------
    StoreError
        The cached entry is damaged (the message names the file: delete the entry to rebuild).
    SentenceTooLongError
        A sentence exceeds the model's window (``too_long="error"``), or every sentence does.
    PathError
        ``root`` is a file or cannot be written.
    """
    options = _options(pooling=pooling, prepend_bos=prepend_bos, too_long=too_long, dtype=dtype)
    _check_engine(model, engine, shard_sentences)
    root = paths.writable_folder(root if root is not None else paths.cache_dir("activations"),
                                 "the store root")
    label = model if isinstance(model, str) else model.spec
    with trace.timed("activations", model=label, corpus=corpus.name) as event:
        fingerprint = model_fingerprint(model) if isinstance(model, str) else model.fingerprint
        key = store_key(fingerprint, corpus.digest(), **options)
        final = root / entry_name(corpus.name, key)
        event.update(entry=final.name, hit=_servable(final, verify))
        if not event["hit"]:
            build = {"key": key, "options": options, "batch_tokens": batch_tokens,
                     "progress": progress, "callback": callback,
                     "shard_sentences": shard_sentences}
            if engine == "ray":
                build["shard_sentences"] = shard_sentences or SHARD_SENTENCES
                _build_on_ray(str(model), fingerprint, corpus, final, workers=workers,
                              address=address, cpus_per_worker=cpus_per_worker,
                              gpus_per_worker=gpus_per_worker, **build)
            else:
                _build_entry(model, fingerprint, corpus, final, **build)
        return Store(final, label=label)


def _build_on_ray(spec: str, fingerprint: str, corpus: Corpus, final: Path,
                  **kwargs: Any) -> None:
    """:func:`lmgeometry.activations.distributed.build_sharded` into ``final``."""
    # Imported here, not for a cycle (distributed imports entry, not this module): the Ray
    # engine stays out of the processes, and the chapters' recorded code, that never use it.
    from lmgeometry.activations.distributed import build_sharded

    if final.exists():
        _move_aside(final)
    build_sharded(spec, fingerprint, corpus, final, **kwargs)


def _check_engine(model: str | LoadedModel, engine: str, shard_sentences: int | None) -> None:
    if not isinstance(model, str) and not (hasattr(model, "spec")
                                           and hasattr(model, "fingerprint")):
        raise UsageError(
            f"activations() takes a model spec (a name or folder) or a LoadedModel, not a "
            f"{type(model).__name__}; for a transformers model in memory use "
            "lmgeometry.hidden_states((model, tokenizer), sentences), or "
            "lmgeometry.io.models.from_memory(model, tokenizer) to get a LoadedModel")
    if engine not in ENGINES:
        raise UsageError(f"engine must be one of {ENGINES}, not {engine!r}")
    if engine == "ray" and not isinstance(model, str):
        raise UsageError("engine='ray' loads the model on every worker: pass its spec (a name "
                         f"or folder, e.g. {model.spec!r}), not a loaded model")
    if shard_sentences is not None and shard_sentences < 1:
        raise UsageError(f"shard_sentences must be a positive number, not {shard_sentences}")


def _options(*, pooling: str, prepend_bos: bool | None, too_long: str,
             dtype: str) -> dict[str, Any]:
    """The options that change the numbers (part of the key), checked."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
    if too_long not in TOO_LONG:
        raise ValueError(f"too_long must be one of {TOO_LONG}, not {too_long!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype!r}")
    if prepend_bos is not None and not isinstance(prepend_bos, bool):
        raise TypeError("prepend_bos must be None, True or False")
    return {"pooling": pooling, "prepend_bos": prepend_bos, "too_long": too_long,
            "dtype": dtype}


def _report_skipped(model: LoadedModel, encoding: Encoding) -> None:
    """Say how many sentences were too long; refuse when none is left to store."""
    if not encoding.skipped:
        return
    if encoding.n_words == 0:
        raise SentenceTooLongError(
            f"all {encoding.n_sentences} sentences are longer than the {encoding.max_positions} "
            f"tokens {model.name} accepts, so nothing would be stored. Use shorter sentences "
            "(a smaller corpus, or your own with corpus.sentences) or a model with a longer "
            "window."
        )
    print(f"{model.name}: skipped {len(encoding.skipped)} of {encoding.n_sentences} "
          f"sentences longer than {encoding.max_positions} tokens", file=sys.stderr)


def _servable(final: Path, verify: bool) -> bool:
    """Whether the entry ``final`` exists and is whole; a damaged one is set aside."""
    if not (final / "meta.json").is_file():
        return False
    problem = _damage(final, verify)
    if problem:
        _move_aside(final, f"damaged ({problem})")
    return not problem


def _damage(final: Path, full: bool) -> str:
    """Why the cached entry ``final`` cannot be served ("" when it can): its files checked
    against ``meta.json``, by content (:func:`check_entry`; ``full`` hashes every file again)."""
    try:
        check_entry(final, _read_meta(final), full=full)
    except StoreError as exc:
        return f"{exc.file or 'meta.json'} {exc.problem}".strip()
    return ""


def _move_aside(final: Path, why: str = "incomplete (no meta.json)") -> None:
    """Rename a folder that has an entry's name but cannot be served out of the way.

    The store never leaves such a folder (an entry is renamed into place with its
    ``meta.json`` and checked by content on use), so it was made, emptied or changed by hand,
    or damaged on disk; it is kept, under a name the store ignores, rather than deleted, and
    the entry is built again.
    """
    aside = final.with_name(f".set-aside-{final.name}-{secrets.token_hex(4)}")
    try:
        os.rename(final, aside)
    except FileNotFoundError:
        return  # another process moved it first
    print(f"lmgeometry: the store entry {final} is {why}: moved aside to {aside} and built "
          "again; delete the old copy when you no longer need it", file=sys.stderr, flush=True)


def _build_entry(model: str | LoadedModel, fingerprint: str, corpus: Corpus, final: Path, *,
                 key: str, options: dict[str, Any], batch_tokens: int | None, progress: bool,
                 callback: Callable[[int, int], None] | None,
                 shard_sentences: int | None) -> None:
    """Extract ``corpus`` with ``model`` into the store entry ``final`` (see :func:`activations`).

    The entry is written into a temporary sibling directory and renamed into place when
    complete; a failure leaves no entry.
    """
    if final.exists():
        _move_aside(final)
    if isinstance(model, str):
        model = models.load_model(model)
        if model.fingerprint != fingerprint:
            raise RuntimeError(f"{model.spec}: fingerprint changed while loading "
                               f"({fingerprint[:12]} -> {model.fingerprint[:12]})")
    encoding = encode(model, corpus, prepend_bos=options["prepend_bos"],
                      too_long=options["too_long"])
    _report_skipped(model, encoding)
    with paths.building(final, marker="meta.json") as tmp:
        _write_entry(tmp, model, corpus, encoding, key=key, options=options,
                     batch_tokens=batch_tokens, progress=progress, callback=callback,
                     shard_sentences=shard_sentences)
        written = json.loads((tmp / "meta.json").read_text()).get("checksums") or {}
    if json.loads((final / "meta.json").read_text()).get("checksums") == written:
        checksums_io.remember(final, written)  # ours, not another process's: no re-hash


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _check_extract_args(args: argparse.Namespace) -> Path:
    """The cheap checks of ``lmgeometry extract``, before any corpus is built; the store root.

    The corpus name, the model spec (folder, config, weights, tokenizer files; an installed
    alias), the cache root and the store root (a writable folder) are checked in
    milliseconds, and nothing is created, so a typo costs neither the corpus build nor a
    stray folder.
    """
    corpora.check_name(args.corpus)
    models.check_spec(args.model)
    cache = paths.check_writable(paths.cache_root(), f"the cache root (${paths.CACHE_ENV})")
    if args.out is None:
        return paths.check_writable(cache / "activations", "the store root")
    return paths.check_writable(args.out, "the store root (--out)")


def extract_cli(args: argparse.Namespace) -> int:
    """``lmgeometry extract``: build (or find) a store entry and print its path and size.

    Cheap checks run first (:func:`_check_extract_args`); a cache hit is verified in full
    (every file's sha256 against ``meta.json``).

    Parameters
    ----------
    args : argparse.Namespace
        ``model``, ``corpus``, ``n``, ``seed``, ``pooling``, ``prepend_bos``
        ("auto" / "yes" / "no"), ``too_long``, ``dtype``, ``out``, ``shard_sentences``,
        ``engine``, ``address``, ``workers``, ``cpus_per_worker``, ``gpus_per_worker``.

    Returns
    -------
    int
        Exit status (0).
    """
    root = _check_extract_args(args)
    corpus = corpora.build(args.corpus, args.n, args.seed)
    bos = {"auto": None, "yes": True, "no": False}[args.prepend_bos]
    engine = args.engine
    if engine == "local" and (args.address or args.workers or args.gpus_per_worker):
        raise UsageError("--address, --workers and --gpus-per-worker apply to --engine ray; "
                         "add --engine ray or leave them out")
    store = activations(args.model, corpus, pooling=args.pooling, prepend_bos=bos,
                        too_long=args.too_long, dtype=args.dtype, root=root, verify=True,
                        shard_sentences=args.shard_sentences, engine=engine,
                        workers=args.workers, address=args.address,
                        cpus_per_worker=args.cpus_per_worker,
                        gpus_per_worker=args.gpus_per_worker)
    counts = store.meta["counts"]
    print(store.path)
    print(f"{human_size(_du(store.path))} on disk: {counts['words']} words x {store.n_layers} "
          f"layers x {store.width} ({store.meta['dtype']}), {counts['special']} special "
          f"tokens, "
          f"{counts['sentences_stored']} sentences stored, "
          f"{counts['sentences_skipped']} skipped"
          + (f", {len(store.shards)} shards" if store.shards else ""))
    return 0


def _entries_under(target: Path) -> list[Path]:
    """``target`` itself when it is an entry, else the entry folders it holds."""
    if (target / "meta.json").is_file():
        return [target]
    if not target.is_dir():
        what = "is a file" if target.exists() else "does not exist"
        raise PathError(f"{target} {what}: pass store entries or a store root (a folder "
                              "holding entries)")
    return sorted(p for p in target.iterdir() if p.is_dir() and not p.name.startswith("."))


def verify_entries(targets: Sequence[str | Path] = ()) -> pd.DataFrame:
    """Check store entries in full: file sizes, counts and recorded checksums.

    Parameters
    ----------
    targets : sequence of str or pathlib.Path
        Entry folders or store roots (every entry folder directly under them); default the
        cache's store root. ``~`` is expanded.

    Returns
    -------
    pandas.DataFrame
        One row per entry: ``entry`` (path), ``status`` (``"ok"`` or ``"damaged"``),
        ``size`` (bytes on disk) and ``message`` (empty when ok, else the problem and the fix).

    Raises
    ------
    PathError
        A target that does not exist or is a file.
    """
    folders = [paths.user_path(t) for t in targets] or [paths.cache_dir("activations")]
    rows = []
    for entry in (e for folder in folders for e in _entries_under(folder)):
        row = {"entry": str(entry), "status": "ok", "size": _du(entry), "message": ""}
        try:
            Store(entry, verify=True)
        except StoreError as exc:
            row.update(status="damaged", message=str(exc))
        rows.append(row)
    return pd.DataFrame(rows, columns=["entry", "status", "size", "message"])
