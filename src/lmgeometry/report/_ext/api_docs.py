"""Sphinx extension: the package's docstrings as the Python API page (``pages/api.md``) shows
them.

The docstrings write their formulas in plain text (``||x_i||``, ``|V|``, ``exp(-|u_1^T mu|)``),
where reStructuredText reads ``|text|`` as a substitution reference and fails the strict build
("Undefined substitution referenced"). After napoleon has turned the numpy sections into
reStructuredText, every ``|`` outside inline literals, roles and the bodies of directives and
literal blocks (``.. math::``, ``::``) is escaped, so it shows as the bar it is written as.
The docstrings define no substitutions of their own.
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx

__all__ = ["escape_bars", "setup"]

#: Inline literals (````x````) and interpreted text (```x```, ``:math:`x```): left as written.
_INLINE = re.compile(r"``.+?``|`[^`]*`")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_bars(lines: list[str]) -> list[str]:
    """``lines`` (reStructuredText) with each literal ``|`` escaped (see the module docstring).

    Parameters
    ----------
    lines : list of str
        A docstring's lines after napoleon.

    Returns
    -------
    list of str
        The same lines; a bar outside inline markup and outside a directive's or a literal
        block's body becomes ``\\|``.
    """
    out: list[str] = []
    block: int | None = None  # indentation of the line that opened a directive or ``::`` block
    for line in lines:
        if block is not None and line.strip() and _indent(line) <= block:
            block = None
        if block is None and "|" in line:
            pieces, last = [], 0
            for match in _INLINE.finditer(line):
                pieces += [line[last:match.start()].replace("|", "\\|"), match.group(0)]
                last = match.end()
            line = "".join(pieces) + line[last:].replace("|", "\\|")
        stripped = line.strip()
        if block is None and (stripped.startswith(".. ") or stripped.endswith("::")):
            block = _indent(line)
        out.append(line)
    return out


def _process(app: Sphinx, what: str, name: str, obj: Any, options: Any,
             lines: list[str]) -> None:
    lines[:] = escape_bars(lines)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the docstring hook, after napoleon's (priority 500)."""
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("autodoc-process-docstring", _process, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
