"""Word similarity for the "Drift and centering" chapter (seed 004's Tables 2-3): single-token
benchmark pairs scored on W under each post-processing, with paired bootstrap intervals of each
post-processing's change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from lmgeometry.chapters.drift.matrix import VARIANTS, variant_rows
from lmgeometry.chapters.drift.tokens import single_token_ids
from lmgeometry.io.benchmarks import load_word_similarity
from lmgeometry.measures import reference_tables
from lmgeometry.measures.stats import percentile_interval
from lmgeometry.measures.word_similarity import paired_correlations

__all__ = [
    "WORDSIM_BENCHMARKS",
    "word_similarity",
]


#: Benchmarks of Biš et al. (2021), Table 3, in its column order.
WORDSIM_BENCHMARKS: tuple[str, ...] = tuple(reference_tables.BIS2021_TABLE3_COLUMNS.values())


#: Word-similarity benchmarks need this many single-token pairs to enter the averages.
MIN_PAIRS = 10


def word_similarity(
    W: npt.ArrayLike,
    tokenizer: Any,
    benchmarks: Sequence[str] = WORDSIM_BENCHMARKS,
    variants: Sequence[str] = VARIANTS,
    frames: Mapping[str, pd.DataFrame] | None = None,
    *,
    n_boot: int = 0,
    rng: np.random.Generator | int | None = None,
    min_pairs: int = MIN_PAIRS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Word similarity of single-token words from rows of W (Biš et al. 2021, Tables 2-3).

    For every benchmark pair whose two (lower-cased) words are single tokens after a space
    (:func:`single_token_ids`), the model score is the cosine or the inner product of the two
    rows of the (post-processed, :func:`variant_rows`) matrix; Pearson's r (x 100, the paper's
    number) and Spearman's rho with the human scores. The pair set is the same for every
    variant, and so is every bootstrap resample of it (:func:`paired_correlations`).

    The change a post-processing makes is the paper's Table 2 number: Pearson r x 100 of the
    variant minus that of W, averaged over the benchmarks with at least ``min_pairs`` pairs;
    its interval comes from resampling each benchmark's pairs (independently per benchmark,
    jointly for the variants).

    Returns
    -------
    per_benchmark : pandas.DataFrame
        One row per (benchmark, variant, score): ``benchmark``, ``variant``, ``score``
        (``cosine``/``dot``), ``pearson_x100``, ``spearman``, ``n_pairs``, ``n_total``,
        ``coverage``.
    change : pandas.DataFrame
        One row per (variant, score), variants other than ``original``: ``pearson_x100`` (the
        average), ``original_pearson_x100``, ``change_x100``, ``change_x100_lo``,
        ``change_x100_hi``, ``n_benchmarks``; on the inner-product rows also
        ``over_cosine_x100`` (with ``_lo``, ``_hi``): their change minus the cosine row's, from
        the same resamples (the paper's "gains are more pronounced when inner-product is used",
        Sec. 5.3); NaN on the cosine rows.
    """
    frames = {b: load_word_similarity(b) for b in benchmarks} if frames is None else frames
    gen = np.random.default_rng(rng)
    words = {str(w).lower() for b in benchmarks for c in ("word1", "word2") for w in frames[b][c]}
    ids = single_token_ids(tokenizer, sorted(words))
    rows = np.array(sorted(set(ids.values())), dtype=np.int64)
    position = {r: i for i, r in enumerate(rows)}
    M = {v: variant_rows(W, rows, v) for v in variants}
    keys = [(v, s) for v in variants for s in ("cosine", "dot")]
    out, reps = [], []
    for b in benchmarks:
        f = frames[b]
        w1, w2 = (f[c].astype(str).str.lower().map(ids) for c in ("word1", "word2"))
        ok = (w1.notna() & w2.notna()).to_numpy()
        i1 = np.array([position[int(r)] for r in w1[ok]], dtype=np.int64)
        i2 = np.array([position[int(r)] for r in w2[ok]], dtype=np.int64)
        human = f["score"].to_numpy(dtype=np.float64)[ok]
        scores = np.array([_pair_scores(M[v][i1], M[v][i2], s) for v, s in keys])
        r = (paired_correlations(human, scores, n_boot, gen) if ok.sum() >= 3
             else np.full((1 + n_boot, len(keys)), np.nan))
        for j, (v, s) in enumerate(keys):
            rho = float(stats.spearmanr(scores[j], human).statistic) if ok.sum() >= 3 \
                else math.nan
            out.append({"benchmark": b, "variant": v, "score": s, "pearson_x100": 100 * r[0, j],
                        "spearman": rho, "n_pairs": int(ok.sum()), "n_total": len(f),
                        "coverage": float(ok.mean()) if len(f) else math.nan})
        if ok.sum() >= min_pairs:
            reps.append(100 * r)
    return pd.DataFrame(out), _wordsim_change(np.array(reps), keys)


def _pair_scores(a: np.ndarray, b: np.ndarray, score: str) -> np.ndarray:
    """Inner products (``dot``) or cosines of matching rows of ``a`` and ``b``."""
    dot = np.einsum("ij,ij->i", a, b)
    if score == "dot":
        return dot
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.divide(dot, denom, out=np.zeros_like(dot), where=denom > 0)


def _wordsim_change(reps: np.ndarray, keys: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Average over benchmarks of each variant's Pearson r x 100 minus the original's, and on
    the inner-product rows that change minus the cosine's (``reps``: benchmarks x (1 +
    replicates) x keys, the point first)."""
    if reps.size == 0:
        return pd.DataFrame()
    mean = reps.mean(axis=0)  # (1 + replicates) x keys
    change = {(v, s): mean[:, keys.index((v, s))] - mean[:, keys.index(("original", s))]
              for v, s in keys if v != "original"}
    rows = []
    for (v, s), c in change.items():
        row = {"variant": v, "score": s, "pearson_x100": mean[0, keys.index((v, s))],
               "original_pearson_x100": mean[0, keys.index(("original", s))]}
        row.update(_with_interval("change_x100", c))
        row["n_benchmarks"] = len(reps)
        gap = c - change[(v, "cosine")] if s == "dot" else np.full_like(c, math.nan)
        row.update(_with_interval("over_cosine_x100", gap))
        rows.append(row)
    return pd.DataFrame(rows)


def _with_interval(name: str, values: np.ndarray) -> dict[str, float]:
    """``name``, ``name_lo``, ``name_hi`` from a point (``values[0]``) and its replicates."""
    lo, hi = (percentile_interval(values[1:], values[0]) if len(values) > 1
              else (math.nan, math.nan))
    return {name: float(values[0]), f"{name}_lo": lo, f"{name}_hi": hi}
