"""A chapter's parameters: the defaults of its ``parameters`` cell, ``book_params.yml``,
``-p NAME VALUE`` overrides, merged and checked before any kernel starts.

Precedence, lowest first: the chapter's own defaults < ``defaults`` in ``book_params.yml`` <
the chapter's section under ``chapters`` in ``book_params.yml`` < ``-p`` overrides, plus
``results_path`` set by the pipeline (:func:`resolve_parameters`).
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from lmgeometry.errors import BookError, BookUsageError
from lmgeometry.report.book.chapters import Chapter

__all__ = [
    "chapter_parameters",
    "check_parameter_names",
    "load_book_params",
    "PARAMS_FILE",
    "parse_overrides",
    "resolve_parameters",
    "RESULTS_PARAM",
]


#: The book's parameter file, next to ``_config.yml`` and ``_toc.yml``.
PARAMS_FILE = "book_params.yml"

#: Parameter that the pipeline sets itself.
RESULTS_PARAM = "results_path"


def _parameters_cell(nb: Any, label: str) -> Any:
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1 or cells[0].cell_type != "code":
        raise BookError(
            f"{label}: needs exactly one code cell tagged 'parameters' "
            f"(found {len(cells)}); in jupytext percent format: # %% tags=[\"parameters\"]"
        )
    return cells[0]


def chapter_parameters(nb: Any, label: str = "chapter") -> dict[str, Any]:
    """The defaults declared in a notebook's ``parameters`` cell.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The chapter.
    label : str
        Used in error messages.

    Returns
    -------
    dict
        Name -> default for every top-level ``name = value`` or ``name: type = value`` of the
        cell; a value that is not a Python literal is given as its source text.

    Raises
    ------
    BookError
        If there is no (or more than one) parameters cell or it is not valid Python.
    """
    cell = _parameters_cell(nb, label)
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as exc:
        raise BookError(f"{label}: the parameters cell is not valid Python: {exc}") from exc
    params: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    params[target.id] = ast.literal_eval(value)
                except ValueError:
                    params[target.id] = ast.get_source_segment(cell.source, value)
    return params


def parse_overrides(pairs: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Parse ``-p NAME VALUE`` pairs; each value is YAML (``'[gpt2, bert-base-cased]'``, ``3``).

    Parameters
    ----------
    pairs : sequence of (str, str)
        As collected by argparse.

    Returns
    -------
    dict
        Name -> parsed value (later pairs win).

    Raises
    ------
    BookError
        If a name is not a Python identifier or a value is not valid YAML.
    """
    parsed: dict[str, Any] = {}
    for name, text in pairs:
        if not name.isidentifier():
            raise BookUsageError(f"-p {name}: a parameter name must be a Python identifier")
        try:
            parsed[name] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise BookUsageError(f"-p {name} {text!r}: the value is not valid YAML: "
                                 f"{exc}") from exc
    return parsed


def load_book_params(path: Path) -> dict[str, dict[str, Any]]:
    """Read ``book_params.yml``.

    Parameters
    ----------
    path : pathlib.Path
        A YAML mapping with optional keys ``defaults`` (name -> value, for every chapter that
        declares the name) and ``chapters`` (chapter name -> name -> value). A missing file
        means no settings.

    Returns
    -------
    dict
        ``{"defaults": {...}, "chapters": {name: {...}}}``.

    Raises
    ------
    BookError
        If the file has another shape.
    """
    if not path.is_file():
        return {"defaults": {}, "chapters": {}}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise BookError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or set(data) - {"defaults", "chapters"}:
        raise BookError(f"{path}: expected a mapping with the keys 'defaults' and 'chapters'")
    defaults = data.get("defaults") or {}
    sections = data.get("chapters") or {}
    if not isinstance(defaults, dict) or not isinstance(sections, dict):
        raise BookError(f"{path}: 'defaults' and 'chapters' must be mappings")
    for name, section in sections.items():
        if section is not None and not isinstance(section, dict):
            raise BookError(f"{path}: chapters.{name} must be a mapping of parameters")
    return {
        "defaults": dict(defaults),
        "chapters": {str(k): dict(v or {}) for k, v in sections.items()},
    }


