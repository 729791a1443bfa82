"""A chapter run by papermill with a parameter it does not declare stops, naming it.

``papermill chapter.ipynb out.ipynb -p n_bot 50`` only logs ``Passed unknown parameter:
n_bot`` and runs the chapter with its own ``n_boot``, so a typo gave a whole run with the
default and no error (issue 49). Papermill writes the parameters it is given into a cell of
their own, after the chapter's ``parameters`` cell, that begins ``# Parameters``; the chapter's
first cell (:func:`lmgeometry.chapters.common.checked_parameters`) calls
:func:`check_injected`, which reads that cell from the kernel's input history and refuses any
name it assigns that the ``parameters`` cell does not declare. ``lmgeometry book`` refuses
such a name before any kernel starts (``report/book/parameters.py``); outside papermill
(a notebook run by hand) there is no such cell and nothing is checked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

from lmgeometry.errors import UsageError

__all__ = ["check_injected", "injected_names", "INJECTED_HEADER"]

#: The first line of the cell papermill injects (its Python translator's comment).
INJECTED_HEADER = "# Parameters"


def injected_names(history: Iterable[str]) -> list[str]:
    """The names assigned by the last papermill-injected cell of ``history`` (cell sources in
    execution order), in order; [] when there is none."""
    cells = [c for c in history if isinstance(c, str)
             and c.lstrip().startswith(INJECTED_HEADER + "\n")]
    if not cells:
        return []
    names: list[str] = []
    for node in ast.parse(cells[-1]).body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id not in names]
    return names


def check_injected(declared: Mapping[str, Any], history: Iterable[str] | None = None) -> None:
    """Raise :class:`UsageError` naming every parameter papermill injected that ``declared``
    (the ``parameters`` cell's annotations) lacks.

    Parameters
    ----------
    declared : mapping
        The chapter's parameters (its ``__annotations__``).
    history : iterable of str, optional
        Cell sources in execution order; default the running IPython kernel's (``In``).
    """
    if history is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return
        shell = get_ipython()
        history = [] if shell is None else shell.user_ns.get("In", [])
    unknown = [name for name in injected_names(history) if name not in declared]
    if unknown:
        raise UsageError(f"unknown parameter{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)}: this chapter's parameters are "
                         f"{', '.join(declared)}; check the spelling of -p "
                         f"{unknown[0]} (papermill --help-notebook lists them)")
