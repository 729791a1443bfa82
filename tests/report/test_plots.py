import numpy as np
import pandas as pd
import pytest

from lmgeometry.report import plots
from lmgeometry.report.plots import (
    default_point_counts,
    heatmap,
    layer_grid,
    layer_slider_3d,
    lines_by_layer,
    point_tiers,
)


def _plotted(fig, step, visible):
    """(x, y, z) rows the figure draws after ``step``'s restyle with the given trace flags."""
    rows = []
    for i in np.flatnonzero(visible):
        x, y, z = (step.args[0][a][i] for a in "xyz")
        rows += list(zip(x, y, z, strict=True))
    return np.array(sorted(rows))


def test_layer_slider_restyles_every_point_to_the_chosen_layer():
    rng = np.random.default_rng(0)
    coords = [rng.normal(size=(40, 3)) for _ in range(4)]
    color = np.array(["NOUN", "VERB", "DET", "ADJ"] * 10)
    fig = layer_slider_3d(
        coords, [f"L{i}" for i in range(4)], color, "UPOS", categorical=True,
        point_counts=[10, 20, 40], initial_points=20,
    )
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["L0", "L1", "L2", "L3"]
    assert all(s.method == "update" for s in steps)
    everything = np.ones(len(fig.data), bool)
    for li, step in enumerate(steps):
        # all tiers together: exactly the layer's 40 points, whatever the dropdown shows
        expected = np.array(sorted(map(tuple, np.round(coords[li], 3))))
        np.testing.assert_allclose(_plotted(fig, step, everything), expected)
    # the initial traces hold layer 0, and the slider's layers differ
    assert steps[0].args[0]["x"] != steps[1].args[0]["x"]
    first = [list(t.x) for t in fig.data]
    assert first == steps[0].args[0]["x"]


def test_point_dropdown_shows_nested_subsets_of_the_asked_sizes():
    rng = np.random.default_rng(1)
    coords = [rng.normal(size=(40, 3)) for _ in range(2)]
    position = np.arange(40) % 7
    fig = layer_slider_3d(coords, ["0", "1"], position, "position", point_counts=[10, 20, 40],
                          initial_points=20)
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons] == ["10 points", "20 points", "40 points"]
    assert menu.active == 1
    shown = []
    for button in menu.buttons:
        visible = np.array(button.args[0]["visible"])
        sizes = [len(fig.data[i].x) for i in np.flatnonzero(visible)]
        shown.append(sum(sizes))
        rows = {tuple(r) for r in _plotted(fig, fig.layout.sliders[0].steps[0], visible)}
        assert rows <= {tuple(r) for r in np.round(coords[0], 3)}
    assert shown == [10, 20, 40]
    # the initial visibility is the 20-point choice; colours share one scale
    assert sum(len(t.x) for t in fig.data if t.visible) == 20
    assert {(t.marker.cmin, t.marker.cmax) for t in fig.data} == {(0.0, 6.0)}
    assert sum(bool(t.marker.showscale) for t in fig.data) == 1


def test_point_tiers_are_nested_seeded_random_subsets():
    tiers = point_tiers(100, [25, 50, 100], seed=3)
    assert np.bincount(tiers).tolist() == [25, 25, 50]
    np.testing.assert_array_equal(tiers, point_tiers(100, [25, 50, 100], seed=3))
    assert not np.array_equal(tiers, point_tiers(100, [25, 50, 100], seed=4))
    # a random subset, not the first rows
    assert np.flatnonzero(tiers == 0).max() > 25
    assert default_point_counts(1000) == [250, 500, 1000]
    assert default_point_counts(300) == [300]
    with pytest.raises(ValueError):
        point_tiers(100, [50, 40, 100])
    with pytest.raises(ValueError):
        point_tiers(100, [50, 90])


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
    assert fig.layout.xaxis.title.text == "layer"
    fig = lines_by_layer(frame.assign(depth=frame["layer"] / 2), "v", x="depth")
    assert fig.layout.xaxis.title.text == "depth (layer / last layer)"
    fig = heatmap(np.ones((2, 3)), ["a", "b", "c"], [0, 1])
    assert fig.data[0].z.shape == (2, 3)


