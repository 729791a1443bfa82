"""A chapter's parameters: the defaults of its ``parameters`` cell, ``book_params.yml``,
``-p NAME VALUE`` overrides, merged and checked before any kernel starts.

Precedence, lowest first: the chapter's own defaults < ``defaults`` in ``book_params.yml`` <
the chapter's section under ``chapters`` in ``book_params.yml`` < ``-p`` overrides, plus
``results_path`` set by the pipeline (:func:`resolve_parameters`).

A value is data, never code. ``-p`` values and ``book_params.yml`` are read as YAML restricted
to JSON's values (:func:`plain_yaml`): text, numbers, true/false/null, lists and mappings with
text keys; a YAML tag (``!!binary``, ``!!python/...``), an anchor or alias (``&a``, ``*a``: a
few hundred bytes of aliases can expand to gigabytes), a date, a value over
:data:`MAX_VALUE_CHARS` characters or nested deeper than :data:`MAX_DEPTH` is refused in one
line. Each value is then checked against the type the chapter declares for it (``name: type =
default`` in its parameters cell: ``int``, ``float``, ``str``, ``bool``, ``list[T]``,
``dict[K, V]``, ``Union[...]``, ``X | None``; :func:`parameter_types`), and the cell papermill
will write is rendered by papermill's own translator and read back: it must be nothing but
``name = <literal>`` lines giving back the values (:func:`check_injection`).
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
    "check_injection",
    "check_parameter_names",
    "load_book_params",
    "MAX_DEPTH",
    "MAX_PARAMS_FILE_BYTES",
    "MAX_VALUE_CHARS",
    "parameter_types",
    "PARAMS_FILE",
    "parse_overrides",
    "plain_yaml",
    "resolve_parameters",
    "RESULTS_PARAM",
]


#: The book's parameter file, next to ``_config.yml`` and ``_toc.yml``.
PARAMS_FILE = "book_params.yml"

#: Parameter that the pipeline sets itself.
RESULTS_PARAM = "results_path"

#: The longest ``-p`` value (characters) and ``book_params.yml`` (bytes) read; the deepest
#: nesting of lists and mappings in a value.
MAX_VALUE_CHARS = 20_000
MAX_PARAMS_FILE_BYTES = 1_000_000
MAX_DEPTH = 20

_PLAIN = ("write plain values only (JSON: numbers, text, true/false/null, [lists], "
          "{mappings})")


class _PlainLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing tags, anchors and aliases (:func:`plain_yaml`)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused("uses a YAML alias (*name); write the value out in full, "
                           "without anchors (&name) or aliases")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _Refused(f"uses a YAML anchor (&{anchor}); write the value out in full, "
                           "without anchors or aliases")
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!":
            raise _Refused(f"has the YAML tag {tag.replace('tag:yaml.org,2002:', '!!')}; "
                           f"{_PLAIN}, without tags")
        return super().compose_node(parent, index)


class _Refused(ValueError):
    """A YAML value that is not a plain one; the message says why."""


def plain_yaml(text: str) -> Any:
    """A YAML text read as a plain (JSON) value: tags, anchors, aliases and non-JSON values
    refused.

    Parameters
    ----------
    text : str
        At most :data:`MAX_VALUE_CHARS` characters for one value (the caller limits a file).

    Returns
    -------
    Any
        ``None``, a bool, int, finite float, str, or a list or dict (text keys) of those,
        nested at most :data:`MAX_DEPTH` deep.

    Raises
    ------
    ValueError
        What is wrong, in words that name the fix (``yaml.YAMLError`` for invalid YAML).
    """
    try:
        value = yaml.load(text, Loader=_PlainLoader)  # noqa: S506 - _PlainLoader is safe
    except RecursionError as exc:
        raise _Refused(f"is nested too deeply; {_PLAIN}, at most {MAX_DEPTH} levels") from exc
    return _plain(value, 0)


def _text(value: str) -> str:
    """``value`` with each UTF-16 surrogate pair (``"\\ud83d\\ude00"``, as JSON writes a
    character beyond the BMP and YAML reads it) made the one character it stands for; a lone
    surrogate, which no file or kernel can take, is refused."""
    if not any("\ud800" <= c <= "\udfff" for c in value):
        return value
    try:
        return value.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise _Refused("holds a lone UTF-16 surrogate (half of a \\uXXXX pair), which is not "
                       "a character; write the character itself or both halves") from None


def _plain(value: Any, depth: int) -> Any:
    """``value`` (text made whole, :func:`_text`); what is not a JSON value (a date, bytes, a
    set, NaN) or is nested too deeply is refused."""
    if depth > MAX_DEPTH:
        raise _Refused(f"is nested more than {MAX_DEPTH} levels deep; {_PLAIN}")
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(f"is {value}, which JSON has no number for; pass a finite number")
        return value
    if isinstance(value, list):
        return [_plain(item, depth + 1) for item in value]
    if isinstance(value, dict):
        plain = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _Refused(f"has the mapping key {key!r}, which is not text; quote it")
            plain[_text(key)] = _plain(item, depth + 1)
        return plain
    raise _Refused(f"reads as a {type(value).__name__} ({value!r}), which is not a plain "
                   "value; quote it to pass it as text")


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


def parameter_types(nb: Any, label: str = "chapter") -> dict[str, str]:
    """The types a notebook's ``parameters`` cell declares: ``name: type = value`` gives
    ``{name: "type"}`` (the annotation's source; names without one are left out).

    Raises
    ------
    BookError
        As :func:`chapter_parameters`.
    """
    cell = _parameters_cell(nb, label)
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as exc:
        raise BookError(f"{label}: the parameters cell is not valid Python: {exc}") from exc
    return {node.target.id: ast.unparse(node.annotation) for node in tree.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


#: Type names of annotations, and what a plain value of each must be.
_SCALARS: dict[str, Any] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "None": lambda v: v is None,
}
_LISTS = ("list", "List", "Sequence")
_DICTS = ("dict", "Dict", "Mapping")


def _type_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.Union, t.Optional
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return ""


def _fits(value: Any, node: ast.expr) -> bool:
    """Whether a plain value fits the annotation ``node`` (a type this module does not know
    fits anything: it is left to the chapter)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _fits(value, node.left) or _fits(value, node.right)
    if not isinstance(node, ast.Subscript):
        check = _SCALARS.get(_type_name(node))
        return check is None or check(value)
    base = _type_name(node.value)
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if base == "Union":
        return any(_fits(value, a) for a in args)
    if base == "Optional":
        return value is None or _fits(value, args[0])
    if base in _LISTS:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value)
    if base in _DICTS and len(args) == 2:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1])
                                               for k, v in value.items())
    return True


