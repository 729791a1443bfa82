"""Word similarity: model scores of word pairs against human ratings, with paired bootstraps.

:func:`evaluate_similarity` correlates the cosine (or inner product) of two words' vectors with
human similarity ratings: Spearman's rho, the metric of Ethayarajh (2019, Table 1), and
Pearson's r, that of Biš et al. (2021, Tables 2-3). :func:`similarity_scores` gives the
per-pair cosines, and :func:`paired_correlations` the correlations of several embeddings on the
same items under one shared bootstrap resample of the items (the one paired bootstrap of the
word benchmarks).

References
----------
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Biš, D., Podkorytov, M., Liu, X. (2021). Too much in common: shifting of embeddings in
transformer language models and its implications. NAACL.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from lmgeometry.measures.word_lookup import OOV, Case, Vectors, _Lookup

__all__ = ["evaluate_similarity", "paired_correlations", "similarity_scores"]


def _correlations(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """(Spearman rho, Pearson r); NaN with fewer than 3 points or a constant input."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = float(stats.spearmanr(x, y).statistic)
        r = float(stats.pearsonr(x, y).statistic)
    return rho, r


def evaluate_similarity(
    vectors: Vectors,
    pairs: pd.DataFrame,
    score: Literal["cosine", "dot"] = "cosine",
    *,
    case: Case = "lower",
    oov: OOV = "skip",
) -> dict[str, float | int]:
    """Correlate the similarity of two words' vectors with human similarity ratings.

    For every pair (w1, w2) with human score h, the model score is
    ``cos(v1, v2) = v1 . v2 / (||v1|| ||v2||)`` (``score="cosine"``; 0 when a vector is zero) or
    ``v1 . v2`` (``score="dot"``, the inner product Biš et al. 2021 also report). The result is
    Spearman's rho (the metric of Ethayarajh 2019, Table 1) and Pearson's r (the metric of Biš et
    al. 2021, Tables 2-3, there x 100) between model and human scores, from ``scipy.stats``.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    pairs
        Frame with columns ``word1, word2, score`` (as ``data.load_word_similarity`` returns).
    score
        ``"cosine"`` or ``"dot"``.
    case
        ``"lower"`` looks up ``word.lower()`` (default); ``"exact"`` the word as written.
    oov
        ``"skip"``: score only pairs whose two words have vectors. ``"mean"``: replace a missing
        vector by the mean of all the embedding's vectors and score every pair (the Word
        Embeddings Benchmarks package; needs a mapping).

    Returns
    -------
    dict
        ``spearman``, ``pearson`` (NaN with fewer than 3 scored pairs or constant scores),
        ``n_pairs`` (pairs entering the correlations), ``n_total`` (pairs in the benchmark) and
        ``coverage`` (fraction of the benchmark's pairs whose two words both have vectors).
    """
    if score not in ("cosine", "dot"):
        raise ValueError(f"score must be 'cosine' or 'dot', not {score!r}")
    lk = _Lookup(vectors, case, oov)
    model_scores: list[float] = []
    human: list[float] = []
    covered = 0
    for w1, w2, h in zip(pairs["word1"], pairs["word2"], pairs["score"], strict=True):
        v1, v2 = lk.get(w1), lk.get(w2)
        if v1 is not None and v2 is not None:
            covered += 1
        elif oov == "skip":
            continue
        else:
            v1, v2 = lk.fill(w1), lk.fill(w2)
        assert v1 is not None and v2 is not None
        dot = float(v1 @ v2)
        if score == "cosine":
            denom = float(np.linalg.norm(v1) * np.linalg.norm(v2))
            dot = dot / denom if denom > 0 else 0.0
        model_scores.append(dot)
        human.append(float(h))
    rho, r = _correlations(model_scores, human)
    n_total = len(pairs)
    return {
        "spearman": rho,
        "pearson": r,
        "n_pairs": len(model_scores),
        "n_total": n_total,
        "coverage": covered / n_total if n_total else math.nan,
    }


def similarity_scores(vectors: Vectors, pairs: pd.DataFrame, *, case: Case = "lower"
                      ) -> np.ndarray:
    """The cosine of the two words' vectors of every pair; NaN where a word has no vector.

    The per-item model scores behind :func:`evaluate_similarity` (``score="cosine"``,
    ``oov="skip"``): ``cos(v1, v2)``, 0 when a vector is zero.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    pairs
        Frame with columns ``word1, word2``.
    case
        ``"lower"`` (default) or ``"exact"`` lookup.

    Returns
    -------
    ndarray of shape (len(pairs),)
    """
    lk = _Lookup(vectors, case, "skip")
    out = np.full(len(pairs), np.nan)
    for i, (w1, w2) in enumerate(zip(pairs["word1"], pairs["word2"], strict=True)):
        v1, v2 = lk.get(w1), lk.get(w2)
        if v1 is not None and v2 is not None:
            denom = float(np.linalg.norm(v1) * np.linalg.norm(v2))
            out[i] = float(v1 @ v2) / denom if denom > 0 else 0.0
    return out


