"""The whole CI as on a fresh machine: a clean clone, an empty home, ``LMGEOMETRY_COLD=1 .ci/run``.

Clones the repository's ``HEAD`` into a temporary folder and runs its ``.ci/run`` with
``LMGEOMETRY_COLD=1``, so ``HOME`` and ``$LMGEOMETRY_CACHE`` point at an empty folder for the
whole ``make test`` (install, unit tests, nbval): every offline model is converted, every store
entry extracted and every checkpoint trained again. It streams CI's output, times the phases
(install and lint, unit tests, nbval) from CI's own phase lines and pytest's summaries, keeps
each test file's and chapter's lane and seconds from the steps' closing sections
(``tests/lanes.py``; ``benchmarks/xdist_lanes.py`` reads them back), and writes a JSON record
(``--record``) with the commit, the machine, the phases and the outcome, against issue 43's
target (45 min) and CI's hard limit (80 min).

With ``--warm`` it runs the clone's CI with this user's cache instead (issue 43's target for
``make test``: 15 min) and then ``make book`` twice in the clone: the first renders the HTML a
clean clone has not got, the second, with nothing changed, must take under a minute.

Usage::

    python benchmarks/cold_ci.py --record benchmarks/records/cold_ci.json
    python benchmarks/cold_ci.py --home /scratch/cold-home   # keep the filled home afterwards
    python benchmarks/cold_ci.py --warm --record benchmarks/records/warm_ci.json
    python benchmarks/cold_ci.py --warm --commit b500ddb     # another commit of this clone

Run it on an idle machine: on shared cores the figures are inflated.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 45 * 60
WARM_TARGET_S = 15 * 60
LIMIT_S = 80 * 60
PHASE = re.compile(r"^ci phase: (\S+) (\d+)$")
PYTEST_SUMMARY = re.compile(r"^=+ (.*?) in ([\d.]+)s")
LANE = re.compile(r"^(nbval chapter|pytest file) (\S+) lane (\S+) seconds ([\d.]+) "
                  r"start ([\d.]+) end ([\d.]+)$")
SHORT = re.compile(r"^(nbval chapter|pytest file)s under [\d.]+ s: (\d+), ([\d.]+) s in all")


def clean_clone(dest: Path, commit: str = "HEAD") -> str:
    """Clone this repository into ``dest`` at ``commit`` (default ``HEAD``); return the
    commit's hash."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(dest)],
                   check=True)
    subprocess.run(["git", "checkout", "--quiet", commit], cwd=dest, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, check=True,
                          capture_output=True, text=True).stdout.strip()


def stream(args: list[str], clone: Path, env: dict, log: Path) -> tuple[int, float, list[str]]:
    """Run ``args`` in the clone; stream and keep its output; return rc, wall, lines."""
    lines: list[str] = []
    start = time.perf_counter()
    with log.open("a") as out, subprocess.Popen(
            args, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1) as proc:
        for line in proc.stdout:
            sys.stdout.write(line)
            out.write(line)
            lines.append(line.rstrip("\n"))
    return proc.returncode, time.perf_counter() - start, lines


