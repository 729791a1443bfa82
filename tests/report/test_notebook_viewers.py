"""Figures of an executed notebook draw outside the book (issue 49, item 3).

A small notebook that shows two figures through ``report.figures.show`` is executed on a
kernel of this interpreter (as the book executes chapters) and converted with ``jupyter
nbconvert --to html`` (nbconvert's HTMLExporter, the lab template). The HTML must carry each
figure's data and the code that draws it (the decoder and plotly.js, once, from the notebook
itself), and, in headless Chromium from disk with no network, draw both figures. The book's
pages keep only the compact figure (the Sphinx extension takes the bootstrap out).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest

from lmgeometry.report.figure_fallback import (
    BOOTSTRAP_CLASS,
    bootstrap_html,
    figures_js,
    plotly_js_path,
    strip_bootstrap,
)

SOURCE = """\
import plotly.graph_objects as go
from lmgeometry.report import figures
figures.show(go.Figure(go.Scatter(x=[0, 1, 2], y=[2, 1, 3], name="line")), "a line",
             caption="A line of three points.")
figures.show(go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])), "a heatmap", caption="A heatmap.")
"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notebook, executed (module scope: one kernel for every test here)."""
    import nbformat
    from nbclient import NotebookClient

    from lmgeometry.report.book.execution import interpreter_kernel

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SOURCE)]
    with interpreter_kernel() as kernel:
        NotebookClient(nb, kernel_name=kernel).execute()
    path = tmp_path_factory.mktemp("viewers") / "figures.ipynb"
    nbformat.write(nb, path)
    return path


def _outputs(path: Path) -> list[dict]:
    """The display outputs, each mime type's text joined (nbformat stores lines)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return [o for cell in nb.cells for o in cell.outputs if o.output_type == "display_data"]


def test_the_first_figure_carries_the_decoder_and_plotly_once(executed):
    first, second = _outputs(executed)
    assert first["data"]["text/html"].count(f'class="{BOOTSTRAP_CLASS}"') == 1
    assert BOOTSTRAP_CLASS not in second["data"]["text/html"]
    assert first["data"]["text/html"].startswith(bootstrap_html())
    # the packed plotly.js is the installed package's own, byte for byte
    packed = re.search(r'lmgGunzipText\("([A-Za-z0-9+/=]+)"\)', bootstrap_html()).group(1)
    assert gzip.decompress(base64.b64decode(packed)) == plotly_js_path().read_bytes()
    assert figures_js() in bootstrap_html()
    # the book keeps the compact figure alone
    assert "lmgFigure(" in strip_bootstrap(first["data"]["text/html"])
    assert BOOTSTRAP_CLASS not in strip_bootstrap(first["data"]["text/html"])
    size = len(bootstrap_html())
    assert 1_500_000 < size < 0.5 * plotly_js_path().stat().st_size  # packed: under half


def test_nbconvert_html_holds_every_figures_data_and_drawing_code(executed, tmp_path):
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_filename(str(executed))
    assert body.count(f'class="{BOOTSTRAP_CLASS}"') == 1
    assert "DecompressionStream" in body and "window.lmgFigure = function" in body
    calls = re.findall(r'lmgFigure\("(fig-[a-z0-9-]+)", (\{.*?\})\);</script>', body)
    assert [c[0].rsplit("-", 1)[0] for c in calls] == ["fig-a-line", "fig-a-heatmap"]
    for fig_id, payload in calls:
        spec = json.loads(payload)
        assert spec["data"] and f'id="{fig_id}"' in body
    assert "Figure 1.</span> A line of three points." in body
    (tmp_path / "figures.html").write_text(body)


def test_the_books_page_loses_the_bootstrap(tmp_path):
    """The Sphinx extension's page hook takes the notebook's copy out of the body."""
    from types import SimpleNamespace

    from lmgeometry.report._ext import plotly_offline

    added = []
    app = SimpleNamespace(add_js_file=lambda name, priority: added.append(name))
    html = bootstrap_html() + '<div id="f"></div><script>lmgFigure("f", {});</script>'
    context = {"body": html}
    plotly_offline._scripts_for_figures(app, "page", "page.html", context, None)
    assert context["body"] == '<div id="f"></div><script>lmgFigure("f", {});</script>'
    # a figure with no 3-D trace gets the partial cartesian bundle (page_bundle)
    assert added == [plotly_offline.CARTESIAN_JS, plotly_offline.FIGURES_JS]


def _drawn_offline(notebook: Path, tmp_path: Path) -> tuple[str, list[dict], list[str]]:
    """``notebook`` converted by nbconvert (HTMLExporter) and opened from disk in headless
    Chromium with networking off: the HTML, each figure's drawing state, and the console
    errors other than failed network requests (nbconvert's template asks a CDN for
    require.js and MathJax: those are the only errors allowed)."""
    pytest.importorskip("selenium")
    from test_browser import _WAIT_FOR_FIGURES, GIVE_UP_S, _install_chromium

    reason = _install_chromium()
    if reason:
        pytest.skip(reason)
    from nbconvert import HTMLExporter
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from test_browser import CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS

    body, _ = HTMLExporter().from_filename(str(notebook))
    page = tmp_path / f"{notebook.stem}.html"
    page.write_text(body)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium'}",
                 "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)
    try:
        driver.set_script_timeout(GIVE_UP_S + 30)
        driver.get(page.as_uri())
        state = driver.execute_async_script(_WAIT_FOR_FIGURES, GIVE_UP_S)
        log = driver.get_log("browser")
    finally:
        driver.quit()
    errors = [e["message"] for e in log if e["level"] == "SEVERE"
              and not re.search(r"https?://|net::ERR_", e["message"])]
    return body, state, errors


@pytest.mark.browser
def test_nbconvert_html_draws_its_figures_in_chromium_offline(executed, tmp_path):
    """Opened from disk with networking off, both figures draw (an svg.main-svg each), with no
    console error."""
    _, state, errors = _drawn_offline(executed, tmp_path)
    assert len(state) == 2 and all(f["svg"] > 0 for f in state), state
    assert errors == []


#: The committed chapter converted in the next test: the smallest with figures.
COMMITTED_CHAPTER = Path(__file__).resolve().parents[2] / "book" / "10_controlled_pair.ipynb"


@pytest.mark.browser
def test_a_committed_chapter_converted_by_nbconvert_draws_every_figure(tmp_path):
    """A chapter as the book executed it (papermill parameters, glue, the bootstrap in its
    first figure), converted by nbconvert and opened offline: every figure draws."""
    if not COMMITTED_CHAPTER.is_file():
        pytest.skip(f"{COMMITTED_CHAPTER} is not built here (lmgeometry book builds it)")
    body, state, errors = _drawn_offline(COMMITTED_CHAPTER, tmp_path)
    calls = re.findall(r'lmgFigure\("(fig-[a-z0-9-]+)"', body)
    assert body.count(f'class="{BOOTSTRAP_CLASS}"') == 1 and len(calls) >= 5
    assert len(state) == len(calls), (len(state), len(calls))
    assert all(f["svg"] > 0 for f in state), [f for f in state if not f["svg"]]
    assert errors == []
