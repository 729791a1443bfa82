"""Figures and tables as the book shows them: compact encoding, numbers, captions."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from lmgeometry.report import figures
from lmgeometry.report.figure_encoding import (
    MIN_PACKED_CHARS,
    _encode,
    _from_bdata,
    pack_spec,
    unpack_spec,
)


def _decode(value, shared, page=None):
    """Python twin of lmgFigure's decoder (_ext/lmgeometry_figures.js)."""
    if isinstance(value, list):
        return [_decode(v, shared, page) for v in value]
    if not isinstance(value, dict):
        return value
    if "$ref" in value:
        return _decode(shared[value["$ref"]], shared, page)
    if "$page" in value:
        return page[value["$page"]]
    if "$b" in value:
        bits = np.unpackbits(np.frombuffer(base64.b64decode(value["$b"]), dtype=np.uint8))
        return [bool(b) for b in bits[:value["n"]]]
    flat = None
    if "$q2" in value:
        q = np.frombuffer(base64.b64decode(value["$q2"]), dtype="<i2").astype(np.float64)
        flat = value["lo"] + (q + 32768) * (value["hi"] - value["lo"]) / 65535
    for kind, dtype in (("$f4", "<f4"), ("$i1", "<i1"), ("$i2", "<i2"), ("$i4", "<i4")):
        if kind in value:
            flat = np.frombuffer(base64.b64decode(value[kind]), dtype=dtype)
    if flat is not None:
        if "parts" in value:
            return np.split(flat, np.cumsum(value["parts"])[:-1])
        return flat.reshape(value.get("shape", flat.shape))
    return {k: _decode(v, shared, page) for k, v in value.items()}


def _payload(html: str) -> dict:
    """The spec a figure's script hands to lmgFigure, unpacked where it travels packed."""
    return unpack_spec(json.loads(
        re.search(r'lmgFigure\("[^"]+", (.*)\);</script>', html).group(1)))


def test_numeric_arrays_travel_typed_and_decode_to_the_same_values():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=500), rng.normal(size=500)
    line = rng.normal(size=62)
    fig = go.Figure([go.Scatter(x=x, y=y, marker={"color": np.arange(500)}, mode="markers"),
                     go.Scatter(y=line)])
    spec = figures.encode_figure(fig)
    cloud = spec["data"][0]
    assert set(cloud["x"]) == {"$q2", "lo", "hi"} and set(cloud["marker"]["color"]) == {"$i2"}
    assert set(spec["data"][1]["y"]) == {"$f4"}  # a line's few values: float32
    assert figures.MIN_QUANTISED > 2 * 31  # a 31-layer line with its band stays float32
    back = _decode(spec["data"], spec["shared"])
    # 16-bit steps: at most half a step, (max - min) / 131070, from the value
    for decoded, original in ((back[0]["x"], x), (back[0]["y"], y)):
        half_step = (original.max() - original.min()) / 131070
        assert np.abs(decoded - original).max() <= half_step * 1.0001
    np.testing.assert_allclose(back[1]["y"], line, rtol=1e-6)
    np.testing.assert_array_equal(back[0]["marker"]["color"], np.arange(500))
    # 2.7 characters a coordinate against about 20 for decimal float64 text
    assert len(json.dumps(spec)) < 0.25 * len(fig.to_json(engine="json")) + 8000


