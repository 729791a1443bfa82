"""Chapter 9, "Attention sink": why decoders split, massive activations and the attention sink,
tested by intervention.

The page is ``notebooks/09_attention_sink.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the token runs, intervened and intact, ``analyse`` and the claims
"""

from lmgeometry.chapters.geometry.analysis import BROKEN_LOSS_RATIO
from lmgeometry.chapters.sink.analysis import (
    KEPT_LOSS_RATIO,
    LABELS,
    SELFSIM_MIN_SENTENCES,
    SinkResult,
    analyse,
    condition_layers,
    findings,
    massive_table,
    sample_sentences,
)

__all__ = [
    "analyse",
    "BROKEN_LOSS_RATIO",
    "condition_layers",
    "findings",
    "KEPT_LOSS_RATIO",
    "LABELS",
    "massive_table",
    "sample_sentences",
    "SELFSIM_MIN_SENTENCES",
    "SinkResult",
]
