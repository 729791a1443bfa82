"""Massive activations: a few hidden dimensions with values thousands of times the median.

Sun et al. (2024, "Massive activations in large language models") find, in most large
language models, a handful of activations at fixed dimensions whose magnitude is about 10^3 to
10^4 times the median magnitude of their layer; they appear at the sequence's first token (and
at a few delimiter tokens), from an early layer on, stay nearly constant across inputs, and act
as a bias term through attention: the attention sink of Xiao et al. (2024). The measures here
take one layer's token vectors (rows) and say how large the largest activations are, where
they lie, and which dimensions carry them at the first position.

Examples
--------
>>> import numpy as np
>>> H = np.ones((4, 3)); H[0, 2] = 500.0
>>> magnitude_ratio(H)
500.0
>>> massive_dimensions(H, np.array([True, False, False, False])).tolist()
[2]
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import silhouette_samples

from lmgeometry.measures.arrays import float_arrays

__all__ = [
    "first_token_silhouette",
    "joining_silhouette",
    "MASSIVE_RATIO",
    "magnitude_ratio",
    "massive_dimensions",
    "top_activations",
]

#: An activation is massive when its magnitude is at least this multiple of its layer's median
#: magnitude. Sun et al. (2024) call activations massive at about 1,000 times the median (and
#: above 100 in absolute value); 100 times, scale-free, keeps the smaller models' outliers
#: (SmolLM2's first-position dimensions reach a few hundred times the median in its early
#: layers) and none of the encoders' (their largest is at most 81 times the median).
MASSIVE_RATIO = 100.0


def _magnitudes(H: np.ndarray) -> np.ndarray:
    A = np.abs(np.asarray(H, dtype=np.float64))
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"H must be a non-empty (tokens, width) matrix, not {A.shape}")
    return A


@float_arrays("H")
def magnitude_ratio(H: np.ndarray) -> float:
    """The layer's largest activation magnitude over its median magnitude.

    .. math:: r = \\max_{i,d} |h_{i,d}| \\,/\\, \\operatorname{median}_{i,d} |h_{i,d}|

    (Sun et al. 2024, section 2: the top activations against the median). Invariant to scaling
    the layer; NaN when the median is 0.

    Parameters
    ----------
    H : ndarray of shape (tokens, width)

    Returns
    -------
    float
    """
    A = _magnitudes(H)
    median = float(np.median(A))
    return float(A.max() / median) if median > 0 else float("nan")


def top_activations(H: np.ndarray, k: int = 3) -> list[tuple[int, int, float]]:
    """The ``k`` largest activations by magnitude: ``(row, dimension, value)``, largest first."""
    A = _magnitudes(H)
    flat = np.argsort(A, axis=None)[::-1][:k]
    rows, dims = np.unravel_index(flat, A.shape)
    H = np.asarray(H)
    return [(int(r), int(d), float(H[r, d])) for r, d in zip(rows, dims, strict=True)]


@float_arrays("H", "first")
def massive_dimensions(H: np.ndarray, first: np.ndarray, ratio: float = MASSIVE_RATIO
                       ) -> np.ndarray:
    """The dimensions that carry massive activations at the first position of most sequences.

    Dimension ``d`` is massive at the first position when the median over sequences of
    ``|h_{0,d}|`` is at least ``ratio`` times the median magnitude of the whole layer (every
    token, every dimension): a property of the model, not of one input (Sun et al. 2024 find
    the same dimensions across inputs).

    Parameters
    ----------
    H : ndarray of shape (tokens, width)
        One layer's token vectors.
    first : boolean array of shape (tokens,)
        The rows at the first position of their sequence.
    ratio : float
        The multiple of the median magnitude (:data:`MASSIVE_RATIO`).

    Returns
    -------
    ndarray of int
        Sorted dimensions (empty when none is massive, or no row is a first position).
    """
    A = _magnitudes(H)
    first = np.asarray(first, dtype=bool)
    if first.shape != (len(A),):
        raise ValueError("first must have one flag per row of H")
    median = float(np.median(A))
    if not first.any() or median == 0:
        return np.array([], dtype=np.int64)
    return np.flatnonzero(np.median(A[first], axis=0) >= ratio * median)


def first_token_silhouette(Z: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each first-position row's silhouette in the partition {first positions, the rest}.

    .. math:: s_i = \\frac{b_i - a_i}{\\max(a_i, b_i)}

    with ``a_i`` the mean euclidean distance of first-position row ``i`` to the other
    first-position rows and ``b_i`` its mean distance to the rest (Rousseeuw 1987). Their mean
    says whether the first tokens form a cluster of their own, whatever k-means finds: near 1
    when they lie together far from every other token, near 0 or below when they mix in. On
    the scale of Kaufman & Rousseeuw (1990), 0.5 or more is a reasonable cluster.

    Parameters
    ----------
    Z : ndarray of shape (tokens, k)
        Coordinates (e.g. the layer's top principal components).
    first : boolean array of shape (tokens,)

    Returns
    -------
    ndarray
        One silhouette per first-position row (empty when fewer than two rows are first
        positions or none is not).
    """
    first = np.asarray(first, dtype=bool)
    if first.shape != (len(Z),):
        raise ValueError("first must have one flag per row of Z")
    if first.sum() < 2 or first.all():
        return np.array([])
    return silhouette_samples(np.asarray(Z, dtype=np.float64), first.astype(int))[first]


def joining_silhouette(Z: np.ndarray, rows: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each of ``rows``' silhouette as if it belonged to ``group``, against every other row.

    .. math:: s_i = \\frac{b_i - a_i}{\\max(a_i, b_i)}

    with ``a_i`` the mean euclidean distance of row ``i`` to the ``group`` rows and ``b_i`` its
    mean distance to the rest (neither in ``group`` nor in ``rows``): Rousseeuw (1987)'s
    silhouette of a row that is not one of the group's, scored as if it were. Near 1: the row
    lies with the group, far from the rest; near 0: between them; below 0: with the rest. It
    asks whether tokens of another kind (a later token cut off from its context) join a
    cluster (the first tokens, :func:`first_token_silhouette`) without changing the cluster.

    Parameters
    ----------
    Z : ndarray of shape (n, k)
        Coordinates.
    rows, group : boolean arrays of shape (n,)
        The rows scored and the group they are scored against; disjoint.

    Returns
    -------
    ndarray
        One silhouette per ``rows`` row, in order (empty when there is none, when ``group``
        has no row or when no row is left for the rest).

    Examples
    --------
    >>> Z = np.array([[0.0], [0.0], [10.0], [10.0], [0.5]])
    >>> group = np.array([True, True, False, False, False])
    >>> joining_silhouette(Z, np.array([False, False, False, False, True]), group).round(2)
    array([0.95])
    """
    rows, group = np.asarray(rows, dtype=bool), np.asarray(group, dtype=bool)
    if rows.shape != (len(Z),) or group.shape != (len(Z),):
        raise ValueError("rows and group must have one flag per row of Z")
    if (rows & group).any():
        raise ValueError("rows and group must be disjoint: a row scored as joining the group "
                         "cannot already be one of it")
    rest = ~rows & ~group
    if not rows.any() or not group.any() or not rest.any():
        return np.array([])
    from scipy.spatial.distance import cdist

    X = np.asarray(Z, dtype=np.float64)
    a = cdist(X[rows], X[group]).mean(axis=1)
    b = cdist(X[rows], X[rest]).mean(axis=1)
    top = np.maximum(a, b)
    return np.divide(b - a, top, out=np.zeros_like(top), where=top > 0)
