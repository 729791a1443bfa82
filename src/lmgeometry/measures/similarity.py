"""Comparing vectors and representations: cosine helpers, norms, CKA, rogue dimensions.

* :func:`unit_rows` -- rows scaled to unit length without overflow;
* :func:`norm_ratio` -- the typical norm of some rows over that of the others (the first
  word's "attention sink" in decoders run without BOS);
* :func:`linear_cka`, :func:`cka_matrix`, :func:`cross_model_cka` -- linear centred kernel
  alignment (Kornblith et al. 2019) between layers of one model or of two;
  :func:`gram_cka` -- the same from the items' Gram matrices, with bootstrap replicates over
  the items for chosen pairs of layers, or debiased (unbiased HSIC: Song et al. 2012; Nguyen
  et al. 2021), which :func:`linear_cka` also offers;
* :func:`cosine_contributions`, :func:`top_dimensions`, :func:`variance_share`,
  :func:`variance_share_replicates`, :func:`top_overlap`, :func:`top_overlap_replicates` --
  rogue dimensions (Timkey & van Schijndel 2021): coordinates whose variance or share of the
  mean cosine dwarfs the rest, and how many of the top ones two representations share;
  :func:`random_rotation` -- a random orthonormal basis, the null of a claim about single
  coordinates;
* :func:`subsample` -- a seeded, sorted subset of row indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from lmgeometry.measures.arrays import float_arrays

__all__ = [
    "CHUNK_ROWS",
    "best_match",
    "as_rows",
    "cka_matrix",
    "column_mean",
    "cosine_contributions",
    "cross_model_cka",
    "gram_cka",
    "linear_cka",
    "norm_ratio",
    "random_rotation",
    "row_norms",
    "subsample",
    "top_dimensions",
    "top_overlap",
    "top_overlap_replicates",
    "unit_rows",
    "variance_share",
    "variance_share_replicates",
]

#: Rows per chunk when a (rows, d) float64 temporary would otherwise be made.
CHUNK_ROWS = 8192


def subsample(n: int, budget: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of at most ``budget`` of ``n`` items, drawn without replacement."""
    if budget >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=budget, replace=False))


@float_arrays("X", "rows")
def norm_ratio(X: np.ndarray, rows: np.ndarray,
               statistic: Literal["median", "mean"] = "median") -> float:
    """Typical Euclidean norm of the selected rows over that of the other rows.

    .. math:: \\operatorname{stat}_{i \\in S} \\lVert x_i \\rVert \\big/
              \\operatorname{stat}_{i \\notin S} \\lVert x_i \\rVert

    with ``stat`` the median or the mean. With ``rows`` the first word of each sentence it
    measures the "attention sink" / "massive activations" of decoders run without a BOS token
    (Xiao et al. 2023, *Efficient Streaming Language Models with Attention Sinks*; Sun et al.
    2024, *Massive Activations in Large Language Models*): far above 1 in the layers where the
    first position's hidden state dwarfs the others. NaN when either group is empty.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Or a memory map or lazy layer view: the norms are read in row chunks (:func:`row_norms`).
    rows : boolean ndarray of shape (n,)
    statistic : {"median", "mean"}
    """
    if statistic not in ("median", "mean"):
        raise ValueError(f"statistic must be 'median' or 'mean', not {statistic!r}")
    rows = np.asarray(rows, dtype=bool)
    if rows.shape != (len(X),):
        raise ValueError(f"rows must be a boolean mask of length {len(X)}, not shape {rows.shape}")
    if rows.all() or not rows.any():
        return float("nan")
    norms = row_norms(X)
    stat = np.median if statistic == "median" else np.mean
    return float(stat(norms[rows]) / stat(norms[~rows]))


