"""Machine-readable results files written next to each executed chapter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lmgeometry.io.files import to_jsonable

__all__ = [
    "load_results",
    "save_results",
    "to_jsonable",
]


def save_results(path: str | Path, results: dict[str, Any]) -> Path:
    """Write ``results`` as indented, key-sorted JSON to ``path`` (atomically)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(to_jsonable(results), indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def load_results(path: str | Path) -> dict[str, Any]:
    """Read a results file written by :func:`save_results`."""
    return json.loads(Path(path).read_text())
