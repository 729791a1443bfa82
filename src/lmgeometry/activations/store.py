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
Opening an entry checks ``meta.json`` against its seal ``meta.sha256`` and the key it records
against the folder's name (and, in :func:`activations`, against the key asked for), then its
files against ``meta.json`` (sizes, counts; checksums once per file and machine:
:mod:`lmgeometry.activations.integrity`). An entry written before seals existed is verified
and sealed once (:func:`upgrade_entry`: by :func:`activations` when it is asked for, by
``lmgeometry store upgrade`` for a whole store). One process at a time builds or seals an
entry (a lock per entry, :func:`lmgeometry.io.paths.folder_lock`); another one asking for
it waits, then reads it. Only numpy and pyarrow are needed to read an entry.

Under ``lmgeometry book`` every opened entry and the time :func:`activations` spends (cache hit
or build) are recorded through :mod:`lmgeometry.trace`: the book re-executes a chapter when a
model behind one of the entries it read has changed, and ``--profile`` reports the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from lmgeometry import sources, trace
from lmgeometry.activations.entry import (
    BACKENDS,
    EXTRACTION_MODULE,
    FORMAT_VERSION,
    check_backend,
    encoding_counts,
    entry_files,
    entry_meta,
    extraction_code,
    runner,
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
    META_FILE,
    SEAL_FILE,
    check_entry,
    check_name,
    checksums,
    damaged,
    entry_name,
    layer_file,
    read_meta,
    seal_meta,
)
from lmgeometry.activations.reader import LayerView, Store, _du, open_store
from lmgeometry.errors import (
    PathError,
    SentenceTooLongError,
    StoreError,
    UnsealedEntryError,
    UsageError,
)
from lmgeometry.io import checksums as checksums_io
from lmgeometry.io import corpus as corpora
from lmgeometry.io import models, paths
from lmgeometry.io.files import human_size

if TYPE_CHECKING:
    import argparse

    from lmgeometry.activations.extract import Encoding, Pooling, TooLong
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.models import LoadedModel, ResolvedModel

__all__ = [
    "activations",
    "Backend",
    "BACKENDS",
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
    "recorded_key",
    "SET_ASIDE_MARKER",
    "SET_ASIDE_PREFIX",
    "SHARD_SENTENCES",
    "Store",
    "store_key",
    "template_facts",
    "upgrade_entry",
    "verify_entries",
    "write_arrays",
    "write_meta",
]


DTYPES: tuple[str, ...] = OUTPUT_DTYPES

Engine = Literal["local", "ray"]

Backend = Literal["torch", "onnxruntime"]

ENGINES: tuple[str, ...] = ("local", "ray")

SHARD_SENTENCES = 4096
"""Sentence ids per shard on Ray (:func:`activations`): small enough that a 40,000-sentence
corpus spreads over ten workers, large enough that length-sorted batches within a shard pad as
little as over the whole corpus. The local engine plans over the whole corpus unless given
``shard_sentences`` (then both engines write the same bytes)."""


