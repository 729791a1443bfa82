"""Axis ranges that show the bulk of a point cloud: a few far points are put off scale, and the
panel says how many (issue 29, item 9: two points at x near 8000 squashed SmolLM2's cluster
into a line).

The data are never clipped or moved: a point off scale keeps its true coordinates (the
toolbar's autoscale shows it, its hover reads as before), the axis range just ends short of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

__all__ = [
    "OFF_SCALE_SHARE",
    "OFF_SCALE_GAP",
    "RANGE_PAD",
    "NOTE_BACKGROUND",
    "axis_range",
    "cloud_ranges",
    "off_scale_text",
    "add_off_scale_note",
    "axis_id",
    "panel_axes",
    "view_layout",
]


#: At most this share of the points may fall off scale at each end of an axis.
OFF_SCALE_SHARE = 0.01
#: A point goes off scale only beyond an empty stretch wider than this share of the span of
#: the points that always stay (all but the outermost :data:`OFF_SCALE_SHARE` at each end).
OFF_SCALE_GAP = 0.5
#: The range is padded by this share of the kept points' span at each end.
RANGE_PAD = 0.04
#: The background of an off-scale note, which may sit over points.
NOTE_BACKGROUND = "rgba(255,255,255,0.7)"


def axis_range(values: np.ndarray, share: float = OFF_SCALE_SHARE, gap: float = OFF_SCALE_GAP,
               pad: float = RANGE_PAD) -> tuple[float, float]:
    """The range of one axis that covers the bulk of ``values`` and leaves far outliers off.

    With the ``n`` finite values sorted, ``v[0] <= ... <= v[n-1]``, and ``k = floor(share * n)``,
    the points ``v[k] .. v[n-1-k]`` always stay, and their span ``s = v[n-1-k] - v[k]`` sets
    the scale. At the top, the largest ``j <= k`` with an empty stretch
    ``v[n-j] - v[n-j-1] > gap * s`` puts the ``j`` highest points off scale (the bottom
    likewise); the kept span is then padded by ``pad`` of itself at each end.

    The range therefore ends only at a wide gap (it never cuts through a cloud), and never
    leaves off more than ``share`` of the points at either end: a group holding more than 1%
    of the points (a decoder's first-token cluster holds about 5%) stays on scale, and with
    fewer than 100 points nothing goes off scale.

    On chapter 1's SmolLM2 panel (Fig. 13: layer 13, cluster 0, 963 words, x from -66 to 8088),
    ``k = 9`` and the kept core runs from -47.1 to 24.4 (``s = 71.4``); the gaps 41 -> 88 ->
    173 -> 7874 are all wider than 35.7, so the four points at 88, 173, 7874 and 8088 go off
    scale and x runs from -70.7 to 45.2 (was -66 to 8088, which drew the cloud as a line); y
    keeps every point (-70.8 to 46.8). A percentile rule (0.5th to 99.5th: -50.4 to 34.5)
    would cut ten points, six of them from the cloud's continuous tails, and would cut into a
    far cluster of 2% of the points instead of keeping it whole.

    Parameters
    ----------
    values
        The coordinates drawn on the axis; NaN and infinite values are ignored.
    share, gap, pad
        :data:`OFF_SCALE_SHARE`, :data:`OFF_SCALE_GAP`, :data:`RANGE_PAD`.

    Returns
    -------
    tuple of float
        ``(low, high)``; ``(-1, 1)`` when no value is finite; when all are equal, the value
        -+ 0.5 (or -+ its magnitude times ``pad``, if larger).
    """
    v = np.sort(np.asarray(values, dtype=np.float64).ravel())
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return -1.0, 1.0
    k = int(share * n)
    low, high = 0, n - 1
    scale = v[n - 1 - k] - v[k]
    if k and scale > 0:
        gaps = np.diff(v) > gap * scale  # gaps[i]: an empty stretch between v[i] and v[i + 1]
        top = np.flatnonzero(gaps[n - 1 - k:])
        high = n - 1 - k + int(top[0]) if len(top) else high
        bottom = np.flatnonzero(gaps[:k])
        low = int(bottom[-1]) + 1 if len(bottom) else low
    lo, hi = float(v[low]), float(v[high])
    margin = pad * (hi - lo) if hi > lo else max(abs(lo) * pad, 0.5)
    return _short(lo - margin, hi - lo + 2 * margin), _short(hi + margin, hi - lo + 2 * margin)


def _short(value: float, span: float) -> float:
    """``value`` rounded to four significant digits of ``span`` (a short number in the page)."""
    return round(value, 3 - int(np.floor(np.log10(span))))


def cloud_ranges(points: np.ndarray) -> tuple[list[tuple[float, float]], int]:
    """:func:`axis_range` of each column of an ``(n, d)`` point cloud, and how many of its
    points fall outside them (a point off scale on any axis counts once)."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2:
        raise ValueError(f"points must be an (n, d) array, one row per point, got shape "
                         f"{points.shape}: pass a 2-D array (e.g. xy[:, None] for one axis)")
    ranges = [axis_range(points[:, j]) for j in range(points.shape[1])]
    lows, highs = np.array(ranges).T
    with np.errstate(invalid="ignore"):
        off = ((points < lows) | (points > highs)).any(axis=1)
    return ranges, int(off.sum())


def off_scale_text(n_off: int, n_points: int | None = None) -> str:
    """The note of a panel with ``n_off`` points off scale: "2 points off scale", "1 of the
    4000 points off scale" (with ``n_points``); empty when ``n_off`` is 0."""
    if n_off == 0:
        return ""
    if n_points is not None:
        return f"{n_off} of the {n_points} points off scale"
    return f"{n_off} {'point' if n_off == 1 else 'points'} off scale"


def add_off_scale_note(fig: go.Figure, xaxis: str | None = None, yaxis: str | None = None
                       ) -> int:
    """Add an empty, hidden note for :func:`off_scale_text` to ``fig``; its annotation index.

    The note is small gray text inside the bottom-right corner of the panel of axes ``xaxis``
    and ``yaxis`` (e.g. ``"xaxis2"``, ``"yaxis2"``), placed on their domains so that it stays
    on its panel when the page script moves panels; with no axes (a 3-D scene) it sits in the
    bottom-right corner of the plot area, away from the panel's top middle, where the page
    script (``panelsOf`` in ``_ext/lmgeometry_figures.js``) looks for a panel's title.
    """
    refs = {"xref": "paper", "yref": "paper"}
    if xaxis is not None and yaxis is not None:
        refs = {"xref": f"{axis_id(xaxis)} domain", "yref": f"{axis_id(yaxis)} domain"}
    fig.add_annotation(text="", visible=False, x=1.0, y=0.0, xanchor="right", yanchor="bottom",
                       showarrow=False, font={"size": 10, "color": "#555"},
                       bgcolor=NOTE_BACKGROUND, **refs)
    return len(fig.layout.annotations) - 1


def axis_id(name: str) -> str:
    """A trace's or annotation's name for the axis of layout name ``name``: ``"xaxis2"`` ->
    ``"x2"``, ``"yaxis"`` -> ``"y"``."""
    if not name.startswith(("xaxis", "yaxis")):
        raise ValueError(f"{name!r} is not a 2-D axis's layout name: pass one such as 'xaxis' "
                         f"or 'yaxis2'")
    return name[0] + name[5:]


def panel_axes(fig: go.Figure, row: int, col: int) -> tuple[str, str]:
    """The layout names of the axes of subplot (``row``, ``col``): ``("xaxis2", "yaxis2")``."""
    subplot = fig.get_subplot(row, col)
    return subplot.xaxis.plotly_name, subplot.yaxis.plotly_name


def view_layout(points: np.ndarray, axes: Sequence[str], note: int,
                n_points: int | None = None) -> dict[str, Any]:
    """Layout properties that fit one view of ``points`` (``(n, d)``, the points drawn): the
    :func:`cloud_ranges` of column ``j`` as ``{axes[j]}.range`` (``"xaxis2"``, or
    ``"scene.xaxis"``), and the text (:func:`off_scale_text`) and visibility of annotation
    ``note``. For ``fig.update_layout`` or a slider step's ``update``/``relayout``."""
    ranges, n_off = cloud_ranges(points)
    if len(axes) != len(ranges):
        raise ValueError(f"{len(axes)} axes for points of {len(ranges)} coordinates: name one "
                         f"axis per column of the points")
    text = off_scale_text(n_off, n_points)
    out: dict[str, Any] = {f"{a}.range": list(r) for a, r in zip(axes, ranges, strict=True)}
    out[f"annotations[{note}].text"] = text
    out[f"annotations[{note}].visible"] = bool(text)
    return out
