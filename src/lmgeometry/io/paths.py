"""Where lmgeometry keeps its caches.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "cache_dir",
    "CACHE_ENV",
    "data_mirror",
    "MIRROR_ENV",
]


CACHE_ENV = "LMGEOMETRY_CACHE"

MIRROR_ENV = "LMGEOMETRY_DATA_MIRROR"


def cache_dir(*parts: str) -> Path:
    """Return (and create) a folder under the cache root.

    The root is ``$LMGEOMETRY_CACHE`` when set, else ``~/.cache/lmgeometry``.
    """
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "lmgeometry")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_mirror() -> Path | None:
    """The local data mirror named by ``$LMGEOMETRY_DATA_MIRROR``, or None."""
    value = os.environ.get(MIRROR_ENV)
    return Path(value).expanduser() if value else None
