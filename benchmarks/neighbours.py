"""Time and memory of the blocked k-nearest-neighbour search and of the per-layer measures.

A plain script (no assertions): it builds one synthetic layer shaped like the default corpus
(about 50k word occurrences of width 768, float32, anisotropic like a transformer layer: a
shared mean direction, per-word directions, per-occurrence noise and a few large-norm rows),
then prints

* the time and peak traced memory of ``measures.tokens.nearest_neighbours`` (k = 10) at two
  block sizes, for a sample of query rows, and the time extrapolated to every row as query;
* the time of ``measures.contextual.context_measures`` for one layer under both presets, and
  of ``measures.tokens.token_measures`` and ``measures.static.static_embeddings``;
* on a real model (``--model``, default ``smollm2-135m``, the deepest default model; ``none``
  skips it) and the default corpus (``corpus.sts()``, 1,000 sentences; its activations are
  extracted first if not cached, outside the timer): the time of the neighbour search alone
  over every layer as chapter 3 runs it (``measures.tokens.neighbour_measures``, 3,000 queries,
  both controls of a decoder as subsets), then of chapter 3's whole per-model pass
  (``chapters.context.analyse``: both presets, both controls of a decoder, token tables,
  3,000 neighbour queries, 1,000 bootstrap resamples; no static part); with ``--nulls`` the
  pass also runs every claim on the model's untrained twin, as the chapter does
  (``chapters.nulls.null_stores``; the twin's store too is extracted outside the timer).

The real-model timings run with one BLAS thread, as the chapter does
(``chapters.common.with_blas_threads``; ``LMGEOMETRY_BLAS_THREADS``).

Run with ``.venv/bin/python benchmarks/neighbours.py`` (``--help`` for the sizes).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations import store
from lmgeometry.chapters import nulls
from lmgeometry.chapters.common import blas_threads, control_rows, controls_for
from lmgeometry.chapters.context import analysis as context_measures
from lmgeometry.io import corpus
from lmgeometry.measures import contextual, static, tokens
from lmgeometry.measures.unit_rows import UnitRows


def synthetic_layer(n_rows: int, width: int, seed: int = 0) -> tuple[np.ndarray, pd.DataFrame]:
    """A layer-like float32 matrix and a matching words table (Zipfian vocabulary)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, 30, size=n_rows // 5)
    lengths = lengths[: np.searchsorted(np.cumsum(lengths), n_rows) + 1]
    lengths[-1] -= int(lengths.sum()) - n_rows
    lengths = lengths[lengths > 0]
    sentence = np.repeat(np.arange(len(lengths)), lengths)
    position = np.concatenate([np.arange(n) for n in lengths])
    n_vocab = 8000
    p = 1.0 / np.arange(1, n_vocab + 1)
    word = rng.choice(n_vocab, size=n_rows, p=p / p.sum())
    mean = rng.standard_normal(width).astype(np.float32) * 2.0
    word_dirs = rng.standard_normal((n_vocab, width)).astype(np.float32)
    X = np.empty((n_rows, width), dtype=np.float32)
    for start in range(0, n_rows, 8192):
        stop = min(start + 8192, n_rows)
        noise = rng.standard_normal((stop - start, width), dtype=np.float32)
        X[start:stop] = mean + word_dirs[word[start:stop]] + 0.8 * noise
    X[position == 0] *= 40.0  # decoder-like large-norm first tokens
    words = pd.DataFrame(
        {
            "sentence_id": sentence.astype(np.int32),
            "word_index": position.astype(np.int32),
            "text": np.char.add("w", word.astype(str)),
            "upos": np.where(word < 100, "DET", "NOUN"),
            "is_stop": word < 100,
            "is_punct": word == 2,
        }
    )
    return X, words


def timed(fn, *args, trace: bool = False, **kwargs):
    """Run ``fn`` once; return (result, seconds, peak traced MiB or None)."""
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    seconds = time.perf_counter() - t0
    peak = None
    if trace:
        _, peak_bytes = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        peak = peak_bytes / 2**20
    return result, seconds, peak


def neighbour_pass(acts: store.Store, queries: int = 3000) -> tuple[float, float]:
    """Wall and CPU seconds of chapter 3's neighbour search over every layer of ``acts`` (unit
    rows made outside the timer): its queries, ``k = 10``, each control's rows as a subset."""
    n = acts.n_words
    rows = {c: control_rows(acts, c) for c in controls_for(acts)}
    q = np.sort(np.random.default_rng([0, 1]).choice(n, size=min(queries, n), replace=False))
    subsets = {c: np.isin(np.arange(n), r) for c, r in rows.items()}
    wall = cpu = 0.0
    for i in range(acts.n_layers):
        ur = UnitRows.of(acts.layer(i))
        c0 = time.process_time()
        wall += timed(tokens.neighbour_measures, ur, acts.words, 10, queries=q,
                      subsets=subsets)[1]
        cpu += time.process_time() - c0
    return wall, cpu


