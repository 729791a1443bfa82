"""Numbered, captioned figures and tables in executed notebooks, compact enough for a book.

Under papermill a plotly figure's default output is only the plotly JSON mimetype, which
myst-nb drops. :func:`show` instead emits an HTML ``<figure>``: a div, a caption numbered in
the order of the chapter ("Figure 3. ..."), and a one-line script that hands a compact copy
of the figure to ``lmgFigure`` (``_ext/lmgeometry_figures.js``, which the book's Sphinx
extension serves with plotly.js on the pages that have figures). Compact means:

- every numeric array (trace data, slider and menu arguments) is sent as base64 typed data
  (:func:`encode_figure`): point clouds as 16-bit steps over their range, other floats as
  float32, integers as int8/16/32; a point costs 2.7 characters a coordinate instead of about
  20 as decimal text;
- an array that occurs more than once in a figure (the hover text shared by the panels of
  small multiples, the same colours in every layer) is sent once;
- plotly's default template (7 kB) is left out and restored by the script.

The same output also carries plotly's own mime bundle (``application/vnd.plotly.v1+json``,
:func:`plotly_bundle`), which JupyterLab, Jupyter Notebook 7, VS Code and nteract draw with
their plotly renderer, so that an executed chapter opened outside the book shows its figures
(in a viewer without a plotly renderer, such as nbviewer, only the caption shows). The book
never renders it: ``_config.yml`` gives it no priority (``nb_mime_priority_overrides``), so
myst-nb keeps the HTML above and the pages weigh what they did. It is kept small too: numeric
arrays travel as plotly's base64 typed arrays in float32 or the narrowest integer type, and
the template keeps only the trace types the figure draws. A bundle larger than
:data:`BUNDLE_BUDGET` (a point cloud per layer under a slider, with a hover label per point)
is cut down (:func:`compact_bundle`): no hover labels, then fewer slider steps, said in its
title; what stays is exact. :data:`BUNDLE_ENV` (``compact``, ``full``, ``off``) picks another
bundle at display time.

:func:`show_table` does the same for tables: no index, readable headers, formatted numbers, a
numbered caption, a box that scrolls sideways when the table is wider than the text, and long
tables folded behind a toggle.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.utils import PlotlyJSONEncoder

from lmgeometry import trace

__all__ = [
    "BUNDLE_ENV",
    "PLOTLY_MIME",
    "Abbreviated",
    "bundle_mode",
    "compact_bundle",
    "encode_figure",
    "figure_anchor",
    "figure_bundle",
    "figure_html",
    "figure_number",
    "plotly_bundle",
    "show",
    "show_table",
    "table_html",
]

#: Numeric arrays with at least this many values are sent as base64 typed arrays.
MIN_TYPED = 8
#: Float arrays with at least this many values (point clouds, not the few values of a line
#: across layers, with or without its band) are quantised to 16 bits over their range: an
#: error of at most 1/131070 of the range, far below a pixel. Never in a figure with a log
#: axis, where a linear step would flatten the small values.
MIN_QUANTISED = 64
#: Arrays whose encoding is at least this long are sent once when they repeat.
MIN_SHARED_CHARS = 200
#: Lists of strings (hover text) whose JSON is at least this long are sent once per page: the
#: first figure that has one defines it, later figures of the chapter refer to it.
MIN_PAGE_SHARED_CHARS = 1000
#: Tables with more rows are folded behind a "show" toggle.
FOLD_ROWS = 20
#: A figure with more subplot columns keeps this width and scrolls sideways on a phone.
WIDE_GRID_COLUMNS = 4
WIDE_GRID_MIN_PX = 720

#: The mime type of plotly's own renderer: what plotly's ``plotly_mimetype`` renderer emits and
#: JupyterLab (jupyterlab-plotly, shipped with plotly), VS Code and nteract draw.
PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: The title of a figure's plotly bundle wraps at this many characters, on at most
#: :data:`TITLE_LINES` lines (the book shows the whole caption under the figure instead).
TITLE_WIDTH = 90
TITLE_LINES = 3
#: In the plotly bundle, numeric arrays of at least this many values travel as typed arrays:
#: the notebook file puts each number of a list on a line of its own, indented.
MIN_BUNDLE_TYPED = 3
#: A figure's plotly bundle whose JSON, indented as a notebook file stores it, is longer than
#: this many characters is cut down in the default ``compact`` mode (:func:`compact_bundle`):
#: hover labels first, then slider steps (in the book, the point clouds of chapters 1, 2 and
#: 5), so that every executed chapter stays under 5 MB.
BUNDLE_BUDGET = 120_000
#: The environment variable that picks the plotly bundle of :func:`show`'s outputs:
#: ``compact`` (the default), ``full`` (every array, as large as the figure needs) or ``off``.
BUNDLE_ENV = "LMGEOMETRY_FIGURE_BUNDLE"
BUNDLE_MODES = ("compact", "full", "off")

_numbers = {"figure": 0, "table": 0}
_page_defined: set[str] = set()  # page-shared lists defined by this chapter's figures so far
_figure_numbers: dict[str, int] = {}  # each figure shown so far: its name -> its number


def _next_number(kind: str) -> int:
    _numbers[kind] += 1
    return _numbers[kind]


def reset_numbering() -> None:
    """Start figure and table numbers again at 1, and page-shared lists afresh (a chapter's
    kernel starts there anyway)."""
    _numbers.update(figure=0, table=0)
    _page_defined.clear()
    _figure_numbers.clear()


def figure_number(name: str) -> int | None:
    """The number :func:`show` gave figure ``name`` in this chapter, or None if none yet."""
    return _figure_numbers.get(name)


def _div_id(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    return f"fig-{slug}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _typed(values: np.ndarray, quantise: bool = True) -> dict[str, Any] | None:
    """``{"$f4"|"$i1"|"$i2"|"$i4": base64, "shape": [...]}`` for a numeric array, else None.

    Floats travel as float32 (quantised to 16 bits from :data:`MIN_QUANTISED` values on, see
    :func:`_quantised`), integers in the narrowest of int8, int16 and int32 that holds them (an
    integer beyond int32 is not encoded).
    """
    if values.dtype == bool or values.size < MIN_TYPED:
        return None
    if np.issubdtype(values.dtype, np.integer):
        kind = next((k for k in ("i1", "i2", "i4")
                     if np.iinfo(k).min <= values.min() and values.max() <= np.iinfo(k).max),
                    None)
        if kind is None:
            return None
    elif np.issubdtype(values.dtype, np.floating):
        kind = "f4"
        if quantise and values.size >= MIN_QUANTISED and np.isfinite(values).all():
            return _quantised(values)
    else:
        return None
    data = values.astype("<" + kind)
    spec: dict[str, Any] = {"$" + kind: base64.b64encode(data.tobytes()).decode("ascii")}
    if data.ndim > 1:
        spec["shape"] = list(data.shape)
    return spec


def _short_bounds(lo: float, hi: float) -> tuple[float, float]:
    """``[lo, hi]`` widened to multiples of 1e-5 of the span's magnitude: short decimals."""
    span = hi - lo
    if span <= 0:
        return lo, hi
    exponent = int(np.floor(np.log10(span))) - 5
    unit, digits = 10.0 ** exponent, -exponent
    low = round(float(np.floor(lo / unit)) * unit, digits)
    high = round(float(np.ceil(hi / unit)) * unit, digits)
    return (low if low <= lo else round(low - unit, digits),
            high if high >= hi else round(high + unit, digits))