def test_a_small_point_cloud_is_quantised_and_a_line_of_as_few_values_is_not():
    """A small-multiple panel holds a few dozen points of one class: a cloud all the same
    (16-bit steps), while a line across as many layers keeps float32 (its hover shows its
    values)."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=20), rng.normal(size=20)
    fig = go.Figure([go.Scatter(x=x, y=y, mode="markers"), go.Scatter(x=x, y=y, mode="lines"),
                     go.Scatter3d(x=x, y=y, z=x + y, mode="markers")])
    spec = figures.encode_figure(fig)
    assert set(spec["data"][0]["x"]) == {"$q2", "lo", "hi"}
    assert set(spec["data"][1]["x"]) == {"$f4"}
    assert all(set(spec["data"][2][a]) == {"$q2", "lo", "hi"} for a in "xyz")
    back = _decode(spec["data"], spec["shared"])
    half_step = np.ptp(y) / 131070 * 1.0001
    assert np.abs(back[0]["y"] - y).max() <= half_step
    np.testing.assert_allclose(back[1]["y"], y, rtol=1e-6)
    # with a log axis nothing is quantised (a linear step would flatten the small values)
    fig.update_yaxes(type="log")
    assert set(figures.encode_figure(fig)["data"][0]["y"]) == {"$f4"}


def test_a_large_figure_travels_compressed_and_unpacks_to_the_same_spec():
    """Hover text makes a figure large: it travels gzip-compressed with the types it draws
    listed in the clear (the book picks the page's plotly bundle from them); the same figure
    gives the same bytes, and a small figure stays readable JSON."""
    rng = np.random.default_rng(4)
    words = [f"sentence {i} about the word bank, in context" for i in range(2000)]
    fig = go.Figure(go.Scatter3d(x=rng.normal(size=2000), y=rng.normal(size=2000),
                                 z=rng.normal(size=2000), text=words, mode="markers"))
    spec = figures.encode_figure(fig)
    html = figures.figure_html(fig, "big")
    raw = json.loads(re.search(r'lmgFigure\("[^"]+", (.*)\);</script>', html).group(1))
    assert set(raw) == {"$gz", "types"} and "scatter3d" in raw["types"]
    assert unpack_spec(raw) == json.loads(json.dumps(spec))
    assert len(raw["$gz"]) < 0.6 * len(json.dumps(spec))
    assert figures.figure_html(fig, "big") == html  # no time stamp in the gzip header
    small = {"data": [], "layout": {}, "shared": []}
    assert pack_spec(small) is small and len(json.dumps(spec)) >= MIN_PACKED_CHARS


def test_repeated_arrays_are_sent_once_and_short_ones_inline():
    hover = [f"word {i}" for i in range(300)]
    fig = make_subplots(rows=1, cols=3)
    for col in (1, 2, 3):
        fig.add_trace(go.Scatter(x=np.arange(300) * col, y=np.arange(300.0), text=hover,
                                 name="ab"), row=1, col=col)
    spec = figures.encode_figure(fig)
    assert [t["text"] for t in spec["data"]] == [{"$ref": 0}] * 3
    assert spec["shared"][0] == hover
    back = _decode(spec["data"], spec["shared"])
    assert [list(t["text"]) for t in back] == [hover] * 3
    # what every trace shares travels once
    assert spec["common"] == {"name": "ab", "type": "scatter"}
    assert all("type" not in t for t in spec["data"])
    np.testing.assert_array_equal(back[2]["x"], np.arange(300) * 3)


def test_an_array_repeated_in_the_layout_is_sent_once_too():
    """A menu button that restores a trace's data carries the same array: one copy travels,
    though the layout also holds the flag of the template left out."""
    y = np.linspace(0.0, 1.0, 200) ** 2
    button = {"method": "restyle", "label": "back", "args": [{"y": [y]}]}
    spec = figures.encode_figure(go.Figure(go.Scatter(y=y), layout={"updatemenus": [
        {"buttons": [button, {**button, "label": "again"}]}]}))
    assert spec["layout"]["$template"] is True
    buttons = spec["layout"]["updatemenus"][0]["buttons"]
    assert spec["data"][0]["y"] == buttons[0]["args"][0]["y"][0] == buttons[1]["args"][0][
        "y"][0] == {"$ref": 0}
    back = _decode(spec, spec["shared"])
    np.testing.assert_allclose(back["layout"]["updatemenus"][0]["buttons"][1]["args"][0]["y"][0],
                               y, atol=1 / 65535)


def test_long_hover_text_is_sent_once_per_page():
    hover = [f"a sentence about word {i}" for i in range(100)]
    short = ["x", "y"]

    def figure(text: list[str]) -> go.Figure:
        return go.Figure([go.Scatter(x=np.arange(len(text)), y=np.arange(len(text)),
                                     text=text)])

    page: set[str] = set()
    first = _payload(figures.figure_html(figure(hover), "one", page=page))
    second = _payload(figures.figure_html(figure(hover), "two", page=page))
    [key] = first["page"]  # defined by the first figure of the page ...
    assert first["page"][key] == hover and page == {key}
    assert "page" not in second  # ... and only referred to by the next
    assert first["data"][0]["text"] == second["data"][0]["text"] == {"$page": key}
    assert _decode(second["data"], second["shared"], first["page"])[0]["text"] == hover
    alone = _payload(figures.figure_html(figure(hover), "three"))  # no page: self-contained
    assert alone["data"][0]["text"] == hover and "page" not in alone
    inline = _payload(figures.figure_html(figure(short), "four", page=page))
    assert inline["data"][0]["text"] == short and page == {key}  # short lists stay inline


def test_slider_arguments_frames_and_2d_arrays_are_encoded():
    z = np.arange(12.0).reshape(3, 4) / 7
    steps = [{"method": "restyle", "label": str(i),
              "args": [{"x": [list(np.linspace(0, i, 10))]}]} for i in range(3)]
    fig = go.Figure(go.Heatmap(z=z), frames=[go.Frame(data=[go.Scatter(y=np.ones(9))])])
    fig.update_layout(sliders=[{"steps": steps}])
    spec = figures.encode_figure(fig)
    back = _decode(spec, spec["shared"])
    np.testing.assert_allclose(back["data"][0]["z"], z, rtol=1e-6)
    assert back["data"][0]["z"].shape == (3, 4)
    np.testing.assert_allclose(back["layout"]["sliders"][0]["steps"][2]["args"][0]["x"][0],
                               np.linspace(0, 2, 10), rtol=1e-6)
    np.testing.assert_array_equal(back["frames"][0]["data"][0]["y"], np.ones(9))


def test_menu_visibility_travels_as_bits():
    """A button's visibility list (one boolean per trace) travels as packed bits; short lists
    and lists mixing types stay as they are."""
    visible = [i % 3 == 0 for i in range(45)]
    buttons = [{"method": "update", "label": "a", "args": [{"visible": visible}]},
               {"method": "update", "label": "b",
                "args": [{"visible": [True, False, True]}]},
               {"method": "update", "label": "c",
                "args": [{"visible": [True, "legendonly"] * 5}]}]
    fig = go.Figure([go.Scatter(y=[i, i + 1]) for i in range(45)])
    fig.update_layout(updatemenus=[{"buttons": buttons}])
    spec = figures.encode_figure(fig)
    encoded = spec["layout"]["updatemenus"][0]["buttons"]
    assert set(encoded[0]["args"][0]["visible"]) == {"$b", "n"}
    assert len(encoded[0]["args"][0]["visible"]["$b"]) == 8  # 45 bits: 6 bytes, 8 base64
    back = _decode(spec, spec["shared"])["layout"]["updatemenus"][0]["buttons"]
    assert back[0]["args"][0]["visible"] == visible
    assert back[1]["args"][0]["visible"] == [True, False, True]
    assert back[2]["args"][0]["visible"] == [True, "legendonly"] * 5
    assert _decode(_encode(np.array([False, True] * 5)), []) == [False, True] * 5


def test_heatmap_menu_buttons_keep_each_model_s_matrix_in_the_compact_form():
    """Each button of a heatmap's model menu decodes to that model's z, x and y; the first
    model's matrix, drawn and in its button, is sent once."""
    from lmgeometry.report.plots import heatmap_menu

    rng = np.random.default_rng(2)
    matrices = {"deep": pd.DataFrame(rng.uniform(size=(13, 21))),  # 16-bit steps
                "shallow": pd.DataFrame(rng.uniform(size=(7, 5)), columns=list("abcde"))}
    matrices["shallow"].iloc[0, 0] = np.nan  # float32 with a gap
    spec = figures.encode_figure(heatmap_menu(matrices))
    back = _decode(spec, spec["shared"])
    buttons = back["layout"]["updatemenus"][0]["buttons"]
    for button, m in zip(buttons, matrices.values(), strict=True):
        z = np.round(m.to_numpy(), 4)
        np.testing.assert_allclose(button["args"][0]["z"][0], z, atol=1 / 65535)
        assert button["args"][0]["x"] == [[str(c) for c in m.columns]]
        assert button["args"][0]["y"] == [[str(i) for i in m.index]]
    assert np.isnan(buttons[1]["args"][0]["z"][0][0, 0])
    assert spec["data"][0]["z"] == spec["layout"]["updatemenus"][0]["buttons"][0]["args"][0][
        "z"][0] == {"$ref": 0}


def test_a_slider_steps_arrays_travel_packed_in_one_spec():
    rng = np.random.default_rng(1)
    per_trace = [rng.normal(size=n) for n in (40, 3, 0, 90)]  # categories of very unequal size
    steps = [{"method": "restyle", "label": "1",
              "args": [{"x": [list(a) for a in per_trace]}]}]
    spec = figures.encode_figure(go.Figure(layout={"sliders": [{"steps": steps}]}))
    packed = spec["layout"]["sliders"][0]["steps"][0]["args"][0]["x"]
    assert packed["parts"] == [40, 3, 0, 90] and "$q2" in packed
    back = _decode(packed, [])
    half_step = np.ptp(np.concatenate(per_trace)) / 131070 * 1.0001
    for decoded, original in zip(back, per_trace, strict=True):
        assert len(decoded) == len(original)
        assert np.abs(decoded - original).max(initial=0) <= half_step * 1.01
    # short bounds: a few significant digits, just outside the range
    assert len(repr(packed["lo"])) <= 12 and packed["lo"] <= min(a.min() for a in per_trace[:2])


def test_default_template_is_left_out_and_flagged():
    spec = figures.encode_figure(go.Figure(go.Bar(x=[1, 2], y=[3, 4])))
    assert "template" not in spec["layout"] and spec["layout"]["$template"] is True
    plain = figures.encode_figure(go.Figure(go.Bar(x=[1, 2], y=[3, 4]),
                                            layout={"template": "simple_white"}))
    assert "template" in plain["layout"] and "$template" not in plain["layout"]


def test_title_becomes_a_numbered_caption_and_leaves_the_plot():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[1, 2]), layout={"title": "Cosine by layer"})
    html = figures.figure_html(fig, "cosines", number=4)
    assert '<span class="lmg-label">Figure 4.</span> Cosine by layer</figcaption>' in html
    assert "title" not in _payload(html)["layout"]
    assert fig.layout.title.text == "Cosine by layer"  # the caller's figure is left alone
    own = figures.figure_html(fig, "cosines", caption="Mean cosine <i>per</i> layer", number=1)
    assert "Figure 1.</span> Mean cosine <i>per</i> layer" in own


