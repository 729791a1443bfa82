"""Maximum explainable variance (Ethayarajh 2019, eq. 3): the first principal component's share.

The share of an occurrence matrix's variance along its first principal component
(:func:`max_explainable_variance`, centred or not), the ratio the authors' ``TruncatedSVD``
reports instead (:func:`truncated_svd_variance_ratio`: their released per-word MEV and their
MEV baseline; ``docs/SEED001_ESTIMATORS.md``), and the MEV of thousands of words at once
under any of the three (batched by size; a word larger than a chunk of a streamed layer read in
chunks). The eigensolvers here (dense up to 64 rows, Lanczos above, a group's Gram matrix read
in chunks, centring that recognises rounding-level variance) also give the PC1 directions of
:mod:`lmgeometry.measures.static`.

Many small eigenproblems (per-word MEV, PC1) run with single-threaded BLAS (``threadpoolctl``):
they gain nothing from threads, and oversubscribed OpenBLAS threads slow them down by orders of
magnitude on shared cores.

Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.unit_rows import _UnitReader

__all__ = ["max_explainable_variance", "MevMethod", "truncated_svd_variance_ratio"]


MevMethod = Literal["centered", "uncentered", "truncated_svd"]



_BATCH_ELEMENTS = 1 << 22  # float64 elements per batched-eigenproblem stack (32 MiB)



_DENSE_EIG_MAX = 64  # below this size a dense eigensolver beats Lanczos



def _top_eig(X: np.ndarray, vector: bool = False) -> tuple[float, np.ndarray | None]:
    """Largest eigenvalue of ``X^T X`` (= ``sigma_1^2`` of ``X``) and, if asked, its unit
    eigenvector (the top right singular vector of ``X``).

    Uses the smaller of the two Gram matrices; above ``_DENSE_EIG_MAX`` rows and columns it
    runs Lanczos on it (``scipy.sparse.linalg.eigsh``, relative tolerance 1e-9, fixed start
    vector), which avoids an ``O(m^3)`` dense eigensolve.
    """
    n, d = X.shape
    if min(n, d) == 0:
        return 0.0, (np.zeros(d) if vector else None)
    G = X @ X.T if n <= d else X.T @ X  # one GEMM beats many memory-bound GEMVs
    lam, top = _gram_top(G, vector)
    if not vector:
        return lam, None
    v = X.T @ top if n <= d else top
    nv = np.linalg.norm(v)
    return lam, (v / nv if nv > 0 else v)



def _gram_top(G: np.ndarray, vector: bool = False) -> tuple[float, np.ndarray]:
    """Largest eigenvalue of a symmetric PSD matrix and its eigenvector (zeros if ``G`` is
    zero, or if not asked): dense up to ``_DENSE_EIG_MAX``, else Lanczos as in :func:`_top_eig`."""
    m = len(G)
    if m <= _DENSE_EIG_MAX:
        if not vector:
            return float(np.linalg.eigvalsh(G)[-1]), np.zeros(m)
        vals, vecs = np.linalg.eigh(G)
        return float(vals[-1]), vecs[:, -1]
    if not np.any(G):  # a zero matrix (e.g. identical rows, centred): ARPACK would fail
        return 0.0, np.zeros(m)
    v0 = np.random.default_rng(0).standard_normal(m)
    vals, vecs = spla.eigsh(G, k=1, which="LA", tol=1e-9, v0=v0)
    return float(vals[0]), vecs[:, 0]



def _streamed_gram(U: _UnitReader, norms: np.ndarray, rows: np.ndarray, centered: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``Z^T Z`` (d x d) and the mean row of a group too large to hold, read in chunks.

    ``Z`` holds the raw rows ``norms[g] * U[g]`` divided by their largest norm (one positive
    factor: MEV and PC1 do not change), centred if asked; rows that are all equal up to
    rounding give a zero matrix, by :func:`_center`'s rule. Two passes over the rows (the
    mean, then the centred products); memory O(d^2 + chunk_rows d).
    """
    nr = norms[rows]
    top = nr.max() if len(nr) else 0.0
    scale = nr / top if top > 0 else np.zeros_like(nr)
    parts = [slice(start, start + U.chunk_rows) for start in range(0, len(rows), U.chunk_rows)]
    d = U.shape[1]
    total, largest = np.zeros(d), 0.0
    for p in parts:
        Z = U[rows[p]] * scale[p, None]
        total += Z.sum(axis=0)
        largest = max(largest, float(np.abs(Z).max()))
    mean = total / len(rows)
    G, spread = np.zeros((d, d)), 0.0
    for p in parts:
        Z = U[rows[p]] * scale[p, None]
        if centered:
            Z -= mean
            spread = max(spread, float(np.abs(Z).max()))
        G += Z.T @ Z
    if centered and spread <= 4 * len(rows) * np.finfo(np.float64).eps * largest:
        G[:] = 0.0
    return G, mean



