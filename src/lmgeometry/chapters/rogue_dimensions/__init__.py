"""Chapter 6, "Rogue dimensions" (seed 003, GPTology): layer-by-layer CKA, rogue dimensions and
one-dimension classifiers.

The page is ``notebooks/06_rogue_dimensions.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the parameters, the task tables, ``analyse`` and the claims
"""

from lmgeometry.chapters.calibration import SEED003
from lmgeometry.chapters.rogue_dimensions.analysis import (
    RogueParams,
    Task,
    accuracy_long,
    analyse,
    cka_matrices,
    cross_best_long,
    last_layers,
    task_profiles,
)

__all__ = [
    "accuracy_long",
    "analyse",
    "cka_matrices",
    "cross_best_long",
    "last_layers",
    "RogueParams",
    "SEED003",
    "Task",
    "task_profiles",
]
