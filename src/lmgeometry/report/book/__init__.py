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

The package holds one idea a module: :mod:`~lmgeometry.report.book.chapters` (the toc's
chapters, their selection and execution order), :mod:`~lmgeometry.report.book.parameters`
(parameters cells, ``book_params.yml``, ``-p`` overrides and their checks),
:mod:`~lmgeometry.report.book.execution` (papermill, the kernel, cleaned notebooks, chapters in
parallel), :mod:`~lmgeometry.report.book.html` (Jupyter Book, the ``--out`` book's config and
toc) and :mod:`~lmgeometry.report.book.build` (:func:`build_book` and ``lmgeometry book``).
Their public names are importable from here.
"""

from lmgeometry.errors import BookError, ChapterExecutionError
from lmgeometry.report.book.build import build_book, check_package
from lmgeometry.report.book.chapters import (
    NOTEBOOK_DIR,
    Chapter,
    execution_order,
    execution_stages,
    select_chapters,
    toc_chapters,
    toc_pages,
    with_required_pages,
)
from lmgeometry.report.book.execution import (
    KERNEL_NAME,
    MAX_NOTEBOOK_BYTES,
    Execution,
    clean_notebook,
    execute_chapter,
    interpreter_kernel,
    notebook_bytes,
    read_chapter,
    run_chapter,
    stderr_outputs,
)
from lmgeometry.report.book.html import build_html, unlink_absent, write_book_config
from lmgeometry.report.book.parameters import (
    PARAMS_FILE,
    RESULTS_PARAM,
    chapter_parameters,
    check_injection,
    check_parameter_names,
    load_book_params,
    parameter_types,
    parse_overrides,
    plain_yaml,
    resolve_parameters,
)
from lmgeometry.report.offline import external_references
from lmgeometry.report.toc import project_root, toc_docnames

__all__ = [
    "BookError",
    "build_book",
    "build_html",
    "Chapter",
    "chapter_parameters",
    "ChapterExecutionError",
    "check_injection",
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
    "parameter_types",
    "PARAMS_FILE",
    "parse_overrides",
    "plain_yaml",
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
    "with_required_pages",
]
