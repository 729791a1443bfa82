"""Show plotly figures in executed notebooks so that the static book renders them offline.

Under papermill a plotly figure's default output is only the plotly JSON mimetype, which
myst-nb drops. :func:`show` instead emits an HTML fragment (no plotly.js inside, a stable div
id); the book's Sphinx extension (``lmgeometry/_ext/plotly_offline.py``) loads plotly.js once
per page from the book's own static files.
"""

from __future__ import annotations

import hashlib
import re

import plotly.graph_objects as go
import plotly.io as pio

from lmgeometry import trace

__all__ = [
    "figure_html",
    "show",
]


def _div_id(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    return f"fig-{slug}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def figure_html(fig: go.Figure, name: str) -> str:
    """HTML fragment for ``fig`` with a div id derived from ``name`` (stable across runs)."""
    return pio.to_html(
        fig,
        include_plotlyjs=False,
        full_html=False,
        div_id=_div_id(name),
        config={"displaylogo": False, "responsive": True},
    )


def show(fig: go.Figure, name: str) -> None:
    """Display ``fig`` as static-book-friendly HTML; ``name`` must be unique in the chapter."""
    from IPython.display import HTML, display

    with trace.timed("figure", name=name):  # for `lmgeometry book --profile`
        display(HTML(figure_html(fig, name)))
