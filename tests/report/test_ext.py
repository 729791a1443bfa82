"""The book's Sphinx extension: which plotly.js a page loads, and each page's byline and
citation line (report/_ext/plotly_offline.py, report/_ext/build_links.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from lmgeometry.report._ext import build_links, plotly_offline


def test_the_partial_bundle_is_the_full_bundles_plotly_js_version():
    """The cartesian bundle kept beside the extension is the same plotly.js as the plotly
    package's (after a plotly upgrade, update plotly-cartesian.min.js from npm's
    plotly.js-cartesian-dist-min of the new version: until then every page loads the full
    bundle)."""
    full = plotly_offline.bundle_version(plotly_offline.plotly_js_source())
    assert full and plotly_offline.cartesian_js_source() is not None
    partial = Path(plotly_offline.__file__).parent / plotly_offline.CARTESIAN_JS
    assert plotly_offline.bundle_version(partial) == full
    assert partial.stat().st_size < plotly_offline.plotly_js_source().stat().st_size / 2


def _page(*traces: dict, layout: dict | None = None) -> str:
    figure = {"data": list(traces), "layout": layout or {}}
    return f'<figure></figure><script>lmgFigure("f", {json.dumps(figure)});</script>'


def test_a_page_of_2d_figures_loads_the_cartesian_bundle_and_3d_the_full_one():
    flat = _page({"type": "scatter"}, {"type": "heatmap"},
                 layout={"yaxis": {"type": "log"}, "shapes": [{"type": "line"}]})
    assert plotly_offline.page_bundle(flat) == plotly_offline.CARTESIAN_JS
    assert plotly_offline.page_bundle(flat + _page({"type": "scatter3d"})) == \
        plotly_offline.PLOTLY_JS
    assert plotly_offline.page_bundle(_page({"type": "scattergl"})) == plotly_offline.PLOTLY_JS
    # a type the extension does not know is drawn by the full bundle, never left undrawn
    assert plotly_offline.page_bundle(_page({"type": "sankey"})) == plotly_offline.PLOTLY_JS


def test_byline_and_citation_line_come_from_citation_cff_and_the_run_record(tmp_path):
    facts = build_links.citation_facts(tmp_path)  # no CITATION.cff here: the project's
    assert facts["title"].startswith("lmgeometry") and facts["authors"]
    record = tmp_path / "book" / "01_x.run.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"executed": "2026-11-27T16:04:24+00:00"}))
    executed = build_links._executed(tmp_path, "book/01_x")
    assert executed == dt.date(2026, 11, 27)
    assert build_links._executed(tmp_path, "book/02_none") is None
    line = build_links.byline({"authors": [{"name": "A <b>"}]}, executed)
    assert line == '<p class="lmg-byline">By A &lt;b&gt; · executed 27 November 2026</p>'
    cite = build_links.cite_line({"authors": [{"given-names": "Ada", "family-names": "L"},
                                              {"name": "the team"}],
                                  "title": "The book", "version": "1.0"}, "Geometry", 2026)
    assert "Ada L and the team (2026). \u201cGeometry.\u201d In <i>The book</i>, version 1.0." \
        in cite
    asked = build_links.cite_line({"title": "B"}, "2. Is syntax laid out?", 2026)
    assert "\u201c2. Is syntax laid out?\u201d In <i>B</i>." in asked