def real_model(model: str, seed: int, with_nulls: bool) -> None:
    """Print the neighbour search's and chapter 3's per-model pass's seconds on ``model``
    (wall and CPU: on shared cores the CPU seconds are the steadier figure)."""
    acts = store.activations(model, corpus.sts())
    twins = nulls.null_stores([model], corpus.sts()) if with_nulls else None
    layers = acts.n_layers * (2 if twins else 1)
    print(f"\n{model} on the default STS corpus ({acts.words.shape[0]} words, "
          f"{acts.n_layers} layers, controls {controls_for(acts)}), "
          f"{blas_threads()} BLAS thread(s), load average {os.getloadavg()[0]:.1f}:")
    with threadpool_limits(limits=blas_threads(), user_api="blas"):
        wall, cpu = neighbour_pass(acts)
    print(f"  neighbour search alone, every layer: {wall:6.1f} s ({wall / acts.n_layers:.2f} "
          f"s/layer), CPU {cpu:6.1f} s ({cpu / acts.n_layers:.2f} s/layer)")
    c0 = time.process_time()
    result, wall, _ = timed(context_measures.analyse, {model: acts}, seed=seed,
                            authors=False, null_stores=twins)
    cpu = time.process_time() - c0
    rows = len(result.tables["per_layer"])
    what = " and its untrained twin's," if twins else ","
    print(f"  analyse (every layer{what} both presets and controls, {rows} per-layer rows, "
          f"{len(result.claims)} claims): {wall:6.1f} s ({wall / layers:.2f} s/layer), "
          f"CPU {cpu:6.1f} s ({cpu / layers:.2f} s/layer); load average "
          f"{os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--queries", default="5000", help="query rows for the kNN, or 'all'")
    parser.add_argument("--block-sizes", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="smollm2-135m",
                        help="model for the real-corpus timing, or 'none'")
    parser.add_argument("--nulls", action="store_true",
                        help="the real-corpus pass also on the model's untrained twin")
    args = parser.parse_args()

    threads = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print(f"cpus visible: {os.cpu_count()}, load average: {os.getloadavg()}, env: {threads}")
    X, words = synthetic_layer(args.rows, args.width, args.seed)
    print(
        f"layer: {X.shape[0]} rows x {X.shape[1]} ({X.dtype}), "
        f"{words['sentence_id'].nunique()} sentences, {words['text'].nunique()} word types"
    )

    n_q = args.rows if args.queries == "all" else min(int(args.queries), args.rows)
    queries = np.sort(np.random.default_rng(args.seed).choice(args.rows, n_q, replace=False))
    print(f"\nnearest_neighbours, k={args.k}, {n_q} query rows against all {args.rows}:")
    for block in args.block_sizes:
        _, seconds, peak = timed(
            tokens.nearest_neighbours,
            X,
            args.k,
            block_size=block,
            queries=queries,
            trace=True,
        )
        full = seconds * args.rows / n_q
        gram = block * args.rows * 4 / 2**20
        print(
            f"  block_size={block:5d}: {seconds:7.2f} s ({1e3 * seconds / n_q:.2f} ms/query), "
            f"all rows ~{full:7.1f} s; peak traced {peak:7.1f} MiB "
            f"(unit rows {X.nbytes / 2**20:.0f} MiB + Gram block {gram:.0f} MiB)"
        )

    print("\nper-layer measures (time untraced; peak memory from a second, traced run):")
    for preset in ("ethayarajh2019", "corrected"):
        row, seconds, _ = timed(contextual.context_measures, X, words, preset)
        _, _, peak = timed(contextual.context_measures, X, words, preset, trace=True)
        print(
            f"  context_measures[{preset}]: {seconds:6.2f} s, peak traced {peak:6.1f} MiB "
            f"({row['n_words']} words, {row['n_sentences']} sentences; "
            f"selfsim {row['selfsim']:.3f}, adj {row['selfsim_adj']:.3f}, "
            f"intrasim adj {row['intrasim_adj']:.3f}, mev adj {row['mev_adj']:.3f})"
        )
    for name, fn in [
        ("token_measures", tokens.token_measures),
        ("static_embeddings", static.static_embeddings),
    ]:
        _, seconds, _ = timed(fn, X, words)
        _, _, peak = timed(fn, X, words, trace=True)
        print(f"  {name}: {seconds:6.2f} s, peak traced {peak:6.1f} MiB")
    if args.model != "none":
        real_model(args.model, args.seed, args.nulls)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak RSS: {maxrss:.0f} MiB")


if __name__ == "__main__":
    main()
