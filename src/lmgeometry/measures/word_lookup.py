"""A static embedding, and how a benchmark's words find their vectors in it.

A *static embedding* here is anything that maps a word to one vector: a mapping
``word -> vector`` (a ``dict``, for example the first-principal-component embeddings of
Ethayarajh (2019), or the rows of a model's input embedding matrix keyed by token) or a callable
that returns a vector, or ``None`` for a word it does not cover (:data:`Vectors`).

``_Lookup`` resolves the words of a benchmark under one case rule (:data:`Case`: lower-cased or
as written) and one rule for words without a vector (:data:`OOV`): skip the item, or, as the
Word Embeddings Benchmarks package (Jastrzebski et al. 2017) does, use the mean of all the
embedding's vectors. Every scorer of the word benchmarks (``word_similarity``, ``analogies``,
``categorisation``, ``semeval2012``; run together by :mod:`lmgeometry.measures.wordbench`) reads
vectors through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["Case", "OOV", "Vectors"]


Vectors = Mapping[str, ArrayLike] | Callable[[str], ArrayLike | None]
"""A static embedding: ``word -> vector`` mapping, or a callable returning ``None`` when OOV."""


Case = Literal["lower", "exact"]

OOV = Literal["skip", "mean"]


class _Lookup:
    """Resolve benchmark words to vectors under one case rule and one OOV rule."""

    def __init__(self, vectors: Vectors, case: str, oov: str) -> None:
        if case not in ("lower", "exact"):
            raise ValueError(f"case must be 'lower' or 'exact', not {case!r}")
        if oov not in ("skip", "mean"):
            raise ValueError(f"oov must be 'skip' or 'mean', not {oov!r}")
        self.mapping: Mapping[str, ArrayLike] | None = (
            vectors if isinstance(vectors, Mapping) else None
        )
        if self.mapping is None and not callable(vectors):
            raise TypeError("vectors must be a mapping word -> vector or a callable")
        if oov == "mean" and self.mapping is None:
            raise ValueError("oov='mean' needs the whole vocabulary: pass a mapping")
        self.fn = None if self.mapping is not None else vectors
        self.case = case
        self.oov = oov
        self._cache: dict[str, np.ndarray | None] = {}
        self._mean: np.ndarray | None = None

    def key(self, word: Any) -> str:
        word = str(word)
        return word.lower() if self.case == "lower" else word

    def keys(self, words: pd.Series) -> np.ndarray:
        """:meth:`key` of every word of a column (vectorised)."""
        text = words.astype(str)
        return (text.str.lower() if self.case == "lower" else text).to_numpy(dtype=object)

    def has(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key has a vector (vectorised for a mapping)."""
        if self.mapping is not None:
            known = [k for k, v in self.mapping.items() if v is not None]
            return pd.Index(keys).isin(known)
        return np.array([self.get(k) is not None for k in keys], dtype=bool)

    def get(self, word: Any) -> np.ndarray | None:
        """The word's vector (float64, 1-D), or None when it has none."""
        k = self.key(word)
        if k in self._cache:
            return self._cache[k]
        if self.mapping is not None:
            v = self.mapping.get(k)
        else:
            v = self.fn(k)  # type: ignore[misc]
        out = None if v is None else np.asarray(v, dtype=np.float64).ravel()
        self._cache[k] = out
        return out

    def fill(self, word: Any) -> np.ndarray | None:
        """:meth:`get`, or the mean vector for a missing word when ``oov == 'mean'``."""
        v = self.get(word)
        if v is None and self.oov == "mean":
            return self.mean()
        return v

    def mean(self) -> np.ndarray:
        """Mean of every vector in the mapping (the WEB package's OOV replacement)."""
        if self._mean is None:
            assert self.mapping is not None
            total: np.ndarray | None = None
            n = 0
            for v in self.mapping.values():
                a = np.asarray(v, dtype=np.float64).ravel()
                total = a.copy() if total is None else total + a
                n += 1
            if total is None:
                raise ValueError("the embedding is empty")
            self._mean = total / n
        return self._mean

    def vocabulary(self) -> list[str]:
        """Mapping keys reachable under the case rule (all keys, or the lower-case ones)."""
        if self.mapping is None:
            raise ValueError("a callable embedding has no vocabulary to enumerate")
        return [k for k in self.mapping if self.key(k) == k]
