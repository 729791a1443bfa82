"""Chapter 3, context measures: the frames the page's tables and heatmaps show.

Each function cuts one view from the tables and claims of
:func:`lmgeometry.chapters.context.analysis.analyse` (a selection, a pivot or a ranking; no
new numbers), so that each of the notebook's cells is one named call and its display.
"""

from __future__ import annotations

import pandas as pd

from lmgeometry.chapters.context.claims import CLAIMS
from lmgeometry.chapters.context.static import GLOVE, INPUT, PC1, PC1_EMBEDDINGS
from lmgeometry.io.benchmarks import SIMILARITY_BENCHMARKS

__all__ = [
    "POSITION_CLAIMS",
    "baseline_range",
    "best_static",
    "lowest_words",
    "position_claims",
    "static_matrix",
    "token_matrix",
]

#: Seed 000's claims on position and the first word (their table in the token section).
POSITION_CLAIMS: tuple[str, ...] = ("intra_position_falls", "intra_position_none",
                                    "self_first_word")


def baseline_range(per_layer: pd.DataFrame) -> pd.DataFrame:
    """The exact anisotropy baseline (``corrected`` rows), smallest and largest over layers 1
    to L, on raw and on standardised dimensions: one row per model and control."""
    exact = per_layer[per_layer["preset"] == "corrected"]
    upper = exact[exact["layer"] > 0].groupby(["model", "control"], sort=False)
    return upper.agg(**{f"{dims}, {end}": (column, end) for dims, column in (
        ("raw", "baseline_cosine"), ("standardised", "baseline_cosine_standardised"))
        for end in ("min", "max")}).round(3).reset_index()


def lowest_words(lowest: pd.DataFrame) -> pd.DataFrame:
    """The least self-similar words in layers 1, 2 and the last (``corrected`` estimators,
    seed's protocol): one row per model and layer, one column per rank."""
    low = lowest[(lowest["preset"] == "corrected") & (lowest["control"] == "none")]
    return (low[low["layer"].isin([1, 2]) | (low["depth"] == 1.0)]
            .pivot_table(index=["model", "layer"], columns="rank", values="word",
                         aggfunc="first"))


def token_matrix(table: pd.DataFrame, model: str, column: str, value: str) -> pd.DataFrame:
    """A token table (``tokens_by_position`` or ``tokens_by_upos``) of one model under the
    seed's protocol as a heatmap's matrix: ``value`` per layer (rows) and ``column``."""
    part = table[(table["model"] == model) & (table["control"] == "none")]
    return part.pivot_table(index="layer", columns=column, values=value)


def position_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The rows of :data:`POSITION_CLAIMS`: statistic, interval, rule, verdict and evidence,
    rounded to 3 decimals."""
    wanted = [CLAIMS[k].claim for k in POSITION_CLAIMS]
    return claims[claims["claim"].isin(wanted)][
        ["claim", "model", "control", "value", "ci_low", "ci_high", "threshold", "direction",
         "verdict", "evidence"]].round(3)


def best_static(static_layers: pd.DataFrame) -> pd.DataFrame:
    """Per model and control: the best layer of each PC1 (the authors', the centred; largest
    mean Spearman rho over the scored benchmarks) beside the layer-0 vectors and GloVe on the
    same items, rounded."""
    mean_rows = static_layers[static_layers["benchmark"] == "mean"]
    best = mean_rows[mean_rows["embedding"].isin(list(PC1_EMBEDDINGS.values()))
                     & (mean_rows["layer"] > 0)].sort_values("rho").groupby(
        ["model", "control", "embedding"]).tail(1)
    both = pd.concat([best, mean_rows[mean_rows["embedding"].isin([INPUT, GLOVE])]])
    return both.sort_values(["model", "control"])[
        ["model", "control", "embedding", "layer", "rho", "rho_lo", "rho_hi", "items"]].round(3)


def static_matrix(static_scores: pd.DataFrame, model: str) -> pd.DataFrame:
    """One model's PC1 vectors under the ``strict`` protocol as a heatmap's matrix: the score
    per layer (rows) and similarity benchmark or SemEval-2012 (NaN: not scored)."""
    strict = static_scores[(static_scores["protocol"] == "strict")
                           & (static_scores["embedding"] == PC1)]
    part = strict[(strict["model"] == model)
                  & strict["benchmark"].isin(SIMILARITY_BENCHMARKS + ("semeval2012",))]
    return part.pivot_table(index="layer", columns="benchmark", values="value", sort=False,
                            dropna=False)