def unit_rows(
    X: np.ndarray, *, dtype: type[np.floating] = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """Rows scaled to unit Euclidean length, computed safely in float64.

    Rows are converted to float64 chunk by chunk. For float64 (or wider) input each row ``x`` is
    first divided by ``max_k |x_k|`` so that squaring can neither overflow nor underflow
    (``||x|| = max_k |x_k| * ||x / max_k |x_k|||``); float16/float32 input cannot overflow a
    float64 sum of squares, so that pass is skipped.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Any real dtype (float16 memory maps included). Read in chunks of rows.
    dtype : numpy float type
        Dtype of the returned unit rows (the arithmetic is float64 either way).

    Returns
    -------
    U : ndarray of shape (n, d)
        ``x_i / ||x_i||``; zero rows stay zero.
    norms : ndarray of shape (n,), float64
        ``||x_i||`` (0 for zero rows).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or holds NaN or infinity.
    """
    X = as_rows(X)
    n, d = X.shape
    U = np.empty((n, d), dtype=dtype)
    norms = np.zeros(n, dtype=np.float64)
    for start in range(0, n, CHUNK_ROWS):
        block, r = _unit_block(X[start : start + CHUNK_ROWS])
        U[start : start + len(block)] = block
        norms[start : start + len(block)] = r
    return U, norms


def row_norms(X: np.ndarray, chunk_rows: int = CHUNK_ROWS) -> np.ndarray:
    """``||x_i||`` of every row, computed as :func:`unit_rows` does, ``chunk_rows`` at a time.

    Only one chunk of rows is converted to float64 at once, so ``X`` may be a float16 memory
    map or a lazy view of a layer larger than memory.

    Returns
    -------
    ndarray of shape (n,), float64
    """
    X = as_rows(X)
    out = np.zeros(X.shape[0], dtype=np.float64)
    for start in range(0, X.shape[0], chunk_rows):
        out[start : start + chunk_rows] = _unit_block(X[start : start + chunk_rows],
                                                      normalise=False)[1]
    return out


def as_rows(X: np.ndarray) -> np.ndarray:
    """``X`` as a 2-D matrix of rows, without reading a lazy one.

    numpy arrays, memory maps and lazy matrices with a numpy ``dtype``, a ``shape`` and row
    indexing (a sharded store's ``LayerView``) are returned as they are, for the measures to
    read in row chunks; anything else (lists, DataFrames, tensors) goes through
    ``numpy.asarray``.

    Raises
    ------
    ValueError
        If the result is not 2-D.
    """
    lazy = isinstance(getattr(X, "dtype", None), np.dtype) and hasattr(X, "__getitem__")
    out = X if isinstance(X, np.ndarray) or lazy else np.asarray(X)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D (rows, width) matrix, got shape {out.shape}")
    return out


def _unit_block(rows: np.ndarray, normalise: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Unit rows and norms of one block, in float64 (see :func:`unit_rows`); with
    ``normalise=False`` the rows are left unscaled (only the norms are wanted)."""
    rows = np.asarray(rows)
    block = np.array(rows, dtype=np.float64)
    if not np.isfinite(block).all():
        raise ValueError("rows must be finite (found NaN or infinity)")
    rescale = not (np.issubdtype(rows.dtype, np.floating) and rows.dtype.itemsize <= 4)
    scale = np.ones(len(block))
    if rescale:
        scale = np.abs(block).max(axis=1) if block.shape[1] else np.zeros(len(block))
        np.divide(block, scale[:, None], out=block, where=scale[:, None] > 0)
    r = np.sqrt(np.einsum("ij,ij->i", block, block))
    if normalise:
        np.divide(block, r[:, None], out=block, where=r[:, None] > 0)
    return block, scale * r if rescale else r


def _centered(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"expected a 2-D array with at least 2 rows, got shape {X.shape}")
    return X - X.mean(axis=0)


@float_arrays("X", "Y")
def linear_cka(X: np.ndarray, Y: np.ndarray, *, debiased: bool = False,
               chunk_rows: int | None = None) -> float:
    """Linear centred kernel alignment of two representations of the same n items.

    .. math:: \\mathrm{CKA}(X, Y) = \\frac{\\lVert \\tilde Y^\\top \\tilde X \\rVert_F^2}
              {\\lVert \\tilde X^\\top \\tilde X \\rVert_F \\, \\lVert \\tilde Y^\\top \\tilde Y
              \\rVert_F}

    with :math:`\\tilde X, \\tilde Y` the column-centred matrices (Kornblith et al. 2019, eq. 4,
    the form seed 003 uses). CKA is 1 for identical representations and invariant to
    orthogonal transforms, isotropic scaling and translation of either one; the widths of X
    and Y may differ (two models on the same words).

    This estimator is biased upwards when the items are few for the widths: two independent
    isotropic Gaussian clouds of n points score about
    :math:`\\sqrt{d_1 d_2 / ((n + d_1)(n + d_2))}`, not 0 (d / (n + d) for equal widths).
    ``debiased=True`` replaces each HSIC by its unbiased estimator (:func:`gram_cka`), which
    is near 0 for independent representations at any n (Nguyen et al. 2021; it can then be
    slightly negative).

    Both forms are computed in feature space, from the centred cross-products
    :math:`\\tilde X^\\top \\tilde Y`, :math:`\\tilde X^\\top \\tilde X`, :math:`\\tilde
    Y^\\top \\tilde Y` (memory O(d1^2 + d2^2 + d1 d2 + n), never an n x n matrix). With
    ``chunk_rows`` both matrices are read that many rows at a time, twice (column means, then
    the cross-products), so they may be memory maps or lazy views of layers larger than
    memory. The debiased form
    uses the feature-space expression of the unbiased HSIC: with :math:`k_i = \\lVert \\tilde x_i
    \\rVert^2`, :math:`l_i = \\lVert \\tilde y_i \\rVert^2` and centred rows (so that
    :math:`K \\mathbf 1 = 0`), Song et al.'s (2012, eq. 5) estimator is, up to the factor
    :math:`1 / (n (n - 3))` that cancels in CKA,

    .. math:: \\lVert \\tilde X^\\top \\tilde Y \\rVert_F^2 - \\frac{n}{n-2} \\sum_i k_i l_i
              + \\frac{(\\sum_i k_i)(\\sum_i l_i)}{(n-1)(n-2)},

    which equals the U-centred Gram form of :func:`gram_cka` without any n x n matrix.

    Parameters
    ----------
    X : ndarray of shape (n, d1)
    Y : ndarray of shape (n, d2)
    debiased : bool
        Unbiased HSIC estimates (needs n >= 4).
    chunk_rows : int or None
        None: all rows at once. An int: streamed in row chunks of that size (equal to the
        in-memory value up to floating-point summation order).

    Returns
    -------
    float
        In [0, 1] (debiased: at most 1); NaN when one representation is constant.
    """
    X, Y = as_rows(X), as_rows(Y)
    if chunk_rows is not None and chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    return _feature_cka(X, Y, debiased, chunk_rows or max(len(X), 1))


def column_mean(X: np.ndarray, chunk_rows: int = CHUNK_ROWS, *,
                exact_constants: bool = False) -> np.ndarray:
    """The mean row of ``X`` in float64, read ``chunk_rows`` rows at a time (memory maps and lazy
    layer views are never loaded whole).

    With ``exact_constants`` a constant column's mean is its value itself rather than the sum
    of its values over n, so that it centres to exact zeros: the feature-space forms of
    :func:`linear_cka` assume exactly centred columns, and a rounding residual would make a
    constant representation look like a signal instead of giving NaN.
    """
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    total = np.zeros(X.shape[1])
    if exact_constants:
        low, high = np.full(X.shape[1], np.inf), np.full(X.shape[1], -np.inf)
    for start in range(0, X.shape[0], chunk_rows):
        block = np.asarray(X[start : start + chunk_rows], dtype=np.float64)
        total += block.sum(axis=0)
        if exact_constants:
            np.minimum(low, block.min(axis=0), out=low)
            np.maximum(high, block.max(axis=0), out=high)
    mean = total / X.shape[0]
    return np.where(low == high, low, mean) if exact_constants else mean


def _feature_cka(X: np.ndarray, Y: np.ndarray, debiased: bool, chunk_rows: int) -> float:
    """:func:`linear_cka` from centred cross-products accumulated over row chunks."""
    n = len(X)
    if len(Y) != n:
        raise ValueError(f"X and Y must describe the same items: {n} vs {len(Y)} rows")
    if debiased and n < 4:
        raise ValueError(f"debiased CKA needs at least 4 items, got {n}")
    if n < 2:
        raise ValueError(f"CKA needs at least 2 items, got {n}")
    mx = column_mean(X, chunk_rows, exact_constants=True)
    my = column_mean(Y, chunk_rows, exact_constants=True)
    xx, yy = np.zeros((X.shape[1],) * 2), np.zeros((Y.shape[1],) * 2)
    xy = np.zeros((X.shape[1], Y.shape[1]))
    kx, ky = np.empty(n), np.empty(n)
    for start in range(0, n, chunk_rows):
        a = np.asarray(X[start : start + chunk_rows], dtype=np.float64) - mx
        b = np.asarray(Y[start : start + chunk_rows], dtype=np.float64) - my
        xx += a.T @ a
        yy += b.T @ b
        xy += a.T @ b
        kx[start : start + len(a)] = np.einsum("ij,ij->i", a, a)
        ky[start : start + len(b)] = np.einsum("ij,ij->i", b, b)

    def hsic(cross: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
        value = float(np.vdot(cross, cross))
        if debiased:
            value += -n / (n - 2) * float(p @ q) + p.sum() * q.sum() / ((n - 1) * (n - 2))
        return value

    with np.errstate(invalid="ignore"):
        denom = float(np.sqrt(hsic(xx, kx, kx) * hsic(yy, ky, ky)))
    return hsic(xy, kx, ky) / denom if denom > 0 else float("nan")


@float_arrays("A", "B")
def cka_matrix(A: Sequence[np.ndarray], B: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """Linear CKA between every layer of ``A`` and every layer of ``B`` (``A`` when None).

    Each element of ``A`` / ``B`` is one layer's (n, d) representation of the same n items.
    Uses the Gram-free form of :func:`linear_cka` with the per-layer self-norms computed once.

    Returns
    -------
    ndarray of shape (len(A), len(B))
    """
    As = [_centered(a) for a in A]
    Bs = As if B is None else [_centered(b) for b in B]
    if any(len(b) != len(As[0]) for b in [*As, *Bs]):
        raise ValueError("every layer must describe the same items (same number of rows)")
    norm_a = [np.linalg.norm(a.T @ a) for a in As]
    norm_b = norm_a if B is None else [np.linalg.norm(b.T @ b) for b in Bs]
    out = np.empty((len(As), len(Bs)))
    for i, a in enumerate(As):
        for j, b in enumerate(Bs):
            if B is None and j < i:
                out[i, j] = out[j, i]
                continue
            denom = norm_a[i] * norm_b[j]
            out[i, j] = np.linalg.norm(b.T @ a) ** 2 / denom if denom > 0 else np.nan
    return out


def best_match(cross: np.ndarray) -> np.ndarray:
    """For each column (layer of the second model), the highest CKA over the rows.

    Cross-model CKA matrices need not peak on a diagonal (the models have different
    numbers of layers), so each layer is summarised by its best-matching layer.
    """
    return np.nanmax(np.asarray(cross, dtype=np.float64), axis=0)


def cross_model_cka(A: Sequence[np.ndarray], B: Sequence[np.ndarray], first: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Layer-by-layer CKA of two models on the same word rows, with and without first words.

    Parameters
    ----------
    A, B : sequences of ndarray of shape (n, d_a) / (n, d_b)
        Every layer of two models on the same n word occurrences.
    first : boolean ndarray of shape (n,)
        Rows that are the first word of their sentence.

    Returns
    -------
    all_rows : ndarray of shape (len(A), len(B))
        :func:`cka_matrix` on every row.
    without_first : ndarray of shape (len(A), len(B))
        The same on the rows that are not first words.
    table : pandas.DataFrame
        One row per layer of ``B``: ``layer``, ``best_cka_all`` and ``best_cka_without_first``
        (:func:`best_match`), ``first_word_norm_ratio`` (:func:`norm_ratio` of B's first-word
        rows), ``top_dim`` and ``top_dim_variance_share_without_first`` (the highest-variance
        dimension of B's other rows and its :func:`variance_share`), and
        ``best_cka_without_first_and_top_dim`` (the best match once that dimension of B is
        dropped as well).
    """
    first = np.asarray(first, dtype=bool)
    all_rows = cka_matrix(A, B)
    A_rest, B_rest = [a[~first] for a in A], [b[~first] for b in B]
    without = cka_matrix(A_rest, B_rest)
    top = [int(top_dimensions(b, 1)[0]) for b in B_rest]
    without_top = cka_matrix(A_rest, [np.delete(b, d, axis=1) for b, d in zip(B_rest, top,
                                                                               strict=True)])
    table = pd.DataFrame({
        "layer": np.arange(len(B)),
        "best_cka_all": best_match(all_rows),
        "best_cka_without_first": best_match(without),
        "first_word_norm_ratio": [norm_ratio(b, first, statistic="median") for b in B],
        "top_dim": top,
        "top_dim_variance_share_without_first": [variance_share(b, 1) for b in B_rest],
        "best_cka_without_first_and_top_dim": best_match(without_top),
    })
    return all_rows, without, table


def cosine_contributions(X: np.ndarray) -> np.ndarray:
    """Each dimension's contribution to the mean pairwise cosine of the rows of ``X``.

    .. math:: CC_k = \\frac{1}{n(n-1)} \\sum_{i \\ne j} \\hat x_{ik} \\hat x_{jk}
              = \\frac{(\\sum_i \\hat x_{ik})^2 - \\sum_i \\hat x_{ik}^2}{n(n-1)},
              \\qquad \\sum_k CC_k = \\overline{\\cos}

    with :math:`\\hat x_i = x_i / \\lVert x_i \\rVert` (Timkey & van Schijndel 2021, eq. 2;
    they estimate it from sampled pairs, this is the exact mean over all ordered pairs). A
    *rogue dimension* is one whose contribution is a large share of the total; the sum equals
    :func:`lmgeometry.measures.cosines.mean_pairwise_cosine`.

    Returns
    -------
    ndarray of shape (d,)
    """
    U, norms = unit_rows(X)
    U = np.asarray(U, dtype=np.float64)[norms > 0]
    n = len(U)
    if n < 2:
        raise ValueError("cosine contributions need at least two non-zero rows")
    return (U.sum(axis=0) ** 2 - (U**2).sum(axis=0)) / (n * (n - 1))


@float_arrays("X")
def top_dimensions(X: np.ndarray, k: int = 1, by: str = "variance") -> np.ndarray:
    """Indices of the ``k`` dimensions with the largest variance (or cosine contribution).

    ``by="variance"`` is seed 003's *principal rogue dimension* for ``k=1``: the coordinate
    with the highest variance over the rows. ``by="contribution"`` ranks by
    :func:`cosine_contributions` (Timkey & van Schijndel 2021).
    """
    if by == "variance":
        score = np.asarray(X, dtype=np.float64).var(axis=0)
    elif by == "contribution":
        score = cosine_contributions(X)
    else:
        raise ValueError(f"by must be 'variance' or 'contribution', not {by!r}")
    return np.argsort(-score, kind="stable")[:k]


def random_rotation(width: int, seed: int | Sequence[int] = 0) -> np.ndarray:
    """A random orthogonal ``width`` x ``width`` matrix, uniform (Haar) over rotations and
    reflections (:data:`scipy.stats.ortho_group`), seeded (an int or a sequence of ints).

    ``X @ random_rotation(d)`` keeps every distance, angle and the covariance spectrum of the
    rows of X and spreads any single coordinate's variance over all coordinates: the null of a
    claim about *dimensions* rather than directions (seed 003's rogue dimensions; Timkey &
    van Schijndel 2021), under which the top-k coordinates hold about k / d of the variance
    unless a few directions hold nearly all of it.

    Examples
    --------
    >>> Q = random_rotation(4, seed=1)
    >>> bool(np.allclose(Q @ Q.T, np.eye(4)))
    True
    """
    from scipy.stats import ortho_group

    if width < 2:
        return np.ones((max(width, 0), max(width, 0)))
    keys = [seed] if isinstance(seed, int) else list(seed)
    return ortho_group.rvs(width, random_state=np.random.default_rng([_ROTATION_STREAM, *keys]))


#: Mixed into every rotation's seed, so that it is not the first draw of another generator
#: seeded with the same number.
_ROTATION_STREAM = 0x726F74  # "rot"


@float_arrays("X")
def variance_share(X: np.ndarray, k: int = 1) -> float:
    """Share of the total variance held by the ``k`` highest-variance coordinates.

    .. math:: \\sum_{j \\in top_k} \\mathrm{Var}(x_{\\cdot j}) / \\sum_j \\mathrm{Var}(x_{\\cdot j})

    ``k / d`` for an isotropic Gaussian; close to 1 when a few rogue dimensions dominate.
    """
    var = np.asarray(X, dtype=np.float64).var(axis=0)
    total = var.sum()
    return float(np.sort(var)[::-1][:k].sum() / total) if total > 0 else float("nan")


def _u_centred(K: np.ndarray) -> np.ndarray:
    """A Gram matrix U-centred in place: the unbiased HSIC is the inner product of two of them.

    .. math:: \\tilde K_{ij} = K_{ij} - \\frac{1}{n-2}\\sum_{l} K_{il}
              - \\frac{1}{n-2}\\sum_{k} K_{kj} + \\frac{1}{(n-1)(n-2)}\\sum_{k,l} K_{kl}
              \\ (i \\ne j), \\qquad \\tilde K_{ii} = 0,

    sums over off-diagonal entries (the diagonal is zeroed first). Then
    :math:`\\mathrm{HSIC}_1(K, L) = \\langle \\tilde K, \\tilde L\\rangle_F / (n(n-3))`, Song et
    al. (2012)'s unbiased estimator, as in Kornblith et al.'s ``center_gram(unbiased=True)``.
    """
    n = len(K)
    if n < 4:
        raise ValueError(f"debiased CKA needs at least 4 items, got {n}")
    np.fill_diagonal(K, 0.0)
    means = K.sum(axis=0) / (n - 2)
    means -= means.sum() / (2 * (n - 1))
    K -= means[:, None]
    K -= means[None, :]
    np.fill_diagonal(K, 0.0)
    return K


def gram_cka(layers: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]] = (),
             n_boot: int = 0, rng: np.random.Generator | int | None = None,
             counts: np.ndarray | None = None, *, debiased: bool = False,
             ) -> tuple[np.ndarray, np.ndarray]:
    """Linear CKA between layers from the items' Gram matrices, with bootstrap replicates.

    With K = X~ X~^T and L = Y~ Y~^T the Gram matrices of the column-centred layers,
    CKA = <K, L>_F / (||K||_F ||L||_F), the same number as :func:`linear_cka` (Kornblith et
    al. 2019, eq. 4) at a cost of n^2 per pair instead of n d_1 d_2, which is cheaper when
    the items are fewer than the dimensions squared over n (every pair of 31 layers of 872
    sentences).

    Debiased (``debiased=True``; Nguyen, Raghu & Kornblith 2021, appendix): each Gram matrix
    is U-centred (:func:`_u_centred`), so that every HSIC above is Song et al. (2012)'s
    unbiased estimator, and CKA = HSIC_1(K, L) / sqrt(HSIC_1(K, K) HSIC_1(L, L)). The plain
    estimator is biased upwards when n is small against the widths (two independent
    representations score well above 0); the debiased one is near 0 for them and equals 1 for
    identical representations. No bootstrap replicates for it: a resample repeats items, which
    the unbiased estimator takes for distinct ones.

    Bootstrap (plain CKA): a replicate that draws item i k_i times has weights w = k / sum k,
    and its centred Gram matrix is K_ij - a_i - a_j + alpha with a = K w, alpha = w^T a.
    Because the weighted rows of a centred matrix sum to zero,

    HSIC_w(K, L) = sum_ij w_i w_j K~_ij L~_ij = w^T (K o L) w - 2 sum_i w_i a_i b_i + alpha beta

    (b = L w, beta = w^T b), so a replicate needs no new Gram matrix: one matrix product per
    pair covers every replicate. CKA_w = HSIC_w(K, L) / sqrt(HSIC_w(K, K)
    HSIC_w(L, L)).

    Parameters
    ----------
    layers : sequence of ndarray of shape (n, d_l)
        The same n items in every layer.
    pairs : sequence of (i, j)
        Layer pairs to bootstrap.
    n_boot : int
    rng : seed or Generator
        ``n_boot`` replicates draw the items with replacement (multinomial counts).
    counts : ndarray of shape (n_replicates, n), optional
        The replicates' item counts instead (``n_boot`` and ``rng`` are then ignored), e.g. a
        bootstrap over sentences with every word of a drawn sentence counted
        (:class:`lmgeometry.measures.stats.GroupBootstrap`'s ``counts[:, codes]``), so that
        words of one sentence are never split between draws.
    debiased : bool
        Unbiased HSIC estimates (then there are no replicates: ``n_boot`` must be 0 and
        ``counts`` None).

    Returns
    -------
    matrix : ndarray of shape (len(layers), len(layers))
        CKA of every pair of layers on all items.
    replicates : ndarray of shape (n_boot or n_replicates, len(pairs))
    """
    if debiased and (n_boot or counts is not None):
        raise ValueError("debiased CKA has no bootstrap replicates (a resample repeats items)")
    grams = []
    for X in layers:
        Xc = _centered(X)
        grams.append(_u_centred(Xc @ Xc.T) if debiased else Xc @ Xc.T)
    n = len(grams[0])
    if any(len(G) != n for G in grams):
        raise ValueError("every layer must describe the same items (same number of rows)")
    norms = np.array([np.linalg.norm(G) for G in grams])
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.array([[np.vdot(a, b) for b in grams] for a in grams]) / np.outer(norms,
                                                                                       norms)
    if counts is None:
        gen = np.random.default_rng(rng)
        counts = gen.multinomial(n, np.full(n, 1.0 / n), size=n_boot)
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] != n:
        raise ValueError(f"counts must have shape (replicates, {n}), not {counts.shape}")
    w = counts / counts.sum(axis=1, keepdims=True)
    n_boot = len(w)
    used = sorted({i for pair in pairs for i in pair})
    a = {i: w @ grams[i] for i in used}
    alpha = {i: np.einsum("bi,bi->b", w, a[i]) for i in used}

    def hsic(i: int, j: int) -> np.ndarray:
        quad = np.einsum("bi,bi->b", w @ (grams[i] * grams[j]), w)
        return quad - 2 * np.einsum("bi,bi,bi->b", w, a[i], a[j]) + alpha[i] * alpha[j]

    self_h = {i: hsic(i, i) for i in used}
    reps = np.empty((n_boot, len(pairs)))
    for col, (i, j) in enumerate(pairs):
        with np.errstate(invalid="ignore", divide="ignore"):
            reps[:, col] = hsic(i, j) / np.sqrt(self_h[i] * self_h[j])
    return matrix, reps


