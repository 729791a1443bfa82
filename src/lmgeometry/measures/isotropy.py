"""Isotropy of embedding matrices: Biš et al. (2021), "Too Much in Common".

Biš, Podkorytov and Liu (2021), *Too Much in Common: Shifting of Embeddings in Transformer
Language Models and its Implications* (NAACL 2021; code ``danielbis/tooMuchInCommon``) argue
that the token embeddings of BERT, GPT-2 and RoBERTa do not occupy a narrow cone: they are
shifted along a common direction, and removing the mean restores an almost isotropic shape.
This module computes their measures on a ``(vocab, width)`` embedding matrix ``W``:

* :func:`isotropy_partition` -- the partition-function isotropy I(W) (their eqs. 7-8, after
  Arora et al. 2016 and Mu & Viswanath 2018), evaluated in log space so it never overflows;
* :func:`center`, :func:`scaled_center`, :func:`remove_top_pcs` -- the three post-processing
  steps (mean removal, their "scaled centering" of Sec. 5.2, and "all-but-the-top" in both the
  Biš et al. eq. 9-11 form and Mu & Viswanath's original form);
* :func:`isoscore` -- IsoScore (Rudman et al. 2022), our implementation and the ``IsoScore``
  package's;
* :func:`mean_cosine`, :func:`embedding_statistics` -- the numbers of their Table 1, with
  Poisson-bootstrap intervals over the rows (tokens) when asked;
* :func:`unit_row_sums`, :func:`mean_cosine_of_sums`, :func:`cross_cosines` -- sums of unit rows
  by group in one streaming pass, with bootstrap replicates: the mean cosine of W and the
  rare-token cosines of their Fig. 3 with intervals;
* :func:`shift_cosine_replicates` -- :func:`shift_cosine` under a bootstrap over sentences;
* helpers for the figures: :func:`singular_values`, :func:`project_2d`,
  :func:`spectral_views` (Fig. 1), :func:`toy_sphere_shift` (Fig. 2),
  :func:`rare_token_cosines` (Fig. 3),
  :func:`norm_distribution` (Figs. 5-6), and :func:`shift_cosine` (how much of a set of
  vectors' mean cosine their mean vector alone accounts for).

``W`` comes from :func:`lmgeometry.io.models.input_embeddings`.

Everything that touches all rows streams over row chunks in float64, so a Gemma-sized
262,144 x 640 float32 matrix is processed without any full-size copy (see
``benchmarks/isotropy.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lmgeometry.measures.similarity import CHUNK_ROWS, as_rows, column_mean
from lmgeometry.measures.stats import RngLike, percentile_interval, poisson_weights

__all__ = [
    "BIS2021_TABLE1",
    "center",
    "CHUNK_ROWS",
    "cross_cosines",
    "embedding_statistics",
    "isoscore",
    "isotropy_partition",
    "log_partition_function",
    "mean_cosine",
    "mean_cosine_of_sums",
    "n_top_pcs",
    "norm_distribution",
    "project_2d",
    "rare_token_cosines",
    "remove_top_pcs",
    "scaled_center",
    "shift_cosine",
    "shift_cosine_replicates",
    "Signs",
    "singular_values",
    "spectral_views",
    "toy_sphere_shift",
    "unit_row_sums",
]


def shift_cosine(X: npt.ArrayLike) -> dict[str, float]:
    """Mean pairwise cosine of the rows of X beside what their mean vector alone predicts.

    For the N non-zero rows x_i with unit vectors u_i = x_i / ||x_i||, mean mu = avg_i x_i and
    mean squared norm m2 = avg_i ||x_i||^2:

    * ``mean_cosine`` c = avg_{i != j} u_i . u_j = (||sum_i u_i||^2 - N) / (N (N - 1))
      (Biš et al. 2021, Appendix A, eqs. 12-14; :func:`mean_cosine`);
    * ``shift_share`` s = ||mu||^2 / m2, the share of the raw second moment carried by the mean
      (for rows mu + e_i with zero-mean noise of covariance Sigma it tends to
      ||mu||^2 / (||mu||^2 + tr Sigma));
    * ``shift_prediction`` c_mu = (N s - 1) / (N - 1). This is exactly the mean inner product of
      distinct rows in units of m2, avg_{i != j} x_i . x_j / m2 =
      (||sum_i x_i||^2 - sum_i ||x_i||^2) / (N (N - 1) m2), so it equals c when every row has
      the same norm: it is the mean cosine that the layer's mean vector predicts for a cloud
      of equal norms;
    * ``shift_residual`` c - c_mu.

    Why not the mean cosine after centring: centred rows sum to zero, so their mean pairwise
    cosine is about 0 for any cloud whose rows have similar norms, whatever its shape, and "it
    vanishes after centring" would be true by construction. The residual is not zero by
    construction: c and c_mu part when the norms differ, most when a few rows with very large
    norms dominate mu and m2 (as the first token of a decoder, see :func:`first_word_mask`);
    then mu is mostly those rows' direction, and subtracting it (centring) does not remove
    what the directions of the other rows have in common. The shape of the spread left after
    centring is measured separately (IsoScore, :func:`isotropy.isoscore`).

    Returns
    -------
    dict
        ``n_rows`` (N), ``mean_cosine``, ``shift_share``, ``shift_prediction``,
        ``shift_residual`` (floats).
    """
    X = np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    X = X[sq > 0]
    sq = sq[sq > 0]
    n = X.shape[0]
    if n < 2:
        raise ValueError("need at least two non-zero rows")
    mu = X.mean(axis=0)
    share = float(mu @ mu / sq.mean())
    prediction = (n * share - 1) / (n - 1)
    c = mean_cosine(X)
    return {
        "n_rows": int(n),
        "mean_cosine": c,
        "shift_share": share,
        "shift_prediction": float(prediction),
        "shift_residual": float(c - prediction),
    }


def shift_cosine_replicates(X: npt.ArrayLike, groups: npt.ArrayLike, n_boot: int = 1000,
                            rng: RngLike = None) -> dict[str, np.ndarray]:
    """:func:`shift_cosine` on bootstrap resamples of whole groups of rows (e.g. sentences).

    Rows of one sentence share its context, so the sentences, not the rows, are resampled
    (a cluster bootstrap). Each statistic of :func:`shift_cosine` is a function of four sums
    over the rows, so per group g only U_g = sum u_i, S_g = sum x_i, Q_g = sum ||x_i||^2 and
    n_g are kept, and a replicate with group counts k_g (a multinomial draw of as many groups
    as there are) has ``sum_g k_g U_g`` and so on: the replicates are exact and cost
    ``n_boot x groups x width``. Duplicated rows count as distinct rows, as in any bootstrap.

    Parameters
    ----------
    X : array_like, shape (n, d)
    groups : array_like, shape (n,)
        Group (sentence) label of each row.
    n_boot : int
    rng : seed or Generator

    Returns
    -------
    dict
        ``mean_cosine``, ``shift_prediction``, ``shift_residual``: arrays of shape (n_boot,).
    """
    X = np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    keep = sq > 0
    X, sq = X[keep], sq[keep]
    _, g = np.unique(np.asarray(groups)[keep], return_inverse=True)
    order = np.argsort(g, kind="stable")
    X, sq, g = X[order], sq[order], g[order]
    n_groups = int(g.max()) + 1
    starts = np.searchsorted(g, np.arange(n_groups))
    U_g = np.add.reduceat(X / np.sqrt(sq)[:, None], starts, axis=0)
    S_g = np.add.reduceat(X, starts, axis=0)
    Q_g, n_g = np.bincount(g, sq, n_groups), np.bincount(g, minlength=n_groups).astype(float)
    gen = np.random.default_rng(rng)
    K = gen.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=n_boot).astype(float)
    U, S, Q, N = K @ U_g, K @ S_g, K @ Q_g, K @ n_g
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (np.einsum("bd,bd->b", U, U) - N) / (N * (N - 1))
        share = np.einsum("bd,bd->b", S, S) / (N * Q)
        prediction = (N * share - 1) / (N - 1)
    return {"mean_cosine": c, "shift_prediction": prediction, "shift_residual": c - prediction}


Signs = Literal["larger", "both"]


#: Table 1 of Biš et al. (2021), copied from the paper: isotropy I(W) of the raw input
#: embedding matrix, of the centred matrix W_c and of W_r (ceil(d/100) top principal
#: components removed with their eq. 9-11); the average row L2 norm, the L2 norm of the mean
#: vector, and their ratio. Keys are Hugging Face model ids; the value keys match those of
#: :func:`embedding_statistics`. Their I(W) used one (solver-chosen) sign per eigenvector,
#: which ``signs="larger"`` reproduces in the usual one-dominant-shift case (see
#: :func:`isotropy_partition`).
BIS2021_TABLE1: dict[str, dict[str, Any]] = {
    "bert-base-uncased": {
        "label": "BERT-base-uncased",
        "isotropy_raw": 0.39,
        "isotropy_centered": 0.98,
        "isotropy_top_pcs_removed": 0.998,
        "mean_norm": 1.40,
        "mean_vector_norm": 0.94,
        "mean_vector_ratio": 0.67,
    },
    "bert-base-cased": {
        "label": "BERT-base-cased",
        "isotropy_raw": 0.59,
        "isotropy_centered": 0.98,
        "isotropy_top_pcs_removed": 0.996,
        "mean_norm": 1.29,
        "mean_vector_norm": 0.50,
        "mean_vector_ratio": 0.39,
    },
    "bert-large-uncased": {
        "label": "BERT-large-uncased",
        "isotropy_raw": 0.44,
        "isotropy_centered": 0.97,
        "isotropy_top_pcs_removed": 0.997,
        "mean_norm": 1.45,
        "mean_vector_norm": 0.80,
        "mean_vector_ratio": 0.55,
    },
    "bert-large-cased": {
        "label": "BERT-large-cased",
        "isotropy_raw": 0.52,
        "isotropy_centered": 0.96,
        "isotropy_top_pcs_removed": 0.995,
        "mean_norm": 1.53,
        "mean_vector_norm": 0.65,
        "mean_vector_ratio": 0.42,
    },
    "roberta-base": {
        "label": "RoBERTa-base",
        "isotropy_raw": 0.50,
        "isotropy_centered": 0.87,
        "isotropy_top_pcs_removed": 0.959,
        "mean_norm": 3.65,
        "mean_vector_norm": 0.57,
        "mean_vector_ratio": 0.16,
    },
    "roberta-large": {
        "label": "RoBERTa-large",
        "isotropy_raw": 0.07,
        "isotropy_centered": 0.64,
        "isotropy_top_pcs_removed": 0.956,
        "mean_norm": 4.36,
        "mean_vector_norm": 2.53,
        "mean_vector_ratio": 0.58,
    },
    "gpt2": {
        "label": "GPT-2 (12 layers)",
        "isotropy_raw": 0.12,
        "isotropy_centered": 0.91,
        "isotropy_top_pcs_removed": 0.969,
        "mean_norm": 3.96,
        "mean_vector_norm": 2.05,
        "mean_vector_ratio": 0.52,
    },
    "gpt2-medium": {
        "label": "GPT-2 (24 layers)",
        "isotropy_raw": 0.52,
        "isotropy_centered": 0.95,
        "isotropy_top_pcs_removed": 0.981,
        "mean_norm": 3.68,
        "mean_vector_norm": 2.04,
        "mean_vector_ratio": 0.55,
    },
}


def _as_matrix(W: npt.ArrayLike) -> np.ndarray:
    """Return ``W`` as a 2-D array without copying numpy input (memmaps stay memmaps).

    A lazy matrix with a numpy ``dtype``, ``shape`` and row slicing (a sharded store's
    ``LayerView``) is kept as it is: the measures here read it in row chunks.
    """
    arr = as_rows(W)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"empty matrix of shape {arr.shape}")
    return arr


def _chunks(n: int, chunk_rows: int) -> range:
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    return range(0, n, chunk_rows)


def _out_dtype(W: np.ndarray) -> np.dtype:
    """Floating dtype of the transformed matrix: float32 for float16/32 input, else float64."""
    return np.result_type(W.dtype, np.float32)


class _Moments:
    """Sufficient statistics of one streaming pass over the rows of ``W`` (all float64).

    ``gram`` = W^T W, ``col_sum`` = sum of rows, ``norm_sum`` = sum of row L2 norms,
    ``unit_sum`` = sum of the non-zero rows divided by their norms, ``n_nonzero``.
    """

    def __init__(self, W: np.ndarray, chunk_rows: int) -> None:
        n, d = W.shape
        self.n = n
        self.d = d
        self.gram = np.zeros((d, d))
        self.col_sum = np.zeros(d)
        self.norm_sum = 0.0
        self.unit_sum = np.zeros(d)
        self.n_nonzero = 0
        for start in _chunks(n, chunk_rows):
            blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64)
            self.gram += blk.T @ blk
            self.col_sum += blk.sum(axis=0)
            norms = np.sqrt(np.einsum("ij,ij->i", blk, blk))
            self.norm_sum += float(norms.sum())
            nz = norms > 0
            self.n_nonzero += int(nz.sum())
            self.unit_sum += (blk[nz] / norms[nz, None]).sum(axis=0)

    @property
    def mean(self) -> np.ndarray:
        return self.col_sum / self.n

    @property
    def centered_gram(self) -> np.ndarray:
        """(W - 1 mu^T)^T (W - 1 mu^T) = W^T W - n mu mu^T."""
        g = self.gram - np.outer(self.col_sum, self.col_sum) / self.n
        return (g + g.T) / 2


def _eigh_desc(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of a symmetric matrix, eigenvalues in descending order."""
    vals, vecs = np.linalg.eigh(G)
    return vals[::-1], vecs[:, ::-1]


