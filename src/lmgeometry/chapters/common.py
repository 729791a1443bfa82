"""What every chapter does the same way: per-layer tables over the models' stores.

A per-layer table is long: one row per (model, layer, ...), with ``model`` (the store's
label), ``layer`` and ``depth`` (layer / last layer, so models of different depths share an
axis). :func:`per_layer` builds one from a function of one store.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations.store import Store
from lmgeometry.report.claims import CLAIM_COLUMNS

__all__ = [
    "BLAS_THREADS_ENV",
    "blas_threads",
    "CONTROLS",
    "ChapterResult",
    "control_rows",
    "controls_for",
    "first_token_flags",
    "per_layer",
    "with_blas_threads",
]

#: Environment variable: BLAS threads of a chapter's analysis (default 1, see :func:`blas_threads`).
BLAS_THREADS_ENV = "LMGEOMETRY_BLAS_THREADS"

F = TypeVar("F", bound=Callable[..., Any])


def blas_threads() -> int:
    """BLAS threads a chapter's analysis runs with: ``$LMGEOMETRY_BLAS_THREADS``, else 1.

    A chapter's analysis is many small dense problems (a logistic head on 2,000 x 768 per layer,
    eigenproblems of 768 x 768, Gram matrices of 872 items). Two OpenBLAS threads gain little on
    them, and when anything else runs on the cores their spin-waiting makes them many times
    slower: on the 2-core development machine, with another job running, chapter 6's tables
    for SmolLM2 took 303 s with two threads and 16 s with one, chapter 4's analysis of SmolLM2
    84 s and 34 s. Wider models (d = 4,096) on many cores gain from threads: set the variable.
    """
    raw = os.environ.get(BLAS_THREADS_ENV, "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{BLAS_THREADS_ENV}={raw!r} is not a positive number of threads; "
                         f"set it to e.g. 1 or 4, or unset it for 1")
    return value


def with_blas_threads(fn: F) -> F:
    """Decorator: run ``fn`` (a chapter's ``analyse``) with :func:`blas_threads` BLAS threads.

    Only BLAS libraries are limited (``threadpoolctl``); torch's own threads, which extraction
    uses, are not.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with threadpool_limits(limits=blas_threads(), user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


#: The seeds' protocol, and the control that leaves out each sentence's first word.
CONTROLS: tuple[str, ...] = ("none", "first word excluded")


@dataclass
class ChapterResult:
    """What a chapter's ``analyse`` returns: tidy tables, claims and a few sentences."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    claims: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(CLAIM_COLUMNS)))
    sentences: list[str] = field(default_factory=list)

    def results(self) -> dict[str, Any]:
        """The numbers to save next to the executed chapter (tables and claims)."""
        return {**self.tables, "claims": self.claims}


def controls_for(store: Store) -> tuple[str, ...]:
    """The controls a store's numbers are computed under: both for decoders, none else."""
    kind = store.meta.get("model", {}).get("kind")
    return CONTROLS if kind == "decoder" else CONTROLS[:1]


def control_rows(store: Store, control: str) -> np.ndarray:
    """Indices of the store's rows that a control keeps (all, or all but first words)."""
    if control == "none":
        return np.arange(store.n_words)
    if control == "first word excluded":
        return np.flatnonzero(store.words["word_index"].to_numpy() > 0)
    raise ValueError(f"unknown control {control!r}; known: {CONTROLS}")


def first_token_flags(claims: pd.DataFrame) -> pd.Series:
    """Per claim row: True when its verdict differs between the controls of its model.

    A verdict that flips when each sentence's first word is left out is driven by the first
    token (the decoder's attention sink), not by the rest of the words. Rows are compared
    within one (seed, claim, model, statistic): a claim tested with two statistics (e.g. two
    estimators) is two tests.
    """
    key = ["seed", "claim", "model", "statistic"]
    n_verdicts = claims.groupby(key)["verdict"].transform("nunique")
    return n_verdicts > 1


def per_layer(stores: Iterable[Store] | Sequence[Store], fn: Callable[..., pd.DataFrame],
              **kwargs: Any) -> pd.DataFrame:
    """``fn(store, **kwargs)`` for every store, concatenated with ``model`` and ``depth``.

    ``fn`` returns a frame with a ``layer`` column; ``model`` (``store.label``) is put first
    and ``depth`` after ``layer`` (replacing any ``depth`` ``fn`` computed).
    """
    frames = []
    for store in stores:
        frame = fn(store, **kwargs)
        if "layer" not in frame.columns:
            raise ValueError(f"{getattr(fn, '__name__', fn)} returned no 'layer' column")
        frame = frame.drop(columns=[c for c in ("model", "depth") if c in frame.columns])
        frame.insert(0, "model", store.label)
        frame.insert(frame.columns.get_loc("layer") + 1, "depth",
                     frame["layer"].map(store.depth).astype(float))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
