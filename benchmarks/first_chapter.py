"""A newcomer's first chapter: ``make book ARGS="--chapters 01 --out DIR"`` from an empty cache.

Runs the README's command for one chapter into a separate book folder, with
``$LMGEOMETRY_CACHE`` pointing at an empty folder, so the offline models are converted, the
chapter's store entries extracted, and the chapter, the pages a separate book needs (the
introduction and the About page) and the HTML built, as on a new machine whose virtualenv is
installed. It streams the build's output with the seconds since the start before each line,
and reports the wall time (issue 43's target: under 10 minutes) and the longest silence
between two lines of output (how live the progress is). ``--record`` writes both, with every
line and its time, as JSON.

Usage::

    python benchmarks/first_chapter.py --record benchmarks/records/first_chapter-<date>.json
    python benchmarks/first_chapter.py --chapters 03 --keep /tmp/first   # another chapter

The cache and the book go to a temporary folder, removed at the end (``--keep``: kept).
Run it on an idle machine: on shared cores the figures are inflated.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 10 * 60


def run(chapters: list[str], base: Path) -> tuple[int, float, list[tuple[float, str]]]:
    """``make book`` for ``chapters`` into ``base/book`` with the empty cache ``base/cache``;
    its exit status, wall seconds, and every output line with its seconds from the start."""
    cache, out = base / "cache", base / "book"
    if cache.exists() and any(cache.iterdir()):
        raise SystemExit(f"{cache} is not empty: a cold build needs an empty cache; remove it "
                         "or pass another --keep folder")
    cache.mkdir(parents=True, exist_ok=True)
    env = os.environ | {"LMGEOMETRY_CACHE": str(cache), "PYTHONUNBUFFERED": "1"}
    args = " ".join(["--chapters", *chapters, "--out", str(out)])
    lines: list[tuple[float, str]] = []
    start = time.perf_counter()
    with subprocess.Popen(["make", "book", f"ARGS={args}"], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=1) as proc:
        for line in proc.stdout:
            at = time.perf_counter() - start
            sys.stdout.write(f"[{at:7.1f} s] {line}")
            lines.append((round(at, 1), line.rstrip("\n")))
    return proc.returncode, time.perf_counter() - start, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", nargs="+", default=["01"])
    parser.add_argument("--keep", type=Path, help="use (and keep) this folder for the cache "
                        "and the book")
    parser.add_argument("--record", type=Path, help="write the JSON record here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lmgeometry-first-") as tmp:
        rc, wall, lines = run(args.chapters, args.keep or Path(tmp))
    times = [0.0] + [at for at, _ in lines] + [wall]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    silence = max(gaps)
    where = times[gaps.index(silence)]
    print(f"\nfirst chapter ({' '.join(args.chapters)}) from an empty cache: rc {rc}, "
          f"{wall / 60:.1f} min (target {TARGET_S / 60:.0f} min: "
          f"{'within' if wall <= TARGET_S else 'OVER'}); longest silence {silence:.0f} s "
          f"(from {where:.0f} s)")
    if args.record:
        record = {"benchmark": "first_chapter", "chapters": args.chapters, "rc": rc,
                  "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                                           capture_output=True, text=True).stdout.strip(),
                  "date": datetime.now(UTC).isoformat(timespec="seconds"),
                  "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                              "load_average_at_end": os.getloadavg()},
                  "wall_s": round(wall, 1), "target_s": TARGET_S,
                  "longest_silence_s": round(silence, 1), "silence_from_s": round(where, 1),
                  "lines": lines}
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n")
    sys.exit(rc)


if __name__ == "__main__":
    main()
