"""Tables as HTML for the book: no index, readable headers, formatted numbers, a numbered
caption, a box that scrolls sideways when the table is wider than the text, and long tables
folded behind a toggle (:func:`table_html`; :func:`lmgeometry.report.figures.show_table`
displays it as the chapter's next table).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.report.plot_style import LABELS, MODEL_NAMES

__all__ = [
    "FOLD_ROWS",
    "Abbreviated",
    "table_html",
]


#: Tables with more rows are folded behind a "show" toggle.
FOLD_ROWS = 20


def _header(column: Any) -> str:
    """A column's header in words: the reader-facing label of a measure or model
    (:data:`plot_style.LABELS`, :data:`plot_style.MODEL_NAMES`), else underscores as spaces."""
    parts = column if isinstance(column, tuple) else (column,)
    return " / ".join(LABELS.get(str(p), MODEL_NAMES.get(str(p), str(p).replace("_", " ")))
                      for p in parts if str(p) != "")


@dataclass(frozen=True)
class Abbreviated:
    """A table cell shown as its first ``length`` characters, in full on hover (a hash)."""

    full: str
    length: int = 12

    def __str__(self) -> str:
        return self.full[:self.length]


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, Abbreviated):
        return f'<code title="{html.escape(value.full)}">{html.escape(str(value))}</code>'
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if value is None:
        return "–"
    return html.escape(str(value))


def _decimals(column: pd.Series, digits: int) -> int:
    """The fewest decimals (at most ``digits``) that show every float of ``column`` as
    ``digits`` decimals would: 91.3, not 91.300; 999, not 999.000."""
    values = pd.to_numeric(column, errors="coerce") if column.dtype == object else column
    if not pd.api.types.is_float_dtype(values):
        return digits
    finite = values[np.isfinite(values)].to_numpy(dtype=float)
    rounded = np.round(finite, digits)
    return next(d for d in range(digits + 1) if np.allclose(np.round(finite, d), rounded,
                                                           rtol=0, atol=0.1 ** (digits + 1)))


def table_html(table: pd.DataFrame, caption: str, number: int | None = None,
               digits: int = 3, fold_rows: int = FOLD_ROWS,
               row_ids: Sequence[str] | None = None,
               links: Mapping[str, Sequence[str | None]] | None = None,
               classes: Mapping[str, Sequence[str | None]] | None = None,
               titles: Mapping[str, Sequence[str | None]] | None = None,
               anchor: str | None = None) -> str:
    """HTML for ``table`` as a numbered, captioned figure (see :func:`show_table`)."""
    ids = [""] * len(table) if row_ids is None else [f' id="{html.escape(i)}"' for i in row_ids]
    if len(ids) != len(table):
        raise ValueError(f"{len(ids)} row ids for {len(table)} rows")
    for what, given in (("links", links), ("classes", classes), ("titles", titles)):
        for column, values in (given or {}).items():
            if len(values) != len(table):
                raise ValueError(f"{len(values)} {what} for the {len(table)} rows of column "
                                 f"{column!r}")
    named = any(n is not None for n in table.index.names)
    if named or not pd.api.types.is_integer_dtype(table.index.dtype):
        if table.index.nlevels == 1 and not named:  # row labels: no "index" header
            table = table.rename_axis("")
        table = table.reset_index()
    else:  # a row number (a default or filtered index) is not data
        table = table.reset_index(drop=True)
    headers = "".join(f"<th>{html.escape(_header(c))}</th>" for c in table.columns)
    numeric = [pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
               for t in table.dtypes]
    def per_row(given: Mapping[str, Sequence[str | None]] | None) -> list[list[str | None]]:
        return [list((given or {}).get(c, [None] * len(table))) for c in table.columns]

    hrefs, extra, hover = per_row(links), per_row(classes), per_row(titles)

    decimals = [_decimals(table.iloc[:, j], digits) for j in range(table.shape[1])]

    def cell(value: Any, i: int, j: int) -> str:
        text = _cell(value, decimals[j])
        if hrefs[j][i]:
            text = f'<a href="{html.escape(str(hrefs[j][i]))}">{text}</a>'
        kind = "num" if numeric[j] else "txt"
        kind += f" {html.escape(str(extra[j][i]))}" if extra[j][i] else ""
        title = f' title="{html.escape(str(hover[j][i]))}"' if hover[j][i] else ""
        return f'<td class="{kind}"{title}>{text}</td>'

    rows = "".join(
        f"<tr{row_id}>" + "".join(cell(v, i, j) for j, v in enumerate(row)) + "</tr>"
        for i, (row, row_id) in enumerate(zip(table.itertuples(index=False, name=None), ids,
                                              strict=True))
    )
    label = f"Table {number}." if number is not None else "Table."
    body = (f'<div class="lmg-scroll"><table class="lmg-table"><thead><tr>{headers}</tr>'
            f"</thead><tbody>{rows}</tbody></table></div>")
    if len(table) > fold_rows:
        body = (f"<details><summary>Show the {len(table)} rows</summary>{body}</details>")
    figure_id = f' id="{html.escape(anchor)}"' if anchor else ""
    return (f'<figure class="lmg-table-figure"{figure_id}><figcaption><span class="lmg-label">'
            f"{label}</span> {caption}</figcaption>{body}</figure>")
