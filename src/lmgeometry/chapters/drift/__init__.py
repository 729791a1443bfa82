"""Chapter 4, "Drift and centering" (seed 004): the embedding matrix W and hidden-state isotropy.

The page is ``notebooks/04_drift_and_centering.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the parameters and ``analyse``
* ``tokens`` -- token frequencies of a reference corpus, per tokenizer
* ``matrix`` -- W under each post-processing: isotropy, drift, common direction
* ``words`` -- word similarity under each post-processing (seed 004's Tables 2-3)
* ``claims`` -- seed 004's claims as claim records
"""

from lmgeometry.chapters.drift.analysis import (
    DriftParams,
    analyse,
    hidden_check,
    isotropy_long,
    wordsim_table,
)

__all__ = [
    "analyse",
    "DriftParams",
    "hidden_check",
    "isotropy_long",
    "wordsim_table",
]
