"""The package's shape: imports flow one way and never in a circle, measures stay pure,
functions stay short.

    chapters -> measures            (arrays in, numbers out)
    chapters -> claims -> measures  (a seed's claim, its verdict per model, its outcome)
    chapters -> activations -> io   (models, data, corpora -> hidden states on disk)
    chapters -> training -> io      (models fine-tuned on a task -> model folders)
    report -> claims                (plots, figures, results, claims on a page, the book) beside,
                                    used by chapters and notebooks

Read from the source with ``ast``, so nothing is imported and the test needs no data.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "lmgeometry"
LAYERS = ("io", "activations", "training", "measures", "claims", "chapters", "report")

#: For each layer, the layers it must not import (anything else in the package is allowed;
#: ``lmgeometry.errors`` and the package root are open to all).
FORBIDDEN = {
    "measures": {"io", "activations", "training", "claims", "chapters", "report"},
    "io": {"activations", "training", "measures", "claims", "chapters", "report"},
    "activations": {"training", "measures", "claims", "chapters", "report"},
    "training": {"activations", "measures", "claims", "chapters", "report"},
    "claims": {"io", "activations", "training", "chapters", "report"},
    "report": {"activations", "training", "chapters"},
    "chapters": set(),
}

#: Modules a pure measure must never import: file and model I/O, plotting.
IMPURE = {"torch", "transformers", "plotly", "matplotlib", "pooch", "requests", "spacy",
          "pyarrow", "IPython", "lmgeometry.io"}

MAX_FUNCTION_LINES = 100
#: Functions still over the limit, to be replaced by claims tables (a ratchet: an entry must be
#: removed once its function is short, and nothing may be added).
KNOWN_LONG: set[str] = set()


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_ext" not in p.parts)


def _layer(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 and parts[0] in LAYERS else None


def _from_module(node: ast.ImportFrom, path: Path) -> str:
    """The absolute name of the module a ``from ... import`` in file ``path`` imports from."""
    if not node.level:
        return node.module or ""
    inside = path.is_relative_to(PACKAGE)
    package = ".".join(("lmgeometry", *(path.relative_to(PACKAGE).parent.parts if inside else ())))
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every imported module name (absolute), with its line, at any depth of the file."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, path)
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


def _target_layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "lmgeometry" and parts[1] in LAYERS \
        else None


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_one_way(path: Path) -> None:
    layer = _layer(path)
    if layer is None:
        return
    bad = [f"line {line}: {module}" for line, module in _imports(path)
           if _target_layer(module) in FORBIDDEN[layer]]
    assert not bad, f"{layer} must not import {sorted(FORBIDDEN[layer])}: {bad}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "measures").glob("*.py")),
                         ids=lambda p: p.name)
def test_measures_are_pure(path: Path) -> None:
    bad = [f"line {line}: {module}" for line, module in _imports(path)
           if any(module == m or module.startswith(m + ".") for m in IMPURE)]
    assert not bad, f"a measure module does no file or model I/O and no plotting: {bad}"
    tree = ast.parse(path.read_text())
    calls = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id in ("open", "print")]
    assert not calls, f"open()/print() in a measure module, lines {calls}"


@pytest.mark.parametrize("name", ["errors.py", "trace.py", "sources.py", "_lazy.py"])
def test_shared_root_modules_import_no_layer(name: str) -> None:
    """Every layer may import these, so they import none (no cycles)."""
    bad = [m for _, m in _imports(PACKAGE / name) if _target_layer(m) is not None]
    assert not bad, f"{name} imports {bad}"


def test_import_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    fake = PACKAGE / "measures" / "clusters.py"
    imports = dict((m, line) for line, m in _imports(fake))
    assert "lmgeometry.measures.similarity" in imports  # relative and absolute both resolved
    source = tmp_path / "bad.py"
    source.write_text("from lmgeometry.io import data\nimport torch\n")
    found = [m for _, m in _imports(source)]
    assert _target_layer("lmgeometry.io.data") == "io" and "lmgeometry.io" in found
    assert "torch" in found


def _module_name(path: Path) -> str:
    """``lmgeometry.report.figures`` for ``report/figures.py``; a package for its
    ``__init__.py`` (``lmgeometry.report.book`` for ``report/book/__init__.py``)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("lmgeometry", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def import_graph() -> dict[str, set[str]]:
    """The package's modules, each with the package modules it imports (:func:`_imports`).

    Every import counts, inside functions and under ``if TYPE_CHECKING:`` included: an import
    moved into a function hides a cycle from the interpreter, not from the design. A package
    is the node of its ``__init__.py``, and ``from a.b import c`` is an edge to ``a.b.c`` when
    that is a module, else to ``a.b`` (the longest imported name that is a module). The
    ``__init__`` files of the packages above an imported module also run, but they are not
    counted as edges: the layers' ``__init__`` files import only :mod:`lmgeometry._lazy`
    (their names are module strings, imported on first access, and package code does not
    import through them: :func:`test_package_code_imports_names_from_their_modules`), and one
    that only re-exported its own submodules would stand for the package itself, not close a
    circle through each of them; an ``__init__`` that does import is an ordinary node, with
    its own edges.

    Returns
    -------
    dict of str to set of str
        Module name -> the names of the modules it imports (itself excluded).
    """
    names = {_module_name(path): path for path in _modules()}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        targets = set()
        for _, module in _imports(path):
            parts = module.split(".")
            found = next((".".join(parts[:i]) for i in range(len(parts), 0, -1)
                          if ".".join(parts[:i]) in names), None)
            if found is not None and found != name:
                targets.add(found)
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of a directed graph, as its nodes with the first repeated at the end.

    Depth-first search in sorted order (the answer does not depend on set order); a node
    met again while it is still on the path closes a cycle.

    Parameters
    ----------
    graph : dict of str to set of str
        Node -> the nodes it points to (nodes that only appear as targets are allowed).

    Returns
    -------
    list of str
        ``[a, b, ..., a]``, or an empty list when the graph has no cycle.
    """
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path, on_path = [start], {start}
        stack = [iter(sorted(graph.get(start, ())))]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif node in on_path:
                return [*path[path.index(node):], node]
            elif node not in done:
                path.append(node)
                on_path.add(node)
                stack.append(iter(sorted(graph.get(node, ()))))
    return []


def test_the_cycle_finder_finds_cycles_and_only_cycles() -> None:
    assert find_cycle({}) == []
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []  # a diamond: no cycle
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    # the cycle is reported without the path that led into it
    assert find_cycle({"x": {"y"}, "y": {"z"}, "z": {"y", "w"}}) == ["y", "z", "y"]


def test_the_import_graph_sees_imports_inside_functions(tmp_path: Path) -> None:
    graph = import_graph()
    assert "lmgeometry.activations.extract" in graph["lmgeometry.activations.store"]
    assert "lmgeometry" in graph["lmgeometry.activations.store"]  # `from lmgeometry import`
    assert "lmgeometry.report.book" in graph["lmgeometry.cli"]  # imported inside a function
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from lmgeometry.report import book\n")
    assert "lmgeometry.report.book" in [m for _, m in _imports(source)]


def test_imports_never_go_round_in_a_circle() -> None:
    cycle = find_cycle(import_graph())
    assert not cycle, ("import cycle (an import inside a function hides it from Python, not "
                       f"from this test): {' -> '.join(cycle)}; move what both sides need "
                       "into a module that imports neither")


def _lazy_names(package: Path) -> set[str]:
    """The keys of the ``_EXPORTS`` table of a package's ``__init__.py`` (none without one)."""
    for node in ast.parse((package / "__init__.py").read_text()).body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets):
                return set(ast.literal_eval(node.value))
    return set()


