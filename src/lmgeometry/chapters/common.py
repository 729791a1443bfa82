"""What every chapter does the same way: per-layer tables over the models' stores.

A per-layer table is long: one row per (model, layer, ...), with ``model`` (the store's
label), ``layer`` and ``depth`` (layer / last layer, so models of different depths share an
axis). :func:`per_layer` builds one from a function of one store.

:func:`checked_parameters` checks a chapter's parameters against the type annotations of its
``parameters`` cell, so that a chapter also runs under plain papermill (``-p models
'["minilm-l6"]'`` passes a string).
"""

from __future__ import annotations

import functools
import json
import numbers
import os
import shlex
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import yaml
from threadpoolctl import threadpool_limits

from lmgeometry.activations.store import Store
from lmgeometry.claims.record import CLAIM_COLUMNS, CONTROLS
from lmgeometry.errors import UsageError
from lmgeometry.report.injected import check_injected

__all__ = [
    "BLAS_THREADS_ENV",
    "blas_threads",
    "ChapterResult",
    "check_whole",
    "check_wholes",
    "checked_parameters",
    "claims_per_model",
    "control_rows",
    "controls_for",
    "model_kinds",
    "per_layer",
    "STANDARDISED",
    "STANDARDISED_BASELINE",
    "standardised_control",
    "standardised_baseline_rows",
    "with_blas_threads",
]

#: Environment variable: BLAS threads of a chapter's analysis (default 1, see :func:`blas_threads`).
BLAS_THREADS_ENV = "LMGEOMETRY_BLAS_THREADS"

F = TypeVar("F", bound=Callable[..., Any])


def blas_threads() -> int:
    """BLAS threads a chapter's analysis runs with: ``$LMGEOMETRY_BLAS_THREADS``, else 1.

    A chapter's analysis is many small dense problems (a logistic head on 2,000 x 768 per layer,
    eigenproblems of 768 x 768, Gram matrices of 872 items). Two OpenBLAS threads gain little on
    them, and when anything else runs on the cores their spin-waiting makes them many times
    slower: on the 2-core development machine, with another job running, chapter 6's tables
    for SmolLM2 took 303 s with two threads and 16 s with one, chapter 4's analysis of SmolLM2
    84 s and 34 s. Wider models (d = 4,096) on many cores gain from threads: set the variable.
    """
    raw = os.environ.get(BLAS_THREADS_ENV, "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{BLAS_THREADS_ENV}={raw!r} is not a positive number of threads; "
                         f"set it to e.g. 1 or 4, or unset it for 1")
    return value