def test_wrapped_panel_titles_keep_their_room_above_the_plot():
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=["one<br>two<br>three", "four"])
    fig.update_layout(title="Two panels", margin_t=120)
    assert _payload(figures.figure_html(fig, "panels"))["layout"]["margin"]["t"] == 8 + 3 * 20
    fig.update_layout(margin_t=30)
    bundle = figures.plotly_bundle(fig, "Two panels")["layout"]
    assert bundle["margin"]["t"] == 40 + 18 + 8 + 3 * 20  # title line, then the panel titles
    assert bundle["title"]["yanchor"] == "top" and bundle["title"]["y"] == 1
    plain = go.Figure(go.Scatter(x=[1], y=[1]), layout={"title": "t", "margin_t": 120})
    assert _payload(figures.figure_html(plain, "plain"))["layout"]["margin"]["t"] == 40


def test_show_numbers_figures_in_order(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(
        obj["text/html"] if raw else obj.data))
    figures.reset_numbering()
    for name in ("a", "b"):
        figures.show(go.Figure(go.Scatter(x=[1], y=[1])), name, caption=name)
    figures.show_table(pd.DataFrame({"x": [1]}), "t")
    assert ["Figure 1.", "Figure 2.", "Table 1."] == [
        re.search(r'lmg-label">([^<]+)<', s).group(1) for s in shown]


