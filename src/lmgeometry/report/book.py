"""The book pipeline: chapter sources -> executed notebooks -> offline HTML.

A chapter is ``notebooks/NN_name.py`` (jupytext percent format) whose first code cell is
tagged ``parameters``. :func:`build_book` takes the chapters of ``_toc.yml`` in the order of
their numbers (``NN_name``; the toc sets the reading order) and, for each one,

1. converts the source to a notebook with jupytext's Python API;
2. merges its parameters: the chapter's own defaults < ``defaults`` in ``book_params.yml``
   < the chapter's section under ``chapters`` in ``book_params.yml`` < ``-p NAME VALUE``
   overrides, plus ``results_path`` set by the pipeline;
3. executes it with papermill on a ``python3`` kernel of the running interpreter, in the book
   folder, so that the chapter's ``results_path`` (``NN_name.results.json``) lands beside its
   executed notebook;
4. strips volatile metadata (timestamps, durations, random cell ids), checks the size cap and
   writes ``book/NN_name.ipynb``.

Each executed chapter gets an execution manifest ``book/NN_name.exec.json`` (what it was
computed from: :mod:`lmgeometry.report.cache`); the next build skips a chapter whose
manifest still holds, and says why it executes the others (``--force`` executes all). The
kernel's store entries, extraction and figure timings, cell times and peak memory become the
profile (:mod:`lmgeometry.report.profile`, ``--profile``).

Then :func:`build_html` renders the executed notebooks with Jupyter Book 1 (no execution at
build time) into ``_build/html`` and checks that no page references anything outside the
file tree; :func:`build_book` skips it when no notebook, config or renderer changed.
``out=DIR`` builds a separate book (its own ``_config.yml``, ``_toc.yml``, ``book/`` and
``_build/``) without touching the committed one.

A toc entry ``pages/name`` is a page written in Markdown (``pages/name.md``: the Python API
reference, whose ``autodoc`` directives render the package's docstrings): it is not a chapter,
is never executed, and is copied into an ``--out`` book as it is.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lmgeometry.errors import BookError, BookUsageError, ChapterExecutionError
from lmgeometry.io import paths
from lmgeometry.report.about import PROJECT_ENV, write_run_record
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
    write_html_stamp,
    write_manifest,
)
from lmgeometry.report.offline import external_references
from lmgeometry.report.profile import (
    PROFILE_FILE,
    CellTime,
    ChapterProfile,
    cell_times,
    measuring_kernel_manager,
    profile_table,
    read_profiles,
    write_profiles,
)
from lmgeometry.report.publish import ARCHIVE_ENV, archive_name, write_archive
from lmgeometry.report.toc import PAGES_DIR, is_page, page_file, project_root, toc_docnames
from lmgeometry.trace import TRACE_ENV, read_events

__all__ = [
    "BookError",
    "build_book",
    "build_book_cli",
    "build_html",
    "Chapter",
    "chapter_parameters",
    "ChapterExecutionError",
    "check_parameter_names",
    "clean_notebook",
    "execute_chapter",
    "Execution",
    "execution_order",
    "execution_stages",
    "external_references",
    "interpreter_kernel",
    "KERNEL_NAME",
    "load_book_params",
    "MAX_NOTEBOOK_BYTES",
    "notebook_bytes",
    "NOTEBOOK_DIR",
    "PARAMS_FILE",
    "parse_overrides",
    "project_root",
    "read_chapter",
    "resolve_parameters",
    "run_chapter",
    "RESULTS_PARAM",
    "select_chapters",
    "stderr_outputs",
    "toc_chapters",
    "toc_pages",
    "check_package",
    "toc_docnames",
    "unlink_absent",
    "write_book_config",
]


#: Executed notebooks larger than this fail the build (bytes of the written .ipynb).
MAX_NOTEBOOK_BYTES = 10_000_000

#: Name of the kernel the chapters run on (a spec for the running interpreter is provided).
KERNEL_NAME = "python3"

#: The book's parameter file, next to ``_config.yml`` and ``_toc.yml``.
PARAMS_FILE = "book_params.yml"

#: Folder (relative to the book folder) that holds the executed chapters.
NOTEBOOK_DIR = "book"

#: The works the chapters cite (``bibtex_bibfiles`` in ``_config.yml``), beside ``_config.yml``.
BIBLIOGRAPHY = "references.bib"

#: Parameter that the pipeline sets itself.
RESULTS_PARAM = "results_path"


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_JUPYTER_BOOK_MAIN = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"






@dataclass(frozen=True)
class Chapter:
    """One chapter of the table of contents.

    Attributes
    ----------
    name : str
        ``NN_name``: the stem shared by the source, the executed notebook and the results.
    docname : str
        The entry in ``_toc.yml`` (``book/NN_name``).
    source : pathlib.Path
        The jupytext source ``notebooks/NN_name.py``.
    """

    name: str
    docname: str
    source: Path


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


def toc_chapters(root: Path) -> list[Chapter]:
    """The chapters of ``root/_toc.yml`` with their jupytext sources.

    Parameters
    ----------
    root : pathlib.Path
        The project folder (``_toc.yml``, ``notebooks/``).

    Returns
    -------
    list of Chapter
        In reading order. The Markdown pages of the toc (``pages/name``, :func:`toc_pages`)
        are not chapters and are left out.

    Raises
    ------
    BookError
        If an entry is neither ``book/NN_name`` nor ``pages/name``, a chapter's source
        ``notebooks/NN_name.py`` is missing, or a page's ``pages/name.md``.
    """
    chapters = []
    for docname in toc_docnames(root / "_toc.yml"):
        folder, _, name = docname.rpartition("/")
        if is_page(docname):
            if not page_file(root, docname).is_file():
                raise BookError(f"_toc.yml lists {docname} but {page_file(root, docname)} does "
                                "not exist; add the page or remove the entry")
            continue
        if folder != NOTEBOOK_DIR or not name:
            raise BookError(
                f"{root / '_toc.yml'}: entry {docname!r} is not {NOTEBOOK_DIR}/NN_name; every "
                f"page of the book is an executed chapter {NOTEBOOK_DIR}/NN_name.ipynb or a "
                f"Markdown page {PAGES_DIR}/name.md"
            )
        source = root / "notebooks" / f"{name}.py"
        if not source.is_file():
            raise BookError(
                f"_toc.yml lists {docname} but its source {source} does not exist; add the "
                "chapter or remove the entry"
            )
        chapters.append(Chapter(name=name, docname=docname, source=source))
    return chapters


def toc_pages(root: Path) -> list[str]:
    """The Markdown pages of ``root/_toc.yml`` (docnames ``pages/name``), in reading order."""
    return [d for d in toc_docnames(root / "_toc.yml") if is_page(d)]


def select_chapters(chapters: Sequence[Chapter], wanted: Sequence[str] | None) -> list[Chapter]:
    """The chapters named in ``wanted`` (full name, docname or number prefix), in toc order.

    Parameters
    ----------
    chapters : sequence of Chapter
        All chapters of the table of contents.
    wanted : sequence of str or None
        E.g. ``["01_geometry"]``, ``["book/01_geometry"]`` or ``["01"]``; None selects all.

    Returns
    -------
    list of Chapter

    Raises
    ------
    BookError
        If a name matches no chapter, or several.
    """
    if wanted is None:
        return list(chapters)
    if not wanted:
        raise BookUsageError("--chapters needs at least one chapter name")
    picked: set[str] = set()
    for item in wanted:
        key = item.strip().removesuffix(".py").removesuffix(".ipynb").rpartition("/")[2]
        hits = [c for c in chapters if c.name == key or c.name.split("_", 1)[0] == key]
        if len(hits) != 1:
            names = ", ".join(c.name for c in chapters)
            what = "matches no chapter" if not hits else "is ambiguous"
            raise BookUsageError(f"chapter {item!r} {what}; the chapters are: {names}")
        picked.add(hits[0].name)
    return [c for c in chapters if c.name in picked]


#: Chapters numbered from here on (the scorecard, the About page) read the other chapters'
#: results and run records, so each runs alone, after every chapter numbered below it.
GATHERING_CHAPTERS = 90


def execution_order(chapters: Sequence[Chapter]) -> list[Chapter]:
    """The chapters in the order they run: by their number (``NN_name``), not the toc's.

    The table of contents sets the reading order; a page that gathers the other chapters'
    results (the scorecard, ``90_scorecard``) is read early but must run after them.
    """
    return sorted(chapters, key=lambda c: c.name)


def execution_stages(chapters: Sequence[Chapter]) -> list[list[Chapter]]:
    """The chapters in groups that may run at the same time, groups in the order they run.

    Chapters numbered below :data:`GATHERING_CHAPTERS` read only the activation store and the
    data, never each other, so they form one group; each gathering chapter is a group of
    its own after them, in number order.
    """
    ordered = execution_order(chapters)
    content = [c for c in ordered if _number(c) < GATHERING_CHAPTERS]
    gathering = [[c] for c in ordered if _number(c) >= GATHERING_CHAPTERS]
    return ([content] if content else []) + gathering


def _number(chapter: Chapter) -> int:
    """The ``NN`` of ``NN_name`` (chapters without a number prefix count as 0)."""
    prefix = chapter.name.split("_", 1)[0]
    return int(prefix) if prefix.isdigit() else 0


def read_chapter(source: Path) -> Any:
    """Convert a jupytext chapter source into an nbformat notebook (not executed).

    Parameters
    ----------
    source : pathlib.Path
        ``notebooks/NN_name.py`` in jupytext percent format.

    Returns
    -------
    nbformat.NotebookNode
        With a ``python3`` kernelspec and no jupytext metadata.
    """
    import jupytext

    nb = jupytext.read(source)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": KERNEL_NAME,
    }
    return nb


def _parameters_cell(nb: Any, label: str) -> Any:
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1 or cells[0].cell_type != "code":
        raise BookError(
            f"{label}: needs exactly one code cell tagged 'parameters' "
            f"(found {len(cells)}); in jupytext percent format: # %% tags=[\"parameters\"]"
        )
    return cells[0]


def chapter_parameters(nb: Any, label: str = "chapter") -> dict[str, Any]:
    """The defaults declared in a notebook's ``parameters`` cell.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The chapter.
    label : str
        Used in error messages.

    Returns
    -------
    dict
        Name -> default for every top-level ``name = value`` or ``name: type = value`` of the
        cell; a value that is not a Python literal is given as its source text.

    Raises
    ------
    BookError
        If there is no (or more than one) parameters cell or it is not valid Python.
    """
    cell = _parameters_cell(nb, label)
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as exc:
        raise BookError(f"{label}: the parameters cell is not valid Python: {exc}") from exc
    params: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    params[target.id] = ast.literal_eval(value)
                except ValueError:
                    params[target.id] = ast.get_source_segment(cell.source, value)
    return params


def parse_overrides(pairs: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Parse ``-p NAME VALUE`` pairs; each value is YAML (``'[gpt2, bert-base-cased]'``, ``3``).

    Parameters
    ----------
    pairs : sequence of (str, str)
        As collected by argparse.

    Returns
    -------
    dict
        Name -> parsed value (later pairs win).

    Raises
    ------
    BookError
        If a name is not a Python identifier or a value is not valid YAML.
    """
    parsed: dict[str, Any] = {}
    for name, text in pairs:
        if not name.isidentifier():
            raise BookUsageError(f"-p {name}: a parameter name must be a Python identifier")
        try:
            parsed[name] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise BookUsageError(f"-p {name} {text!r}: the value is not valid YAML: "
                                 f"{exc}") from exc
    return parsed


