"""Plain JSON from numpy and pandas values, for meta files and results files; readable sizes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["human_size", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Convert numpy / pandas values into plain JSON types (NaN and inf become None)."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, pd.DataFrame):
        return to_jsonable(value.to_dict(orient="records"))
    if isinstance(value, pd.Series):
        return to_jsonable(value.to_dict())
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def human_size(n: float) -> str:
    """Bytes as a short readable size: ``"512 B"``, ``"3.4 KiB"``, ``"1.2 GiB"``."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
