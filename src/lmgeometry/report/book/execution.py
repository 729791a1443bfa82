"""Executing chapters: jupytext source -> papermill on a kernel of the running interpreter ->
cleaned ``book/NN_name.ipynb``, measured; several chapters at once in threads.

:func:`run_chapter` converts nothing it is given, runs the kernel in the book folder (so that a
chapter's ``results_path`` lands beside its notebook), prints the kernel's stderr (the notebook
does not keep it), strips what changes from run to run (:func:`clean_notebook`), checks the
size cap and replaces the notebook only on success.

Ctrl-C or SIGTERM during a build stops the running chapters within seconds
(:func:`run_parallel`): each kernel runs in a session of its own, so the terminal's signal does
not reach it; the kernels get SIGINT (the running cell raises ``KeyboardInterrupt``, so what
it was writing is removed), and those still running :data:`KERNEL_GRACE_S` seconds later are
killed with their process group. No chapter's notebook or manifest is replaced.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmgeometry.errors import BookError, ChapterExecutionError
from lmgeometry.report.book.chapters import NOTEBOOK_DIR, Chapter
from lmgeometry.report.book.parameters import RESULTS_PARAM
from lmgeometry.report.book.progress import section_hook
from lmgeometry.report.profile import (
    CellTime,
    ChapterProfile,
    cell_times,
    measuring_kernel_manager,
)
from lmgeometry.trace import TRACE_ENV, read_events

__all__ = [
    "clean_notebook",
    "CODE_RECORD_TAG",
    "execute_chapter",
    "Execution",
    "interpreter_kernel",
    "KERNEL_GRACE_S",
    "KERNEL_NAME",
    "KERNEL_WARNINGS",
    "kernel_threads",
    "MAX_NOTEBOOK_BYTES",
    "notebook_bytes",
    "read_chapter",
    "run_chapter",
    "run_parallel",
    "say",
    "stderr_outputs",
    "with_code_record",
]


#: Executed notebooks larger than this fail the build (bytes of the written .ipynb).
MAX_NOTEBOOK_BYTES = 10_000_000

#: Name of the kernel the chapters run on (a spec for the running interpreter is provided).
KERNEL_NAME = "python3"


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: After Ctrl-C or SIGTERM, how long the running chapters' kernels have to stop on SIGINT
#: before they are killed (seconds).
KERNEL_GRACE_S = 10.0

#: The running chapters' kernels: each one's sink (its ``pid`` once started).
_RUNNING: list[dict[str, Any]] = []
_RUNNING_LOCK = threading.Lock()

#: Set when the build is being stopped: no chapter runs another cell.
_STOPPING = threading.Event()


class _Stopped(Exception):
    """The build is being stopped (Ctrl-C, SIGTERM): raised before a chapter's next cell."""


def _unless_stopping(hook: Callable[..., None]) -> Callable[..., None]:
    """``hook`` (nbclient's ``on_cell_execute``), after refusing to run a cell once the build
    is being stopped: a chapter between two cells, or whose kernel is still starting, runs no
    further cell."""
    def checked(**kwargs: Any) -> None:
        if _STOPPING.is_set():
            raise _Stopped("the build is being stopped (Ctrl-C or SIGTERM)")
        hook(**kwargs)

    return checked


def _signal_kernels(signum: int) -> None:
    """Send ``signum`` to every running chapter's kernel and its process group."""
    with _RUNNING_LOCK:
        pids = [sink.get("pid") for sink in _RUNNING]
    for pid in filter(None, pids):
        try:
            os.killpg(pid, signum)  # the kernel leads a session of its own
        except (ProcessLookupError, PermissionError):
            continue


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


