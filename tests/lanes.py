"""Longest files first, and each file's lane and seconds, for pytest-xdist runs (issue 43).

``make test`` runs its two steps with pytest-xdist by file: the test files with ``--dist
loadfile``, the executed chapters (nbval) with ``--dist loadscope``; each file is one work
unit, run whole by one worker. Both with ``--no-loadscope-reorder``: xdist then hands the
units out in collection order (by default it reorders them by number of tests, which put the
test files and chapters that take longest but hold few tests last, with the other worker idle
at the end). :func:`longest_first` orders the collection by each file's recorded seconds, the
longest first (the longest-processing-time-first rule of list scheduling), so the run's wall
time comes close to the larger of the files' total over the workers and the longest file.

:class:`LaneReport` ends the run with one line per file (the worker it ran on, its seconds,
its start and end from the run's first test), from which the recorded seconds are updated:
``book/conftest.py`` (chapters) and ``tests/conftest.py`` (test files) use both, and
``benchmarks/cold_ci.py`` records the lines. ``benchmarks/xdist_lanes.py`` computes the schedules
with xdist's own scheduler.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def longest_first_files(files: list[Path], seconds: Callable[[Path], float]) -> list[Path]:
    """``files`` by ``seconds(file)``, longest first; ties keep their order."""
    return sorted(files, key=lambda path: -seconds(path))


def longest_first(items: list[pytest.Item], seconds: Callable[[Path], float],
                  mine: Callable[[Path], bool]) -> list[pytest.Item]:
    """``items`` with the files ``mine`` accepts in :func:`longest_first_files` order, each
    file's items together and in their order; the other items keep their order, before
    them."""
    ours = [item for item in items if mine(item.path)]
    files = longest_first_files(list(dict.fromkeys(item.path for item in ours)), seconds)
    rank = {path: k for k, path in enumerate(files)}
    others = [item for item in items if not mine(item.path)]
    return others + sorted(ours, key=lambda item: rank[item.path])


class LaneReport:
    """A plugin for the controller: each file's lane, seconds, start and end, from the test
    reports (under xdist each report names the worker that ran it), written at the end.

    Parameters
    ----------
    label
        The first words of each line (``"nbval chapter"``, ``"pytest file"``).
    mine
        Whether a file (absolute path) is reported.
    name
        A file's name in the lines.
    min_seconds
        Files that took less are counted in the totals but get no line.
    """

    def __init__(self, label: str, rootpath: Path, mine: Callable[[Path], bool],
                 name: Callable[[Path], str], min_seconds: float = 0.0) -> None:
        self.label, self.rootpath, self.mine, self.name = label, rootpath, mine, name
        self.min_seconds = min_seconds
        self.files: dict[str, dict] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        file = self.rootpath / report.nodeid.split("::", 1)[0]
        if not self.mine(file):
            return
        node = getattr(report, "node", None)
        row = self.files.setdefault(self.name(file), {
            "lane": node.gateway.id if node is not None else "main", "seconds": 0.0,
            "start": report.start, "stop": report.stop})
        row["seconds"] += report.duration
        row["start"] = min(row["start"], report.start)
        row["stop"] = max(row["stop"], report.stop)

    def lines(self) -> list[str]:
        """The report's lines: one per file of at least ``min_seconds``, in the order they
        started, then the lanes' summary."""
        if not self.files:
            return []
        origin = min(row["start"] for row in self.files.values())
        out = [f"{self.label} {name} lane {row['lane']} seconds {row['seconds']:.1f} "
               f"start {row['start'] - origin:.1f} end {row['stop'] - origin:.1f}"
               for name, row in sorted(self.files.items(), key=lambda kv: kv[1]["start"])
               if row["seconds"] >= self.min_seconds]
        short = [row["seconds"] for row in self.files.values()
                 if row["seconds"] < self.min_seconds]
        if short:
            out.append(f"{self.label}s under {self.min_seconds:g} s: {len(short)}, "
                       f"{sum(short):.1f} s in all")
        lanes: dict[str, list[float]] = {}
        for row in self.files.values():
            lanes.setdefault(row["lane"], []).append(row["stop"] - origin)
        total = sum(row["seconds"] for row in self.files.values())
        longest = max(row["seconds"] for row in self.files.values())
        ends = ", ".join(f"{lane} {max(stops):.1f} s" for lane, stops in sorted(lanes.items()))
        out.append(f"{self.label}s: {len(self.files)} over {len(lanes)} lanes, ending at "
                   f"{ends}; their total {total:.1f} s, over the lanes {total / len(lanes):.1f}"
                   f" s, the longest {longest:.1f} s")
        return out

    def pytest_terminal_summary(self, terminalreporter) -> None:
        lines = self.lines()
        if lines:
            terminalreporter.section(f"{self.label}s: lane, seconds, start and end (s)")
            for line in lines:
                terminalreporter.write_line(line)


def register(config: pytest.Config, report: LaneReport) -> None:
    """Register ``report`` on the controller (or a run without xdist), not on the workers."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(report, f"lmgeometry-lanes-{report.label}")