def _two_models() -> dict[str, pd.DataFrame]:
    """A shallow model (3 layers x positions 0-2) and a deeper one (5 layers x 2 UPOS tags)
    with one empty cell; the smallest value is the shallow model's, the largest the deep one's."""
    shallow = pd.DataFrame([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [-0.25, 0.0, 0.12345]],
                           index=[0, 1, 2], columns=[0, 1, 2])
    deep = pd.DataFrame(np.linspace(0.0, 0.9, 10).reshape(5, 2), index=range(5),
                        columns=["NOUN", "DET"])
    deep.iloc[4, 1] = np.nan  # a group too small to average: a gap, not a colour
    return {"shallow": shallow, "deep": deep}


def test_heatmap_menu_has_one_trace_and_one_button_per_model_with_its_own_matrix() -> None:
    matrices = _two_models()
    fig = plots.heatmap_menu(matrices, x_title="position", y_title="layer",
                             colorbar_title="cosine", title="t")
    assert len(fig.data) == 1 and fig.data[0].type == "heatmap"
    menu = fig.layout.updatemenus[0]
    assert menu.name == "model" and fig.layout.meta == {"menu": "select"}
    assert [b.label for b in menu.buttons] == ["shallow", "deep"]
    for button, (name, m) in zip(menu.buttons, matrices.items(), strict=True):
        assert button.method == "restyle", name
        args = button.args[0]
        assert set(args) == {"z", "x", "y"}
        np.testing.assert_array_equal(args["z"][0], np.round(m.to_numpy(), 4))
        assert args["x"] == [[str(c) for c in m.columns]]
        assert args["y"] == [[str(i) for i in m.index]]
    # the figure opens on the first model
    np.testing.assert_array_equal(fig.data[0].z, [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6],
                                                  [-0.25, 0.0, 0.1234]])
    assert list(fig.data[0].x) == ["0", "1", "2"] and list(fig.data[0].y) == ["0", "1", "2"]
    # one colour scale over both models: the global minimum and maximum, gaps left out
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-0.25, 0.8)
    assert "layer %{y}" in fig.data[0].hovertemplate


def test_heatmap_menu_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="no matrices"):
        plots.heatmap_menu({})
    with pytest.raises(ValueError, match="'empty'.*leave that model out"):
        plots.heatmap_menu({"full": _two_models()["deep"], "empty": pd.DataFrame()})
    with pytest.raises(ValueError, match="'gaps'"):
        plots.heatmap_menu({"gaps": pd.DataFrame([[np.nan, np.nan]])})
    with pytest.raises(TypeError, match="pass a DataFrame"):
        plots.heatmap_menu({"array": np.ones((2, 2))})


def test_column_lines_and_facet_lines() -> None:
    from lmgeometry.report.plots import column_lines, facet_lines

    frame = pd.DataFrame({"model": ["m"] * 3 + ["n"] * 3, "depth": [0, 0.5, 1] * 2,
                          "a": np.arange(6.0), "b": -np.arange(6.0)})
    fig = column_lines(frame, {"a": "first", "b": "second"}, title="t")
    assert sorted(t.name for t in fig.data) == ["m / first", "m / second", "n / first",
                                               "n / second"]
    assert fig.layout.xaxis.title.text == "depth (layer / last layer)"
    fig = facet_lines(frame, "a", "model", x="depth", shared_y=False, log_y=True, y_title="A")
    assert len(fig.data) == 2 and [t.showlegend for t in fig.data] == [True, True]
    assert fig.layout.xaxis2.title.text == "depth (layer / last layer)"
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.title.text == "A"


