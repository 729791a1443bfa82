"""nbval over the executed chapters: the longest chapters start first, and each chapter's lane
and seconds are reported (issue 43).

``make test`` runs nbval over ``book/*.ipynb`` with pytest-xdist ``--dist loadscope
--no-loadscope-reorder``: each notebook is one work unit (its cells stay together, in order,
on one worker), handed out in collection order, the next one to a worker when its current
notebook is down to its last two cells (every chapter's last two cells print and save its
results: seconds). This hook orders the collection longest chapter first
(``tests/lanes.py``), so the chapters that take a quarter to half an hour on an empty cache
start at once and the short ones fill both lanes at the end. xdist's own order (by number of
cells) started chapter 7 (about 32 minutes cold) fourth and chapter 10 (about 15) tenth, and
left the other lane idle at the end; ``benchmarks/xdist_lanes.py`` computes both schedules with
xdist's scheduler. The run ends with one line per chapter: its lane, its wall seconds (its
cells' setup, call and teardown, kernel start and shutdown included), start and end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lanes import LaneReport, longest_first, longest_first_files, register

HERE = Path(__file__).resolve().parent

#: Each chapter's wall seconds on an empty cache (extraction, fine-tuning and training
#: included) on the 2-core development machine: the "nbval chapter" lines of the cold CI of
#: 2026-11-29 (benchmarks/records/cold_ci-2026-11-29.json), chapter 9 plus its two new runs
#: and chapter 10 plus its output-matrix claims. They set only the order in which the
#: chapters start; update them
#: from a cold run's "nbval chapter" lines when a chapter's cold time changes by minutes. A
#: chapter missing here is placed by its last execution's seconds (``NN_name.run.json``).
COLD_SECONDS: dict[str, float] = {
    "00_introduction": 11,
    "01_geometry": 340,
    "02_part_of_speech": 111,
    "03_context_measures": 1598,
    "04_drift_and_centering": 392,
    "05_senses": 749,
    "06_rogue_dimensions": 1341,
    "07_finetuning": 2080,
    "08_model_zoo": 130,
    "09_attention_sink": 640,
    "10_controlled_pair": 545,
    "90_scorecard": 4,
    "99_about": 3,
}


def expected_seconds(notebook: Path) -> float:
    """A chapter's expected nbval seconds: :data:`COLD_SECONDS`, else the seconds of its last
    execution (its run record beside it), else infinity (an unknown chapter starts first)."""
    name = notebook.stem
    if name in COLD_SECONDS:
        return COLD_SECONDS[name]
    try:
        return float(json.loads(notebook.with_name(f"{name}.run.json").read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf")


def chapter_order(notebooks: list[Path]) -> list[Path]:
    """``notebooks`` in the order nbval runs them: longest first by :func:`expected_seconds`,
    ties by file name (the collection's order)."""
    return longest_first_files(sorted(notebooks, key=lambda path: path.name), expected_seconds)


def is_chapter(path: Path) -> bool:
    """Whether ``path`` is one of this folder's executed chapters."""
    return path.suffix == ".ipynb" and path.resolve().parent == HERE


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = longest_first(items, expected_seconds, is_chapter)


def pytest_configure(config: pytest.Config) -> None:
    register(config, LaneReport("nbval chapter", config.rootpath, is_chapter,
                                lambda path: path.stem))
