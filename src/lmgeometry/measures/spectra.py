"""The spectrum and shape of an embedding matrix W, in streaming passes over its rows.

Biš, Podkorytov and Liu (2021), *Too Much in Common* (NAACL 2021; code
``danielbis/tooMuchInCommon``) show that a common shift of the token embeddings opens a gap
between the singular values and makes the uncentred 2-D view look like a cone. This module has
the figures' measures and the streaming machinery the other Biš et al. modules share:

* :func:`singular_values`, :func:`project_2d`, :func:`spectral_views` -- singular values and
  the 2-D projections on the top singular vectors, before and after centring (Fig. 1);
* :func:`toy_sphere_shift` -- points on a shifted sphere and their singular values (Fig. 2);
* :func:`norm_distribution` -- the row norms (Figs. 5-6);
* the shared helpers: ``_Moments`` (W^T W, the row sum, the row norms and the unit-row sum in
  one pass), descending eigen-decompositions with deterministic signs, and ``_map_rows`` (a
  row-wise transform chunk by chunk).

Everything that touches all rows streams over row chunks in float64, so a Gemma-sized
262,144 x 640 float32 matrix is processed without any full-size copy (see
``benchmarks/isotropy.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import CHUNK_ROWS, as_rows, column_mean

__all__ = [
    "norm_distribution",
    "project_2d",
    "singular_values",
    "spectral_views",
    "toy_sphere_shift",
]


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


@float_arrays("W")
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