def _quantised(values: np.ndarray) -> dict[str, Any]:
    """``{"$q2": base64 int16, "lo", "hi"}``: value = lo + (q + 32768) * (hi - lo) / 65535,
    with ``lo`` and ``hi`` short decimals just outside the values' range."""
    lo, hi = _short_bounds(float(values.min()), float(values.max()))
    scale = (hi - lo) or 1.0
    q = np.round((values.astype(np.float64) - lo) / scale * 65535.0) - 32768.0
    spec: dict[str, Any] = {"$q2": base64.b64encode(q.astype("<i2").tobytes()).decode("ascii"),
                            "lo": lo, "hi": hi}
    if values.ndim > 1:
        spec["shape"] = list(values.shape)
    return spec


def _as_array(value: Any) -> np.ndarray | None:
    """``value`` as a numeric numpy array when it is a flat or rectangular list of numbers."""
    if isinstance(value, np.ndarray):
        return value
    if (isinstance(value, (list, tuple)) and len(value) >= MIN_TYPED
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        return np.asarray(value)
    return None


def _from_bdata(spec: dict[str, Any]) -> np.ndarray:
    """The array behind plotly's own ``{"dtype", "bdata", "shape"}`` encoding."""
    values = np.frombuffer(base64.b64decode(spec["bdata"]), dtype=np.dtype(spec["dtype"]))
    shape = spec.get("shape")
    if isinstance(shape, str):
        shape = [int(s) for s in shape.split(",")]
    return values.reshape(shape) if shape else values


def _numeric_parts(value: Any) -> list[np.ndarray] | None:
    """The 1-D numeric arrays of a list of them (a slider step's data, one per trace)."""
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        return None
    parts = []
    for item in value:
        if isinstance(item, dict) and {"dtype", "bdata"} <= item.keys():
            item = _from_bdata(item)
        if isinstance(item, (list, tuple)) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in item):
            item = np.asarray(item, dtype=np.float64)
        if not (isinstance(item, np.ndarray) and item.ndim == 1 and item.dtype != bool
                and np.issubdtype(item.dtype, np.number)):
            return None
        parts.append(item)
    return parts if sum(len(p) for p in parts) >= MIN_TYPED else None