def test_package_code_imports_names_from_their_modules() -> None:
    """``from lmgeometry.measures import self_similarity`` would resolve at run time, out of
    sight of the import graph above and of the static closures that key the caches
    (``sources.closure``): package code names the module that defines the name."""
    lazy = {_module_name(p.parent / "__init__.py"): _lazy_names(p.parent)
            for p in PACKAGE.rglob("__init__.py")}
    bad = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = lazy.get(_from_module(node, path), set())
                bad += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {alias.name}"
                        for alias in node.names if alias.name in names]
    assert "lmgeometry.measures" in lazy and "self_similarity" in lazy["lmgeometry.measures"]
    assert not bad, f"import these from the module that defines them: {bad}"


def test_every_public_module_declares_all() -> None:
    missing = []
    for path in _modules():
        if path.name.startswith("_") and path.name != "__init__.py" or path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text())
        names = {t.id for node in tree.body if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)}
        if "__all__" not in names:
            missing.append(str(path.relative_to(PACKAGE)))
    assert not missing, f"modules without __all__: {missing}"


def test_functions_stay_short() -> None:
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = n
    assert set(long) - KNOWN_LONG == set(), f"functions over {MAX_FUNCTION_LINES} lines: {long}"
    assert KNOWN_LONG - set(long) == set(), "shortened: remove them from KNOWN_LONG"


