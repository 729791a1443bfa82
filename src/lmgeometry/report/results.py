"""Machine-readable results files written next to each executed chapter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lmgeometry.io.files import to_jsonable
from lmgeometry.io.paths import user_path

__all__ = [
    "load_results",
    "save_results",
    "to_jsonable",
]


def save_results(path: str | Path, results: dict[str, Any]) -> Path:
    """Write ``results`` as indented, key-sorted JSON to ``path`` (atomically; ``~`` expanded)."""
    path = user_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(to_jsonable(results), indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def load_results(path: str | Path) -> dict[str, Any]:
    """Read a results file written by :func:`save_results` (``~`` expanded)."""
    return json.loads(user_path(path).read_text())
