"""Panel figures: heatmaps (one, in a grid, or one per model behind a menu) and figures set
side by side, per model or per layer at a chosen depth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lmgeometry.report.plot_ranges import add_off_scale_note, panel_axes, view_layout
from lmgeometry.report.plot_style import (
    COLOR_CAP_PERCENTILE,
    GRAY_CONTEXT,
    SELECT_MENU,
    _category_colors,
    _continuous_marker,
    _r,
    plain,
)

__all__ = [
    "heatmap",
    "heatmap_grid",
    "heatmap_menu",
    "side_by_side",
    "layer_at_depth",
    "models_side_by_side",
]


def _heatmap_hover(x_title: str, y_title: str, z_title: str) -> str:
    """Hover text of a heatmap cell in words: "layer (tuned) 15, layer 6: CKA 0.057"."""
    return (f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>"
            f"{z_title or 'value'}: %{{z:.3f}}<extra></extra>")


def _heatmap_trace(matrix: np.ndarray, x_labels: Sequence, y_labels: Sequence,
                   x_title: str, y_title: str, colorbar_title: str, **style) -> go.Heatmap:
    """The book's heatmap trace: values to 4 decimals, labels as text, Viridis, hover in
    words (:func:`_heatmap_hover`); ``style`` adds trace properties (``zmin``, ``zmax``)."""
    return go.Heatmap(
        z=_r(matrix, 4),
        x=list(map(str, x_labels)),
        y=list(map(str, y_labels)),
        colorscale="Viridis",
        colorbar={"title": colorbar_title},
        hovertemplate=_heatmap_hover(x_title, y_title, colorbar_title),
        **style,
    )


def _heatmap_figure(trace: go.Heatmap, title: str, x_title: str, y_title: str,
                    top: int = 50, **layout) -> go.Figure:
    """A figure of one heatmap trace with the book's size and margins (``top`` px above)."""
    fig = go.Figure(trace)
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        height=460,
        margin={"l": 60, "r": 10, "t": top, "b": 40},
        **layout,
    )
    return fig


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
    return _heatmap_figure(
        _heatmap_trace(matrix, x_labels, y_labels, x_title, y_title, colorbar_title),
        title, x_title, y_title)