def test_wide_grids_keep_no_minimum_width_so_a_phone_reflows_them():
    """A grid of small multiples fits the column: on a phone the page's script lays it out in
    fewer columns (issue 47: a 720 px minimum width cut layer 3 in half on a phone)."""
    wide = make_subplots(rows=1, cols=6)
    for col in range(1, 7):
        wide.add_trace(go.Scatter(x=[1], y=[1]), row=1, col=col)
    assert figures._grid_columns(wide) >= figures.WIDE_GRID_COLUMNS
    assert "min-width" not in figures.figure_html(wide, "w")
    assert 'style="height:450px;width:100%"' in figures.figure_html(wide, "w")


def test_table_has_no_row_numbers_readable_headers_and_formatted_numbers():
    table = pd.DataFrame({"model": ["a<b", "c"], "mean_cosine": [0.123456, np.nan],
                          "n_words": [12000, 7], "ok": [True, False]}).iloc[[1, 0]]
    html = figures.table_html(table, "Cosines.", number=2)
    headers = re.findall(r"<th>([^<]*)</th>", html)
    assert headers == ["model", "mean cosine", "n words", "ok"]
    cells = re.findall(r'<td class="(\w+)">([^<]*)</td>', html)
    assert cells == [("txt", "c"), ("num", "–"), ("num", "7"), ("txt", "no"),
                     ("txt", "a&lt;b"), ("num", "0.123"), ("num", "12,000"), ("txt", "yes")]
    assert "Table 2.</span> Cosines." in html and "<details>" not in html


