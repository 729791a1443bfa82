"""Panels that share a colour bar share its scale (issue 47, chapter 1's Figures 13 and 14).

Every figure builder of report/plot_*.py that draws more than one panel (or one panel per
slider step or menu item) with a continuous colour bar is built here on data whose panels
cover different ranges; every coloured trace of the figure must then carry the same
(cmin, cmax), or use one shared colour axis, so that a colour reads as the same value in every
panel. A builder added to the modules' public names must be listed here, as multi-panel with
a colour bar or not.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from lmgeometry.report import plot_clouds, plot_lines, plot_panels

RNG = np.random.default_rng(0)


def _scales(fig: go.Figure) -> set[tuple[float | None, float | None]]:
    """The (cmin, cmax) of every trace coloured by a continuous value, or of the shared
    colour axes the traces point at."""
    found = set()
    for trace in fig.data:
        if isinstance(trace, go.Heatmap):
            axis = trace.coloraxis
            found.add((fig.layout[axis].cmin, fig.layout[axis].cmax) if axis
                      else (trace.zmin, trace.zmax))
            continue
        marker = getattr(trace, "marker", None)
        if marker is None or marker.color is None or isinstance(marker.color, str):
            continue
        if marker.coloraxis:
            axis = fig.layout[marker.coloraxis]
            found.add((axis.cmin, axis.cmax))
        else:
            found.add((marker.cmin, marker.cmax))
    return found


def _panels(n: int, points: int = 50) -> list[np.ndarray]:
    return [RNG.normal(size=(points, 3)) + i for i in range(n)]


# each panel's colours cover a different range: a scale per panel would differ
COLORS = [np.arange(50.0) * (i + 1) for i in range(3)]

MULTI_PANEL = {
    "layer_grid": lambda: plot_clouds.layer_grid(
        _panels(3), ["0", "1", "2"], np.arange(50.0), "position", cols=3),
    "side_by_side": lambda: plot_panels.side_by_side(
        [p[:, :2] for p in _panels(3)], ["a", "b", "c"], COLORS, "position"),
    "models_side_by_side": lambda: plot_panels.models_side_by_side(
        {"m1": [p[:, :2] for p in _panels(3)], "m2": [p[:, :2] for p in _panels(5)]},
        {"m1": np.arange(50.0), "m2": np.arange(50.0) * 3}, "position"),
    "heatmap_grid": lambda: plot_panels.heatmap_grid(
        [[RNG.random((3, 3)), 5 * RNG.random((3, 3))]], ["r"], ["a", "b"]),
    "heatmap_menu": lambda: plot_panels.heatmap_menu(
        {"m1": pd.DataFrame(RNG.random((3, 3))), "m2": pd.DataFrame(5 * RNG.random((3, 3)))}),
    "layer_slider_3d": lambda: plot_clouds.layer_slider_3d(
        _panels(3), ["0", "1", "2"], np.arange(50.0), "position"),
}

#: Public builders that draw one panel, or no continuous colour bar.
ONE_SCALE_BY_CONSTRUCTION = {
    "heatmap", "choice_layer_slider", "lines_by_layer", "interval_points", "column_lines",
    "facet_lines", "dimension_profile",
}


def test_every_public_builder_is_classified():
    helpers = {"point_tiers", "default_point_counts", "layer_at_depth"}  # no figure
    public = {name for module in (plot_clouds, plot_lines, plot_panels)
              for name in module.__all__ if inspect.isfunction(getattr(module, name))}
    assert public - helpers == set(MULTI_PANEL) | ONE_SCALE_BY_CONSTRUCTION


@pytest.mark.parametrize("builder", sorted(MULTI_PANEL))
def test_panels_that_share_a_colour_bar_share_its_scale(builder):
    fig = MULTI_PANEL[builder]()
    scales = _scales(fig)
    assert len(scales) == 1, f"{builder}: colour scales {scales}"
    (low, high), = scales
    assert low is not None and high is not None and low < high
    # one colour bar shown, not one per panel
    shown = [t for t in fig.data if getattr(getattr(t, "marker", None), "showscale", None)]
    assert len(shown) <= 1


def test_side_by_side_puts_the_same_value_at_the_same_colour():
    """Chapter 1's split clusters: 37 first words at position 0 in one panel must be drawn
    with the bottom colour of the shared bar, not the colour of the panel's own range."""
    first = np.zeros(37)
    rest = np.arange(1.0, 80.0)
    fig = plot_panels.side_by_side([RNG.normal(size=(37, 2)), RNG.normal(size=(79, 2))],
                                   ["first words", "the rest"], [first, rest], "position")
    lows = {t.marker.cmin for t in fig.data}
    assert lows == {0.0}
    assert fig.data[0].marker.cmax == fig.data[1].marker.cmax >= 70


def test_the_depth_slider_opens_halfway_with_that_layer_drawn():
    """Chapter 1's key figure opens where a layer has context (not at layer 0): the active
    step, the points drawn and the panel titles all show the middle depth."""
    layers = [np.full((50, 2), float(layer)) + RNG.normal(size=(50, 2)) * 0.01
              for layer in range(7)]
    fig = plot_panels.models_side_by_side({"m": layers}, {"m": np.arange(50.0)}, "position")
    slider = fig.layout.sliders[0]
    assert slider.steps[slider.active].label == "0.50"
    assert np.allclose(np.asarray(fig.data[0].x), 3.0, atol=0.1)  # layer 3 of 0-6
    assert fig.layout.annotations[0].text.startswith("m: layer 3 of 6")
    first = plot_panels.models_side_by_side({"m": layers}, {"m": np.arange(50.0)}, "position",
                                            start=0.0)
    assert first.layout.sliders[0].active == 0 and np.allclose(np.asarray(first.data[0].x), 0,
                                                               atol=0.1)


def test_figures_and_tables_show_display_names():
    from lmgeometry.report.figures import figure_html, reader_table

    fig = plot_lines.lines_by_layer(pd.DataFrame({"model": ["minilm-l6"] * 2, "layer": [0, 1],
                                                  "v": [0.1, 0.2]}), "v",
                                    title="smollm2-135m, layer 13")
    page = figure_html(fig, "x")
    assert "SmolLM2, layer 13" in page and "smollm2-135m" not in page
    assert '"name":"MiniLM"' in page
    table = reader_table(pd.DataFrame({"model": ["gemma3-270m"], "mpnet-base": ["holds"],
                                       "path": ["/cache/gemma3-270m/x"]}))
    assert list(table.columns) == ["model", "MPNet", "path"]
    assert table["model"].tolist() == ["Gemma 3"] and table["path"].tolist() == [
        "/cache/gemma3-270m/x"]
