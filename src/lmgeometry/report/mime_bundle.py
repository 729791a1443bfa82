"""Plotly's own mime bundle of a figure, for notebook viewers other than the book.

:func:`plotly_bundle` gives the JSON of plotly's ``plotly_mimetype`` renderer
(``application/vnd.plotly.v1+json``, :data:`PLOTLY_MIME`), which JupyterLab, Jupyter Notebook 7,
VS Code and nteract draw, kept small: numeric arrays travel as plotly's base64 typed arrays in
float32 or the narrowest integer type, and the template keeps only the trace types the figure
draws. A bundle larger than :data:`BUNDLE_BUDGET` (a point cloud per layer under a slider,
with a hover label per point) is cut down (:func:`compact_bundle`): no hover labels, then fewer
slider steps, said in its title; what stays is exact. :data:`BUNDLE_ENV` (``compact``,
``full``, ``off``) picks another bundle at display time (:func:`bundle_mode`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from lmgeometry.report.figure_encoding import _from_bdata

__all__ = [
    "BUNDLE_BUDGET",
    "BUNDLE_ENV",
    "BUNDLE_MODES",
    "MIN_BUNDLE_TYPED",
    "PLOTLY_MIME",
    "TITLE_LINES",
    "TITLE_WIDTH",
    "bundle_mode",
    "compact_bundle",
    "panel_title_room",
    "plotly_bundle",
]


#: The mime type of plotly's own renderer: what plotly's ``plotly_mimetype`` renderer emits and
#: JupyterLab (jupyterlab-plotly, shipped with plotly), VS Code and nteract draw.
PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: The title of a figure's plotly bundle wraps at this many characters, on at most
#: :data:`TITLE_LINES` lines (the book shows the whole caption under the figure instead).
TITLE_WIDTH = 90
TITLE_LINES = 3
#: In the plotly bundle, numeric arrays of at least this many values travel as typed arrays:
#: a number in a list costs its digits and a separator, in a typed array under 6 bytes.
MIN_BUNDLE_TYPED = 3
#: A figure's plotly bundle whose JSON, indented as nbformat indents it (a value a line; the
#: book's files keep a bundle on one line, about two thirds of that), is longer than
#: this many characters is cut down in the default ``compact`` mode (:func:`compact_bundle`):
#: hover labels first, then slider steps (in the book, the point clouds of chapters 1, 2 and
#: 5), so that every executed chapter stays under 5 MB.
BUNDLE_BUDGET = 120_000
#: The environment variable that picks the plotly bundle of :func:`show`'s outputs:
#: ``compact`` (the default), ``full`` (every array, as large as the figure needs) or ``off``.
BUNDLE_ENV = "LMGEOMETRY_FIGURE_BUNDLE"
BUNDLE_MODES = ("compact", "full", "off")


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` as float32, or as the narrowest of int8, int16 and int32 that holds them."""
    if np.issubdtype(values.dtype, np.floating):
        return values.astype(np.float32)
    for kind in ("i1", "i2", "i4"):
        if np.iinfo(kind).min <= values.min() and values.max() <= np.iinfo(kind).max:
            return values.astype(kind)
    return values


def _numeric(values: np.ndarray) -> bool:
    return values.dtype != bool and (np.issubdtype(values.dtype, np.integer)
                                     or np.issubdtype(values.dtype, np.floating))


def _rows(value: Any) -> np.ndarray | None:
    """A rectangular list of numeric rows (a heatmap's ``z`` as lists) as a 2-D array."""
    if not (isinstance(value, (list, tuple)) and value
            and all(isinstance(r, (list, tuple)) and r for r in value)):
        return None
    if len({len(r) for r in value}) != 1 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for r in value for v in r):
        return None
    return np.asarray(value)


