"""The "About this build" page: what produced the book, read from what the run recorded.

``lmgeometry book`` writes two files next to each executed chapter: its execution manifest
``NN_name.exec.json`` (:mod:`lmgeometry.report.cache`: source, parameters, package, library
versions, model fingerprints, store entries, sha256 of the notebook and results file) and its
run record ``NN_name.run.json`` (:func:`write_run_record`: wall time, peak memory, when, on
what machine). The last chapter, ``99_about``, reads them all with
:func:`lmgeometry.report.results.load_results` (so it runs again whenever one of them
changes) and :func:`build_facts` turns them into the page's tables; the data files come from
the package's data manifest (every file the chapters can read, each checked against its
sha256 when read).
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lmgeometry.report.results import load_results
from lmgeometry.report.toc import toc_docnames

__all__ = [
    "BUILD_OUTPUTS",
    "book_chapters",
    "build_facts",
    "chapter_anchor",
    "duration",
    "HASH_DIGITS",
    "machine",
    "PROJECT_ENV",
    "project_state",
    "RUN_SUFFIX",
    "run_record_path",
    "shown",
    "shown_spec",
    "source_sentence",
    "write_run_record",
]

RUN_SUFFIX = ".run.json"

#: What the book pipeline writes into the checkout (executed notebooks, results files,
#: execution manifests and run records in ``book/``; the HTML in ``_build/``): changes there
#: are the build's output, so they do not make the sources differ from their commit.
BUILD_OUTPUTS = ("book", "_build")

#: Hex digits of a sha256 or commit the About page shows (the full one on hover).
HASH_DIGITS = 12

#: Set by ``lmgeometry book`` while chapters execute to the project checkout they come from,
#: so that the About page of a separate (``--out``) book names the commit too.
PROJECT_ENV = "LMGEOMETRY_BOOK_PROJECT"


def run_record_path(notebook: Path) -> Path:
    """``book/NN_name.run.json`` for ``book/NN_name.ipynb``."""
    return notebook.with_name(notebook.stem + RUN_SUFFIX)


def chapter_anchor(name: str) -> str:
    """The About page's anchor of a chapter's row (``build-03_context_measures``)."""
    return f"build-{name}"


@functools.cache
def machine() -> dict[str, Any]:
    """The machine a chapter ran on: OS, CPU model and cores, memory, accelerator (read once
    per process: the same for every chapter of a build)."""
    cpu = platform.processor() or platform.machine()
    memory = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    import torch

    accelerator = (torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
    return {"os": f"{platform.system()} {platform.release()}", "cpu": cpu,
            "cores": os.cpu_count(), "memory_gib": memory, "accelerator": accelerator}


def write_run_record(notebook: Path, seconds: float, peak_rss: int | None) -> Path:
    """Write how a chapter's execution went (``NN_name.run.json``) next to its notebook."""
    from lmgeometry.report.results import save_results

    record = {"chapter": notebook.stem, "seconds": round(seconds, 1),
              "peak_memory_mib": None if peak_rss is None else round(peak_rss / 2**20),
              "executed": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
              "machine": dict(machine())}
    return save_results(run_record_path(notebook), record)


