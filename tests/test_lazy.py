"""The packages' lazy names (``lmgeometry._lazy``): importing a package imports none of its
modules, and every name it exports is the object its module defines."""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

from lmgeometry import _lazy

PACKAGES = ["lmgeometry", "lmgeometry.activations", "lmgeometry.chapters", "lmgeometry.io",
            "lmgeometry.measures", "lmgeometry.report"]


@pytest.mark.parametrize("name", PACKAGES)
def test_importing_a_package_imports_none_of_its_modules(name):
    code = (f"import json, sys, {name}; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('lmgeometry'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert set(json.loads(out)) == {"lmgeometry", "lmgeometry._lazy", name}


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_is_the_object_its_module_defines(name):
    package = importlib.import_module(name)
    exports = package._EXPORTS
    assert set(package.__all__) - {"__version__"} == set(exports)
    for export, module in exports.items():
        assert module.startswith(name + "."), (export, module)
        assert getattr(package, export) is getattr(importlib.import_module(module), export)
        assert export in dir(package)


@pytest.mark.parametrize("name", PACKAGES)
def test_no_exported_name_is_also_a_submodule(name):
    """Importing submodule ``x`` sets the package's attribute ``x`` to the module, which would
    hide an exported name ``x`` (``measures.isoscore`` the module vs the function)."""
    package = importlib.import_module(name)
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert "cosines" in submodules or name != "lmgeometry.measures"
    assert not submodules & set(package._EXPORTS)


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    import lmgeometry.measures as measures

    with pytest.raises(AttributeError, match="module 'lmgeometry.measures' has no attribute"):
        measures.nope  # noqa: B018
    from lmgeometry.measures import stats

    assert stats.__name__ == "lmgeometry.measures.stats"
    assert measures.verdict is stats.verdict


def test_lazy_exports_doctest():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for test in finder.find(_lazy.lazy_exports, "lazy_exports", globs={"lazy_exports":
                                                                       _lazy.lazy_exports}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 3 and result.failed == 0