def test_facet_lines_lay_out_many_panels_in_rows_with_wrapped_titles() -> None:
    from lmgeometry.report.plots import facet_lines

    names = ["anisotropy baseline (mean cosine of random words)", "b", "c", "d", "e"]
    frame = pd.DataFrame({"model": "m", "measure": np.repeat(names, 2), "layer": [0, 1] * 5,
                          "v": np.arange(10.0)})
    fig = facet_lines(frame.iloc[:8], "v", "measure")  # four panels: 2 x 2
    axes = {(t.xaxis, t.yaxis) for t in fig.data}
    assert len(axes) == 4
    assert fig.layout.xaxis3.domain[0] == fig.layout.xaxis.domain[0]  # left column, row 2
    assert fig.layout.yaxis3.domain[1] < fig.layout.yaxis.domain[0]  # below row 1
    assert fig.layout.xaxis3.title.text == "layer" and not fig.layout.xaxis.title.text
    assert fig.layout.yaxis3.title.text == "v"
    title = fig.layout.annotations[0].text
    assert title.replace("<br>", " ") == names[0]
    assert max(len(part) for part in title.split("<br>")) <= 27  # half of 54 characters
    fig = facet_lines(frame, "v", "measure")  # five panels: rows of three
    assert len({t.xaxis for t in fig.data}) == 5
    assert fig.layout.xaxis4.domain[0] == fig.layout.xaxis.domain[0]
    assert max(len(p) for p in fig.layout.annotations[0].text.split("<br>")) <= 18


def test_facet_lines_name_each_line_once_with_one_colour_and_no_bands() -> None:
    from lmgeometry.report.plots import facet_lines

    rows = [("enc", "intact", 0.1), ("dec", "intact", 0.5), ("dec", "reset", 0.4)]
    frame = pd.DataFrame([{"model": m, "run": r, "layer": i, "v": v + i, "lo": v, "hi": v + 3}
                          for m, r, v in rows for i in range(3)])
    fig = facet_lines(frame, "v", "model", color="run", lower="lo", upper="hi")
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(lines) == 3 and len(bands) == 3
    assert not any(t.showlegend for t in bands)
    assert sorted(t.name for t in lines if t.showlegend) == ["intact", "reset"]
    colour = {}
    for t in lines:
        assert colour.setdefault(t.name, t.line.color) == t.line.color


def test_interval_points_draw_error_bars_per_colour():
    import pandas as pd

    from lmgeometry.report import plots

    frame = pd.DataFrame({"model": ["a", "a", "b"], "measure": ["x", "y", "x"],
                          "v": [0.5, 0.2, 0.7], "lo": [0.4, 0.1, 0.6], "hi": [0.6, 0.4, 0.9]})
    fig = plots.interval_points(frame, "v", "lo", "hi", x="measure", reference=0.0)
    assert [t.name for t in fig.data] == ["a", "b"] and fig.data[0].mode == "markers"
    assert list(fig.data[0].error_y.array) == [0.1, 0.2]
    assert list(fig.data[1].error_y.arrayminus) == [0.1]


def test_layer_at_depth_spans_first_to_last_layer():
    assert [plots.layer_at_depth(7, d) for d in (0.0, 0.5, 1.0)] == [0, 3, 6]
    assert [plots.layer_at_depth(31, d) for d in (0.0, 0.5, 1.0)] == [0, 15, 30]


def test_color_bounds_cut_at_the_percentile():
    values = np.r_[np.arange(100), 10_000]
    low, high = plots.color_bounds(values, cap=95)
    assert low == 0 and high == pytest.approx(np.percentile(values, 95))
    assert plots.color_bounds(values, cap=None) == (0, 10_000)


