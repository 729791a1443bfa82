"""Chapter 8, "Model zoo" (seed 000's closing gallery): every model on one corpus, side by side.

The page is ``notebooks/08_model_zoo.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the parameters, ``analyse`` and the claims
"""

from lmgeometry.chapters.zoo.analysis import (
    CKA_DIFFERENT,
    ZooParams,
    ZooResult,
    analyse,
    fingerprint_long,
)

__all__ = [
    "analyse",
    "CKA_DIFFERENT",
    "fingerprint_long",
    "ZooParams",
    "ZooResult",
]