def project_state(root: Path) -> dict[str, Any]:
    """The git commit of ``root`` and whether its sources differ from it.

    Returns
    -------
    dict
        ``commit`` (None outside a git checkout), ``clean`` (whether no tracked file of
        ``root`` outside :data:`BUILD_OUTPUTS` has uncommitted changes; None without a
        commit) and ``changed`` (those files, relative to the repository's top).
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, check=False, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    diff = None if commit is None else git(  # staged or not, against the commit
        "diff", "--name-only", "HEAD", "--", ".",
        *(f":(exclude){path}" for path in BUILD_OUTPUTS))
    changed = (diff or "").splitlines()
    return {"commit": commit, "clean": None if diff is None else not changed,
            "changed": changed}


def source_sentence(project: dict[str, Any]) -> str:
    """Where the chapters' code and sources came from (Markdown), from :func:`project_state`:
    the commit (12 hex digits, the full one on hover) and the files that differed from it."""
    commit = project.get("commit")
    if commit is None:
        return "outside a git checkout, so no commit can be named"
    text = (f'from the code and chapter sources of commit <code title="{commit}">'
            f"{commit[:HASH_DIGITS]}</code>")
    changed = project.get("changed") or []
    if project.get("clean") is False:
        named = ", ".join(f"`{path}`" for path in changed[:3])
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        text += (" **with uncommitted changes** to " + (named + more if changed else
                                                          "tracked files"))
    return text


def duration(seconds: float | None) -> str:
    """A wall time for a reader: ``"12.3 s"``, ``"4 min 0 s"``, ``"1 h 2 min"``; ``"–"`` for
    none."""
    if seconds is None or seconds != seconds:  # None or NaN
        return "–"
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _empty(value: Any) -> bool:
    if isinstance(value, float):
        return value != value
    return value is None or (isinstance(value, str) and value.strip() in ("", "–"))


def shown(table: pd.DataFrame, hashes: Sequence[str] = ()) -> pd.DataFrame:
    """``table`` as the About page shows it: the columns empty in every row dropped, the
    ``hashes`` columns cut to :data:`HASH_DIGITS` hex digits (the full value on hover:
    :class:`lmgeometry.report.figures.Abbreviated`), and ``seconds`` as a ``wall time``
    (:func:`duration`); a model folder by its last path parts, not the building machine's
    absolute path (:func:`shown_spec`, in the ``model`` and ``resolved name`` columns)."""
    from lmgeometry.report.figures import Abbreviated

    table = table.copy()
    for column in ("model", "resolved name"):
        if column in table:
            table[column] = table[column].map(lambda v: shown_spec(v) if isinstance(v, str)
                                              else v)
    for column in hashes:
        if column in table:
            table[column] = table[column].map(
                lambda v: v if _empty(v) else Abbreviated(str(v), HASH_DIGITS))
    if "seconds" in table:
        table["seconds"] = table["seconds"].map(duration)
        table = table.rename(columns={"seconds": "wall time"})
    if len(table):
        table = table[[c for c in table.columns if not table[c].map(_empty).all()]]
    return table


def book_chapters(folder: str | Path, exclude: Sequence[str] = ()) -> list[str]:
    """The chapters (``NN_name``) of the book whose executed notebooks are in ``folder``, in
    the reading order of the book's ``_toc.yml`` beside ``folder``; in number order where
    there is none yet (an ``--out`` book gets its ``_toc.yml`` after its chapters ran)."""
    folder = Path(folder).resolve()
    toc = folder.parent / "_toc.yml"
    names = ([d.rpartition("/")[2] for d in toc_docnames(toc)] if toc.is_file()
             else sorted(p.stem for p in folder.glob("*.ipynb")))
    return [n for n in names if n not in exclude and (folder / f"{n}.ipynb").is_file()]


#: The columns of :func:`_chapter_rows` (also when there is no chapter to describe).
_CHAPTER_COLUMNS = ["chapter", "parameters", "seconds", "peak memory (MiB)", "executed (UTC)",
                    "results sha256", "notebook sha256", "source sha256", "store entries",
                    "machine", "environment", "models", "stores"]


def _chapter_rows(folder: Path, names: list[str]) -> pd.DataFrame:
    rows = []
    for name in names:
        exec_path = folder / f"{name}.exec.json"
        run_path = folder / f"{name}{RUN_SUFFIX}"
        manifest = load_results(exec_path) if exec_path.is_file() else {}
        run = load_results(run_path) if run_path.is_file() else {}
        parameters = {k: v for k, v in (manifest.get("parameters") or {}).items()
                      if k != "results_path"}
        rows.append({
            "chapter": name,
            "parameters": ", ".join(f"{k}={v}" for k, v in parameters.items()) or "defaults",
            "seconds": run.get("seconds"),
            "peak memory (MiB)": run.get("peak_memory_mib"),
            "executed (UTC)": run.get("executed"),
            "results sha256": (manifest.get("outputs") or {}).get("results"),
            "notebook sha256": (manifest.get("outputs") or {}).get("notebook"),
            "source sha256": (manifest.get("source") or {}).get("sha256"),
            "store entries": len(manifest.get("stores") or []),
            "machine": run.get("machine"),
            "environment": manifest.get("environment"),
            "models": manifest.get("models") or {},
            "stores": manifest.get("stores") or [],
        })
    return pd.DataFrame(rows, columns=_CHAPTER_COLUMNS)


def shown_spec(spec: str) -> str:
    """A model spec as the About page shows it: a model folder by its last two path parts
    (the run and its checkpoint: ``causal-L4-H128-300k-eccb633e715c3524/step-000000``), not the
    building machine's absolute path; an alias or hub id as it is.

    Examples
    --------
    >>> shown_spec("/root/.cache/lmgeometry/pretrained/mlm-L4-abc/step-000001")
    '…/mlm-L4-abc/step-000001'
    >>> shown_spec("minilm-l6")
    'minilm-l6'
    """
    path = Path(str(spec))
    return "…/" + "/".join(path.parts[-2:]) if path.is_absolute() else str(spec)


def _model_rows(chapters: pd.DataFrame, facts: dict[str, dict[str, Any]]) -> pd.DataFrame:
    used: dict[tuple[str, str], list[str]] = {}
    for row in chapters.itertuples():
        for spec, fingerprint in row.models.items():
            used.setdefault((spec, fingerprint), []).append(row.chapter[:2])
        for store in row.stores:
            if store.get("fingerprint"):
                key = (store["model"], store["fingerprint"])
                used.setdefault(key, [])
                if row.chapter[:2] not in used[key]:
                    used[key].append(row.chapter[:2])
    rows = []
    for (spec, fingerprint), chapters_used in sorted(used.items()):
        info = facts.get(spec, {})
        caveats = info.get("caveats") or []
        rows.append({"model": spec, "resolved name": info.get("name", spec),
                     "kind": info.get("kind", "–"), "fingerprint": fingerprint,
                     "chapters": ", ".join(sorted(chapters_used)),
                     "caveats": "; ".join(caveats) if isinstance(caveats, list) else caveats})
    return pd.DataFrame(rows, columns=["model", "resolved name", "kind", "fingerprint",
                                       "chapters", "caveats"])


def _store_rows(chapters: pd.DataFrame) -> pd.DataFrame:
    rows = [{"chapter": row.chapter, "entry": store.get("entry"), "model": store.get("model"),
             "corpus": store.get("corpus"), "corpus digest": store.get("corpus_digest"),
             "model fingerprint": store.get("fingerprint")}
            for row in chapters.itertuples() for store in row.stores]
    return pd.DataFrame(rows, columns=["chapter", "entry", "model", "corpus", "corpus digest",
                                       "model fingerprint"])


def build_facts(folder: str | Path, chapters: list[str],
                model_facts: list[dict[str, Any]] | None = None,
                root: str | Path | None = None) -> dict[str, Any]:
    """Everything the About page shows, from the book folder's records.

    Parameters
    ----------
    folder : str or pathlib.Path
        The executed notebooks' folder (``book/``).
    chapters : list of str
        The chapters to describe (``NN_name``), in reading order.
    model_facts : list of dict, optional
        :meth:`LoadedModel.facts` of the models (the introduction's results file holds
        them): resolved name, kind and caveats per spec.
    root : str or pathlib.Path, optional
        The project checkout (its git state); default :data:`PROJECT_ENV`, else the folder's
        parent.

    Returns
    -------
    dict
        ``project`` (:func:`project_state`), ``chapters``, ``models``, ``stores``, ``data``
        (DataFrames) and ``environment`` and ``machines`` (lists of the distinct library
        versions and machines the chapters recorded).
    """
    from lmgeometry.io import datafiles

    folder = Path(folder).resolve()
    table = _chapter_rows(folder, chapters)
    facts = {f["spec"]: f for f in model_facts or []}
    manifest = datafiles.manifest()
    environments = [e for e in table["environment"] if e]
    machines = [m for m in table["machine"] if m]
    return {
        "project": project_state(Path(root or os.environ.get(PROJECT_ENV) or folder.parent)),
        "chapters": table.drop(columns=["machine", "environment", "models", "stores"]),
        "models": _model_rows(table, facts),
        "stores": _store_rows(table),
        "data": manifest[["name", "dataset", "sha256", "size", "licence", "url"]],
        "environment": [dict(t) for t in {tuple(sorted(e.items())) for e in environments}],
        "machines": [dict(t) for t in {tuple(sorted(m.items())) for m in machines}],
    }
