"""The book from an empty cache, against issue 17's budgets: cold book < 45 min, `.ci/run` < 70.

Runs ``lmgeometry book --force --no-html --profile --out DIR`` in a fresh process with
``$LMGEOMETRY_CACHE`` pointing at an empty folder, so that every offline model is converted,
every store entry extracted and every fine-tuned checkpoint trained again, as on a new
machine. Then it prints the per-chapter profile (wall seconds, seconds spent extracting new
store entries, peak memory) and the totals against the budgets. The `.ci/run` estimate adds the
measured (or given) time of the install and of the unit tests to the cold book, since nbval
re-executes every chapter from the same empty cache.

Usage::

    python benchmarks/cold_book.py --keep /tmp/cold-book           # every chapter (an hour)
    python benchmarks/cold_book.py --chapters 00_introduction      # a quick check of the script
    python benchmarks/cold_book.py --install-s 360 --tests-s 300   # CI's other parts, measured

Run it on an idle machine: on shared cores the figures are inflated, and the BLAS/torch
threads of the chapters contend with the other jobs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK_BUDGET_S = 45 * 60
CI_BUDGET_S = 70 * 60


def run_cold_book(out: Path, cache: Path, chapters: list[str]) -> float:
    """Build the book into ``out`` with an empty cache at ``cache``; return the wall seconds."""
    env = os.environ | {"LMGEOMETRY_CACHE": str(cache)}
    args = [sys.executable, "-m", "lmgeometry.cli", "book", "--force", "--no-html", "--profile",
            "--out", str(out)]
    if chapters:
        args += ["--chapters", *chapters]
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, env=env, check=True)
    return time.perf_counter() - start


def print_budget(profile: dict, wall: float, install_s: float, tests_s: float) -> None:
    """The per-chapter rows and the totals against the budgets."""
    print(f"\n{'chapter':<24} {'wall s':>8} {'extract s (n)':>15} {'peak MiB':>9}")
    for row in profile["chapters"]:
        if row["status"] != "executed":
            continue
        print(f"{row['chapter']:<24} {row['wall_s']:>8.1f} "
              f"{row['extract_built_s']:>9.1f} ({row['extract_built']:>2}) "
              f"{row['peak_rss_mib'] or float('nan'):>9.0f}")
    ci = install_s + tests_s + wall
    print(f"\ncold book: {wall / 60:.1f} min (budget {BOOK_BUDGET_S / 60:.0f} min: "
          f"{'within' if wall <= BOOK_BUDGET_S else 'OVER'})")
    print(f".ci/run estimate: {ci / 60:.1f} min = install {install_s / 60:.1f} + tests "
          f"{tests_s / 60:.1f} + nbval (the cold book) (budget {CI_BUDGET_S / 60:.0f} min: "
          f"{'within' if ci <= CI_BUDGET_S else 'OVER'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build here (and keep the cache) instead of "
                        "a temporary folder")
    parser.add_argument("--chapters", nargs="*", default=[], help="only these chapters")
    parser.add_argument("--install-s", type=float, default=360.0,
                        help="seconds `make` takes to install the virtualenv (default: 6 min, "
                        "measured on a fresh clone)")
    parser.add_argument("--tests-s", type=float, default=300.0,
                        help="seconds of `pytest tests` in `make test` (default: 5 min)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        out, cache = base / "book", base / "cache"
        if cache.exists() and any(cache.iterdir()):
            raise SystemExit(f"{cache} is not empty: a cold build needs an empty cache; "
                             f"remove it or pass another --keep folder")
        cache.mkdir(parents=True, exist_ok=True)
        wall = run_cold_book(out, cache, args.chapters)
        profile = json.loads((out / "_build" / "profile.json").read_text())
        print_budget(profile, wall, args.install_s, args.tests_s)


if __name__ == "__main__":
    main()
