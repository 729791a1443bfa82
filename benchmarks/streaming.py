"""Memory and time of the corpus-level measures on a layer in memory and streamed from disk.

A synthetic anisotropic layer (a shared direction, a part per word and per sentence, noise) of
``--rows`` word occurrences x ``--width`` dimensions is written as a float16 ``.npy`` file, with
Zipf-distributed words and sentences of ``--length`` words. Each measure family runs twice:

* **memory**: the layer is loaded (``Store.layer(i)``: float32) and normalised once
  (``UnitRows.of``), as the chapters do;
* **streamed**: the memory map is read ``--chunk-rows`` rows at a time
  (``UnitRows.stream``; ``linear_cka(chunk_rows=...)``).

It prints wall seconds and the peak of the arrays allocated (``tracemalloc``, which numpy
reports to; pages of the memory map are the operating system's file cache and not counted),
and checks that both give the same numbers. The families: ``context_tables`` (SelfSim,
IntraSim over every sentence, MEV, both baselines; the ``corrected`` preset),
``cross_sentence_replicates`` (200 sentence-bootstrap replicates of the exact baseline), and
linear CKA, plain and debiased, between the layer and a second one.

Usage::

    python benchmarks/streaming.py                        # 200,000 x 768 (a 307 MB layer)
    python benchmarks/streaming.py --rows 20000 --width 64  # a quick check
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.measures import baselines, similarity
from lmgeometry.measures import contextual as ctx
from lmgeometry.measures.unit_rows import UnitRows


def synthetic_layer(folder: Path, rows: int, width: int, length: int, seed: int = 0
                    ) -> tuple[Path, Path, pd.DataFrame]:
    """Two float16 layers on disk (the second a noisy linear map of the first) and the words."""
    rng = np.random.default_rng(seed)
    vocab, n_sent = max(rows // 20, 10), rows // length
    word = (rng.zipf(1.3, size=rows) - 1) % vocab
    sentence = np.minimum(np.arange(rows) // length, n_sent - 1)
    word_part = rng.normal(size=(vocab, width)).astype(np.float32)
    sent_part = rng.normal(size=(n_sent, width)).astype(np.float32)
    mix = rng.normal(size=(width, width)).astype(np.float32) / np.sqrt(width)
    first, second = folder / "layer_a.npy", folder / "layer_b.npy"
    a = np.lib.format.open_memmap(first, mode="w+", dtype=np.float16, shape=(rows, width))
    b = np.lib.format.open_memmap(second, mode="w+", dtype=np.float16, shape=(rows, width))
    shared = 3.0 * rng.normal(size=width).astype(np.float32)
    for start in range(0, rows, 65536):
        part = slice(start, min(start + 65536, rows))
        x = (shared + word_part[word[part]] + sent_part[sentence[part]]
             + rng.normal(size=(part.stop - start, width)).astype(np.float32))
        a[part] = x
        b[part] = x @ mix + rng.normal(size=x.shape).astype(np.float32)
    a.flush()
    b.flush()
    words = pd.DataFrame({"sentence_id": sentence, "text": [f"w{w}" for w in word]})
    return first, second, words


def measured(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall seconds and peak MiB of arrays allocated while ``fn`` ran."""
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, wall, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--length", type=int, default=20, help="words per sentence")
    parser.add_argument("--chunk-rows", type=int, default=similarity.CHUNK_ROWS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        first, second, words = synthetic_layer(Path(tmp), args.rows, args.width, args.length)
        A, B = np.load(first, mmap_mode="r"), np.load(second, mmap_mode="r")
        sid = words["sentence_id"].to_numpy()
        n_s = int(sid.max()) + 1
        counts = np.random.default_rng(1).multinomial(n_s, np.full(n_s, 1 / n_s), size=200)
        print(f"layer: {args.rows:,} rows x {args.width} (float16 file {A.nbytes / 2**20:,.0f} "
              f"MiB; float64 unit rows {args.rows * args.width * 8 / 2**20:,.0f} MiB), "
              f"{n_s:,} sentences, chunks of {args.chunk_rows:,} rows\n")

        def loaded() -> UnitRows:
            return UnitRows.of(np.asarray(A, dtype=np.float32))

        def streamed() -> UnitRows:
            return UnitRows.stream(A, args.chunk_rows)

        families: dict[str, Callable[[Callable[[], UnitRows], int | None], Any]] = {
            "context_tables": lambda rows, _: ctx.context_tables(rows(), words,
                                                                 n_intra_sentences=None),
            "cross_sentence_replicates": lambda rows, _: baselines.cross_sentence_replicates(
                rows(), sid, counts),
            "linear_cka (plain, debiased)": lambda _, chunk: [
                similarity.linear_cka(*((A, B) if chunk else
                                        (np.asarray(A, np.float32), np.asarray(B, np.float32))),
                                      debiased=debiased, chunk_rows=chunk)
                for debiased in (False, True)],
        }
        print(f"{'measures':<30} {'memory s':>9} {'peak MiB':>9} {'streamed s':>11} "
              f"{'peak MiB':>9}  same values")
        for name, family in families.items():
            mem, t_mem, p_mem = measured(lambda f=family: f(loaded, None))
            low, t_low, p_low = measured(lambda f=family: f(streamed, args.chunk_rows))
            print(f"{name:<30} {t_mem:>9.1f} {p_mem:>9,.0f} {t_low:>11.1f} {p_low:>9,.0f}  "
                  f"{same(mem, low)}")


def same(a: Any, b: Any) -> str:
    """Largest relative difference between two results of one family."""
    if isinstance(a, ctx.ContextTables):
        pairs = [(a.baseline_cosine, b.baseline_cosine), (a.mev_baseline, b.mev_baseline)]
        for x, y in ((a.words, b.words), (a.sentences, b.sentences)):
            cols = x.select_dtypes("number").columns
            pairs += list(zip(x[cols].to_numpy().ravel(), y[cols].to_numpy().ravel(),
                              strict=True))
    else:
        pairs = list(zip(np.ravel(a), np.ravel(b), strict=True))
    x, y = np.array(pairs, dtype=np.float64).T
    ok = np.isfinite(x) & np.isfinite(y)
    worst = float(np.max(np.abs(x[ok] - y[ok]) / np.maximum(np.abs(x[ok]), 1e-12)))
    return f"yes (largest relative difference {worst:.1e})"


if __name__ == "__main__":
    main()
