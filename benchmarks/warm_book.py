"""Wall time of ``lmgeometry book`` when nothing changed (a warm rebuild), with and without HTML.

The script lays out a book project in a temporary folder and builds it three times in fresh
processes (``python -m lmgeometry.cli book``, as a user runs it):

1. ``--no-html``: executes whatever is out of date (everything, on a project without
   execution manifests) -- the cold build;
2. ``--no-html`` again: nothing changed, every chapter must be skipped;
3. with HTML, twice: the first builds the HTML, the second must skip it too.

It prints each run's wall time and how many chapters it executed and skipped. Target: the
warm rebuilds (2, and the second of 3) under a minute for the seven-chapter book.

Two projects:

* ``--fixture N`` (default 7): N copies of the test suite's slider chapter
  (``tests/fixtures/slider_chapter.py``); the cold build takes seconds, so this measures the
  pipeline's own overhead (parameters, keys, fingerprints, manifests, HTML stamp);
* ``--real``: the repository's own chapters, ``book_params.yml`` and executed notebooks (with
  their execution manifests, if committed). Without manifests the cold build executes every
  chapter (25 minutes or more on 2 cores).

Usage::

    python benchmarks/warm_book.py --fixture 7
    python benchmarks/warm_book.py --real --keep /tmp/warm-book

Timings on a shared machine are noisy: run it on an idle one for figures worth quoting.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def fixture_project(folder: Path, n: int) -> Path:
    """A project of ``n`` copies of the slider fixture chapter (the first is the root page)."""
    (folder / "notebooks").mkdir(parents=True)
    shutil.copyfile(ROOT / "_config.yml", folder / "_config.yml")
    names = [f"{i:02d}_fixture" for i in range(n)]
    toc = {"format": "jb-book", "root": f"book/{names[0]}",
           "chapters": [{"file": f"book/{name}"} for name in names[1:]]}
    (folder / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    for name in names:
        shutil.copyfile(ROOT / "tests" / "fixtures" / "slider_chapter.py",
                        folder / "notebooks" / f"{name}.py")
    return folder


def real_project(folder: Path) -> Path:
    """A copy of the repository's book sources and executed chapters."""
    folder.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml", "book_params.yml"):
        shutil.copyfile(ROOT / name, folder / name)
    shutil.copytree(ROOT / "notebooks", folder / "notebooks")
    shutil.copytree(ROOT / "book", folder / "book")
    return folder


def build(project: Path, *args: str) -> tuple[float, int, int]:
    """Run ``lmgeometry book`` in ``project``; (seconds, chapters executed, chapters skipped)."""
    command = [sys.executable, "-m", "lmgeometry.cli", "book", *args]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    executed = len(re.findall(r"^\[book\] executing ", done.stdout, flags=re.MULTILINE))
    skipped = len(re.findall(r"^\[book\] skipping ", done.stdout, flags=re.MULTILINE))
    html = ("HTML skipped" if "[book] HTML unchanged" in done.stdout
            else "HTML built" if "[book] HTML in" in done.stdout else "no HTML")
    print(f"  {' '.join(args) or '(with HTML)':<12} {seconds:7.1f} s   executed {executed}, "
          f"skipped {skipped}, {html}", flush=True)
    return seconds, executed, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--fixture", type=int, default=7, help="chapters of the fixture book")
    group.add_argument("--real", action="store_true", help="the repository's own book")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build in this (new) folder and keep it")
    args = parser.parse_args()
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="warm-book-")
    folder = args.keep or Path(tmp.name) / "project"
    project = real_project(folder) if args.real else fixture_project(folder, args.fixture)
    print(f"project: {project} ({'real book' if args.real else f'{args.fixture} fixtures'})")
    build(project, "--no-html")
    warm, executed, _ = build(project, "--no-html")
    build(project)
    warm_html, executed_html, _ = build(project)
    print(f"warm rebuild: {warm:.1f} s without HTML, {warm_html:.1f} s with HTML "
          f"(target < 60 s; chapters re-executed: {executed + executed_html})")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
