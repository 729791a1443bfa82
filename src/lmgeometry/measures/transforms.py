"""The transforms of one layer's vectors under which the sense measures are computed.

:data:`TRANSFORMS` -- raw, top principal components removed, standardised; :class:`LayerFit`
-- their statistics fitted once on a sample of a layer's rows; :func:`transform` -- one
layer's vectors as the sense measures see them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "LayerFit",
    "transform",
    "TRANSFORMS",
]


TRANSFORMS: tuple[str, ...] = ("raw", "top PCs removed", "standardised")


@dataclass(frozen=True)
class LayerFit:
    """What the sense measures estimate on a sample of one layer's rows, once.

    ``mean`` and ``sd`` of every dimension and the ``axes``, the leading principal directions
    of the centred sample (rows of a ``(k, d)`` array, largest variance first; eigenvectors of
    its scatter matrix). :meth:`apply` gives the :data:`TRANSFORMS` of other rows,
    :meth:`project` their coordinates on the first axes.
    """

    mean: np.ndarray
    sd: np.ndarray
    axes: np.ndarray

    @classmethod
    def of(cls, F: ArrayLike, k: int | None = None) -> LayerFit:
        """Fit on the rows of ``F``; ``k`` axes (default ``max(2, ceil(d / 100))``)."""
        from scipy.linalg import eigh

        F = np.asarray(F, dtype=np.float64)
        if F.ndim != 2 or len(F) < 2:
            raise ValueError(f"F must be (m >= 2, d), not {F.shape}")
        d = F.shape[1]
        k = max(2, math.ceil(d / 100)) if k is None else int(k)
        mean = F.mean(axis=0)
        Fc = F - mean
        _, vecs = eigh(Fc.T @ Fc, subset_by_index=[d - k, d - 1])
        return cls(mean, Fc.std(axis=0), vecs[:, ::-1].T.copy())

    def apply(self, X: ArrayLike, how: str = "raw") -> np.ndarray:
        """``X`` as :func:`transform` ``how`` sees it, with this fit's statistics."""
        X = np.asarray(X, dtype=np.float64)
        if how == "raw":
            return X
        if how == "top PCs removed":
            top = self.axes[:math.ceil(X.shape[1] / 100)]
            Xc = X - self.mean
            return Xc - (Xc @ top.T) @ top
        if how == "standardised":
            return (X - self.mean) / np.where(self.sd > 0, self.sd, 1.0)
        raise ValueError(f"how must be one of {TRANSFORMS}, not {how!r}")

    def project(self, X: ArrayLike, k: int = 2) -> np.ndarray:
        """Coordinates of ``X`` on the first ``k`` axes (a PCA of the fitted rows)."""
        return (np.asarray(X, dtype=np.float64) - self.mean) @ self.axes[:k].T


def transform(X: ArrayLike, how: str = "raw", *, fit: ArrayLike | None = None) -> np.ndarray:
    """One layer's vectors as the sense measures see them.

    ``"raw"``; ``"top PCs removed"``: centred, then the top ``ceil(d / 100)`` principal
    directions projected out (Mu & Viswanath 2018, as
    :func:`lmgeometry.measures.centering.remove_top_pcs`);
    ``"standardised"``: every dimension centred and divided by its standard deviation (so no
    rogue dimension dominates a cosine; Timkey & van Schijndel 2021).

    The mean, the principal directions and the standard deviations are estimated on ``fit``
    (default ``X`` itself: e.g. a sample of all the layer's words) and applied to ``X``
    (:class:`LayerFit`).
    """
    X = np.asarray(X, dtype=np.float64)
    if how == "raw":
        return X
    if how not in TRANSFORMS:
        raise ValueError(f"how must be one of {TRANSFORMS}, not {how!r}")
    F = X if fit is None else np.asarray(fit, dtype=np.float64)
    if F.ndim != 2 or F.shape[1] != X.shape[1]:
        raise ValueError(f"fit must be (m, {X.shape[1]}), not {F.shape}")
    return LayerFit.of(F).apply(X, how)
