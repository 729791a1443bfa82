"""The package's own code, as the numbers depend on it: which modules, and their digests.

Two questions need the answer. *Must this chapter run again?* A chapter depends on the
modules its kernel imported (:func:`loaded_files`, read at the end of its run) and on the code
that built the cached things it read. *Is this cache entry still what the code would compute
now?* An activation-store entry, a head-states entry or a fine-tuned checkpoint is keyed on the
code that computes its values: the static import closure (:func:`closure`) of the module that
computes them, digested by :func:`code_digest`.

A module's digest is over its syntax tree with docstrings removed (:func:`file_digest`), so an
edit of a comment or a docstring changes no digest and re-executes nothing; any other edit,
a changed string constant included, does. ``ast.dump`` differs between Python minor versions,
so the digests (and the cache keys built on them) are those of one Python version; the
chapters' manifests record the Python version too. Package data files (``*.json``, ``*.txt``) are
attributed to the folder they lie in: a module's files include the data files beside it.

This module imports nothing from the package, so every layer may use it.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "closure",
    "code_digest",
    "code_files",
    "DATA_SUFFIXES",
    "CONTENT_ADDRESSED",
    "file_digest",
    "key_files",
    "loaded_files",
    "module_file",
    "NEUTRAL",
    "PACKAGE_DIR",
    "static_imports",
]

#: The installed package folder (``src/lmgeometry`` in a checkout).
PACKAGE_DIR = Path(__file__).resolve().parent

#: Package data files that count as code: they are read by the module beside them.
DATA_SUFFIXES = (".json", ".txt")

#: Modules through which no value passes (they raise, append events to a trace file, or
#: re-export names): left out of the code a cache entry is keyed on (:func:`key_files`), so
#: that editing an error message does not throw away every cached extraction. A chapter's own
#: record (:func:`loaded_files`) still includes them.
NEUTRAL = frozenset({"lmgeometry", "lmgeometry.errors", "lmgeometry.trace",
                     "lmgeometry.sources"})

#: Where a cache key's code stops: what comes from ``io`` (data files, corpora, models) enters
#: every key by its content (the corpus digest, the training sample's digest, the model's
#: fingerprint), not by the code that produced it. Two things stay outside on purpose and are
#: versioned by hand instead: how a fingerprinted model is run (``io.models.load_model``'s
#: dtype and options) and the store's file layout (``activations.store.FORMAT_VERSION``);
#: keying on ``io.models`` would rebuild every cached extraction for an error message.
CONTENT_ADDRESSED = frozenset({"lmgeometry.io"})

_NAME = "lmgeometry"


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return tree


def file_digest(path: Path) -> str:
    """Digest of one package file: code by its meaning, data by its bytes.

    Parameters
    ----------
    path : pathlib.Path
        A ``.py`` file (its syntax tree without docstrings, ``ast.dump`` without positions)
        or a data file (its bytes).

    Returns
    -------
    str
        The first 16 hex digits of the sha256.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> a, b = folder / "a.py", folder / "b.py"
    >>> _ = a.write_text('def f():\\n    "Say one."\\n    return 1  # one\\n')
    >>> _ = b.write_text('def f():\\n    return 1\\n')
    >>> file_digest(a) == file_digest(b)
    True
    """
    data = path.read_bytes()
    if path.suffix == ".py":
        tree = _strip_docstrings(ast.parse(data, filename=str(path)))
        data = ast.dump(tree, include_attributes=False).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def module_file(name: str, root: Path | None = None) -> Path | None:
    """The file of package module ``name`` (``lmgeometry.io.models`` -> ``io/models.py``).

    Returns
    -------
    pathlib.Path or None
        None when ``name`` is not a module of the package (a class or function imported with
        ``from ... import``, or a name outside ``lmgeometry``).
    """
    root = root or PACKAGE_DIR
    parts = name.split(".")
    if parts[0] != _NAME:
        return None
    base = root.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([_NAME, *parts])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import at any depth, except inside ``if TYPE_CHECKING:`` (never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            stack.append(child)


def static_imports(name: str, root: Path | None = None) -> set[str]:
    """The package modules that module ``name`` imports, at any depth of its source.

    Imports inside functions count (they run when the function does); imports under
    ``if TYPE_CHECKING:`` do not. ``from lmgeometry.io import models`` counts
    ``lmgeometry.io.models`` when that is a module, else ``lmgeometry.io``.

    Returns
    -------
    set of str
        Module names, parent packages included (importing a module runs its packages'
        ``__init__``).
    """
    root = root or PACKAGE_DIR
    path = module_file(name, root)
    if path is None:
        raise ValueError(f"{name!r} is not a module of {root}")
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t if module_file(t, root) else base for t in targets]
        for target in targets:
            parts = target.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1)
                         if module_file(".".join(parts[:i]), root))
    found.discard(name)
    return found


def closure(names: Iterable[str], root: Path | None = None, *,
            exclude: Iterable[str] = NEUTRAL, stop: Iterable[str] = ()) -> set[str]:
    """``names`` and the package modules they import, transitively (:func:`static_imports`).

    Package ``__init__`` files met on the way are left out (importing a module runs them,
    but they only gather names); a package named in ``names`` is kept.

    Parameters
    ----------
    names : iterable of str
        Module names, e.g. ``["lmgeometry.activations.extract"]``.
    root : pathlib.Path, optional
        The package folder (default :data:`PACKAGE_DIR`).
    exclude : iterable of str
        Modules left out, with what only they import (default :data:`NEUTRAL`).
    stop : iterable of str
        Packages left out with every module under them.

    Returns
    -------
    set of str
    """
    root = root or PACKAGE_DIR
    skip, packages = set(exclude), tuple(stop)

    def wanted(name: str) -> bool:
        path = module_file(name, root)
        return (path is not None and path.name != "__init__.py" and name not in skip
                and not any(name == p or name.startswith(p + ".") for p in packages))

    todo, seen = [n for n in names if n not in skip], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(m for m in static_imports(name, root) if m not in seen and wanted(m))
    return seen


def key_files(*names: str, root: Path | None = None) -> dict[str, str]:
    """The code a cache entry computed by modules ``names`` is keyed on, with digests.

    :func:`code_files` of their :func:`closure`, leaving out :data:`NEUTRAL` modules and
    what is :data:`CONTENT_ADDRESSED`.

    Examples
    --------
    >>> sorted(key_files("lmgeometry.activations.extract"))
    ['activations/align.py', 'activations/extract.py']
    """
    return code_files(closure(names, root, stop=CONTENT_ADDRESSED), root)


def code_files(names: Iterable[str], root: Path | None = None) -> dict[str, str]:
    """The files behind modules ``names`` with their digests (:func:`file_digest`).

    Returns
    -------
    dict
        Path relative to the package folder (POSIX) -> digest, sorted: each module's file and
        the data files (:data:`DATA_SUFFIXES`) in its folder.
    """
    root = root or PACKAGE_DIR
    paths: set[Path] = set()
    for name in names:
        path = module_file(name, root)
        if path is None:
            continue
        paths.add(path)
        paths.update(p for p in path.parent.iterdir()
                     if p.suffix in DATA_SUFFIXES and p.is_file())
    return {p.relative_to(root).as_posix(): file_digest(p)
            for p in sorted(paths, key=lambda p: p.relative_to(root).as_posix())}


def code_digest(files: Mapping[str, str]) -> str:
    """One sha256 (hex) over :func:`code_files`' mapping."""
    text = "".join(f"{name}\0{files[name]}\n" for name in sorted(files))
    return hashlib.sha256(text.encode()).hexdigest()


def loaded_files(modules: Mapping[str, object] | None = None) -> dict[str, str]:
    """The files of the package modules this process has imported, with their digests.

    Parameters
    ----------
    modules : mapping, optional
        Module name -> module (default ``sys.modules``).

    Returns
    -------
    dict
        As :func:`code_files`, for the ``lmgeometry`` modules loaded from :data:`PACKAGE_DIR`.
    """
    modules = sys.modules if modules is None else modules
    names = []
    for name, module in list(modules.items()):
        file = getattr(module, "__file__", None)
        if (name == _NAME or name.startswith(_NAME + ".")) and file \
                and Path(file).resolve().is_relative_to(PACKAGE_DIR):
            names.append(_module_name(Path(file).resolve(), PACKAGE_DIR))
    return code_files(names)