def _flip_signs(V: np.ndarray) -> np.ndarray:
    """Orient each column so that its largest-magnitude entry is positive (deterministic)."""
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def _lse_update(P: np.ndarray, run_max: np.ndarray, run_sum: np.ndarray, tmp: np.ndarray) -> None:
    """One step of a column-wise streaming log-sum-exp.

    The running state ``(m, s)`` represents log Z = m + log s. A new block of values P merges as
    M = max(m, max_rows P), s <- s exp(m - M) + sum_rows exp(P - M), m <- M; every exponent is
    <= 0, so nothing overflows.
    """
    new_max = np.maximum(run_max, P.max(axis=0))
    with np.errstate(invalid="ignore"):  # -inf - -inf on the first block, where s is 0 anyway
        scale = np.exp(run_max - new_max)
    scale[~np.isfinite(scale)] = 0.0
    run_sum *= scale
    np.subtract(P, new_max, out=tmp)
    np.exp(tmp, out=tmp)
    run_sum += tmp.sum(axis=0)
    run_max[:] = new_max


def _log_partitions(
    W: np.ndarray,
    directions: np.ndarray,
    offsets: np.ndarray | None = None,
    *,
    chunk_rows: int = CHUNK_ROWS,
    centered_mean: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, int] | None]:
    """log Z(+c) and log Z(-c) for the columns c of ``directions``, in one pass over ``W``.

    Computes log sum_i exp(s (w_i . c_j + b_j)) for s = +1 and s = -1, where b = ``offsets``
    (the projections of an affine transform W A + 1 b^T of W reduce to this form). If
    ``centered_mean`` is given, the same pass also returns the sum of the unit-normalised
    non-zero rows of W - 1 centered_mean^T and their number (for the exact mean cosine of the
    centred matrix).
    """
    n = W.shape[0]
    C = np.ascontiguousarray(directions, dtype=np.float64)
    m = C.shape[1]
    b = np.zeros(m) if offsets is None else np.asarray(offsets, dtype=np.float64)
    pos_max, neg_max = np.full(m, -np.inf), np.full(m, -np.inf)
    pos_sum, neg_sum = np.zeros(m), np.zeros(m)
    rows = min(chunk_rows, n)
    P_buf, tmp_buf = np.empty((rows, m)), np.empty((rows, m))
    unit_sum = None if centered_mean is None else np.zeros(W.shape[1])
    n_unit = 0
    for start in _chunks(n, chunk_rows):
        blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64)
        k = blk.shape[0]
        P, tmp = P_buf[:k], tmp_buf[:k]
        np.matmul(blk, C, out=P)
        P += b
        _lse_update(P, pos_max, pos_sum, tmp)
        np.negative(P, out=P)
        _lse_update(P, neg_max, neg_sum, tmp)
        if unit_sum is not None:
            blk = blk - centered_mean  # a new array: blk may be a view of W
            norms = np.sqrt(np.einsum("ij,ij->i", blk, blk))
            nz = norms > 0
            n_unit += int(nz.sum())
            unit_sum += (blk[nz] / norms[nz, None]).sum(axis=0)
    extra = None if unit_sum is None else (unit_sum, n_unit)
    with np.errstate(divide="ignore"):
        return pos_max + np.log(pos_sum), neg_max + np.log(neg_sum), extra


