"""Writing one store entry: its arrays, tables and ``meta.json``, by whoever computes them.

The code both engines share (:mod:`lmgeometry.activations.store` writes a whole entry in one
process, :mod:`lmgeometry.activations.distributed` has each Ray worker write one shard with it
and the driver write the merged ``meta.json``): :func:`write_arrays` extracts an encoding into
a folder (the layer files, ``special.npy``, ``words.parquet``, ``special.parquet``), and
:func:`entry_meta` / :func:`write_meta` describe the finished entry. The file layout is
:data:`FORMAT_VERSION`; :func:`extraction_code` is the code every stored vector is keyed on.

A leaf of the two: it imports neither, so the store can hand a build to the Ray engine and
the Ray engine can write what the store reads without an import cycle. The names are also
importable from :mod:`lmgeometry.activations.store`, where they were defined before.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as metadata
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lmgeometry import __version__, sources
from lmgeometry.activations.extract import block_rows, iter_batches
from lmgeometry.activations.integrity import (
    FORMAT_VERSION,
    META_FILE,
    SPECIAL_FILE,
    SPECIAL_TABLE,
    WORDS_FILE,
    layer_file,
    seal_meta,
)
from lmgeometry.errors import LmgeometryError, OptionalDependencyError, UsageError
from lmgeometry.io import corpus as corpora
from lmgeometry.io.files import to_jsonable

if TYPE_CHECKING:
    from lmgeometry.activations.extract import Encoding
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.models import LoadedModel

__all__ = [
    "BACKEND_MODULES",
    "BACKENDS",
    "check_backend",
    "encoding_counts",
    "entry_files",
    "entry_meta",
    "EXTRACTION_MODULE",
    "extraction_code",
    "FORMAT_VERSION",
    "runner",
    "template_facts",
    "write_arrays",
    "write_meta",
]


#: The module that computes the stored vectors; its import closure is the code an entry is
#: keyed on (:func:`extraction_code`).
EXTRACTION_MODULE = "lmgeometry.activations.extract"

#: What runs the model's forward passes: ``torch`` (eager, the default) or ``onnxruntime``
#: (the graph of :mod:`lmgeometry.activations.onnx_runtime`).
BACKENDS: tuple[str, ...] = ("torch", "onnxruntime")

#: The module each backend adds to :data:`EXTRACTION_MODULE` (torch adds none).
BACKEND_MODULES = {"torch": (), "onnxruntime": ("lmgeometry.activations.onnx_runtime",)}


def extraction_code(backend: str = "torch") -> dict[str, str]:
    """The code behind every stored vector: :func:`lmgeometry.sources.key_files` of
    :data:`EXTRACTION_MODULE` and the ``backend``'s module (file -> digest), recorded in
    ``meta.json`` as ``code``. The torch backend's is the extraction modules alone, as before
    backends existed, so its entries keep their keys."""
    return sources.key_files(EXTRACTION_MODULE, *BACKEND_MODULES[backend])


class _LayerWriter:
    """A ``.npy`` file written by row ranges with ``os.pwrite`` (no memory map held).

    Writing through a memory map would keep every written page resident in this process,
    so peak memory would grow with the corpus; ``pwrite`` leaves the pages to the OS cache.
    """

    def __init__(self, path: Path, n_rows: int, width: int, dtype: np.dtype) -> None:
        mm = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=(n_rows, width))
        self.offset = int(mm.offset)
        del mm
        self.row_bytes = width * dtype.itemsize
        self.dtype = dtype
        self.fd = os.open(path, os.O_WRONLY)

    def write(self, row_start: int, block: np.ndarray) -> None:
        data = np.ascontiguousarray(block, dtype=self.dtype).tobytes()
        os.pwrite(self.fd, data, self.offset + row_start * self.row_bytes)

    def close(self) -> None:
        if self.fd >= 0:
            os.fsync(self.fd)
            os.close(self.fd)
            self.fd = -1


class _SpecialWriter(_LayerWriter):
    """``special.npy``, ``(n_layers, rows, width)`` float32, written by (layer, row range)."""

    def __init__(self, path: Path, n_layers: int, n_rows: int, width: int) -> None:
        dtype = np.dtype(np.float32)
        mm = np.lib.format.open_memmap(path, mode="w+", dtype=dtype,
                                       shape=(n_layers, n_rows, width))
        self.offset = int(mm.offset)
        del mm
        self.row_bytes = width * dtype.itemsize
        self.layer_rows = n_rows
        self.dtype = dtype
        self.fd = os.open(path, os.O_WRONLY)

    def write_layers(self, row_start: int, block: np.ndarray) -> None:
        """``block`` is (n_layers, rows, width): rows ``row_start...`` of every layer."""
        for i, rows in enumerate(block):
            self.write(i * self.layer_rows + row_start, rows)


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it (``None`` in
    ``sys.modules`` is Python's mark of a module that cannot be)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def check_backend(backend: str) -> None:
    """Refuse a backend that is unknown or whose packages are not installed (cheap: nothing
    is imported; a model that does not export is refused when its graph is exported)."""
    if backend not in BACKENDS:
        raise UsageError(f"backend must be one of {BACKENDS}, not {backend!r}; torch is the "
                         "default, onnxruntime runs the model's exported graph")
    missing = [m for m in ("onnxruntime", "onnx") if backend == "onnxruntime"
               and not _installed(m)]
    if missing:
        raise OptionalDependencyError(
            f"backend 'onnxruntime' needs the {' and '.join(missing)} package(s), which are not "
            "installed; `pip install -r requirements.txt` installs the pinned versions, or use "
            "the default backend 'torch'")


def runner(model: LoadedModel, backend: str) -> LoadedModel:
    """The model the extractor's loop runs for ``backend``: ``model`` itself (torch), or the
    same model with its body's exported graph on onnxruntime in place of the torch module
    (:func:`lmgeometry.activations.onnx_runtime.with_onnx`, exported on first use). Take the
    model's facts from ``model``, not from the result."""
    check_backend(backend)
    if backend == "torch":
        return model
    # Imported here: processes on the torch backend (every chapter) never load onnx.
    from lmgeometry.activations.onnx_runtime import with_onnx

    try:
        return with_onnx(model)
    except LmgeometryError:
        raise
    except Exception as exc:  # the exporter's own errors name an operator, not the fix
        raise UsageError(f"{model.name} does not export to ONNX ({type(exc).__name__}: "
                         f"{exc}); extract it with the default backend 'torch'") from exc


