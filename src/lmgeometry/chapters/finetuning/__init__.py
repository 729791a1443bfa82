"""Chapter 7, "Fine-tuning" (seed 003, GPTology): the same measures before and after fine-tuning.

The page is ``notebooks/07_finetuning.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the parameters, the fine-tuned runs, ``analyse`` and the claims
* ``views`` -- the page's views cut from the analysis tables
"""

from lmgeometry.chapters.calibration import SEED003
from lmgeometry.chapters.finetuning.analysis import STATES, FinetuningParams, analyse, prepare
from lmgeometry.chapters.finetuning.views import (
    CKA_COMPARISONS,
    cka_arrays,
    cka_diagonal,
    cka_grids,
    profile_arrays,
    state_profiles,
    threshold_long,
    tsne_panels,
)
from lmgeometry.chapters.rogue_dimensions.analysis import last_layers

__all__ = [
    "analyse",
    "cka_arrays",
    "CKA_COMPARISONS",
    "cka_diagonal",
    "cka_grids",
    "FinetuningParams",
    "last_layers",
    "prepare",
    "profile_arrays",
    "SEED003",
    "state_profiles",
    "STATES",
    "threshold_long",
    "tsne_panels",
]
