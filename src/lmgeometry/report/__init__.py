"""Everything the reader sees: plots, figure display, results files, prose helpers, the book.

The main names below are importable from here (``from lmgeometry.report import show``); each
is loaded from its module on first use (PEP 562), so importing this package imports none of
its modules. Package code imports from the modules themselves.

Modules
-------
* ``plots`` -- one import path for the figure builders of the five ``plot_*`` modules:
  ``plot_style`` (palette, labels, colour scales), ``plot_clouds`` (point clouds per layer),
  ``plot_lines`` (measures over layers or depth), ``plot_panels`` (heatmaps, side by side),
  ``plot_ranges`` (point-cloud axis ranges with an "n points off scale" note)
* ``figures`` -- ``show`` and ``show_table``: numbered, captioned figures and tables
* ``figure_encoding`` -- the compact form of a figure that the book's pages draw
* ``mime_bundle`` -- plotly's own mime bundle, for other notebook viewers
* ``html_tables`` -- tables as HTML: readable headers, formatted numbers, folded rows
* ``export`` -- figures as HTML or images, results tables as CSV or parquet
* ``results`` -- the JSON numbers behind each chapter, saved and loaded
* ``claims`` -- claims on a page: findings box, verdict grid, scorecard (the record itself is
  :mod:`lmgeometry.claims`)
* ``prose`` -- helpers that put numbers into generated sentences
* ``book`` -- the pipeline: chapter sources -> executed notebooks -> offline HTML
* ``cache`` -- a chapter's execution manifest and why it must run again
* ``about`` -- the About page's facts: run records, models, store, data, versions
* ``profile`` -- where a book build's time goes (``lmgeometry book --profile``)
* ``publish`` -- the built book to a ``gh-pages`` branch; the build's archive
* ``toc`` -- where the book's sources are and what its table of contents lists
* ``offline`` -- everything in built HTML that would load from another host
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

#: Each exported name and the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "show": "lmgeometry.report.figures",
    "show_table": "lmgeometry.report.figures",
    "save": "lmgeometry.report.export",
    "export_results": "lmgeometry.report.export",
    "save_results": "lmgeometry.report.results",
    "load_results": "lmgeometry.report.results",
    "build_book": "lmgeometry.report.book.build",
    "build_html": "lmgeometry.report.book.html",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
