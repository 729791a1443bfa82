"""Sphinx extension: serve plotly.js from the book itself, loaded once on every page.

The chapters show plotly figures through :func:`lmgeometry.report.figures.show`, which emits an HTML
fragment that calls ``Plotly.newPlot`` but carries no plotly.js. This extension copies the
``plotly.min.js`` bundled in the installed ``plotly`` package into the build's ``_static``
folder and adds one ``<script>`` tag for it to the ``<head>`` of every HTML page, so figures
draw without any network access (no CDN).

Enable it with ``extra_extensions: [lmgeometry._ext.plotly_offline]`` in ``_config.yml``.
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

#: File name of the bundle under ``_static`` in the built HTML.
PLOTLY_JS = "plotly.min.js"


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


def _copy_plotly_js(app: Sphinx) -> None:
    """Copy plotly.js into ``<outdir>/_static`` (HTML builders only).

    It is copied when the builder starts, before any page is written, so that Sphinx can
    compute the file's checksum for the ``?v=`` cache-busting suffix of the script tag.
    """
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    source = plotly_js_source()
    target = static / PLOTLY_JS
    if not target.is_file() or not filecmp.cmp(source, target, shallow=False):
        shutil.copyfile(source, target)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension: copy plotly.js and load it (synchronously) on every page."""
    plotly_js_source()  # fail at start-up, not after the whole build, if it is missing
    app.connect("builder-inited", _copy_plotly_js)
    # A plain synchronous <script> in <head>: the figures' inline scripts call
    # Plotly.newPlot while the page is parsed, so plotly.js must already be loaded.
    app.add_js_file(PLOTLY_JS, priority=200)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