def _log_isotropy(log_z_pos: np.ndarray, log_z_neg: np.ndarray, signs: Signs) -> float:
    """log I from log Z(+u_j), log Z(-u_j); see :func:`isotropy_partition` for ``signs``."""
    if signs == "larger":
        per_axis = np.maximum(log_z_pos, log_z_neg)
        return float(per_axis.min() - per_axis.max())
    if signs == "both":
        both = np.concatenate([log_z_pos, log_z_neg])
        return float(both.min() - both.max())
    raise ValueError(f"signs must be 'larger' or 'both', not {signs!r}")


def _map_rows(
    W: np.ndarray,
    fn: Callable[[np.ndarray], np.ndarray],
    chunk_rows: int,
    rows: npt.ArrayLike | None = None,
    *,
    width: int | None = None,
    dtype: npt.DTypeLike | None = None,
) -> np.ndarray:
    """Apply a row-wise float64 transform chunk by chunk into a new array.

    The output has ``width`` columns (default W's) and ``dtype`` (default W's floating dtype).
    With ``rows`` (integer indices), only those rows are transformed and returned, in that order.
    """
    width = W.shape[1] if width is None else width
    dtype = _out_dtype(W) if dtype is None else dtype
    if rows is not None:
        idx = np.asarray(rows, dtype=np.int64)
        if idx.ndim != 1:
            raise ValueError("rows must be a 1-D array of row indices")
        out = np.empty((idx.size, width), dtype=dtype)
        for start in _chunks(max(idx.size, 1), chunk_rows):
            sel = idx[start : start + chunk_rows]
            out[start : start + sel.size] = fn(np.asarray(W[sel], dtype=np.float64))
        return out
    out = np.empty((W.shape[0], width), dtype=dtype)
    for start in _chunks(W.shape[0], chunk_rows):
        blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64)
        out[start : start + blk.shape[0]] = fn(blk)
    return out