#: Modules outside ``cli.py`` that still take an ``argparse.Namespace``, each with its reason:
#: their code keys cached values (stores, fine-tunes, pretraining runs), so moving it
#: re-extracts or re-trains (issue 45, item 4: keys from the code that computes the values,
#: not from where helpers live, comes first).
NAMESPACE_KEPT = {
    "activations/store.py": "the store's key reads this module",
    "training/finetune.py": "a fine-tune's key reads this module",
    "training/pretrain.py": "a pretraining run's key reads this module",
}


def test_command_line_parsing_and_printing_live_in_cli() -> None:
    """A function that takes the parsed command line (``argparse.Namespace``) is CLI code: it
    belongs in ``cli.py`` (issue 45, item 3), except where :data:`NAMESPACE_KEPT` says why."""
    found = set()
    for path in _modules():
        name = str(path.relative_to(PACKAGE))
        if name == "cli.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    "Namespace" in ast.unparse(a.annotation or ast.Constant(""))
                    for a in node.args.args):
                found.add(name)
    assert found - set(NAMESPACE_KEPT) == set(), f"Namespace outside cli.py: {found}"
    assert set(NAMESPACE_KEPT) - found == set(), "moved into cli.py: drop it from the list"


def test_every_cache_key_site_is_documented() -> None:
    """Each module whose code keys a cache (it calls ``sources.key_files``) is named in the
    "Caches and their keys" table of ARCHITECTURE.md (issue 45, item 4)."""
    text = (PACKAGE.parents[1] / "ARCHITECTURE.md").read_text()
    section = text.split("## Caches and their keys", 1)[1].split("\n## ", 1)[0]
    sites = set()
    for path in _modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "sources.key_files":
                sites.add(str(path.relative_to(PACKAGE)))
    assert sites, "no cache key site found: the test no longer reads the code"
    missing = {s for s in sites if f"`{s}`" not in section}
    assert missing == set(), f"cache key sites not in ARCHITECTURE.md's table: {missing}"


