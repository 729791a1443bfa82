"""``lmgeometry book``: the whole build, chapters that changed executed, then the HTML.

:func:`build_book` checks every parameter before the first kernel starts, skips a chapter whose
execution manifest still holds (:mod:`lmgeometry.report.cache`), executes the others
(:mod:`lmgeometry.report.book.execution`), writes their manifests, run records and profile
rows, and builds the HTML unless none of its inputs changed
(:mod:`lmgeometry.report.book.html`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lmgeometry.errors import BookError, ChapterExecutionError
from lmgeometry.io import paths
from lmgeometry.report.about import PROJECT_ENV, write_run_record
from lmgeometry.report.book.chapters import (
    NOTEBOOK_DIR,
    Chapter,
    execution_order,
    execution_stages,
    select_chapters,
    toc_chapters,
    with_required_pages,
)
from lmgeometry.report.book.execution import (
    MAX_NOTEBOOK_BYTES,
    interpreter_kernel,
    kernel_threads,
    read_chapter,
    run_chapter,
    run_parallel,
    say,
)
from lmgeometry.report.book.folder import book_lock, check_out, claim_out
from lmgeometry.report.book.html import build_html, write_book_config
from lmgeometry.report.book.progress import clock, end_line, last_seconds, start_line
from lmgeometry.report.book.parameters import (
    PARAMS_FILE,
    RESULTS_PARAM,
    chapter_parameters,
    check_parameter_names,
    load_book_params,
    parameter_types,
    parse_overrides,
    resolve_parameters,
)
from lmgeometry.report.cache import (
    BookInputs,
    chapter_key,
    code_records,
    html_inputs,
    html_is_current,
    input_records,
    key_summary,
    read_manifest,
    stale_reasons,
    store_records,
    unedited_since,
    write_html_stamp,
    write_manifest,
)
from lmgeometry.report.profile import (
    PROFILE_FILE,
    ChapterProfile,
    profile_table,
    read_profiles,
    write_profiles,
)
from lmgeometry.report.publish import ARCHIVE_ENV, archive_name, write_archive
from lmgeometry.report.toc import project_root, toc_docnames

__all__ = [
    "build_book",
    "check_package",
]


def check_package(root: Path, package: Path | None = None) -> Path:
    """Refuse to build a checkout's chapters with another checkout's package code.

    The chapters of ``root`` run on the ``lmgeometry`` package this process imports; when
    ``root`` holds its own ``src/lmgeometry`` and that code differs from the package in use
    (syntax digests, :func:`lmgeometry.sources.file_digest`), the executed notebooks and their
    manifests would describe code the checkout does not hold.

    Returns
    -------
    pathlib.Path
        ``root``, when its code is the package's (or it holds none).

    Raises
    ------
    BookError
        Naming the differing files and the fix.
    """
    from lmgeometry import sources

    package = (package or sources.PACKAGE_DIR).resolve()
    own = root / "src" / "lmgeometry"
    if not own.is_dir() or own.resolve() == package:
        return root

    def files(folder: Path) -> dict[str, str]:
        return {p.relative_to(folder).as_posix(): sources.file_digest(p)
                for p in sorted(folder.rglob("*"))
                if p.suffix in (".py", ".json", ".txt", ".js", ".css") and p.is_file()
                and "__pycache__" not in p.parts}

    mine, used = files(own), files(package)
    differ = sorted(n for n in set(mine) | set(used) if mine.get(n) != used.get(n))
    if differ:
        raise BookError(f"the lmgeometry package in use ({package}) is not the code of the "
                        f"checkout being built ({own}): {len(differ)} files differ (e.g. "
                        f"{', '.join(differ[:3])}). Install this checkout's package (`make "
                        "venv`, or `pip install -e .` in it), or build from the checkout the "
                        "package comes from")
    return root


def build_book(
    params: dict[str, Any] | None = None,
    out: Path | str | None = None,
    chapters: Sequence[str] | None = None,
    html: bool = True,
    *,
    execute: bool = True,
    root: Path | None = None,
    max_notebook_bytes: int = MAX_NOTEBOOK_BYTES,
    force: bool = False,
    profile: bool = False,
    jobs: int = 1,
) -> Path:
    """Execute the chapters that changed and build the HTML book.

    A chapter whose execution manifest (``book/NN_name.exec.json``: source, parameters, code,
    environment, models, store entries, notebook and results file) still holds is skipped; the
    log says which were skipped, why the others ran and how far they are. The HTML build is
    skipped when none of its inputs changed since the last one.

    Parameters
    ----------
    params : dict, optional
        Overrides of chapter parameters (highest precedence), e.g.
        ``{"models": ["gpt2", "bert-base-cased"]}``; a name no executed chapter declares
        is an error.
    out : pathlib.Path or str, optional
        Build a separate book in this folder (``out/_config.yml``, ``out/_toc.yml``,
        ``out/book/*.ipynb``, ``out/_build/html``); the project's ``book/`` is untouched. A
        folder holding files but no book is refused; no file the pipeline did not write is
        replaced (:mod:`~.folder`). One build of a book folder at a time (others wait).
    chapters : sequence of str, optional
        Execute only these chapters (names, docnames or number prefixes). With ``out``,
        the root chapter (the introduction) and the About page (it holds the bibliography)
        are executed too if they are not there yet (:func:`with_required_pages`).
    html : bool
        Build the HTML after executing.
    execute : bool
        Execute the chapters; False renders the notebooks already in the book folder
        (``params`` and ``chapters`` are then ignored).
    root : pathlib.Path, optional
        The project folder (default: :func:`project_root`).
    max_notebook_bytes : int
        Size cap for each executed notebook.
    force : bool
        Execute every selected chapter and build the HTML even if nothing changed.
    profile : bool
        Print where the time went (:mod:`lmgeometry.report.profile`) at the end. The rows are
        written to ``_build/profile.json`` in any case.
    jobs : int
        Chapters executed at the same time, each kernel on ``cores // jobs`` threads
        (:func:`execution_stages`; memory grows with ``jobs``).

    Returns
    -------
    pathlib.Path
        The HTML folder, or the executed notebooks' folder when ``html`` is False.

    Raises
    ------
    ChapterExecutionError
        If a chapter fails (no later chapter starts; see ``jobs``).
    BookUsageError
        For a ``params``, ``chapters`` or ``out`` value that cannot work (an empty model list,
        an unknown parameter, a folder of files that are not a book): before any chapter runs.
    PathError
        ``out`` is a file or cannot be written.
    BookError
        For configuration errors, size-cap violations and HTML build failures.
    """
    started = time.perf_counter()
    root = check_package((root or project_root()).resolve())
    book_dir = root if out is None else paths.refuse_checkout(
        out, "the book folder (--out)").resolve()
    separate = book_dir != root
    if separate:
        check_out(book_dir)  # a user's folder is refused before anything is written
    toc = toc_chapters(root)
    selected = select_chapters(toc, chapters)
    if separate:
        selected = with_required_pages(toc, selected, book_dir)

    inputs = BookInputs.current()
    if execute:  # every parameter mistake is found before the first chapter runs
        sources = {c.name: read_chapter(c.source) for c in toc}
        resolved = _resolve_all(root, sources, selected, dict(params or {}))
    if separate:
        claim_out(book_dir)
    with book_lock(book_dir):  # one build of a book folder at a time
        rows: list[ChapterProfile] = []
        if execute:
            rows = _execute_all(root, book_dir, toc, selected, sources, resolved, inputs=inputs,
                                force=force, max_bytes=max_notebook_bytes, jobs=jobs)
        if separate:
            write_book_config(root, book_dir)
        html_dir, html_s = (_html_step(book_dir, force=force) if html
                            else (book_dir / NOTEBOOK_DIR, None))
    _closing_lines(book_dir, rows, profile=profile, html=html, html_s=html_s, started=started)
    return html_dir


def _closing_lines(book_dir: Path, rows: list[ChapterProfile], *, profile: bool, html: bool,
                   html_s: float | None, started: float) -> None:
    """The build's last lines: the profile table (``profile``), then its own time and how many
    chapters ran."""
    if profile:
        html_note = ("not built (--no-html)" if not html else
                     "skipped (unchanged)" if html_s is None else f"{html_s:.1f} s")
        print(f"[book] profile ({book_dir / PROFILE_FILE}):\n{profile_table(rows)}\n"
              f"HTML build: {html_note}", flush=True)
    executed = sum(row.status == "executed" for row in rows)
    print(f"[book] done in {clock(time.perf_counter() - started)} ({executed} chapter(s) "
          f"executed, {len(rows) - executed} unchanged)", flush=True)


def _execute_all(root: Path, book_dir: Path, toc: Sequence[Chapter],
                 selected: Sequence[Chapter], sources: dict[str, Any],
                 resolved: dict[str, dict[str, Any]], **kwargs: Any) -> list[ChapterProfile]:
    """:func:`_execute_chapters` with the project named for the About page; the profile rows
    written."""
    with _environment(PROJECT_ENV, str(root)):  # the About page names root's commit
        rows = _execute_chapters(book_dir, selected, sources, resolved,
                                 estimates=[book_dir / NOTEBOOK_DIR, root / NOTEBOOK_DIR],
                                 **kwargs)
    write_profiles(book_dir / PROFILE_FILE, rows, [c.name for c in toc])
    return rows


def _execute_chapters(book_dir: Path, selected: Sequence[Chapter], sources: dict[str, Any],
                      resolved: dict[str, dict[str, Any]], *, inputs: BookInputs, force: bool,
                      max_bytes: int, jobs: int = 1,
                      estimates: Sequence[Path] = ()) -> list[ChapterProfile]:
    """Execute the selected chapters that changed (all with ``force``); their profile rows.

    ``resolved`` holds each chapter's checked parameters (:func:`_resolve_all`). Each executed
    chapter gets its execution manifest; a skipped one keeps it and its row of the last
    profile (status ``"skipped"``). Up to ``jobs`` chapters of a stage
    (:func:`execution_stages`) run at the same time, each kernel with its share of the cores
    as its thread count unless ``OMP_NUM_THREADS`` is set. When a chapter fails, no further
    chapter starts; those already running finish and keep their results; the first failure
    is raised. Each chapter says when it starts (its place in the build and how long its last
    run took: the run record in the first of ``estimates`` that has one), when each of its
    sections starts, and its time against that estimate (:mod:`~.progress`).
    """
    previous = read_profiles(book_dir / PROFILE_FILE)
    order = [c.name for c in execution_order(selected)]
    rows: dict[str, ChapterProfile] = {}
    env = kernel_threads(jobs)
    with interpreter_kernel() as kernel:
        for stage in execution_stages(selected):
            todo = []
            for chapter in stage:
                values = resolved[chapter.name]
                declared = chapter_parameters(sources[chapter.name],
                                              f"notebooks/{chapter.name}.py")
                key = chapter_key(chapter.source, values, declared, inputs)
                target = book_dir / NOTEBOOK_DIR / f"{chapter.name}.ipynb"
                results = target.parent / values[RESULTS_PARAM]
                recorded = read_manifest(target)
                reasons = (["--force"] if force
                           else stale_reasons(recorded, key, target, results, inputs))
                if reasons:
                    todo.append((chapter, key, results, reasons))
                    continue
                say(f"[book] skipping {chapter.name}: unchanged since its last execution "
                     f"({key_summary(recorded or {})})")
                last = previous.get(chapter.name, ChapterProfile(chapter=chapter.name))
                rows[chapter.name] = dataclasses.replace(last, status="skipped")

            def execute(item: tuple[Chapter, Any, Path, list[str]]) -> ChapterProfile:
                chapter, key, results, reasons = item
                values = resolved[chapter.name]
                shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
                last = last_seconds(chapter.name, estimates)
                started = start_line(order.index(chapter.name) + 1, len(order), chapter.name, last)
                say(f"[book] {started}\n[book] executing {chapter.name} ({shown}); because: "
                    + "; ".join(reasons))
                began = time.time()
                run = run_chapter(chapter, book_dir, values, kernel_name=kernel,
                                  max_bytes=max_bytes, notebook=sources[chapter.name], env=env)
                write_manifest(run.notebook, key, store_records(run.events), results,
                               input_records(run.events, run.notebook.parent),
                               unedited_since(code_records(run.events), began))
                write_run_record(run.notebook, run.seconds, run.peak_rss)
                say(f"[book] {end_line(chapter.name, run.seconds, last)}, "
                    f"{run.notebook.stat().st_size / 1e6:.2f} MB -> {run.notebook}")
                return ChapterProfile.measured(chapter.name, run.seconds, run.cells,
                                               run.events, run.peak_rss)

            rows.update(run_parallel(execute, todo, jobs))
    return [rows[c.name] for c in execution_order(selected)]


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """Set an environment variable that child processes inherit, restored afterwards."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


def _html_step(book_dir: Path, *, force: bool) -> tuple[Path, float | None]:
    """Build the HTML unless its inputs are those of the last build; (folder, seconds or None)."""
    html_dir = book_dir / "_build" / "html"
    current = html_inputs(book_dir, toc_docnames(book_dir / "_toc.yml"))
    if not force and html_is_current(book_dir, html_dir, current):
        print(f"[book] HTML unchanged (same notebooks, _config.yml, _toc.yml, package and "
              f"renderer versions as the last build): skipped: {html_dir / 'index.html'}",
              flush=True)
        return html_dir, None
    start = time.perf_counter()
    archive = archive_name(book_dir)
    with _environment(ARCHIVE_ENV, archive):  # each page links to the archive
        html_dir = build_html(book_dir)
    write_archive(book_dir, html_dir, archive)
    write_html_stamp(book_dir, current)
    seconds = time.perf_counter() - start
    print(f"[book] HTML in {seconds:.1f} s: {html_dir / 'index.html'}", flush=True)
    return html_dir, seconds


def _resolve_all(root: Path, sources: dict[str, Any], selected: Sequence[Chapter],
                 overrides: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The parameters of each selected chapter (:func:`resolve_parameters`), all checked
    against the types the chapters declare (:func:`parameter_types`)."""
    config = load_book_params(root / PARAMS_FILE)
    declared = {name: chapter_parameters(nb, f"notebooks/{name}.py")
                for name, nb in sources.items()}
    check_parameter_names(selected, declared, config, overrides)
    return {c.name: resolve_parameters(c.name, declared[c.name], config, overrides,
                                       parameter_types(sources[c.name],
                                                       f"notebooks/{c.name}.py"))
            for c in selected}


