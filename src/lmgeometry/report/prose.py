"""Small helpers that put numbers into the chapters' generated sentences.

Every sentence of the book that states a finding is built from the run's numbers; these
helpers keep the formatting of layer lists, ranges, percentages and plurals in one place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "glue_values",
    "layer_ranges",
    "layers_phrase",
    "number",
    "pct",
    "plural",
    "points",
    "span",
]


def glue_values(**values: Any) -> None:
    """Put values into the page's prose: ``{glue:md}`name``` in a Markdown cell shows ``name``.

    Jupyter Book renders each ``{glue:md}`name``` role of the chapter's Markdown with the text
    glued here (myst-nb's ``glue``, no visible output), so the page reads "a sample of 1,000
    sentences" where the source names the parameter; integers get thousands separators, other
    values their ``str``. Outside a kernel it shows nothing and does nothing.

    Examples
    --------
    >>> glue_values(n_sentences=1000, seed=0)
    """
    from IPython.display import Markdown
    from myst_nb import glue

    texts = {name: f"{value:,}" if isinstance(value, int) and not isinstance(value, bool)
             else str(value) for name, value in values.items()}
    for name, text in texts.items():
        glue(name, Markdown(text), display=False)


def layer_ranges(layers: Iterable[int]) -> str:
    """``[2, 3, 4, 7, 9, 10]`` -> ``"2-4, 7, 9-10"``."""
    parts: list[list[int]] = []
    for layer in sorted(int(v) for v in layers):
        if parts and parts[-1][1] == layer - 1:
            parts[-1][1] = layer
        else:
            parts.append([layer, layer])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in parts)


def layers_phrase(layers: Iterable[int]) -> str:
    """``"layer 3"`` or ``"layers 3-9, 30"``."""
    layers = list(layers)
    return f"{plural(len(layers), 'layer', count=False)} {layer_ranges(layers)}"


def number(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals; ``"n/a"`` when not finite; scientific when tiny."""
    if not math.isfinite(x):
        return "n/a"
    if x != 0 and abs(x) < 10 ** (-digits):
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


def span(lo: float, hi: float, fmt: str | Callable[[float], str] = ".2f",
         sep: str = " to ") -> str:
    """``"0.46 to 0.65"``, or one number when both ends print alike.

    ``fmt`` is a format spec (``".2f"``, ``".0%"``) or a function of one number.
    """
    show = fmt if callable(fmt) else (lambda x: format(x, fmt))
    a, b = show(float(lo)), show(float(hi))
    return a if a == b else f"{a}{sep}{b}"


def pct(x: float, digits: int = 0) -> str:
    """``0.812`` -> ``"81%"`` (``digits`` decimals of the percentage)."""
    return f"{x:.{digits}%}"


def points(x: float) -> str:
    """A difference of proportions in percentage points: ``0.031`` -> ``"+3.1 points"``."""
    return f"{'+' if x >= 0 else ''}{x * 100:.1f} points"


def plural(n: int, word: str, plural_form: str | None = None, *, count: bool = True) -> str:
    """``plural(1, "layer")`` -> ``"1 layer"``; ``plural(3, "layer")`` -> ``"3 layers"``.

    With ``count=False`` only the word: ``"layer"`` / ``"layers"``.
    """
    form = word if n == 1 else (plural_form or word + "s")
    return f"{n} {form}" if count else form
