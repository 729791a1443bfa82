"""Point-cloud figures per layer: small multiples (:func:`layer_grid`), the 3-D layer slider with
its point tiers and the slider that also chooses what colours the points.

2-D point clouds are SVG ``Scatter`` traces, not WebGL: a browser keeps about 16 WebGL
contexts per page and blanks the oldest beyond that, which a chapter's many small-multiple
figures exceeded; only the 3-D views use WebGL.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lmgeometry.report.plot_ranges import (
    NOTE_BACKGROUND,
    add_off_scale_note,
    cloud_ranges,
    off_scale_text,
    panel_axes,
    view_layout,
)
from lmgeometry.report.plot_style import (
    COLOR_CAP_PERCENTILE,
    GRAY_CONTEXT,
    SELECT_MENU,
    SHADOW,
    _category_colors,
    _continuous_marker,
    _r,
    plain,
    scene_axis_titles,
)

__all__ = [
    "GRID_POINTS",
    "SCENE_EYE",
    "layer_grid",
    "point_tiers",
    "default_point_counts",
    "layer_slider_3d",
    "choice_layer_slider",
]


#: How many points each panel of small multiples draws at most (:func:`layer_grid`).
GRID_POINTS = 500

#: The camera of a 3-D scene: plotly's default eye (1.25, 1.25, 1.25) put the cube's near
#: bottom corner and its tick labels below the scene (cut off above the slider); from 17%
#: farther and a little lower the whole cube fits.
SCENE_EYE = {"x": 1.6, "y": 1.6, "z": 1.15}

#: The layout names of a 3-D scene's axes, for the ranges a slider step sets.
SCENE_AXES = ("scene.xaxis", "scene.yaxis", "scene.zaxis")


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

    Each panel's axes cover the bulk of the points it draws
    (:func:`~lmgeometry.report.plot_ranges.axis_range`: a few points beyond a wide gap go off
    scale), and a note in its bottom-right corner says how many points are off scale.
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
        row, col = p // cols + 1, p % cols + 1
        _add_grid_panel(fig, p, row, col, xy, color, marker,
                        categorical, categories, colors, hover, shadow)
        axes = panel_axes(fig, row, col)
        fig.update_layout(view_layout(np.asarray(xy)[:, :2], axes,
                                      add_off_scale_note(fig, *axes)))
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
    re-points the traces' ``x``/``y``/``z`` at the chosen layer (an ``update`` that leaves
    visibility alone), so the plotted data change and only one layer's data are drawn at a
    time; the same step sets the scene's axis ranges to that layer's bulk (layers differ by
    orders of magnitude; :func:`~lmgeometry.report.plot_ranges.axis_range` over all ``n``
    points, whatever the dropdown shows) and a note in the bottom-right corner counts the
    points off scale ("3 of the 4000 points off scale"). The camera stands a little farther
    out than plotly's default (:data:`SCENE_EYE`), so the whole cube and its tick labels fit
    the scene. The dropdown shows ``point_counts`` points (nested seeded random subsets, see
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
    note = add_off_scale_note(fig)
    steps = [
        {
            "method": "update",
            "label": str(name),
            "args": [{axis: [_r(xyz[m][:, j]).tolist() for m in masks]
                      for j, axis in enumerate("xyz")},
                     view_layout(xyz, SCENE_AXES, note, n if len(counts) > 1 else None)],
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
        scene={**{f"{axis}axis": {"title": name} for axis, name in
                  zip("xyz", axis_titles or scene_axis_titles(title), strict=True)},
               "camera": {"eye": SCENE_EYE}},
        legend={"itemsizing": "constant", "title": color_title},
        meta=GRAY_CONTEXT if categorical else None,
    )
    fig.update_layout(steps[0]["args"][1])
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
    slider re-points every trace's ``x``/``y`` at the chosen layer (an ``update`` that leaves
    visibility alone), so the two controls combine freely. The data are stored once per layer.
    Points of category ``background`` are drawn in light gray. In the book the dropdown is a
    native list labelled ``choice_title`` above the plot (:data:`SELECT_MENU`).

    Each (item, layer) view is drawn at its own scale on one pair of axes without tick labels:
    its coordinates are mapped, axis by axis, so that the bulk of its points
    (:func:`~lmgeometry.report.plot_ranges.cloud_ranges`) spans 0 to 1, the axes' fixed range
    (:func:`_unit_view`). A projection's units mean nothing on their own, so nothing a reader
    can see changes, and neither control has to know the other's state. Points beyond the bulk
    keep their mapped coordinates outside the range (autoscale shows them); each item's note in
    the bottom-right corner, shown by the dropdown, says how many there are, its text set by
    the slider.
    """
    choices = list(coords)
    if not choices:
        raise ValueError("no items to show")
    n_layers = len(layer_names)
    for c in choices:
        if len(coords[c]) != n_layers:
            raise ValueError(f"{c!r} has {len(coords[c])} layers, expected {n_layers}")
    views = {c: [_unit_view(np.asarray(xy)[:, :2]) for xy in coords[c]] for c in choices}
    fig = go.Figure()
    masks = _add_choice_traces(fig, views, color, hover, choices, background)
    notes = [add_off_scale_note(fig, "xaxis", "yaxis") for _ in choices]
    owner_arr = np.array([c for c, _ in masks])
    buttons = [
        {
            "method": "update",
            "label": c,
            "args": [
                {"visible": (owner_arr == c).tolist()},
                {"legend.title.text": f"{color_title} of {c}",
                 **{f"annotations[{note}].visible": q == chosen
                    for q, note in enumerate(notes)}},
            ],
        }
        for chosen, c in enumerate(choices)
    ]
    steps = _choice_layer_steps(views, layer_names, masks, notes)
    unit = {"range": [0, 1], "showticklabels": False, "zeroline": False}
    fig.update_layout(
        title={"text": title, "y": 0.98, "yanchor": "top"},
        height=540,
        margin={"l": 10, "r": 10, "t": 100, "b": 10},
        legend={"itemsizing": "constant", "title": {"text": f"{color_title} of {choices[0]}"}},
        xaxis=unit,
        yaxis=unit,
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
    fig.update_layout(steps[0]["args"][1])
    fig.layout.annotations[notes[0]].visible = True
    return fig


def _unit_view(xy: np.ndarray) -> tuple[np.ndarray, str]:
    """``xy`` mapped per axis so that its :func:`cloud_ranges` span 0 to 1, and the text of
    its off-scale note (:func:`off_scale_text`)."""
    ranges, n_off = cloud_ranges(xy)
    low, high = np.array(ranges, dtype=np.float64).T
    return (np.asarray(xy, dtype=np.float64) - low) / (high - low), off_scale_text(n_off)


def _add_choice_traces(fig: go.Figure, views: dict[str, list[tuple[np.ndarray, str]]],
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
            xy = views[c][0][0][m]
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


def _choice_layer_steps(views: dict[str, list[tuple[np.ndarray, str]]],
                        layer_names: Sequence[str], masks: list[tuple[str, np.ndarray]],
                        notes: list[int]) -> list[dict]:
    """Slider steps re-pointing every trace's ``x``/``y`` at one layer and setting every
    item's note text: the dropdown owns the notes' visibility, so a note with nothing to say
    stays visible, empty and without its background (which plotly would draw as a speck)."""
    steps = []
    for li, name in enumerate(layer_names):
        xs = [_r(views[c][li][0][m][:, 0]).tolist() for c, m in masks]
        ys = [_r(views[c][li][0][m][:, 1]).tolist() for c, m in masks]
        layout = {}
        for q, c in enumerate(views):
            text = views[c][li][1]
            layout[f"annotations[{notes[q]}].text"] = text
            layout[f"annotations[{notes[q]}].bgcolor"] = (NOTE_BACKGROUND if text
                                                          else "rgba(0,0,0,0)")
        steps.append({"method": "update", "label": str(name),
                      "args": [{"x": xs, "y": ys}, layout]})
    return steps
