"""Sphinx extension: serve plotly.js from the book itself, on the pages that draw figures.

The chapters show plotly figures through :func:`lmgeometry.report.figures.show`, which emits an
HTML fragment that calls ``lmgFigure`` with a compact copy of the figure and carries no
plotly.js. This extension copies the ``plotly.min.js`` bundled in the installed ``plotly``
package and ``lmgeometry_figures.js`` (which decodes the compact figures; plotly's default
template is appended to it) into the build's ``_static`` folder, and adds their ``<script>``
tags to the ``<head>`` of the pages whose body calls ``lmgFigure``: a text-only page does not
load the 4.8 MB of plotly.js. ``lmgeometry.css`` (figure and table layout) goes on every page.
Figures draw without any network access (no CDN).

Enable it with ``extra_extensions: [lmgeometry.report._ext.plotly_offline]`` in ``_config.yml``.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

#: File name of the bundle under ``_static`` in the built HTML.
PLOTLY_JS = "plotly.min.js"
#: The figure decoder, and the style sheet of figures and tables, next to this module.
FIGURES_JS = "lmgeometry_figures.js"
STYLE_CSS = "lmgeometry.css"
#: What a page that draws a figure calls (lmgeometry.report.figures.figure_html).
FIGURE_CALL = "lmgFigure("


def plotly_js_source() -> Path:
    """Path of the ``plotly.min.js`` shipped inside the installed plotly package.

    Returns
    -------
    pathlib.Path
        ``<site-packages>/plotly/package_data/plotly.min.js``.

    Raises
    ------
    sphinx.errors.ExtensionError
        If the installed plotly has no bundled ``plotly.min.js``.
    """
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not path.is_file():
        raise ExtensionError(
            f"plotly_offline: {path} does not exist; the installed plotly "
            f"({getattr(plotly, '__version__', '?')}) ships no bundled plotly.js"
        )
    return path


def _figures_js() -> str:
    """The decoder script with plotly's default template appended (``lmgFigure.template``)."""
    import plotly.io as pio

    template = pio.templates[pio.templates.default].to_plotly_json()
    source = (Path(__file__).parent / FIGURES_JS).read_text()
    return source + f"window.lmgFigure.template = {json.dumps(template)};\n"


def _write_if_changed(target: Path, text: str) -> None:
    if not target.is_file() or target.read_text() != text:
        target.write_text(text)


def _copy_static(app: Sphinx) -> None:
    """Copy plotly.js, the decoder and the style sheet into ``<outdir>/_static`` (HTML only).

    They are copied when the builder starts, before any page is written, so that Sphinx can
    compute the files' checksums for the ``?v=`` cache-busting suffix of the tags.
    """
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    source = plotly_js_source()
    target = static / PLOTLY_JS
    if not target.is_file() or not filecmp.cmp(source, target, shallow=False):
        shutil.copyfile(source, target)
    _write_if_changed(static / FIGURES_JS, _figures_js())
    _write_if_changed(static / STYLE_CSS, (Path(__file__).parent / STYLE_CSS).read_text())


def _scripts_for_figures(app: Sphinx, pagename: str, templatename: str,
                         context: dict[str, Any], doctree: Any) -> None:
    """Load plotly.js and the decoder on this page only if it draws a figure."""
    if FIGURE_CALL in context.get("body", ""):
        # Plain synchronous <script>s in <head>: the figures' inline scripts call
        # lmgFigure while the page is parsed, so both must already be loaded.
        app.add_js_file(PLOTLY_JS, priority=200)
        app.add_js_file(FIGURES_JS, priority=201)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension: copy the static files, load the scripts where figures are."""
    plotly_js_source()  # fail at start-up, not after the whole build, if it is missing
    app.connect("builder-inited", _copy_static)
    app.connect("html-page-context", _scripts_for_figures)
    app.add_css_file(STYLE_CSS)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}
