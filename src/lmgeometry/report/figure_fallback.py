"""What makes a notebook's figures draw outside the book: the decoder and plotly.js, once.

A figure's HTML output (:func:`lmgeometry.report.figures.figure_html`) calls ``lmgFigure``,
which the book's pages define (``_ext/lmgeometry_figures.js``, served with plotly.js by the
Sphinx extension). Anywhere else (``jupyter nbconvert --to html``, VS Code, a trusted notebook
in JupyterLab or Notebook 7) nothing defined it and the figures stayed blank. The first
figure a chapter's kernel shows therefore also carries :func:`bootstrap_html`, one
``<script class="lmg-bootstrap">`` that, on a page that lacks them,

* defines ``lmgFigure`` (the decoder, with plotly's default template), so every later
  figure's own one-line script draws;
* loads plotly.js (the ``plotly.min.js`` of the installed plotly package) from the notebook
  itself, gzip-compressed and base64-encoded (4.8 MB become 1.96 MB), unpacked by the
  decoder's own gunzip (``lmgGunzipText``, which unpacks a packed figure too); the decoder
  waits for it (``lmgPlotlyReady``).

Nothing is fetched from a network. The book never serves the bootstrap: the Sphinx extension
takes it out of each page's body (:func:`strip_bootstrap`), so the pages weigh what they did.
Viewers that run no scripts (GitHub's notebook preview) still show only the captions; their
figures would need a static image per figure, which kaleido draws in about 5 s each on the
development machine with a local Chromium (docs/PERFORMANCE.md), so none is made.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import re
from pathlib import Path

__all__ = ["BOOTSTRAP_CLASS", "bootstrap_html", "figures_js", "plotly_js_path",
           "strip_bootstrap"]

#: The class of the bootstrap's ``<script>`` (how the book finds it to take it out).
BOOTSTRAP_CLASS = "lmg-bootstrap"

_BOOTSTRAP = re.compile(r'<script[^>]*class="' + BOOTSTRAP_CLASS + r'"[^>]*>.*?</script>',
                        re.DOTALL)

#: Unpacks plotly.js inside a function whose ``module``, ``exports`` and ``define`` are
#: undefined, so that a page with require.js (classic Notebook) still gets ``window.Plotly``.
#: It runs after the decoder, whose ``lmgGunzipText`` unpacks it as it does a packed figure.
_LOADER = """
window.lmgPlotlyReady = window.lmgGunzipText(PACKED).then(function (source) {
  var s = document.createElement("script");
  s.text = "(function (module, exports, define) {\\n" + source + "\\n})();";
  document.head.appendChild(s);
  return window.Plotly;
});
"""


def plotly_js_path() -> Path:
    """The ``plotly.min.js`` shipped inside the installed plotly package (FileNotFoundError
    when this plotly ships none)."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; the installed plotly "
                                f"({getattr(plotly, '__version__', '?')}) ships no plotly.js")
    return path


@functools.cache
def figures_js() -> str:
    """The figure decoder (``_ext/lmgeometry_figures.js``) with plotly's default template
    appended (``lmgFigure.template``), as the book serves it."""
    import plotly.io as pio

    template = pio.templates[pio.templates.default].to_plotly_json()
    source = (Path(__file__).parent / "_ext" / "lmgeometry_figures.js").read_text()
    return source + f"window.lmgFigure.template = {json.dumps(template)};\n"


@functools.cache
def bootstrap_html() -> str:
    """The ``<script>`` that makes a notebook's figures draw without the book (module
    docstring): about 2 MB, the same bytes in every run for one plotly and decoder."""
    packed = base64.b64encode(gzip.compress(plotly_js_path().read_bytes(), compresslevel=9,
                                            mtime=0)).decode()
    loader = _LOADER.replace("PACKED", json.dumps(packed))
    body = ("if (!window.lmgFigure) {\n"
            f"{figures_js()}\nif (!window.Plotly) {{{loader}}}\n}}\n")
    if "</script" in body:
        raise ValueError("the decoder or plotly.js holds '</script': it cannot be inlined")
    return f'<script type="text/javascript" class="{BOOTSTRAP_CLASS}">{body}</script>'


def strip_bootstrap(html: str) -> str:
    """``html`` without the bootstrap (what the book's pages keep of a figure's output)."""
    return _BOOTSTRAP.sub("", html)