def paired_correlations(
    human: ArrayLike,
    scores: ArrayLike,
    n_boot: int = 1000,
    rng: np.random.Generator | int | Any = None,
    method: Literal["pearson", "spearman"] = "pearson",
) -> np.ndarray:
    """Correlations of several model scores with one set of human ratings, and replicates.

    ``scores[j]`` scores the same items as ``human`` (the pairs of one benchmark under the
    embedding ``j``: PC1 vectors of each layer and the layer-0 vectors, as in Ethayarajh 2019,
    Table 1; or the rows of W after each post-processing of Biš et al. 2021). Row 0 holds each
    score's correlation with the human ratings on all items; rows 1 to ``n_boot`` the same on
    bootstrap resamples of the items (drawn with replacement in one call,
    ``rng.integers(0, n, size=(n_boot, n))``), one resample shared by every score, so that a
    difference between two scores gets a paired interval (the items' difficulty cancels).

    Pearson's r is :math:`\\sum_i (x_i - \\bar x)(h_i - \\bar h) / \\sqrt{\\sum_i (x_i - \\bar x)^2
    \\sum_i (h_i - \\bar h)^2}`; Spearman's rho is Pearson's r of the average ranks
    (``scipy.stats.rankdata``), recomputed within each resample, so ties are handled as
    ``scipy.stats.spearmanr`` does; the ranks of a resample come from its draw counts and one
    sort per column (:func:`_resampled_ranks`), so a resample costs O(n) per column. A
    constant column (or constant ratings) in a resample gives NaN. The computation runs in
    chunks of resamples, so memory stays bounded.

    Parameters
    ----------
    human : array_like, shape (n,)
    scores : array_like, shape (k, n)
        No NaN: drop the items an embedding does not cover first.
    n_boot : int
    rng : seed or Generator
    method : {"pearson", "spearman"}
        Pearson's r (Biš et al.'s metric) or Spearman's rho (Ethayarajh's).

    Returns
    -------
    ndarray, shape (1 + n_boot, k)
    """
    h = np.asarray(human, dtype=np.float64)
    S = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if S.ndim != 2 or S.shape[1] != h.size or h.size < 3:
        raise ValueError(f"scores must be (k, {h.size}) with at least 3 items, not {S.shape}")
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', not {method!r}")
    gen = np.random.default_rng(rng)
    idx = np.vstack([np.arange(h.size), gen.integers(0, h.size, size=(max(n_boot, 0), h.size))])
    if method == "spearman":
        return _resampled_spearman(h, S, idx)
    out = np.empty((len(idx), S.shape[0]))
    per_chunk = max(1, (1 << 21) // (h.size * (S.shape[0] + 1)))
    for start in range(0, len(idx), per_chunk):
        rows = idx[start:start + per_chunk]
        hh, ss = h[rows], S[:, rows]  # (b, n), (k, b, n)
        hh = hh - hh.mean(axis=-1, keepdims=True)
        ss = ss - ss.mean(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (ss * hh).sum(-1) / np.sqrt((ss * ss).sum(-1) * (hh * hh).sum(-1))
        out[start:start + len(rows)] = r.T
    return out


def _resampled_ranks(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Average rank of each item of ``x`` within every resample, from the resample's counts.

    An item drawn ``c_j`` times into a resample takes, in each copy, the average rank
    ``#{values below x_j} + (#{values equal to x_j} + 1) / 2`` counted over the resample, which
    is what ``scipy.stats.rankdata`` gives the resampled array; here it comes from one sort of
    ``x`` and cumulative sums of the counts (ties share their group's total).
    """
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    cs = counts[:, order]
    group = np.add.reduceat(cs, starts, axis=1)  # (B, groups): copies of each tied value
    below = np.cumsum(group, axis=1) - group
    ranks_sorted = np.repeat(below + (group + 1) / 2.0, np.diff(np.r_[starts, len(xs)]), axis=1)
    out = np.empty_like(ranks_sorted)
    out[:, order] = ranks_sorted
    return out


def _resampled_spearman(h: np.ndarray, S: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Spearman rho of each row of ``S`` with ``h`` on every resample ``idx`` (rows of item
    indices): the Pearson correlation of average ranks, weighted by how often each item was
    drawn, without materialising the resampled arrays."""
    n = h.size
    out = np.empty((len(idx), S.shape[0]))
    per_chunk = max(1, (1 << 22) // n)
    for start in range(0, len(idx), per_chunk):
        rows = idx[start:start + per_chunk]
        b = len(rows)
        counts = np.bincount((rows + n * np.arange(b)[:, None]).ravel(),
                             minlength=b * n).reshape(b, n).astype(np.float64)
        centre = (n + 1) / 2.0  # the mean rank of n values, ties or not
        rh = _resampled_ranks(h, counts) - centre
        vh = (counts * rh * rh).sum(axis=1)
        for e in range(S.shape[0]):
            rs = _resampled_ranks(S[e], counts) - centre
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + b, e] = ((counts * rs * rh).sum(axis=1)
                                           / np.sqrt((counts * rs * rs).sum(axis=1) * vh))
    return out
