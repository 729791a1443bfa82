"""Warm rebuilds: what a chapter's execution depended on, and whether it must run again.

After ``lmgeometry book`` executes a chapter it writes ``book/NN_name.exec.json`` next to the
executed notebook: the chapter's **execution manifest**. It records everything the executed
notebook and its results file were computed from:

* ``source``: sha256 of the jupytext source ``notebooks/NN_name.py`` (its own parameter
  defaults included);
* ``parameters``: the values the pipeline injected (``book_params.yml`` and ``-p``);
* ``package``: the lmgeometry version;
* ``code``: the package's files the chapter's numbers can depend on, with their digests
  (:func:`lmgeometry.sources.file_digest`: code by its syntax without docstrings, data files by
  their bytes): every module the chapter's kernel had imported when it finished (read in the
  kernel after the last cell, :func:`lmgeometry.sources.loaded_files`) and the code that
  computed the cache entries it read (each store entry records it in its ``meta.json``, and
  that code is part of the entry's key). A warm run that read an entry without importing the
  extraction code still depends on it; a change to ``cli.py`` re-executes no chapter;
* ``environment``: the Python version, the word-table version (spaCy and its English model)
  and the versions of the libraries that compute or draw the numbers (:data:`LIBRARIES`), and
  the figure bundle mode (``LMGEOMETRY_FIGURE_BUNDLE``: what the figure outputs carry);
* ``models``: the fingerprint (a hash of the resolved config, weight and tokenizer files) of
  every model named in the ``models`` parameter;
* ``stores``: the activation-store entries the chapter opened while it ran (recorded through
  :mod:`lmgeometry.trace`; a chapter cannot be asked in advance which ones it will read), with
  their key, model spec, model fingerprint and corpus digest;
* ``inputs``: the book's own files the chapter read while it ran (other chapters' results
  files and execution records, read with :func:`lmgeometry.report.results.load_results`), by
  name relative to the notebook's folder, with their sha256;
* ``outputs``: sha256 of the executed notebook and of the results file.

The manifest holds no timestamps or paths of this machine (other than a local-folder model
spec), so it is committed with the book and a fresh clone can skip as well. The next build
recomputes the same facts and skips the chapter when they all match (:func:`stale_reasons`
says why not otherwise). A changed store input shows up either in the facts that make up its
corpus (parameters, package source, data manifest, word-table version) or in the fingerprint
of its model, which is recomputed for every recorded entry, or in the extraction code it records
(part of its key). ``lmgeometry book --force`` executes regardless.

The HTML build is skipped in the same way when none of its inputs changed
(:func:`html_inputs`).
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from lmgeometry import __version__, sources
from lmgeometry.report import results
from lmgeometry.report.toc import is_page, page_file

__all__ = [
    "BookInputs",
    "chapter_key",
    "code_records",
    "EDITED_DURING_RUN",
    "unedited_since",
    "file_digest",
    "html_code",
    "documented_files",
    "HTML_CODE",
    "html_inputs",
    "input_records",
    "html_is_current",
    "HTML_STAMP",
    "HTML_LIBRARIES",
    "key_summary",
    "LIBRARIES",
    "manifest_path",
    "MANIFEST_FORMAT",
    "MANIFEST_SUFFIX",
    "MODEL_PARAMS",
    "PACKAGE_DIR",
    "read_manifest",
    "restamp_notebook",
    "stale_reasons",
    "store_records",
    "write_html_stamp",
    "write_manifest",
]

#: Version of the manifest layout; another version re-executes.
MANIFEST_FORMAT = 2

#: Suffix of a chapter's execution manifest (``book/NN_name.exec.json``).
MANIFEST_SUFFIX = ".exec.json"

#: The package folder whose files a manifest's ``code`` names (``src/lmgeometry``).
PACKAGE_DIR = Path(__file__).resolve().parents[1]

#: The package code the HTML build runs (relative to :data:`PACKAGE_DIR`): the pipeline that
#: writes the Sphinx configuration and the build's archive, the toc reader and the offline
#: check it calls, and the Sphinx extension with its scripts and styles.
HTML_CODE = ("report/book", "report/publish.py", "report/toc.py", "report/offline.py",
             "report/_ext")

#: Parameters whose value names models (a spec or a list of specs).
MODEL_PARAMS = ("models",)

#: Distributions that compute or draw the chapters' numbers: a new version re-executes.
LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas", "pyarrow", "torch", "transformers",
             "tokenizers", "safetensors", "gguf", "umap-learn", "plotly", "nltk", "wordfreq",
             "isoscore")

#: Distributions that render the HTML book.
HTML_LIBRARIES = ("jupyter-book", "sphinx", "myst-nb", "sphinx-book-theme",
                  "sphinx-mathjax-offline", "plotly", "sphinxcontrib-bibtex", "pybtex")

#: Where the inputs of the last HTML build are recorded (relative to the book folder).
HTML_STAMP = "_build/html.inputs.json"


def file_digest(path: Path) -> str | None:
    """sha256 (hex) of a file's bytes, or None if it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None



