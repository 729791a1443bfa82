"""The package's code as the numbers depend on it (lmgeometry.sources)."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from lmgeometry import sources
from lmgeometry.activations import store


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "lmgeometry"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_digest_ignores_docstrings_and_comments_not_code(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('"""Module."""\n\ndef f(x):\n    """Doc."""\n    return x + 1\n')
    first = sources.file_digest(path)
    path.write_text('"""Other words."""\n# a comment\n\n\ndef f(x):  # more\n    return x + 1\n')
    assert sources.file_digest(path) == first
    path.write_text('def f(x):\n    return x + 2\n')
    assert sources.file_digest(path) != first
    path.write_text('def f(x):\n    "a string that is the only statement"\n')
    only_doc = sources.file_digest(path)
    path.write_text('def f(x):\n    pass\n')
    assert sources.file_digest(path) == only_doc  # a body of only a docstring is `pass`
    data = tmp_path / "d.json"
    data.write_text("{}")
    digest = sources.file_digest(data)
    data.write_text("{ }")
    assert sources.file_digest(data) != digest  # data files: their bytes


def test_static_imports_follow_every_form_but_type_checking(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "io/__init__.py": "",
        "io/data.py": "X = 1\n",
        "io/models.py": "from lmgeometry.io.data import X\n",
        "io/paths.py": "",
        "measures/__init__.py": "",
        "measures/stats.py": "",
        "act/__init__.py": "",
        "act/extract.py": (
            "from typing import TYPE_CHECKING\n"
            "from . import helper\n"
            "from ..measures.stats import mean\n"
            "if TYPE_CHECKING:\n    from lmgeometry.io import paths\n"
            "def run():\n    from lmgeometry.io import models\n    return models\n"),
        "act/helper.py": "import lmgeometry.errors\n",
        "errors.py": "",
    })
    found = sources.static_imports("lmgeometry.act.extract", pkg)
    assert found == {"lmgeometry", "lmgeometry.act", "lmgeometry.act.helper",
                     "lmgeometry.measures", "lmgeometry.measures.stats", "lmgeometry.io",
                     "lmgeometry.io.models"}
    # the closure drops package __init__ files and neutral modules; `stop` cuts a package
    assert sources.closure(["lmgeometry.act.extract"], pkg) == {
        "lmgeometry.act.extract", "lmgeometry.act.helper", "lmgeometry.measures.stats",
        "lmgeometry.io.models", "lmgeometry.io.data"}
    assert sources.closure(["lmgeometry.act.extract"], pkg, stop={"lmgeometry.io"}) == {
        "lmgeometry.act.extract", "lmgeometry.act.helper", "lmgeometry.measures.stats"}
    assert sources.module_file("lmgeometry.act.extract.run", pkg) is None
    with pytest.raises(ValueError, match="not a module"):
        sources.static_imports("lmgeometry.nothing", pkg)


def test_code_files_carry_the_data_files_beside_a_module(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"io/data.py": "", "io/manifest.json": "{}", "io/notes.md": "",
                              "io/__pycache__/data.pyc": "", "cli.py": ""})
    files = sources.code_files(["lmgeometry.io.data"], pkg)
    assert list(files) == ["io/data.py", "io/manifest.json"]
    assert sources.code_digest(files) == sources.code_digest(dict(reversed(files.items())))


def test_loaded_files_are_the_package_modules_a_process_imported() -> None:
    here = sources.PACKAGE_DIR
    modules = {"lmgeometry": types.SimpleNamespace(__file__=str(here / "__init__.py")),
               "lmgeometry.io.data": types.SimpleNamespace(__file__=str(here / "io/data.py")),
               "lmgeometry.builtin": types.SimpleNamespace(),  # no file
               "numpy": types.SimpleNamespace(__file__="/elsewhere/numpy/__init__.py")}
    files = sources.loaded_files(modules)
    assert list(files) == ["__init__.py", "io/data.py", "io/manifest.json",
                           "io/polysemy_targets.txt"]


def test_store_key_holds_the_extraction_code() -> None:
    code = store.extraction_code()
    assert sorted(code) == ["activations/align.py", "activations/extract.py"]
    options = {"pooling": "mean", "prepend_bos": None, "too_long": "error", "dtype": "float16"}
    key = store.store_key("f" * 64, "c" * 64, **options)
    assert store.store_key("f" * 64, "c" * 64, code=code, **options) == key
    changed = {**code, "activations/extract.py": "0" * 16}
    assert store.store_key("f" * 64, "c" * 64, code=changed, **options) != key
