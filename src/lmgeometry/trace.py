"""What a chapter did while the book pipeline executed it: the store entries it opened and
where its time went.

``lmgeometry book`` names a file in the environment variable :data:`TRACE_ENV` before it starts
a chapter's kernel. Code inside the kernel calls :func:`record` (the activation store when it
opens an entry or builds one, ``report.figures.show`` when it renders a figure), which appends
one JSON line per event to that file. Without the variable (an interactive session, the tests)
:func:`record` does nothing. The pipeline reads the events back with :func:`read_events`: the
store entries go into the chapter's execution manifest (they decide whether the chapter must
run again), the timings into ``lmgeometry book --profile``.

This module imports nothing from the package, so every layer may use it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "enabled",
    "read_events",
    "record",
    "timed",
    "TRACE_ENV",
]

#: Environment variable naming the file that events are appended to.
TRACE_ENV = "LMGEOMETRY_TRACE"


def enabled() -> bool:
    """Whether events are being recorded (:data:`TRACE_ENV` names a file)."""
    return bool(os.environ.get(TRACE_ENV))


def record(event: str, **fields: Any) -> None:
    """Append one event to the trace file, if there is one.

    Parameters
    ----------
    event : str
        What happened (``"store"``, ``"activations"``, ``"figure"``).
    **fields
        JSON-serialisable details (values that are not are written as strings).
    """
    target = os.environ.get(TRACE_ENV)
    if not target:
        return
    line = json.dumps({"event": event, **fields}, sort_keys=True, default=str) + "\n"
    # one write of a short line in append mode: lines of concurrent writers do not interleave
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(line)


@contextmanager
def timed(event: str, **fields: Any) -> Iterator[dict[str, Any]]:
    """Record ``event`` with the wall time of the ``with`` block in ``seconds``.

    Parameters
    ----------
    event : str
        As for :func:`record`.
    **fields
        Details; the block may add more to the yielded dict (e.g. whether it was a cache hit).

    Yields
    ------
    dict
        The event's fields, recorded when the block ends (also when it raises, with
        ``"failed": True``).
    """
    details = dict(fields)
    start = time.perf_counter()
    try:
        yield details
    except BaseException:
        details["failed"] = True
        raise
    finally:
        if enabled():
            record(event, seconds=round(time.perf_counter() - start, 6), **details)


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """The events of a trace file, in the order they were recorded.

    Parameters
    ----------
    path : str or pathlib.Path
        A file written through :func:`record`; a missing file has no events.

    Returns
    -------
    list of dict
        One dict per line; a line that is not JSON (a write cut short) is skipped.
    """
    path = Path(path)
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            events.append(item)
    return events