def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def _environment() -> dict[str, str]:
    from lmgeometry.io.corpus import word_table_version
    from lmgeometry.report.figures import bundle_mode

    versions = {"python": ".".join(platform.python_version_tuple()[:2]),
                "word_table": word_table_version(),
                "figure_bundle": bundle_mode()}  # LMGEOMETRY_FIGURE_BUNDLE: what outputs hold
    versions.update({dist: _version(dist) for dist in LIBRARIES})
    return versions


@dataclass
class BookInputs:
    """What every chapter of one build shares, computed once per build.

    Attributes
    ----------
    version : str
        ``lmgeometry.__version__``.
    environment : dict
        Python, word-table and library versions (:data:`LIBRARIES`), and the figure bundle
        mode (:func:`lmgeometry.report.figures.bundle_mode`).
    """

    version: str
    environment: dict[str, str]
    _fingerprints: dict[str, str | None] = field(default_factory=dict, repr=False)
    _errors: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def current(cls) -> BookInputs:
        """The running package's version and environment."""
        return cls(version=__version__, environment=_environment())

    def fingerprint(self, spec: str) -> str | None:
        """A model's fingerprint (memoised for the build); None if it cannot be resolved.

        Parameters
        ----------
        spec : str
            Offline alias, hub id or local folder
            (:func:`lmgeometry.io.models.resolve_fingerprint`).

        Returns
        -------
        str or None
            64 hex digits; None when resolving failed (:meth:`fingerprint_error` says why).
        """
        if spec not in self._fingerprints:
            from lmgeometry.errors import LmgeometryError
            from lmgeometry.io.models import resolve_fingerprint

            try:
                self._fingerprints[spec] = resolve_fingerprint(spec)
            except (LmgeometryError, OSError, ValueError) as exc:
                self._fingerprints[spec] = None
                self._errors[spec] = f"{type(exc).__name__}: {exc}"
        return self._fingerprints[spec]

    def fingerprint_error(self, spec: str) -> str:
        """Why :meth:`fingerprint` returned None for ``spec`` (empty if it did not)."""
        self.fingerprint(spec)
        return self._errors.get(spec, "")


def _model_specs(parameters: dict[str, Any]) -> list[str]:
    specs: list[str] = []
    for name in MODEL_PARAMS:
        value = parameters.get(name)
        values = [value] if isinstance(value, str) else value
        if isinstance(values, list | tuple):
            specs += [v for v in values if isinstance(v, str) and v not in specs]
    return specs


def chapter_key(source: Path, parameters: dict[str, Any], declared: dict[str, Any],
                inputs: BookInputs) -> dict[str, Any]:
    """What a chapter's execution depends on, known before it runs.

    Parameters
    ----------
    source : pathlib.Path
        The jupytext source.
    parameters : dict
        The injected values (:func:`lmgeometry.report.book.resolve_parameters`).
    declared : dict
        The chapter's own defaults (where its ``models`` come from when not injected).
    inputs : BookInputs
        The build's package and environment facts.

    Returns
    -------
    dict
        ``source``, ``parameters``, ``package``, ``environment`` and ``models`` of the manifest
        (see the module docstring); a model that cannot be fingerprinted has None. The
        ``code`` the chapter depends on is known only after it ran (:func:`code_records`).
    """
    effective = {**declared, **parameters}
    return {
        "source": {"path": f"notebooks/{source.name}", "sha256": file_digest(source)},
        "parameters": dict(parameters),
        "package": {"version": inputs.version},
        "environment": dict(inputs.environment),
        "models": {spec: inputs.fingerprint(spec) for spec in _model_specs(effective)},
    }


