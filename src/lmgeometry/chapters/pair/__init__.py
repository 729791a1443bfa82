"""Chapter 10, "A controlled pair": an encoder and a decoder trained here, identical but for
their objective.

The page is ``notebooks/10_controlled_pair.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- training the runs, ``analyse`` over their checkpoints
* ``claims`` -- the pair's own verdicts: did each run learn, the drift intervention
* ``sentences`` -- the sentences the page generates from the tables
"""

from lmgeometry.chapters.pair.analysis import LABELS, PairResult, analyse, run_settings, train_runs
from lmgeometry.chapters.pair.claims import LEARNED_GAIN, LEARNED_RULE

__all__ = [
    "analyse",
    "LABELS",
    "LEARNED_GAIN",
    "LEARNED_RULE",
    "PairResult",
    "run_settings",
    "train_runs",
]
