"""The compact form of a plotly figure that the book's pages draw (``lmgFigure``).

:func:`encode_figure` turns a figure into what ``_ext/lmgeometry_figures.js`` decodes:

- every numeric array (trace data, slider and menu arguments) is sent as base64 typed data:
  point clouds (the coordinates of marker-only traces, and any float array of
  :data:`MIN_QUANTISED` values or more) as 16-bit steps over their range, other floats as
  float32, integers as int8/16/32; a point costs 2.7 characters a coordinate instead of about
  20 as decimal text;
- an array that occurs more than once in a figure (the hover text shared by the panels of
  small multiples, the same colours in every layer) is sent once;
- plotly's default template (7 kB) is left out and restored by the script.

:func:`share_on_page` sends long lists of strings once per page instead of once per figure.
:func:`pack_spec` sends a large figure gzip-compressed (its hover text, sentences and word
labels, shrinks about threefold; the browser unpacks it with ``DecompressionStream``), and
:func:`unpack_spec` is its inverse.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from collections import Counter
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.utils import PlotlyJSONEncoder

__all__ = [
    "MIN_PAGE_SHARED_CHARS",
    "MIN_QUANTISED",
    "MIN_SHARED_CHARS",
    "MIN_PACKED_CHARS",
    "MIN_TYPED",
    "encode_figure",
    "pack_spec",
    "share_on_page",
    "unpack_spec",
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
#: A figure whose compact JSON is at least this long travels gzip-compressed
#: (:func:`pack_spec`); a smaller one stays readable JSON, drawn without waiting.
MIN_PACKED_CHARS = 20_000
#: Trace types whose ``mode="markers"`` traces are point clouds: their coordinates are
#: quantised (:func:`_quantised`) from :data:`MIN_TYPED` values on, not only from
#: :data:`MIN_QUANTISED` (a small-multiple panel may hold a few dozen points of one class).
_CLOUD_TRACES = frozenset({"scatter", "scattergl", "scatter3d"})


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
        # an encoded array ({"$q2": ...}) is one value; the layout's "$template" flag is not
        if isinstance(v, dict) and not any(k.startswith("$") and k != "$template" for k in v):
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
    quantise = not _has_log_axis(layout)
    if quantise:
        parts["data"] = [_quantised_cloud(t) for t in parts["data"]]
    common = _common_trace_values(parts["data"])
    if common:
        parts["data"] = [{k: v for k, v in t.items() if k not in common} for t in parts["data"]]
    shared: list[Any] = []
    body = _share(_encode(parts, quantise=quantise), shared)
    return {**body, "shared": shared, **({"common": common} if common else {})}


def _quantised_cloud(trace: dict[str, Any]) -> dict[str, Any]:
    """``trace`` with its coordinates as 16-bit steps (:func:`_quantised`) when it is a point
    cloud (a marker-only trace of :data:`_CLOUD_TRACES`) of :data:`MIN_TYPED` points or more."""
    if trace.get("type", "scatter") not in _CLOUD_TRACES or trace.get("mode") != "markers":
        return trace
    out = dict(trace)
    for axis in ("x", "y", "z"):
        value = trace.get(axis)
        if isinstance(value, dict) and {"dtype", "bdata"} <= value.keys():
            value = _from_bdata(value)
        array = _as_array(value)
        if (array is not None and array.ndim == 1 and np.issubdtype(array.dtype, np.floating)
                and array.size >= MIN_TYPED and np.isfinite(array).all()):
            out[axis] = _quantised(array)
    return out


def pack_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` as ``lmgFigure`` receives it: gzip-compressed when large, else unchanged.

    A spec whose JSON has at least :data:`MIN_PACKED_CHARS` characters becomes
    ``{"$gz": base64 of the gzip of its JSON, "types": [...]}``; ``types`` lists every
    ``"type"`` value inside (trace, axis and shape types), which the book reads to choose the
    plotly bundle a page needs without unpacking. The bytes depend only on the spec (gzip's
    time stamp is zero). :func:`unpack_spec` is the inverse.

    Examples
    --------
    >>> small = {"data": [{"type": "scatter"}], "layout": {}, "shared": []}
    >>> pack_spec(small) is small
    True
    >>> big = {"data": [{"type": "bar", "text": ["a long label"] * 3000}], "layout": {},
    ...        "shared": []}
    >>> packed = pack_spec(big)
    >>> sorted(packed), packed["types"], unpack_spec(packed) == big
    (['$gz', 'types'], ['bar'], True)
    """
    text = json.dumps(spec, cls=PlotlyJSONEncoder, separators=(",", ":"))
    if len(text) < MIN_PACKED_CHARS:
        return spec
    packed = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
    return {"$gz": base64.b64encode(packed).decode("ascii"), "types": _types(spec)}


def unpack_spec(payload: dict[str, Any]) -> dict[str, Any]:
    """The spec that :func:`pack_spec` packed (a spec that was not packed, unchanged)."""
    if "$gz" not in payload:
        return payload
    return json.loads(gzip.decompress(base64.b64decode(payload["$gz"])).decode("utf-8"))


def _types(value: Any) -> list[str]:
    """Every string value of a ``"type"`` key in ``value``, sorted, once each."""
    found: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "type" and isinstance(x, str):
                    found.add(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    return sorted(found)


def _common_trace_values(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """The plain (str, number, bool) properties every trace has with the same value."""
    if len(traces) < 2:
        return {}
    first = traces[0]
    return {k: v for k, v in first.items()
            if isinstance(v, (str, int, float, bool))
            and all(k in t and type(t[k]) is type(v) and t[k] == v for t in traces[1:])}


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
