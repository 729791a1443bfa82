"""``make test``'s lanes under pytest-xdist, before and after ordering the files longest first.

``make test`` runs the test files (``--dist loadfile``) and then nbval over the executed
chapters (``--dist loadscope``), each on ``-n`` workers: each file is a work unit that one
worker runs whole. This script drives pytest-xdist's own scheduler
(``xdist.scheduler.LoadScopeScheduling``, whose per-file subclass schedules the same way) with
simulated workers and per-file seconds, and prints each lane (which files each worker runs,
when each starts and ends) and the wall time for two set-ups:

- **before**: the files in collection order and xdist's default ``--loadscope-reorder`` (the
  files with the most tests or cells first), as ``make test`` ran until issue 43;
- **after**: the order of ``tests/lanes.py``'s ``longest_first`` by the recorded seconds
  (``book/conftest.py``'s ``COLD_SECONDS``, ``tests/conftest.py``'s ``FILE_SECONDS``) and
  ``--no-loadscope-reorder``, as ``make test`` runs now.

The simulated worker behaves as xdist's does: it runs an item only once it holds the next one
(or the order to shut down), and the scheduler gives it the next file when its current one is
down to two items. A file's seconds are spread evenly over its items (a notebook's over all
but its last two cells, which print and save its results: one second each). The lower bound on
the wall time is the larger of the files' total over the workers and the longest file.

Usage::

    python benchmarks/xdist_lanes.py                        # nbval, book/conftest.py's cold seconds
    python benchmarks/xdist_lanes.py --times warm           # nbval, each chapter's last run record
    python benchmarks/xdist_lanes.py --times cold_ci.json   # a benchmarks/cold_ci.py record
    python benchmarks/xdist_lanes.py --suite tests --times run.log   # a run's "pytest file" lines
    python benchmarks/xdist_lanes.py --workers 4 --json out.json

``--times`` for the test files is a pytest log with the closing "pytest file" lines
(``tests/lanes.py``; the files under 5 s share the seconds of its "under 5 s" line evenly) or a
cold_ci.py record. Nothing is executed: the committed notebooks and pytest's collection give
the files and their items.
"""

from __future__ import annotations

import argparse
import heapq
import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace

from xdist.scheduler import LoadScopeScheduling

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
TESTS = ROOT / "tests"
LAST_CELL_S = 1.0
LINE = re.compile(r"^(nbval chapter|pytest file) (\S+) lane \S+ seconds ([\d.]+) ")
SHORT = re.compile(r"^(nbval chapter|pytest file)s under [\d.]+ s: (\d+), ([\d.]+) s in all")
TOTAL = re.compile(r"^(nbval chapter|pytest file)s: (\d+) over .* their total ([\d.]+) s")


def conftest(folder: Path) -> ModuleType:
    """``folder/conftest.py`` (its recorded seconds), imported by path, with ``tests/`` on the
    path as pytest puts it (the conftests import ``tests/lanes.py``)."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location(f"{folder.name}_conftest",
                                                  folder / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def nbval_items() -> dict[str, int]:
    """Each chapter's code cells (nbval's items), in collection (file-name) order."""
    return {nb.stem: sum(cell["cell_type"] == "code" for cell in json.loads(nb.read_text())
                         ["cells"]) for nb in sorted(BOOK.glob("*.ipynb"))}


def test_items() -> dict[str, int]:
    """Each test file's tests, in pytest's collection order (a folder's entries by name)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "tests", "--collect-only", "-q",
                          "-p", "no:xdist", "-p", "no:cacheprovider"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    counts: dict[str, int] = {}
    for line in out.splitlines():
        if "::" in line:
            file = line.split("::", 1)[0]
            counts[file] = counts.get(file, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: Path(kv[0]).parts))


def measured_seconds(path: Path, label: str, names: list[str]) -> dict[str, float]:
    """Seconds per file from a pytest log's closing lines or a cold_ci.py record."""
    text = path.read_text()
    if path.suffix == ".json":
        phases = json.loads(text)["phases"]
        key = "nbval_chapters" if label == "nbval chapter" else "unit_test_files"
        table = {name: row["seconds"] for name, row in phases.get(key, {}).items()}
        short = phases.get(f"{key}_short")
    else:
        table, short, total = {}, None, None
        for line in text.splitlines():
            if (m := LINE.match(line)) and m.group(1) == label:
                table[m.group(2)] = float(m.group(3))
            elif (m := SHORT.match(line)) and m.group(1) == label:
                short = {"count": int(m.group(2)), "seconds": float(m.group(3))}
            elif (m := TOTAL.match(line)) and m.group(1) == label:
                total = (int(m.group(2)), float(m.group(3)))
        if short is None and total is not None:  # the files without a line share the rest
            short = {"count": total[0] - len(table),
                     "seconds": total[1] - sum(table.values())}
    rest = [name for name in names if name not in table]
    if rest and not short:
        raise SystemExit(f"{path} gives no seconds for {', '.join(rest[:5])}")
    for name in rest:
        table[name] = short["seconds"] / max(short["count"], len(rest))
    return {name: table[name] for name in names}


