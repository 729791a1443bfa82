"""Sharded extraction on a Ray cluster: one store entry written by many workers.

``activations(..., engine="ray")`` (``lmgeometry extract --engine ray``) splits the corpus into
shards of ``shard_sentences`` consecutive sentence ids and hands them to a pool of Ray actors,
each holding one copy of the model (``workers`` actors of ``cpus_per_worker`` CPUs and
``gpus_per_worker`` GPUs). An actor tokenizes, aligns and extracts its shard with the code of
the local path (:func:`lmgeometry.activations.entry.write_arrays`) and writes the shard's files
itself, so the driver never loads the model and no activation passes through it. Batches
never cross a shard on either engine (:func:`lmgeometry.activations.extract.plan_sharded`), so
with the same ``shard_sentences``, ``batch_tokens`` and torch threads per process both engines
compute the same padded batches in the same order and write the same bytes (tested); another
thread count changes the order of the sums, and about one float16 value in a million.

Layout of a sharded entry (same key and name as a local one: either serves as the other's
cache hit)::

    <entry>/
        meta.json          as for a local entry, plus ``shards``: name, sentence ids, rows
        words.parquet      all shards' words, rows numbered across shards
        special.parquet    all shards' special tokens
        shards/shard_00000/
            layer_00.npy ... layer_LL.npy, special.npy    this shard's rows
            words.parquet, special.parquet, shard.json    its tables (rows from 0), its record

Why ``.npy`` shards rather than zarr: each shard is what the local path writes (so one reader
and one integrity check serve both), it is memory-mapped with numpy alone, and a shard is the
unit of retry. A layer is read shard by shard (:meth:`Store.layer_blocks`), never as one map.

Fault tolerance. A shard is written into a temporary folder and renamed into place with its
``shard.json`` (its counts and files' sha256), so a shard folder is whole or absent. Actors
are restarted by Ray when their process dies, and the shard they held is retried
(``max_restarts``, ``max_task_retries``: :data:`RETRIES`). The shards live in
``.partial-<entry>`` beside the entry until every shard is whole; only then are the merged
tables and ``meta.json`` written and the folder renamed into place, so an interrupted job
never leaves an entry that looks complete, and a rerun extracts only the missing shards
(reused shards are checked against their recorded sha256 first).

Ray Core actors rather than Ray Data's ``map_batches``: the store needs each shard written by
the worker that computed it, as a unit that is retried whole; an actor pool with a shard queue
says exactly that in a few lines.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lmgeometry.activations import entry
from lmgeometry.activations.extract import default_batch_tokens, encode
from lmgeometry.activations.integrity import (
    SHARDS_DIR,
    SPECIAL_TABLE,
    WORDS_FILE,
    checksums,
    file_sha256,
)
from lmgeometry.errors import SentenceTooLongError, StoreError, UsageError
from lmgeometry.io import paths

if TYPE_CHECKING:
    from lmgeometry.io.corpus import Corpus

__all__ = ["build_sharded", "RETRIES", "Shard", "SHARD_RECORD", "shard_spans", "ShardWorker"]

#: Restarts of a dead actor, and retries of the shard it held, before the job fails.
RETRIES = 3

SHARD_RECORD = "shard.json"
_PARTIAL_PREFIX = ".partial-"
_PLAN = "plan.json"
_FACTS = "facts.json"


@dataclass(frozen=True)
class Shard:
    """Sentence ids ``first <= id < stop`` of the corpus, extracted as one unit."""

    index: int
    first: int
    stop: int

    @property
    def name(self) -> str:
        """Folder name, ``shard_00000``."""
        return f"shard_{self.index:05d}"


def shard_spans(n_sentences: int, shard_sentences: int) -> list[Shard]:
    """The shards of a corpus of ``n_sentences`` sentences, ``shard_sentences`` ids each."""
    if shard_sentences < 1:
        raise ValueError("shard_sentences must be positive")
    return [Shard(k, lo, min(lo + shard_sentences, n_sentences))
            for k, lo in enumerate(range(0, n_sentences, shard_sentences))]


class ShardWorker:
    """One copy of the model, in a Ray actor; extracts shards into a partial entry.

    Parameters
    ----------
    spec : str
        The model spec (loaded with :func:`lmgeometry.io.models.load_model` in the actor).
    fingerprint : str
        The fingerprint the driver keyed the entry with; a model that loads with another one
        (files changed in between) is refused.
    device : str or None
        ``"cuda"`` when the actor has a GPU, else ``"cpu"``.
    threads : int
        torch's intra-op threads in this actor (its CPUs).
    """

    def __init__(self, spec: str, fingerprint: str, device: str | None, threads: int) -> None:
        import torch

        from lmgeometry.io import models

        torch.set_num_threads(max(1, threads))
        self.model = models.load_model(spec, device=device)
        if self.model.fingerprint != fingerprint:
            raise RuntimeError(f"{spec}: the model on this worker has fingerprint "
                               f"{self.model.fingerprint[:12]}, the job {fingerprint[:12]}")
        self.runners: dict[str, Any] = {}

    def facts(self) -> dict[str, Any]:
        """:meth:`LoadedModel.facts` of the worker's model."""
        return self.model.facts()

    def extract(self, corpus: Corpus, shard: Shard, folder: str, options: dict[str, Any],
                batch_tokens: int, shard_sentences: int) -> dict[str, Any]:
        """Extract one shard into ``folder/<shard name>`` and return its record; the forward
        passes run on ``options``' backend (:func:`lmgeometry.activations.entry.runner`, made
        once per worker)."""
        backend = options.get("backend", "torch")
        if backend not in self.runners:
            self.runners[backend] = entry.runner(self.model, backend)
        encoding = encode(self.model, corpus, prepend_bos=options["prepend_bos"],
                          too_long=options["too_long"], span=(shard.first, shard.stop))
        with paths.building(Path(folder) / shard.name) as tmp:
            seconds = entry.write_arrays(tmp, self.runners[backend], corpus, encoding,
                                         options=options,
                                         batch_tokens=batch_tokens, progress=False,
                                         callback=None, shard_sentences=shard_sentences)
            record = {"name": shard.name, "sentences": [shard.first, shard.stop],
                      "counts": entry.encoding_counts(encoding), "skipped": encoding.skipped,
                      "template": entry.template_facts(encoding), "seconds": round(seconds, 3),
                      "pid": os.getpid(), "host": paths.host(),
                      "checksums": checksums(tmp, entry.entry_files(self.model.n_layers + 1))}
            (tmp / SHARD_RECORD).write_text(json.dumps(record, indent=1) + "\n")
        return record