def log_partition_function(
    W: npt.ArrayLike, directions: npt.ArrayLike, *, chunk_rows: int = CHUNK_ROWS
) -> np.ndarray:
    """Log of the partition function Z(c) for each column c of ``directions``.

    Z(c) = sum_w exp(c^T e(w)) (Biš et al. 2021, eq. 7; Arora et al. 2016), evaluated as a
    streaming log-sum-exp over row chunks in float64:
    log Z(c) = m + log sum_w exp(c^T e(w) - m) with m = max_w c^T e(w), so it is finite for any
    finite ``W`` (the direct ``exp`` overflows float64 once c^T e(w) > 709).

    Parameters
    ----------
    W : array_like, shape (n, d)
        Embedding matrix, one row per token.
    directions : array_like, shape (d,) or (d, m)
        Directions c (the formula does not normalise them; Biš et al. use unit vectors).
    chunk_rows : int
        Rows per chunk.

    Returns
    -------
    numpy.ndarray, shape (m,) or scalar array
        log Z(c) per direction.
    """
    W = _as_matrix(W)
    C = np.asarray(directions, dtype=np.float64)
    single = C.ndim == 1
    C = C[:, None] if single else C
    if C.shape[0] != W.shape[1]:
        raise ValueError(f"directions have length {C.shape[0]}, W has width {W.shape[1]}")
    log_pos, _, _ = _log_partitions(W, C, chunk_rows=chunk_rows)
    return log_pos[0] if single else log_pos


def isotropy_partition(
    W: npt.ArrayLike,
    *,
    signs: Signs = "larger",
    log: bool = False,
    chunk_rows: int = CHUNK_ROWS,
) -> float:
    """Partition-function isotropy I(W) of Biš et al. (2021), computed in log space.

    I(W) = min_{c in X} Z(c) / max_{c in X} Z(c), Z(c) = sum_w exp(c^T e(w))   (eqs. 7-8)

    with X the unit eigenvectors u_1..u_d of W^T W (Mu & Viswanath 2018, whose approximation
    Biš et al. follow; the matrix is *not* centred first, so for a shifted matrix u_1 is close to
    the mean direction). I(W) lies in (0, 1], and is 1 when Z is the same in every direction,
    as it is approximately for isotropic vectors (Arora et al. 2016, Lemma 2.1).

    Differences from the reference code (``danielbis/tooMuchInCommon`` ``isotropy.py``, which
    takes ``np.exp(W @ u)`` in float32 after ``np.linalg.eig`` of W^T W):

    * log Z(c) is a streaming log-sum-exp in float64 (see :func:`log_partition_function`), so
      there is no overflow for any W, and log I = min log Z - max log Z is exact even when I
      itself underflows to 0.0 (use ``log=True`` to get it);
    * W^T W is accumulated over row chunks in float64 and decomposed with ``eigh``; the
      projections W u_j are also computed chunk by chunk, so no full-size copy of W is made;
    * the eigenvectors' signs, which the paper leaves to the eigensolver, are made explicit.
      ``signs="larger"`` (default) uses one vector per eigen-axis, oriented so that
      Z(u_j) >= Z(-u_j); it is independent of the solver and, like the paper's version, gives
      about exp(-|u_1^T mu|) for a matrix whose only structure is a shift mu.
      ``signs="both"`` uses X = {+u_j, -u_j} (both are eigenvectors), which can only be lower:
      about exp(-2 |u_1^T mu|) for the same shift.

    Parameters
    ----------
    W : array_like, shape (n, d)
        Embedding matrix (rows are tokens); float16/32/64 or a memmap.
    signs : {"larger", "both"}
        Which eigenvector orientations make up X (see above).
    log : bool
        Return the natural log of I(W) instead (finite whenever W is).
    chunk_rows : int
        Rows per chunk in the streaming passes.

    Returns
    -------
    float
        I(W) in [0, 1] (or log I(W) <= 0).

    References
    ----------
    Biš, Podkorytov, Liu (2021), Too Much in Common, NAACL, Sec. 5.1, eqs. 7-8.
    Mu, Viswanath (2018), All-but-the-Top, ICLR. Arora et al. (2016), TACL 4.
    """
    W = _as_matrix(W)
    moments = _Moments(W, chunk_rows)
    _, V = _eigh_desc(moments.gram)
    log_pos, log_neg, _ = _log_partitions(W, V, chunk_rows=chunk_rows)
    value = _log_isotropy(log_pos, log_neg, signs)
    return value if log else math.exp(value)


def n_top_pcs(width: int) -> int:
    """Number of top principal components removed by default: D = ceil(width / 100).

    Mu & Viswanath (2018) suggest D ~ d/100; Biš et al. (2021, Sec. 5.1) set D = ceil(d/100).
    """
    if width < 1:
        raise ValueError("width must be positive")
    return math.ceil(width / 100)


def center(
    W: npt.ArrayLike, *, rows: npt.ArrayLike | None = None, chunk_rows: int = CHUNK_ROWS
) -> np.ndarray:
    """Subtract the mean row: W_c = W - 1 mu^T, mu = sum_w e(w) / |V|.

    Biš et al. (2021), Sec. 4.1 and eq. 9. The mean is accumulated in float64; the result has
    W's floating dtype (float32 for float16/32 input).

    Parameters
    ----------
    W : array_like, shape (n, d)
    rows : array_like of int, optional
        Return only these rows of W_c (mu still uses every row); avoids a full-size copy.
    chunk_rows : int

    Returns
    -------
    numpy.ndarray, shape (n, d) or (len(rows), d)
    """
    W = _as_matrix(W)
    mu = column_mean(W, chunk_rows)
    return _map_rows(W, lambda blk: blk - mu, chunk_rows, rows)


def scaled_center(
    W: npt.ArrayLike, *, rows: npt.ArrayLike | None = None, chunk_rows: int = CHUNK_ROWS
) -> np.ndarray:
    """ "Scaled centering" of Biš et al. (2021), Sec. 5.2 (Tables 2-3, "Centered-Scaled").

    mu_hat = (1/|V|) sum_w e(w) / ||e(w)||_2,   e'(w) = e(w) - ||e(w)||_2 mu_hat.

    The mean of the *unit* vectors is subtracted from each row after scaling it by that row's
    norm, so long (rare-token) vectors lose more of the common direction. Equivalently,
    e'(w) = ||e(w)|| (e_hat(w) - mu_hat): the normalised rows are centred and the original
    norms put back. Properties: the rows e'(w)/||e(w)|| have zero mean; rescaling any row by
    a > 0 rescales its output by a; if all rows have the same norm it equals :func:`center`.
    The paper's sum runs over the whole vocabulary; here all-zero rows (e.g. padding) are left
    out of mu_hat (their direction is undefined) and stay zero.

    Parameters
    ----------
    W : array_like, shape (n, d)
    rows : array_like of int, optional
        Return only these rows (mu_hat still uses every row).
    chunk_rows : int

    Returns
    -------
    numpy.ndarray, shape (n, d) or (len(rows), d)
        In W's floating dtype.
    """
    W = _as_matrix(W)
    unit_sum = np.zeros(W.shape[1])
    n_nonzero = 0
    for start in _chunks(W.shape[0], chunk_rows):
        blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64)
        norms = np.linalg.norm(blk, axis=1)
        nz = norms > 0
        n_nonzero += int(nz.sum())
        unit_sum += (blk[nz] / norms[nz, None]).sum(axis=0)
    if n_nonzero == 0:
        raise ValueError("all rows are zero")
    mu_hat = unit_sum / n_nonzero
    return _map_rows(
        W, lambda blk: blk - np.linalg.norm(blk, axis=1, keepdims=True) * mu_hat, chunk_rows, rows
    )


