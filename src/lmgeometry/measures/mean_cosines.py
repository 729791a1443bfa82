"""Mean cosines of the rows of an embedding matrix from sums of unit rows.

The mean cosine over pairs of distinct rows is (||sum_i u_i||^2 - N) / (N (N - 1)) for the N
unit rows u_i (Biš, Podkorytov and Liu 2021, *Too Much in Common*, Appendix A, eqs. 12-14), so
every mean cosine within or between groups of rows follows from their sums:

* :func:`mean_cosine` -- exact, or over sampled pairs (Ethayarajh 2019's estimator);
* :func:`unit_row_sums`, :func:`mean_cosine_of_sums`, :func:`cross_cosines` -- sums of unit rows
  by group in one streaming pass, with Poisson-bootstrap replicates: the mean cosine of W and
  the rare-token cosines of their Fig. 3 with intervals over tokens;
* :func:`rare_token_cosines` -- the mean cosine between the rarest tokens and
  frequency-ordered vocabulary bins (their Fig. 3);
* :func:`rarity_alignment` -- whether the rarest or the most frequent tokens lie furthest
  along the common direction (rank correlation with frequency).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import CHUNK_ROWS
from lmgeometry.measures.spectra import _as_matrix, _chunks, _Moments, norm_distribution
from lmgeometry.measures.stats import RngLike, poisson_weights

__all__ = [
    "cross_cosines",
    "mean_cosine",
    "mean_cosine_of_sums",
    "rare_token_cosines",
    "rarity_alignment",
    "unit_row_sums",
]


@float_arrays("X")
def mean_cosine(
    X: npt.ArrayLike,
    n_pairs: int | None = None,
    rng: np.random.Generator | int | None = None,
    *,
    chunk_rows: int = CHUNK_ROWS,
) -> float:
    """Mean cosine similarity between pairs of distinct rows of X.

    Exact (``n_pairs=None``): with x_hat_i = x_i / ||x_i|| over the N non-zero rows,
    mean_{i != j} x_hat_i . x_hat_j = (||sum_i x_hat_i||^2 - N) / (N (N - 1)),
    the identity of Biš et al. (2021), Appendix A, eqs. 12-14 (Gao et al.'s cosine regulariser
    is the squared norm of the mean unit vector). This is O(N d), so it is exact even for a
    262k-token vocabulary.

    Sampled (``n_pairs`` given): the average over ``n_pairs`` pairs (i, j), i != j, drawn
    uniformly with replacement -- the estimator used when cosines of arbitrary pairs are
    averaged, e.g. Ethayarajh (2019). Unbiased for the exact value.

    All-zero rows have no direction and are left out in both modes.

    Parameters
    ----------
    X : array_like, shape (n, d)
    n_pairs : int, optional
        Sample this many pairs instead of the exact computation.
    rng : numpy.random.Generator or int, optional
        Random generator or seed for the sampled mode.
    chunk_rows : int

    Returns
    -------
    float
    """
    X = _as_matrix(X)
    if n_pairs is None:
        moments = _Moments(X, chunk_rows)
        N = moments.n_nonzero
        if N < 2:
            raise ValueError("need at least two non-zero rows")
        return float((moments.unit_sum @ moments.unit_sum - N) / (N * (N - 1)))
    norms = np.sqrt(
        np.concatenate(
            [
                np.einsum("ij,ij->i", b, b)
                for b in (
                    np.asarray(X[s : s + chunk_rows], dtype=np.float64)
                    for s in _chunks(X.shape[0], chunk_rows)
                )
            ]
        )
    )
    keep = np.flatnonzero(norms > 0)
    N = keep.size
    if N < 2:
        raise ValueError("need at least two non-zero rows")
    gen = np.random.default_rng(rng)
    i = gen.integers(N, size=n_pairs)
    j = gen.integers(N - 1, size=n_pairs)
    j += j >= i
    total = 0.0
    for s in range(0, n_pairs, chunk_rows):
        a, b = keep[i[s : s + chunk_rows]], keep[j[s : s + chunk_rows]]
        xa = np.asarray(X[a], dtype=np.float64)
        xb = np.asarray(X[b], dtype=np.float64)
        total += float((np.einsum("ij,ij->i", xa, xb) / (norms[a] * norms[b])).sum())
    return total / n_pairs


def rare_token_cosines(
    W: npt.ArrayLike,
    ranks: npt.ArrayLike,
    n_bins: int = 30,
    *,
    rare: npt.ArrayLike | None = None,
    n_rare: int = 1000,
    bin_size: int | None = None,
) -> pd.DataFrame:
    """Mean cosine between the rarest tokens and frequency-ordered vocabulary bins (Fig. 3).

    Biš et al. (2021, Sec. 4.2, Fig. 3) average the cosine similarity between BERT's 994
    ``[unused]`` tokens (never seen in training) and every token in bins of 1000 vocabulary
    indices, and find it rises as frequency falls (0.27 for indices 2000-2999, 0.63 for
    28500-29500). Here the tokens with ``ranks >= 0`` are sorted by rank (0 = most frequent),
    split into ``n_bins`` contiguous bins of (almost) equal size, and for each bin B

    mean_cos(R, B) = (sum_{r in R} r_hat . sum_{b in B} b_hat - |R & B|) / (|R| |B| - |R & B|),

    the mean of r_hat . b_hat over pairs of distinct tokens r in R, b in B (self-pairs, when a
    rare token falls in B, are excluded). All-zero rows are ignored.

    Parameters
    ----------
    W : array_like, shape (V, d)
        Embedding matrix.
    ranks : array_like of int, shape (V,)
        Frequency rank of every token (0 = most frequent; ties in any order); negative values
        leave a token out (e.g. never counted, or special tokens). The counting happens
        elsewhere; pass ``np.arange(V)`` to bin by vocabulary index as the paper does for BERT.
    n_bins : int
        Number of bins.
    rare : array_like of int, optional
        Token ids of the reference set R (e.g. BERT's ``[unused]`` ids). Default: the
        ``n_rare`` tokens with the largest rank.
    n_rare : int
        Size of the default R.
    bin_size : int, optional
        Instead of ``n_bins`` equal bins, consecutive bins of exactly ``bin_size`` tokens in
        rank order (the last may be smaller); with ``ranks = np.arange(V)`` these are the
        paper's bins of 1000 vocabulary ids.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin``, ``rank_start``, ``rank_end`` (inclusive), ``n_tokens``,
        ``mean_cosine``.
    """
    W = _as_matrix(W)
    ranks = np.asarray(ranks)
    if ranks.shape != (W.shape[0],):
        raise ValueError(f"ranks must have shape ({W.shape[0]},), got {ranks.shape}")
    norms = norm_distribution(W)
    valid = np.flatnonzero((ranks >= 0) & (norms > 0))
    order = valid[np.argsort(ranks[valid], kind="stable")]
    if rare is None:
        rare_ids = order[-n_rare:]
    else:
        rare_ids = np.asarray(rare, dtype=np.int64)
        rare_ids = rare_ids[norms[rare_ids] > 0]
    if rare_ids.size == 0:
        raise ValueError("no non-zero rare tokens")
    unit = lambda ids: np.asarray(W[ids], dtype=np.float64) / norms[ids, None]  # noqa: E731
    rare_sum = unit(rare_ids).sum(axis=0)
    rare_set = set(rare_ids.tolist())
    rows = []
    if bin_size is not None:
        if bin_size < 1:
            raise ValueError("bin_size must be positive")
        bins = [order[i : i + bin_size] for i in range(0, order.size, bin_size)]
    else:
        bins = np.array_split(order, n_bins)
    for k, ids in enumerate(bins):
        if ids.size == 0:
            continue
        overlap = sum(1 for t in ids.tolist() if t in rare_set)
        pairs = rare_ids.size * ids.size - overlap
        value = (rare_sum @ unit(ids).sum(axis=0) - overlap) / pairs if pairs else float("nan")
        rows.append(
            {
                "bin": k,
                "rank_start": int(ranks[ids[0]]),
                "rank_end": int(ranks[ids[-1]]),
                "n_tokens": int(ids.size),
                "mean_cosine": float(value),
            }
        )
    return pd.DataFrame(rows)


def unit_row_sums(
    W: npt.ArrayLike,
    groups: npt.ArrayLike,
    n_groups: int,
    *,
    shift: npt.ArrayLike | None = None,
    n_boot: int = 0,
    rng: RngLike = None,
    chunk_rows: int = CHUNK_ROWS,
) -> tuple[np.ndarray, np.ndarray]:
    """Sums of the unit rows of W within groups, for W itself and for bootstrap replicates.

    With u_i = (w_i - shift) / ||w_i - shift|| (``shift`` default 0) and groups g_i,

    S_g = sum_{i: g_i = g} k_i u_i,   n_g = sum_{i: g_i = g} k_i,

    for k_i = 1 (the sample, index 0 of the results) and for ``n_boot`` Poisson-bootstrap
    replicates, k_i ~ Poisson(1) independently (:func:`stats.poisson_weights`), drawn chunk by
    chunk in one streaming pass. Every mean cosine within or between groups is a function of
    these sums (:func:`mean_cosine_of_sums`, :func:`cross_cosines`; Biš et al. 2021, App. A),
    so one pass gives the statistics of their Table 1 and Fig. 3 with intervals over tokens.
    Rows with ``g_i < 0`` and all-zero rows are left out.

    Parameters
    ----------
    W : array_like, shape (n, d)
    groups : array_like of int, shape (n,)
    n_groups : int
    shift : array_like, shape (d,), optional
        Subtract it before normalising (the mean row: the centred matrix).
    n_boot : int
    rng : seed or Generator
    chunk_rows : int

    Returns
    -------
    sums : ndarray, shape (1 + n_boot, n_groups, d), float64
    counts : ndarray, shape (1 + n_boot, n_groups), float64
    """
    W = _as_matrix(W)
    g_all = np.asarray(groups, dtype=np.int64)
    if g_all.shape != (W.shape[0],) or g_all.max(initial=-1) >= n_groups:
        raise ValueError(f"groups must hold one id below {n_groups} per row of W")
    off = np.zeros(W.shape[1]) if shift is None else np.asarray(shift, dtype=np.float64)
    gen = np.random.default_rng(rng)
    sums = np.zeros((1 + n_boot, n_groups, W.shape[1]))
    counts = np.zeros((1 + n_boot, n_groups))
    for start in _chunks(W.shape[0], chunk_rows):
        blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64) - off
        norms = np.sqrt(np.einsum("ij,ij->i", blk, blk))
        g = g_all[start : start + len(blk)]
        keep = np.flatnonzero((g >= 0) & (norms > 0))
        keep = keep[np.argsort(g[keep], kind="stable")]
        U = (blk[keep] / norms[keep, None]).astype(np.float32)
        K = np.vstack([np.ones((1, keep.size), np.float32),
                       poisson_weights(n_boot, keep.size, gen)])
        bounds = np.searchsorted(g[keep], np.arange(n_groups + 1))
        for gid in np.flatnonzero(np.diff(bounds)):
            a, b = bounds[gid], bounds[gid + 1]
            sums[:, gid] += K[:, a:b] @ U[a:b]
            counts[:, gid] += K[:, a:b].sum(axis=1)
    return sums, counts


def mean_cosine_of_sums(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean cosine over pairs of distinct items from their unit-vector sum S and count n.

    (||S||^2 - n) / (n (n - 1))  (Biš et al. 2021, App. A), over the last axis of ``sums``;
    a replicate's duplicated rows count as distinct items. NaN for fewer than two items.
    """
    S = np.asarray(sums, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (np.einsum("...d,...d->...", S, S) - n) / (n * (n - 1))
    return np.where(n > 1, out, np.nan)


def cross_cosines(sums: np.ndarray, counts: np.ndarray, reference: int) -> np.ndarray:
    """Mean cosine between the items of group ``reference`` and those of every group.

    (S_g . S_R) / (n_g n_R) for disjoint groups g and R (the seed's rare-token cosine of a
    bin, Fig. 3); ``sums``/``counts`` as :func:`unit_row_sums` returns them. The reference
    group's own entry is its mean cosine with itself including self-pairs; ignore it.

    Returns
    -------
    ndarray, shape ``counts.shape``
    """
    S = np.asarray(sums, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    dots = np.einsum("...gd,...d->...g", S, S[..., reference, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return dots / (n * n[..., reference : reference + 1])


def rarity_alignment(W: npt.ArrayLike, counts: npt.ArrayLike, *,
                     rows: npt.ArrayLike | None = None, n_boot: int = 0, rng: RngLike = 0
                     ) -> tuple[float, np.ndarray]:
    """Spearman's rho between each row's position along W's common direction and its token's
    log frequency.

    With unit rows :math:`u_i = w_i / \\lVert w_i \\rVert` and the common direction
    :math:`m = \\sum_i u_i / \\lVert \\sum_i u_i \\rVert` (over the kept rows),

    .. math:: \\rho = \\rho_S\\left(u_i^\\top m,\\ \\log(1 + c_i)\\right)

    for the token counts :math:`c_i`. It tells two accounts of a common direction apart.
    Negative: the rarest tokens lie furthest along it, as Biš et al. (2021, Sec. 4)'s "common
    enemies" predict (the softmax gradient pushes every non-target output row the same way, and
    a rare token, seldom the target, is pushed furthest). Positive: the most frequent tokens
    lie furthest, a frequency direction (what an output layer without a bias needs to score the
    unigram prior). Unit rows make it blind to row norms; it is unchanged by a rotation of W and
    by any increasing transform of the counts.

    Parameters
    ----------
    W : array_like, shape (n, d)
        One row per token.
    counts : array_like, shape (n,)
        Each token's count in the training text (0 for an unseen one).
    rows : boolean array_like, shape (n,), optional
        The rows kept (e.g. no special tokens); default all.
    n_boot : int
        Bootstrap replicates (rows resampled with replacement, the direction kept).
    rng : int or Generator

    Returns
    -------
    rho : float
    replicates : ndarray, shape (n_boot,)

    Examples
    --------
    >>> W = np.array([[1.0, 2.0], [1.0, -2.0], [1.0, 0.5], [1.0, -0.5]])  # m: the first axis
    >>> round(rarity_alignment(W, [100, 90, 1, 0])[0], 2)  # the rare two lie furthest along m
    -0.89
    """
    from scipy.stats import rankdata

    W = np.asarray(W, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if W.ndim != 2 or counts.shape != (len(W),):
        raise ValueError(f"W must be 2-D with one count per row, not {W.shape} and "
                         f"{counts.shape}")
    keep = np.ones(len(W), bool) if rows is None else np.asarray(rows, dtype=bool)
    U = W[keep] / np.linalg.norm(W[keep], axis=1, keepdims=True)
    if len(U) < 3 or not np.isfinite(U).all():
        raise ValueError("rarity_alignment needs at least 3 kept rows, none of them zero")
    direction = U.sum(axis=0)
    x, y = U @ (direction / np.linalg.norm(direction)), np.log1p(counts[keep])

    def rho(index: np.ndarray) -> float:
        return float(np.corrcoef(rankdata(x[index]), rankdata(y[index]))[0, 1])

    gen = np.random.default_rng(rng)
    every = np.arange(len(U))
    return rho(every), np.array([rho(gen.integers(len(U), size=len(U)))
                                 for _ in range(n_boot)])