def _typed_arrays(value: Any, key: str = "") -> Any:
    """A trace's numeric arrays as plotly.js typed arrays (``{"dtype", "bdata"}``), narrowed.

    Numpy arrays (plotly's own float64 specs included), lists of :data:`MIN_BUNDLE_TYPED` or
    more numbers and rectangular lists of numeric rows become float32 or the narrowest of int8,
    int16 and int32 (:func:`_narrow`). The keys plotly itself leaves alone (``range``,
    ``geojson``, ``layer(s)``) stay as they are.
    """
    from _plotly_utils.utils import is_skipped_key, to_typed_array_spec

    if is_skipped_key(key):
        return value
    if isinstance(value, dict) and {"dtype", "bdata"} <= value.keys():
        value = _from_bdata(value)
    if isinstance(value, dict):
        return {k: _typed_arrays(v, k) for k, v in value.items()}
    array = value if isinstance(value, np.ndarray) else None
    if (isinstance(value, (list, tuple)) and value
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        array = np.asarray(value)
    if array is None:
        array = _rows(value)
    if array is not None and array.size >= MIN_BUNDLE_TYPED and _numeric(array):
        return to_typed_array_spec(_narrow(array))
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_typed_arrays(v) for v in value]
    return value


def _typed_args(layout: dict[str, Any]) -> dict[str, Any]:
    """``layout`` with the arrays of its slider steps' and menu buttons' arguments typed.

    The arguments of ``restyle`` and ``update`` map an attribute to one value per trace: each
    trace's value that is a numeric array (a layer's coordinates) becomes a typed array
    (:func:`_typed_arrays`); lists of per-trace scalars and booleans stay lists.
    """
    def per_trace(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.ndim > 1:
            value = list(value)
        if isinstance(value, (list, tuple)):
            return [_typed_arrays(v) for v in value]
        return value

    def arguments(args: Any) -> Any:
        if not isinstance(args, (list, tuple)):
            return args
        return [{k: per_trace(v) for k, v in a.items()} if isinstance(a, dict) else a
                for a in args]

    def control(item: Any, children: str) -> Any:
        if not isinstance(item, dict) or not isinstance(item.get(children), (list, tuple)):
            return item
        return {**item, children: [
            {**c, **{k: arguments(c[k]) for k in ("args", "args2") if k in c}}
            if isinstance(c, dict) else c for c in item[children]]}

    out = dict(layout)
    for key, children in (("sliders", "steps"), ("updatemenus", "buttons")):
        if isinstance(out.get(key), (list, tuple)):
            out[key] = [control(item, children) for item in out[key]]
    return out


def _trace_types(spec: dict[str, Any]) -> set[str]:
    """The trace types a figure draws (``scatter`` where a trace names none), frames too."""
    traces = list(spec.get("data", []))
    for frame in spec.get("frames", []) or []:
        traces += frame.get("data", []) or []
    return {t.get("type", "scatter") for t in traces}


def panel_title_room(fig: go.Figure) -> int:
    """Pixels above the plot area that the top row's panel titles take (0 without any)."""
    lines = [str(a.text).count("<br>") + 1 for a in fig.layout.annotations
             if a.text and a.yref == "paper" and a.yanchor == "bottom"
             and a.y is not None and a.y >= 0.999]
    return 8 + 20 * max(lines) if lines else 0


def plotly_bundle(fig: go.Figure, title: str | None = None,
                  budget: int | None = None) -> dict[str, Any]:
    """The value of plotly's mime bundle for ``fig``: what plotly's renderer emits, smaller.

    The same JSON as plotly's ``plotly_mimetype`` renderer (``fig.to_plotly_json()`` made
    JSON-compatible), with two reductions that draw the same figure: the numeric arrays of the
    traces (and of the frames' traces) travel as plotly.js typed arrays (``{"dtype":
    "f4"|"i1"|"i2"|"i4", "bdata": base64}``, float32 for floats; :func:`_typed_arrays`), and
    the default template keeps its layout and the defaults of only the trace types the figure
    has. So do the per-trace arrays in the arguments of slider steps and menu buttons
    (:func:`_typed_args`): without them a layer slider's coordinates would be decimal lists,
    one number a line in the notebook file. The rest of the layout is as plotly gives it. The
    result is deterministic: the same figure gives the same JSON.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    title : str, optional
        A title to draw above the plot instead of the figure's own (plain text; wrapped at
        :data:`TITLE_WIDTH` characters, on at most :data:`TITLE_LINES` lines).
    budget : int, optional
        Cut a larger bundle down towards this many characters of JSON (:func:`compact_bundle`)
        and say what it leaves out in a last line of the title; without it, every array.

    Returns
    -------
    dict
        ``{"data": [...], "layout": {...}}`` (and ``"frames"``), ready to be the value of
        :data:`PLOTLY_MIME` in a display output.
    """
    import textwrap

    fig = go.Figure(fig)
    if title is not None:
        lines = textwrap.wrap(title, TITLE_WIDTH)
        if len(lines) > TITLE_LINES:
            lines = [*lines[:TITLE_LINES - 1],
                     textwrap.shorten(" ".join(lines[TITLE_LINES - 1:]), TITLE_WIDTH)]
        top = fig.layout.margin.t
        # the title at the top, the top row's panel titles (if any) under it
        fig.update_layout(title={"text": "<br>".join(lines), "y": 1, "yref": "container",
                                 "yanchor": "top", "pad": {"t": 10}},
                          margin_t=max(top or 0, 40 + 18 * len(lines) + panel_title_room(fig)))
    spec = fig.to_dict()  # plotly's own conversion: numpy arrays as float64/int typed arrays
    layout = dict(spec.get("layout", {}))
    template = layout.get("template")
    if isinstance(template, dict):
        kinds = _trace_types(spec)
        data = {k: v for k, v in (template.get("data") or {}).items() if k in kinds}
        layout["template"] = {**template, "data": data}
    body: dict[str, Any] = {"data": _typed_arrays(spec.get("data", [])),
                            "layout": _typed_args(layout)}
    if spec.get("frames"):
        body["frames"] = [{**f, "data": _typed_arrays(f.get("data", []))}
                          for f in spec["frames"]]
    if budget is not None:
        body, cuts = compact_bundle(json.loads(json.dumps(body, cls=PlotlyJSONEncoder)), budget)
        if cuts:
            body["layout"] = _noted(body["layout"], cuts)
    return json.loads(json.dumps(body, cls=PlotlyJSONEncoder, separators=(",", ":")))


def bundle_mode(mode: str | None = None) -> str:
    """``mode``, else the value of :data:`BUNDLE_ENV`, else ``compact``; one of
    :data:`BUNDLE_MODES`."""
    import os

    chosen = mode if mode is not None else (os.environ.get(BUNDLE_ENV) or "compact")
    if chosen not in BUNDLE_MODES:
        raise ValueError(f"figure bundle {chosen!r} is not one of {', '.join(BUNDLE_MODES)}: "
                         f"set {BUNDLE_ENV} to one of them, or unset it for compact")
    return chosen


def _chars(value: Any) -> int:
    """Characters of ``value`` as JSON indented as nbformat indents it (a value a line): the
    measure :data:`BUNDLE_BUDGET` is set in."""
    return len(json.dumps(value, indent=1))


def _without_hover_text(trace: dict[str, Any]) -> dict[str, Any] | None:
    """``trace`` without its per-point hover labels, or None when it has none to leave out.

    ``hovertext`` goes, and ``text`` where the trace does not draw it (no ``text`` in its
    ``mode``, no ``texttemplate``); a ``hoverinfo`` or ``hovertemplate`` that shows them goes
    too, so the hover shows the point's coordinates and the trace's name.
    """
    drawn = "text" in str(trace.get("mode", "")) or "texttemplate" in trace
    gone = [k for k in ("text", "hovertext")
            if isinstance(trace.get(k), list) and not (k == "text" and drawn)]
    if not gone:
        return None
    out = {k: v for k, v in trace.items() if k not in gone}
    if "text" in str(out.get("hoverinfo", "")):
        del out["hoverinfo"]
    if "text" in str(out.get("hovertemplate", "")):
        del out["hovertemplate"]
    return out


def _kept_steps(n: int, active: int, stride: int) -> list[int]:
    """Every ``stride``-th of ``n`` steps, with the first, the last and the ``active`` one."""
    return sorted({0, n - 1, active, *range(0, n, stride)})


def _thin_sliders(layout: dict[str, Any], excess: int) -> tuple[dict[str, Any], list[str]]:
    """``layout`` with every k-th step of its sliders, for the smallest k that saves
    ``excess`` characters (at most the first, last and active steps), and a note per slider."""
    sliders = [s for s in layout["sliders"] if isinstance(s, dict)]
    sizes = [[_chars(step) + 1 for step in s.get("steps") or []] for s in sliders]
    longest = max((len(z) for z in sizes), default=0)
    for stride in range(2, max(longest, 2) + 1):
        kept = [_kept_steps(len(z), min(s.get("active") or 0, len(z) - 1), stride) if z else []
                for s, z in zip(sliders, sizes, strict=True)]
        saved = sum(sum(z) - sum(z[i] for i in k) for z, k in zip(sizes, kept, strict=True))
        if saved >= excess:
            break
    out, notes = [], []
    for slider, keep in zip(sliders, kept, strict=True):
        steps = slider.get("steps") or []
        if len(keep) == len(steps):
            out.append(slider)
            continue
        labels = ", ".join(str(steps[i].get("label", i)) for i in keep)
        notes.append(f"{len(keep)} of the slider's {len(steps)} steps ({labels})")
        active = min(slider.get("active") or 0, len(steps) - 1)
        out.append({**slider, "steps": [steps[i] for i in keep], "active": keep.index(active)})
    return {**layout, "sliders": out}, notes


def compact_bundle(body: dict[str, Any],
                   budget: int = BUNDLE_BUDGET) -> tuple[dict[str, Any], list[str]]:
    """A plotly bundle cut down towards ``budget`` JSON characters, and what was left out.

    A bundle within the budget comes back as it is. A larger one loses, in this order and only
    as far as it takes to fit:

    1. the per-point hover labels (:func:`_without_hover_text`): the hover then shows the
       coordinates and the trace's name;
    2. steps of its sliders: every k-th step, with the first, the last and the active one, for
       the smallest k that fits (at fewest those three).

    What stays is exact: every trace keeps all its points, each kept step its arguments, menus
    and frames stay whole. A figure whose traces alone pass the budget keeps them all.

    Parameters
    ----------
    body : dict
        What :func:`plotly_bundle` returns without a budget.
    budget : int
        The characters of JSON to aim for.

    Returns
    -------
    tuple
        The bundle and the cuts in words (empty when none), for its title.
    """
    if _chars(body) <= budget:
        return body, []
    cuts = []
    traces = [_without_hover_text(t) for t in body.get("data", [])]
    if any(t is not None for t in traces):
        body = {**body, "data": [t if t is not None else old
                                 for t, old in zip(traces, body["data"], strict=True)]}
        cuts.append("no hover labels")
    excess = _chars(body) - budget
    if excess > 0 and isinstance(body.get("layout", {}).get("sliders"), list):
        layout, notes = _thin_sliders(body["layout"], excess)
        body = {**body, "layout": layout}
        cuts += notes
    return body, cuts


def _noted(layout: dict[str, Any], cuts: list[str]) -> dict[str, Any]:
    """``layout`` with a last title line saying what the bundle leaves out."""
    import textwrap

    note = (f"In this notebook view: {'; '.join(cuts)} (the book's page has them all; run "
            f"with {BUNDLE_ENV}=full to keep them).")
    lines = [f"<i>{line}</i>" for line in textwrap.wrap(note, TITLE_WIDTH)]
    title = dict(layout.get("title") or {})
    title["text"] = "<br>".join([t for t in [title.get("text")] if t] + lines)
    margin = dict(layout.get("margin") or {})
    margin["t"] = max(margin.get("t") or 0, 40) + 18 * len(lines)
    return {**layout, "title": title, "margin": margin}