def load_book_params(path: Path) -> dict[str, dict[str, Any]]:
    """Read ``book_params.yml``.

    Parameters
    ----------
    path : pathlib.Path
        A YAML mapping with optional keys ``defaults`` (name -> value, for every chapter that
        declares the name) and ``chapters`` (chapter name -> name -> value). A missing file
        means no settings.

    Returns
    -------
    dict
        ``{"defaults": {...}, "chapters": {name: {...}}}``.

    Raises
    ------
    BookError
        If the file has another shape.
    """
    if not path.is_file():
        return {"defaults": {}, "chapters": {}}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise BookError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or set(data) - {"defaults", "chapters"}:
        raise BookError(f"{path}: expected a mapping with the keys 'defaults' and 'chapters'")
    defaults = data.get("defaults") or {}
    sections = data.get("chapters") or {}
    if not isinstance(defaults, dict) or not isinstance(sections, dict):
        raise BookError(f"{path}: 'defaults' and 'chapters' must be mappings")
    for name, section in sections.items():
        if section is not None and not isinstance(section, dict):
            raise BookError(f"{path}: chapters.{name} must be a mapping of parameters")
    return {
        "defaults": dict(defaults),
        "chapters": {str(k): dict(v or {}) for k, v in sections.items()},
    }


def resolve_parameters(
    chapter: str,
    declared: dict[str, Any],
    config: dict[str, dict[str, Any]],
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """The parameters papermill injects into one chapter.

    Precedence, lowest first: the chapter's defaults (``declared``, left in its own cell) <
    ``config["defaults"]`` < ``config["chapters"][chapter]`` < ``overrides``. Names in
    ``defaults`` and ``overrides`` that the chapter does not declare are not passed to it;
    ``results_path`` is always ``<chapter>.results.json`` (relative to the book folder, where
    the chapter runs).

    Parameters
    ----------
    chapter : str
        Chapter name (``NN_name``).
    declared : dict
        The chapter's defaults, from :func:`chapter_parameters`.
    config : dict
        From :func:`load_book_params`.
    overrides : dict
        From :func:`parse_overrides`.

    Returns
    -------
    dict
        Name -> value, in the order papermill writes them.

    Raises
    ------
    BookError
        If the chapter does not declare ``results_path``, its ``book_params.yml`` section
        names a parameter it does not declare, ``results_path`` is overridden, or a
        parameter whose default is a list is given a single value.
    """
    if RESULTS_PARAM not in declared:
        raise BookError(f"{chapter}: its parameters cell must declare {RESULTS_PARAM}")
    section = config["chapters"].get(chapter, {})
    unknown = sorted(set(section) - set(declared))
    if unknown:
        raise BookError(
            f"{PARAMS_FILE}: chapters.{chapter} sets {', '.join(unknown)}, which the "
            f"chapter does not declare (its parameters: {', '.join(declared)})"
        )
    for layer in (config["defaults"], section, overrides):
        if RESULTS_PARAM in layer:
            raise BookUsageError(f"{RESULTS_PARAM} is set by the pipeline; do not override it")
    merged: dict[str, Any] = {}
    for layer in (config["defaults"], section, overrides):
        merged.update({k: v for k, v in layer.items() if k in declared})
    for name, value in merged.items():
        _check_list(chapter, name, declared[name], value)
        _check_number(chapter, name, declared[name], value)
    merged[RESULTS_PARAM] = f"{chapter}.results.json"
    return merged


def _check_list(chapter: str, name: str, default: Any, value: Any) -> None:
    """A list parameter must be given a list, and a non-empty one if its default is."""
    if not isinstance(default, list | tuple):
        return
    if not isinstance(value, list | tuple):
        raise BookUsageError(
            f"{chapter}: {name} is a list (default {default!r}) but was given "
            f"{value!r}; write a YAML list, e.g. -p {name} '[{value}]'"
        )
    if default and not value:
        example = json.dumps(list(default)[:1])
        raise BookUsageError(
            f"{chapter}: {name} is an empty list; name at least one, e.g. -p {name} "
            f"'{example}' (its default is {default!r})"
        )


def _check_number(chapter: str, name: str, default: Any, value: Any) -> None:
    """A parameter with a number as default takes a number of the same kind: an integer
    (a size, a seed, a count of resamples) is never negative; found before any kernel starts."""
    if isinstance(default, bool) or not isinstance(default, int | float):
        return
    if isinstance(default, int) and (isinstance(value, bool) or not isinstance(value, int)):
        raise BookUsageError(f"{chapter}: {name} is a whole number (default {default!r}), not "
                             f"{value!r}; e.g. -p {name} {default}")
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value):
        raise BookUsageError(f"{chapter}: {name} is a number (default {default!r}), not "
                             f"{value!r}; e.g. -p {name} {default}")
    if value < 0 <= default:
        raise BookUsageError(f"{chapter}: {name} cannot be negative ({value!r}); its default "
                             f"is {default!r}")


