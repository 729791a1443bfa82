"""IsoScore of a point cloud (Rudman, Gillman, Rayne and Eickhoff 2022, Algorithm 1).

:func:`isoscore` measures how evenly the variance of a cloud spreads over its principal axes:
1 for isotropic covariance, 0 when all variance lies in one direction. Our implementation
(covariance accumulated over row chunks in float64) and the ``IsoScore`` package's.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import CHUNK_ROWS
from lmgeometry.measures.spectra import _as_matrix, _Moments

__all__ = ["isoscore"]


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


@float_arrays("X")
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
