"""Chapter 1, "Geometry" (seed 000): per-layer projections, clusters and what drives them.

The page is ``notebooks/01_geometry.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the chapter's parameters, ``analyse`` and its result; the BOS and
  special-token checks
* ``layers`` -- the per-layer pass: cluster profiles, projections, position manifolds
* ``special`` -- which rows are a decoder's first words, special tokens and punctuation
"""

from lmgeometry.chapters.geometry.analysis import (
    FIRST_SHARE,
    MANIFOLD_GAIN,
    PLANAR_SHARE,
    GeometryParams,
    GeometryResult,
    analyse,
    bos_dependence,
    bos_sentences,
    hover_labels,
    special_check,
    special_sentences,
    split_check,
)
from lmgeometry.chapters.geometry.layers import SILHOUETTE

__all__ = [
    "analyse",
    "bos_dependence",
    "bos_sentences",
    "FIRST_SHARE",
    "GeometryParams",
    "GeometryResult",
    "hover_labels",
    "MANIFOLD_GAIN",
    "PLANAR_SHARE",
    "SILHOUETTE",
    "special_check",
    "special_sentences",
    "split_check",
]