def _packed(parts: list[np.ndarray], quantise: bool) -> dict[str, Any] | None:
    """One typed spec for a list of numeric arrays, with ``"parts"``: their lengths."""
    flat = np.concatenate([p.astype(np.float64) for p in parts])
    spec = _typed(flat, quantise)
    if spec is None or "shape" in spec:
        return None
    return {**spec, "parts": [len(p) for p in parts]}


def _bits(value: Any) -> dict[str, Any] | None:
    """``{"$b": base64 of the packed bits, "n": length}`` for a list of :data:`MIN_TYPED` or
    more booleans (a menu button's trace visibility), else None."""
    if isinstance(value, np.ndarray) and value.dtype == bool and value.ndim == 1:
        flags = value
    elif (isinstance(value, (list, tuple))
          and all(isinstance(v, (bool, np.bool_)) for v in value)):
        flags = np.asarray(value, dtype=bool)
    else:
        return None
    if flags.size < MIN_TYPED:
        return None
    return {"$b": base64.b64encode(np.packbits(flags).tobytes()).decode("ascii"),
            "n": int(flags.size)}


def _encode(value: Any, quantise: bool = True) -> Any:
    """Replace numeric arrays by typed-array specs, recursively; other values unchanged.

    A list of numeric arrays (a slider step's coordinates, one array per trace) travels as
    one packed spec with the arrays' lengths (``"parts"``), not one spec per array; a list of
    booleans as a bit string (:func:`_bits`).
    """
    if isinstance(value, dict) and {"dtype", "bdata"} <= value.keys():
        value = _from_bdata(value)
    if isinstance(value, dict):
        return {k: _encode(v, quantise) for k, v in value.items()}
    bits = _bits(value)
    if bits is not None:
        return bits
    parts = _numeric_parts(value)
    if parts is not None:
        packed = _packed(parts, quantise)
        if packed is not None:
            return packed
    array = _as_array(value)
    if array is not None:
        spec = _typed(array, quantise)
        if spec is not None:
            return spec
        return [_encode(v, quantise) for v in (array.tolist() if array.dtype != object
                                               else array)]
    if isinstance(value, (list, tuple)):
        return [_encode(v, quantise) for v in value]
    return value