def _versions(backend: str = "torch") -> dict[str, str]:
    import pyarrow
    import tokenizers
    import torch
    import transformers

    found = {"lmgeometry": __version__, "python": platform.python_version(),
             "numpy": np.__version__, "pandas": pd.__version__, "pyarrow": pyarrow.__version__,
             "torch": torch.__version__, "transformers": transformers.__version__,
             "tokenizers": tokenizers.__version__}
    if backend == "onnxruntime":
        found.update({name: metadata.version(name) for name in ("onnxruntime", "onnx")})
    return found


def _stored_words(corpus: Corpus, encoding: Encoding) -> pd.DataFrame:
    """The corpus words of the kept sentences, with the store's own columns."""
    kept = encoding.kept_ids()
    words = corpus.words
    mask = np.isin(words["sentence_id"].to_numpy(), kept)
    table = words.loc[mask].reset_index(drop=True)
    extra = encoding.word_columns()
    if len(extra) != len(table):
        raise RuntimeError("word table and alignment disagree on the number of words")
    clash = {"row", *extra.columns} & set(table.columns)
    if clash:
        raise ValueError(f"corpus.words already has store column(s) {sorted(clash)}")
    table.insert(0, "row", np.arange(len(table), dtype=np.int64))
    for name in extra.columns:
        table[name] = extra[name].to_numpy()
    return table