def _top_share(X: np.ndarray) -> float:
    """``sigma_1^2 / sum_i sigma_i^2`` of a float64 matrix (NaN if it is all zero)."""
    total = float(np.einsum("ij,ij->", X, X))
    if total == 0.0:
        return float("nan")
    return float(np.clip(_top_eig(X)[0] / total, 0.0, 1.0))



def _center(X: np.ndarray) -> np.ndarray:
    """Subtract the mean row of each matrix in a (..., n, d) stack, in place.

    A matrix whose residual is at rounding level (``max |x - mean| <= 4 n eps max |x|``, i.e.
    all rows equal up to float error) is set exactly to zero, so that "no variance" is
    recognised instead of measuring the directions of rounding noise.
    """
    n = X.shape[-2]
    top = np.abs(X).max(axis=(-2, -1), keepdims=True)
    X -= X.mean(axis=-2, keepdims=True)
    flat = np.abs(X).max(axis=(-2, -1), keepdims=True) <= 4 * n * np.finfo(np.float64).eps * top
    X *= ~flat
    return X



def _scaled(X: np.ndarray, centered: bool) -> np.ndarray:
    X = np.array(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("rows must be finite (found NaN or infinity)")
    scale = np.abs(X).max() if X.size else 0.0
    if scale > 0:
        X /= scale  # every ratio below is invariant to one global positive scale
    if centered:
        _center(X)
    return X



@float_arrays("X")
def max_explainable_variance(X: np.ndarray, centered: bool = False) -> float:
    """Maximum explainable variance (Ethayarajh 2019, eq. 3).

    .. math:: \\mathrm{MEV}(w) = \\frac{\\sigma_1^2}{\\sum_i \\sigma_i^2}

    with ``sigma_i`` the singular values of the occurrence matrix ``X`` (of ``X - mean(X)``
    if ``centered``). The paper's eq. 3 is stated on ``X`` itself but read as "the proportion
    of variance explained by the first principal component". The authors' ``analyze.py``
    computed it with ``TruncatedSVD`` when it made the released numbers
    (:func:`truncated_svd_variance_ratio`) and with ``sklearn.decomposition.PCA``
    (``explained_variance_ratio_[0]``, i.e. centred) from December 2019 on, each reported as
    ``min(1, round(MEV, 3))``. Centred, the share is at least ``1 / min(n - 1, d)`` for ``n``
    rows in ``d`` dimensions (the largest of ``r`` non-zero eigenvalues is at least their
    mean). NaN for an all-zero matrix, and so, when centred, for rows that are all equal (up to
    rounding). Invariant to one global positive scale, not to per-row scaling; centred, also to
    a translation.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    centered : bool
        Subtract the column means first.

    Returns
    -------
    float in [0, 1]
    """
    return _top_share(_scaled(X, centered))



def truncated_svd_variance_ratio(X: np.ndarray) -> float:
    """First ``explained_variance_ratio_`` of ``sklearn.decomposition.TruncatedSVD`` (exact).

    What the authors' ``analyze.py`` reports as MEV where it uses
    ``TruncatedSVD(n_components=100).fit(X).explained_variance_ratio_[0]``: every word's MEV in
    its first version (which made the released ``variance_explained.csv``) and the MEV
    baseline of random words in every version (``docs/SEED001_ESTIMATORS.md``). Truncated SVD
    does not centre, so its first direction ``v_1`` is the top right singular vector of the
    *uncentred* ``X``; but scikit-learn (0.2x as in 2019 and 1.9 alike) reports the *centred*
    variance of the projections ``X v_1`` over the total centred variance:

    .. math:: r_{\\mathrm{TSVD}}(X) = \\frac{\\operatorname{Var}(X v_1)}
              {\\sum_k \\operatorname{Var}(X_{:,k})}
              = \\frac{v_1^\\top C v_1}{\\operatorname{tr} C},
              \\qquad C = \\tfrac{1}{n}(X - \\bar x)^\\top (X - \\bar x).

    This is neither the paper's definition nor an uncentred ``sigma_1^2 / sum sigma_i^2``, and
    it has no floor: the centred PCA's share is the largest ``v^T C v / tr C`` over unit ``v``,
    so ``0 <= r_TSVD <= `` centred MEV, but not ``>= 1 / min(n - 1, d)``. For a cloud far from
    the origin ``v_1`` points at the mean and the ratio is the share of the variance along
    the mean direction: about ``1 / d`` when the spread is isotropic, whatever ``n``, and 0
    when the spread is orthogonal to the mean. Scikit-learn's randomized solver (``n_iter=5``,
    110 random directions) is exact up to rounding for ``n <= 110`` rows; here the exact top
    singular vector is used for every ``n``. NaN if ``X`` has no variance. Invariant to one
    global positive scale and to rotations, not to translations.

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    float in [0, 1]
    """
    X = _scaled(X, centered=False)
    Z = _center(X.copy())
    total = float(np.einsum("ij,ij->", Z, Z))
    if total == 0.0:
        return float("nan")
    _, v = _top_eig(X, vector=True)  # direction from the uncentred matrix
    proj = Z @ v  # centred projections: n Var(X v_1)
    return float(np.clip(proj @ proj / total, 0.0, 1.0))



def _mev_of(X: np.ndarray, method: MevMethod) -> float:
    if method == "truncated_svd":
        return truncated_svd_variance_ratio(X)
    _check_method(method)
    return max_explainable_variance(X, centered=method == "centered")



def _check_method(method: str) -> None:
    if method not in ("centered", "uncentered", "truncated_svd"):
        raise ValueError(f"unknown MEV method {method!r}; choose 'centered', 'uncentered' or "
                         "'truncated_svd'")



def _gram_share(G: np.ndarray, Gc: np.ndarray | None) -> float:
    """MEV from a group's d x d Gram matrix ``G`` (centred or not): ``lambda_1 / tr(G)``; with
    the centred Gram matrix ``Gc`` also given, the TruncatedSVD ratio ``v_1^T Gc v_1 / tr(Gc)``
    with ``v_1`` the top eigenvector of the uncentred ``G``. NaN without variance."""
    if Gc is None:
        total = float(np.trace(G))
        return float(np.clip(_gram_top(G)[0] / total, 0.0, 1.0)) if total > 0 else np.nan
    total = float(np.trace(Gc))
    if total <= 0:
        return np.nan
    v = _gram_top(G, vector=True)[1]
    return float(np.clip(v @ Gc @ v / total, 0.0, 1.0))



def _batch_shares(X: np.ndarray, method: MevMethod) -> np.ndarray:
    """MEV of each matrix of a (k, n, d) stack of scaled rows (modified in place)."""
    if method == "truncated_svd":
        _, vecs = np.linalg.eigh(X @ X.transpose(0, 2, 1))  # uncentred: v_1 ~ X^T u_1
        V = np.einsum("kn,knd->kd", vecs[:, :, -1], X)
        nv = np.linalg.norm(V, axis=1, keepdims=True)
        V = np.divide(V, nv, out=np.zeros_like(V), where=nv > 0)
        _center(X)
        total = np.einsum("kij,kij->k", X, X)
        top = np.sum(np.einsum("knd,kd->kn", X, V) ** 2, axis=1)  # n Var(X v_1)
    else:
        if method == "centered":
            _center(X)
        total = np.einsum("kij,kij->k", X, X)
        top = np.linalg.eigvalsh(X @ X.transpose(0, 2, 1))[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, top / total, np.nan)
    return np.clip(share, 0.0, 1.0)



def _mev_many_impl(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], method: MevMethod
) -> np.ndarray:
    """MEV of the raw rows ``norms[g] * U[g]`` of every index group, batched by group size."""
    _check_method(method)
    out = np.full(len(groups), np.nan)
    d = U.shape[1]
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    for n in np.unique(sizes):
        which = np.flatnonzero(sizes == n)
        if n == 0:
            continue
        if isinstance(U, _UnitReader) and n > U.chunk_rows:  # a group larger than a chunk
            for w in which:
                G, _ = _streamed_gram(U, norms, groups[w], method == "centered")
                Gc = (_streamed_gram(U, norms, groups[w], True)[0]
                      if method == "truncated_svd" else None)
                out[w] = _gram_share(G, Gc)
            continue
        if n > _DENSE_EIG_MAX:
            for w in which:
                out[w] = _mev_of(U[groups[w]] * norms[groups[w], None], method)
            continue
        per = max(1, _BATCH_ELEMENTS // int(n * d))
        for start in range(0, len(which), per):
            ws = which[start : start + per]
            idx = np.stack([groups[w] for w in ws])  # (k, n)
            nr = norms[idx]
            top = nr.max(axis=1, keepdims=True)
            scale = np.divide(nr, top, out=np.zeros_like(nr), where=top > 0)
            out[ws] = _batch_shares(U[idx] * scale[..., None], method)  # rows of norm <= 1
    return out



def _mev_many(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], method: MevMethod
) -> np.ndarray:
    """MEV of every index group (see ``_mev_many_impl``) with single-threaded BLAS.

    ``method`` is that of :func:`lmgeometry.measures.baselines.mev_baseline`: ``"centered"``
    (PCA), ``"uncentered"`` or ``"truncated_svd"`` (:func:`truncated_svd_variance_ratio`).
    Thousands of small Gram/eigen problems gain nothing from BLAS threads, and on shared,
    oversubscribed cores OpenBLAS threads spin-waiting make them up to 100x slower.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _mev_many_impl(U, norms, groups, method)