def test_models_side_by_side_one_slider_shows_each_model_at_the_same_depth():
    rng = np.random.default_rng(0)
    coords = {"deep": [rng.normal(size=(20, 2)) + i for i in range(31)],
              "shallow": [rng.normal(size=(15, 2)) - i for i in range(7)]}
    color = {"deep": np.array(["NOUN", "VERB"] * 10), "shallow": np.array(["NOUN"] * 15)}
    fig = plots.models_side_by_side(coords, color, "UPOS", categorical=True, n_steps=3)
    # one trace per (model, category); a category has one legend entry across models
    assert [(t.name, t.showlegend) for t in fig.data] == [
        ("NOUN", True), ("VERB", True), ("NOUN", False)]
    assert fig.data[0].marker.color == fig.data[2].marker.color
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["0.00", "0.50", "1.00"]
    last = steps[-1].args
    np.testing.assert_allclose(last[0]["x"][0], np.round(coords["deep"][30][0::2, 0], 3))
    np.testing.assert_allclose(last[0]["y"][2], np.round(coords["shallow"][6][:, 1], 3))
    assert {k: v for k, v in steps[1].args[1].items() if k.endswith("].text")} == {
        "annotations[0].text": "deep: layer 15 of 30",
        "annotations[1].text": "shallow: layer 3 of 6",
        "annotations[2].text": "", "annotations[3].text": ""}
    assert fig.layout.annotations[0].text == "deep: layer 15 of 30"  # opens halfway


def test_continuous_colours_share_one_scale_capped_at_the_percentile():
    coords = {m: [np.zeros((50, 2))] * 3 for m in ("a", "b")}
    color = {"a": np.arange(50), "b": np.arange(50) * 10}
    fig = plots.models_side_by_side(coords, color, "position")
    every = np.r_[color["a"], color["b"]]
    assert [(t.marker.cmin, t.marker.cmax) for t in fig.data] == [
        (0, pytest.approx(np.percentile(every, 95)))] * 2
    assert [t.marker.showscale for t in fig.data] == [True, False]
    assert "95th pct" in fig.data[0].marker.colorbar.title.text


def test_legends_and_axes_read_as_words_but_model_names_stay():
    assert plots.label("mean_cosine_centred_raw") == "mean cosine centred raw"
    assert plots.label("mean_cosine_centered") == "mean cosine, centred"  # a LABELS entry
    assert plots.label("sigma_1") == "σ₁" and plots.label("selfsim") == "SelfSim"
    frame = pd.DataFrame({"model": ["my_model"] * 2, "layer": [0, 1], "v": [0.1, 0.2],
                          "measure": ["mean_cosine"] * 2})
    fig = lines_by_layer(frame, "v", dash="measure")
    assert [t.name for t in fig.data] == ["my_model / mean cosine"]
    assert fig.layout.xaxis.title.text == "layer"


def test_small_multiples_draw_the_same_subset_in_every_panel():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(1000, 2))
    panels = [base + i for i in range(3)]  # the same points moved: panel i is panel 0 + i
    tags = np.array(["A"] * 998 + ["RARE"] * 2)
    fig = layer_grid(panels, ["0", "1", "2"], tags, "tag", categorical=True, max_points=600)
    per_panel = [[t for t in fig.data if t.xaxis == ax] for ax in ("x", "x2", "x3")]
    assert [sum(len(t.x) for t in traces) for traces in per_panel] == [600] * 3
    np.testing.assert_allclose(np.asarray(per_panel[2][0].x), np.asarray(per_panel[0][0].x) + 2,
                               atol=1e-3)
    # every category keeps its legend entry (and colour) even if none of its points is drawn
    assert [t.name for t in per_panel[0]] == ["A", "RARE"]
    everything = layer_grid(panels, ["0", "1", "2"], tags, "tag", categorical=True,
                            max_points=None)
    assert sum(len(t.x) for t in everything.data if t.xaxis == "x") == 1000


def test_token_names_reach_plotly_escaped() -> None:
    from lmgeometry.report import plots

    assert plots.plain("<s> (first token)") == "&lt;s&gt; (first token)"
    frame = pd.DataFrame({"model": ["m"] * 2, "token": ["<bos> (first token)"] * 2,
                          "layer": [0, 1], "v": [1.0, 2.0]})
    fig = plots.lines_by_layer(frame, "v", color="model", dash="token")
    assert fig.data[0].name == "m / &lt;bos&gt; (first token)"
    assert "<" not in plots.facet_lines(frame, "v", "token").layout.annotations[0].text


