"""Sphinx extension: serve plotly.js from the book itself, on the pages that draw figures.

The chapters show plotly figures through :func:`lmgeometry.report.figures.show`, which emits an
HTML fragment that calls ``lmgFigure`` with a compact copy of the figure and carries no
plotly.js. This extension copies the ``plotly.min.js`` bundled in the installed ``plotly``
package and ``lmgeometry_figures.js`` (which decodes the compact figures; plotly's default
template is appended to it) into the build's ``_static`` folder, and adds their ``<script>``
tags to the ``<head>`` of the pages whose body calls ``lmgFigure``: a text-only page does not
load the 4.8 MB of plotly.js. A page whose figures are all 2-D (every trace type one of the
cartesian bundle's, :data:`CARTESIAN_TYPES`) loads plotly's partial *cartesian* bundle
instead (``plotly-cartesian.min.js``, 1.5 MB: the npm package ``plotly.js-cartesian-dist-min``
of the same plotly.js version as the plotly package's, kept beside this module with its
licence); a page with a 3-D or WebGL trace, or a type this module does not know, loads the full
bundle. ``lmgeometry.css`` (figure and table layout) goes on every page.
Figures draw without any network access (no CDN). A notebook's first figure also carries the
decoder and plotly.js for viewers other than the book (:mod:`lmgeometry.report.figure_fallback`);
this extension takes that copy out of each page's body, so a page loads them once.

Enable it with ``extra_extensions: [lmgeometry.report._ext.plotly_offline]`` in ``_config.yml``.
"""

from __future__ import annotations

import filecmp
import re
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from lmgeometry.report.figure_fallback import figures_js, plotly_js_path, strip_bootstrap

#: File name of the bundle under ``_static`` in the built HTML.
PLOTLY_JS = "plotly.min.js"
#: The figure decoder, and the style sheet of figures and tables, next to this module.
FIGURES_JS = "lmgeometry_figures.js"
STYLE_CSS = "lmgeometry.css"
#: What a page that draws a figure calls (lmgeometry.report.figures.figure_html).
FIGURE_CALL = "lmgFigure("
#: plotly.js's partial cartesian bundle (npm ``plotly.js-cartesian-dist-min``), next to this
#: module, and the trace types it draws (its README's list).
CARTESIAN_JS = "plotly-cartesian.min.js"
CARTESIAN_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d",
                              "histogram2dcontour", "image", "pie", "scatter",
                              "scatterternary", "violin"})
#: Every ``"type"`` value a page with only those traces may carry: the traces', the axes'
#: (``log``, ...), the shapes' (``line``, ...) and the error bars' (``data``, ...). A page
#: with any other (``scatter3d``, ``scattergl``, one this list does not know) gets the full
#: bundle.
CARTESIAN_TYPES = CARTESIAN_TRACES | frozenset({
    "linear", "log", "date", "category", "multicategory", "-", "line", "rect", "circle",
    "path", "data", "percent", "constant", "sqrt", "buttons", "dropdown"})
_TYPE = re.compile(r'"type":\s*"([^"]*)"')
#: The ``"type"`` values a packed figure lists beside its compressed spec
#: (:func:`lmgeometry.report.figure_encoding.pack_spec`).
_PACKED_TYPES = re.compile(r'"types":\s*\[([^\]]*)\]')


def bundle_version(path: Path) -> str:
    """The plotly.js version in a bundle's first comment (``"4.1.1"``), or ``""``."""
    with open(path, encoding="utf-8") as handle:
        head = handle.read(400)
    found = re.search(r"plotly\.js\b[^\n]*?v(\d+\.\d+\.\d+)", head)
    return found.group(1) if found else ""


def cartesian_js_source() -> Path | None:
    """The partial cartesian bundle beside this module, when it is the same plotly.js
    version as the installed plotly package's full bundle; else ``None`` (every page then
    loads the full bundle)."""
    path = Path(__file__).parent / CARTESIAN_JS
    if path.is_file() and bundle_version(path) == bundle_version(plotly_js_source()):
        return path
    return None


def page_bundle(body: str) -> str:
    """The plotly.js file a page's body needs: :data:`CARTESIAN_JS` when every ``"type"`` in
    it is one of :data:`CARTESIAN_TYPES` (and the partial bundle matches the full one's
    version), else :data:`PLOTLY_JS`.

    Examples
    --------
    >>> page_bundle('lmgFigure("a", {"data":[{"type":"scatter"}],'
    ...             '"layout":{"yaxis":{"type":"log"}}})')
    'plotly-cartesian.min.js'
    >>> page_bundle('lmgFigure("a", {"data":[{"type":"scatter3d"}]})')
    'plotly.min.js'
    >>> page_bundle('lmgFigure("a", {"$gz":"H4sI","types":["linear","scatter3d"]})')
    'plotly.min.js'
    """
    types = set(_TYPE.findall(body))
    for listed in _PACKED_TYPES.findall(body):
        types.update(re.findall(r'"([^"]*)"', listed))
    if types <= CARTESIAN_TYPES and cartesian_js_source() is not None:
        return CARTESIAN_JS
    return PLOTLY_JS


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
    try:
        return plotly_js_path()
    except FileNotFoundError as exc:
        raise ExtensionError(f"plotly_offline: {exc}") from None


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
    partial = cartesian_js_source()
    if partial is not None:
        target = static / CARTESIAN_JS
        if not target.is_file() or not filecmp.cmp(partial, target, shallow=False):
            shutil.copyfile(partial, target)
    _write_if_changed(static / FIGURES_JS, figures_js())
    _write_if_changed(static / STYLE_CSS, (Path(__file__).parent / STYLE_CSS).read_text())


def _scripts_for_figures(app: Sphinx, pagename: str, templatename: str,
                         context: dict[str, Any], doctree: Any) -> None:
    """Load plotly.js (the partial cartesian bundle where every figure is 2-D) and the decoder
    on this page only if it draws a figure; take out the notebook's own copy of them
    (:func:`lmgeometry.report.figure_fallback.strip_bootstrap`)."""
    if "body" in context:
        context["body"] = strip_bootstrap(context["body"])
    body = context.get("body", "")
    if FIGURE_CALL in body:
        # Plain synchronous <script>s in <head>: the figures' inline scripts call
        # lmgFigure while the page is parsed, so both must already be loaded.
        app.add_js_file(page_bundle(body), priority=200)
        app.add_js_file(FIGURES_JS, priority=201)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension: copy the static files, load the scripts where figures are."""
    plotly_js_source()  # fail at start-up, not after the whole build, if it is missing
    app.connect("builder-inited", _copy_static)
    app.connect("html-page-context", _scripts_for_figures)
    app.add_css_file(STYLE_CSS)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}
