"""Plotly figure builders shared by the chapters.

2-D point clouds are SVG ``Scatter`` traces, not WebGL: a browser keeps about 16 WebGL
contexts per page and blanks the oldest beyond that, which a chapter's many small-multiple
figures exceeded; only the 3-D views use WebGL.

Every builder takes plain arrays and returns a ``plotly.graph_objects.Figure``; chapters show
them with :func:`lmgeometry.report.figures.show`. Projection coordinates are rounded to 3
decimals (curves to 4) before they go into a figure; what keeps the committed notebooks small
is the compact encoding of :func:`lmgeometry.report.figures.encode_figure` (16-bit steps for
point clouds, float32 for the rest).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lmgeometry.io._offline import ALIASES

__all__ = [
    "choice_layer_slider",
    "column_lines",
    "default_point_counts",
    "DEPTH_TITLE",
    "dimension_profile",
    "facet_lines",
    "heatmap",
    "heatmap_grid",
    "GRID_POINTS",
    "interval_points",
    "label",
    "plain",
    "LABELS",
    "layer_at_depth",
    "layer_grid",
    "models_side_by_side",
    "layer_slider_3d",
    "lines_by_layer",
    "model_color",
    "MODEL_ORDER",
    "PALETTE",
    "scene_axis_titles",
    "GRAY_CONTEXT",
    "SELECT_MENU",
    "color_bounds",
    "COLOR_CAP_PERCENTILE",
    "point_tiers",
    "SHADOW",
    "side_by_side",
]


SHADOW = "rgba(160,160,160,0.25)"

#: Kelly's (1965) colours of maximum contrast (white and black left out): 20 categories
#: that stay distinct from each other and from the gray shadow.
PALETTE = ["#875692", "#F38400", "#0067A5", "#BE0032", "#008856", "#F3C300", "#A1CAF1",
           "#E68FAC", "#604E97", "#882D17", "#8DB600", "#F99379", "#C2B280", "#654522",
           "#E25822", "#2B3D26", "#B3446C", "#DCD300", "#848482", "#F6A600"]

#: The registry's models (the offline aliases) in their fixed order: model ``i`` of it is drawn
#: in ``PALETTE[i]`` in every figure (:func:`model_color`).
MODEL_ORDER: tuple[str, ...] = tuple(ALIASES)

#: How many points each panel of small multiples draws at most (:func:`layer_grid`).
GRID_POINTS = 500

#: Continuous colour scales end at this percentile of the values: a skewed attribute such as
#: the position in the sentence would otherwise put most points in one end of the scale.
COLOR_CAP_PERCENTILE = 95.0


#: Reader-facing names of the measure and column names that reach legends and axes.
LABELS = {
    "upos": "part of speech (UPOS)",
    "selfsim": "SelfSim",
    "intrasim": "IntraSim",
    "selfsim_adj": "SelfSim, anisotropy-adjusted",
    "intrasim_adj": "IntraSim, anisotropy-adjusted",
    "mev": "MEV",
    "sigma_1": "σ₁",
    "sigma_2": "σ₂",
    "sigma_3": "σ₃",
}


def plain(text: object) -> str:
    """``text`` for a plotly title, legend or hover: angle brackets as entities, so that a
    token such as ``<s>`` or ``<bos>`` is shown as written (plotly reads ``<s>`` as a
    strike-through tag and drops tags it does not know)."""
    return str(text).replace("<", "&lt;").replace(">", "&gt;")


def label(name: object) -> str:
    """The reader-facing name of a measure or column: :data:`LABELS`, else underscores as
    spaces (``mean_cosine_centered`` -> ``mean cosine centered``); angle brackets escaped
    (:func:`plain`)."""
    text = str(name)
    return plain(LABELS.get(text, text.replace("_", " ")))


def _r(a: np.ndarray, decimals: int = 3) -> np.ndarray:
    return np.round(np.asarray(a, dtype=np.float64), decimals)


def _category_colors(categories: Sequence[str]) -> dict[str, str]:
    return {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(categories)}


def model_color(model: object) -> str:
    """The colour of ``model`` in every figure of the book.

    Parameters
    ----------
    model
        A model's name as the chapters write it: an offline alias (``minilm-l6``), a hub id
        or a folder.

    Returns
    -------
    str
        ``PALETTE[i]`` for model ``i`` of :data:`MODEL_ORDER`; any other name gets one of the
        palette's remaining colours, chosen by a checksum of the name (the same in every
        figure and every run; two such names may share a colour).
    """
    name = str(model)
    if name in MODEL_ORDER:
        return PALETTE[MODEL_ORDER.index(name) % len(PALETTE)]
    rest = len(PALETTE) - len(MODEL_ORDER)
    return PALETTE[len(MODEL_ORDER) + zlib.crc32(name.encode("utf-8")) % rest]


def _colors_by(column: str, values: Sequence[object]) -> dict[object, str]:
    """Colour of each of ``values`` (in their order) of the column ``column``: the model
    colours (:func:`model_color`) for the ``model`` column or values that are all registry
    models, else the palette in order."""
    values = list(values)
    if column == "model" or (values and all(str(v) in MODEL_ORDER for v in values)):
        return {v: model_color(v) for v in values}
    return {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(values)}


def scene_axis_titles(title: str) -> tuple[str, str, str]:
    """Axis titles of a 3-D scatter whose figure is titled ``title``: the projection's
    components (``PC 1``... for a PCA, ``UMAP 1``... for a UMAP, ``t-SNE 1``... for a t-SNE),
    else the coordinates themselves (``x``, ``y``, ``z``).

    Parameters
    ----------
    title
        The figure's title, which names its projection.

    Returns
    -------
    tuple of str
        The titles of the x, y and z axes.
    """
    for key, prefix in (("PCA", "PC"), ("UMAP", "UMAP"), ("T-SNE", "t-SNE"), ("TSNE", "t-SNE")):
        if key in title.upper():
            return (f"{prefix} 1", f"{prefix} 2", f"{prefix} 3")
    return ("x", "y", "z")


#: ``layout.meta`` of a categorical figure whose legend click shows one category in colour
#: over the others in gray (drawn by ``_ext/lmgeometry_figures.js``) instead of hiding it.
GRAY_CONTEXT = {"legendClick": "gray-context"}

#: ``layout.meta`` of a figure whose first dropdown is drawn as a native ``<select>`` above
#: the plot (by ``_ext/lmgeometry_figures.js``): a list of dozens of words that fits any
#: screen, where plotly's own dropdown is taller than the figure.
SELECT_MENU = {"menu": "select"}


def color_bounds(values: np.ndarray, cap: float | None = COLOR_CAP_PERCENTILE
                 ) -> tuple[float, float]:
    """``(cmin, cmax)`` of a continuous colour scale: the minimum and the ``cap`` percentile
    (the maximum when ``cap`` is None). Values above ``cmax`` get the top colour."""
    values = np.asarray(values, dtype=np.float64)
    top = float(np.nanmax(values)) if cap is None else float(np.nanpercentile(values, cap))
    return float(np.nanmin(values)), top


def _continuous_marker(color: np.ndarray, color_title: str, showscale: bool, size: int,
                       scale_of: np.ndarray, cap: float | None) -> dict:
    """Marker of ``color`` on the scale of all the values ``scale_of``, cut at the ``cap``
    percentile; the colour bar says where it is cut."""
    bounds = color_bounds(scale_of, cap)
    title = color_title
    if bounds[1] < np.nanmax(np.asarray(scale_of, dtype=np.float64)):
        title = f"{color_title}<br><sup>top colour: {bounds[1]:g}<br>and more ({cap:g}th pct)</sup>"
    return {"size": size, "color": color, "colorscale": "Viridis", "cmin": bounds[0],
            "cmax": bounds[1], "showscale": showscale, "colorbar": {"title": title}}


def layer_grid(
    panels: Sequence[np.ndarray],
    titles: Sequence[str],
    color: np.ndarray,
    color_title: str,
    categorical: bool = False,
    hover: Sequence[str] | None = None,
    cols: int = 6,
    title: str = "",
    shadow: bool = False,
    background: str | None = None,
    color_cap: float | None = COLOR_CAP_PERCENTILE,
    max_points: int | None = GRID_POINTS,
    seed: int = 0,
) -> go.Figure:
    """Small multiples: one 2-D scatter per panel (layer), all coloured by the same values.

    Each panel draws the same ``max_points`` points (a seeded random subset; all when None
    or fewer): a panel is a few hundred pixels wide, and every point is drawn again in every
    panel. A continuous colour runs on one scale for every panel, cut at the ``color_cap``
    percentile (:func:`color_bounds`) of the points drawn.

    ``categorical=True`` draws one trace per category and panel, grouped in the legend so a
    click toggles a category in every panel; ``shadow=True`` adds every point in gray beneath
    (seed 000's "gray shadow" style), so isolating a category keeps the context visible.
    Points whose category is ``background`` appear only in the gray shadow.
    """
    color = np.asarray(color)
    hover = None if hover is None else np.asarray(hover)
    # categories (and so their colours) of all the points, drawn or not
    categories = [c for c in sorted(pd.unique(color)) if c != background] if categorical else []
    if max_points is not None and len(color) > max_points:
        keep = np.sort(np.random.default_rng(seed).permutation(len(color))[:max_points])
        panels = [np.asarray(xy)[keep] for xy in panels]
        color = color[keep]
        hover = None if hover is None else hover[keep]
    rows = int(np.ceil(len(panels) / cols))
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=list(titles),
        horizontal_spacing=0.02,
        vertical_spacing=0.06,
    )
    colors = _category_colors(categories)
    marker = None if categorical else _continuous_marker(color, color_title, True, 3, color,
                                                         color_cap)
    for p, xy in enumerate(panels):
        _add_grid_panel(fig, p, p // cols + 1, p % cols + 1, xy, color, marker,
                        categorical, categories, colors, hover, shadow)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    fig.update_layout(
        title=title,
        height=220 * rows + 80,
        margin={"l": 10, "r": 10, "t": 60},
        legend={"itemsizing": "constant", "title": color_title},
    )
    return fig


def _add_grid_panel(fig: go.Figure, p: int, row: int, col: int, xy: np.ndarray,
                    color: np.ndarray, marker: dict | None, categorical: bool, categories: list,
                    colors: dict[str, str], hover: np.ndarray | None, shadow: bool) -> None:
    """Add panel ``p``'s traces (gray shadow, then per-category or continuous points)."""
    x, y = _r(xy[:, 0]), _r(xy[:, 1])
    if shadow:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="markers",
                marker={"size": 2, "color": SHADOW},
                name="all words (shadow)",
                legendgroup="shadow",
                showlegend=p == 0,
                hoverinfo="skip",
            ),
            row=row,
            col=col,
        )
    if categorical:
        for c in categories:
            m = color == c
            fig.add_trace(
                go.Scatter(
                    x=x[m],
                    y=y[m],
                    mode="markers",
                    marker={"size": 3, "color": colors[c]},
                    name=plain(c),
                    legendgroup=str(c),
                    showlegend=p == 0,
                    text=None if hover is None else hover[m],
                    hoverinfo="text+name",
                ),
                row=row,
                col=col,
            )
    else:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="markers",
                marker={**marker, "showscale": p == 0},
                text=hover,
                hoverinfo="text",
                showlegend=False,
            ),
            row=row,
            col=col,
        )


