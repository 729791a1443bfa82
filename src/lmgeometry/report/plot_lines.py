"""Line figures of a measure over layers or depth: per model, per column, in facets, with
intervals, and the per-dimension profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lmgeometry.report.plot_style import PALETTE, _colors_by, _r, label, plain, value_label

__all__ = [
    "DEPTH_TITLE",
    "lines_by_layer",
    "interval_points",
    "column_lines",
    "facet_lines",
    "dimension_profile",
]


#: Axis title of a ``depth`` column: layer index over the index of the last layer.
DEPTH_TITLE = "depth (layer / last layer)"


def lines_by_layer(
    frame: pd.DataFrame,
    y: str,
    color: str = "model",
    x: str = "layer",
    lower: str | None = None,
    upper: str | None = None,
    dash: str | None = None,
    title: str = "",
    y_title: str | None = None,
    reference: float | None = None,
    reference_name: str = "",
    x_title: str | None = None,
    color_order: Sequence[object] | None = None,
) -> go.Figure:
    """One line per ``color`` value (and ``dash`` value) across layers, with optional bands.

    ``x`` is usually the layer index divided by the number of layers when models of different
    depths share a plot (as seed 001's figures do with absolute layers of equal-depth models).
    ``x_title`` defaults to ``x``, spelled out for :data:`DEPTH_TITLE` ("depth").
    ``color_order`` fixes which colour each ``color`` value gets (default: the order they
    appear in), so that panels drawing different subsets agree; models (the ``model`` column,
    or values that are all registry models) get their own colours (:func:`model_color`).
    """
    fig = go.Figure()
    keys = [color] + ([dash] if dash else [])
    dashes = ["solid", "dash", "dot", "dashdot"]
    dash_values = sorted(frame[dash].unique()) if dash else [None]
    color_values = list(color_order) if color_order is not None else list(pd.unique(frame[color]))
    colors = _colors_by(color, color_values)
    for key, part in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        c = colors[key[0]]
        d = dashes[dash_values.index(key[1]) % len(dashes)] if dash else "solid"
        part = part.sort_values(x)
        name = " / ".join([plain(key[0]), *(label(k) for k in key[1:])])
        if lower and upper:
            fig.add_trace(
                go.Scatter(
                    x=np.concatenate([part[x], part[x][::-1]]),
                    y=np.concatenate([part[upper], part[lower][::-1]]),
                    fill="toself",
                    fillcolor=c,
                    opacity=0.15,
                    line={"width": 0},
                    hoverinfo="skip",
                    showlegend=False,
                    legendgroup=name,
                )
            )
        fig.add_trace(
            go.Scatter(
                x=part[x],
                y=_r(part[y], 4),
                mode="lines+markers",
                name=name,
                line={"color": c, "dash": d},
                legendgroup=name,
            )
        )
    if reference is not None:
        fig.add_hline(
            y=reference, line={"color": "gray", "dash": "dot"}, annotation_text=reference_name
        )
    fig.update_layout(
        title=title,
        xaxis_title=x_title or (DEPTH_TITLE if x == "depth" else label(x)),
        yaxis_title=y_title or label(y),
        height=420,
        margin={"l": 50, "r": 10, "t": 50, "b": 40},
    )
    return fig


def interval_points(
    frame: pd.DataFrame,
    y: str,
    lower: str,
    upper: str,
    x: str,
    color: str = "model",
    title: str = "",
    x_title: str = "",
    y_title: str | None = None,
    reference: float | None = None,
    reference_name: str = "",
) -> go.Figure:
    """Estimates with their intervals as points and error bars, one colour per ``color``.

    For statistics on a categorical axis (a measure, a post-processing, a task), where lines
    between the categories would suggest an order that is not there. Points of different
    colours at one ``x`` are offset side by side; models keep their colours
    (:func:`model_color`).
    """
    fig = go.Figure()
    colors = _colors_by(color, list(pd.unique(frame[color])))
    for key, part in frame.groupby(color, sort=False):
        fig.add_trace(go.Scatter(
            x=part[x], y=_r(part[y], 4), mode="markers", name=plain(key), offsetgroup=str(key),
            marker={"color": colors[key], "size": 9},
            error_y={"type": "data", "symmetric": False,
                     "array": _r(part[upper] - part[y], 4),
                     "arrayminus": _r(part[y] - part[lower], 4)},
        ))
    if reference is not None:
        fig.add_hline(y=reference, line={"color": "gray", "dash": "dot"},
                      annotation_text=reference_name)
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title or y,
                      scattermode="group", height=420,
                      margin={"l": 50, "r": 10, "t": 50, "b": 40})
    return fig


def column_lines(
    frame: pd.DataFrame,
    columns: Mapping[str, str],
    *,
    x: str = "depth",
    color: str = "model",
    legend: str = "attribute",
    **kwargs: object,
) -> go.Figure:
    """:func:`lines_by_layer` of several columns of ``frame`` at once.

    ``columns`` maps column names to legend names; each (``color``, column) pair is one line,
    the columns told apart by dash. ``kwargs`` go to :func:`lines_by_layer`.
    """
    long = frame.melt(id_vars=[color, x], value_vars=list(columns), var_name=legend,
                      value_name="value")
    long[legend] = long[legend].map(dict(columns))
    return lines_by_layer(long, "value", color=color, x=x, dash=legend, **kwargs)


def facet_lines(
    frame: pd.DataFrame,
    y: str,
    facet: str,
    *,
    title: str = "",
    y_title: str | None = None,
    shared_y: bool = True,
    log_y: bool = False,
    **kwargs: object,
) -> go.Figure:
    """:func:`lines_by_layer` in one panel per value of ``facet``.

    Up to three panels stand side by side; four make a 2 x 2 grid and more rows of three, so
    that a panel keeps a readable width on a phone. Panel titles are wrapped to the panel's
    width (:func:`_facet_title`), so that neighbouring titles never run into each other.
    ``shared_y=False`` gives each panel its own y range (for quantities whose ranges differ
    by orders of magnitude between panels). Each line is named once in the legend (the first
    panel that draws it), its colour the same in every panel; interval bands are not named.
    ``kwargs`` (``x``, ``color``, ``dash``, ...) go to :func:`lines_by_layer`.
    """
    keys = list(pd.unique(frame[facet]))
    rows, cols = _facet_grid(len(keys))
    titles = [_facet_title(value_label(facet, k), cols) for k in keys]
    lines = max(t.count("<br>") + 1 for t in titles)
    fig = make_subplots(
        rows=rows, cols=cols, subplot_titles=titles, shared_yaxes=shared_y,
        horizontal_spacing=0.06 if shared_y else 0.1, vertical_spacing=0.1 + 0.04 * lines,
    )
    kwargs.setdefault("color_order", list(pd.unique(frame[kwargs.get("color", "model")])))
    named: set[str] = set()
    for i, key in enumerate(keys):
        row, col = divmod(i, cols)
        panel = lines_by_layer(frame[frame[facet] == key], y, **kwargs)
        for trace in panel.data:
            if trace.showlegend is not False:  # bands stay out of the legend
                trace.showlegend = trace.name not in named
                named.add(trace.name)
            fig.add_trace(trace, row=row + 1, col=col + 1)
        if row == rows - 1 or i + cols >= len(keys):  # the lowest panel of its column
            fig.update_xaxes(title_text=panel.layout.xaxis.title.text, row=row + 1,
                             col=col + 1)
        if log_y:
            fig.update_yaxes(type="log", row=row + 1, col=col + 1)
    for row in range(1, rows + 1):
        fig.update_yaxes(title_text=y_title or label(y), row=row, col=1)
    fig.update_annotations(font_size=13)  # the panel titles
    fig.update_layout(title=title, height=440 + 300 * (rows - 1),
                      margin={"l": 60, "r": 10, "t": 80 + 16 * (lines - 1), "b": 40})
    return fig


def _facet_grid(n: int) -> tuple[int, int]:
    """Rows and columns of ``n`` panels: one row of up to three, a 2 x 2 grid for four, else
    rows of three."""
    if n <= 3:
        return 1, n
    cols = 2 if n == 4 else 3
    return -(-n // cols), cols


def _facet_title(text: str, cols: int) -> str:
    """``text`` wrapped (``<br>``) to the width of one of ``cols`` panels side by side."""
    import textwrap

    return "<br>".join(textwrap.wrap(text, width=max(16, 54 // cols))) or text


def dimension_profile(
    values: Sequence[np.ndarray],
    title: str = "",
    y_title: str = "",
    layer_labels: Sequence | None = None,
) -> go.Figure:
    """One value per hidden dimension (x: dimension index), with a slider over layers.

    Seed 003's rogue-dimension plots: spikes stand out as dimensions whose value (mean,
    standard deviation or variance across sentences) dwarfs the rest.
    """
    labels = list(layer_labels) if layer_labels is not None else list(range(len(values)))
    fig = go.Figure()
    for i, v in enumerate(values):
        fig.add_trace(
            go.Scatter(
                x=np.arange(len(v)),
                y=_r(np.asarray(v, dtype=np.float64), 4),
                mode="lines",
                line={"width": 1, "color": PALETTE[0]},
                visible=i == len(values) - 1,
                name=f"layer {labels[i]}",
            )
        )
    steps = [
        {
            "method": "update",
            "label": str(label),
            "args": [{"visible": [j == i for j in range(len(values))]}],
        }
        for i, label in enumerate(labels)
    ]
    fig.update_layout(
        title=title,
        xaxis_title="dimension",
        yaxis_title=y_title,
        height=420,
        sliders=[{"active": len(values) - 1, "currentvalue": {"prefix": "layer "}, "steps": steps}],
        margin={"l": 50, "r": 10, "t": 50, "b": 40},
    )
    return fig
