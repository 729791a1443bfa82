"""Chapter 3's parameters: one frozen, typed value, checked once.

:func:`lmgeometry.chapters.context.analysis.analyse` builds a :class:`ContextParams` from its
keyword arguments and hands it to the layer pass, the claims and the static part, which read
its fields and check nothing again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lmgeometry.chapters.common import check_whole
from lmgeometry.errors import UsageError

__all__ = ["ContextParams", "budget_size"]


def budget_size(static_budget: int | None, min_contexts: int) -> int:
    """The budget curve's largest number of contexts per word: ``static_budget``, or
    ``min_contexts`` (which every word with a PC1 vector has) when None. A larger budget
    leaves out of every point the items whose words have fewer contexts.

    Examples
    --------
    >>> budget_size(None, 5), budget_size(8, 5)
    (5, 8)
    """
    size = min_contexts if static_budget is None else static_budget
    if int(size) != size or size < 2:
        raise UsageError(f"static_budget={size}: PC1 needs at least 2 contexts per word; pass "
                         "a whole number of 2 or more (the notebook passes static_k)")
    return int(size)


@dataclass(frozen=True)
class ContextParams:
    """Every parameter of chapter 3's analysis (the keyword arguments of ``analyse``).

    Attributes
    ----------
    seed : int
        Seeds every sample and bootstrap (a non-negative whole number).
    n_boot : int
        Bootstrap replicates of every interval (0: no intervals).
    min_contexts : int
        Occurrences a word needs (at least 2).
    n_intra_sentences : int or None
        Sentences sampled for IntraSim; None: every sentence.
    neighbour_queries, k : int
        Tokens whose ``k`` nearest neighbours are searched.
    n_lowest : int
        Least self-similar words listed per layer.
    max_position, min_count : int
        Token tables: positions up to ``max_position``; groups of at least ``min_count``.
    static_web_layers : "paper" or sequence of int
        Layers also scored with the ``web`` protocol (``"paper"``: 1, 2, L-1, L); layer
        numbers are held as a tuple of int.
    static_budget : int
        The budget curve's contexts per word; None when built means ``min_contexts``
        (:func:`budget_size`), so the field always holds a whole number.
    """

    seed: int = 0
    n_boot: int = 1000
    min_contexts: int = 5
    n_intra_sentences: int | None = 500
    neighbour_queries: int = 3000
    k: int = 10
    n_lowest: int = 5
    max_position: int = 20
    min_count: int = 20
    static_web_layers: str | Sequence[int] = "paper"
    static_budget: int | None = None

    def __post_init__(self) -> None:
        least = {"seed": 0, "n_boot": 0, "min_contexts": 2, "neighbour_queries": 1, "k": 1,
                 "n_lowest": 1, "max_position": 1, "min_count": 1}
        for name, low in least.items():
            check_whole(name, getattr(self, name), low)
        if self.n_intra_sentences is not None:
            check_whole("n_intra_sentences", self.n_intra_sentences, 1)
        web = self.static_web_layers
        if isinstance(web, str):
            if web != "paper":
                raise UsageError(f"static_web_layers={web!r}: pass 'paper' (layers 1, 2, L-1 "
                                 "and L) or a list of layer numbers")
        else:
            for layer in web:
                check_whole("a layer of static_web_layers", layer, 0)
            object.__setattr__(self, "static_web_layers", tuple(int(x) for x in web))
        object.__setattr__(self, "static_budget",
                           budget_size(self.static_budget, self.min_contexts))