@contextmanager
def interpreter_kernel() -> Iterator[str]:
    """Make the ``python3`` kernel resolve to the running interpreter.

    A kernelspec whose argv starts with ``sys.executable`` is written to a temporary folder
    that is put first on ``JUPYTER_PATH`` for the duration, so that a user-level ``python3``
    kernelspec pointing at another Python cannot take precedence. The kernel runs with
    progress bars disabled and without tqdm's ipywidgets warning (:data:`KERNEL_WARNINGS`).

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
                    # ipykernel >= 7 takes CurveZMQ keys (profile.measuring_kernel_manager)
                    "metadata": {"debugger": False, "supported_encryption": ["curve"]},
                    # Progress bars only add timings to the notebooks (tqdm >= 4.66 and
                    # huggingface_hub read these).
                    "env": {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                            "PYTHONWARNINGS": _kernel_warnings()},
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


#: Warnings the chapters' kernels never print (``PYTHONWARNINGS`` entries): ``tqdm.auto``,
#: imported by huggingface_hub (so by every chapter that loads transformers) and by chapter 3,
#: warns once per kernel that ipywidgets is missing, though the bars are disabled anyway.
KERNEL_WARNINGS = ("ignore:IProgress not found",)


#: The label of the folded box that shows a chapter's parameters on its page.
PARAMETERS_PROMPT = "The parameters this chapter ran with"


def _kernel_warnings() -> str:
    """``PYTHONWARNINGS`` for a kernel: this process's own entries, then
    :data:`KERNEL_WARNINGS`."""
    return ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), *KERNEL_WARNINGS]))


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
    :func:`execute_chapter` prints them to the terminal instead. The page shows the
    parameters the chapter ran with as one folded box labelled :data:`PARAMETERS_PROMPT`:
    papermill's injected cell when there is one (the defaults cell is then left out of the
    page, ``remove-cell``, but kept in the notebook), else the defaults cell.

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
    _fold_parameters(nb)
    _cell_ids(nb)
    return nb


def _fold_parameters(nb: Any) -> None:
    """Tag the parameter cells so the page shows one labelled, folded parameters box."""
    cells = {tag: cell for cell in nb.cells
             for tag in ("parameters", "injected-parameters")
             if tag in cell.metadata.get("tags", [])}
    shown = cells.get("injected-parameters", cells.get("parameters"))
    for tag, cell in cells.items():
        fold = "hide-input" if cell is shown else "remove-cell"
        cell.metadata["tags"] = [tag, fold]
        if cell is shown:
            cell.metadata["mystnb"] = {"code_prompt_show": PARAMETERS_PROMPT,
                                       "code_prompt_hide": "Hide the parameters"}


def notebook_bytes(nb: Any) -> bytes:
    """The notebook serialised exactly as it is written to disk.

    As ``nbformat.writes`` writes it (indented one space a level, keys sorted, text split into
    lines), except that a JSON output (a figure's plotly bundle, ``application/*+json``) is
    written on one line: indented, each of its values took a line of its own, which made a
    chapter's file about 1.5 times as large (chapter 5: 5.1 MB, 3.2 MB of it bundles). The
    file reads back to the same notebook (``nbformat.read``); Jupyter re-indents a notebook it
    saves.
    """
    import nbformat
    from nbformat.v4.nbjson import BytesEncoder
    from nbformat.v4.rwbase import split_lines, strip_transient

    if nb.get("nbformat") != 4:
        return (nbformat.writes(nb) + "\n").encode()
    nbformat.validate(nb)
    out = strip_transient(split_lines(copy.deepcopy(nb)))
    compact: dict[str, str] = {}
    salt = hashlib.sha256(json.dumps(nb, sort_keys=True, cls=BytesEncoder).encode()).hexdigest()
    for cell in out.cells:
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            for mime, value in data.items():
                if _JSON_MIME.match(mime) and isinstance(value, (dict, list)):
                    token = f"lmgeometry-json-{salt[:16]}-{len(compact)}"
                    compact[json.dumps(token)] = json.dumps(
                        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                        cls=BytesEncoder)
                    data[mime] = token
    text = json.dumps(out, indent=1, sort_keys=True, separators=(",", ": "),
                      ensure_ascii=False, cls=BytesEncoder)
    for token, value in compact.items():
        text = text.replace(token, value, 1)
    return (text + "\n").encode()


#: The mime types whose outputs are JSON values, not text (nbformat's rule).
_JSON_MIME = re.compile(r"^application/(.*\+)?json$")


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
    started = time.time()
    with _RUNNING_LOCK:
        _RUNNING.append(kernel)
    try:
        executed = _papermill(chapter, source_nb, work, parameters, kernel_name, nb_dir, kernel,
                              env, _unless_stopping(section_hook(chapter.name, source_nb, start,
                                                                 say)))
    except BaseException:
        events_file.unlink(missing_ok=True)  # a failed or stopped run's trace is no record
        raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.remove(kernel)
    _check_results_written(chapter, nb_dir / str(parameters.get(RESULTS_PARAM)
                                                  or f"{chapter.name}.results.json"), started)
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


def _check_results_written(chapter: Chapter, results: Path, started: float) -> None:
    """Refuse a run whose kernel did not write its ``results_path`` beside the notebook: a
    file left from an earlier run, or none, would pass for this run's numbers."""
    if results.is_file() and results.stat().st_mtime >= started - 1.0:
        return
    state = "left from an earlier run" if results.is_file() else "missing"
    raise BookError(
        f"chapter {chapter.name}: its results file {results} is {state}: the kernel did not "
        "write it during this run. Check that the chapter calls save_results(results_path, "
        "...) with the relative path it was given, and that nothing in the chapter changes "
        "the working directory; then run the book again.")


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


def _papermill(chapter: Chapter, source_nb: Any, work: Path, parameters: dict[str, Any],
               kernel_name: str, nb_dir: Path, kernel: dict[str, Any],
               env: dict[str, str], on_cell_execute: Callable[..., None]) -> Any:
    """Run papermill (the kernel gets ``env`` on top of this process's environment; nbclient
    calls ``on_cell_execute`` before each code cell); a failing cell becomes
    :class:`ChapterExecutionError`."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    try:
        return papermill.execute_notebook(
            source_nb,
            str(work),
            parameters=parameters,
            kernel_name=kernel_name,
            # The kernel starts in nb_dir (nbclient's resources path) without papermill's
            # cwd=, which os.chdir()s the whole process for the run: two chapters run in
            # threads then restore each other's working directory, and a kernel started in
            # between wrote its results file beside the repository instead of its notebook.
            cwd=None,
            resources={"metadata": {"path": str(nb_dir)}},
            progress_bar=False,
            log_output=False,
            start_timeout=600,  # a busy machine starts kernels slowly
            kernel_manager_class=measuring_kernel_manager(kernel, env),
            on_cell_execute=on_cell_execute,
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
        say(f"[book] {chapter.name}, cell {index}, stderr (not kept in the notebook):\n"
             f"    {shown}", sys.stderr)


def say(line: str, stream: Any = None) -> None:
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


def run_parallel(execute: Any, todo: Sequence[tuple], jobs: int) -> dict[str, ChapterProfile]:
    """``execute`` each item (chapter first) in up to ``jobs`` threads; rows by chapter name.

    After the first failure no new item starts; the running ones finish; the failure (the
    first in chapter order) is raised. Ctrl-C or SIGTERM (any exception in this thread) stops
    the running chapters' kernels (:func:`_stop_running`) and is raised once their threads
    have ended.
    """
    import concurrent.futures as cf

    rows: dict[str, ChapterProfile] = {}
    failures: dict[str, Exception] = {}
    queue = list(todo)
    jobs = max(1, jobs)
    _STOPPING.clear()
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        running: dict[cf.Future, str] = {}
        try:
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
        except BaseException:
            _stop_running(running)
            raise
    if failures:
        raise failures[min(failures)]
    return rows


def _stop_running(running: Any) -> None:
    """Stop the chapters running in ``running`` (futures): SIGINT to their kernels, so that
    each running cell raises ``KeyboardInterrupt`` and cleans up; the kernels still running
    :data:`KERNEL_GRACE_S` seconds later are killed. Returns once their threads have ended (a
    dead kernel fails its chapter at once)."""
    import concurrent.futures as cf

    say("[book] stopping the running chapters' kernels", sys.stderr)
    _STOPPING.set()
    _signal_kernels(signal.SIGINT)
    _, pending = cf.wait(running, timeout=KERNEL_GRACE_S)
    if pending:
        _signal_kernels(signal.SIGKILL)
    cf.wait(running)


def kernel_threads(jobs: int) -> dict[str, str]:
    """Thread counts for chapter kernels when ``jobs`` run at once: the cores shared out,
    at least one each; nothing where the user set ``OMP_NUM_THREADS`` or only one runs."""
    if jobs <= 1 or "OMP_NUM_THREADS" in os.environ:
        return {}
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}