def write_arrays(folder: Path, model: LoadedModel, corpus: Corpus, encoding: Encoding, *,
                 options: dict[str, Any], batch_tokens: int | None, progress: bool,
                 callback: Callable[[int, int], None] | None,
                 shard_sentences: int | None) -> float:
    """Extract ``encoding`` into ``folder``: the layer files, ``special.npy`` and both tables.

    Rows are numbered from 0 in ``folder`` (a whole entry, or one shard of a sharded entry).

    Returns
    -------
    float
        Seconds spent in the forward passes and writes.
    """
    dtype = np.dtype(options["dtype"])
    n_layers = model.n_layers + 1
    writers = [_LayerWriter(folder / layer_file(i), encoding.n_words, model.hidden_size, dtype)
               for i in range(n_layers)]
    special = _SpecialWriter(folder / SPECIAL_FILE, n_layers, encoding.n_special,
                             model.hidden_size)
    t0 = time.perf_counter()
    try:
        for wb in iter_batches(model, encoding, pooling=options["pooling"],
                               batch_tokens=batch_tokens, progress=progress,
                               callback=callback, dtype=str(dtype),
                               shard_sentences=shard_sentences):
            for start, _stop, lo, hi in block_rows(encoding, wb.sentence_index):
                for i, writer in enumerate(writers):
                    writer.write(start, wb.vectors[i, lo:hi])
            for start, _stop, lo, hi in block_rows(encoding, wb.sentence_index, special=True):
                special.write_layers(start, wb.special[:, lo:hi])
    finally:
        for writer in [*writers, special]:
            writer.close()
    seconds = time.perf_counter() - t0
    _stored_words(corpus, encoding).to_parquet(folder / WORDS_FILE, index=False)
    table = encoding.special_columns(model.tokenizer)
    table.insert(0, "row", np.arange(len(table), dtype=np.int64))
    table.to_parquet(folder / SPECIAL_TABLE, index=False)
    return seconds


def encoding_counts(encoding: Encoding) -> dict[str, int]:
    """The counts ``meta.json`` records of an encoding (summed over shards when sharded)."""
    return {
        "sentences": encoding.n_sentences,
        "sentences_stored": len(encoding.sentences),
        "sentences_skipped": len(encoding.skipped),
        "sentences_without_words": (encoding.n_sentences - len(encoding.sentences)
                                    - len(encoding.skipped)),
        "words": encoding.n_words,
        "special": encoding.n_special,
        "tokens": encoding.n_tokens,
        "words_with_shared_piece": int(sum(int(s.alignment.shared.sum())
                                           for s in encoding.sentences)),
    }


def template_facts(encoding: Encoding) -> dict[str, Any]:
    """How sentences were framed for the model (``meta.json``'s ``template``)."""
    return {"bos_prepended": encoding.bos_prepended,
            "add_special_tokens": encoding.add_special_tokens,
            "max_positions": encoding.max_positions}


def entry_meta(*, key: str, facts: dict[str, Any], fingerprint: str,
               corpus: Corpus, options: dict[str, Any], template: dict[str, Any],
               counts: dict[str, int], skipped: list[int], extraction: dict[str, Any],
               digests: dict[str, str], shards: list[dict[str, Any]] | None = None
               ) -> dict[str, Any]:
    """``meta.json`` of a finished entry.

    ``facts`` is :meth:`LoadedModel.facts`; ``digests`` the sha256 of every file, by path
    relative to the entry; ``shards`` lists a sharded entry's shards
    (:mod:`lmgeometry.activations.distributed`), absent for a single-file entry.
    """
    meta = {
        "format": FORMAT_VERSION,
        "key": key,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "model": facts,
        "fingerprint": fingerprint,
        "corpus": {"name": corpus.name, "digest": corpus.digest(), "params": corpus.params},
        "options": options,
        "template": template,
        "n_layers": int(facts["n_layers"]) + 1,
        "width": int(facts["hidden_size"]),
        "dtype": options["dtype"],
        "counts": {**counts,
                   "invisible_words_dropped": corpora.invisible_words_dropped(corpus)},
        "skipped_sentence_ids": skipped,
        "extraction": extraction,
        "versions": _versions(options.get("backend", "torch")),
        "code": extraction_code(options.get("backend", "torch")),
        "checksums": digests,
    }
    if shards is not None:
        meta["shards"] = shards
    return meta


def entry_files(n_layers: int) -> list[str]:
    """The files of a single-file entry (and of one shard), ``meta.json`` aside."""
    return [WORDS_FILE, SPECIAL_TABLE, SPECIAL_FILE, *(layer_file(i) for i in range(n_layers))]


def write_meta(folder: Path, meta: dict[str, Any]) -> None:
    """Write ``meta.json`` and its seal ``meta.sha256`` (the last files of an entry: their
    presence marks the entry whole; :func:`lmgeometry.activations.integrity.read_meta` checks
    the one against the other on every open)."""
    data = (json.dumps(to_jsonable(meta), indent=1, sort_keys=True) + "\n").encode()
    (folder / META_FILE).write_bytes(data)
    seal_meta(folder, data)
