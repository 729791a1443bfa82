"""Chapter 2, "Part of speech" (seed 000): how decodable, and how clustered, a word's POS is.

The page is ``notebooks/02_part_of_speech.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``analysis`` -- the parameters, the probe and cluster passes per layer, the claims
"""

from lmgeometry.chapters.part_of_speech.analysis import (
    PURITY_ADJUSTED,
    PartOfSpeechParams,
    PartOfSpeechResult,
    analyse,
    probe_check,
)

__all__ = [
    "analyse",
    "PartOfSpeechParams",
    "PartOfSpeechResult",
    "probe_check",
    "PURITY_ADJUSTED",
]