def test_named_index_becomes_columns_and_long_tables_fold():
    wide = pd.DataFrame({("cos", "a"): range(30), ("cos", "b"): range(30)},
                        index=pd.Index(range(30), name="layer"))
    html = figures.table_html(wide, "Long.", fold_rows=20)
    assert re.findall(r"<th>([^<]*)</th>", html) == ["layer", "cos / a", "cos / b"]
    assert "<details><summary>Show the 30 rows</summary>" in html
    pivot = pd.DataFrame({"x": [1.5]}, index=pd.Index(["minilm"]))
    assert re.findall(r"<th>([^<]*)</th>", figures.table_html(pivot, "P.")) == ["", "x"]


def test_float_columns_show_the_decimals_their_values_need():
    table = pd.DataFrame({"items": [999.0, 3000.0], "accuracy": [91.3, 76.25],
                          "cosine": [0.5, 0.123456], "share": [np.nan, 0.25]})
    cells = re.findall(r'<td class="num">([^<]*)</td>', figures.table_html(table, "T."))
    assert cells == ["999", "91.30", "0.500", "–", "3,000", "76.25", "0.123", "0.25"]


def test_figures_with_a_log_axis_keep_float32():
    counts = np.geomspace(1, 1e6, 500)
    fig = go.Figure(go.Scatter(x=np.arange(1, 501), y=counts))
    assert "$q2" in figures.encode_figure(fig)["data"][0]["y"]
    fig.update_yaxes(type="log")
    spec = figures.encode_figure(fig)["data"][0]["y"]
    assert "$f4" in spec
    np.testing.assert_allclose(_decode(spec, []), counts, rtol=1e-6)  # 1, 2, 3 stay apart
    scene = go.Figure(go.Scatter3d(x=counts, y=counts * 2, z=counts * 3),
                      layout={"scene": {"zaxis": {"type": "log"}}})
    assert "$f4" in figures.encode_figure(scene)["data"][0]["z"]


def test_constant_and_non_finite_clouds():
    flat = _encode(np.full(300, 2.5))
    assert _decode(flat, []).tolist() == [2.5] * 300
    gaps = np.r_[np.arange(299.0), np.nan]
    spec = _encode(gaps)
    assert "$f4" in spec  # NaN (a gap) cannot be quantised: float32 keeps it
    assert np.isnan(_decode(spec, [])[-1])


@pytest.mark.parametrize("values", [np.array([True] * 5), np.arange(5.0),
                                    np.array(["a"] * 10), np.array([2**40] * 10)])
def test_arrays_that_are_not_sent_as_typed_stay_plain(values):
    encoded = _encode(values)
    assert isinstance(encoded, list) and len(encoded) == len(values)


def test_table_cells_link_where_asked_and_anchors_match_the_figures():
    import pandas as pd

    from lmgeometry.report.figures import figure_anchor, figure_html, table_html

    table = pd.DataFrame({"claim": ["a <b>", "c"], "value": [1.0, 2.0]})
    html_text = table_html(table, "cap", links={"claim": ["01_x.html#fig-1", None]})
    assert '<a href="01_x.html#fig-1">a &lt;b&gt;</a>' in html_text
    assert html_text.count("<a ") == 1
    with pytest.raises(ValueError, match="links for the 2 rows"):
        table_html(table, "cap", links={"claim": ["x"]})
    assert figure_anchor("fig-ch03-anisotropy") == "fig-ch03-anisotropy"  # a MyST label
    import plotly.graph_objects as go

    drawn = figure_html(go.Figure(), "silhouette", "caption", 1)
    assert f'id="{figure_anchor("silhouette")}"' in drawn


def _bundle_array(spec: dict) -> np.ndarray:
    assert set(spec) <= {"dtype", "bdata", "shape"}
    return _from_bdata(spec)