def test_a_model_has_one_colour_in_every_figure() -> None:
    """The registry's models take the palette in registry order; every figure that colours
    by model uses that map, whatever the order or subset of models it draws."""
    assert [plots.model_color(m) for m in plots.MODEL_ORDER] == plots.PALETTE[
        :len(plots.MODEL_ORDER)]
    assert plots.model_color("gpt2") == plots.model_color("gpt2")  # a stable colour
    assert plots.model_color("gpt2") not in plots.PALETTE[:len(plots.MODEL_ORDER)]
    first, second = plots.MODEL_ORDER[1], plots.MODEL_ORDER[3]
    frame = pd.DataFrame({"model": [second] * 2 + [first] * 2, "layer": [0, 1] * 2,
                          "v": [0.1, 0.2, 0.3, 0.4], "lo": [0.0] * 4, "hi": [0.5] * 4,
                          "measure": ["a", "b"] * 2})
    lines = lines_by_layer(frame, "v")
    points = plots.interval_points(frame[frame["model"] == first], "v", "lo", "hi", x="measure")
    faceted = plots.facet_lines(frame, "v", "measure")
    colour = {t.name: t.line.color for t in lines.data}
    # legends show the display names (MPNet, Gemma 3), coloured by the alias's colour
    assert colour == {plots.plain(first): plots.model_color(first),
                      plots.plain(second): plots.model_color(second)}
    assert plots.plain("gemma3-270m") == "Gemma 3" and plots.label("none") == "all words"
    assert points.data[0].marker.color == colour[plots.plain(first)]
    assert {t.name: t.line.color for t in faceted.data} == colour
    # names outside the registry whose checksum colours collide still get distinct colours
    assert plots.model_color("pair-causal") == plots.model_color("pair-causal-untied")
    runs = pd.DataFrame({"model": ["pair-mlm", "pair-causal", "pair-causal-untied", first],
                         "layer": [0] * 4, "v": [1.0, 2.0, 3.0, 4.0]})
    drawn = {t.name: t.line.color for t in lines_by_layer(runs, "v").data}
    assert len(set(drawn.values())) == 4
    assert drawn[plots.plain(first)] == plots.model_color(first)  # the registry keeps its own
    assert drawn["pair: causal LM"] == plots.model_color("pair-causal")  # the first keeps its own


def test_3d_axes_are_titled_by_the_projections_components() -> None:
    coords = [np.random.default_rng(0).normal(size=(5, 3))]
    pca = layer_slider_3d(coords, ["0"], np.arange(5.0), "c", title="m: 3-D PCA per layer")
    assert [pca.layout.scene[a].title.text for a in ("xaxis", "yaxis", "zaxis")] == [
        "PC 1", "PC 2", "PC 3"]
    umap = layer_slider_3d(coords, ["0"], np.arange(5.0), "c", title="m: 3-D UMAP of layers")
    assert umap.layout.scene.xaxis.title.text == "UMAP 1"
    toy = layer_slider_3d(coords, ["0"], np.arange(5.0), "c", title="Points on a sphere")
    assert toy.layout.scene.zaxis.title.text == "z"
    named = layer_slider_3d(coords, ["0"], np.arange(5.0), "c", axis_titles=("a", "b", "c"))
    assert named.layout.scene.yaxis.title.text == "b"


def test_the_page_script_lays_figures_out_for_a_phone() -> None:
    """The narrow-screen layout is done by the page script at display time: panels in fewer
    columns with titles that fit, the legend under the x-axis titles and inside the width,
    colour bars horizontal at the foot of the figure."""
    from lmgeometry.report.figure_fallback import figures_js

    script = figures_js()
    for part in ("function fitPhone", "function gridFit", "function reflow",
                 "function clearLegend", "function legendInside", "function phoneBars",
                 '"legend.yref"', '"legend.entrywidthmode"', "MIN_TITLE_FONT",
                 'window.addEventListener("resize"'):
        assert part in script, part


