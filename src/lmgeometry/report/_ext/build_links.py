"""Sphinx extension: each page says who wrote it, when it ran and how to cite it, and each
chapter page ends with links to how it was built.

Under every page's title: a byline (the authors of ``CITATION.cff`` and the date the page's
chapter was executed, from its run record ``book/NN_name.run.json``). A chapter's folded
parameters cell moves from the top of the page to an appendix at its end
(:func:`parameters_to_appendix`). At the end of every page:
"Cite this page" (authors, year, the page's title, the book's title and version, from
``CITATION.cff``); then "How this chapter was built" (its row of the About page,
``99_about.html#build-NN_name``, when the book has that page; not on the About page itself)
and "Download this build" (the archive of the HTML, executed notebooks and results files that
``lmgeometry book`` writes beside the HTML, named by commit and date: the environment variable
:data:`lmgeometry.report.publish.ARCHIVE_ENV` names it during the build).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml
from sphinx.application import Sphinx

from lmgeometry.report.publish import ARCHIVE_ENV
from lmgeometry.report.toc import project_root

__all__ = ["ABOUT_DOC", "citation_facts", "byline", "cite_line", "parameters_to_appendix",
           "setup"]

ABOUT_DOC = "book/99_about"


def citation_facts(srcdir: str | Path) -> dict[str, Any]:
    """``CITATION.cff`` of the book (its source folder, else the project's), or ``{}``."""
    for folder in (Path(srcdir), project_root()):
        path = folder / "CITATION.cff"
        if path.is_file():
            return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {}


def _authors(facts: dict[str, Any]) -> str:
    names = [a.get("name") or " ".join(p for p in (a.get("given-names"), a.get("family-names"))
                                       if p)
             for a in facts.get("authors") or []]
    names = [n for n in names if n]
    return (", ".join(names[:-1]) + " and " + names[-1]) if len(names) > 1 else \
        (names[0] if names else "the lmgeometry contributors")


def _executed(srcdir: Path, pagename: str) -> _dt.date | None:
    """The day the page's chapter was executed, from its run record (``None`` if none)."""
    record = srcdir / f"{pagename}.run.json"
    try:
        return _dt.datetime.fromisoformat(json.loads(record.read_text())["executed"]).date()
    except (OSError, ValueError, KeyError, TypeError):
        return None


def byline(facts: dict[str, Any], executed: _dt.date | None) -> str:
    """The line under a page's title: authors and the date the page was executed."""
    when = f" · executed {executed.day} {executed:%B %Y}" if executed else ""
    return f'<p class="lmg-byline">By {html.escape(_authors(facts))}{when}</p>'


def cite_line(facts: dict[str, Any], title: str, year: int) -> str:
    """How to cite a page: authors (year). Title. In: the book's title, version."""
    book = facts.get("title", "lmgeometry")
    version = f", version {facts['version']}" if facts.get("version") else ""
    authors = _authors(facts)
    authors = authors[:1].upper() + authors[1:]  # it starts a sentence
    return (f'<p class="lmg-cite"><b>Cite this page:</b> {html.escape(authors)} '
            f"({year}). \u201c{html.escape(title)}{'' if title[-1:] in '.?!' else '.'}\u201d "
            f"In <i>{html.escape(str(book))}</i>"
            f"{html.escape(version)}. Please cite the papers it reproduces as well.</p>")


_PARAMETERS_CELL = re.compile(r'<div class="cell tag_(?:injected-)?parameters\b[^"]*"')
_DIV = re.compile(r"<div\b|</div>")


def parameters_to_appendix(body: str) -> str:
    """Move the chapter's folded parameters cell (the one the page shows: tagged
    ``parameters`` or ``injected-parameters``, not removed) from the top of the page to an
    appendix at its end, before the page's References section when it has one: the reader
    meets the findings first, the parameters where the details are.

    Examples
    --------
    >>> page = ('<h1>T</h1><div class="cell tag_injected-parameters tag_hide-input">'
    ...         '<div>p = 1</div></div><p>Findings</p><section id="references">R</section>')
    >>> moved = parameters_to_appendix(page)
    >>> moved.index("Findings") < moved.index("p = 1") < moved.index('id="references"')
    True
    >>> parameters_to_appendix("<p>no parameters</p>")
    '<p>no parameters</p>'
    """
    found = _PARAMETERS_CELL.search(body)
    if found is None:
        return body
    depth, end = 0, None
    for tag in _DIV.finditer(body, found.start()):
        depth += 1 if tag.group(0) == "<div" else -1
        if depth == 0:
            end = tag.end()
            break
    if end is None:
        return body
    cell = body[found.start():end]
    rest = body[:found.start()] + body[end:]
    appendix = ('<section id="appendix-parameters" class="lmg-appendix">'
                "<h2>Appendix: the parameters</h2><p>The parameters this chapter ran with "
                "(the book's defaults unless the build set others).</p>" + cell + "</section>")
    at = rest.find('<section id="references"')
    return rest + appendix if at < 0 else rest[:at] + appendix + rest[at:]


def _meta(app: Sphinx, pagename: str, context: dict[str, Any]) -> None:
    """The byline under the page's first heading and the citation line at its end."""
    facts = citation_facts(app.srcdir)
    executed = _executed(Path(app.srcdir), pagename)
    body = context["body"]
    end = body.find("</h1>")
    if end >= 0:
        end += len("</h1>")
        body = body[:end] + byline(facts, executed) + body[end:]
    released = str(facts.get("date-released", ""))[:4]
    year = executed.year if executed else int(released) if released.isdigit() else \
        _dt.date.today().year
    # the page's title as text: no markup (a numbered chapter's "<span class=
    # "section-number">1. </span>"), no pilcrow
    title = re.sub(r"<[^>]+>", "", html.unescape(str(context.get("title", ""))))
    title = " ".join(title.replace("¶", "").split())
    context["body"] = parameters_to_appendix(body) + cite_line(facts, title, year)


def _links(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
           doctree: Any) -> None:
    if doctree is None or "body" not in context:
        return
    _meta(app, pagename, context)
    depth = pagename.count("/")
    prefix = "../" * depth
    links = []
    chapter = pagename.startswith("book/")  # not a Markdown page (pages/api: the API)
    if ABOUT_DOC in app.env.found_docs and pagename != ABOUT_DOC and chapter:
        anchor = f"build-{pagename.rpartition('/')[2]}"
        links.append(f'<a href="{prefix}{ABOUT_DOC}.html#{anchor}">How this chapter was '
                     "built</a>")
    archive = os.environ.get(ARCHIVE_ENV)
    if archive:
        links.append(f'<a href="{prefix}{archive}" download>Download this build</a> '
                     "(HTML, executed notebooks, results files)")
    if links:
        context["body"] += f'<p class="lmg-build-links">{" · ".join(links)}</p>'


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the page hook."""
    app.connect("html-page-context", _links)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
