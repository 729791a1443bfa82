"""Sphinx extension: each chapter page ends with links to how it was built.

Under every chapter page: "How this chapter was built" (its row of the About page,
``99_about.html#build-NN_name``, when the book has that page; not on the About page itself)
and "Download this build" (the archive of the HTML, executed notebooks and results files that
``lmgeometry book`` writes beside the HTML, named by commit and date: the environment variable
:data:`lmgeometry.report.publish.ARCHIVE_ENV` names it during the build).
"""

from __future__ import annotations

import os
from typing import Any

from sphinx.application import Sphinx

from lmgeometry.report.publish import ARCHIVE_ENV

__all__ = ["ABOUT_DOC", "setup"]

ABOUT_DOC = "book/99_about"


def _links(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
           doctree: Any) -> None:
    if doctree is None or "body" not in context:
        return
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
