"""Numbered, captioned figures and tables in executed notebooks, compact enough for a book.

Under papermill a plotly figure's default output is only the plotly JSON mimetype, which
myst-nb drops. :func:`show` instead emits an HTML ``<figure>``: a div, a caption numbered in
the order of the chapter ("Figure 3. ..."), and a one-line script that hands a compact copy
of the figure to ``lmgFigure`` (``_ext/lmgeometry_figures.js``, which the book's Sphinx
extension serves with plotly.js on the pages that have figures). Compact means:

- every numeric array (trace data, slider and menu arguments) is sent as base64 typed data
  (:func:`encode_figure`): point clouds as 16-bit steps over their range, other floats as
  float32, integers as int8/16/32; a point costs 2.7 characters a coordinate instead of about
  20 as decimal text;
- an array that occurs more than once in a figure (the hover text shared by the panels of
  small multiples, the same colours in every layer) is sent once;
- plotly's default template (7 kB) is left out and restored by the script;
- a large figure travels gzip-compressed (:func:`pack_spec`; its hover text shrinks about
  threefold), unpacked by the browser's ``DecompressionStream``.

The first figure a kernel shows also carries the decoder and plotly.js themselves
(:func:`lmgeometry.report.figure_fallback.bootstrap_html`, once per notebook, about 2 MB), so
that ``jupyter nbconvert --to html``, VS Code and a trusted notebook in JupyterLab draw every
figure without the book; the book takes that copy out of its pages.

The same output also carries plotly's own mime bundle (``application/vnd.plotly.v1+json``,
:func:`plotly_bundle`), which JupyterLab, Jupyter Notebook 7, VS Code and nteract draw with
their plotly renderer, so that an executed chapter opened outside the book shows its figures
(in a viewer without a plotly renderer, such as nbviewer, only the caption shows). The book
never renders it: ``_config.yml`` gives it no priority (``nb_mime_priority_overrides``), so
myst-nb keeps the HTML above and the pages weigh what they did. It is kept small too: numeric
arrays travel as plotly's base64 typed arrays in float32 or the narrowest integer type, and
the template keeps only the trace types the figure draws. A bundle larger than
:data:`BUNDLE_BUDGET` (a point cloud per layer under a slider, with a hover label per point)
is cut down (:func:`compact_bundle`): no hover labels, then fewer slider steps, said in its
title; what stays is exact. :data:`BUNDLE_ENV` (``compact``, ``full``, ``off``) picks another
bundle at display time.

:func:`show_table` does the same for tables: no index, readable headers, formatted numbers, a
numbered caption, a box that scrolls sideways when the table is wider than the text, and long
tables folded behind a toggle.

The compact encoding is in :mod:`.figure_encoding`, plotly's mime bundle in
:mod:`.mime_bundle` and the tables' HTML in :mod:`.html_tables`; this module numbers and shows
figures and tables and re-exports the names callers use from those three.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from lmgeometry import trace
from lmgeometry.report.figure_encoding import (
    MIN_QUANTISED,
    encode_figure,
    pack_spec,
    share_on_page,
)
from lmgeometry.report.figure_fallback import bootstrap_html
from lmgeometry.report.html_tables import FOLD_ROWS, Abbreviated, table_html
from lmgeometry.report.mime_bundle import (
    BUNDLE_BUDGET,
    BUNDLE_ENV,
    PLOTLY_MIME,
    TITLE_LINES,
    TITLE_WIDTH,
    bundle_mode,
    compact_bundle,
    panel_title_room,
    plotly_bundle,
)
from lmgeometry.report.plot_style import display_names

__all__ = [
    "BUNDLE_ENV",
    "MIN_QUANTISED",
    "PLOTLY_MIME",
    "TITLE_LINES",
    "TITLE_WIDTH",
    "Abbreviated",
    "bundle_mode",
    "compact_bundle",
    "encode_figure",
    "figure_anchor",
    "figure_bundle",
    "figure_html",
    "figure_number",
    "plotly_bundle",
    "show",
    "show_table",
    "reader_names",
    "reader_table",
    "table_html",
]


#: A grid with this many subplot columns or more is a grid of small multiples: on a phone the
#: page's script (``_ext/lmgeometry_figures.js``, fitPhone) lays it out again in one or two
#: columns of square-ish panels, so it keeps no minimum width (it used to keep 720 px and
#: scroll sideways, cutting a panel in half behind an unmarked scroll).
WIDE_GRID_COLUMNS = 4


_numbers = {"figure": 0, "table": 0}
_page_defined: set[str] = set()  # page-shared lists defined by this chapter's figures so far
_figure_numbers: dict[str, int] = {}  # each figure shown so far: its name -> its number
_bootstrapped: list[bool] = []  # whether this kernel's figures carried the bootstrap yet


def _next_number(kind: str) -> int:
    _numbers[kind] += 1
    return _numbers[kind]


def reset_numbering() -> None:
    """Start figure and table numbers again at 1, and page-shared lists afresh (a chapter's
    kernel starts there anyway)."""
    _numbers.update(figure=0, table=0)
    _page_defined.clear()
    _figure_numbers.clear()
    _bootstrapped.clear()


def figure_number(name: str) -> int | None:
    """The number :func:`show` gave figure ``name`` in this chapter, or None if none yet."""
    return _figure_numbers.get(name)


def _div_id(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    return f"fig-{slug}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _title_text(fig: go.Figure) -> str:
    title = fig.layout.title
    return (title.text or "") if title is not None else ""


def _grid_columns(fig: go.Figure) -> int:
    """How many subplot columns ``fig`` has (1 for a single plot)."""
    starts: set[float] = set()
    for name in fig.layout:
        if re.fullmatch(r"xaxis\d*", name) and fig.layout[name].domain is not None:
            starts.add(round(fig.layout[name].domain[0], 3))
    return max(len(starts), 1)


def reader_names(fig: go.Figure) -> go.Figure:
    """``fig`` with the models' display names (:func:`plot_style.display_names`) in every text
    a reader sees: title, panel titles and notes, legend names and title, menu and slider
    labels (a chapter may title a figure with the alias it ran: ``"smollm2-135m, layer 13"``).
    """
    fig = go.Figure(fig)
    if _title_text(fig):
        fig.layout.title.text = display_names(_title_text(fig))
    for note in fig.layout.annotations or ():
        if note.text:
            note.text = display_names(note.text)
    for trace_ in fig.data:
        if getattr(trace_, "name", None):
            trace_.name = display_names(trace_.name)
        if getattr(trace_, "legendgrouptitle", None) is not None and trace_.legendgrouptitle.text:
            trace_.legendgrouptitle.text = display_names(trace_.legendgrouptitle.text)
    for menu in fig.layout.updatemenus or ():
        for button in menu.buttons or ():
            if button.label:
                button.label = display_names(button.label)
    for slider in fig.layout.sliders or ():
        for step in slider.steps or ():
            if step.label:
                step.label = display_names(step.label)
    return fig


def figure_html(fig: go.Figure, name: str, caption: str | None = None,
                number: int | None = None, page: set[str] | None = None) -> str:
    """HTML ``<figure>`` for ``fig``: its div (id stable across runs), caption and script.

    The caption is ``caption``, or else the figure's title, which is then taken out of the
    plot (a title inside the plot sits under plotly's toolbar and is cut off on a phone).
    With ``page`` (the keys defined by earlier figures of the page), long lists of strings
    are shared with them (:func:`share_on_page`); without it the figure stands alone.
    """
    fig = reader_names(fig)
    text = display_names(caption if caption is not None else _title_text(fig))
    if _title_text(fig):
        top = fig.layout.margin.t
        fig.update_layout(title=None, margin_t=max(
            min(top, 40) if top is not None else 40, panel_title_room(fig)))
    div_id = _div_id(name)
    height = fig.layout.height or 450
    style = f"height:{height}px;width:100%"
    spec = encode_figure(fig)
    if page is not None:
        spec = share_on_page(spec, page)
    payload = json.dumps(pack_spec(spec), cls=PlotlyJSONEncoder, separators=(",", ":"))
    label = f"Figure {number}." if number is not None else "Figure."
    return (
        f'<figure class="lmg-figure" id="{div_id}-figure">'
        f'<div class="lmg-scroll"><div id="{div_id}" class="plotly-graph-div" '
        f'style="{style}"></div></div>'
        f'<figcaption><span class="lmg-label">{label}</span> {text}</figcaption></figure>'
        f'<script type="text/javascript">lmgFigure("{div_id}", {payload});</script>'
    )


def _plain(text: str) -> str:
    """``text`` without HTML tags and entities, on one line."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def figure_bundle(fig: go.Figure, name: str, caption: str | None = None,
                  number: int | None = None, page: set[str] | None = None,
                  bundle: str | None = None, bootstrap: bool = False) -> dict[str, Any]:
    """The display data of a figure: the book's HTML, plotly's mime bundle and plain text.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    name, caption, number, page
        As for :func:`figure_html`.
    bundle : {"compact", "full", "off"}, optional
        The plotly bundle (default: :data:`BUNDLE_ENV`, else ``compact``): cut down towards
        :data:`BUNDLE_BUDGET` characters (:func:`compact_bundle`), every array, or none.
    bootstrap : bool
        Put the decoder and plotly.js before the HTML
        (:func:`lmgeometry.report.figure_fallback.bootstrap_html`): the notebook's first
        figure does, so that its figures draw outside the book.

    Returns
    -------
    dict
        ``{"text/html": figure_html(...), PLOTLY_MIME: plotly_bundle(...), "text/plain":
        "Figure N. ..."}``. The book renders the HTML only; other notebook viewers draw the
        plotly bundle, titled with the label and the caption (or the figure's own title).
    """
    mode = bundle_mode(bundle)
    text = caption if caption is not None else _title_text(fig)
    label = f"Figure {number}." if number is not None else "Figure."
    title = f"{label} {_plain(text)}".strip()
    data = {"text/html": (bootstrap_html() if bootstrap else "")
            + figure_html(fig, name, caption, number, page)}
    if mode != "off":
        data[PLOTLY_MIME] = plotly_bundle(fig, title,
                                          BUNDLE_BUDGET if mode == "compact" else None)
    return {**data, "text/plain": title}