def test_choice_layer_slider_dropdown_and_slider_touch_different_properties() -> None:
    from lmgeometry.report.plots import choice_layer_slider

    coords = {"bank": [np.zeros((3, 2)), np.ones((3, 2))],
              "run": [np.full((2, 2), 2.0), np.full((2, 2), 3.0)]}
    color = {"bank": np.array(["river", "money", "river"]), "run": np.array(["go", "go"])}
    fig = choice_layer_slider(coords, ["0", "6"], color, "sense", title="t", background="river")
    assert [t.name for t in fig.data] == ["money", "river", "go"]
    assert fig.data[1].marker.color == "rgba(160,160,160,0.6)"
    assert [t.visible for t in fig.data] == [True, True, False]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["bank", "run"]
    assert buttons[1].args[0] == {"visible": [False, False, True]}
    steps = fig.layout.sliders[0].steps
    assert [st.label for st in steps] == ["0", "6"]
    assert set(steps[1].args[0]) == {"x", "y"}  # the slider leaves visibility alone
    # each view at its own scale: equal points sit in the middle of the fixed 0..1 range
    assert steps[1].args[0]["x"] == [[0.5], [0.5, 0.5], [0.5, 0.5]]
    with pytest.raises(ValueError, match="layers"):
        choice_layer_slider({"bank": [np.zeros((3, 2))]}, ["0", "6"], color, "sense")


def test_side_by_side_draws_categories_with_a_legend_not_a_colour_bar() -> None:
    from lmgeometry.report.plots import side_by_side

    xy = np.arange(12.0).reshape(6, 2)
    labels = np.array([0, 1, 0, 1, 1, 1])
    fig = side_by_side([xy, xy[::-1]], ["before", "after"], [labels, labels[::-1]], "label",
                       categories={0: "negative", 1: "positive"})
    assert [t.name for t in fig.data] == ["negative", "positive"] * 2
    assert [t.showlegend for t in fig.data] == [True, True, False, False]
    assert fig.data[0].marker.color == fig.data[2].marker.color != fig.data[1].marker.color
    assert list(fig.data[1].x) == [2.0, 6.0, 8.0, 10.0]  # the positive rows of the first panel
    assert list(fig.data[3].x) == [10.0, 8.0, 6.0, 2.0]
    assert not any(t.marker.showscale for t in fig.data)
    assert fig.layout.legend.title.text == "label"
    continuous = side_by_side([xy], ["a"], [labels], "position")
    assert continuous.data[0].marker.showscale and continuous.data[0].showlegend is False


def _note(fig, xaxis: str) -> str:
    """The off-scale note of the panel whose x axis is ``xaxis`` ("x", "x2"), as shown."""
    notes = [a for a in fig.layout.annotations if a.xref == f"{xaxis} domain"]
    assert len(notes) == 1
    return notes[0].text if notes[0].visible else ""


def _far(n: int = 600, seed: int = 0, far: tuple[float, ...] = (7874.0, 8088.0)) -> np.ndarray:
    """A dense cloud whose first points sit at x = ``far`` (chapter 1's SmolLM2 panel)."""
    xy = np.random.default_rng(seed).normal(0.0, 20.0, size=(n, 2))
    xy[:len(far), 0] = far
    return xy


def test_two_far_points_go_off_scale_with_a_note_in_the_panel_corner() -> None:
    clean = np.random.default_rng(1).normal(size=(600, 2))
    fig = plots.side_by_side([_far(), clean], ["cluster 0", "cluster 1"],
                             [np.arange(600)] * 2, "position")
    high = fig.layout.xaxis.range[1]
    assert 40 < high < 200  # the cloud's bulk, not 8088
    assert fig.layout.xaxis.range[0] < _far()[2:, 0].min()
    assert _note(fig, "x") == "2 points off scale" and _note(fig, "x2") == ""
    note = next(a for a in fig.layout.annotations if a.xref == "x domain")
    # inside the bottom-right corner, referenced to the panel's axes, not a paper-referenced
    # annotation at a panel's top edge (which the page script reads as the panel's title)
    assert (note.x, note.y, note.xanchor, note.yanchor, note.yref) == (
        1, 0, "right", "bottom", "y domain")
    # the data are not clipped: the far points keep their true coordinates
    assert sorted(fig.data[0].x)[-2:] == [7874.0, 8088.0]