def _replicate_variances(X: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Column variances of bootstrap replicates given as item counts, (n_replicates, d).

    ``counts[b, i]`` is how often replicate b draws row i; the variances come from the
    count-weighted first two moments of the rows centred on the sample mean (so nothing
    cancels).
    """
    Xc = _centered(X)
    K = np.asarray(counts, dtype=np.float64)
    N = K.sum(axis=1, keepdims=True)
    m1 = K @ Xc / N
    return np.clip(K @ (Xc * Xc) / N - m1 * m1, 0.0, None)


def top_overlap(X: np.ndarray, Y: np.ndarray, k: int = 10) -> int:
    """How many of the ``k`` highest-variance dimensions of ``X`` are among those of ``Y``.

    .. math:: |\\mathrm{top}_k(X) \\cap \\mathrm{top}_k(Y)|

    with :math:`\\mathrm{top}_k` the :func:`top_dimensions` by variance; ``X`` and ``Y`` are
    two representations in the same coordinates (one model's layer on two data sets, e.g. two
    fine-tunes of one model: seed 003 finds 8 of 10 rogue dimensions shared by GPT-2's SST-2
    and QNLI fine-tunes). Two independent random choices share :math:`k^2 / d` on average.
    """
    X, Y = np.asarray(X), np.asarray(Y)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must have the same width, not {X.shape[1]} and {Y.shape[1]}")
    return len(set(top_dimensions(X, k).tolist()) & set(top_dimensions(Y, k).tolist()))


def top_overlap_replicates(X: np.ndarray, Y: np.ndarray, counts_x: np.ndarray,
                           counts_y: np.ndarray, k: int = 10) -> np.ndarray:
    """:func:`top_overlap` for bootstrap replicates of the rows of ``X`` and of ``Y``.

    Replicate b draws row i of ``X`` ``counts_x[b, i]`` times and row j of ``Y``
    ``counts_y[b, j]`` times (independent resamples: two data sets); each replicate ranks
    the dimensions again by its weighted variances.

    Returns
    -------
    ndarray of shape (n_replicates,), int
    """
    vx, vy = _replicate_variances(X, counts_x), _replicate_variances(Y, counts_y)
    if vx.shape != vy.shape:
        raise ValueError("X and Y need the same width and as many replicates")
    tx = np.argsort(-vx, axis=1, kind="stable")[:, :k]
    ty = np.argsort(-vy, axis=1, kind="stable")[:, :k]
    hit = np.zeros(vx.shape, dtype=bool)
    np.put_along_axis(hit, tx, True, axis=1)
    return np.take_along_axis(hit, ty, axis=1).sum(axis=1)


def variance_share_replicates(X: np.ndarray, counts: np.ndarray,
                              ks: Sequence[int] = (1, 3)) -> np.ndarray:
    """:func:`variance_share` for bootstrap replicates given as item counts.

    ``counts[b, i]`` is how often replicate b draws row i; each replicate's column variances
    come from the count-weighted first two moments (rows centred on the sample mean first, so
    nothing cancels), and the top-k dimensions are chosen again in every replicate.

    Returns
    -------
    ndarray of shape (n_replicates, len(ks))
    """
    var = -np.sort(-_replicate_variances(X, counts), axis=1)
    total = var.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack([var[:, :k].sum(axis=1) / total for k in ks], axis=1)