def _slider_figure() -> go.Figure:
    """A point cloud with hover text and a slider re-pointing it, like a chapter's layer view."""
    rng = np.random.default_rng(1)
    layers = [rng.normal(size=(300, 2)) for _ in range(3)]
    fig = go.Figure([go.Scatter(x=layers[0][:, 0], y=layers[0][:, 1], mode="markers",
                                text=[f"word {i}" for i in range(300)],
                                marker={"color": np.arange(300)})])
    fig.update_layout(title="Layers", sliders=[{"steps": [
        {"method": "restyle", "label": str(i),
         "args": [{"x": [xy[:, 0].round(3).tolist()], "y": [xy[:, 1].round(3)],
                   "visible": [True]}]} for i, xy in enumerate(layers)]}])
    return fig


def test_figure_output_carries_plotly_mime_bundle(monkeypatch):
    """Viewers without the book's script draw plotly's bundle; the book's HTML is unchanged."""
    shown = []
    monkeypatch.setattr("IPython.display.display",
                        lambda obj, raw=False: shown.append((obj, raw)))
    figures.reset_numbering()
    fig = _slider_figure()
    figures.show(fig, "layers", caption="A cloud <i>per</i> layer &amp; its words.")
    [(data, raw)] = shown
    assert raw and set(data) == {"text/html", figures.PLOTLY_MIME, "text/plain"}
    assert figures.PLOTLY_MIME == "application/vnd.plotly.v1+json"
    figures.reset_numbering()
    # the kernel's first figure carries the decoder and plotly.js for other viewers, which
    # the book takes out again (report/figure_fallback.py)
    from lmgeometry.report.figure_fallback import bootstrap_html, strip_bootstrap

    assert data["text/html"].startswith(bootstrap_html())
    assert strip_bootstrap(data["text/html"]) == figures.figure_html(
        fig, "layers", "A cloud <i>per</i> layer &amp; its words.", 1, set())
    assert data["text/plain"] == "Figure 1. A cloud per layer & its words."
    bundle = data[figures.PLOTLY_MIME]
    assert json.loads(json.dumps(bundle)) == bundle  # plain JSON, as nbformat stores it
    assert bundle["layout"]["title"]["text"] == "Figure 1. A cloud per layer & its words."
    [cloud] = bundle["data"]
    # float32 typed arrays, the narrowest integer type, the hover text as it was
    np.testing.assert_array_equal(_bundle_array(cloud["x"]), fig.data[0].x.astype(np.float32))
    assert cloud["x"]["dtype"] == "f4" and cloud["marker"]["color"]["dtype"] == "i2"
    np.testing.assert_array_equal(_bundle_array(cloud["marker"]["color"]), np.arange(300))
    assert cloud["text"] == list(fig.data[0].text)
    # the slider's per-trace coordinates are typed too; a list of flags stays a list
    step = bundle["layout"]["sliders"][0]["steps"][2]["args"][0]
    original = fig.layout.sliders[0].steps[2].args[0]
    np.testing.assert_array_equal(_bundle_array(step["x"][0]),
                                  np.float32(original["x"][0]))
    np.testing.assert_array_equal(_bundle_array(step["y"][0]),
                                  np.float32(original["y"][0]))
    assert step["visible"] == [True]
    # plotly's template, with the defaults of the trace types drawn only
    assert set(bundle["layout"]["template"]["data"]) == {"scatter"}
    assert bundle["layout"]["template"]["layout"] == (
        pio.templates[pio.templates.default].to_plotly_json()["layout"])
    # deterministic: nbval and the committed notebooks see the same bytes for the same figure
    assert json.dumps(figures.plotly_bundle(fig, "t")) == json.dumps(
        figures.plotly_bundle(_slider_figure(), "t"))
    assert fig.layout.title.text == "Layers"  # the caller's figure is left alone