def with_blas_threads(fn: F) -> F:
    """Decorator: run ``fn`` (a chapter's ``analyse``) with :func:`blas_threads` BLAS threads.

    Only BLAS libraries are limited (``threadpoolctl``); torch's own threads, which extraction
    uses, are not.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with threadpool_limits(limits=blas_threads(), user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


#: The control under which cosine claims are also tested: every dimension z-scored over the
#: layer's words before the cosine (Timkey & van Schijndel 2021), so that a few rogue
#: dimensions cannot make every pair of words similar.
STANDARDISED = "standardised dimensions"


def standardised_control(control: str) -> str:
    """A control on standardised dimensions: ``"standardised dimensions"`` for the seed's
    protocol, else ``"first word excluded, standardised dimensions"`` (named as the
    frequency-matched control is)."""
    return STANDARDISED if control == CONTROLS[0] else f"{control}, {STANDARDISED}"


#: Why a claim about the anisotropy baseline is no test on standardised dimensions.
STANDARDISED_BASELINE = ("standardising centres every dimension: the baseline is near 0 by "
                         "construction")

_STANDARDISED_RULE = (
    "not a test of the claim: once every dimension is centred and scaled, the mean cosine of "
    "random words is near 0 by construction; the row measures how much of the raw anisotropy "
    "a common offset and the per-dimension scales carry (Timkey & van Schijndel 2021)")


def standardised_baseline_rows(claims: pd.DataFrame, baseline_claims: Iterable[str]
                               ) -> pd.DataFrame:
    """Claims about the anisotropy baseline under a standardised control: not applicable.

    Z-scoring each dimension over the layer's words subtracts their mean vector, so the mean
    cosine between random words is near 0 whatever the raw geometry. Such a row is kept (it
    shows how much of the raw baseline a common offset and the per-dimension scales carry) with
    ``applies`` false, :data:`STANDARDISED_BASELINE` as the reason and a rule saying so.
    """
    out = claims.copy()
    rows = (out["control"].astype(str).str.endswith(STANDARDISED)
            & out["claim"].isin(list(baseline_claims)))
    out.loc[rows, "applies"] = False
    out.loc[rows, "applies_reason"] = STANDARDISED_BASELINE
    out.loc[rows, "rule"] = _STANDARDISED_RULE
    return out


@dataclass
class ChapterResult:
    """What a chapter's ``analyse`` returns: tidy tables, claims and a few sentences.

    A chapter whose page shows its sentences in several places gives them by topic
    (``topics``, e.g. ``{"verdicts": [...], "sink": [...]}``, every topic present even when
    it has no sentence); ``sentences`` is then every topic's sentences in that order, and the
    page picks them with :meth:`sentences_about` and :meth:`sentences_except`.
    """

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    claims: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(CLAIM_COLUMNS)))
    sentences: list[str] = field(default_factory=list)
    topics: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.topics:
            return
        ordered = [s for said in self.topics.values() for s in said]
        if self.sentences and self.sentences != ordered:
            raise ValueError("ChapterResult: `sentences` differ from the sentences of "
                             "`topics`; pass only `topics` (the sentences follow from it)")
        self.sentences = ordered

    def sentences_about(self, *topics: str) -> list[str]:
        """The sentences on any of ``topics``, in the order of :attr:`sentences`."""
        return [s for topic, said in self._topics(topics).items() if topic in topics
                for s in said]

    def sentences_except(self, *topics: str) -> list[str]:
        """The sentences on every other topic, in the order of :attr:`sentences`."""
        return [s for topic, said in self._topics(topics).items() if topic not in topics
                for s in said]

    def _topics(self, asked: Sequence[str]) -> dict[str, list[str]]:
        unknown = [t for t in asked if t not in self.topics]
        if unknown:
            raise ValueError(f"no sentence topic {', '.join(map(repr, unknown))} in this "
                             f"result; its topics: {', '.join(map(repr, self.topics)) or 'none'}"
                             " (a chapter's analyse names them)")
        return self.topics

    def results(self) -> dict[str, Any]:
        """The numbers to save next to the executed chapter (tables and claims)."""
        return {**self.tables, "claims": self.claims}


def controls_for(store: Store) -> tuple[str, ...]:
    """The controls a store's numbers are computed under: both for decoders, none else."""
    kind = store.meta.get("model", {}).get("kind")
    return CONTROLS if kind == "decoder" else CONTROLS[:1]


def control_rows(store: Store, control: str) -> np.ndarray:
    """Indices of the store's rows that a control keeps (all, or all but first words)."""
    if control == "none":
        return np.arange(store.n_words)
    if control == "first word excluded":
        return np.flatnonzero(store.words["word_index"].to_numpy() > 0)
    raise ValueError(f"unknown control {control!r}; known: {CONTROLS}")


def model_kinds(stores: Mapping[str, Store]) -> dict[str, str]:
    """Model -> kind (``"encoder"``, ``"decoder"``; ``""`` if the store does not say), from
    each store's metadata."""
    return {spec: str(s.meta.get("model", {}).get("kind", "")) for spec, s in stores.items()}


def per_layer(stores: Iterable[Store] | Sequence[Store], fn: Callable[..., pd.DataFrame],
              **kwargs: Any) -> pd.DataFrame:
    """``fn(store, **kwargs)`` for every store, concatenated with ``model`` and ``depth``.

    ``fn`` returns a frame with a ``layer`` column; ``model`` (``store.label``) is put first
    and ``depth`` after ``layer`` (replacing any ``depth`` ``fn`` computed).
    """
    frames = []
    for store in stores:
        frame = fn(store, **kwargs)
        if "layer" not in frame.columns:
            raise ValueError(f"{getattr(fn, '__name__', fn)} returned no 'layer' column")
        frame = frame.drop(columns=[c for c in ("model", "depth") if c in frame.columns])
        frame.insert(0, "model", store.label)
        frame.insert(frame.columns.get_loc("layer") + 1, "depth",
                     frame["layer"].map(store.depth).astype(float))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


#: Example values for the fix an error message suggests (other names get one built from the type).
_EXAMPLES: dict[str, Any] = {"models": ["minilm-l6"]}