def _has_log_axis(layout: dict[str, Any]) -> bool:
    """Whether any 2-D or 3-D axis of ``layout`` is logarithmic."""
    axes = [v for k, v in layout.items() if re.fullmatch(r"[xy]axis\d*", k)]
    for k, scene in layout.items():
        if re.fullmatch(r"scene\d*", k) and isinstance(scene, dict):
            axes += [scene.get(a) for a in ("xaxis", "yaxis", "zaxis")]
    return any(isinstance(a, dict) and a.get("type") == "log" for a in axes)


def _share(value: Any, shared: list[Any]) -> Any:
    """Replace repeated large arrays by ``{"$ref": i}`` into ``shared`` (filled here)."""
    def key(v: Any) -> str:
        return json.dumps(v, cls=PlotlyJSONEncoder, separators=(",", ":"))

    def walk(v: Any, visit: Any) -> Any:
        if isinstance(v, dict) and not any(k.startswith("$") for k in v):
            return {k: walk(x, visit) for k, x in v.items()}
        if isinstance(v, list) and not all(isinstance(x, (str, int, float)) for x in v):
            return [walk(x, visit) for x in v]
        return visit(v)

    counts: Counter[str] = Counter()
    keys: dict[int, str] = {}  # id of a large candidate -> its serialisation (made once)

    def count(v: Any) -> Any:
        if isinstance(v, (list, dict)):
            k = key(v)
            if len(k) >= MIN_SHARED_CHARS:
                counts[k] += 1
                keys[id(v)] = k
        return v

    walk(value, count)
    index: dict[str, int] = {}

    def replace(v: Any) -> Any:
        k = keys.get(id(v))
        if k is None or counts[k] < 2:
            return v
        if k not in index:
            index[k] = len(shared)
            shared.append(v)
        return {"$ref": index[k]}

    return walk(value, replace)


def encode_figure(fig: go.Figure) -> dict[str, Any]:
    """The compact form of ``fig`` that ``lmgFigure`` draws: data, layout and shared arrays.

    Returns
    -------
    dict
        ``{"data": [...], "layout": {...}, "shared": [...]}`` (and ``"frames"`` for an
        animated figure) where numeric arrays are
        ``{"$f4": base64}``, ``{"$q2": base64, "lo", "hi"}`` (see :func:`_quantised`) or
        ``{"$i1"|"$i2"|"$i4": base64}`` (little-endian float32, int16 or int8/16/32, with
        ``"shape"`` for 2-D arrays), repeated arrays are ``{"$ref": i}`` into ``shared``, and
        ``layout["$template"]`` is true when plotly's default template was left out;
        ``"common"`` holds the plain properties that every trace shares (sent once).
    """
    spec = fig.to_plotly_json()
    layout = dict(spec.get("layout", {}))
    default = pio.templates[pio.templates.default].to_plotly_json()
    if not layout.get("title"):
        layout.pop("title", None)
    if layout.get("template") == default:
        del layout["template"]
        layout["$template"] = True
    parts = {"data": spec.get("data", []), "layout": layout}
    if spec.get("frames"):
        parts["frames"] = spec["frames"]
    common = _common_trace_values(parts["data"])
    if common:
        parts["data"] = [{k: v for k, v in t.items() if k not in common} for t in parts["data"]]
    shared: list[Any] = []
    body = _share(_encode(parts, quantise=not _has_log_axis(layout)), shared)
    return {**body, "shared": shared, **({"common": common} if common else {})}


