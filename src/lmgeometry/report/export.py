"""Figures and results out of the book: image and HTML files, CSV and parquet tables.

:func:`save` writes a plotly figure to a file a paper or a slide can take (PNG, SVG, PDF
through kaleido, the optional extra ``lmgeometry[images]``; HTML with plotly.js inside, which
needs nothing and opens offline). :func:`export_results` writes every table of a chapter's
results file (``book/NN_name.results.json``, :func:`lmgeometry.report.results.save_results`)
to CSV or parquet (``lmgeometry results export``); :func:`results_tables` reads them as
pandas frames.

A table of a results file is a list of records (JSON objects) at any depth of the file:
``layers``, ``claims``, ... at its top, ``models`` or ``training.<run>...`` further down. Lists
of plain values (a chapter's generated ``sentences``, ``parameters.models``) and single values
are not tables and are not exported.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmgeometry.errors import OptionalDependencyError, UsageError
from lmgeometry.io.paths import check_writable, user_path
from lmgeometry.report.results import RESULTS_GLOB, load_results

if TYPE_CHECKING:

    import pandas as pd

__all__ = [
    "export_results",
    "export_many",
    "FORMATS",
    "IMAGE_SUFFIXES",
    "results_tables",
    "save",
]

#: File types :func:`save` writes with kaleido (the rest is HTML).
IMAGE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".webp")

#: Table formats of :func:`export_results`.
FORMATS = ("csv", "parquet")

_RESULTS_SUFFIX = ".results.json"

_INSTALL_KALEIDO = ("pip install kaleido (or pip install 'lmgeometry[images]'), then run "
                    "again; or save to .html, which needs nothing")


def save(fig: Any, path: str | Path, *, width: int | None = None, height: int | None = None,
         scale: float | None = None) -> Path:
    """Write a plotly figure to ``path``; the suffix says how.

    ``.html``: one self-contained page with plotly.js inside (about 5 MB; opens offline, stays
    interactive), nothing to install. ``.png``, ``.svg``, ``.pdf`` (``.jpg``, ``.webp``): a
    static image drawn by kaleido in a headless Chrome or Chromium; kaleido is the optional
    extra ``lmgeometry[images]``.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or dict
        The figure (for example one of :mod:`lmgeometry.report.plots`' builders).
    path : str or pathlib.Path
        The file to write (``~`` expanded; missing folders are created).
    width, height : int, optional
        Image size in pixels (default: the figure's layout, else kaleido's 700 x 500).
    scale : float, optional
        Image resolution multiplier (``2`` for a sharper PNG).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    UsageError
        ``fig`` is not a plotly figure, or the suffix is none of the above.
    OptionalDependencyError
        An image was asked for and kaleido is not installed (the message says
        ``pip install kaleido``), or kaleido finds no Chrome or Chromium.
    """
    import plotly.io as pio

    if not (isinstance(fig, dict) or hasattr(fig, "to_plotly_json")):
        raise UsageError(f"save(fig, path): fig must be a plotly figure, not a "
                         f"{type(fig).__name__}")
    path = user_path(path)
    suffix = path.suffix.lower()
    if suffix not in (".html", *IMAGE_SUFFIXES):
        raise UsageError(f"save(fig, {str(path)!r}): cannot tell the format from "
                         f"{suffix or 'no suffix'}; use .html or one of "
                         f"{', '.join(IMAGE_SUFFIXES)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".html":
        pio.write_html(fig, path, include_plotlyjs=True, full_html=True)
        return path
    if importlib.util.find_spec("kaleido") is None:
        raise OptionalDependencyError(f"saving {path.name} needs kaleido, which is not "
                                      f"installed: {_INSTALL_KALEIDO}")
    try:
        pio.write_image(fig, path, format=suffix[1:], width=width, height=height, scale=scale)
    except RuntimeError as exc:
        if "chrome" not in str(exc).lower():
            raise
        raise OptionalDependencyError(
            f"saving {path.name}: kaleido draws images in Chrome or Chromium and finds none; "
            "install Chromium (e.g. apt-get install chromium) or run plotly_get_chrome, or "
            "save to .html") from exc
    return path


def _tables(value: Any, prefix: str = "") -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Every list of records under ``value``, named by its keys joined with dots."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _tables(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        yield prefix, value


def _cell(value: Any) -> Any:
    """A list or object inside a record as JSON text (one cell holds one value)."""
    return json.dumps(value, sort_keys=True) if isinstance(value, list | dict) else value


def _frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Records as a frame: every key a column (in first-seen order), nested values as JSON,
    and a column of several kinds of value (text and numbers) as text, so parquet can hold it."""
    import pandas as pd

    columns = list(dict.fromkeys(key for record in records for key in record))
    frame = pd.DataFrame([{k: _cell(r.get(k)) for k in columns} for r in records],
                         columns=columns)
    for name in frame.select_dtypes(include="object").columns:
        kinds = {type(v) for v in frame[name] if v is not None}
        if len(kinds - {int, float}) > 0 and len(kinds) > 1:
            frame[name] = [None if v is None else str(v) for v in frame[name]]
    return frame


def results_tables(results: str | Path | Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The tables of a results file as pandas frames, by name.

    Parameters
    ----------
    results : str, pathlib.Path or mapping
        A results file (``book/NN_name.results.json``) or its content.

    Returns
    -------
    dict of str to pandas.DataFrame
        Name (``"layers"``, ``"claims"``, ``"models"``, a nested table's keys joined with
        dots) -> one row per record, one column per key. A list or object in a cell is its
        JSON text; a column holding both text and numbers holds text.
    """
    data = results if isinstance(results, Mapping) else load_results(results)
    return {name: _frame(records) for name, records in _tables(data)}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "table"


def _write(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    if fmt == "csv":
        frame.to_csv(tmp, index=False)
    else:
        frame.to_parquet(tmp, index=False)
    tmp.replace(path)


def _results_files(source: Path) -> list[Path]:
    if source.is_dir():
        files = sorted(source.glob(RESULTS_GLOB))
        if not files:
            raise UsageError(f"{source} holds no results files ({RESULTS_GLOB}); pass a "
                             "results file or the book folder (book/)")
        return files
    if not source.is_file():
        raise UsageError(f"{source} does not exist: pass a results file "
                         f"(book/NN_name{_RESULTS_SUFFIX}) or a folder of them")
    return [source]


def export_results(results: str | Path | Mapping[str, Any], out_dir: str | Path,
                   format: str = "csv") -> list[Path]:
    """Write every table of a chapter's results file to CSV or parquet files.

    Parameters
    ----------
    results : str, pathlib.Path or mapping
        A results file (``book/03_context_measures.results.json``), a folder of them
        (``book/``: each file's tables go to a subfolder named after the chapter), or a results
        mapping (its tables go to ``out_dir`` itself).
    out_dir : str or pathlib.Path
        Where to write (created if needed; ``~`` expanded). Existing files of the same names
        are replaced.
    format : {"csv", "parquet"}
        ``csv``: UTF-8, a header row, no index, an empty cell for a missing value (and for an
        empty text); a reader guesses the types back (``pandas.read_csv``: ``"000"`` becomes
        0; pass ``dtype=str`` for text). ``parquet``: typed columns (pyarrow), read back equal
        to :func:`results_tables`' frames.

    Returns
    -------
    list of pathlib.Path
        The files written: ``<out_dir>[/<chapter>]/<table>.<format>``, one per table
        (:func:`results_tables`; characters other than letters, digits, ``.``, ``_`` and ``-``
        in a name become ``_``).

    Raises
    ------
    UsageError
        An unknown format, a path that is neither a results file nor a folder of them, a
        results file that is not valid JSON (named) or holds no table, or an ``out_dir`` that
        is a file or cannot be written (:class:`~lmgeometry.errors.PathError`).
    """
    if format not in FORMATS:
        raise UsageError(f"format must be one of {FORMATS}, not {format!r}")
    out = check_writable(out_dir, "the output folder (--out)")
    if isinstance(results, Mapping):
        jobs = [(results, out, "the results given")]
    else:
        source = user_path(results)
        files = _results_files(source)
        folder = source.is_dir()
        jobs = [(path, out / path.name.removesuffix(_RESULTS_SUFFIX) if folder else out,
                 str(path)) for path in files]
    written = []
    for data, target, what in jobs:
        tables = results_tables(data)
        if not tables and len(jobs) == 1:
            raise UsageError(f"{what} holds no table (no list of records)")
        target.mkdir(parents=True, exist_ok=True)
        for name, frame in tables.items():
            path = target / f"{_safe(name)}.{format}"
            _write(frame, path, format)
            written.append(path)
    return written


def export_many(sources: Sequence[str | Path], out: str | Path, *, format: str = "csv"
                ) -> list[tuple[str | Path, list[Path]]]:
    """``lmgeometry results export PATH... --out DIR``: one results file's tables go to
    ``DIR``; with several paths, each file's go to ``DIR/<chapter>`` (a folder's, as
    :func:`export_results` writes them).

    Returns
    -------
    list of (source, files written)
    """
    folder = check_writable(out, "the output folder (--out)")
    done = []
    for source in sources:
        path = user_path(source)
        target = folder / path.name.removesuffix(_RESULTS_SUFFIX) \
            if len(sources) > 1 and path.is_file() else folder
        done.append((source, export_results(path, target, format=format)))
    return done
