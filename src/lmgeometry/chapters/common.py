"""What every chapter does the same way: per-layer tables over the models' stores.

A per-layer table is long: one row per (model, layer, ...), with ``model`` (the store's
label), ``layer`` and ``depth`` (layer / last layer, so models of different depths share an
axis). :func:`per_layer` builds one from a function of one store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from lmgeometry.activations.store import Store

__all__ = ["per_layer"]


def per_layer(stores: Iterable[Store], fn: Callable[..., pd.DataFrame],
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