def check_parameter_names(
    chapters: Sequence[Chapter],
    declared: dict[str, dict[str, Any]],
    config: dict[str, dict[str, Any]],
    overrides: dict[str, Any],
) -> None:
    """Reject settings that no chapter would receive (typos).

    Parameters
    ----------
    chapters : sequence of Chapter
        The chapters being executed.
    declared : dict
        Chapter name -> its declared parameters (for every chapter of the toc).
    config, overrides : dict
        As for :func:`resolve_parameters`.

    Raises
    ------
    BookError
        If ``book_params.yml`` names an unknown chapter or a default no chapter declares, or
        an override names a parameter none of the selected chapters declares.
    """
    every = {name for params in declared.values() for name in params}
    stray = sorted(set(config["chapters"]) - set(declared))
    if stray:
        raise BookError(
            f"{PARAMS_FILE}: chapters {', '.join(stray)} are not in _toc.yml "
            f"(chapters: {', '.join(declared)})"
        )
    unused = sorted(set(config["defaults"]) - every)
    if unused:
        raise BookError(
            f"{PARAMS_FILE}: defaults {', '.join(unused)} are parameters of no chapter"
        )
    selected = {name for c in chapters for name in declared[c.name]}
    unused = sorted(set(overrides) - selected)
    if unused:
        raise BookUsageError(
            f"-p {', '.join(unused)}: not a parameter of the chapters being executed "
            f"({', '.join(c.name for c in chapters)}); their parameters: "
            f"{', '.join(sorted(selected))}"
        )