def test_a_far_cluster_of_five_percent_stays_on_scale_and_no_note_is_shown() -> None:
    xy = np.random.default_rng(2).normal(size=(1000, 2))
    xy[:50] += [300.0, 0.0]  # a decoder's first-token cluster, 5% of the points
    fig = layer_grid([xy, xy * 3], ["0", "1"], np.arange(1000.0), "position",
                     max_points=None)
    for xaxis, yaxis, scale in (("xaxis", "yaxis", 1), ("xaxis2", "yaxis2", 3)):
        low, high = fig.layout[xaxis].range
        assert low < scale * xy[:, 0].min() and high > scale * xy[:, 0].max()
        assert fig.layout[yaxis].range[1] > scale * xy[:, 1].max()
    assert _note(fig, "x") == _note(fig, "x2") == ""


def test_small_multiples_fit_the_points_they_draw_not_the_whole_data() -> None:
    """Under a point budget only the drawn far points can be off scale: the note counts
    those, and the range of a panel that draws none of them fits the cloud alone."""
    counts = []
    for seed in range(12):
        fig = layer_grid([_far(1000)], ["0"], np.arange(1000.0), "position", max_points=300,
                         seed=seed)
        drawn = int((np.asarray(fig.data[0].x) > 1000).sum())
        note = _note(fig, "x")
        assert note == ("" if drawn == 0 else f"{drawn} point{'s' * (drawn > 1)} off scale")
        assert fig.layout.xaxis.range[1] < 200
        counts.append(drawn)
    assert {0, 1} <= set(counts)  # panels that drew neither or one of the two far points


def test_slider_steps_set_each_layers_own_ranges_and_note() -> None:
    rng = np.random.default_rng(3)
    coords = [rng.normal(size=(400, 3)) * 10.0 ** k for k in range(3)]
    coords[1][:2] = [[1e5, 0.0, 0.0], [0.0, 0.0, -1e5]]  # two far points in layer 1
    fig = layer_slider_3d(coords, ["0", "1", "2"], np.arange(400.0), "c",
                          point_counts=[200, 400])
    steps = fig.layout.sliders[0].steps
    for k, step in enumerate(steps):
        layout = step.args[1]
        for j, axis in enumerate(("scene.xaxis", "scene.yaxis", "scene.zaxis")):
            low, high = layout[f"{axis}.range"]
            bulk = coords[k][2:, j]
            assert low < bulk.min() and high > bulk.max()
            assert high - low < 3 * np.ptp(bulk)  # a layer's scale, not another layer's
    texts = [step.args[1]["annotations[0].text"] for step in steps]
    assert texts == ["", "2 of the 400 points off scale", ""]
    assert [step.args[1]["annotations[0].visible"] for step in steps] == [False, True, False]
    # the figure opens on step 0's ranges; the note is not where a panel title would be
    assert list(fig.layout.scene.xaxis.range) == steps[0].args[1]["scene.xaxis.range"]
    assert (fig.layout.annotations[0].x, fig.layout.annotations[0].y) == (1, 0)


