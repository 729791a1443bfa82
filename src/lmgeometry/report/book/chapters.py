"""The book's chapters: which ``_toc.yml`` entries are chapters, which ones a build selects,
and the order and groups in which they run.

A chapter is ``notebooks/NN_name.py`` executed into ``book/NN_name.ipynb``; a toc entry
``pages/name`` is a Markdown page (:mod:`lmgeometry.report.toc`), never executed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lmgeometry.errors import BookError, BookUsageError
from lmgeometry.report.toc import PAGES_DIR, is_page, page_file, toc_docnames

__all__ = [
    "ABOUT_DOCNAME",
    "Chapter",
    "execution_order",
    "execution_stages",
    "GATHERING_CHAPTERS",
    "RUNS_AS",
    "NOTEBOOK_DIR",
    "select_chapters",
    "toc_chapters",
    "toc_pages",
    "with_required_pages",
]


#: Folder (relative to the book folder) that holds the executed chapters.
NOTEBOOK_DIR = "book"


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
#: Chapters that gather although their number is low, and the number they run as: the
#: introduction opens with the book's findings, tallied from the analysis chapters' claims,
#: so it runs after them and before the scorecard (which reads the introduction's model list).
RUNS_AS: dict[str, int] = {"00_introduction": GATHERING_CHAPTERS - 1}


def execution_order(chapters: Sequence[Chapter]) -> list[Chapter]:
    """The chapters in the order they run: by their number (``NN_name``, or
    :data:`RUNS_AS`), not the toc's.

    The table of contents sets the reading order; a page that gathers the other chapters'
    results (the introduction's findings, the scorecard, ``90_scorecard``) is read early but
    must run after them.
    """
    return sorted(chapters, key=lambda c: (_run_number(c), c.name))


def execution_stages(chapters: Sequence[Chapter]) -> list[list[Chapter]]:
    """The chapters in groups that may run at the same time, groups in the order they run.

    Chapters numbered below :data:`GATHERING_CHAPTERS` (but those of :data:`RUNS_AS`) read
    only the activation store and the data, never each other, so they form one group; each
    gathering chapter is a group of its own after them, in the order they run.
    """
    ordered = execution_order(chapters)
    content = [c for c in ordered if not _gathers(c)]
    gathering = [[c] for c in ordered if _gathers(c)]
    return ([content] if content else []) + gathering


def _run_number(chapter: Chapter) -> int:
    """The number a chapter runs as: :data:`RUNS_AS`, else its own."""
    return RUNS_AS.get(chapter.name, _number(chapter))


def _gathers(chapter: Chapter) -> bool:
    """Whether a chapter reads other chapters' results (it then runs alone, after them)."""
    return chapter.name in RUNS_AS or _number(chapter) >= GATHERING_CHAPTERS


def _number(chapter: Chapter) -> int:
    """The ``NN`` of ``NN_name`` (chapters without a number prefix count as 0)."""
    prefix = chapter.name.split("_", 1)[0]
    return int(prefix) if prefix.isdigit() else 0


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
