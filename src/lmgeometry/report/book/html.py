"""The HTML book: executed notebooks rendered by Jupyter Book 1, nothing executed, nothing
loaded from another host; the config and pruned toc of an ``--out`` book.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from lmgeometry.errors import BookError
from lmgeometry.io import paths
from lmgeometry.report.book.chapters import toc_pages
from lmgeometry.report.book.execution import notebook_bytes
from lmgeometry.report.book.folder import TOC_HEADER, write_owned
from lmgeometry.report.cache import file_digest, restamp_notebook
from lmgeometry.report.offline import external_references
from lmgeometry.report.toc import is_page, page_file, toc_docnames

__all__ = [
    "BIBLIOGRAPHY",
    "build_html",
    "LINKED_SOURCE",
    "unlink_absent",
    "write_book_config",
]


#: The works the chapters cite (``bibtex_bibfiles`` in ``_config.yml``), beside ``_config.yml``.
BIBLIOGRAPHY = "references.bib"

_JUPYTER_BOOK_MAIN = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"


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
    does not hold becomes plain text (:func:`unlink_absent`; the chapter's execution manifest
    is stamped with the notebook so changed, so the chapter is not executed again for it), so
    a book of some chapters builds. No file the pipeline did not write is replaced
    (:func:`~.folder.write_owned`).

    Parameters
    ----------
    root : pathlib.Path
        The project folder.
    book_dir : pathlib.Path
        The ``--out`` folder.

    Raises
    ------
    BookUsageError
        One of those files is there and was not written by the pipeline (or was changed).
    """
    copies = ["_config.yml", *([BIBLIOGRAPHY] if (root / BIBLIOGRAPHY).is_file() else []),
              *(page_file(root, d).relative_to(root).as_posix() for d in toc_pages(root))]
    for name in copies:
        write_owned(book_dir, name, (root / name).read_bytes())
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    present = {d for d in toc_docnames(root / "_toc.yml") if page_file(book_dir, d).is_file()}
    for key in ("parts", "chapters"):
        if key in toc:
            toc[key] = _prune_toc(toc[key], present)
            if not toc[key]:
                del toc[key]
    header = (
        f"{TOC_HEADER}: the chapters of the project's _toc.yml that\n"
        "# were executed into this folder.\n"
    )
    write_owned(book_dir, "_toc.yml", (header + yaml.safe_dump(toc, sort_keys=False)).encode())
    for docname in sorted(d for d in present if not is_page(d)):
        notebook = book_dir / f"{docname}.ipynb"
        before = file_digest(notebook)
        if unlink_absent(notebook, present):
            restamp_notebook(notebook, before)


#: A Markdown link to a chapter notebook: ``[text](NN_name.ipynb)`` (an anchor may follow).
_CHAPTER_LINK = re.compile(r"\[([^\]]+)\]\((\d\d_[A-Za-z0-9_]+)\.ipynb(#[^)]*)?\)")


#: Where a Markdown cell whose links :func:`unlink_absent` removed keeps its text with them.
LINKED_SOURCE = "lmgeometry_linked_source"


def unlink_absent(notebook: Path, present: set[str]) -> bool:
    """Turn the notebook's Markdown links to chapters not in ``present`` into their text.

    The cell's text with its links is kept in its metadata (:data:`LINKED_SOURCE`), and every
    call starts from it: a link comes back once its chapter is in the book.

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
        linked = cell.metadata.get(LINKED_SOURCE, cell.source)
        text = _CHAPTER_LINK.sub(
            lambda m: m.group(0) if f"book/{m.group(2)}" in present else m.group(1), linked)
        changed |= text != cell.source
        cell.source = text
        if text != linked:
            cell.metadata[LINKED_SOURCE] = linked
        else:
            changed |= cell.metadata.pop(LINKED_SOURCE, None) is not None
    if changed:
        notebook.write_bytes(notebook_bytes(nb))
    return changed