def _reusable(folder: Path, shard: Shard) -> dict[str, Any] | None:
    """A finished shard's record when every file matches its recorded sha256, else None."""
    path = folder / shard.name
    try:
        record = json.loads((path / SHARD_RECORD).read_text())
    except (OSError, ValueError):
        return None
    files = record.get("checksums") or {}
    if record.get("sentences") != [shard.first, shard.stop] or not files:
        return None
    try:
        if all(file_sha256(path / name) == digest for name, digest in files.items()):
            return record
    except OSError:
        pass
    return None


def _prepare_partial(partial: Path, plan: dict[str, Any]) -> None:
    """Create the partial entry, or keep it when it was started with the same plan."""
    plan_path = partial / _PLAN
    if partial.exists():
        try:
            same = json.loads(plan_path.read_text()) == plan
        except (OSError, ValueError):
            same = False
        if not same:
            shutil.rmtree(partial)
    (partial / SHARDS_DIR).mkdir(parents=True, exist_ok=True)
    paths.remove_stale(partial / SHARDS_DIR)
    if not plan_path.is_file():
        plan_path.write_text(json.dumps(plan, indent=1, sort_keys=True) + "\n")


def _start_ray(address: str | None, cpus: float) -> bool:
    """Connect to ``address``, or start a local cluster; True when this call started Ray."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("engine='ray' (--engine ray) needs Ray: pip install 'ray>=2.40' "
                         "(or the project's requirements.txt, which pins it)") from exc

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "logging_level": "ERROR"}
    if address is None:
        kwargs["num_cpus"] = max(cpus, os.cpu_count() or 1)
    ray.init(address=address, **kwargs)
    return True


def _pool_size(workers: int | None, cpus: float, gpus: float, n_shards: int) -> int:
    import ray

    if workers is None:
        free = ray.cluster_resources()
        workers = (int(free.get("GPU", 0) // gpus) if gpus else int(free.get("CPU", 1) // cpus))
    if workers < 1:
        raise UsageError(f"the Ray cluster has room for no worker of {cpus:g} CPUs and "
                         f"{gpus:g} GPUs: pass --workers, or lower --gpus-per-worker")
    return max(1, min(workers, n_shards))


def build_sharded(spec: str, fingerprint: str, corpus: Corpus, final: Path, *, key: str,
                  options: dict[str, Any], batch_tokens: int | None, shard_sentences: int,
                  workers: int | None = None, address: str | None = None,
                  cpus_per_worker: float = 1, gpus_per_worker: float = 0,
                  progress: bool = True,
                  callback: Callable[[int, int], None] | None = None) -> None:
    """Extract ``corpus`` into the sharded entry ``final`` on a Ray cluster.

    Called by :func:`lmgeometry.activations.store.activations` on a cache miss with
    ``engine="ray"``; see the module docstring for the layout and the guarantees.

    Parameters
    ----------
    spec, fingerprint, corpus, final, key, options
        The model spec and fingerprint, the corpus, the entry's folder, key and options.
    batch_tokens : int, optional
        Padded-token budget per forward pass (default: the device's).
    shard_sentences : int
        Sentence ids per shard.
    workers : int, optional
        Actors (each one model copy); default as many as the cluster's CPUs (GPUs) allow.
    address : str, optional
        A running cluster (``ray start --head`` prints it, ``"auto"`` finds it); default a
        local cluster started for this job and stopped after it.
    cpus_per_worker, gpus_per_worker : float
        Resources of one actor; ``gpus_per_worker > 0`` runs the model on the GPU.
    progress : bool
        A progress bar over shards.
    callback : callable, optional
        ``callback(sentences_done, total)`` after each shard; an exception it raises stops
        the job and keeps the finished shards for the next run.

    Raises
    ------
    StoreError
        A worker failed more than :data:`RETRIES` times (the finished shards are kept).
    SentenceTooLongError
        As for the local path.
    """
    from tqdm.std import tqdm

    if Path(spec).expanduser().exists():  # a model folder: workers do not share our cwd
        spec = str(Path(spec).expanduser().resolve())
    device = "cuda" if gpus_per_worker > 0 else "cpu"
    batch_tokens = batch_tokens or default_batch_tokens(device)
    shards = shard_spans(len(corpus.sentences), shard_sentences)
    partial = final.with_name(f"{_PARTIAL_PREFIX}{final.name}")
    _prepare_partial(partial, {"key": key, "shard_sentences": shard_sentences,
                               "batch_tokens": batch_tokens})
    folder = partial / SHARDS_DIR
    records: dict[int, dict[str, Any]] = {}
    for shard in shards:
        record = _reusable(folder, shard)
        if record is not None:
            records[shard.index] = record
        else:
            shutil.rmtree(folder / shard.name, ignore_errors=True)
    reused = len(records)
    todo = [s for s in shards if s.index not in records]
    t0 = time.perf_counter()
    facts: dict[str, Any] | None = None
    n_workers = 0
    if todo:
        facts, n_workers = _run_pool(spec, fingerprint, corpus, todo, records, folder,
                                     options=options, batch_tokens=batch_tokens,
                                     shard_sentences=shard_sentences, workers=workers,
                                     address=address, cpus=cpus_per_worker,
                                     gpus=gpus_per_worker, device=device,
                                     bar=tqdm(total=len(shards), initial=reused, unit="shard",
                                              desc=f"extract {spec} on Ray", file=sys.stderr,
                                              disable=not progress, dynamic_ncols=True),
                                     callback=callback, total=len(corpus.sentences))
    seconds = time.perf_counter() - t0
    facts = _model_facts(partial, facts, spec)
    _merge(partial, [records[s.index] for s in shards], key=key, facts=facts,
           fingerprint=fingerprint, corpus=corpus, options=options,
           extraction={"engine": "ray", "backend": options.get("backend", "torch"),
                       "seconds": round(seconds, 3),
                       "workers": n_workers, "shards": len(shards), "shards_reused": reused,
                       "worker_processes": len({(records[s.index]["host"], records[s.index]["pid"])
                                                for s in todo}),
                       "shard_sentences": shard_sentences, "batch_tokens": batch_tokens,
                       "device": device, "address": address or "local"})
    paths.publish(partial, final, marker="meta.json")


def _model_facts(partial: Path, facts: dict[str, Any] | None, spec: str) -> dict[str, Any]:
    """The model's facts, kept in the partial entry for a rerun that extracts nothing."""
    path = partial / _FACTS
    if facts is not None:
        path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
        return facts
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        from lmgeometry.io import models

        return _model_facts(partial, models.load_model(spec, device="cpu").facts(), spec)


def _run_pool(spec: str, fingerprint: str, corpus: Corpus, todo: list[Shard],
              records: dict[int, dict[str, Any]], folder: Path, *, options: dict[str, Any],
              batch_tokens: int, shard_sentences: int, workers: int | None,
              address: str | None, cpus: float, gpus: float, device: str, bar: Any,
              callback: Callable[[int, int], None] | None, total: int
              ) -> tuple[dict[str, Any], int]:
    """Extract the shards ``todo`` on a pool of actors; fills ``records``."""
    started = _start_ray(address, cpus * (workers or 1))
    import ray

    actors: list[Any] = []
    try:
        remote = ray.remote(num_cpus=cpus, num_gpus=gpus, max_restarts=RETRIES,
                            max_task_retries=RETRIES)(ShardWorker)
        size = _pool_size(workers, cpus, gpus, len(todo))
        actors = [remote.remote(spec, fingerprint, device, max(1, int(cpus)))
                  for _ in range(size)]
        corpus_ref = ray.put(corpus)
        queue = list(todo)
        pending: dict[Any, tuple[Any, Shard]] = {}

        def submit(actor: Any) -> None:
            shard = queue.pop(0)
            ref = actor.extract.remote(corpus_ref, shard, str(folder), options, batch_tokens,
                                       shard_sentences)
            pending[ref] = (actor, shard)

        for actor in actors[:len(queue)]:
            submit(actor)
        facts_ref = actors[0].facts.remote()
        done = sum(r["sentences"][1] - r["sentences"][0] for r in records.values())
        while pending:
            [ref], _ = ray.wait(list(pending), num_returns=1)
            actor, shard = pending.pop(ref)
            records[shard.index] = _get(ref, shard, folder)
            done += shard.stop - shard.first
            bar.update(1)
            if queue:
                submit(actor)
            if callback is not None:
                callback(done, total)
        return _get(facts_ref, None, folder), size
    finally:
        bar.close()
        for actor in actors:
            ray.kill(actor, no_restart=True)
        if started:
            ray.shutdown()


def _get(ref: Any, shard: Shard | None, folder: Path) -> Any:
    """``ray.get`` with the worker's own error raised as itself."""
    import ray
    from ray.exceptions import RayActorError, RayTaskError

    try:
        return ray.get(ref)
    except RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, (SentenceTooLongError, OverflowError, FloatingPointError,
                              UsageError)):
            raise cause from None
        raise
    except RayActorError as exc:
        what = f"shard {shard.name}" if shard is not None else "the model's facts"
        raise StoreError(
            f"a Ray worker died {RETRIES + 1} times on {what} ({exc}). The finished shards are "
            f"kept in {folder.parent}: run the same command again to extract only the missing "
            "ones.", path=folder.parent) from exc


