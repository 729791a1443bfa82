"""Where a book build's time goes: ``lmgeometry book --profile``.

For every chapter it executes, the book pipeline measures

* the wall time of the execution (kernel start to notebook written);
* each cell's wall time (papermill's per-cell duration, read before the notebook is cleaned:
  the committed notebook keeps no timings) and the slowest cells with their first line;
* the time in ``activations.store.activations``, split into entries built (extraction) and
  cache hits, and in ``report.figures.show`` (figure serialisation), from the chapter's
  :mod:`lmgeometry.trace` events;
* the kernel's peak resident memory (``VmHWM`` of the kernel process, read just before it is
  shut down; Linux).

The rows are kept in ``_build/profile.json`` (a chapter skipped by a warm rebuild keeps the row
of its last execution) and printed as a table by :func:`profile_table`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CellTime",
    "cell_times",
    "ChapterProfile",
    "event_totals",
    "kernel_peak_rss",
    "measuring_kernel_manager",
    "PROFILE_FILE",
    "profile_table",
    "read_profiles",
    "TOP_CELLS",
    "write_profiles",
]

#: Where the rows are written (relative to the book folder).
PROFILE_FILE = "_build/profile.json"

#: Slowest cells listed per chapter.
TOP_CELLS = 3


@dataclass
class CellTime:
    """Wall time of one executed code cell.

    Attributes
    ----------
    index : int
        Position of the cell in the executed notebook (papermill's injected cell counted).
    seconds : float
        papermill's duration of the cell.
    first_line : str
        The cell's first non-blank source line (shortened).
    """

    index: int
    seconds: float
    first_line: str


@dataclass
class ChapterProfile:
    """One chapter's row of the profile table.

    Attributes
    ----------
    chapter : str
        ``NN_name``.
    status : str
        ``"executed"`` in this build, or ``"skipped"`` (the numbers, if any, are those of the
        chapter's last profiled execution).
    wall_s : float or None
        Wall time of the execution.
    cells_s : float
        Sum of the cells' wall times.
    extract_built, extract_hits : int
        Calls of ``activations()`` that built an entry, or found it in the cache.
    extract_built_s, extract_hits_s : float
        Their wall time.
    figures : int
        Figures shown (``report.figures.show``).
    figures_s : float
        Their wall time.
    peak_rss_mib : float or None
        Peak resident memory of the kernel (MiB); None where it cannot be read.
    top_cells : list of CellTime
        The :data:`TOP_CELLS` slowest cells.
    measured_at : str or None
        When the execution finished (UTC, ISO 8601).
    """

    chapter: str
    status: str = "executed"
    wall_s: float | None = None
    cells_s: float = 0.0
    extract_built: int = 0
    extract_built_s: float = 0.0
    extract_hits: int = 0
    extract_hits_s: float = 0.0
    figures: int = 0
    figures_s: float = 0.0
    peak_rss_mib: float | None = None
    top_cells: list[CellTime] = field(default_factory=list)
    measured_at: str | None = None

    @classmethod
    def measured(cls, chapter: str, wall_s: float, cells: Sequence[CellTime],
                 events: Iterable[dict[str, Any]], peak_rss: int | None) -> ChapterProfile:
        """The row of a chapter just executed.

        Parameters
        ----------
        chapter : str
            ``NN_name``.
        wall_s : float
            Wall time of the execution.
        cells : sequence of CellTime
            :func:`cell_times` of the executed notebook.
        events : iterable of dict
            The chapter's trace events.
        peak_rss : int or None
            Peak resident memory of the kernel in bytes.

        Returns
        -------
        ChapterProfile
        """
        slowest = sorted(cells, key=lambda c: -c.seconds)[:TOP_CELLS]
        return cls(chapter=chapter, wall_s=round(wall_s, 3),
                   cells_s=round(sum(c.seconds for c in cells), 3),
                   peak_rss_mib=None if peak_rss is None else round(peak_rss / 2**20, 1),
                   top_cells=slowest,
                   measured_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                   **event_totals(events))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChapterProfile:
        """Inverse of ``dataclasses.asdict``."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["top_cells"] = [CellTime(**c) for c in known.get("top_cells", [])]
        return cls(**known)


def event_totals(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts and seconds of extraction (built / cache hits) and figures in trace events.

    Parameters
    ----------
    events : iterable of dict
        :func:`lmgeometry.trace.read_events` of one execution.

    Returns
    -------
    dict
        ``extract_built``, ``extract_built_s``, ``extract_hits``, ``extract_hits_s``,
        ``figures``, ``figures_s``.
    """
    totals: dict[str, Any] = {"extract_built": 0, "extract_built_s": 0.0, "extract_hits": 0,
                              "extract_hits_s": 0.0, "figures": 0, "figures_s": 0.0}
    for event in events:
        kind, seconds = event.get("event"), float(event.get("seconds") or 0.0)
        if kind == "activations":
            name = "extract_hits" if event.get("hit") else "extract_built"
        elif kind == "figure":
            name = "figures"
        else:
            continue
        totals[name] += 1
        totals[f"{name}_s"] = round(totals[f"{name}_s"] + seconds, 3)
    return totals


def cell_times(nb: Any) -> list[CellTime]:
    """Per-cell wall times of a notebook papermill has just executed (before cleaning).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        With papermill's ``duration`` in each code cell's metadata.

    Returns
    -------
    list of CellTime
        Code cells that have a duration, in notebook order.
    """
    found = []
    for index, cell in enumerate(nb.cells):
        duration = cell.get("metadata", {}).get("papermill", {}).get("duration")
        if cell.get("cell_type") != "code" or duration is None:
            continue
        lines = [line.strip() for line in cell.get("source", "").splitlines() if line.strip()]
        first = lines[0] if lines else ""
        found.append(CellTime(index=index, seconds=round(float(duration), 3),
                              first_line=first if len(first) <= 60 else first[:57] + "..."))
    return found


def kernel_peak_rss(pid: int | None) -> int | None:
    """Peak resident memory of a running process in bytes (``VmHWM``); None if unknown.

    Parameters
    ----------
    pid : int or None
        The kernel's process id.

    Returns
    -------
    int or None
        From ``/proc/<pid>/status`` (Linux); None elsewhere or when the process is gone.
    """
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            value, unit = line.split()[1:3]
            return int(value) * {"kB": 1024, "mB": 2**20}.get(unit, 1)
    return None


def measuring_kernel_manager(sink: dict[str, Any], env: dict[str, str] | None = None) -> type:
    """A kernel manager class that stores the kernel's peak memory in ``sink`` at shutdown.

    The kernel's messages are encrypted (CurveZMQ, ``transport_encryption="auto"``) where zmq
    and jupyter_client can: a kernelspec that declares ``supported_encryption: ["curve"]``
    (:func:`lmgeometry.report.book.interpreter_kernel`) then gets keys.

    Parameters
    ----------
    sink : dict
        Receives the kernel's ``pid`` once it has started, and ``peak_rss`` (bytes or None)
        when it is shut down.
    env : dict, optional
        Environment variables for this kernel only, on top of this process's environment
        (so that chapters executed at the same time in threads each get their own).

    Returns
    -------
    type
        A subclass of ``jupyter_client.AsyncKernelManager`` (nbclient's default), to pass to
        papermill as ``kernel_manager_class``.
    """
    import zmq
    from jupyter_client import AsyncKernelManager

    extra = dict(env or {})
    encrypt = zmq.has("curve") and "transport_encryption" in AsyncKernelManager.class_traits()

    class MeasuringKernelManager(AsyncKernelManager):
        def __init__(self, **kw: Any) -> None:
            # CurveZMQ keys for the kernel (its kernelspec declares it supports them):
            # ipykernel warns on every start that plain TCP is unencrypted.
            if encrypt:
                kw.setdefault("transport_encryption", "auto")
            super().__init__(**kw)

        async def start_kernel(self, **kw: Any) -> None:
            kw["env"] = {**os.environ, **kw.get("env", {}), **extra}
            await super().start_kernel(**kw)
            sink["pid"] = getattr(self.provisioner, "pid", None)  # to stop it on Ctrl-C

        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            pid = getattr(self.provisioner, "pid", None)
            sink.update(pid=pid, peak_rss=kernel_peak_rss(pid))
            await super().shutdown_kernel(now=now, restart=restart)

    return MeasuringKernelManager


def read_profiles(path: Path) -> dict[str, ChapterProfile]:
    """Rows of a profile file by chapter; empty if there is none."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    rows = data.get("chapters", []) if isinstance(data, dict) else []
    return {row["chapter"]: ChapterProfile.from_json(row) for row in rows
            if isinstance(row, dict) and "chapter" in row}


def write_profiles(path: Path, rows: Sequence[ChapterProfile], order: Sequence[str]) -> None:
    """Merge ``rows`` into the profile file (other chapters keep their rows).

    Parameters
    ----------
    path : pathlib.Path
        ``_build/profile.json``.
    rows : sequence of ChapterProfile
        This build's rows.
    order : sequence of str
        Chapter names in toc order (the file's order).
    """
    merged = read_profiles(path)
    merged.update({row.chapter: row for row in rows})
    ranked = sorted(merged.values(), key=lambda r: (order.index(r.chapter)
                                                    if r.chapter in order else len(order),
                                                    r.chapter))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"chapters": [asdict(r) for r in ranked]}, indent=1) + "\n")


def _num(value: float | None, count: int | None = None) -> str:
    if value is None:
        return "-"
    text = f"{value:.1f}" if value >= 10 else f"{value:.2f}"
    return text if count is None else f"{text} ({count})"


def profile_table(rows: Sequence[ChapterProfile]) -> str:
    """The profile as a plain-text table, then the slowest cells of each chapter.

    Parameters
    ----------
    rows : sequence of ChapterProfile
        In toc order.

    Returns
    -------
    str
        Seconds (with counts of calls in parentheses) and MiB.
    """
    header = ["chapter", "status", "wall s", "cells s", "extract built s", "extract hits s",
              "figures s", "peak MiB"]
    body = [[r.chapter, r.status, _num(r.wall_s), _num(r.cells_s if r.wall_s else None),
             _num(r.extract_built_s, r.extract_built), _num(r.extract_hits_s, r.extract_hits),
             _num(r.figures_s, r.figures), _num(r.peak_rss_mib)] for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(line, widths, strict=True)))
             for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(f"slowest cells (top {TOP_CELLS} per chapter, seconds):")
    for r in rows:
        for cell in r.top_cells:
            lines.append(f"  {r.chapter.ljust(widths[0])}  {cell.seconds:8.2f}  "
                         f"cell {cell.index}: {cell.first_line}")
    if any(r.status == "skipped" for r in rows):
        lines.append("skipped chapters show their last profiled execution ('-' if none); "
                     "--force measures every chapter")
    return "\n".join(lines)