def test_plotly_bundle_keeps_plotly_s_own_form():
    """A heatmap's rows travel as one 2-D typed array; plotly accepts the bundle as a figure."""
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Heatmap(z=[[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]), row=1, col=1)
    fig.add_trace(go.Scatter(x=[1, 2], y=[0.25, 0.5], name="short"), row=1, col=2)
    bundle = figures.plotly_bundle(fig)
    heat, line = bundle["data"]
    assert heat["z"]["dtype"] == "f4" and heat["z"]["shape"] == "2, 3"
    assert line["x"] == [1, 2]  # below MIN_BUNDLE_TYPED values: as plotly gives them
    assert set(bundle["layout"]["template"]["data"]) == {"heatmap", "scatter"}
    go.Figure(bundle)  # plotly's validators accept it
    np.testing.assert_array_equal(_bundle_array(heat["z"]), [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]])
    assert "title" not in bundle["layout"] or not bundle["layout"]["title"].get("text")


def test_long_titles_wrap_in_the_plotly_bundle():
    words = " ".join(f"word{i}" for i in range(100))
    title = figures.plotly_bundle(go.Figure(), words)["layout"]["title"]["text"]
    lines = title.split("<br>")
    assert len(lines) == figures.TITLE_LINES
    assert all(len(line) <= figures.TITLE_WIDTH for line in lines)
    assert lines[-1].endswith("[...]")


def test_book_config_never_renders_the_plotly_bundle():
    """The book keeps the compact HTML only: its pages do not grow by the bundle."""
    import yaml
    from myst_nb.core.render import get_mime_priority

    root = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "_config.yml").read_text())["sphinx"]["config"]
    overrides = [tuple(o) for o in config["nb_mime_priority_overrides"]]
    for builder in ("html", "latex", "readthedocs"):
        assert figures.PLOTLY_MIME not in get_mime_priority(builder, overrides)
    # of a figure's output, myst-nb picks the HTML: the first of its types in the priority
    output = figures.figure_bundle(go.Figure(go.Scatter(x=[1], y=[1])), "one", number=1)
    assert [m for m in get_mime_priority("html", overrides) if m in output][0] == "text/html"


def test_figure_output_is_a_valid_notebook_output():
    import nbformat

    data = figures.figure_bundle(_slider_figure(), "layers", number=2)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "show(fig)", outputs=[nbformat.v4.new_output("display_data", data=data)])])
    nbformat.validate(nb)
    back = nbformat.reads(nbformat.writes(nb), as_version=4)
    assert back.cells[0].outputs[0].data[figures.PLOTLY_MIME] == data[figures.PLOTLY_MIME]


def test_table_cells_take_classes_and_titles_and_the_table_an_id():
    table = pd.DataFrame({"claim": ["a", "b"], "m": ["holds: 1", "x"]})
    page = figures.table_html(table, "cap", classes={"m": ["lmg-holds", None]},
                              titles={"claim": ["rho <of> a", None]}, anchor="verdicts")
    assert '<figure class="lmg-table-figure" id="verdicts">' in page
    assert '<td class="txt lmg-holds">holds: 1</td>' in page
    assert '<td class="txt" title="rho &lt;of&gt; a">a</td>' in page
    assert '<td class="txt">x</td>' in page
    with pytest.raises(ValueError, match="1 classes for the 2 rows"):
        figures.table_html(table, "cap", classes={"m": ["x"]})


def test_shown_figures_keep_their_numbers_by_name(monkeypatch):
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: None)
    figures.reset_numbering()
    figures.show(go.Figure(), "first")
    figures.show(go.Figure(), "second")
    assert (figures.figure_number("second"), figures.figure_number("nope")) == (2, None)
    figures.reset_numbering()
    assert figures.figure_number("first") is None


def _layer_cloud(n_layers: int = 12, n: int = 2000, active: int = 5) -> go.Figure:
    """A point cloud per layer under a slider, hover labels on every point, and one trace
    that draws its labels (the kind of figure whose bundle passes the budget)."""
    rng = np.random.default_rng(2)
    layers = rng.normal(size=(n_layers, n, 2))
    fig = go.Figure([
        go.Scatter(x=layers[active, :, 0], y=layers[active, :, 1], mode="markers",
                   text=[f"word {i} (pos {i % 30})" for i in range(n)], hoverinfo="text+name",
                   name="cloud"),
        go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0], mode="markers+text", text=["a", "b"],
                   name="labelled")])
    fig.update_layout(title="Layers", sliders=[{"active": active, "steps": [
        {"method": "restyle", "label": f"layer {i}",
         "args": [{"x": [layers[i, :, 0]], "y": [layers[i, :, 1]]}, [0]]}
        for i in range(n_layers)]}])
    return fig


