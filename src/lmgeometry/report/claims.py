"""Claims as data: each finding of a seed, tested on this run, with its interval and verdict.

A chapter states a seed's claim as a statistic with a 95% interval, a threshold and a
direction (:class:`Claim`); the verdict is computed from the interval by
:func:`lmgeometry.measures.stats.verdict`, never typed. :func:`claims_frame` turns a chapter's
claims into the table its results file stores under ``claims`` and its page shows;
:func:`scorecard` lays the claims of several chapters out with one column per model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

import pandas as pd

from lmgeometry.measures.stats import VERDICTS, Direction, verdict

__all__ = [
    "CLAIM_COLUMNS",
    "Claim",
    "claims_frame",
    "scorecard",
    "verdict_counts",
]

#: Columns of a claims table, in order.
CLAIM_COLUMNS: tuple[str, ...] = (
    "seed", "claim", "model", "control", "statistic", "value", "ci_low", "ci_high",
    "threshold", "direction", "rule", "published", "verdict", "figure", "evidence",
)


@dataclass(frozen=True)
class Claim:
    """One seed claim tested on one model under one control.

    Attributes
    ----------
    seed : str
        The seed document ("000", "001", "003", "004").
    claim : str
        The claim in words, as the seed makes it ("adjusted self-similarity falls with depth").
    model : str
        The model spec as given to the chapter.
    control : str
        ``"none"`` (the seed's protocol), ``"bos"`` (a BOS token prepended) or
        ``"first word excluded"``.
    statistic : str
        What ``value`` is ("Spearman rho of adjusted SelfSim with the layer index").
    value, ci_low, ci_high : float
        The statistic and its 95% interval.
    threshold : float
        The effect size the claim needs.
    direction : {"above", "below"}
        The side of ``threshold`` the claim puts the statistic on.
    rule : str
        Why this threshold (stated in the chapter's text).
    published : str
        The seed's own number or pattern, where it gives one.
    figure : str
        The label of the figure that shows the evidence.
    evidence : str
        A short line with the numbers behind the statistic.
    """

    seed: str
    claim: str
    model: str
    statistic: str
    value: float
    ci_low: float
    ci_high: float
    threshold: float
    direction: Direction
    rule: str
    control: str = "none"
    published: str = ""
    figure: str = ""
    evidence: str = ""
    verdict: str = field(init=False)

    def __post_init__(self) -> None:
        lo, hi, value = float(self.ci_low), float(self.ci_high), float(self.value)
        if math.isfinite(lo) and math.isfinite(hi) and math.isfinite(value) \
                and not lo - 1e-12 <= value <= hi + 1e-12:
            raise ValueError(f"{self.claim!r} ({self.model}): value {value} lies outside its "
                             f"interval [{lo}, {hi}]")
        object.__setattr__(self, "verdict", verdict(lo, hi, self.threshold, self.direction))


def claims_frame(claims: Iterable[Claim]) -> pd.DataFrame:
    """The claims as a table with :data:`CLAIM_COLUMNS` (one row per claim)."""
    rows = [asdict(c) for c in claims]
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def scorecard(claims: pd.DataFrame, models: Sequence[str] | None = None,
              digits: int = 2) -> pd.DataFrame:
    """Claims as rows, one column per model: ``"holds: 0.41 [0.38, 0.44]"``.

    Rows are (seed, claim, control, statistic, threshold); a model without that claim shows
    an empty cell. ``models`` fixes the column order (default: as they appear).
    """
    if claims.empty:
        return pd.DataFrame()
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))

    def cell(r: pd.Series) -> str:
        return (f"{r['verdict']}: {r['value']:.{digits}f} "
                f"[{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]")

    d = claims.assign(
        cell=claims.apply(cell, axis=1),
        side=claims["direction"] + " " + claims["threshold"].map(lambda t: f"{t:g}"),
    )
    index = ["seed", "claim", "control", "statistic", "side", "published"]
    wide = d.pivot_table(index=index, columns="model", values="cell", aggfunc="first",
                         sort=False)
    return wide.reindex(columns=[m for m in order if m in wide.columns]).fillna("")


def verdict_counts(claims: pd.DataFrame) -> pd.DataFrame:
    """How many claims hold, are inconclusive or do not hold, per model."""
    counts = claims.groupby(["model", "verdict"]).size().unstack(fill_value=0)
    return counts.reindex(columns=list(VERDICTS), fill_value=0)