def resolve_parameters(
    chapter: str,
    declared: dict[str, Any],
    config: dict[str, dict[str, Any]],
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """The parameters papermill injects into one chapter.

    Precedence, lowest first: the chapter's defaults (``declared``, left in its own cell) <
    ``config["defaults"]`` < ``config["chapters"][chapter]`` < ``overrides``. Names in
    ``defaults`` and ``overrides`` that the chapter does not declare are not passed to it;
    ``results_path`` is always ``<chapter>.results.json`` (relative to the book folder, where
    the chapter runs).

    Parameters
    ----------
    chapter : str
        Chapter name (``NN_name``).
    declared : dict
        The chapter's defaults, from :func:`chapter_parameters`.
    config : dict
        From :func:`load_book_params`.
    overrides : dict
        From :func:`parse_overrides`.

    Returns
    -------
    dict
        Name -> value, in the order papermill writes them.

    Raises
    ------
    BookError
        If the chapter does not declare ``results_path``, its ``book_params.yml`` section
        names a parameter it does not declare, ``results_path`` is overridden, or a
        parameter whose default is a list is given a single value.
    """
    if RESULTS_PARAM not in declared:
        raise BookError(f"{chapter}: its parameters cell must declare {RESULTS_PARAM}")
    section = config["chapters"].get(chapter, {})
    unknown = sorted(set(section) - set(declared))
    if unknown:
        raise BookError(
            f"{PARAMS_FILE}: chapters.{chapter} sets {', '.join(unknown)}, which the "
            f"chapter does not declare (its parameters: {', '.join(declared)})"
        )
    for layer in (config["defaults"], section, overrides):
        if RESULTS_PARAM in layer:
            raise BookUsageError(f"{RESULTS_PARAM} is set by the pipeline; do not override it")
    merged: dict[str, Any] = {}
    for layer in (config["defaults"], section, overrides):
        merged.update({k: v for k, v in layer.items() if k in declared})
    for name, value in merged.items():
        _check_list(chapter, name, declared[name], value)
        _check_number(chapter, name, declared[name], value)
    merged[RESULTS_PARAM] = f"{chapter}.results.json"
    return merged


def _check_list(chapter: str, name: str, default: Any, value: Any) -> None:
    """A list parameter must be given a list, and a non-empty one if its default is."""
    if not isinstance(default, list | tuple):
        return
    if not isinstance(value, list | tuple):
        raise BookUsageError(
            f"{chapter}: {name} is a list (default {default!r}) but was given "
            f"{value!r}; write a YAML list, e.g. -p {name} '[{value}]'"
        )
    if default and not value:
        example = json.dumps(list(default)[:1])
        raise BookUsageError(
            f"{chapter}: {name} is an empty list; name at least one, e.g. -p {name} "
            f"'{example}' (its default is {default!r})"
        )


def _check_number(chapter: str, name: str, default: Any, value: Any) -> None:
    """A parameter with a number as default takes a number of the same kind: an integer
    (a size, a seed, a count of resamples) is never negative; found before any kernel starts."""
    if isinstance(default, bool) or not isinstance(default, int | float):
        return
    if isinstance(default, int) and (isinstance(value, bool) or not isinstance(value, int)):
        raise BookUsageError(f"{chapter}: {name} is a whole number (default {default!r}), not "
                             f"{value!r}; e.g. -p {name} {default}")
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value):
        raise BookUsageError(f"{chapter}: {name} is a number (default {default!r}), not "
                             f"{value!r}; e.g. -p {name} {default}")
    if value < 0 <= default:
        raise BookUsageError(f"{chapter}: {name} cannot be negative ({value!r}); its default "
                             f"is {default!r}")


def check_parameter_names(
    chapters: Sequence[Chapter],
    declared: dict[str, dict[str, Any]],
    config: dict[str, dict[str, Any]],
    overrides: dict[str, Any],
) -> None:
    """Reject settings that no chapter would receive (typos).

    Parameters
    ----------
    chapters : sequence of Chapter
        The chapters being executed.
    declared : dict
        Chapter name -> its declared parameters (for every chapter of the toc).
    config, overrides : dict
        As for :func:`resolve_parameters`.

    Raises
    ------
    BookError
        If ``book_params.yml`` names an unknown chapter or a default no chapter declares, or
        an override names a parameter none of the selected chapters declares.
    """
    every = {name for params in declared.values() for name in params}
    stray = sorted(set(config["chapters"]) - set(declared))
    if stray:
        raise BookError(
            f"{PARAMS_FILE}: chapters {', '.join(stray)} are not in _toc.yml "
            f"(chapters: {', '.join(declared)})"
        )
    unused = sorted(set(config["defaults"]) - every)
    if unused:
        raise BookError(
            f"{PARAMS_FILE}: defaults {', '.join(unused)} are parameters of no chapter"
        )
    selected = {name for c in chapters for name in declared[c.name]}
    unused = sorted(set(overrides) - selected)
    if unused:
        raise BookUsageError(
            f"-p {', '.join(unused)}: not a parameter of the chapters being executed "
            f"({', '.join(c.name for c in chapters)}); their parameters: "
            f"{', '.join(sorted(selected))}"
        )