def store_records(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct store entries opened during an execution, from its trace events.

    Parameters
    ----------
    events : iterable of dict
        :func:`lmgeometry.trace.read_events` of the chapter's trace.

    Returns
    -------
    list of dict
        ``entry``, ``key``, ``model``, ``fingerprint``, ``corpus``, ``corpus_digest``, sorted by
        entry name (then model), one per (entry, model).
    """
    fields = ("entry", "key", "model", "fingerprint", "corpus", "corpus_digest")
    seen = {}
    for event in events:
        if event.get("event") == "store":
            record = {name: event.get(name) for name in fields}
            seen[(str(record["entry"]), str(record["model"]))] = record
    return [seen[k] for k in sorted(seen)]


def code_records(events: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The package files an execution depended on, from its ``code`` trace events.

    Parameters
    ----------
    events : iterable of dict
        The kernel's own record (:func:`lmgeometry.sources.loaded_files`, after its last cell)
        and the code recorded by each cache entry it read.

    Returns
    -------
    dict
        Path relative to the package folder -> digest, sorted. Where two events give one file
        different digests (an entry computed by other code than the kernel ran), the entry's
        is kept: it is the code the numbers came from, and it is then stale.
    """
    found: dict[str, str] = {}
    kernel: dict[str, str] = {}
    for event in events:
        if event.get("event") != "code" or not isinstance(event.get("files"), dict):
            continue
        target = kernel if event.get("kernel") else found
        for name, digest in event["files"].items():
            target.setdefault(str(name), str(digest))
    return dict(sorted({**kernel, **found}.items()))


#: The digest recorded for a package file edited while its chapter ran: it matches no file, so
#: the next build runs the chapter again.
EDITED_DURING_RUN = "edited while the chapter ran"


def unedited_since(code: dict[str, str], since: float) -> dict[str, str]:
    """``code`` (:func:`code_records`) with the digest of every file modified at or after
    ``since`` (seconds since the epoch: when the chapter's kernel started) replaced by
    :data:`EDITED_DURING_RUN`.

    The kernel's record digests the files after its last cell: a file edited while the
    chapter ran would be recorded with content the kernel may never have run, and the chapter
    would look current with its old numbers. Such a file makes the chapter stale instead.

    Examples
    --------
    >>> unedited_since({}, 0.0)
    {}
    """
    out = {}
    for name, digest in code.items():
        try:
            edited = (PACKAGE_DIR / name).stat().st_mtime >= since
        except OSError:  # gone since: its digest no longer matches anyway
            edited = False
        out[name] = EDITED_DURING_RUN if edited else digest
    return out


def input_records(events: Iterable[dict[str, Any]], folder: Path) -> list[dict[str, str]]:
    """The distinct book files read during an execution (``input`` trace events).

    Returns
    -------
    list of dict
        ``path`` (relative to ``folder``, the executed notebooks' folder; files outside it
        are not the book's and are left out) and ``sha256``, sorted by path.
    """
    seen = {}
    folder = folder.resolve()
    for event in events:
        if event.get("event") != "input":
            continue
        try:
            name = Path(str(event.get("path"))).relative_to(folder).as_posix()
        except ValueError:
            continue
        seen[name] = {"path": name, "sha256": str(event.get("sha256"))}
        if "before" in event:  # a listing of results files (report.results.list_results)
            seen[name]["before"] = event["before"]
    return [seen[k] for k in sorted(seen)]


def manifest_path(notebook: Path) -> Path:
    """``book/NN_name.exec.json`` for ``book/NN_name.ipynb``."""
    return notebook.with_name(notebook.stem + MANIFEST_SUFFIX)


def write_manifest(notebook: Path, key: dict[str, Any], stores: list[dict[str, Any]],
                   results: Path, inputs: list[dict[str, str]] | None = None,
                   code: dict[str, str] | None = None) -> Path:
    """Write a chapter's execution manifest next to its executed notebook.

    Parameters
    ----------
    notebook : pathlib.Path
        The executed notebook, already written.
    key : dict
        :func:`chapter_key`, computed before the execution.
    stores : list of dict
        :func:`store_records` of the execution.
    results : pathlib.Path
        The chapter's results file (absent if the chapter wrote none).
    inputs : list of dict, optional
        :func:`input_records` of the execution.
    code : dict, optional
        :func:`code_records` of the execution.

    Returns
    -------
    pathlib.Path
        The manifest (JSON, sorted keys, no timestamps: identical inputs give identical bytes).
    """
    manifest = {"format": MANIFEST_FORMAT, "chapter": notebook.stem, **key, "stores": stores,
                "inputs": list(inputs or []), "code": dict(sorted((code or {}).items())),
                "outputs": {"notebook": file_digest(notebook), "results": file_digest(results)}}
    return _write_manifest_file(notebook, manifest)


def _write_manifest_file(notebook: Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest`` beside ``notebook`` atomically (sorted keys, one space a level)."""
    path = manifest_path(notebook)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def restamp_notebook(notebook: Path, before: str | None) -> bool:
    """Record in the manifest the notebook as the pipeline itself changed it after execution
    (an ``--out`` book's links to absent chapters made text), when the manifest recorded it
    as it was ``before`` the change (sha256); otherwise leave the manifest as it is, so that a
    notebook changed by anything else is still executed again. Returns whether it was."""
    recorded = read_manifest(notebook)
    if recorded is None or before is None or recorded.get("outputs", {}).get("notebook") != before:
        return False
    recorded["outputs"]["notebook"] = file_digest(notebook)
    _write_manifest_file(notebook, recorded)
    return True


def read_manifest(notebook: Path) -> dict[str, Any] | None:
    """The execution manifest next to ``notebook``; None if missing or unreadable."""
    try:
        data = json.loads(manifest_path(notebook).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _changed(old: dict[str, Any], new: dict[str, Any], limit: int = 4) -> str:
    names = sorted(set(old) | set(new), key=str)
    diffs = [f"{k} {old.get(k, '(default)')!r} -> {new.get(k, '(default)')!r}"
             for k in names if old.get(k, "(default)") != new.get(k, "(default)")]
    more = f" (+{len(diffs) - limit} more)" if len(diffs) > limit else ""
    return ", ".join(diffs[:limit]) + more



def _output_reasons(recorded: dict[str, Any], notebook: Path, results: Path) -> list[str]:
    outputs = recorded.get("outputs") or {}
    reasons = []
    for what, path, digest in (("executed notebook", notebook, outputs.get("notebook")),
                               ("results file", results, outputs.get("results"))):
        current = file_digest(path)
        if current != digest:
            state = "missing" if current is None else (
                "present, but none was written" if digest is None else "changed")
            reasons.append(f"{what} {path.name} {state} since the execution")
    return reasons


def _input_reasons(recorded: dict[str, Any], folder: Path) -> list[str]:
    reasons = []
    for item in recorded.get("inputs") or []:
        if "before" in item:
            names = [p.name for p in results.listed(folder, item["path"], item["before"])]
            if results.listing_digest(names) != item.get("sha256"):
                reasons.append(f"the files {item['path']} changed since the execution (one "
                               "appeared or went)")
            continue
        current = file_digest(folder / item["path"])
        if current != item.get("sha256"):
            state = "missing" if current is None else "changed"
            reasons.append(f"input {item['path']} {state} since the execution")
    return reasons


def _current_digest(name: str) -> str | None:
    path = PACKAGE_DIR / name
    try:
        return sources.file_digest(path)
    except (OSError, SyntaxError, ValueError):
        return None


def _code_reasons(recorded: dict[str, Any]) -> list[str]:
    code = recorded.get("code")
    if not code:
        return ["no record of the code the chapter ran (its next execution records it)"]
    edited = sorted(name for name, digest in code.items() if digest == EDITED_DURING_RUN)
    changed = sorted(name for name, digest in code.items()
                     if digest != EDITED_DURING_RUN and _current_digest(name) != digest)
    return [f"{what}: {', '.join(names[:4])}"
            + (f" (+{len(names) - 4} more)" if len(names) > 4 else "")
            for what, names in (("code it ran changed", changed),
                                ("code edited while it ran", edited)) if names]


def _key_reasons(recorded: dict[str, Any], key: dict[str, Any],
                 inputs: BookInputs) -> list[str]:
    reasons = []
    if recorded.get("source") != key["source"]:
        reasons.append(f"source {key['source']['path']} changed")
    if recorded.get("parameters") != key["parameters"]:
        reasons.append("parameters changed: "
                       + _changed(recorded.get("parameters") or {}, key["parameters"]))
    package = recorded.get("package") or {}
    if package.get("version") != key["package"]["version"]:
        reasons.append(f"lmgeometry {package.get('version')} -> {key['package']['version']}")
    if recorded.get("environment") != key["environment"]:
        reasons.append("environment changed: "
                       + _changed(recorded.get("environment") or {}, key["environment"]))
    for spec, fingerprint in key["models"].items():
        if fingerprint is None:
            reasons.append(f"cannot fingerprint model {spec} ({inputs.fingerprint_error(spec)})")
    if recorded.get("models") != key["models"]:
        old, new = recorded.get("models") or {}, key["models"]
        reasons.append("models changed: " + _changed(
            {k: (v or "?")[:12] for k, v in old.items()},
            {k: (v or "?")[:12] for k, v in new.items()}))
    return reasons


def _store_reasons(recorded: dict[str, Any], inputs: BookInputs) -> list[str]:
    reasons = []
    for store in recorded.get("stores") or []:
        spec, fingerprint = store.get("model"), store.get("fingerprint")
        if not spec or not fingerprint:
            continue  # an entry written from arrays: nothing to recompute
        current = inputs.fingerprint(spec)
        if current != fingerprint:
            now = current[:12] if current else f"unresolvable: {inputs.fingerprint_error(spec)}"
            reasons.append(f"model {spec} behind store entry {store.get('entry')} changed "
                           f"(fingerprint {fingerprint[:12]} -> {now}): its key changes")
    return reasons


def stale_reasons(recorded: dict[str, Any] | None, key: dict[str, Any], notebook: Path,
                  results: Path, inputs: BookInputs) -> list[str]:
    """Why a chapter must be executed again; empty when its last execution still holds.

    Parameters
    ----------
    recorded : dict or None
        The chapter's manifest (:func:`read_manifest`).
    key : dict
        :func:`chapter_key` now.
    notebook, results : pathlib.Path
        The executed notebook and the results file the manifest describes.
    inputs : BookInputs
        The build's facts (used to re-fingerprint the models behind recorded store entries).

    Returns
    -------
    list of str
        One sentence per difference. The store entries' models are fingerprinted only when
        nothing else differs.
    """
    if recorded is None:
        return [f"no execution manifest {manifest_path(notebook).name} (never executed by this "
                "version of the pipeline)"]
    if recorded.get("format") != MANIFEST_FORMAT:
        return [f"manifest format {recorded.get('format')} (this version writes "
                f"{MANIFEST_FORMAT})"]
    reasons = (_output_reasons(recorded, notebook, results) + _key_reasons(recorded, key, inputs)
               + _code_reasons(recorded) + _input_reasons(recorded, notebook.parent))
    return reasons or _store_reasons(recorded, inputs)


def key_summary(recorded: dict[str, Any]) -> str:
    """A short account of what a skipped chapter's manifest covers, for the build log."""
    package = recorded.get("package") or {}
    n_stores, n_models = len(recorded.get("stores") or []), len(recorded.get("models") or {})
    n_code = len(recorded.get("code") or {})
    return (f"same source, parameters, lmgeometry {package.get('version')} and the {n_code} "
            f"package files it ran, environment, {n_models} model fingerprint(s), {n_stores} "
            f"store entr{'y' if n_stores == 1 else 'ies'}; notebook and results as recorded")


def html_inputs(book_dir: Path, docnames: Iterable[str]) -> dict[str, Any]:
    """Everything the HTML build reads: config, toc, bibliography, executed notebooks and
    Markdown pages, the package files those pages document, renderer versions.

    Parameters
    ----------
    book_dir : pathlib.Path
        The book folder.
    docnames : iterable of str
        The toc's documents (``book/NN_name``, ``pages/name``).

    Returns
    -------
    dict
        JSON-serialisable; equal dicts mean the HTML would come out the same.
    """
    docnames = list(docnames)
    documented: dict[str, str] = {}
    for docname in docnames:
        page = page_file(book_dir, docname)
        if is_page(docname) and page.is_file():
            documented.update(documented_files(page.read_text(encoding="utf-8")))
    return {
        "config": file_digest(book_dir / "_config.yml"),
        "toc": file_digest(book_dir / "_toc.yml"),
        "references": file_digest(book_dir / "references.bib"),
        "notebooks": {d: file_digest(page_file(book_dir, d)) for d in docnames},
        "documented": dict(sorted(documented.items())),
        "code": html_code(),
        "versions": {dist: _version(dist) for dist in HTML_LIBRARIES},
    }


#: An autodoc directive and the object it documents, in a Markdown page: ``.. autofunction::
#: lmgeometry.hidden_states`` (in an ``{eval-rst}`` block) or ```` ```{autofunction} NAME ````.
_AUTODOC = re.compile(r"(?:\.\.\s+auto\w+::|\{auto\w+\})[ \t]*([A-Za-z_][\w.]*)")


def documented_files(text: str, folder: Path | None = None) -> dict[str, str]:
    """The package files whose docstrings a Markdown page renders, with their sha256.

    Each ``autodoc`` directive names an object, ``lmgeometry.<module path>.<name>`` or a lazy
    top-level name (``lmgeometry.hidden_states``: the module ``lmgeometry._EXPORTS`` names).
    The digests are over the files' bytes, docstrings included (what the page shows), unlike
    the chapters' code records; a change to another module does not rebuild the HTML.

    Parameters
    ----------
    text : str
        The page's Markdown.
    folder : pathlib.Path, optional
        The package folder (default :data:`PACKAGE_DIR`).

    Returns
    -------
    dict
        Path relative to the package folder -> sha256; ``__init__.py`` (the lazy names) with
        the module of every documented object found there.
    """
    from lmgeometry import _EXPORTS

    folder = folder or PACKAGE_DIR
    found: dict[str, str] = {}
    for name in _AUTODOC.findall(text):
        parts = name.split(".")
        if parts[0] != "lmgeometry":
            continue
        if len(parts) == 2 and parts[1] in _EXPORTS:
            parts = _EXPORTS[parts[1]].split(".")
        for end in range(len(parts), 0, -1):
            rel = Path(*parts[1:end]) if end > 1 else Path()
            candidates = ([folder / rel.with_suffix(".py")] if end > 1 else []) + [
                folder / rel / "__init__.py"]
            hit = next((c for c in candidates if c.is_file()), None)
            if hit is not None:
                found[hit.relative_to(folder).as_posix()] = file_digest(hit)
                break
        found["__init__.py"] = file_digest(folder / "__init__.py")
    return found


def html_code(folder: Path | None = None) -> dict[str, str]:
    """Digests of the package files the HTML build runs (:data:`HTML_CODE`)."""
    folder = folder or PACKAGE_DIR
    found = {}
    for name in HTML_CODE:
        path = folder / name
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            rel = file.relative_to(folder)
            if file.is_file() and "__pycache__" not in rel.parts:
                found[rel.as_posix()] = sources.file_digest(file)
    return found


def html_is_current(book_dir: Path, html_dir: Path, current: dict[str, Any]) -> bool:
    """Whether ``html_dir`` was built from exactly ``current`` (:func:`html_inputs`)."""
    try:
        stamp = json.loads((book_dir / HTML_STAMP).read_text())
    except (OSError, ValueError):
        return False
    return stamp == current and (html_dir / "index.html").is_file()


def write_html_stamp(book_dir: Path, current: dict[str, Any]) -> None:
    """Record the inputs of a successful HTML build (:data:`HTML_STAMP`)."""
    path = book_dir / HTML_STAMP
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