def _check_type(chapter: str, name: str, annotation: str, default: Any, value: Any) -> None:
    """``value`` must be of the type the chapter declares for ``name``."""
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return
    if _fits(value, node):
        return
    shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:60]}..."
    raise BookUsageError(f"{chapter}: {name} must be {annotation} (its default is "
                         f"{json.dumps(default)}), not {shown}; e.g. -p {name} "
                         f"'{json.dumps(default)}'")


def check_injection(chapter: str, values: dict[str, Any]) -> None:
    """The parameters cell papermill will write for ``values`` holds nothing but them.

    The cell is rendered by papermill's own translator for the chapters' Python kernel
    (``papermill.translators.translate_parameters``, what papermill injects) and read back:
    every statement must be ``name = <literal>`` and the literal must be the value given. A
    value papermill cannot quote safely would show here as a call or another name, before any
    kernel starts.

    Raises
    ------
    BookUsageError
        Naming the parameter and what papermill would have written.
    """
    from papermill.translators import translate_parameters

    text = translate_parameters("python3", "python", values, "Parameters")
    try:
        body = ast.parse(text).body
    except SyntaxError as exc:
        raise BookUsageError(f"{chapter}: papermill would write parameters that are not "
                             f"Python ({exc}); {_PLAIN}") from None
    seen = set()
    for node in body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            else None
        name = target.id if isinstance(target, ast.Name) else None
        try:
            same = name in values and json.dumps(ast.literal_eval(node.value), sort_keys=True) \
                == json.dumps(values[name], sort_keys=True)
        except (ValueError, TypeError, SyntaxError, AttributeError, RecursionError):
            same = False
        if not same:
            raise BookUsageError(f"{chapter}: papermill would write "
                                 f"{ast.get_source_segment(text, node)!r} into the parameters "
                                 f"cell, which is not a plain value; {_PLAIN}")
        seen.add(name)
    if seen != set(values):
        raise BookUsageError(f"{chapter}: papermill would leave out {sorted(set(values) - seen)}")


def parse_overrides(pairs: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Parse ``-p NAME VALUE`` pairs; each value is a plain YAML value (``'[gpt2,
    bert-base-cased]'``, ``3``; :func:`plain_yaml`).

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
    BookUsageError
        If a name is not a Python identifier, or a value is not valid YAML, not a plain value
        (a tag, an anchor or alias, a date), longer than :data:`MAX_VALUE_CHARS` characters
        or nested deeper than :data:`MAX_DEPTH`.
    """
    parsed: dict[str, Any] = {}
    for name, text in pairs:
        if not name.isidentifier():
            raise BookUsageError(f"-p {name}: a parameter name must be a Python identifier")
        shown = repr(text) if len(text) <= 60 else f"{text[:40]!r}... ({len(text):,} characters)"
        if len(text) > MAX_VALUE_CHARS:
            raise BookUsageError(f"-p {name} {shown}: the value is longer than "
                                 f"{MAX_VALUE_CHARS:,} characters; no parameter needs that")
        try:
            parsed[name] = plain_yaml(text)
        except _Refused as exc:
            raise BookUsageError(f"-p {name} {shown}: the value {exc}") from None
        except yaml.YAMLError as exc:
            raise BookUsageError(f"-p {name} {shown}: the value is not valid YAML: "
                                 f"{' '.join(str(exc).split())}") from None
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
        If the file has another shape, or a value that is not a plain one (see
        :func:`plain_yaml`).
    """
    if not path.is_file():
        return {"defaults": {}, "chapters": {}}
    if path.stat().st_size > MAX_PARAMS_FILE_BYTES:
        raise BookError(f"{path} is larger than {MAX_PARAMS_FILE_BYTES:,} bytes; it holds "
                        "parameter values only")
    try:
        data = plain_yaml(path.read_text()) or {}
    except _Refused as exc:
        raise BookError(f"{path}: a value {exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise BookError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
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
    types: dict[str, str] | None = None,
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
    types : dict, optional
        The types the chapter declares (:func:`parameter_types`): each value must fit its
        parameter's.

    Returns
    -------
    dict
        Name -> value, in the order papermill writes them; the cell papermill writes from them
        is checked (:func:`check_injection`).

    Raises
    ------
    BookError
        If the chapter does not declare ``results_path``, its ``book_params.yml`` section
        names a parameter it does not declare, ``results_path`` is overridden, a parameter
        whose default is a list is given a single value, or a value does not fit its declared
        type (:class:`~lmgeometry.errors.BookUsageError`, exit status 2).
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
        if name in (types or {}):
            _check_type(chapter, name, types[name], declared[name], value)
    merged[RESULTS_PARAM] = f"{chapter}.results.json"
    check_injection(chapter, merged)
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