def point_tiers(n: int, counts: Sequence[int], seed: int = 0) -> np.ndarray:
    """Nested random subsets of ``n`` points: the tier of each point for the given counts.

    A seeded permutation ranks the points; a point of rank ``r`` belongs to the first tier
    ``t`` with ``r < counts[t]``, so tiers ``0..t`` together hold exactly ``counts[t]`` points
    (a uniform random subset, the same for every layer). ``counts`` must increase strictly
    and end at ``n``.
    """
    counts = [int(c) for c in counts]
    if not counts or counts[-1] != n or (np.diff(counts) <= 0).any():
        raise ValueError(f"counts must increase strictly and end at n={n}, got {counts}")
    if counts[0] < 1:
        raise ValueError(f"counts must be positive, got {counts}")
    rank = np.empty(n, dtype=np.int64)
    rank[np.random.default_rng(seed).permutation(n)] = np.arange(n)
    return np.searchsorted(np.asarray(counts), rank, side="right").astype(np.int32)


def default_point_counts(n: int, smallest: int = 250) -> list[int]:
    """Point counts offered by a figure's dropdown: ``n``, ``n/2``, ``n/4``, ... down to
    ``smallest`` (just ``[n]`` when ``n`` is below ``2 * smallest``)."""
    counts = [n]
    while counts[0] // 2 >= smallest:
        counts.insert(0, counts[0] // 2)
    return counts


def layer_slider_3d(
    coords: Sequence[np.ndarray],
    layer_names: Sequence[str],
    color: np.ndarray,
    color_title: str,
    hover: Sequence[str] | None = None,
    categorical: bool = False,
    title: str = "",
    point_counts: Sequence[int] | None = None,
    initial_points: int | None = None,
    slider_prefix: str = "layer: ",
    seed: int = 0,
    axis_titles: Sequence[str] | None = None,
) -> go.Figure:
    """A 3-D scatter of the same points in every layer, with a layer slider and a point count.

    ``coords[l]`` is the ``(n, 3)`` projection of the ``n`` points in layer ``l``. The slider
    re-points the traces' ``x``/``y``/``z`` at the chosen layer (a ``restyle`` that leaves
    visibility alone), so the plotted data change and only one layer's data are drawn at a
    time. The dropdown shows ``point_counts`` points (nested seeded random subsets, see
    :func:`point_tiers`; default :func:`default_point_counts`, at most ``n``); it starts at
    ``initial_points`` (default: the largest count up to 1000). Traces are one per (subset
    tier, category): continuous colours share one colour scale, cut at the
    :data:`COLOR_CAP_PERCENTILE` (:func:`color_bounds`); categorical colours are grouped
    in the legend by category, and a click on a category shows it over the others in gray
    (:data:`GRAY_CONTEXT`). The axes are titled ``axis_titles``, by default the projection's
    components as ``title`` names them (:func:`scene_axis_titles`).
    """
    coords = [np.asarray(c) for c in coords]
    n = len(coords[0])
    if any(c.shape != (n, 3) for c in coords):
        raise ValueError(f"every layer needs ({n}, 3) coordinates")
    if len(layer_names) != len(coords):
        raise ValueError(f"{len(layer_names)} layer names for {len(coords)} layers")
    color = np.asarray(color)
    hover = None if hover is None else np.asarray(hover)
    counts = list(point_counts) if point_counts is not None else default_point_counts(n)
    tiers = point_tiers(n, counts, seed)
    if initial_points is None:
        initial_points = max([c for c in counts if c <= 1000] or counts[:1])
    if initial_points not in counts:
        raise ValueError(f"initial_points {initial_points} is not one of {counts}")
    shown_tier = counts.index(initial_points)
    fig = go.Figure()
    masks, trace_tier = _add_tier_traces(fig, coords[0], tiers, len(counts), color, color_title,
                                         hover, categorical, shown_tier)
    steps = [
        {
            "method": "restyle",
            "label": str(name),
            "args": [{axis: [_r(xyz[m][:, j]).tolist() for m in masks]
                      for j, axis in enumerate("xyz")}],
        }
        for name, xyz in zip(layer_names, coords, strict=True)
    ]
    tier_arr = np.array(trace_tier)
    buttons = [
        {"method": "restyle", "label": f"{count} points",
         "args": [{"visible": (tier_arr <= t).tolist()}]}
        for t, count in enumerate(counts)
    ]
    fig.update_layout(
        title=title,
        height=620,
        margin={"l": 0, "r": 0, "t": 50, "b": 0},
        sliders=[{"active": 0, "steps": steps, "currentvalue": {"prefix": slider_prefix}}],
        updatemenus=[
            {
                "buttons": buttons,
                "active": shown_tier,
                "direction": "down",
                "x": 0.0,
                "xanchor": "left",
                "y": 1.0,
                "yanchor": "top",
                "showactive": True,
            }
        ] if len(counts) > 1 else [],
        scene={f"{axis}axis": {"title": name} for axis, name in
               zip("xyz", axis_titles or scene_axis_titles(title), strict=True)},
        legend={"itemsizing": "constant", "title": color_title},
        meta=GRAY_CONTEXT if categorical else None,
    )
    return fig


def _add_tier_traces(fig: go.Figure, xyz0: np.ndarray, tiers: np.ndarray, n_tiers: int,
                     color: np.ndarray, color_title: str, hover: np.ndarray | None,
                     categorical: bool, shown_tier: int) -> tuple[list[np.ndarray], list[int]]:
    """One 3-D trace per (point tier, category) at the first layer; their row masks and tiers."""
    n = len(xyz0)
    categories = sorted(pd.unique(color)) if categorical else [None]
    colors = _category_colors([c for c in categories if c is not None])
    masks: list[np.ndarray] = []
    trace_tier: list[int] = []
    for t in range(n_tiers):
        for c in categories:
            m = (tiers == t) & (np.ones(n, bool) if c is None else color == c)
            if not m.any():
                continue
            if c is None:
                marker = _continuous_marker(color[m], color_title, not masks, 2, color,
                                            COLOR_CAP_PERCENTILE)
            else:
                marker = {"size": 2, "color": colors[c]}
            xyz = xyz0[m]
            fig.add_trace(
                go.Scatter3d(
                    x=_r(xyz[:, 0]),
                    y=_r(xyz[:, 1]),
                    z=_r(xyz[:, 2]),
                    mode="markers",
                    marker=marker,
                    name=plain(c) if c is not None else "points",
                    legendgroup=str(c),
                    showlegend=c is not None and t == 0,
                    text=None if hover is None else hover[m],
                    hoverinfo="text" if c is None else "text+name",
                    visible=t <= shown_tier,
                )
            )
            masks.append(m)
            trace_tier.append(t)
    return masks, trace_tier


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
    """:func:`lines_by_layer` in one panel per value of ``facet``, side by side.

    ``shared_y=False`` gives each panel its own y range (for quantities whose ranges differ
    by orders of magnitude between panels). Each line is named once in the legend (the first
    panel that draws it), its colour the same in every panel; interval bands are not named.
    ``kwargs`` (``x``, ``color``, ``dash``, ...) go to :func:`lines_by_layer`.
    """
    keys = list(pd.unique(frame[facet]))
    fig = make_subplots(
        rows=1, cols=len(keys), subplot_titles=[label(k) for k in keys], shared_yaxes=shared_y,
        horizontal_spacing=0.06 if shared_y else 0.1,
    )
    kwargs.setdefault("color_order", list(pd.unique(frame[kwargs.get("color", "model")])))
    named: set[str] = set()
    for col, key in enumerate(keys, start=1):
        panel = lines_by_layer(frame[frame[facet] == key], y, **kwargs)
        for trace in panel.data:
            if trace.showlegend is not False:  # bands stay out of the legend
                trace.showlegend = trace.name not in named
                named.add(trace.name)
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(title_text=panel.layout.xaxis.title.text, row=1, col=col)
        if log_y:
            fig.update_yaxes(type="log", row=1, col=col)
    fig.update_yaxes(title_text=y_title or label(y), row=1, col=1)
    fig.update_layout(title=title, height=440, margin={"l": 60, "r": 10, "t": 80, "b": 40})
    return fig


def _heatmap_hover(x_title: str, y_title: str, z_title: str) -> str:
    """Hover text of a heatmap cell in words: "layer (tuned) 15, layer 6: CKA 0.057"."""
    return (f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>"
            f"{z_title or 'value'}: %{{z:.3f}}<extra></extra>")


def heatmap(
    matrix: np.ndarray,
    x_labels: Sequence,
    y_labels: Sequence,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    colorbar_title: str = "",
) -> go.Figure:
    """A labelled heatmap (e.g. layer x position, layer x UPOS)."""
    fig = go.Figure(
        go.Heatmap(
            z=_r(matrix, 4),
            x=list(map(str, x_labels)),
            y=list(map(str, y_labels)),
            colorscale="Viridis",
            colorbar={"title": colorbar_title},
            hovertemplate=_heatmap_hover(x_title, y_title, colorbar_title),
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        height=460,
        margin={"l": 60, "r": 10, "t": 50, "b": 40},
    )
    return fig


def heatmap_grid(
    matrices: Sequence[Sequence[np.ndarray]],
    row_titles: Sequence[str],
    col_titles: Sequence[str],
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    colorbar_title: str = "",
    zmin: float | None = 0.0,
    zmax: float | None = 1.0,
) -> go.Figure:
    """Heatmaps in a grid (``matrices[row][col]``) on one colour scale (e.g. CKA before and
    after fine-tuning, linear and debiased); each panel's axes count from 0."""
    n_rows, n_cols = len(matrices), max(len(r) for r in matrices)
    fig = make_subplots(rows=n_rows, cols=n_cols, horizontal_spacing=0.06,
                        vertical_spacing=0.12 if n_rows > 1 else 0.0,
                        subplot_titles=[f"{c}<br>({r})" if n_rows > 1 else c
                                        for r in row_titles for c in col_titles])
    for i, row in enumerate(matrices):
        for j, matrix in enumerate(row):
            m = np.asarray(matrix, dtype=np.float64)
            fig.add_trace(go.Heatmap(z=_r(m, 3), x=np.arange(m.shape[1]), y=np.arange(m.shape[0]),
                                     coloraxis="coloraxis",
                                     hovertemplate=_heatmap_hover(x_title, y_title,
                                                                  colorbar_title)),
                          row=i + 1, col=j + 1)
            fig.update_xaxes(title_text=x_title if i == n_rows - 1 else "", row=i + 1,
                             col=j + 1)
            fig.update_yaxes(title_text=y_title if j == 0 else "", row=i + 1, col=j + 1)
    fig.update_layout(title=title, height=330 * n_rows + 80,
                      coloraxis={"colorscale": "Viridis", "cmin": zmin, "cmax": zmax,
                                 "colorbar": {"title": colorbar_title}},
                      margin={"l": 60, "r": 10, "t": 90, "b": 40})
    return fig


def side_by_side(
    panels: Sequence[np.ndarray],
    titles: Sequence[str],
    color: Sequence[np.ndarray],
    color_title: str,
    title: str = "",
) -> go.Figure:
    """2-D scatters next to each other, each with its own colour values (e.g. clusters)."""
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=list(titles))
    for i, (xy, c) in enumerate(zip(panels, color, strict=True)):
        fig.add_trace(
            go.Scatter(
                x=_r(xy[:, 0]),
                y=_r(xy[:, 1]),
                mode="markers",
                marker={
                    "size": 3,
                    "color": c,
                    "colorscale": "Viridis",
                    "showscale": i == 0,
                    "colorbar": {"title": color_title},
                },
                showlegend=False,
            ),
            row=1,
            col=i + 1,
        )
    fig.update_layout(title=title, height=420, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


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


def choice_layer_slider(
    coords: dict[str, Sequence[np.ndarray]],
    layer_names: Sequence[str],
    color: dict[str, np.ndarray],
    color_title: str,
    hover: dict[str, Sequence[str]] | None = None,
    title: str = "",
    background: str | None = None,
    choice_title: str = "item",
) -> go.Figure:
    """2-D scatter of one chosen item (dropdown) in one chosen layer (slider).

    ``coords[c][l]`` is the ``(n_c, 2)`` projection of item ``c`` (e.g. a target word's
    occurrences) in layer ``l``; ``color[c]`` gives the ``n_c`` categories of its points (e.g.
    senses), drawn as one trace per (item, category). The dropdown shows one item's traces; the
    slider re-points every trace's ``x``/``y`` at the chosen layer (a ``restyle`` that leaves
    visibility alone), so the two controls combine freely. The data are stored once per layer.
    Points of category ``background`` are drawn in light gray. In the book the dropdown is a
    native list labelled ``choice_title`` above the plot (:data:`SELECT_MENU`).
    """
    choices = list(coords)
    if not choices:
        raise ValueError("no items to show")
    n_layers = len(layer_names)
    for c in choices:
        if len(coords[c]) != n_layers:
            raise ValueError(f"{c!r} has {len(coords[c])} layers, expected {n_layers}")
    fig = go.Figure()
    masks = _add_choice_traces(fig, coords, color, hover, choices, background)
    owner_arr = np.array([c for c, _ in masks])
    buttons = [
        {
            "method": "update",
            "label": c,
            "args": [
                {"visible": (owner_arr == c).tolist()},
                {"legend.title.text": f"{color_title} of {c}"},
            ],
        }
        for c in choices
    ]
    steps = _choice_layer_steps(coords, layer_names, masks)
    fig.update_layout(
        title={"text": title, "y": 0.98, "yanchor": "top"},
        height=540,
        margin={"l": 10, "r": 10, "t": 100, "b": 10},
        xaxis={"showticklabels": False},
        yaxis={"showticklabels": False},
        legend={"itemsizing": "constant", "title": {"text": f"{color_title} of {choices[0]}"}},
        updatemenus=[
            {
                "name": choice_title,
                "buttons": buttons,
                "direction": "down",
                "x": 0.0,
                "xanchor": "left",
                "y": 1.02,
                "yanchor": "bottom",
                "showactive": True,
            }
        ],
        sliders=[{"active": 0, "steps": steps, "currentvalue": {"prefix": "layer "},
                  "pad": {"t": 30}}],
        meta=SELECT_MENU,
    )
    return fig


def _add_choice_traces(fig: go.Figure, coords: dict[str, Sequence[np.ndarray]],
                       color: dict[str, np.ndarray], hover: dict[str, Sequence[str]] | None,
                       choices: list[str], background: str | None
                       ) -> list[tuple[str, np.ndarray]]:
    """One first-layer trace per (item, category); each trace's item and row mask."""
    masks: list[tuple[str, np.ndarray]] = []
    for c in choices:
        cats = np.asarray(color[c]).astype(str)
        text = None if hover is None else np.asarray(hover[c])
        categories = sorted(pd.unique(cats))
        colors = _category_colors([cat for cat in categories if cat != background])
        if background is not None:
            colors[background] = SHADOW.replace("0.25", "0.6")
        for cat in categories:
            m = cats == cat
            xy = np.asarray(coords[c][0])[m]
            fig.add_trace(
                go.Scatter(
                    x=_r(xy[:, 0]),
                    y=_r(xy[:, 1]),
                    mode="markers",
                    marker={"size": 6, "color": colors[cat], "opacity": 0.8},
                    name=plain(cat),
                    text=None if text is None else text[m],
                    hoverinfo="text+name",
                    visible=c == choices[0],
                )
            )
            masks.append((c, m))
    return masks


def _choice_layer_steps(coords: dict[str, Sequence[np.ndarray]], layer_names: Sequence[str],
                        masks: list[tuple[str, np.ndarray]]) -> list[dict]:
    """Slider steps re-pointing every trace's ``x``/``y`` at one layer."""
    steps = []
    for li, name in enumerate(layer_names):
        xs = [_r(np.asarray(coords[c][li])[m][:, 0]).tolist() for c, m in masks]
        ys = [_r(np.asarray(coords[c][li])[m][:, 1]).tolist() for c, m in masks]
        steps.append({"method": "restyle", "label": str(name), "args": [{"x": xs, "y": ys}]})
    return steps


def layer_at_depth(n_layers: int, depth: float) -> int:
    """The layer of a model with ``n_layers`` hidden states nearest ``depth`` (0 is the
    embedding output, 1 the last layer): ``round(depth * (n_layers - 1))``."""
    return int(round(depth * (n_layers - 1)))


def models_side_by_side(
    coords: Mapping[str, Sequence[np.ndarray]],
    color: Mapping[str, np.ndarray],
    color_title: str,
    categorical: bool = False,
    hover: Mapping[str, Sequence[str]] | None = None,
    n_steps: int = 9,
    cols: int = 2,
    title: str = "",
    color_cap: float | None = COLOR_CAP_PERCENTILE,
) -> go.Figure:
    """Models in columns under one slider over depth, as seed 000 compared GPT-2 and BERT.

    ``coords[m][l]`` is the ``(n_m, 2)`` projection of model ``m``'s points in its layer
    ``l``; ``color[m]`` their colour values (categories when ``categorical``). Models differ in
    depth, so the slider runs over ``n_steps`` relative depths from 0 (embedding output) to 1
    (last layer) and shows each model's :func:`layer_at_depth`; each panel's title names the
    layer shown. A step re-points every trace's ``x``/``y`` and retitles the panels (an
    ``update``). Continuous colours share one scale across models, cut at the ``color_cap``
    percentile; categories share colours and legend entries across models, and a click on
    one shows it in every panel over the other categories in gray (:data:`GRAY_CONTEXT`).
    """
    models = list(coords)
    if not models:
        raise ValueError("no models to show")
    depths = np.linspace(0.0, 1.0, n_steps)
    rows = int(np.ceil(len(models) / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=models, horizontal_spacing=0.04,
                        vertical_spacing=0.1)
    every = np.concatenate([np.asarray(color[m]) for m in models])
    categories = sorted(pd.unique(every.astype(str))) if categorical else [None]
    colors = _category_colors([c for c in categories if c is not None])
    traces: list[tuple[str, np.ndarray]] = []
    in_legend: set[str | None] = set()
    for i, m in enumerate(models):
        values = np.asarray(color[m])
        text = None if hover is None else np.asarray(hover[m])
        for c in categories:
            mask = np.ones(len(values), bool) if c is None else values.astype(str) == c
            if not mask.any():
                continue
            xy = np.asarray(coords[m][0])[mask]
            marker = ({"size": 3, "color": colors[c]} if c is not None else
                      _continuous_marker(values, color_title, i == 0, 3, every, color_cap))
            fig.add_trace(go.Scatter(
                x=_r(xy[:, 0]), y=_r(xy[:, 1]), mode="markers", marker=marker,
                name=plain(c) if c is not None else m, legendgroup=str(c),
                showlegend=c is not None and c not in in_legend,
                text=None if text is None else text[mask],
                hoverinfo="text+name" if c is not None else "text"),
                row=i // cols + 1, col=i % cols + 1)
            traces.append((m, mask))
            in_legend.add(c)
    steps = []
    for depth in depths:
        shown = {m: layer_at_depth(len(coords[m]), depth) for m in models}
        xs = [_r(np.asarray(coords[m][shown[m]])[mask][:, 0]) for m, mask in traces]
        ys = [_r(np.asarray(coords[m][shown[m]])[mask][:, 1]) for m, mask in traces]
        titles = {f"annotations[{i}].text": f"{m}: layer {shown[m]} of {len(coords[m]) - 1}"
                  for i, m in enumerate(models)}
        steps.append({"method": "update", "label": f"{depth:.2f}",
                      "args": [{"x": xs, "y": ys}, titles]})
    for i, m in enumerate(models):
        fig.layout.annotations[i].text = f"{m}: layer 0 of {len(coords[m]) - 1}"
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    fig.update_layout(
        title=title, height=330 * rows + 150, margin={"l": 10, "r": 10, "t": 60, "b": 10},
        legend={"itemsizing": "constant", "title": color_title},
        sliders=[{"active": 0, "steps": steps, "pad": {"t": 20},
                  "currentvalue": {"prefix": "depth (layer / last layer): "}}],
        meta=GRAY_CONTEXT if categorical else None,
    )
    return fig
