"""What every chapter does the same way: per-layer tables over the models' stores.

A per-layer table is long: one row per (model, layer, ...), with ``model`` (the store's
label), ``layer`` and ``depth`` (layer / last layer, so models of different depths share an
axis). :func:`per_layer` builds one from a function of one store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.report.claims import CLAIM_COLUMNS

__all__ = [
    "CONTROLS",
    "ChapterResult",
    "control_rows",
    "controls_for",
    "first_token_flags",
    "per_layer",
]

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