def _merge(partial: Path, records: list[dict[str, Any]], **meta_args: Any) -> None:
    """Write the merged tables and ``meta.json`` of a sharded entry whose shards are whole."""
    words, special, shards, digests = [], [], [], {}
    rows = special_rows = 0
    for record in records:
        path = partial / SHARDS_DIR / record["name"]
        w = pd.read_parquet(path / WORDS_FILE)
        s = pd.read_parquet(path / SPECIAL_TABLE)
        w["row"] += rows
        s["row"] += special_rows
        words.append(w)
        special.append(s)
        shards.append({"name": record["name"], "sentences": record["sentences"],
                       "rows": [rows, rows + len(w)],
                       "special_rows": [special_rows, special_rows + len(s)]})
        rows += len(w)
        special_rows += len(s)
        digests.update({f"{SHARDS_DIR}/{record['name']}/{name}": digest
                        for name, digest in record["checksums"].items()})
    counts = {name: int(np.sum([r["counts"][name] for r in records]))
              for name in records[0]["counts"]}
    if rows == 0:
        raise SentenceTooLongError(
            f"none of the {counts['sentences']} sentences is stored (each is longer than the "
            "model's window or has no words), so nothing would be stored. Use shorter "
            "sentences or a model with a longer window.")
    pd.concat(words, ignore_index=True).to_parquet(partial / WORDS_FILE, index=False)
    pd.concat(special, ignore_index=True).to_parquet(partial / SPECIAL_TABLE, index=False)
    digests.update(checksums(partial, [WORDS_FILE, SPECIAL_TABLE]))
    skipped = [sid for r in records for sid in r["skipped"]]
    if skipped:
        print(f"{meta_args['facts']['name']}: skipped {len(skipped)} of {counts['sentences']} "
              f"sentences longer than {records[0]['template']['max_positions']} tokens",
              file=sys.stderr)
    entry.write_meta(partial, entry.entry_meta(
        template=records[0]["template"], counts=counts, skipped=skipped, digests=digests,
        shards=shards, **meta_args))
    for name in (_PLAN, _FACTS):
        (partial / name).unlink(missing_ok=True)
