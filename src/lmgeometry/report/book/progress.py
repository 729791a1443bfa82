"""What ``lmgeometry book`` says while a chapter runs: which chapter starts and how long its
last run took, which section of it is running, and its time against that estimate.

Every line is a whole line that names its chapter (``03_context_measures`` or ``03``), so the
lines of chapters running at the same time (``--jobs 2``) stay readable, and none redraws
itself (no carriage returns): a terminal and a CI log get the same lines. A chapter's
sections are its Markdown headings; a section is announced when execution reaches its first
code cell (:func:`section_starts`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "cell_sections",
    "chapter_id",
    "clock",
    "end_line",
    "heading_title",
    "last_seconds",
    "section_hook",
    "section_line",
    "section_starts",
    "start_line",
]

#: A Markdown (ATX) heading line: ``## Title``.
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
#: A fenced code block's opening or closing line.
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
#: A Markdown link or image: ``[text](target)``, kept as its text.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on), rounded to the second: ``clock(203.4) == '3:23'``."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def chapter_id(name: str) -> str:
    """The ``NN`` of ``NN_name`` (a name without a number prefix is its own id)."""
    prefix = name.split("_", 1)[0]
    return prefix if prefix.isdigit() else name


def last_seconds(name: str, folders: Iterable[Path]) -> float | None:
    """The wall time of the chapter's last run: ``seconds`` of ``NN_name.run.json`` in the
    first of ``folders`` that holds a readable one (the book's own, then the project's); None
    when there is none."""
    for folder in folders:
        try:
            seconds = json.loads((Path(folder) / f"{name}.run.json").read_text())["seconds"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0:
            return float(seconds)
    return None


def start_line(index: int, total: int, name: str, last: float | None) -> str:
    """``chapter 4 of 12: 03_context_measures (last run took 3:23)``."""
    took = f"last run took {clock(last)}" if last is not None else "no earlier run"
    return f"chapter {index} of {total}: {name} ({took})"


def section_line(name: str, title: str, elapsed: float) -> str:
    """``03: Self-similarity (seed 001, Figure 2) (elapsed 1:02)``."""
    return f"{chapter_id(name)}: {title} (elapsed {clock(elapsed)})"


def end_line(name: str, seconds: float, last: float | None) -> str:
    """``03_context_measures: done in 3:21 (estimate 3:23, from the last run)``."""
    if last is None:
        return f"{name}: done in {clock(seconds)} (no estimate: no earlier run)"
    return f"{name}: done in {clock(seconds)} (estimate {clock(last)}, from the last run)"


def heading_title(markdown: str) -> str | None:
    """The last heading of a Markdown cell as plain text (links as their text, no backticks or
    emphasis marks), or None when the cell has no heading outside a fenced code block."""
    title, fenced = None, False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            text = _LINK.sub(r"\1", match.group(1)).replace("`", "")
            title = re.sub(r"(\*\*|__|\*)", "", text).strip() or title
    return title


def cell_sections(nb: Any) -> list[str | None]:
    """The section each cell of ``nb`` belongs to: the title of the last heading at or before
    it (:func:`heading_title`), None for cells before the first heading."""
    sections: list[str | None] = []
    current = None
    for cell in nb.cells:
        if cell.get("cell_type") == "markdown":
            current = heading_title(cell.get("source", "")) or current
        sections.append(current)
    return sections


def section_starts(nb: Any) -> dict[int, str]:
    """Cell index -> section title, for the first code cell after each heading: where a
    running chapter enters that section. A heading followed by another before any code cell
    is not announced (execution never runs inside it)."""
    starts: dict[int, str] = {}
    pending = False
    for index, (cell, section) in enumerate(zip(nb.cells, cell_sections(nb), strict=True)):
        if cell.get("cell_type") == "markdown" and heading_title(cell.get("source", "")):
            pending = True
        elif (cell.get("cell_type") == "code" and pending and section is not None
              and cell.get("source", "").strip()):  # a blank cell is never executed
            starts[index] = section
            pending = False
    return starts


def section_hook(name: str, nb: Any, start: float,
                 write: Callable[[str], None]) -> Callable[..., None]:
    """nbclient's ``on_cell_execute`` hook for chapter ``name`` executing ``nb``: ``write``
    gets :func:`section_line` (time since ``start``, a :func:`time.perf_counter` reading) when
    a section starts. Cells are known by their ids, which papermill keeps (the parameters cell
    it injects shifts the indices)."""
    starts = {nb.cells[i].get("id"): title for i, title in section_starts(nb).items()
              if nb.cells[i].get("id")}

    def hook(cell: Any, **_: Any) -> None:
        title = starts.get(cell.get("id"))
        if title is not None:
            write("[book] " + section_line(name, title, time.perf_counter() - start))

    return hook