def show(fig: go.Figure, name: str, caption: str | None = None) -> None:
    """Display ``fig`` as the chapter's next numbered figure; ``name`` is unique in the chapter.

    ``caption`` (HTML allowed) says what is plotted and what to look at; without it the
    figure's title is the caption. The output holds the book's HTML and plotly's own mime
    bundle (:func:`figure_bundle`).
    """
    from IPython.display import display

    with trace.timed("figure", name=name):  # for `lmgeometry book --profile`
        number = _figure_numbers[name] = _next_number("figure")
        first = not _bootstrapped
        _bootstrapped.append(True)
        display(figure_bundle(fig, name, caption, number, _page_defined, bootstrap=first),
                raw=True)


def figure_anchor(name: str) -> str:
    """The HTML id a link to figure ``name`` targets: a MyST label (``fig-ch03-...``) as it
    stands, else the id :func:`figure_html` gives the ``<figure>`` of :func:`show`'s ``name``."""
    return name if re.fullmatch(r"fig-ch\d\d-[a-z0-9-]+", name) else f"{_div_id(name)}-figure"


def reader_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the models' display names in its headers and text cells (a model
    column holds aliases: ``minilm-l6`` -> ``MiniLM``; a cell that names one in a sentence
    gets the same, :func:`plot_style.display_names`)."""
    named = table.rename(columns=lambda c: display_names(c) if isinstance(c, str) else c)
    if isinstance(named.index, pd.MultiIndex) or named.index.dtype == object:
        named.index = named.index.map(lambda v: display_names(v) if isinstance(v, str) else
                                      tuple(display_names(x) if isinstance(x, str) else x
                                            for x in v) if isinstance(v, tuple) else v)
    for column in named.columns:
        if named[column].dtype == object:
            named[column] = [display_names(v) if isinstance(v, str) else v
                             for v in named[column]]
    return named


def show_table(table: pd.DataFrame, caption: str, digits: int = 3,
               columns: Sequence[str] | None = None, fold_rows: int = FOLD_ROWS,
               row_ids: Sequence[str] | None = None,
               links: Mapping[str, Sequence[str | None]] | None = None,
               classes: Mapping[str, Sequence[str | None]] | None = None,
               titles: Mapping[str, Sequence[str | None]] | None = None,
               anchor: str | None = None) -> None:
    """Display ``table`` as the chapter's next numbered table.

    Parameters
    ----------
    table
        The rows to show; a named or non-default index becomes the first columns.
    caption
        What the table holds and how to read it (HTML allowed).
    digits
        Decimals of floating-point cells (integers get thousands separators).
    columns
        The columns to show, in order (default: all).
    fold_rows
        A table with more rows is folded behind a toggle.
    row_ids
        An HTML id per row, for links to a row (``page.html#id``).
    links
        Column -> one URL (or None) per row: those cells link there (a claim to its figure).
    classes
        Column -> one CSS class (or None) per row, added to those cells (a verdict's colour).
    titles
        Column -> one hover text (or None) per row, the cells' ``title`` (a claim's statistic).
    anchor
        The HTML id of the table's ``<figure>``, for links to the table (``page.html#id``).
    """
    from IPython.display import HTML, display

    if columns is not None:
        table = table[list(columns)]
    def renamed(by_column: Mapping[str, Sequence[Any]] | None) -> Any:
        return None if by_column is None else {display_names(k): v for k, v in by_column.items()}

    display(HTML(table_html(reader_table(table), display_names(caption), _next_number("table"),
                            digits, fold_rows, row_ids, renamed(links), renamed(classes),
                            renamed(titles), anchor)))
