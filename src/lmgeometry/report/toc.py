"""Where the book's sources are, and what its table of contents lists.

:func:`project_root` finds the checkout being built; :func:`toc_docnames` reads a
``_toc.yml`` in reading order; :func:`page_file` is the file behind one of its documents: an
executed chapter ``book/NN_name.ipynb``, or a page written by hand in Markdown,
``pages/name.md`` (:data:`PAGES_DIR`: the Python API reference), which is never executed.
The book pipeline (:mod:`lmgeometry.report.book`), the run records
(:mod:`lmgeometry.report.about`), the HTML build's inputs (:mod:`lmgeometry.report.cache`) and
publishing (:mod:`lmgeometry.report.publish`) all need them, and the pipeline needs the
others: so they live in this leaf, which imports nothing from the report, and no import goes
round in a circle. ``project_root`` and ``toc_docnames`` are also importable from
:mod:`lmgeometry.report.book`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lmgeometry.errors import BookError

__all__ = ["is_page", "page_file", "PAGES_DIR", "project_root", "toc_docnames"]

#: Folder (relative to the book folder) of the pages written in Markdown: ``pages/name.md``,
#: listed in ``_toc.yml`` as ``pages/name``. They are rendered as they are, not executed.
PAGES_DIR = "pages"


def is_page(docname: str) -> bool:
    """Whether a toc document is a Markdown page (``pages/name``), not an executed chapter."""
    return docname.rpartition("/")[0] == PAGES_DIR


def page_file(folder: Path, docname: str) -> Path:
    """The file behind a toc document in the book folder ``folder``.

    Parameters
    ----------
    folder : pathlib.Path
        The book (or project) folder that holds ``_toc.yml``.
    docname : str
        A document of the toc: ``book/NN_name`` or ``pages/name``.

    Returns
    -------
    pathlib.Path
        ``folder/pages/name.md`` for a Markdown page (:func:`is_page`), else the executed
        notebook ``folder/<docname>.ipynb``.
    """
    return folder / (f"{docname}.md" if is_page(docname) else f"{docname}.ipynb")


def project_root() -> Path:
    """The folder that holds ``_toc.yml``, ``_config.yml`` and ``notebooks/``.

    Returns
    -------
    pathlib.Path
        The current directory or its nearest parent that holds the book's sources, else the
        source checkout this package is installed from (editable install). When the two
        differ, the log says which checkout is built.

    Raises
    ------
    BookError
        If no such folder is found.
    """
    cwd = Path.cwd().resolve()
    installed = Path(__file__).resolve().parents[3]  # src/lmgeometry/report/toc.py
    for folder in (cwd, *cwd.parents, installed):
        if (folder / "_toc.yml").is_file() and (folder / "notebooks").is_dir():
            if folder != installed:  # one write, as book._say: no line split by a thread
                sys.stdout.write(f"[book] building the checkout {folder}; the lmgeometry "
                                 f"package in use is installed from {installed}\n")
                sys.stdout.flush()
            return folder
    raise BookError(
        "cannot find the book's sources (_toc.yml and notebooks/); run from the lmgeometry "
        f"checkout (looked in {cwd} and its parents, and in {installed})"
    )


def toc_docnames(toc_path: Path) -> list[str]:
    """Documents of a Jupyter Book ``_toc.yml`` in reading order (root first).

    Parameters
    ----------
    toc_path : pathlib.Path
        The table of contents (``format: jb-book``).

    Returns
    -------
    list of str
        Docnames without suffix, e.g. ``["book/00_introduction", "book/01_geometry"]``.
    """
    from sphinx_external_toc.parsing import MalformedError, parse_toc_yaml

    try:
        site_map = parse_toc_yaml(toc_path)
    except MalformedError as exc:
        raise BookError(f"{toc_path} is malformed: {exc}") from exc
    if site_map.globs():
        raise BookError(f"{toc_path}: glob entries are not supported; list every chapter")
    order: list[str] = []

    def visit(docname: str) -> None:
        order.append(docname)
        for child in site_map[docname].child_files():
            visit(child)

    visit(site_map.root.docname)
    return order
