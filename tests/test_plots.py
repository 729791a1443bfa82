import numpy as np
import pandas as pd

from lmgeometry.plots import heatmap, layer_grid, layer_slider_3d, lines_by_layer


def test_layer_slider_shows_exactly_one_layer_per_step():
    rng = np.random.default_rng(0)
    coords = [rng.normal(size=(30, 3)) for _ in range(4)]
    color = np.array(["NOUN", "VERB", "DET"] * 10)
    fig = layer_slider_3d(coords, [f"L{i}" for i in range(4)], color, "UPOS", categorical=True)
    assert len(fig.data) == 4 * 3
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 4
    for li, step in enumerate(steps):
        visible = np.array(step.args[0]["visible"])
        assert visible.sum() == 3
        shown = [fig.data[i] for i in np.flatnonzero(visible)]
        assert sum(len(t.x) for t in shown) == 30
        np.testing.assert_allclose(
            np.sort(np.concatenate([t.x for t in shown])), np.sort(np.round(coords[li][:, 0], 3))
        )


def test_layer_grid_categorical_legend_groups_span_panels():
    xy = [np.random.default_rng(i).normal(size=(12, 2)) for i in range(3)]
    color = np.array(["a", "b", "c"] * 4)
    fig = layer_grid(xy, ["0", "1", "2"], color, "tag", categorical=True, shadow=True, cols=2)
    groups = {t.legendgroup for t in fig.data}
    assert groups == {"a", "b", "c", "shadow"}
    assert sum(t.showlegend for t in fig.data) == 4  # one legend entry per group


def test_lines_and_heatmap_build():
    frame = pd.DataFrame(
        {
            "model": ["m"] * 3 + ["n"] * 3,
            "layer": [0, 1, 2] * 2,
            "v": np.arange(6.0),
            "lo": np.arange(6.0) - 1,
            "hi": np.arange(6.0) + 1,
        }
    )
    fig = lines_by_layer(frame, "v", lower="lo", upper="hi", reference=0.5)
    assert len(fig.data) == 4
    fig = heatmap(np.ones((2, 3)), ["a", "b", "c"], [0, 1])
    assert fig.data[0].z.shape == (2, 3)