def _menu_matrices(matrices: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """``matrices`` checked: at least one, each a DataFrame with rows, columns and a value."""
    if not matrices:
        raise ValueError("heatmap_menu: no matrices to show; pass one DataFrame per model")
    for name, m in matrices.items():
        if not isinstance(m, pd.DataFrame):
            raise TypeError(f"heatmap_menu: the matrix of {name!r} is a {type(m).__name__}; "
                            "pass a DataFrame (rows on the y axis, columns on the x axis)")
        if m.empty or not np.isfinite(m.to_numpy(dtype=np.float64)).any():
            raise ValueError(f"heatmap_menu: the matrix of {name!r} has no values "
                             f"(shape {m.shape}); leave that model out of the menu")
    return dict(matrices)


def heatmap_menu(
    matrices: Mapping[str, pd.DataFrame],
    *,
    x_title: str = "",
    y_title: str = "",
    colorbar_title: str = "",
    title: str = "",
    menu_name: str = "model",
) -> go.Figure:
    """One heatmap whose dropdown chooses the model (or other item) it shows.

    Parameters
    ----------
    matrices
        Item (a model) -> its matrix: the index on the y axis (layers), the columns on the
        x axis (positions, UPOS tags). Items may differ in rows and columns (models of
        different depths): each keeps its own.
    x_title, y_title, colorbar_title, title
        As for :func:`heatmap`.
    menu_name
        What the dropdown chooses; in the book it labels the native list drawn above the
        plot (:data:`~lmgeometry.report.plot_style.SELECT_MENU`).

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap trace drawing the first item, and a dropdown with one ``restyle``
        button per item that sets the trace's ``z``, ``x`` and ``y`` to that item's. The
        colour scale is shared: ``zmin`` and ``zmax`` are the smallest and largest values
        over every matrix, so a colour means the same value whichever item is shown.
    """
    matrices = _menu_matrices(matrices)
    shown = {name: (_r(m.to_numpy(dtype=np.float64), 4), list(map(str, m.columns)),
                    list(map(str, m.index))) for name, m in matrices.items()}
    every = np.concatenate([z.ravel() for z, _, _ in shown.values()])
    buttons = [{"method": "restyle", "label": str(name),
                "args": [{"z": [z], "x": [x], "y": [y]}]} for name, (z, x, y) in shown.items()]
    z, x, y = next(iter(shown.values()))
    trace = _heatmap_trace(z, x, y, x_title, y_title, colorbar_title,
                           zmin=float(np.nanmin(every)), zmax=float(np.nanmax(every)))
    return _heatmap_figure(
        trace, title, x_title, y_title, top=100, meta=SELECT_MENU,
        updatemenus=[{"name": menu_name, "buttons": buttons, "active": 0, "direction": "down",
                      "x": 0.0, "xanchor": "left", "y": 1.02, "yanchor": "bottom",
                      "showactive": True}])


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
    categories: Mapping[object, str] | None = None,
    color_cap: float | None = COLOR_CAP_PERCENTILE,
) -> go.Figure:
    """2-D scatters next to each other, each with its own colour values.

    Colour values are continuous (one colour bar titled ``color_title``, one scale for every
    panel: the same value is the same colour in each, the scale cut at the ``color_cap``
    percentile of all of them), or, with
    ``categories`` (value -> name, e.g. ``{0: "negative", 1: "positive"}``), categorical: one
    trace per category in every panel, a legend titled ``color_title`` naming each category
    once, the same colour in every panel. Each panel's axes cover the bulk of its points
    (:func:`~lmgeometry.report.plot_ranges.axis_range`), and a note in its bottom-right corner
    counts the points off scale.
    """
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=list(titles))
    every = np.concatenate([np.asarray(c, dtype=np.float64).ravel() for c in color]) \
        if categories is None else None
    for i, (xy, c) in enumerate(zip(panels, color, strict=True)):
        xy, c = np.asarray(xy), np.asarray(c)
        axes = panel_axes(fig, 1, i + 1)
        fig.update_layout(view_layout(xy[:, :2], axes, add_off_scale_note(fig, *axes)))
        if categories is None:
            fig.add_trace(go.Scatter(
                x=_r(xy[:, 0]), y=_r(xy[:, 1]), mode="markers", showlegend=False,
                marker=_continuous_marker(c, color_title, i == 0, 3, every, color_cap)),
                row=1, col=i + 1)
            continue
        colors = _category_colors(list(categories))
        for value, name in categories.items():
            keep = c == value
            fig.add_trace(go.Scatter(
                x=_r(xy[keep, 0]), y=_r(xy[keep, 1]), mode="markers", name=plain(name),
                legendgroup=str(value), showlegend=i == 0,
                marker={"size": 4, "color": colors[value]}), row=1, col=i + 1)
    if categories is not None:
        fig.update_layout(legend_title_text=plain(color_title))
    fig.update_layout(title=title, height=420, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


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
    start: float = 0.5,
) -> go.Figure:
    """Models in columns under one slider over depth, as seed 000 compared GPT-2 and BERT.

    ``coords[m][l]`` is the ``(n_m, 2)`` projection of model ``m``'s points in its layer
    ``l``; ``color[m]`` their colour values (categories when ``categorical``). Models differ in
    depth, so the slider runs over ``n_steps`` relative depths from 0 (embedding output) to 1
    (last layer) and shows each model's :func:`layer_at_depth`; each panel's title names the
    layer shown. A step re-points every trace's ``x``/``y``, retitles the panels and sets each
    panel's axis ranges to the bulk of the layer shown
    (:func:`~lmgeometry.report.plot_ranges.axis_range`), with a note in its bottom-right corner
    that counts the points off scale (an ``update``). Continuous colours share one scale
    across models, cut at the ``color_cap`` percentile; categories share colours and legend
    entries across models, and a click on one shows it in every panel over the other
    categories in gray (:data:`GRAY_CONTEXT`). The figure opens at the step nearest the
    depth ``start`` (default halfway, where a layer has context and is not yet the output's:
    layer 0 shows no finding, the input embeddings having seen no context).
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
    axes = [panel_axes(fig, i // cols + 1, i % cols + 1) for i in range(len(models))]
    notes = [add_off_scale_note(fig, *a) for a in axes]
    steps = []
    for depth in depths:
        shown = {m: layer_at_depth(len(coords[m]), depth) for m in models}
        xs = [_r(np.asarray(coords[m][shown[m]])[mask][:, 0]) for m, mask in traces]
        ys = [_r(np.asarray(coords[m][shown[m]])[mask][:, 1]) for m, mask in traces]
        layout = {f"annotations[{i}].text": f"{m}: layer {shown[m]} of {len(coords[m]) - 1}"
                  for i, m in enumerate(models)}
        for i, m in enumerate(models):
            layout.update(view_layout(np.asarray(coords[m][shown[m]])[:, :2], axes[i],
                                      notes[i]))
        steps.append({"method": "update", "label": f"{depth:.2f}",
                      "args": [{"x": xs, "y": ys}, layout]})
    active = int(np.argmin(np.abs(depths - start)))
    for k, trace_ in enumerate(fig.data):
        trace_.x, trace_.y = steps[active]["args"][0]["x"][k], steps[active]["args"][0]["y"][k]
    fig.update_layout(steps[active]["args"][1])
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    fig.update_layout(
        title=title, height=330 * rows + 150, margin={"l": 10, "r": 10, "t": 60, "b": 10},
        legend={"itemsizing": "constant", "title": color_title},
        sliders=[{"active": active, "steps": steps, "pad": {"t": 20},
                  "currentvalue": {"prefix": "depth (layer / last layer): "}}],
        meta=GRAY_CONTEXT if categorical else None,
    )
    return fig