def store_key(fingerprint: str, corpus_digest: str, *, pooling: str, prepend_bos: bool | None,
              too_long: str, dtype: str, code: dict[str, str] | None = None,
              backend: str = "torch") -> str:
    """sha256 naming one (model, corpus, options, backend, extraction code) entry.

    ``code`` defaults to :func:`extraction_code` of ``backend``. ``batch_tokens`` and the
    device are not part of the key: they change results only by floating-point reassociation
    (below 1e-5). A backend other than torch is in the key (its values differ from torch's in
    about 0.5-1% of float16 values, docs/PERFORMANCE.md); torch is left out, so its entries
    keep the keys they had before backends existed.
    """
    code = extraction_code(backend) if code is None else code
    payload = {"format": FORMAT_VERSION, "model": fingerprint, "corpus": corpus_digest,
               "pooling": pooling, "prepend_bos": prepend_bos, "too_long": too_long,
               "dtype": dtype, "code": sources.code_digest(code)}
    if backend != "torch":
        payload["backend"] = backend
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def recorded_key(meta: dict[str, Any], path: Path | None = None) -> str:
    """The key of the inputs an entry's ``meta.json`` records (:func:`store_key` of its
    ``fingerprint``, ``corpus.digest``, ``options`` and ``code``).

    Raises
    ------
    StoreError
        ``meta.json`` lacks one of them (named for the entry ``path``).
    """
    try:
        options = meta["options"]
        return store_key(meta["fingerprint"], meta["corpus"]["digest"],
                         pooling=options["pooling"], prepend_bos=options["prepend_bos"],
                         too_long=options["too_long"], dtype=options["dtype"],
                         code=dict(meta["code"]), backend=options.get("backend", "torch"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise damaged(path or Path("?"), META_FILE, f"lacks the inputs its key is computed "
                                                    f"from ({type(exc).__name__}: {exc})"
                      ) from exc


def upgrade_entry(path: str | Path, *, full: bool = True, key: str | None = None) -> bool:
    """Verify an entry written before ``meta.json`` was sealed, then seal it (once).

    Its metadata is accepted only when it is what the store wrote for this folder: the key
    recomputed from the inputs ``meta.json`` records (model fingerprint, corpus digest, options,
    the extraction code's digests: :func:`recorded_key`) equals the key it records (and ``key``,
    when the caller computed it itself), the folder is named after that key, and every file
    matches ``meta.json``: sizes, counts and the sha256 recorded when it was written
    (:func:`check_entry`; ``full`` reads every byte again, otherwise a file hashed before on
    this machine under the same stamp counts). Only then is ``meta.sha256`` written, under
    the entry's lock, over exactly the bytes that were verified. What no key covers (the
    model's facts, the template, the counts) was written in the same file by the same call;
    a change to those made before this seal cannot be told from the original.

    Parameters
    ----------
    path : str or pathlib.Path
        The entry's folder.
    full : bool
        Hash every file again (``lmgeometry store upgrade``).
    key : str, optional
        The key the caller asked for (:func:`activations`).

    Returns
    -------
    bool
        True when it was sealed now, False when it already was (and its seal holds).

    Raises
    ------
    StoreError
        Naming what did not verify; nothing is written.
    """
    path = paths.user_path(path)
    with paths.folder_lock(path, "the store entry"):
        if (path / SEAL_FILE).exists() or (path / SEAL_FILE).is_symlink():
            check_name(path, read_meta(path), key)
            return False
        data = (path / META_FILE).read_bytes() if (path / META_FILE).is_file() else b""
        meta = read_meta(path, sealed=False)
        recomputed = recorded_key(meta, path)
        if recomputed != meta.get("key"):
            raise damaged(path, META_FILE, f"records the key {str(meta.get('key'))[:20]}, but "
                                           f"its recorded inputs give {recomputed[:20]} (its "
                                           "content has changed)")
        check_name(path, meta, key)
        check_entry(path, meta, full=full)
        if (path / META_FILE).read_bytes() != data:
            raise damaged(path, META_FILE, "changed while it was being verified")
        seal_meta(path, data)
    return True


def model_fingerprint(spec: str | ResolvedModel) -> str:
    """Fingerprint of a model spec without loading the weights where possible.

    :func:`lmgeometry.io.models.resolve_fingerprint`: equals ``load_model(spec).fingerprint``.
    """
    return models.resolve_fingerprint(spec)


def _keyed(model: str | LoadedModel) -> ResolvedModel | LoadedModel:
    """The model as the store keys it, with its fingerprint: a spec resolved once
    (:func:`lmgeometry.io.models.resolve_model`), or loaded when only loading can fingerprint it
    (a hub id not in the local cache yet: the load downloads it); a loaded model as it is."""
    if not isinstance(model, str):
        return model
    resolved = models.resolve_model(model)
    return resolved if resolved.fingerprint is not None else models.load_model(resolved)


def _write_entry(tmp: Path, model: LoadedModel, corpus: Corpus, encoding: Encoding, *,
                 key: str, options: dict[str, Any], batch_tokens: int | None, progress: bool,
                 callback: Callable[[int, int], None] | None,
                 shard_sentences: int | None) -> None:
    backend = options.get("backend", "torch")
    seconds = write_arrays(tmp, runner(model, backend), corpus, encoding, options=options,
                           batch_tokens=batch_tokens, progress=progress, callback=callback,
                           shard_sentences=shard_sentences)
    n_layers = model.n_layers + 1
    extraction = {"seconds": round(seconds, 3),
                  "words_per_s": round(encoding.n_words / seconds, 1) if seconds else None,
                  "batch_tokens": batch_tokens or default_batch_tokens(model.device),
                  "shard_sentences": shard_sentences,
                  "engine": "local",
                  "backend": backend,
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
    progress: bool | None = None,
    callback: Callable[[int, int], None] | None = None,
    verify: bool = False,
    shard_sentences: int | None = None,
    engine: Engine = "local",
    workers: int | None = None,
    address: str | None = None,
    cpus_per_worker: float = 1,
    gpus_per_worker: float = 0,
    backend: Backend = "torch",
) -> Store:
    """Hidden states of every word of ``corpus`` at every layer of ``model``, cached.

    A cache hit returns the existing entry without loading the model (a spec is resolved once,
    by ``models.resolve_model``: its fingerprint keys the entry, a miss loads it).

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
        Store root (``~`` expanded; created if needed); default ``<cache>/activations``.
    batch_tokens : int, optional
        Padded-token budget per forward pass (memory vs speed; not part of the key); default
        1,024 on a CPU, 16,384 on a GPU (:func:`~.extract.default_batch_tokens`).
    progress : bool or None
        Show a progress bar on stderr; None: only on a terminal (none in a notebook's outputs).
    callback : callable, optional
        ``callback(sentences_done, total)`` after each batch; an exception it raises aborts
        the extraction and leaves no entry.
    verify : bool
        On a cache hit, hash every file again against ``meta.json`` (sizes always checked).
    shard_sentences : int, optional
        Batches never mix two shards of this many sentence ids (``plan_sharded``); on Ray a
        shard is the unit of work and retry (default :data:`SHARD_SENTENCES` there; one plan
        over the corpus locally). Not in the key; same value, same bytes on both engines.
    engine : {"local", "ray"}
        This process, or a Ray cluster writing a sharded entry (needs a spec), with
        ``workers``, ``address``, ``cpus_per_worker``, ``gpus_per_worker``
        (:func:`lmgeometry.activations.distributed.build_sharded`).
    backend : {"torch", "onnxruntime"}
        Forward passes on torch eager (the default) or onnxruntime's CPU provider
        (:mod:`lmgeometry.activations.onnx_runtime`: faster, a float16 step off torch in
        0.5-0.9% of values, so in the key). Refused with ``UsageError`` (unknown, on a GPU, a
        model it cannot export) or ``OptionalDependencyError`` (not installed).

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
    options = _options(pooling=pooling, prepend_bos=prepend_bos, too_long=too_long, dtype=dtype,
                       backend=backend)
    _check_engine(model, engine, shard_sentences, backend, gpus_per_worker)
    root = paths.writable_folder(root if root is not None else paths.cache_dir("activations"),
                                 "the store root")
    label = model if isinstance(model, str) else model.spec
    with trace.timed("activations", model=label, corpus=corpus.name) as event:
        keyed = _keyed(model)
        key = store_key(keyed.fingerprint, corpus.digest(), **options)
        final = root / entry_name(corpus.name, key)
        ray = dict(workers=workers, address=address, cpus_per_worker=cpus_per_worker,
                   gpus_per_worker=gpus_per_worker)
        with paths.folder_lock(final, "the store entry"):  # one builder; others wait, then hit
            event.update(entry=final.name, hit=_servable(final, verify, key))
            if not event["hit"]:
                _build(keyed, corpus, final, engine=engine, key=key, options=options, ray=ray,
                       batch_tokens=batch_tokens, progress=progress, callback=callback,
                       shard_sentences=shard_sentences)
            return Store(final, label=label, key=key)


def _build(model: ResolvedModel | LoadedModel, corpus: Corpus, final: Path, *, engine: str,
           ray: dict[str, Any], **build: Any) -> None:
    """Build the entry ``final`` in this process, or on Ray with the ``ray`` settings (each
    worker loads the spec itself, on its own machine, and checks the fingerprint). A progress
    bar left to None shows only on a terminal (none in a notebook's outputs)."""
    if build["progress"] is None:
        build["progress"] = sys.stderr.isatty()
    if engine == "ray":
        build["shard_sentences"] = build["shard_sentences"] or SHARD_SENTENCES
        _build_on_ray(model.spec, model.fingerprint, corpus, final, **ray, **build)
    else:
        _build_entry(model, corpus, final, **build)


def _build_on_ray(spec: str, fingerprint: str, corpus: Corpus, final: Path,
                  **kwargs: Any) -> None:
    """:func:`lmgeometry.activations.distributed.build_sharded` into ``final``."""
    # Imported here, not for a cycle (distributed imports entry, not this module): the Ray
    # engine stays out of the processes, and the chapters' recorded code, that never use it.
    from lmgeometry.activations.distributed import build_sharded

    if final.exists() or final.is_symlink():
        _move_aside(final)
    build_sharded(spec, fingerprint, corpus, final, **kwargs)


def _check_engine(model: str | LoadedModel, engine: str, shard_sentences: int | None,
                  backend: str = "torch", gpus: float = 0) -> None:
    if not isinstance(model, str) and not (hasattr(model, "spec")
                                           and hasattr(model, "fingerprint")):
        raise UsageError(
            f"activations() takes a model spec (a name or folder) or a LoadedModel, not a "
            f"{type(model).__name__}; for a transformers model in memory use "
            "lmgeometry.hidden_states((model, tokenizer), sentences, cache=True), or "
            "lmgeometry.io.models.from_memory(model, tokenizer) to get a LoadedModel")
    if engine not in ENGINES:
        raise UsageError(f"engine must be one of {ENGINES}, not {engine!r}")
    if engine == "ray" and not isinstance(model, str):
        raise UsageError("engine='ray' loads the model on every worker: pass its spec (a name "
                         f"or folder, e.g. {model.spec!r}), not a loaded model")
    if shard_sentences is not None and shard_sentences < 1:
        raise UsageError(f"shard_sentences must be a positive number, not {shard_sentences}")
    _check_backend_device(model, backend, gpus)


def _check_backend_device(model: str | LoadedModel, backend: str, gpus: float) -> None:
    """onnxruntime runs on the CPU (its CPU provider): refuse a model or workers on a GPU."""
    on_gpu = gpus > 0 or (not isinstance(model, str) and model.device.type != "cpu")
    if backend == "onnxruntime" and on_gpu:
        where = "gpus_per_worker > 0" if gpus > 0 else f"the model is on {model.device}"
        raise UsageError(f"backend 'onnxruntime' runs on the CPU, but {where}: load the model "
                         "with device='cpu' (and give Ray workers no GPU), or use the default "
                         "backend 'torch'")


def _options(*, pooling: str, prepend_bos: bool | None, too_long: str, dtype: str,
             backend: str = "torch") -> dict[str, Any]:
    """The options that change the numbers (part of the key), checked; ``backend`` only when
    it is not torch (so torch entries keep their keys and ``meta.json``)."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
    if too_long not in TOO_LONG:
        raise ValueError(f"too_long must be one of {TOO_LONG}, not {too_long!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype!r}")
    if prepend_bos is not None and not isinstance(prepend_bos, bool):
        raise TypeError("prepend_bos must be None, True or False")
    check_backend(backend)
    return {"pooling": pooling, "prepend_bos": prepend_bos, "too_long": too_long,
            "dtype": dtype, **({} if backend == "torch" else {"backend": backend})}


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


def _servable(final: Path, verify: bool, key: str) -> bool:
    """Whether the entry ``final`` exists, is whole and is the entry of ``key``; one that is
    not is set aside."""
    if not (final / META_FILE).is_file():
        return False
    problem = _damage(final, verify, key)
    if problem:
        _move_aside(final, f"damaged ({problem})")
    return not problem


def _damage(final: Path, full: bool, key: str) -> str:
    """Why the cached entry ``final`` cannot be served ("" when it can): ``meta.json`` against
    its seal and ``key``, the files against ``meta.json``, by content (:func:`check_entry`;
    ``full`` hashes every file again). An entry written before seals existed is verified and
    sealed here (:func:`upgrade_entry`), with one line saying so."""
    try:
        try:
            meta = read_meta(final)
        except UnsealedEntryError:
            upgrade_entry(final, full=full, key=key)
            print(f"lmgeometry: sealed the store entry {final}, written before meta.json had a "
                  "checksum (its key, name and files verified)", file=sys.stderr, flush=True)
            meta = read_meta(final)
        check_name(final, meta, key)
        check_entry(final, meta, full=full)
    except StoreError as exc:
        return f"{exc.file or META_FILE} {exc.problem}".strip()
    return ""


#: Names of entries the store set aside (damaged, or without ``meta.json``), and the file it
#: writes into such a folder (a real folder, never through a symbolic link) to say so.
SET_ASIDE_PREFIX = ".set-aside-"
SET_ASIDE_MARKER = ".lmgeometry-set-aside.json"


def _move_aside(final: Path, why: str = "incomplete (no meta.json)") -> None:
    """Rename a folder that has an entry's name but cannot be served out of the way.

    The store never leaves such a folder (an entry is renamed into place with its
    ``meta.json`` and checked by content on use), so it was made, emptied or changed by hand,
    or damaged on disk; it is kept, under a name the store ignores, rather than deleted, and
    the entry is built again. A folder (not a symbolic link) moved aside gets
    :data:`SET_ASIDE_MARKER`: the name it had, why, and whether it was the store's own
    (``meta.json`` sealed, or recording the key of its name), which ``lmgeometry store clean``
    needs before it removes it.
    """
    aside = final.with_name(f"{SET_ASIDE_PREFIX}{final.name}-{secrets.token_hex(4)}")
    ours = _written_here(final)
    try:
        os.rename(final, aside)
    except FileNotFoundError:
        return  # another process moved it first
    if aside.is_dir() and not aside.is_symlink():
        (aside / SET_ASIDE_MARKER).write_text(json.dumps(
            {"entry": final.name, "reason": why, "store_written": ours}) + "\n")
    print(f"lmgeometry: the store entry {final} is {why}: moved aside to {aside} and built "
          "again; delete the old copy when you no longer need it", file=sys.stderr, flush=True)


def _written_here(folder: Path) -> bool:
    """Whether the folder was written by the store: a real folder holding a seal, or a
    ``meta.json`` that records the key of the folder's name."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    if (folder / SEAL_FILE).is_file():
        return True
    try:
        meta = read_meta(folder, sealed=False)
        check_name(folder, meta)
    except StoreError:
        return False
    return "key" in meta


def _build_entry(model: ResolvedModel | LoadedModel, corpus: Corpus, final: Path, *, key: str,
                 options: dict[str, Any], batch_tokens: int | None, progress: bool,
                 callback: Callable[[int, int], None] | None,
                 shard_sentences: int | None) -> None:
    """Extract ``corpus`` with ``model`` into the store entry ``final`` (see :func:`activations`).

    A resolved model is loaded here; its files must still have the fingerprint that keyed the
    entry. The entry is written into a temporary sibling directory and renamed into place when
    complete; a failure leaves no entry.
    """
    if final.exists() or final.is_symlink():
        _move_aside(final)
    if isinstance(model, models.ResolvedModel):
        keyed = model.fingerprint or ""
        model = models.load_model(model)
        if model.fingerprint != keyed:
            raise RuntimeError(f"{model.spec}: fingerprint changed while loading "
                               f"({keyed[:12]} -> {model.fingerprint[:12]})")
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



def _check_extract_args(args: argparse.Namespace) -> Path:
    """The cheap checks of ``lmgeometry extract``, before any corpus is built; the store root.

    The corpus name, the model spec (folder, config, weights, tokenizer files; an installed
    alias), the cache root and the store root (a writable folder) are checked in
    milliseconds, and nothing is created, so a typo costs neither the corpus build nor a
    stray folder.
    """
    corpora.check_name(args.corpus)
    check_backend(args.backend)
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
        ``engine``, ``address``, ``workers``, ``cpus_per_worker``, ``gpus_per_worker``,
        ``backend``.

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
                        gpus_per_worker=args.gpus_per_worker, backend=args.backend)
    counts = store.meta["counts"]
    print(store.path)
    print(f"{human_size(_du(store.path))} on disk: {counts['words']} words x {store.n_layers} "
          f"layers x {store.width} ({store.meta['dtype']}), {counts['special']} special "
          f"tokens, "
          f"{counts['sentences_stored']} sentences stored, "
          f"{counts['sentences_skipped']} skipped"
          + (f", {len(store.shards)} shards" if store.shards else "")
          + (f", backend {args.backend}" if args.backend != "torch" else ""))
    return 0


def _entries_under(target: Path) -> list[Path]:
    """``target`` itself when it is an entry, else the entry folders it holds (never through
    a symbolic link: a link under a store root is not followed)."""
    if (target / META_FILE).is_file():
        return [target]
    if not target.is_dir():
        what = "is a file" if target.exists() else "does not exist"
        raise PathError(f"{target} {what}: pass store entries or a store root (a folder "
                              "holding entries)")
    return sorted(p for p in target.iterdir()
                  if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))


def verify_entries(targets: Sequence[str | Path] = ()) -> pd.DataFrame:
    """Check store entries in full: ``meta.json`` against its seal, the key against the
    folder's name, file sizes, counts and recorded checksums.

    Parameters
    ----------
    targets : sequence of str or pathlib.Path
        Entry folders or store roots (every entry folder directly under them); default the
        cache's store root. ``~`` is expanded.

    Returns
    -------
    pandas.DataFrame
        One row per entry: ``entry`` (path), ``status`` (``"ok"``, ``"damaged"``, or
        ``"unsealed"``: written before ``meta.json`` was sealed, see :func:`upgrade_entry`),
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
        except UnsealedEntryError as exc:
            row.update(status="unsealed", message=str(exc))
        except StoreError as exc:
            row.update(status="damaged", message=str(exc))
        rows.append(row)
    return pd.DataFrame(rows, columns=["entry", "status", "size", "message"])