@dataclass(eq=False)
class Worker:
    """A simulated xdist worker: the scheduler sends it item indices and a shutdown."""

    id: str
    queue: list[int] = field(default_factory=list)
    shutting_down: bool = False
    running: int | None = None

    @property
    def gateway(self) -> SimpleNamespace:
        return SimpleNamespace(id=self.id)

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def simulate(collection: list[str], seconds: dict[str, float], workers: int,
             reorder: bool, notebooks: bool = True) -> dict:
    """Run ``collection`` (nodeids ``<file>::<item> <k>``, grouped by file) through xdist's
    scheduler on ``workers`` simulated workers; each file's lane, start and end, the wall
    time, the files' total and the lower bound."""
    file_of = [nodeid.split("::")[0] for nodeid in collection]
    items: dict[str, int] = {}
    for file in file_of:
        items[file] = items.get(file, 0) + 1
    seen: dict[str, int] = {}
    duration = []
    for file in file_of:
        k, n = seen.get(file, 0), items[file]
        seen[file] = k + 1
        heavy = max(n - 2, 1) if notebooks else n
        if k >= heavy:
            duration.append(LAST_CELL_S)
        else:
            duration.append(max(seconds[file] - LAST_CELL_S * (n - heavy), 0.0) / heavy)
    config = SimpleNamespace(option=SimpleNamespace(loadscopereorder=reorder),
                             getvalue=lambda name: [f"{workers}*popen"])
    sched = LoadScopeScheduling(config, log=SimpleNamespace(loadscopesched=lambda *a: None))
    nodes = [Worker(f"gw{k}") for k in range(workers)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    now, events, spans = 0.0, [], {}

    def start(node: Worker) -> None:
        # xdist's worker runs an item only when it knows the next one (or must shut down)
        if node.running is None and node.queue and (len(node.queue) > 1 or node.shutting_down):
            index = node.queue.pop(0)
            node.running = index
            span = spans.setdefault(file_of[index], {"lane": node.id, "start": now})
            span["end"] = now + duration[index]
            heapq.heappush(events, (span["end"], node.id, index))

    by_id = {node.id: node for node in nodes}
    for node in nodes:
        start(node)
    while events:
        now, node_id, index = heapq.heappop(events)
        node = by_id[node_id]
        node.running = None
        sched.mark_test_complete(node, index, duration[index])
        for other in nodes:
            start(other)
    if not sched.tests_finished or any(node.queue for node in nodes):
        raise RuntimeError("the simulated run left items unrun")
    total = sum(seconds[f] for f in spans)
    return {"wall_s": round(now, 1), "total_s": round(total, 1),
            "bound_s": round(max(total / workers, max(seconds[f] for f in spans)), 1),
            "files": {f: {"lane": s["lane"], "start_s": round(s["start"], 1),
                          "end_s": round(s["end"], 1)} for f, s in spans.items()}}


def show(title: str, result: dict, shown: float) -> None:
    """Print a schedule: each lane's files of at least ``shown`` seconds."""
    print(f"\n{title}: wall {result['wall_s'] / 60:.1f} min ({result['wall_s']:.0f} s); "
          f"the files' total {result['total_s'] / 60:.1f} min, lower bound "
          f"{result['bound_s'] / 60:.1f} min")
    lanes: dict[str, list] = {}
    for file, span in sorted(result["files"].items(), key=lambda kv: kv[1]["start_s"]):
        lanes.setdefault(span["lane"], []).append((file, span))
    for lane, rows in sorted(lanes.items()):
        end = rows[-1][1]["end_s"]
        listed = [f"{Path(f).stem} {s['start_s'] / 60:.1f}-{s['end_s'] / 60:.1f}"
                  for f, s in rows if s["end_s"] - s["start_s"] >= shown]
        print(f"  {lane} (ends {end / 60:.1f} min): " + ", ".join(listed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=["nbval", "tests"], default="nbval")
    parser.add_argument("--times", default=None, help="nbval: cold (default; book/conftest.py"
                        "'s COLD_SECONDS), warm (run records), a JSON {chapter: seconds}, a "
                        "pytest log or a cold_ci.py record; tests: a pytest log or a record")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write both schedules here")
    args = parser.parse_args()
    if args.suite == "nbval":
        module, items, label = conftest(BOOK), nbval_items(), "nbval chapter"
        path_of = {name: BOOK / f"{name}.ipynb" for name in items}
        times = args.times or "cold"
        if times == "cold":
            seconds = {name: module.expected_seconds(path_of[name]) for name in items}
        elif times == "warm":
            seconds = {name: float(json.loads((BOOK / f"{name}.run.json").read_text())
                                   ["seconds"]) for name in items}
        elif times.endswith(".json") and "phases" not in json.loads(Path(times).read_text()):
            table = json.loads(Path(times).read_text())
            seconds = {name: float(table[name]) for name in items}
        else:
            seconds = measured_seconds(Path(times), label, list(items))
    else:
        if not args.times:
            raise SystemExit("--suite tests needs --times: a pytest log or a cold_ci.py record")
        module, items, label = conftest(TESTS), test_items(), "pytest file"
        path_of = {name: ROOT / name for name in items}
        times = args.times
        seconds = measured_seconds(Path(times), label, list(items))

    def nodeids(order: list[str]) -> list[str]:
        return [f"{name}::item {k}" for name in order for k in range(items[name])]

    lanes = importlib.import_module("lanes")  # tests/lanes.py, the order make test uses
    after_order = [p.stem if args.suite == "nbval" else p.relative_to(ROOT).as_posix()
                   for p in lanes.longest_first_files(list(path_of.values()),
                                                      module.expected_seconds)]
    notebooks = args.suite == "nbval"
    before = simulate(nodeids(list(items)), seconds, args.workers, True, notebooks)
    after = simulate(nodeids(after_order), seconds, args.workers, False, notebooks)
    print(f"{args.suite} lanes from {times} seconds, {args.workers} workers")
    shown = 0 if notebooks else 30
    show("before (collection order, --loadscope-reorder)", before, shown)
    show("after (longest first, --no-loadscope-reorder)", after, shown)
    if not notebooks:
        print(f"  (files under {shown} s not listed)")
    if args.json:
        args.json.write_text(json.dumps({"suite": args.suite, "times": times,
                                         "workers": args.workers, "seconds": seconds,
                                         "before": before, "after": after}, indent=1) + "\n")


if __name__ == "__main__":
    main()
