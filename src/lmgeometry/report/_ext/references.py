"""Sphinx extension: author-year citations in round brackets for sphinxcontrib-bibtex.

The book cites ``references.bib`` (``bibtex_bibfiles`` in ``_config.yml``) with
``{cite:p}`key``` -> "(Ethayarajh, 2019)" and ``{cite:t}`key``` -> "Ethayarajh (2019)"; the
About page lists every entry (``{bibliography}``). sphinxcontrib-bibtex's ``author_year``
style puts the year in square brackets and separates works with commas; this registers the
same style with round brackets and semicolons ("(Sun et al., 2024; Xiao et al., 2024)") as
``author_year_round`` (``bibtex_reference_style`` in ``_config.yml``). List this extension
after ``sphinxcontrib.bibtex``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sphinx.application import Sphinx

__all__ = ["STYLE", "setup"]

STYLE = "author_year_round"


def _round() -> Any:
    from sphinxcontrib.bibtex.style.referencing import BracketStyle

    return BracketStyle(left="(", right=")", sep="; ")


def _style() -> type:
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

    @dataclasses.dataclass
    class RoundAuthorYear(AuthorYearReferenceStyle):
        bracket_parenthetical: Any = dataclasses.field(default_factory=_round)
        bracket_textual: Any = dataclasses.field(default_factory=_round)
        bracket_author: Any = dataclasses.field(default_factory=_round)
        bracket_label: Any = dataclasses.field(default_factory=_round)
        bracket_year: Any = dataclasses.field(default_factory=_round)

    return RoundAuthorYear


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the ``author_year_round`` referencing style."""
    import sphinxcontrib.bibtex.plugin

    sphinxcontrib.bibtex.plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing", STYLE, _style(), force=True)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