def test_models_side_by_side_steps_fit_each_models_panel() -> None:
    rng = np.random.default_rng(4)
    coords = {"a": [rng.normal(size=(300, 2)) * 10.0 ** k for k in range(3)],
              "b": [rng.normal(size=(200, 2)) for _ in range(5)]}
    coords["b"][4][0] = [1e4, 0.0]  # one far point in b's last layer
    fig = plots.models_side_by_side(coords, {"a": np.arange(300), "b": np.arange(200)},
                                    "position", n_steps=3)
    steps = fig.layout.sliders[0].steps
    for step, layer_a, layer_b in zip(steps, (0, 1, 2), (0, 2, 4), strict=True):
        layout = step.args[1]
        assert layout["xaxis.range"][1] == pytest.approx(
            coords["a"][layer_a][:, 0].max(), rel=0.5)
        assert layout["xaxis2.range"][1] < 10
        note = "1 point off scale" if layer_b == 4 else ""
        assert (layout["annotations[3].text"], layout["annotations[3].visible"]) == (
            note, bool(note))


def test_choice_layer_slider_draws_each_view_at_its_own_scale_on_one_pair_of_axes() -> None:
    from lmgeometry.report.plots import choice_layer_slider

    rng = np.random.default_rng(5)
    coords = {"bank": [rng.normal(size=(200, 2)), rng.normal(size=(200, 2)) * 100.0],
              "run": [rng.normal(size=(150, 2)) * 1000.0, rng.normal(size=(150, 2))]}
    coords["bank"][1][0] = [1e6, 0.0]
    color = {"bank": np.array(["river", "money"] * 100), "run": np.array(["go"] * 150)}
    fig = choice_layer_slider(coords, ["0", "6"], color, "sense")
    # one pair of axes, fixed at 0..1, whatever the items' scales (1 to 1000)
    assert {(t.xaxis, t.yaxis) for t in fig.data} == {(None, None)}
    assert "xaxis2" not in fig.layout.to_plotly_json()
    assert list(fig.layout.xaxis.range) == [0, 1] == list(fig.layout.yaxis.range)
    steps = fig.layout.sliders[0].steps
    for step in steps:
        for xs in step.args[0]["x"]:
            assert np.mean((np.array(xs) >= 0) & (np.array(xs) <= 1)) > 0.97
    # the far point of bank's layer 6 stays in the data, off scale, and the note says so
    far = np.concatenate([np.array(x) for x in steps[1].args[0]["x"][:2]])
    assert far.max() > 100
    assert [s.args[1]["annotations[0].text"] for s in steps] == ["", "1 point off scale"]
    assert [s.args[1]["annotations[0].bgcolor"] for s in steps] == [
        "rgba(0,0,0,0)", plots.NOTE_BACKGROUND]
    assert all("annotations[0].visible" not in s.args[1] for s in steps)
    # the mapping is affine per axis: distances along an axis keep their ratios
    money = coords["bank"][0][color["bank"] == "money"]
    drawn = np.array(steps[0].args[0]["x"][0])
    scale = (drawn[1] - drawn[0]) / (money[1, 0] - money[0, 0])
    assert np.isclose(drawn[2] - drawn[0], scale * (money[2, 0] - money[0, 0]), atol=2e-3)
    # the dropdown shows the chosen item's note and hides the others'
    run = fig.layout.updatemenus[0].buttons[1].args[1]
    assert (run["annotations[0].visible"], run["annotations[1].visible"]) == (False, True)
    assert not any(k.startswith(("xaxis", "yaxis")) for k in run)


def test_a_control_facet_names_the_seeds_protocol_not_none() -> None:
    """Issue 49: a panel titled "none" (the control column's value) beside "first word
    excluded"."""
    import pandas as pd

    from lmgeometry.report.plots import facet_lines

    frame = pd.DataFrame({"model": ["m"] * 4, "layer": [0, 1, 0, 1], "depth": [0, 1, 0, 1],
                          "control": ["none", "none", "first word excluded",
                                      "first word excluded"], "value": [1.0, 2.0, 1.5, 2.5]})
    fig = facet_lines(frame, "value", "control")
    titles = [a.text for a in fig.layout.annotations]
    assert "none" not in titles
    assert titles[0].replace("<br>", " ") == "all words (the seed's protocol)"
    assert titles[1].replace("<br>", " ") == "first word excluded"