def _file_chars(bundle: dict) -> int:
    return len(json.dumps(bundle, indent=1))  # as nbformat indents it, a value a line


def test_a_bundle_within_the_budget_is_not_cut():
    fig = _slider_figure()
    full = figures.plotly_bundle(fig, "t")
    assert figures.plotly_bundle(fig, "t", budget=_file_chars(full)) == full
    assert figures.compact_bundle(full, _file_chars(full)) == (full, [])


def test_a_large_bundle_loses_hover_labels_first_and_then_slider_steps():
    fig = _layer_cloud()
    full = figures.plotly_bundle(fig, "Figure 1. Layers")
    unlabelled, cuts = figures.compact_bundle(full, _file_chars(full) - 1)
    assert cuts == ["no hover labels"]  # enough to fit: every step stays
    assert unlabelled["layout"]["sliders"] == full["layout"]["sliders"]
    cloud, labelled = unlabelled["data"]
    assert "text" not in cloud and "hoverinfo" not in cloud  # hover: coordinates and name
    assert labelled["text"] == ["a", "b"]  # drawn labels are data, never cut

    budget = _file_chars(unlabelled) // 3
    bundle = figures.plotly_bundle(fig, "Figure 1. Layers", budget=budget)
    assert _file_chars(bundle) <= budget + 2000  # the title's note
    [slider] = bundle["layout"]["sliders"]
    labels = [s["label"] for s in slider["steps"]]
    # every k-th step with the first, the last and the active one; the active one still active
    assert {"layer 0", "layer 5", "layer 11"} <= set(labels) and len(labels) < 12
    assert labels[slider["active"]] == "layer 5"
    originals = {s.label: s.args[0] for s in fig.layout.sliders[0].steps}
    for step in slider["steps"]:  # a kept step is exact to float32: the same layer's cloud
        for axis in ("x", "y"):
            np.testing.assert_array_equal(_bundle_array(step["args"][0][axis][0]),
                                          np.float32(originals[step["label"]][axis][0]))
        assert step["args"][1] == [0]
    np.testing.assert_array_equal(_bundle_array(bundle["data"][0]["x"]),
                                  fig.data[0].x.astype(np.float32))  # every point drawn
    # the title says what the notebook view leaves out and how to keep it
    title = bundle["layout"]["title"]["text"]
    assert title.startswith("Figure 1. Layers<br><i>In this notebook view: no hover labels; ")
    assert f"{len(labels)} of the slider's 12 steps (layer 0, " in title.replace("<br>", " ")
    assert figures.BUNDLE_ENV + "=full" in title.replace("</i><br><i>", " ")
    assert bundle["layout"]["margin"]["t"] > full["layout"]["margin"]["t"]
    go.Figure(bundle)  # plotly's validators accept it, from JSON too
    pio.from_json(json.dumps(bundle))


def test_figure_bundle_mode_comes_from_the_argument_or_the_environment(monkeypatch):
    fig = _layer_cloud()
    monkeypatch.delenv(figures.BUNDLE_ENV, raising=False)
    compact = figures.figure_bundle(fig, "c", number=1)[figures.PLOTLY_MIME]
    assert "notebook view" in compact["layout"]["title"]["text"]  # compact by default
    assert _file_chars(compact) < _file_chars(figures.plotly_bundle(fig, "Figure 1. Layers")) / 2
    full = figures.figure_bundle(fig, "c", number=1, bundle="full")[figures.PLOTLY_MIME]
    assert full == figures.plotly_bundle(fig, "Figure 1. Layers")
    monkeypatch.setenv(figures.BUNDLE_ENV, "off")
    off = figures.figure_bundle(fig, "c", number=1)
    assert set(off) == {"text/html", "text/plain"}
    assert off["text/html"] == figures.figure_html(fig, "c", None, 1)  # the book's HTML as ever
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    monkeypatch.setenv(figures.BUNDLE_ENV, "full")  # read when the figure is shown
    figures.show(fig, "later")
    assert "notebook view" not in shown[0][figures.PLOTLY_MIME]["layout"]["title"]["text"]
    monkeypatch.setenv(figures.BUNDLE_ENV, "small")
    with pytest.raises(ValueError, match="LMGEOMETRY_FIGURE_BUNDLE to one of them"):
        figures.figure_bundle(fig, "c")