#: Modules without a test file of their own (``tests/<layer>/test_<module>.py``), and the test
#: file that covers them: a chapter's modules are tested together on planted data, a package's
#: helpers through the public names that use them (issue 45, item 5).
TESTED_ELSEWHERE = {
    "activations/entry.py": "activations/test_onnx_runtime.py",
    "activations/heads.py": "training/test_finetune.py",
    "activations/integrity.py": "faults/test_store_faults.py",
    "activations/reader.py": "activations/test_store.py",
    "activations/sublayers.py": "activations/test_token_states.py",
    "chapters/context/analysis.py": "chapters/test_context_measures.py",
    "chapters/context/claims.py": "chapters/test_context_measures.py",
    "chapters/context/static.py": "chapters/test_context_measures.py",
    "chapters/drift/claims.py": "chapters/test_drift.py",
    "chapters/drift/tokens.py": "chapters/test_drift.py",
    "chapters/pair/claims.py": "chapters/test_pair.py",
    "chapters/senses/polysemy.py": "chapters/test_senses.py",
    "chapters/senses/wic.py": "chapters/test_senses.py",
    "io/corpus/wic.py": "io/test_corpus.py",
    "chapters/context/layers.py": "chapters/test_context_measures.py",
    "chapters/context/sentences.py": "chapters/test_context_measures.py",
    "chapters/context/views.py": "chapters/test_context_measures.py",
    "chapters/drift/analysis.py": "chapters/test_drift.py",
    "chapters/drift/matrix.py": "chapters/test_drift.py",
    "chapters/drift/words.py": "chapters/test_drift.py",
    "chapters/finetuning/analysis.py": "chapters/test_finetuning.py",
    "chapters/finetuning/views.py": "chapters/test_finetuning_views.py",
    "chapters/geometry/analysis.py": "chapters/test_geometry.py",
    "chapters/geometry/layers.py": "chapters/test_geometry.py",
    "chapters/geometry/special.py": "chapters/test_geometry.py",
    "chapters/pair/analysis.py": "chapters/test_pair.py",
    "chapters/pair/sentences.py": "chapters/test_pair.py",
    "chapters/part_of_speech/analysis.py": "chapters/test_part_of_speech.py",
    "chapters/rogue_dimensions/analysis.py": "chapters/test_rogue_dimensions.py",
    "chapters/senses/analysis.py": "chapters/test_senses.py",
    "chapters/senses/semcor.py": "chapters/test_senses.py",
    "chapters/sink/analysis.py": "chapters/test_sink.py",
    "chapters/zoo/analysis.py": "chapters/test_model_zoo.py",
    "claims/outcomes.py": "report/test_claims.py",
    "claims/spec.py": "claims/test_record.py",
    "cli.py": "faults/test_cli_faults.py",
    "errors.py": "test_bad_input.py",
    "io/_offline.py": "io/test_models.py",
    "io/benchmarks.py": "io/test_loaders.py",
    "io/checksums.py": "io/test_built.py",
    "io/corpus/base.py": "io/test_corpus.py",
    "io/corpus/benchmarks.py": "io/test_corpus.py",
    "io/corpus/frequency.py": "io/test_corpus.py",
    "io/corpus/glue.py": "io/test_corpus.py",
    "io/corpus/mnli.py": "io/test_corpus.py",
    "io/corpus/registry.py": "io/test_corpus.py",
    "io/corpus/semcor.py": "io/test_corpus.py",
    "io/corpus/semeval_sts.py": "io/test_corpus.py",
    "io/corpus/spans.py": "io/test_corpus.py",
    "io/corpus/table.py": "io/test_corpus.py",
    "io/corpus/targets.py": "io/test_corpus.py",
    "io/data.py": "io/test_corpus.py",
    "io/datasets.py": "io/test_loaders.py",
    "io/files.py": "chapters/test_finetuning_views.py",
    "io/loaded_model.py": "io/test_models.py",
    "io/memory_model.py": "test_api.py",
    "io/model_source.py": "io/test_models.py",
    "io/paths.py": "io/test_datafiles.py",
    "io/released.py": "chapters/test_context_measures.py",
    "measures/word_lookup.py": "measures/test_word_similarity.py",
    "report/book/build.py": "report/test_book.py",
    "report/book/chapters.py": "report/test_book.py",
    "report/book/folder.py": "faults/test_book_faults.py",
    "report/book/html.py": "report/test_book.py",
    "report/book/parameters.py": "report/test_book.py",
    "report/cache.py": "report/test_book.py",
    "report/export.py": "test_api.py",
    "report/figure_encoding.py": "report/test_figures.py",
    "report/figure_fallback.py": "report/test_notebook_viewers.py",
    "report/html_tables.py": "report/test_about.py",
    "report/mime_bundle.py": "report/test_figures.py",
    "report/offline.py": "report/test_publish.py",
    "report/plot_clouds.py": "report/test_colour_scales.py",
    "report/plot_lines.py": "report/test_colour_scales.py",
    "report/plot_panels.py": "report/test_colour_scales.py",
    "report/plot_style.py": "report/test_colour_scales.py",
    "report/profile.py": "report/test_book.py",
    "report/results.py": "report/test_book.py",
    "report/toc.py": "test_browser.py",
    "trace.py": "report/test_book.py",
    "training/loop.py": "training/test_finetune.py",
    "training/pretrain_settings.py": "training/test_pretrain.py",
    "training/settings.py": "training/test_finetune.py",
}


def test_every_module_has_a_test_file_or_names_the_one_that_covers_it() -> None:
    tests = PACKAGE.parents[1] / "tests"
    lacking = set()
    for path in _modules():
        name = str(path.relative_to(PACKAGE))
        if path.name == "__init__.py" or "_ext" in path.parts:
            continue
        # its own: test_<module>.py in tests/<its folder>/ or tests/<its layer>/
        rel = path.relative_to(PACKAGE)
        own = f"test_{path.stem.lstrip('_')}.py"
        if not any((tests / folder / own).is_file() for folder in (rel.parent, rel.parts[0])):
            lacking.add(name)
    assert lacking - set(TESTED_ELSEWHERE) == set(), "no test file: add one or name it here"
    assert set(TESTED_ELSEWHERE) - lacking == set(), "has its own test file now, or is gone"
    missing = {m: t for m, t in TESTED_ELSEWHERE.items() if not (tests / t).is_file()}
    assert missing == {}, f"named test files that do not exist: {missing}"