def check_whole(name: str, value: object, least: int) -> None:
    """Raise :class:`UsageError` unless ``value`` is a whole number of ``least`` or more.

    A chapter's frozen parameters (``GeometryParams``, ...) call it once, in ``__post_init__``.

    Examples
    --------
    >>> check_whole("n_boot", 0, 0)
    >>> check_whole("n_boot", 2.5, 0)
    Traceback (most recent call last):
    ...
    lmgeometry.errors.UsageError: n_boot=2.5: pass a whole number of 0 or more
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < least:
        raise UsageError(f"{name}={value!r}: pass a whole number of {least} or more")


def check_wholes(params: object, least: Mapping[str, int], optional: Iterable[str] = ()
                 ) -> None:
    """:func:`check_whole` on each field of ``params`` named in ``least`` (name -> least
    value); a field named in ``optional`` may also hold None."""
    allowed = set(optional)
    for name, low in least.items():
        value = getattr(params, name)
        if value is not None or name not in allowed:
            check_whole(name, value, low)


def claims_per_model(claims: pd.DataFrame) -> dict[str, int]:
    """How many claim rows each model has (the chapters' check cells print it)."""
    return claims.groupby("model").size().to_dict()


_UNREADABLE = object()


def checked_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A chapter's parameters, checked against the type annotations of its ``parameters`` cell.

    Each chapter calls it once, in its first code cell after the parameters (papermill puts its
    injected cell in between)::

        globals().update(checked_parameters(globals()))

    For every name of the namespace's ``__annotations__`` (the parameters cell's
    ``name: type = default``): a value of the annotated type is returned as it is, the same
    object, so the book pipeline's values pass unchanged. A string given where the annotation
    allows a list or a dict, or where it wants no string, is read as YAML (JSON is YAML): plain
    papermill passes ``-p models '["minilm-l6"]'`` as that string.

    Annotations understood: ``bool``, ``int``, ``float`` (an int is one too), ``str``, ``list``
    and ``dict`` (bare or with item types, ``list[str]``, ``dict[str, dict]``), and unions.

    Raises
    ------
    UsageError
        If a value (after reading a string) does not have its annotated type; the message names
        the parameter, the value and how to pass it (``-p`` and ``-y``). If papermill injected
        a parameter the cell does not declare (:func:`lmgeometry.report.injected.check_injected`).
    TypeError
        If the namespace has no annotations, or an annotation is not one of those above.
    """
    annotations = namespace.get("__annotations__") or {}
    if not annotations:
        raise TypeError("no annotated parameters: the parameters cell declares each one as "
                        "`name: type = default`")
    check_injected(annotations)  # papermill only warns about a parameter it does not know
    return {name: _checked(name, namespace[name], annotation)
            for name, annotation in annotations.items() if name in namespace}


def _checked(name: str, value: Any, annotation: Any) -> Any:
    parsed = _read_yaml(value) if isinstance(value, str) else _UNREADABLE
    if isinstance(parsed, list | dict) and _fits(parsed, annotation):
        return parsed
    if _fits(value, annotation):
        return value
    if parsed is not _UNREADABLE and _fits(parsed, annotation):
        return parsed
    note = ""
    if isinstance(value, str) and parsed is _UNREADABLE:
        note = ", which is not valid YAML or JSON"
    elif isinstance(value, str) and parsed != value:
        note = f" (read as YAML: {parsed!r})"
    example = _EXAMPLES.get(name)
    if not _fits(example, annotation):
        example = _example(annotation, value if parsed is _UNREADABLE else parsed)
    p_value = example if isinstance(example, str) else json.dumps(example)
    y_value = yaml.safe_dump({name: example}, default_flow_style=True, width=1000).strip()[1:-1]
    raise UsageError(
        f"parameter {name} takes {_type_name(annotation)}, not {value!r} "
        f"({type(value).__name__}){note}; pass it as e.g. -p {name} {shlex.quote(p_value)} "
        f"or -y {shlex.quote(y_value)}"
    )


def _read_yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return _UNREADABLE


def _fits(value: Any, annotation: Any) -> bool:
    """Whether ``value`` has the type ``annotation`` (item types of lists and dicts included)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any or annotation is object:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if annotation is bool:
        return isinstance(value, bool)
    if annotation in (int, float):
        allowed = int if annotation is int else int | float
        return isinstance(value, allowed) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    if annotation is list or origin is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value if args)
    if annotation is dict or origin is dict:
        return isinstance(value, dict) and all(
            _fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items() if args)
    raise TypeError(f"unsupported parameter annotation {annotation!r}: use bool, int, float, "
                    f"str, list[...], dict[...] or a union of them")


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _example(annotation: Any, value: Any) -> Any:
    """A value of type ``annotation`` for an error message: ``[value]`` where that fits."""
    if _fits([value], annotation):
        return [value]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return _example(args[0], value)
    if origin is list:
        return [_example(args[0], None)]
    if origin is dict:
        return {_example(args[0], None): _example(args[1], None)}
    placeholders = {bool: True, int: 1, float: 0.5, str: "text", list: [], dict: {}}
    return placeholders.get(annotation, None)
