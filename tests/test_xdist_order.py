"""The order make test hands files to pytest-xdist's workers (tests/lanes.py, book/conftest.py,
tests/conftest.py) and the lanes benchmarks/xdist_lanes.py computes with xdist's own scheduler
(issue 43)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def book_conftest():
    return load(ROOT / "book" / "conftest.py", "book_conftest_under_test")


@pytest.fixture(scope="module")
def lanes():
    return load(ROOT / "benchmarks" / "xdist_lanes.py", "xdist_lanes_under_test")


def test_a_chapter_without_a_recorded_cold_time_is_placed_by_its_run_record(book_conftest,
                                                                            tmp_path):
    table = book_conftest.COLD_SECONDS
    known = [tmp_path / f"{name}.ipynb"
             for name in ("04_drift_and_centering", "07_finetuning")]
    new = tmp_path / "11_new_chapter.ipynb"
    (tmp_path / "11_new_chapter.run.json").write_text(json.dumps({"seconds": 700.0}))
    unknown = tmp_path / "12_never_run.ipynb"
    assert book_conftest.expected_seconds(new) == 700.0
    assert book_conftest.expected_seconds(unknown) == float("inf")
    assert table["07_finetuning"] > 700 > table["04_drift_and_centering"]
    order = book_conftest.chapter_order([*known, new, unknown])
    assert [p.stem for p in order] == ["12_never_run", "07_finetuning", "11_new_chapter",
                                       "04_drift_and_centering"]


def test_nbval_collects_the_chapters_longest_first_with_each_ones_cells_in_order(
        book_conftest):
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env", "book"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout
    ids = [line for line in out.splitlines() if ".ipynb::Cell " in line]
    notebooks = list(dict.fromkeys(i.split("::")[0] for i in ids))
    expected = book_conftest.chapter_order(sorted((ROOT / "book").glob("*.ipynb")))
    assert notebooks == [f"book/{p.name}" for p in expected]
    for notebook in notebooks:
        cells = [int(i.rsplit(" ", 1)[1]) for i in ids if i.startswith(notebook + "::")]
        assert cells == list(range(len(cells)))
    # each notebook's cells are contiguous: loadscope hands a notebook to one worker
    runs = [i.split("::")[0] for k, i in enumerate(ids) if k == 0 or
            i.split("::")[0] != ids[k - 1].split("::")[0]]
    assert runs == notebooks


def test_longest_first_fills_two_lanes_where_file_order_leaves_one_idle(lanes):
    """Three chapters of 10, 20 and 30 minutes, of 6, 5 and 4 cells, on two workers. xdist's
    default order (most cells first) starts a and b and runs c after a: 40 minutes. Longest
    first starts c and b and runs a after b: 30 minutes, the lower bound (the total over two
    lanes and the longest chapter are both 30)."""
    seconds = {"a": 600.0, "b": 1200.0, "c": 1800.0}
    cells = {"a": 6, "b": 5, "c": 4}

    def ids(order):
        return [f"{c}::Cell {k}" for c in order for k in range(cells[c])]

    before = lanes.simulate(ids("abc"), seconds, 2, reorder=True)
    assert before["wall_s"] == pytest.approx(2400, abs=5)
    assert before["files"]["c"]["lane"] == before["files"]["a"]["lane"]
    after = lanes.simulate(ids("cba"), seconds, 2, reorder=False)
    assert after["wall_s"] == pytest.approx(1800, abs=5)
    assert after["bound_s"] == pytest.approx(1800)
    assert after["files"]["a"]["lane"] == after["files"]["b"]["lane"]
    assert after["files"]["a"]["start_s"] == pytest.approx(1200, abs=5)


def test_the_test_files_are_collected_longest_recorded_first():
    from conftest import FILE_SECONDS

    given = ["tests/io/test_tokenizer.py", "tests/test_api.py", "tests/io/test_models.py",
             "tests/test_browser.py"]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", *given],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = list(dict.fromkeys(line.split("::")[0] for line in out.splitlines()
                               if "::" in line))
    assert FILE_SECONDS["tests/test_browser.py"] > FILE_SECONDS["tests/io/test_models.py"] > 0
    assert "tests/test_api.py" not in FILE_SECONDS
    assert "tests/io/test_tokenizer.py" not in FILE_SECONDS
    # recorded files longest first, then the others in the order given
    assert files == ["tests/test_browser.py", "tests/io/test_models.py",
                     "tests/io/test_tokenizer.py", "tests/test_api.py"]


def _report(nodeid: str, lane: str, start: float, stop: float) -> pytest.TestReport:
    report = pytest.TestReport(nodeid, (nodeid, 0, ""), {}, "passed", None, "call",
                               duration=stop - start, start=start, stop=stop)
    report.node = SimpleNamespace(gateway=SimpleNamespace(id=lane))  # as xdist's controller
    return report


def test_the_lane_report_sums_each_files_reports(tmp_path):
    from lanes import LaneReport

    report = LaneReport("pytest file", tmp_path, lambda p: p.suffix == ".py",
                        lambda p: p.name, min_seconds=5.0)
    for args in [("a.py::one", "gw0", 100.0, 110.0), ("a.py::two", "gw0", 110.0, 130.0),
                 ("b.py::one", "gw1", 101.0, 104.0), ("c.py::one", "gw1", 104.0, 110.0),
                 ("c.ipynb::Cell 0", "gw1", 110.0, 200.0)]:
        report.pytest_runtest_logreport(_report(*args))
    assert report.lines() == [
        "pytest file a.py lane gw0 seconds 30.0 start 0.0 end 30.0",
        "pytest file c.py lane gw1 seconds 6.0 start 4.0 end 10.0",
        "pytest files under 5 s: 1, 3.0 s in all",
        "pytest files: 3 over 2 lanes, ending at gw0 30.0 s, gw1 10.0 s; their total 39.0 s, "
        "over the lanes 19.5 s, the longest 30.0 s",
    ]
