"""Plotly figure builders shared by the chapters: one import path for the builders of
:mod:`~lmgeometry.report.plot_style` (palette, labels, colour scales),
:mod:`~lmgeometry.report.plot_clouds` (point clouds per layer),
:mod:`~lmgeometry.report.plot_lines` (measures over layers),
:mod:`~lmgeometry.report.plot_panels` (heatmaps, a heatmap per model behind a menu,
side-by-side panels) and
:mod:`~lmgeometry.report.plot_ranges` (axis ranges that leave far outliers off scale, with a
note that counts them, in every point-cloud figure).

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

from lmgeometry.report.plot_clouds import (
    GRID_POINTS,
    SCENE_EYE,
    choice_layer_slider,
    default_point_counts,
    layer_grid,
    layer_slider_3d,
    point_tiers,
)
from lmgeometry.report.plot_lines import (
    DEPTH_TITLE,
    column_lines,
    dimension_profile,
    facet_lines,
    interval_points,
    lines_by_layer,
)
from lmgeometry.report.plot_panels import (
    heatmap,
    heatmap_grid,
    heatmap_menu,
    layer_at_depth,
    models_side_by_side,
    side_by_side,
)
from lmgeometry.report.plot_ranges import NOTE_BACKGROUND, axis_range, off_scale_text
from lmgeometry.report.plot_style import (
    COLOR_CAP_PERCENTILE,
    GRAY_CONTEXT,
    LABELS,
    MODEL_ORDER,
    PALETTE,
    SELECT_MENU,
    SHADOW,
    color_bounds,
    label,
    model_color,
    plain,
    scene_axis_titles,
)

__all__ = [
    "axis_range",
    "choice_layer_slider",
    "column_lines",
    "default_point_counts",
    "DEPTH_TITLE",
    "dimension_profile",
    "facet_lines",
    "heatmap",
    "heatmap_grid",
    "heatmap_menu",
    "GRID_POINTS",
    "SCENE_EYE",
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
    "NOTE_BACKGROUND",
    "off_scale_text",
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