def _common_trace_values(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """The plain (str, number, bool) properties every trace has with the same value."""
    if len(traces) < 2:
        return {}
    first = traces[0]
    return {k: v for k, v in first.items()
            if isinstance(v, (str, int, float, bool))
            and all(k in t and type(t[k]) is type(v) and t[k] == v for t in traces[1:])}


def _title_text(fig: go.Figure) -> str:
    title = fig.layout.title
    return (title.text or "") if title is not None else ""


def _grid_columns(fig: go.Figure) -> int:
    """How many subplot columns ``fig`` has (1 for a single plot)."""
    starts: set[float] = set()
    for name in fig.layout:
        if re.fullmatch(r"xaxis\d*", name) and fig.layout[name].domain is not None:
            starts.add(round(fig.layout[name].domain[0], 3))
    return max(len(starts), 1)


def share_on_page(spec: dict[str, Any], defined: set[str]) -> dict[str, Any]:
    """Send long lists of strings once per page: ``{"$page": key}`` in ``spec``.

    Each list of strings in ``spec``'s data and shared arrays whose JSON has at least
    :data:`MIN_PAGE_SHARED_CHARS` characters (hover text: the senses chapter shows the same
    sentences for every model) is replaced by a reference to its sha256 ``key``. A key not in
    ``defined`` is defined by this figure, in ``spec["page"]``, and added to ``defined``; the
    page's script keeps every definition for the figures after it, so figures must be drawn
    in page order (inline scripts are).
    """
    page: dict[str, list[str]] = {}

    def visit(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: visit(v) for k, v in value.items()}
        if not isinstance(value, list):
            return value
        if not value or not all(isinstance(v, str) for v in value):
            return [visit(v) for v in value]
        text = json.dumps(value, separators=(",", ":"))
        if len(text) < MIN_PAGE_SHARED_CHARS:
            return value
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in defined:
            page[key] = value
            defined.add(key)
        return {"$page": key}

    out = dict(spec, data=visit(spec["data"]), shared=visit(spec["shared"]))
    if page:
        out["page"] = page
    return out


def _panel_title_room(fig: go.Figure) -> int:
    """Pixels above the plot area that the top row's panel titles take (0 without any)."""
    lines = [str(a.text).count("<br>") + 1 for a in fig.layout.annotations
             if a.text and a.yref == "paper" and a.yanchor == "bottom"
             and a.y is not None and a.y >= 0.999]
    return 8 + 20 * max(lines) if lines else 0


def figure_html(fig: go.Figure, name: str, caption: str | None = None,
                number: int | None = None, page: set[str] | None = None) -> str:
    """HTML ``<figure>`` for ``fig``: its div (id stable across runs), caption and script.

    The caption is ``caption``, or else the figure's title, which is then taken out of the
    plot (a title inside the plot sits under plotly's toolbar and is cut off on a phone).
    With ``page`` (the keys defined by earlier figures of the page), long lists of strings
    are shared with them (:func:`share_on_page`); without it the figure stands alone.
    """
    fig = go.Figure(fig)
    text = caption if caption is not None else _title_text(fig)
    if _title_text(fig):
        top = fig.layout.margin.t
        fig.update_layout(title=None, margin_t=max(
            min(top, 40) if top is not None else 40, _panel_title_room(fig)))
    div_id = _div_id(name)
    height = fig.layout.height or 450
    wide = _grid_columns(fig) >= WIDE_GRID_COLUMNS
    style = f"height:{height}px;width:100%" + (f";min-width:{WIDE_GRID_MIN_PX}px" if wide else "")
    spec = encode_figure(fig)
    if page is not None:
        spec = share_on_page(spec, page)
    payload = json.dumps(spec, cls=PlotlyJSONEncoder, separators=(",", ":"))
    label = f"Figure {number}." if number is not None else "Figure."
    return (
        f'<figure class="lmg-figure" id="{div_id}-figure">'
        f'<div class="lmg-scroll"><div id="{div_id}" class="plotly-graph-div" '
        f'style="{style}"></div></div>'
        f'<figcaption><span class="lmg-label">{label}</span> {text}</figcaption></figure>'
        f'<script type="text/javascript">lmgFigure("{div_id}", {payload});</script>'
    )


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
                          margin_t=max(top or 0, 40 + 18 * len(lines) + _panel_title_room(fig)))
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
    """Characters of ``value`` as JSON indented as nbformat writes it (a value a line)."""
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


