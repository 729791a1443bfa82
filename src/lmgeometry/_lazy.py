"""Names a package exports from its modules, imported on first access (PEP 562).

The root package and each layer's ``__init__`` name their main objects in a table, name ->
the module that defines it, and import that module only when the name is first read. Importing
a package therefore imports none of its modules: a chapter's execution manifest, which records
the modules its kernel imported (:func:`lmgeometry.sources.loaded_files`), lists only what the
chapter used, and ``import lmgeometry`` loads neither torch nor pandas.

The package's own modules import from the defining module, never through such a table
(``tests/test_architecture.py``): a cache key follows the static imports of the code that
computes it (:func:`lmgeometry.sources.closure`), which a name resolved at run time would hide.

This module imports nothing from the package, so every ``__init__`` may use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a package with lazy names.

    Parameters
    ----------
    package : str
        The package's name (its ``__name__``), for the error message.
    exports : mapping of str to str
        Each exported name -> the module that defines it (``"lmgeometry.measures.cosines"``).
    namespace : dict
        The package's ``globals()``: a name, once imported, is kept there, so its module is
        imported once and ``__getattr__`` is not called for it again.

    Returns
    -------
    tuple of callables
        ``(__getattr__, __dir__)``, to assign at the package's top level.

    Examples
    --------
    >>> import types
    >>> box = types.ModuleType("box")
    >>> box.__getattr__, box.__dir__ = lazy_exports("box", {"sqrt": "math"}, vars(box))
    >>> "sqrt" in vars(box), box.sqrt(9.0), "sqrt" in vars(box)
    (False, 3.0, True)
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
