"""Chapter 5, "Senses" (seeds 000 and 001): sense separability, WiC and polysemy, per layer.

The page is ``notebooks/05_senses.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the parameters, ``analyse`` and the claims
* ``semcor`` -- SemCor: 1-NN sense accuracy, silhouettes and 2-D views
* ``wic`` -- Word-in-Context: a cosine threshold per layer
* ``polysemy`` -- self-similarity against sense and context counts (seed 001)
"""

from lmgeometry.chapters.senses.analysis import (
    BETA,
    SILHOUETTE,
    WIC_ACCURACY,
    SensesParams,
    SensesResult,
    analyse,
    best_rows,
    coefficients_long,
    polysemy_means,
    view_accuracy_table,
)
from lmgeometry.chapters.senses.semcor import spread_layers

__all__ = [
    "analyse",
    "best_rows",
    "BETA",
    "coefficients_long",
    "polysemy_means",
    "SensesParams",
    "SensesResult",
    "SILHOUETTE",
    "spread_layers",
    "view_accuracy_table",
    "WIC_ACCURACY",
]