def _top_pcs(moments: _Moments, n_components: int) -> np.ndarray:
    """Top principal directions (d, D): leading eigenvectors of the centred Gram matrix."""
    _, V = _eigh_desc(moments.centered_gram)
    return _flip_signs(V[:, :n_components])


def remove_top_pcs(
    W: npt.ArrayLike,
    d: int | None = None,
    centered_projection: bool = True,
    *,
    rows: npt.ArrayLike | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> np.ndarray:
    """ "All-but-the-top" post-processing: centre, then remove the top-D principal components.

    Both variants compute mu = mean row, W_c = W - 1 mu^T and U = the D leading principal
    directions (eigenvectors of W_c^T W_c, i.e. PCA of the centred matrix, eq. 10). They differ
    in which vector is projected onto U before subtraction:

    * ``centered_projection=True`` -- Biš et al. (2021), eq. 11 (``use_fix=True`` in their code):
      W_hat_i = W_c,i - sum_{j<=D} (u_j^T W_c,i) u_j. Every row is orthogonal to u_1..u_D and
      the result is still centred.
    * ``centered_projection=False`` -- Mu & Viswanath (2018), Algorithm 1, as Biš et al. describe
      it below eq. 11: W_hat_i = W_c,i - sum_{j<=D} (u_j^T W_i) u_j, projecting the *raw* row.
      Since W_i = W_c,i + mu, this equals the first variant minus the constant vector P mu
      (P = U U^T): every row has the same component -u_j^T mu along u_j (zero variance there,
      but not orthogonal unless mu is orthogonal to U), and the mean row becomes -P mu.

    Parameters
    ----------
    W : array_like, shape (n, width)
    d : int, optional
        Number D of components removed; default ceil(width / 100) (:func:`n_top_pcs`).
    centered_projection : bool
        True: Biš et al.'s variant; False: Mu & Viswanath's original.
    rows : array_like of int, optional
        Return only these rows (mu and U still use every row).
    chunk_rows : int

    Returns
    -------
    numpy.ndarray, shape (n, width) or (len(rows), width)
        In W's floating dtype; arithmetic is float64.
    """
    W = _as_matrix(W)
    D = n_top_pcs(W.shape[1]) if d is None else int(d)
    if not 0 <= D <= W.shape[1]:
        raise ValueError(f"d must be in [0, {W.shape[1]}], got {D}")
    moments = _Moments(W, chunk_rows)
    mu = moments.mean
    U = _top_pcs(moments, D)
    shift = mu if centered_projection else np.zeros_like(mu)

    def fn(blk: np.ndarray) -> np.ndarray:
        return (blk - mu) - ((blk - shift) @ U) @ U.T

    return _map_rows(W, fn, chunk_rows, rows)


def _isoscore_from_variances(variances: np.ndarray) -> float:
    """Steps 3-6 of Rudman et al.'s Algorithm 1 from the PCA variances (eigenvalues)."""
    lam = np.clip(np.asarray(variances, dtype=np.float64), 0.0, None)
    n = lam.size
    if n < 2:
        raise ValueError("IsoScore needs at least 2 dimensions")
    norm = np.linalg.norm(lam)
    if norm == 0:
        return float("nan")
    sqrt_n = math.sqrt(n)
    lam_hat = sqrt_n * lam / norm
    defect = np.linalg.norm(lam_hat - 1.0) / math.sqrt(2 * (n - sqrt_n))
    phi = (n - defect**2 * (n - sqrt_n)) ** 2 / n**2
    return float((n * phi - 1) / (n - 1))


def isoscore(
    X: npt.ArrayLike,
    implementation: Literal["ours", "package"] = "ours",
    *,
    chunk_rows: int = CHUNK_ROWS,
) -> float:
    """IsoScore of a point cloud (Rudman, Gillman, Rayne, Eickhoff 2022, Algorithm 1).

    With n the number of dimensions and lambda the variances of X along its principal axes
    (eigenvalues of the covariance matrix: steps 1-2, PCA reorientation and variance vector):

    lambda_hat = sqrt(n) lambda / ||lambda||                         (step 3)
    delta = ||lambda_hat - 1|| / sqrt(2 (n - sqrt(n)))               (step 4, isotropy defect)
    phi = (n - delta^2 (n - sqrt(n)))^2 / n^2                         (step 5)
    IsoScore = (n phi - 1) / (n - 1)                                  (step 6)

    IsoScore is 1 for isotropic covariance and 0 when all variance lies in one direction; when
    the variance is spread equally over k of the n directions, phi = k/n and
    IsoScore = (k - 1)/(n - 1). It is invariant to translation, rotation and global scaling.

    Parameters
    ----------
    X : array_like, shape (n_points, n_dims)
        Points as rows.
    implementation : {"ours", "package"}
        "ours": covariance accumulated over row chunks in float64, ``eigvalsh``, the formula
        above. "package": ``IsoScore.IsoScore.IsoScore`` from the ``IsoScore`` PyPI package
        (2.0.1). That version takes points as rows (it computes ``torch.cov(points.T)``; the
        older 1.x releases took points as columns), returns a 0-d torch tensor, works in the
        input's precision (we pass float64) and needs a full float64 copy of X.
    chunk_rows : int
        Rows per chunk for "ours".

    Returns
    -------
    float
        IsoScore in [0, 1]; NaN when every point is the same.
    """
    X = _as_matrix(X)
    if X.shape[0] < 2:
        raise ValueError("IsoScore needs at least 2 points")
    if implementation == "package":
        from IsoScore import IsoScore as _pkg

        return float(_pkg.IsoScore(np.asarray(X, dtype=np.float64)))
    if implementation != "ours":
        raise ValueError(f"implementation must be 'ours' or 'package', not {implementation!r}")
    moments = _Moments(X, chunk_rows)
    cov = moments.centered_gram / (X.shape[0] - 1)
    return _isoscore_from_variances(np.linalg.eigvalsh(cov))


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


def singular_values(
    W: npt.ArrayLike,
    k: int | None = None,
    *,
    centered: bool = False,
    chunk_rows: int = CHUNK_ROWS,
) -> np.ndarray:
    """Singular values of W (or of the centred W), largest first (Biš et al. 2021, Fig. 1c/f).

    sigma_i = sqrt(lambda_i(W^T W)), with W^T W accumulated in float64 over row chunks (the
    centred case uses W^T W - n mu mu^T). Values below about 1e-8 sigma_1 are at the precision
    limit of this route and should be read as ~0.

    Parameters
    ----------
    W : array_like, shape (n, d)
    k : int, optional
        Return only the k largest.
    centered : bool
        Subtract the mean row first.
    chunk_rows : int

    Returns
    -------
    numpy.ndarray, shape (min(k, d),)
    """
    W = _as_matrix(W)
    vals = _singular_from(_Moments(W, chunk_rows), centered)
    return vals if k is None else vals[:k]


def _singular_from(moments: _Moments, centered: bool) -> np.ndarray:
    G = moments.centered_gram if centered else moments.gram
    return np.sqrt(np.clip(np.linalg.eigvalsh(G)[::-1], 0.0, None))


def _project_from(
    W: np.ndarray,
    moments: _Moments,
    centered: bool,
    rows: npt.ArrayLike | None,
    chunk_rows: int,
) -> np.ndarray:
    G = moments.centered_gram if centered else moments.gram
    V = _flip_signs(_eigh_desc(G)[1][:, :2])
    shift = moments.mean if centered else np.zeros(W.shape[1])
    return _map_rows(W, lambda blk: (blk - shift) @ V, chunk_rows, rows, width=2, dtype=np.float64)


def project_2d(
    W: npt.ArrayLike,
    *,
    centered: bool = False,
    rows: npt.ArrayLike | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> np.ndarray:
    """Coordinates of the rows of W on its first two right singular vectors (Fig. 1a/b, d/e).

    Uncentred: V_2 = top-2 eigenvectors of W^T W, coordinates W V_2 (the view in which shifted
    embeddings look like a cone). Centred: V_2 from (W - 1 mu^T)^T (W - 1 mu^T), coordinates
    (W - 1 mu^T) V_2 (the first two principal components). Each axis is oriented so that its
    largest-magnitude entry is positive.

    Parameters
    ----------
    W : array_like, shape (n, d), d >= 2
    centered : bool
    rows : array_like of int, optional
        Return only these rows' coordinates (the directions use every row).
    chunk_rows : int

    Returns
    -------
    numpy.ndarray, shape (n, 2) or (len(rows), 2), float64
    """
    W = _as_matrix(W)
    if W.shape[1] < 2:
        raise ValueError("need width >= 2")
    return _project_from(W, _Moments(W, chunk_rows), centered, rows, chunk_rows)


def spectral_views(
    W: npt.ArrayLike, *, rows: npt.ArrayLike | None = None, chunk_rows: int = CHUNK_ROWS
) -> dict[str, np.ndarray]:
    """Singular values and 2-D projections of W before and after centring, in one pass.

    The same numbers as :func:`singular_values` and :func:`project_2d` with ``centered`` False
    and True (Biš et al. 2021, Fig. 1), from a single accumulation of W^T W (the centred Gram
    matrix is W^T W - n mu mu^T) instead of four (plus one light pass per projection).

    Parameters
    ----------
    W : array_like, shape (n, d), d >= 2
    rows : array_like of int, optional
        Project only these rows (e.g. a plotting sample); the directions use every row.
    chunk_rows : int

    Returns
    -------
    dict
        ``singular_values``, ``singular_values_centered`` (shape (d,)), ``projection``,
        ``projection_centered`` (shape (n or len(rows), 2)).
    """
    W = _as_matrix(W)
    if W.shape[1] < 2:
        raise ValueError("need width >= 2")
    moments = _Moments(W, chunk_rows)
    out = {}
    for centered, suffix in ((False, ""), (True, "_centered")):
        out[f"singular_values{suffix}"] = _singular_from(moments, centered)
        out[f"projection{suffix}"] = _project_from(W, moments, centered, rows, chunk_rows)
    return out


def norm_distribution(
    W: npt.ArrayLike, *, centered: bool = False, chunk_rows: int = CHUNK_ROWS
) -> np.ndarray:
    """L2 norm ||e(w)||_2 of every row (Biš et al. 2021, Fig. 5; with ``centered``, Fig. 6).

    Parameters
    ----------
    W : array_like, shape (n, d)
    centered : bool
        Norms of the rows of W - 1 mu^T instead.
    chunk_rows : int

    Returns
    -------
    numpy.ndarray, shape (n,), float64
    """
    W = _as_matrix(W)
    shift = column_mean(W, chunk_rows) if centered else np.zeros(W.shape[1])
    out = np.empty(W.shape[0])
    for start in _chunks(W.shape[0], chunk_rows):
        blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64) - shift
        out[start : start + blk.shape[0]] = np.sqrt(np.einsum("ij,ij->i", blk, blk))
    return out


def toy_sphere_shift(
    n: int,
    d: int,
    shift: float,
    seed: int = 0,
    *,
    radius: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Points on a sphere moved away from the origin, and their singular values (Fig. 2).

    x_i = radius z_i / ||z_i|| + shift u, z_i ~ N(0, I_d), u = (1, ..., 1)/sqrt(d).
    Biš et al. (2021, Sec. 4.1, Fig. 2) use this to show that a shift alone opens a gap between
    the singular values: since E[x x^T] = (radius^2 / d) I + shift^2 u u^T, for large n
    sigma_1 ~ sqrt(n (radius^2/d + shift^2)) while the others stay ~ radius sqrt(n/d).

    Parameters
    ----------
    n : int
        Number of points.
    d : int
        Ambient dimension (the paper's figure uses 3).
    shift : float
        Distance of the sphere's centre from the origin.
    seed : int
    radius : float

    Returns
    -------
    points : numpy.ndarray, shape (n, d)
    singular_values : numpy.ndarray, shape (d,)
        Of the uncentred point matrix, largest first.
    """
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, d))
    points = radius * z / np.linalg.norm(z, axis=1, keepdims=True)
    points += shift * np.ones(d) / math.sqrt(d)
    return points, np.linalg.svd(points, compute_uv=False)


_VARIANTS = ("raw", "centered", "top_pcs_removed", "top_pcs_removed_original")


def embedding_statistics(
    W: npt.ArrayLike,
    *,
    n_components: int | None = None,
    isoscore_rows: int | None = None,
    seed: int = 0,
    chunk_rows: int = CHUNK_ROWS,
    n_boot: int = 0,
    rng: RngLike = None,
    n_axes: int = 16,
) -> dict[str, Any]:
    """The statistics of Biš et al. (2021) Table 1 (and a few more) for one embedding matrix.

    Keys (the first six match :data:`BIS2021_TABLE1`):

    * ``mean_norm`` = avg_w ||e(w)||_2; ``mean_vector_norm`` = ||mu||_2, mu = avg_w e(w);
      ``mean_vector_ratio`` = their ratio;
    * ``isotropy_<v>`` = I(W_v) with ``signs="larger"`` (:func:`isotropy_partition`), for
      v = ``raw`` (W), ``centered`` (:func:`center`), ``top_pcs_removed`` (Biš et al.'s eq. 9-11,
      :func:`remove_top_pcs` with ``centered_projection=True``; their W_r) and
      ``top_pcs_removed_original`` (Mu & Viswanath's projection of the raw rows);
      ``isotropy_<v>_both_signs`` with ``signs="both"``; ``log_isotropy_<v>`` = ln I (finite
      when I underflows);
    * ``n_pcs_removed`` (D, default ceil(width/100)); ``isoscore`` (:func:`isoscore`, "ours",
      on all rows, or on ``isoscore_rows`` rows sampled with ``seed``);
      ``mean_cosine`` / ``mean_cosine_centered`` (exact, :func:`mean_cosine`);
      ``top_eigvec_mean_cosine`` = |cos(u_1, mu)| for u_1 the top eigenvector of W^T W (0.99 for
      RoBERTa-large in the paper, Sec. 5.3); ``n_rows``, ``width``, ``n_zero_rows``;
    * ``isotropy_gap_closed`` = (I(W_c) - I(W)) / (1 - I(W)), the share of the distance to
      perfect isotropy that centring closes (0.61-0.96 in the paper's Table 1);
    * with ``n_boot > 0``: ``<key>_lo`` / ``<key>_hi`` for ``isotropy_raw``,
      ``isotropy_centered`` and ``isotropy_gap_closed``, a 95% interval from a Poisson
      bootstrap over the rows (tokens), following ``n_axes`` axes at each end
      (:func:`_isotropy_replicates`; ``rng`` seeds it).

    The computation makes two streaming passes over W and no full-size copy. Pass 1 accumulates
    W^T W, the row sum, the row norms and the unit-row sum in float64. The post-processed
    matrices are affine in W, so their Gram matrices and projections follow from pass 1:
    with G_c = W^T W - n mu mu^T, its eigenvectors v_j (descending) and U = v_1..v_D,
    W_c v = W v - mu.v; the Biš W_r has the eigenvectors v_{D+1..d} (same projections as W_c)
    plus a D-dimensional null space U where Z = n; the Mu-Viswanath W_r equals the Biš W_r
    minus the constant vector P mu (P = U U^T), so it has the same v_{D+1..d} projections,
    the eigenvector P mu/||P mu|| with Z(+-c) = n exp(-+||P mu||), and a (D-1)-dimensional null
    space where Z = n. Pass 2 therefore needs only the projections on the eigenvectors of W^T W
    and of G_c (2 x width columns), accumulated as streaming log-sum-exps.

    Parameters
    ----------
    W : array_like, shape (n, width)
        Embedding matrix, e.g. from :func:`input_embeddings`.
    n_components : int, optional
        D for the top-PC removal; default ceil(width / 100).
    isoscore_rows : int, optional
        Compute IsoScore on this many rows sampled without replacement (seeded); default all.
    seed : int
    chunk_rows : int
    n_boot, rng, n_axes
        The bootstrap (above).

    Returns
    -------
    dict
        JSON-serialisable numbers (Python floats and ints).
    """
    W = _as_matrix(W)
    n, width = W.shape
    D = n_top_pcs(width) if n_components is None else int(n_components)
    if not 0 <= D < width:
        raise ValueError(f"n_components must be in [0, {width}), got {D}")
    moments = _Moments(W, chunk_rows)
    mu = moments.mean
    _, V_raw = _eigh_desc(moments.gram)
    lam_c, V_c = _eigh_desc(moments.centered_gram)
    C = np.concatenate([V_raw, V_c], axis=1)
    offsets = np.concatenate([np.zeros(width), -(mu @ V_c)])
    pos, neg, centered_units = _log_partitions(W, C, offsets, chunk_rows=chunk_rows,
                                               centered_mean=mu)
    axes = _variant_axes(pos, neg, V_c, mu, n, D)
    mean_norm = moments.norm_sum / n
    mean_vector_norm = float(np.linalg.norm(mu))
    out: dict[str, Any] = {
        "n_rows": int(n), "width": int(width), "n_zero_rows": int(n - moments.n_nonzero),
        "mean_norm": float(mean_norm), "mean_vector_norm": mean_vector_norm,
        "mean_vector_ratio": float(mean_vector_norm / mean_norm) if mean_norm > 0 else math.nan,
        "n_pcs_removed": int(D)}
    out.update(_isotropy_entries(axes))
    out.update(_isoscore_entries(W, lam_c, isoscore_rows, seed, chunk_rows))
    # rows equal to the mean vector have no direction after centring; the pass skipped them
    assert centered_units is not None
    out["mean_cosine"] = _mean_cosine_from_sum(moments.unit_sum, moments.n_nonzero)
    out["mean_cosine_centered"] = _mean_cosine_from_sum(*centered_units)
    out["top_eigvec_mean_cosine"] = (float(abs(V_raw[:, 0] @ mu) / mean_vector_norm)
                                     if mean_vector_norm > 0 else math.nan)
    out["isotropy_gap_closed"] = _gap_closed(out["log_isotropy_raw"],
                                             out["log_isotropy_centered"])
    if n_boot > 0:
        reps = _isotropy_replicates(W, (V_raw, V_c), (pos, neg), mu, n_boot,
                                    np.random.default_rng(rng), n_axes, chunk_rows)
        out.update(_interval_entries(out, reps))
    return out


def _interval_entries(point: dict[str, Any], reps: dict[str, np.ndarray]) -> dict[str, float]:
    """``isotropy_<v>_lo`` / ``_hi`` for the raw and centred I and the gap centring closes."""
    reps = {"raw": np.exp(reps["raw"]), "centered": np.exp(reps["centered"]),
            "gap_closed": _gap_closed(reps["raw"], reps["centered"])}
    out = {}
    for key, rep in reps.items():
        name = f"isotropy_{key}"
        out[f"{name}_lo"], out[f"{name}_hi"] = percentile_interval(rep, point[name])
    return out


def _gap_closed(log_raw: Any, log_centered: Any) -> Any:
    """(I_c - I) / (1 - I) from log I values (arrays or floats); NaN where I = 1."""
    raw, cen = np.exp(log_raw), np.exp(log_centered)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(raw < 1, (cen - raw) / (1 - raw), np.nan)
    return float(gap) if np.ndim(gap) == 0 else gap


def _isotropy_replicates(
    W: np.ndarray, bases: tuple[np.ndarray, np.ndarray], log_z: tuple[np.ndarray, np.ndarray],
    mu: np.ndarray, n_boot: int, gen: np.random.Generator, n_axes: int, chunk_rows: int,
) -> dict[str, np.ndarray]:
    """Poisson-bootstrap replicates of log I(W) and log I(W_c) over the rows of W.

    Replicate b keeps row i k_i ~ Poisson(1) times (:func:`stats.poisson_weights`), so
    Z*(c) = sum_i k_i exp(c . w_i) and, centred, the mean is mu* = sum_i k_i w_i / sum_i k_i:
    log Z*_c(+-c) = log sum_i k_i exp(+-(w_i - mu) . c) -+ (mu* - mu) . c. The directions stay
    the eigenvectors of the whole W (the set X of eq. 8), and only the ``n_axes`` axes with the
    smallest and the ``n_axes`` with the largest log Z of each variant are followed, as they
    hold the minimum and the maximum; the sample's log Z per axis keeps every exponent <= 0.
    """
    width = W.shape[1]
    pos, neg = log_z
    picked, shift_c, ref = [], [], []
    for k, V in enumerate(bases):
        per_axis = np.maximum(pos[k * width:(k + 1) * width], neg[k * width:(k + 1) * width])
        order = np.argsort(per_axis)
        sel = np.unique(np.concatenate([order[:n_axes], order[-n_axes:]]))
        picked.append(V[:, sel])
        # the sample's log Z(+-c) (centred: with the sample mean) keeps exp() in range
        ref.append((pos[k * width + sel], neg[k * width + sel]))
        shift_c.append(np.zeros(sel.size) if k == 0 else mu @ V[:, sel])
    C = np.concatenate(picked, axis=1)
    offsets = np.concatenate(shift_c)
    L = np.concatenate([np.concatenate([p for p, _ in ref]), np.concatenate([q for _, q in ref])])
    m = C.shape[1]
    Z = np.zeros((n_boot, 2 * m))
    proj = np.zeros((n_boot, m))
    total = np.zeros(n_boot)
    for start in _chunks(W.shape[0], chunk_rows):
        P = np.asarray(W[start : start + chunk_rows], dtype=np.float64) @ C - offsets
        K = poisson_weights(n_boot, P.shape[0], gen, dtype=np.float64)
        Z += K @ np.exp(np.concatenate([P, -P], axis=1) - L)
        proj += K @ P
        total += K.sum(axis=1)
    log_z_boot = np.log(Z) + L
    delta = proj / total[:, None]  # (mu* - mu) . c
    out = {}
    n_raw = picked[0].shape[1]
    for key, cols in (("raw", slice(0, n_raw)), ("centered", slice(n_raw, m))):
        d = delta[:, cols] if key == "centered" else 0.0
        plus = log_z_boot[:, :m][:, cols] - d
        minus = log_z_boot[:, m:][:, cols] + d
        per_axis = np.maximum(plus, minus)
        out[key] = per_axis.min(axis=1) - per_axis.max(axis=1)
    return out


def _variant_axes(
    pos: np.ndarray, neg: np.ndarray, V_c: np.ndarray, mu: np.ndarray, n: int, D: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """log Z(+-c) over the eigen-axes of each post-processed variant (see embedding_statistics)."""
    width = V_c.shape[0]
    log_n = math.log(n)
    Pmu = V_c[:, :D] @ (V_c[:, :D].T @ mu)
    pmu_norm = float(np.linalg.norm(Pmu))
    axes: dict[str, tuple[np.ndarray, np.ndarray]] = {
        "raw": (pos[:width], neg[:width]),
        "centered": (pos[width:], neg[width:]),
        "top_pcs_removed": (
            np.concatenate([pos[width + D :], np.full(D, log_n)]),
            np.concatenate([neg[width + D :], np.full(D, log_n)]),
        ),
    }
    if D == 0:
        axes["top_pcs_removed_original"] = axes["top_pcs_removed"]
    else:
        axes["top_pcs_removed_original"] = (
            np.concatenate([pos[width + D :], [log_n - pmu_norm], np.full(D - 1, log_n)]),
            np.concatenate([neg[width + D :], [log_n + pmu_norm], np.full(D - 1, log_n)]),
        )
    return axes


def _isotropy_entries(axes: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """``isotropy_<v>``, ``isotropy_<v>_both_signs`` and ``log_isotropy_<v>`` for every variant."""
    out: dict[str, float] = {}
    for v in _VARIANTS:
        log_i = _log_isotropy(*axes[v], "larger")
        out[f"isotropy_{v}"] = math.exp(log_i)
        out[f"isotropy_{v}_both_signs"] = math.exp(_log_isotropy(*axes[v], "both"))
        out[f"log_isotropy_{v}"] = log_i
    return out


def _isoscore_entries(
    W: np.ndarray, lam_c: np.ndarray, isoscore_rows: int | None, seed: int, chunk_rows: int
) -> dict[str, Any]:
    """``isoscore`` (from the centred spectrum, or on sampled rows) and ``isoscore_rows``."""
    n = W.shape[0]
    out: dict[str, Any] = {}
    if isoscore_rows is None or isoscore_rows >= n:
        out["isoscore"] = _isoscore_from_variances(lam_c / (n - 1))
    else:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=isoscore_rows, replace=False))
        out["isoscore"] = isoscore(np.asarray(W[rows]), "ours", chunk_rows=chunk_rows)
    out["isoscore_rows"] = int(n if isoscore_rows is None else min(isoscore_rows, n))
    return out


def _mean_cosine_from_sum(unit_sum: np.ndarray, N: int) -> float:
    """Exact mean pairwise cosine of N unit rows from their sum (NaN for fewer than two)."""
    return float((unit_sum @ unit_sum - N) / (N * (N - 1))) if N > 1 else math.nan