@contextmanager
def interpreter_kernel() -> Iterator[str]:
    """Make the ``python3`` kernel resolve to the running interpreter.

    A kernelspec whose argv starts with ``sys.executable`` is written to a temporary folder
    that is put first on ``JUPYTER_PATH`` for the duration, so that a user-level ``python3``
    kernelspec pointing at another Python cannot take precedence. The kernel runs with
    progress bars disabled.

    Yields
    ------
    str
        The kernel name to pass to papermill.
    """
    with tempfile.TemporaryDirectory(prefix="lmgeometry-kernel-") as tmp:
        spec = Path(tmp) / "kernels" / KERNEL_NAME
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                             "{connection_file}"],
                    "display_name": "Python 3 (ipykernel)",
                    "language": "python",
                    "metadata": {"debugger": False},
                    # Progress bars only add timings to the notebooks (tqdm >= 4.66 and
                    # huggingface_hub read these).
                    "env": {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"},
                },
                indent=1,
            )
        )
        previous = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [tmp, previous]))
        try:
            yield KERNEL_NAME
        finally:
            if previous is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = previous


def _cell_ids(nb: Any) -> None:
    """Give cells ids derived from their source, so that re-runs keep them."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        base = hashlib.sha256(cell.source.encode()).hexdigest()[:12]
        seen[base] = seen.get(base, 0) + 1
        cell["id"] = base if seen[base] == 1 else f"{base}-{seen[base]}"


def stderr_outputs(nb: Any) -> list[tuple[int, str]]:
    """The stderr stream outputs of an executed notebook.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook.

    Returns
    -------
    list of (int, str)
        (cell index, text) for every cell that wrote to stderr.
    """
    found = []
    for index, cell in enumerate(nb.cells):
        text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stderr")
        if text:
            found.append((index, text))
    return found


def clean_notebook(nb: Any) -> Any:
    """Remove what changes from run to run without changing the chapter.

    Drops papermill's and nbclient's timing metadata (start/end times, durations, status),
    the paths papermill records, jupytext metadata, and replaces random cell ids with ids
    derived from the cell sources. Outputs are kept, except stderr streams: the book never
    shows them (``nb_output_stderr: remove``) and they carry local paths and timings, so
    :func:`execute_chapter` prints them to the terminal instead. The parameter cells (the
    chapter's defaults and papermill's injected values) get the ``hide-input`` tag so that
    the page shows them collapsed.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook (modified in place).

    Returns
    -------
    nbformat.NotebookNode
        The same notebook.
    """
    record = nb.metadata.pop("papermill", {})
    if record.get("parameters"):
        nb.metadata["papermill"] = {"parameters": record["parameters"]}
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs
                            if not (o.output_type == "stream" and o.get("name") == "stderr")]
        tags = cell.metadata.get("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "hide-input" not in tags:
            cell.metadata["tags"] = [*tags, "hide-input"]
    _cell_ids(nb)
    return nb


def notebook_bytes(nb: Any) -> bytes:
    """The notebook serialised exactly as it is written to disk."""
    import nbformat

    return (nbformat.writes(nb) + "\n").encode()


@dataclass
class Execution:
    """What :func:`run_chapter` measured while it executed a chapter.

    Attributes
    ----------
    notebook : pathlib.Path
        The executed (and cleaned) notebook ``book/NN_name.ipynb``.
    seconds : float
        Wall time, kernel start to notebook written.
    cells : list of CellTime
        Each code cell's wall time (kept out of the written notebook).
    events : list of dict
        The chapter's :mod:`lmgeometry.trace` events (store entries opened, extraction and
        figure timings).
    peak_rss : int or None
        Peak resident memory of the kernel in bytes (None where it cannot be read).
    """

    notebook: Path
    seconds: float
    cells: list[CellTime]
    events: list[dict[str, Any]]
    peak_rss: int | None


def execute_chapter(
    chapter: Chapter,
    book_dir: Path,
    parameters: dict[str, Any],
    *,
    max_bytes: int = MAX_NOTEBOOK_BYTES,
    kernel_name: str = KERNEL_NAME,
    notebook: Any = None,
) -> Path:
    """Execute one chapter with papermill and write ``book_dir/book/<name>.ipynb``.

    :func:`run_chapter` without its measurements; see there for the parameters.

    Returns
    -------
    pathlib.Path
        The executed notebook.
    """
    return run_chapter(chapter, book_dir, parameters, max_bytes=max_bytes,
                       kernel_name=kernel_name, notebook=notebook).notebook


def run_chapter(
    chapter: Chapter,
    book_dir: Path,
    parameters: dict[str, Any],
    *,
    max_bytes: int = MAX_NOTEBOOK_BYTES,
    kernel_name: str = KERNEL_NAME,
    notebook: Any = None,
    env: dict[str, str] | None = None,
) -> Execution:
    """Execute one chapter with papermill, write ``book_dir/book/<name>.ipynb``, measure it.

    The kernel runs in ``book_dir/book`` so that relative paths (``results_path``) land
    next to the executed notebook. While it runs, the notebook is saved under
    ``book_dir/_build/executing/`` and the kernel records its store entries and timings in
    ``_build/executing/<name>.trace.jsonl`` (:mod:`lmgeometry.trace`); the committed notebook
    is only replaced on success, cleaned by :func:`clean_notebook` (no timings).

    Parameters
    ----------
    chapter : Chapter
        The chapter to run.
    book_dir : pathlib.Path
        The book folder (the project root, or an ``--out`` folder).
    parameters : dict
        From :func:`resolve_parameters`.
    max_bytes : int
        Size cap of the executed notebook.
    kernel_name : str
        Kernel to run on (see :func:`interpreter_kernel`).
    notebook : nbformat.NotebookNode, optional
        The chapter already converted by :func:`read_chapter` (converted here if omitted).
    env : dict, optional
        Environment variables for this chapter's kernel (e.g. its thread counts), on top of
        this process's environment.

    Returns
    -------
    Execution
        The notebook's path, wall time, cell times, trace events and the kernel's peak memory.

    Raises
    ------
    ChapterExecutionError
        If a cell raised (message: the cell's source and the traceback).
    BookError
        If the kernel died or the notebook exceeds ``max_bytes``.
    """
    nb_dir = book_dir / NOTEBOOK_DIR
    nb_dir.mkdir(parents=True, exist_ok=True)
    work = book_dir / "_build" / "executing" / f"{chapter.name}.ipynb"
    work.parent.mkdir(parents=True, exist_ok=True)
    events_file = work.with_suffix(".trace.jsonl")
    events_file.unlink(missing_ok=True)
    source_nb = with_code_record(notebook if notebook is not None
                                 else read_chapter(chapter.source))
    kernel: dict[str, Any] = {}
    start = time.perf_counter()
    env = {**(env or {}), TRACE_ENV: str(events_file)}  # the kernel records its trace there
    executed = _papermill(chapter, source_nb, work, parameters, kernel_name, nb_dir, kernel, env)
    executed.cells = [c for c in executed.cells
                      if CODE_RECORD_TAG not in c.get("metadata", {}).get("tags", [])]
    cells = cell_times(executed)
    _print_stderr(chapter, executed)
    clean_notebook(executed)
    target = _write_executed(chapter, executed, work, nb_dir / f"{chapter.name}.ipynb",
                             max_bytes)
    events = read_events(events_file)
    events_file.unlink(missing_ok=True)
    return Execution(notebook=target, seconds=time.perf_counter() - start, cells=cells,
                     events=events, peak_rss=kernel.get("peak_rss"))


#: Tag of the cell :func:`with_code_record` appends (removed before the notebook is written).
CODE_RECORD_TAG = "lmgeometry-code-record"


def with_code_record(nb: Any) -> Any:
    """A copy of ``nb`` with a last cell that records the package modules the kernel imported.

    The cell appends a ``code`` event (:func:`lmgeometry.sources.loaded_files`) to the
    chapter's trace after every other cell has run: the chapter's execution manifest lists
    those files (:func:`lmgeometry.report.cache.code_records`). :func:`run_chapter` removes the
    cell from the executed notebook.
    """
    import nbformat

    copy = nbformat.from_dict(nb)
    cell = nbformat.v4.new_code_cell(
        "from lmgeometry import sources as _lmg_sources, trace as _lmg_trace\n"
        "_lmg_trace.record('code', kernel=True, files=_lmg_sources.loaded_files())")
    cell.metadata["tags"] = [CODE_RECORD_TAG]
    copy.cells.append(cell)
    return copy


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


def _papermill(chapter: Chapter, source_nb: Any, work: Path, parameters: dict[str, Any],
               kernel_name: str, nb_dir: Path, kernel: dict[str, Any],
               env: dict[str, str]) -> Any:
    """Run papermill (the kernel gets ``env`` on top of this process's environment); a
    failing cell becomes :class:`ChapterExecutionError`."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    try:
        return papermill.execute_notebook(
            source_nb,
            str(work),
            parameters=parameters,
            kernel_name=kernel_name,
            cwd=str(nb_dir),
            progress_bar=False,
            log_output=False,
            start_timeout=180,
            kernel_manager_class=measuring_kernel_manager(kernel, env),
        )
    except PapermillExecutionError as exc:
        raise ChapterExecutionError(
            chapter=chapter.name,
            cell_index=exc.cell_index,
            source=exc.source,
            ename=exc.ename,
            evalue=exc.evalue,
            traceback=_ANSI.sub("", "\n".join(exc.traceback)),
            notebook=work,
        ) from None
    except Exception as exc:  # the kernel died, could not start, ...
        raise BookError(
            f"chapter {chapter.name}: execution stopped: {type(exc).__name__}: {exc}\n"
            f"the partially executed notebook is {work}"
        ) from exc


def _print_stderr(chapter: Chapter, executed: Any) -> None:
    """Print the chapter's stderr outputs (the written notebook does not keep them)."""
    for index, text in stderr_outputs(executed):
        lines = text.rstrip().splitlines()
        shown = "\n    ".join(lines[:20] + ([f"... ({len(lines) - 20} more lines)"]
                                              if len(lines) > 20 else []))
        _say(f"[book] {chapter.name}, cell {index}, stderr (not kept in the notebook):\n"
             f"    {shown}", sys.stderr)


def _say(line: str, stream: Any = None) -> None:
    """Write ``line`` and its newline in one call, so that chapters running in threads never
    break each other's lines (``print`` writes the newline separately)."""
    stream = stream or sys.stdout
    stream.write(line + "\n")
    stream.flush()


def _write_executed(chapter: Chapter, executed: Any, work: Path, target: Path,
                    max_bytes: int) -> Path:
    """Check the size cap and replace ``target`` atomically with the cleaned notebook."""
    import nbformat

    data = notebook_bytes(executed)
    if len(data) > max_bytes:
        work.write_bytes(data)
        raise BookError(
            f"chapter {chapter.name}: the executed notebook is {len(data) / 1e6:.1f} MB, over "
            f"the {max_bytes / 1e6:g} MB cap. Figures embed their points: lower the "
            "chapter's point budget (its `point_budget` parameter, in book_params.yml or with "
            f"`-p point_budget N`) or its corpus size. The notebook was left at {work}."
        )
    nbformat.validate(executed)
    tmp = target.with_suffix(".ipynb.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    work.unlink(missing_ok=True)
    return target


def build_html(book_dir: Path, out: Path | None = None, *, strict: bool = True) -> Path:
    """Render executed chapters with Jupyter Book 1; nothing is executed.

    Parameters
    ----------
    book_dir : pathlib.Path
        Folder with ``_config.yml``, ``_toc.yml`` and the executed ``book/*.ipynb``.
    out : pathlib.Path, optional
        Output folder; the HTML goes to ``out/_build/html`` (default ``book_dir``).
    strict : bool
        Treat Sphinx warnings as errors (``-W --keep-going``).

    Returns
    -------
    pathlib.Path
        The HTML folder (open ``index.html``).

    Raises
    ------
    BookError
        If a chapter of the toc has no executed notebook, Jupyter Book fails, or a page
        references anything outside the file tree.
    """
    book_dir = paths.user_path(book_dir).resolve()
    for name in ("_config.yml", "_toc.yml"):
        if not (book_dir / name).is_file():
            raise BookError(f"{book_dir / name} does not exist")
    docnames = toc_docnames(book_dir / "_toc.yml")
    absent = [page_file(book_dir, d) for d in docnames
              if is_page(d) and not page_file(book_dir, d).is_file()]
    if absent:
        raise BookError(f"_toc.yml lists pages that do not exist: "
                        f"{', '.join(str(p) for p in absent)}")
    missing = [d for d in docnames if not is_page(d) and not page_file(book_dir, d).is_file()]
    if missing:
        names = " ".join(d.rpartition("/")[2] for d in missing)
        raise BookError(
            f"not executed yet: {', '.join(f'{d}.ipynb' for d in missing)} in {book_dir}; "
            f"run `lmgeometry book --chapters {names}`"
        )
    out = paths.user_path(out or book_dir).resolve()
    html_dir = out / "_build" / "html"
    command = [sys.executable, "-c", _JUPYTER_BOOK_MAIN, "build", str(book_dir),
               "--path-output", str(out), "--builder", "html", "--quiet"]
    if strict:
        command += ["-W", "--keep-going"]
    done = subprocess.run(command, cwd=book_dir, check=False)
    if done.returncode != 0:
        raise BookError(
            f"jupyter-book build failed (exit {done.returncode}); see its output above"
            + (" (warnings count as errors)" if strict else "")
        )
    problems = external_references(html_dir)
    if problems:
        raise BookError(
            "the built HTML loads resources from outside the file tree:\n  "
            + "\n  ".join(problems[:20])
            + ("\n  ..." if len(problems) > 20 else "")
        )
    return html_dir


def _prune_toc(entries: list[Any], keep: set[str]) -> list[Any]:
    """Drop ``file`` entries not in ``keep`` (and parts left empty) from toc entries."""
    kept = []
    for entry in entries:
        if not isinstance(entry, dict):
            kept.append(entry)
            continue
        entry = dict(entry)
        if "file" in entry and str(entry["file"]).rsplit(".", 1)[0] not in keep:
            continue
        for key in ("parts", "chapters", "sections"):
            if key in entry:
                entry[key] = _prune_toc(entry[key], keep)
                if not entry[key]:
                    del entry[key]
        if not {"file", "url", "glob", "parts", "chapters", "sections"} & set(entry):
            continue
        kept.append(entry)
    return kept


def write_book_config(root: Path, book_dir: Path) -> None:
    """Give an ``--out`` folder its own ``_config.yml`` and ``_toc.yml``.

    The config (and the bibliography, :data:`BIBLIOGRAPHY`) and the Markdown pages
    (``pages/*.md``: the API reference) are copied; the toc keeps those pages and the
    chapters executed in ``book_dir/book``; a link in the chapters' text to a chapter this book
    does not hold becomes plain text (:func:`unlink_absent`), so a book of some chapters
    builds.

    Parameters
    ----------
    root : pathlib.Path
        The project folder.
    book_dir : pathlib.Path
        The ``--out`` folder.
    """
    shutil.copyfile(root / "_config.yml", book_dir / "_config.yml")
    if (root / BIBLIOGRAPHY).is_file():
        shutil.copyfile(root / BIBLIOGRAPHY, book_dir / BIBLIOGRAPHY)
    for docname in toc_pages(root):
        target = page_file(book_dir, docname)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page_file(root, docname), target)
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    present = {d for d in toc_docnames(root / "_toc.yml") if page_file(book_dir, d).is_file()}
    for key in ("parts", "chapters"):
        if key in toc:
            toc[key] = _prune_toc(toc[key], present)
            if not toc[key]:
                del toc[key]
    header = (
        "# Written by `lmgeometry book --out`: the chapters of the project's _toc.yml that\n"
        "# were executed into this folder.\n"
    )
    (book_dir / "_toc.yml").write_text(header + yaml.safe_dump(toc, sort_keys=False))
    for docname in sorted(d for d in present if not is_page(d)):
        unlink_absent(book_dir / f"{docname}.ipynb", present)


#: A Markdown link to a chapter notebook: ``[text](NN_name.ipynb)`` (an anchor may follow).
_CHAPTER_LINK = re.compile(r"\[([^\]]+)\]\((\d\d_[A-Za-z0-9_]+)\.ipynb(#[^)]*)?\)")


def unlink_absent(notebook: Path, present: set[str]) -> bool:
    """Turn the notebook's Markdown links to chapters not in ``present`` into their text.

    Parameters
    ----------
    notebook : pathlib.Path
        An executed chapter in a separate book (rewritten in place when a link changes).
    present : set of str
        The book's documents (``book/NN_name``).

    Returns
    -------
    bool
        Whether the notebook changed.
    """
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        text = _CHAPTER_LINK.sub(
            lambda m: m.group(0) if f"book/{m.group(2)}" in present else m.group(1), cell.source)
        changed |= text != cell.source
        cell.source = text
    if changed:
        notebook.write_bytes(notebook_bytes(nb))
    return changed


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

    A chapter whose execution manifest (``book/NN_name.exec.json``, see
    :mod:`lmgeometry.report.cache`) matches its source, parameters, package, environment,
    models and the store entries it read, and whose notebook and results file are the ones
    recorded, is skipped; the log says which chapters were skipped and why the others ran.
    The HTML build is skipped when none of its inputs changed since the last one.

    Parameters
    ----------
    params : dict, optional
        Overrides of chapter parameters (highest precedence), e.g.
        ``{"models": ["gpt2", "bert-base-cased"]}``; a name no executed chapter declares
        is an error.
    out : pathlib.Path or str, optional
        Build a separate book in this folder (``out/_config.yml``, ``out/_toc.yml``,
        ``out/book/*.ipynb``, ``out/_build/html``); the project's ``book/`` is untouched.
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
        For a ``params`` or ``chapters`` value that cannot work (an empty model list, an
        unknown parameter, ...): found before any chapter runs.
    PathError
        ``out`` is a file or cannot be written.
    BookError
        For configuration errors, size-cap violations and HTML build failures.
    """
    root = check_package((root or project_root()).resolve())
    book_dir = root if out is None else paths.refuse_checkout(
        out, "the book folder (--out)").resolve()
    separate = book_dir != root
    toc = toc_chapters(root)
    selected = select_chapters(toc, chapters)
    if separate:
        selected = with_required_pages(toc, selected, book_dir)

    inputs = BookInputs.current()
    rows: list[ChapterProfile] = []
    if execute:  # every parameter mistake is found before the first chapter runs
        sources = {c.name: read_chapter(c.source) for c in toc}
        resolved = _resolve_all(root, sources, selected, dict(params or {}))
    if separate:
        paths.writable_folder(book_dir, "the book folder (--out)")
    if execute:
        with _environment(PROJECT_ENV, str(root)):  # the About page names root's commit
            rows = _execute_chapters(book_dir, selected, sources, resolved, inputs=inputs,
                                     force=force, max_bytes=max_notebook_bytes, jobs=jobs)
        write_profiles(book_dir / PROFILE_FILE, rows, [c.name for c in toc])
    if separate:
        write_book_config(root, book_dir)
    html_dir, html_s = (_html_step(book_dir, force=force) if html
                        else (book_dir / NOTEBOOK_DIR, None))
    if profile:
        html_note = ("not built (--no-html)" if not html else
                     "skipped (unchanged)" if html_s is None else f"{html_s:.1f} s")
        print(f"[book] profile ({book_dir / PROFILE_FILE}):\n{profile_table(rows)}\n"
              f"HTML build: {html_note}", flush=True)
    return html_dir


#: The About page: the build's records and the bibliography every chapter's citations link to.
ABOUT_DOCNAME = f"{NOTEBOOK_DIR}/99_about"


def with_required_pages(toc: Sequence[Chapter], selected: Sequence[Chapter],
                        book_dir: Path) -> list[Chapter]:
    """``selected`` plus the pages a separate book cannot do without, unless already executed
    in ``book_dir``: the root page (the toc's first) and the About page (its bibliography
    resolves the chapters' citations; a cheap chapter), when the toc has one."""
    required = [toc[0], *(c for c in toc if c.docname == ABOUT_DOCNAME)]
    missing = [c for c in required if c not in selected
               and not (book_dir / f"{c.docname}.ipynb").is_file()]
    return [c for c in toc if c in selected or c in missing]


def _execute_chapters(book_dir: Path, selected: Sequence[Chapter], sources: dict[str, Any],
                      resolved: dict[str, dict[str, Any]], *, inputs: BookInputs, force: bool,
                      max_bytes: int, jobs: int = 1) -> list[ChapterProfile]:
    """Execute the selected chapters that changed (all with ``force``); their profile rows.

    ``resolved`` holds each chapter's checked parameters (:func:`_resolve_all`). Each executed
    chapter gets its execution manifest; a skipped one keeps it and its row of the last
    profile (status ``"skipped"``). Up to ``jobs`` chapters of a stage
    (:func:`execution_stages`) run at the same time, each kernel with its share of the cores
    as its thread count unless ``OMP_NUM_THREADS`` is set. When a chapter fails, no further
    chapter starts; those already running finish and keep their results; the first failure
    is raised.
    """
    previous = read_profiles(book_dir / PROFILE_FILE)
    rows: dict[str, ChapterProfile] = {}
    env = _kernel_threads(jobs)
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
                _say(f"[book] skipping {chapter.name}: unchanged since its last execution "
                     f"({key_summary(recorded or {})})")
                last = previous.get(chapter.name, ChapterProfile(chapter=chapter.name))
                rows[chapter.name] = dataclasses.replace(last, status="skipped")

            def execute(item: tuple[Chapter, Any, Path, list[str]]) -> ChapterProfile:
                chapter, key, results, reasons = item
                values = resolved[chapter.name]
                shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
                _say(f"[book] executing {chapter.name} ({shown}); because: "
                     + "; ".join(reasons))
                run = run_chapter(chapter, book_dir, values, kernel_name=kernel,
                                  max_bytes=max_bytes, notebook=sources[chapter.name], env=env)
                write_manifest(run.notebook, key, store_records(run.events), results,
                               input_records(run.events, run.notebook.parent),
                               code_records(run.events))
                write_run_record(run.notebook, run.seconds, run.peak_rss)
                _say(f"[book] {chapter.name}: {run.seconds:.1f} s, "
                     f"{run.notebook.stat().st_size / 1e6:.2f} MB -> {run.notebook}")
                return ChapterProfile.measured(chapter.name, run.seconds, run.cells,
                                               run.events, run.peak_rss)

            rows.update(_run_parallel(execute, todo, jobs))
    return [rows[c.name] for c in execution_order(selected)]


def _run_parallel(execute: Any, todo: Sequence[tuple], jobs: int) -> dict[str, ChapterProfile]:
    """``execute`` each item (chapter first) in up to ``jobs`` threads; rows by chapter name.

    After the first failure no new item starts; the running ones finish; the failure (the
    first in chapter order) is raised.
    """
    import concurrent.futures as cf

    rows: dict[str, ChapterProfile] = {}
    failures: dict[str, Exception] = {}
    queue = list(todo)
    jobs = max(1, jobs)
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        running: dict[cf.Future, str] = {}
        while queue or running:
            while queue and not failures and len(running) < jobs:
                item = queue.pop(0)
                running[pool.submit(execute, item)] = item[0].name
            if not running:
                break
            done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                try:
                    rows[name] = future.result()
                except Exception as exc:  # re-raised below, the first in chapter order
                    failures[name] = exc
    if failures:
        raise failures[min(failures)]
    return rows


def _kernel_threads(jobs: int) -> dict[str, str]:
    """Thread counts for chapter kernels when ``jobs`` run at once: the cores shared out,
    at least one each; nothing where the user set ``OMP_NUM_THREADS`` or only one runs."""
    if jobs <= 1 or "OMP_NUM_THREADS" in os.environ:
        return {}
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


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
    """The parameters of each selected chapter (:func:`resolve_parameters`), all checked."""
    config = load_book_params(root / PARAMS_FILE)
    declared = {name: chapter_parameters(nb, f"notebooks/{name}.py")
                for name, nb in sources.items()}
    check_parameter_names(selected, declared, config, overrides)
    return {c.name: resolve_parameters(c.name, declared[c.name], config, overrides)
            for c in selected}


def build_book_cli(args: argparse.Namespace) -> int:
    """Entry point of ``lmgeometry book`` (see ``lmgeometry book --help``).

    Parameters
    ----------
    args : argparse.Namespace
        ``param`` (list of [name, YAML value]), ``out``, ``chapters``, ``no_html``, and
        optionally ``force``, ``profile`` and ``jobs``.

    Returns
    -------
    int
        0 on success, 1 when a chapter failed (the failing cell and the kernel's traceback
        are printed to stderr: they are the message).

    Raises
    ------
    BookError
        Any other problem that stops the build; ``lmgeometry`` prints it on one line.
    """
    try:
        build_book(
            params=parse_overrides(args.param or []),
            out=args.out,
            chapters=args.chapters,
            html=not args.no_html,
            force=getattr(args, "force", False),
            profile=getattr(args, "profile", False),
            jobs=getattr(args, "jobs", 1),
        )
    except ChapterExecutionError as exc:
        print(f"lmgeometry book: error: {exc}", file=sys.stderr)
        return 1
    return 0
