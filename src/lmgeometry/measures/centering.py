"""Post-processing of an embedding matrix: centring, scaled centring, removing top PCs.

Biš, Podkorytov and Liu (2021), *Too Much in Common* (NAACL 2021) find that removing the mean
row restores an almost isotropic shape. The three post-processing steps of their paper:

* :func:`center` -- mean removal (Sec. 4.1, eq. 9);
* :func:`scaled_center` -- their "scaled centering" (Sec. 5.2);
* :func:`remove_top_pcs` -- "all-but-the-top" (Mu & Viswanath 2018), in both the Biš et al.
  eq. 9-11 form and Mu & Viswanath's original form, removing :func:`n_top_pcs` components by
  default.

Each returns a new matrix in W's floating dtype (arithmetic in float64, row chunk by row chunk),
or only the rows asked for.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import CHUNK_ROWS, column_mean
from lmgeometry.measures.spectra import (
    _as_matrix,
    _chunks,
    _eigh_desc,
    _flip_signs,
    _map_rows,
    _Moments,
)

__all__ = ["center", "n_top_pcs", "remove_top_pcs", "scaled_center"]


def n_top_pcs(width: int) -> int:
    """Number of top principal components removed by default: D = ceil(width / 100).

    Mu & Viswanath (2018) suggest D ~ d/100; Biš et al. (2021, Sec. 5.1) set D = ceil(d/100).
    """
    if width < 1:
        raise ValueError("width must be positive")
    return math.ceil(width / 100)


@float_arrays("W", "rows")
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


@float_arrays("W", "rows")
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