def ci_environment(home: Path | None, warm: bool) -> dict:
    """``.ci/run``'s environment: cold (``LMGEOMETRY_COLD=1``, the cache in an empty home) or
    warm (this user's cache, ``$LMGEOMETRY_CACHE`` or the default)."""
    # .ci/run finds the mirror beside its clone, which a temporary clone has not got.
    mirror = os.environ.get("LMGEOMETRY_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    env = os.environ | {"LMGEOMETRY_DATA_MIRROR": mirror}
    if warm:
        env.pop("LMGEOMETRY_COLD", None)
        return env
    env["LMGEOMETRY_COLD"] = "1"
    env.pop("LMGEOMETRY_CACHE", None)
    if home is not None:
        env["LMGEOMETRY_COLD_HOME"] = str(home)
    return env


def warm_book(clone: Path, env: dict, log: Path) -> dict:
    """``make book`` twice in the clone with the cache kept: the first renders the HTML a
    clean clone lacks (its chapters are executed and committed), the second finds nothing
    changed; each one's seconds, exit status and how many chapters it executed or skipped."""
    found = {}
    for name in ("book_first", "book_again"):
        rc, wall, lines = stream(["make", "book"], clone, env, log)
        found[name] = {"rc": rc, "s": round(wall, 1),
                       "executed": sum(line.startswith("[book] executing") for line in lines),
                       "skipped": sum(line.startswith("[book] skipping") for line in lines),
                       "html": next((line for line in lines if line.startswith("[book] HTML")),
                                    None)}
    return found


def phases(lines: list[str], wall: float) -> dict:
    """Seconds of each phase from CI's ``ci phase:`` lines and pytest's summary lines."""
    marks = {m.group(1): int(m.group(2)) for m in map(PHASE.match, lines) if m}
    summaries = [(m.group(1), float(m.group(2))) for m in map(PYTEST_SUMMARY.match, lines) if m]
    found: dict = {"wall_s": round(wall, 1)}
    if "lint-start" in marks and "test-start" in marks:
        found["install_and_lint_s"] = marks["test-start"] - marks["lint-start"]
    if "test-start" in marks and "end" in marks:
        found["make_test_s"] = marks["end"] - marks["test-start"]
    for name, (summary, seconds) in zip(("unit_tests", "nbval"), summaries, strict=False):
        found[f"{name}_s"] = seconds
        found[f"{name}_summary"] = summary
    # each step's closing section (tests/lanes.py): every file's lane, seconds, start, end
    for label, key in (("pytest file", "unit_test_files"), ("nbval chapter", "nbval_chapters")):
        rows = {m.group(2): {"lane": m.group(3), "seconds": float(m.group(4)),
                             "start_s": float(m.group(5)), "end_s": float(m.group(6))}
                for m in map(LANE.match, lines) if m and m.group(1) == label}
        if rows:
            found[key] = rows
        short = [m for m in map(SHORT.match, lines) if m and m.group(1) == label]
        if short:
            found[f"{key}_short"] = {"count": int(short[-1].group(2)),
                                     "seconds": float(short[-1].group(3))}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, help="an empty or absent folder to use as the "
                        "cold home, kept afterwards (default: a temporary folder, removed)")
    parser.add_argument("--record", type=Path, help="write the JSON record here")
    parser.add_argument("--warm", action="store_true", help="run CI with this user's cache "
                        "(not LMGEOMETRY_COLD), then `make book` twice in the clone")
    parser.add_argument("--commit", default="HEAD", help="the commit to clone (default HEAD)")
    args = parser.parse_args()
    kind, target = ("warm", WARM_TARGET_S) if args.warm else ("cold", TARGET_S)
    env = ci_environment(args.home, args.warm)
    with tempfile.TemporaryDirectory(prefix=f"lmgeometry-{kind}-ci-") as tmp:
        clone = Path(tmp) / "clone"
        commit = clean_clone(clone, args.commit)
        rc, wall, lines = stream(["bash", ".ci/run"], clone, env, Path(tmp) / "ci.log")
        book = warm_book(clone, env, Path(tmp) / "ci.log") if args.warm and rc == 0 else None
    record = {
        "benchmark": f"{kind}_ci", "commit": commit, "rc": rc,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_end": os.getloadavg()},
        "phases": phases(lines, wall), "target_s": target, "limit_s": LIMIT_S,
    }
    if book is not None:
        record["make_book"] = book
    print(f"\n{kind} CI: rc {rc}, {wall / 60:.1f} min (target {target / 60:.0f} min: "
          f"{'within' if wall <= target else 'OVER'}; limit {LIMIT_S / 60:.0f} min: "
          f"{'within' if wall <= LIMIT_S else 'OVER'})")
    print(json.dumps(record["phases"] | ({"make_book": book} if book else {}), indent=1))
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n")
    sys.exit(rc)


if __name__ == "__main__":
    main()