def _plain(text: str) -> str:
    """``text`` without HTML tags and entities, on one line."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def figure_bundle(fig: go.Figure, name: str, caption: str | None = None,
                  number: int | None = None, page: set[str] | None = None,
                  bundle: str | None = None) -> dict[str, Any]:
    """The display data of a figure: the book's HTML, plotly's mime bundle and plain text.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    name, caption, number, page
        As for :func:`figure_html`.
    bundle : {"compact", "full", "off"}, optional
        The plotly bundle (default: :data:`BUNDLE_ENV`, else ``compact``): cut down towards
        :data:`BUNDLE_BUDGET` characters (:func:`compact_bundle`), every array, or none.

    Returns
    -------
    dict
        ``{"text/html": figure_html(...), PLOTLY_MIME: plotly_bundle(...), "text/plain":
        "Figure N. ..."}``. The book renders the HTML only; other notebook viewers draw the
        plotly bundle, titled with the label and the caption (or the figure's own title).
    """
    mode = bundle_mode(bundle)
    text = caption if caption is not None else _title_text(fig)
    label = f"Figure {number}." if number is not None else "Figure."
    title = f"{label} {_plain(text)}".strip()
    data = {"text/html": figure_html(fig, name, caption, number, page)}
    if mode != "off":
        data[PLOTLY_MIME] = plotly_bundle(fig, title,
                                          BUNDLE_BUDGET if mode == "compact" else None)
    return {**data, "text/plain": title}


def show(fig: go.Figure, name: str, caption: str | None = None) -> None:
    """Display ``fig`` as the chapter's next numbered figure; ``name`` is unique in the chapter.

    ``caption`` (HTML allowed) says what is plotted and what to look at; without it the
    figure's title is the caption. The output holds the book's HTML and plotly's own mime
    bundle (:func:`figure_bundle`).
    """
    from IPython.display import display

    with trace.timed("figure", name=name):  # for `lmgeometry book --profile`
        number = _figure_numbers[name] = _next_number("figure")
        display(figure_bundle(fig, name, caption, number, _page_defined), raw=True)


def _header(column: Any) -> str:
    parts = column if isinstance(column, tuple) else (column,)
    text = " / ".join(str(p) for p in parts if str(p) != "")
    return text.replace("_", " ")


@dataclass(frozen=True)
class Abbreviated:
    """A table cell shown as its first ``length`` characters, in full on hover (a hash)."""

    full: str
    length: int = 12

    def __str__(self) -> str:
        return self.full[:self.length]


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, Abbreviated):
        return f'<code title="{html.escape(value.full)}">{html.escape(str(value))}</code>'
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if value is None:
        return "–"
    return html.escape(str(value))


def _decimals(column: pd.Series, digits: int) -> int:
    """The fewest decimals (at most ``digits``) that show every float of ``column`` as
    ``digits`` decimals would: 91.3, not 91.300; 999, not 999.000."""
    values = pd.to_numeric(column, errors="coerce") if column.dtype == object else column
    if not pd.api.types.is_float_dtype(values):
        return digits
    finite = values[np.isfinite(values)].to_numpy(dtype=float)
    rounded = np.round(finite, digits)
    return next(d for d in range(digits + 1) if np.allclose(np.round(finite, d), rounded,
                                                           rtol=0, atol=0.1 ** (digits + 1)))


def figure_anchor(name: str) -> str:
    """The HTML id a link to figure ``name`` targets: a MyST label (``fig-ch03-...``) as it
    stands, else the id :func:`figure_html` gives the ``<figure>`` of :func:`show`'s ``name``."""
    return name if re.fullmatch(r"fig-ch\d\d-[a-z0-9-]+", name) else f"{_div_id(name)}-figure"


def table_html(table: pd.DataFrame, caption: str, number: int | None = None,
               digits: int = 3, fold_rows: int = FOLD_ROWS,
               row_ids: Sequence[str] | None = None,
               links: Mapping[str, Sequence[str | None]] | None = None,
               classes: Mapping[str, Sequence[str | None]] | None = None,
               titles: Mapping[str, Sequence[str | None]] | None = None,
               anchor: str | None = None) -> str:
    """HTML for ``table`` as a numbered, captioned figure (see :func:`show_table`)."""
    ids = [""] * len(table) if row_ids is None else [f' id="{html.escape(i)}"' for i in row_ids]
    if len(ids) != len(table):
        raise ValueError(f"{len(ids)} row ids for {len(table)} rows")
    for what, given in (("links", links), ("classes", classes), ("titles", titles)):
        for column, values in (given or {}).items():
            if len(values) != len(table):
                raise ValueError(f"{len(values)} {what} for the {len(table)} rows of column "
                                 f"{column!r}")
    named = any(n is not None for n in table.index.names)
    if named or not pd.api.types.is_integer_dtype(table.index.dtype):
        if table.index.nlevels == 1 and not named:  # row labels: no "index" header
            table = table.rename_axis("")
        table = table.reset_index()
    else:  # a row number (a default or filtered index) is not data
        table = table.reset_index(drop=True)
    headers = "".join(f"<th>{html.escape(_header(c))}</th>" for c in table.columns)
    numeric = [pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
               for t in table.dtypes]
    def per_row(given: Mapping[str, Sequence[str | None]] | None) -> list[list[str | None]]:
        return [list((given or {}).get(c, [None] * len(table))) for c in table.columns]

    hrefs, extra, hover = per_row(links), per_row(classes), per_row(titles)

    decimals = [_decimals(table.iloc[:, j], digits) for j in range(table.shape[1])]

    def cell(value: Any, i: int, j: int) -> str:
        text = _cell(value, decimals[j])
        if hrefs[j][i]:
            text = f'<a href="{html.escape(str(hrefs[j][i]))}">{text}</a>'
        kind = "num" if numeric[j] else "txt"
        kind += f" {html.escape(str(extra[j][i]))}" if extra[j][i] else ""
        title = f' title="{html.escape(str(hover[j][i]))}"' if hover[j][i] else ""
        return f'<td class="{kind}"{title}>{text}</td>'

    rows = "".join(
        f"<tr{row_id}>" + "".join(cell(v, i, j) for j, v in enumerate(row)) + "</tr>"
        for i, (row, row_id) in enumerate(zip(table.itertuples(index=False, name=None), ids,
                                              strict=True))
    )
    label = f"Table {number}." if number is not None else "Table."
    body = (f'<div class="lmg-scroll"><table class="lmg-table"><thead><tr>{headers}</tr>'
            f"</thead><tbody>{rows}</tbody></table></div>")
    if len(table) > fold_rows:
        body = (f"<details><summary>Show the {len(table)} rows</summary>{body}</details>")
    figure_id = f' id="{html.escape(anchor)}"' if anchor else ""
    return (f'<figure class="lmg-table-figure"{figure_id}><figcaption><span class="lmg-label">'
            f"{label}</span> {caption}</figcaption>{body}</figure>")


def show_table(table: pd.DataFrame, caption: str, digits: int = 3,
               columns: Sequence[str] | None = None, fold_rows: int = FOLD_ROWS,
               row_ids: Sequence[str] | None = None,
               links: Mapping[str, Sequence[str | None]] | None = None,
               classes: Mapping[str, Sequence[str | None]] | None = None,
               titles: Mapping[str, Sequence[str | None]] | None = None,
               anchor: str | None = None) -> None:
    """Display ``table`` as the chapter's next numbered table.

    Parameters
    ----------
    table
        The rows to show; a named or non-default index becomes the first columns.
    caption
        What the table holds and how to read it (HTML allowed).
    digits
        Decimals of floating-point cells (integers get thousands separators).
    columns
        The columns to show, in order (default: all).
    fold_rows
        A table with more rows is folded behind a toggle.
    row_ids
        An HTML id per row, for links to a row (``page.html#id``).
    links
        Column -> one URL (or None) per row: those cells link there (a claim to its figure).
    classes
        Column -> one CSS class (or None) per row, added to those cells (a verdict's colour).
    titles
        Column -> one hover text (or None) per row, the cells' ``title`` (a claim's statistic).
    anchor
        The HTML id of the table's ``<figure>``, for links to the table (``page.html#id``).
    """
    from IPython.display import HTML, display

    if columns is not None:
        table = table[list(columns)]
    display(HTML(table_html(table, caption, _next_number("table"), digits, fold_rows,
                            row_ids, links, classes, titles, anchor)))
