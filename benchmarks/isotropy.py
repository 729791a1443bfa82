"""Time and peak memory of ``isotropy.embedding_statistics`` on a Gemma-sized matrix.

Gemma 3 270M's input embedding matrix is 262,144 x 640 float32 (671 MB). This script builds a
random matrix of that shape with the structure Biš et al. (2021) describe -- anisotropic
Gaussian rows shifted along a common direction -- and reports the wall time of
``embedding_statistics`` and its peak memory (numpy allocations traced by ``tracemalloc``, which
excludes the input matrix itself, and the process's peak resident set). Target: under a minute.
On a 2-core machine shared with other jobs it took 28-56 s wall (22-28 s CPU); most of it is
the float64 matrix products (W^T W, and W times 2 x 640 eigenvectors). ``spectral_views``
(the Fig. 1 spectra and projections, one W^T W) is timed as well. On the real Gemma matrix the
chapter's whole per-model analysis (``drift.embedding_drift``: loading, token counts,
Table 1, spectra, norms, rare-token cosines, word similarity) took 65 s wall on the same shared
machine, 4.7 GB peak resident memory.

Usage: ``python benchmarks/isotropy.py [--rows 262144] [--width 640] [--repeat 1]``.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np

from lmgeometry.measures import isotropy, spectra


def make_matrix(rows: int, width: int, seed: int = 0) -> np.ndarray:
    """Shifted anisotropic Gaussian rows in float32, generated in place chunk by chunk."""
    rng = np.random.default_rng(seed)
    W = np.empty((rows, width), dtype=np.float32)
    scales = np.geomspace(1.0, 0.05, width).astype(np.float32)
    shift = rng.standard_normal(width).astype(np.float32)
    shift *= 1.5 / np.linalg.norm(shift)
    for start in range(0, rows, 65536):
        blk = rng.standard_normal((min(65536, rows - start), width), dtype=np.float32)
        W[start : start + blk.shape[0]] = blk * scales + shift
    return W


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=262_144)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    W = make_matrix(args.rows, args.width)
    print(f"matrix {W.shape} {W.dtype}, {W.nbytes / 2**20:.0f} MiB")
    for _ in range(args.repeat):
        tracemalloc.start()
        t0, c0 = time.perf_counter(), time.process_time()
        stats = isotropy.embedding_statistics(W)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"embedding_statistics: {elapsed:.1f} s wall, {cpu:.1f} s CPU (all threads), "
            f"peak traced allocations {peak / 2**20:.0f} MiB"
        )
    t0 = time.perf_counter()
    spectra.spectral_views(W, rows=np.arange(min(2000, args.rows)))
    print(f"spectral_views (both spectra, 2 projections): {time.perf_counter() - t0:.1f} s wall")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS {rss:.0f} MiB (includes the input matrix)")
    for key in (
        "mean_norm",
        "mean_vector_norm",
        "mean_vector_ratio",
        "isotropy_raw",
        "isotropy_centered",
        "isotropy_top_pcs_removed",
        "isotropy_top_pcs_removed_original",
        "isoscore",
        "mean_cosine",
        "mean_cosine_centered",
        "top_eigvec_mean_cosine",
    ):
        print(f"  {key:36s} {stats[key]:.4g}")


if __name__ == "__main__":
    main()
