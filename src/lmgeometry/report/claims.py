"""Claims as data: each finding of a seed, tested on this run, with its interval and verdict.

A chapter states a seed's claim as a statistic with a 95% interval, a threshold and a
direction (:class:`Claim`); the verdict is computed from the interval by
:func:`lmgeometry.measures.stats.verdict`, never typed. :func:`claims_frame` turns a chapter's
claims into the table its results file stores under ``claims`` and its page shows;
:func:`scorecard` lays the claims of several chapters out with one column per model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from lmgeometry.measures.stats import VERDICTS, Direction, verdict
from lmgeometry.report.results import load_results

__all__ = [
    "CLAIM_COLUMNS",
    "Claim",
    "claim_sentences",
    "claims_frame",
    "collect_claims",
    "kind_verdicts",
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


#: Caption of the table of every claim at the end of a chapter.
CLAIMS_CAPTION = ("Every claim of this chapter: statistic, 95% interval, threshold and "
                  "direction, verdict, the seed's published value, the rule and its evidence.")


def scorecard_caption(seed: str) -> str:
    """Caption of a chapter's :func:`scorecard` of seed ``seed``'s claims."""
    return (f"Scorecard: seed {seed}'s claims on this build's models. Each cell reads "
            "<i>verdict: statistic [95% interval]</i>; an empty cell is a claim that does not "
            "apply to that model.")


def verdict_counts(claims: pd.DataFrame) -> pd.DataFrame:
    """How many claims hold, are inconclusive or do not hold, per model."""
    counts = claims.groupby(["model", "verdict"]).size().unstack(fill_value=0)
    return counts.reindex(columns=list(VERDICTS), fill_value=0)


def _and(names: Sequence[str], word: str = "and") -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {word} {names[-1]}"


def _verdict_phrase(verdict: str, models: Sequence[str], kinds: Mapping[str, str]) -> str:
    """``"holds for both decoders (a, b)"``, ``"does not hold for either decoder (a, b)"``, or the
    models named: a kind is named only when ``models`` hold every model of it (at least two)."""
    groups, rest = [], list(models)
    for kind in dict.fromkeys(kinds[m] for m in models if kinds.get(m)):
        every = [m for m, k in kinds.items() if k == kind]
        if len(every) >= 2 and set(every) <= set(models):
            groups.append((kind, every))
            rest = [m for m in rest if m not in every]
    phrases = []
    for kind, every in groups:
        names = f"({', '.join(every)})"
        if verdict == "does not hold":
            many = f"either {kind}" if len(every) == 2 else f"any of the {len(every)} {kind}s"
            phrases.append(f"does not hold for {many} {names}")
        else:
            many = "both" if len(every) == 2 else f"all {len(every)}"
            phrases.append(f"{verdict} for {many} {kind}s {names}")
    if rest:
        phrases.append(f"{verdict} for {_and(rest)}")
    return _and(phrases)


def claim_sentences(claims: pd.DataFrame, kinds: Mapping[str, str]) -> list[str]:
    """One sentence per claim of a claims table: the models by verdict, per control.

    ``kinds`` maps each model of the run to its kind ("encoder", "decoder"); a finding is
    stated for a kind ("both decoders") only when every model of that kind in the run (at least
    two) has that verdict, else per model. Example: "One of the clusters is the first words:
    holds for both decoders (a, b). With the first word excluded: does not hold for a."
    """
    out = []
    for claim, rows in claims.groupby("claim", sort=False):
        parts = []
        for control, sub in rows.groupby("control", sort=False):
            verdicts = [_verdict_phrase(v, list(sub.loc[sub["verdict"] == v, "model"]), kinds)
                        for v in VERDICTS if (sub["verdict"] == v).any()]
            lead = f"{claim[0].upper()}{claim[1:]}" if control == "none" else f"With the {control}"
            parts.append(f"{lead}: {'; '.join(verdicts)}.")
        out.append(" ".join(parts))
    return out


def collect_claims(folder: str | Path, exclude: Sequence[str] = (),
                   before: str | None = None) -> pd.DataFrame:
    """Every chapter's claims from the results files in ``folder``, with a ``chapter`` column.

    Reads ``*.results.json`` (chapter order by file name), keeps the ``claims`` entries that
    have the claim columns (:data:`CLAIM_COLUMNS`), and leaves out the files named in
    ``exclude``. With ``before`` (the reader's own results file), only the files of the
    chapters that run before it (chapters run in number order): a chapter that runs later
    (the About page, which reads the scorecard's records) is not read, so no two chapters
    are each other's inputs and a warm rebuild settles.
    """
    frames = []
    for path in sorted(Path(folder).glob("*.results.json")):
        if path.name in exclude or (before is not None and path.name >= before):
            continue
        rows = load_results(path).get("claims") or []
        frame = pd.DataFrame(rows)
        if frame.empty or not set(CLAIM_COLUMNS) <= set(frame.columns):
            continue
        chapter = path.name.removesuffix(".results.json")
        frames.append(frame[list(CLAIM_COLUMNS)].assign(chapter=chapter))
    if not frames:
        return pd.DataFrame(columns=[*CLAIM_COLUMNS, "chapter"])
    return pd.concat(frames, ignore_index=True)


def kind_verdicts(claims: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """Per claim, statistic and control, the verdict for each kind of model.

    A claim holds (or does not hold, or is inconclusive) *for a kind* ("encoder", "decoder")
    only when the run has at least two models of that kind and every one of them has that
    verdict; models of one kind that disagree give ``"mixed"``, and a kind with a single model
    gives ``"one model: <verdict>"`` (one model cannot speak for its kind). ``kinds`` maps
    model -> kind; models not in it are left out.
    """
    d = claims.assign(kind=claims["model"].map(kinds)).dropna(subset=["kind"])
    sizes = d.groupby("kind")["model"].nunique()

    def agree(rows: pd.DataFrame) -> str:
        values = set(rows["verdict"])
        if len(values) > 1:
            return "mixed"
        return values.pop() if sizes[rows.name[-1]] >= 2 else f"one model: {values.pop()}"

    keys = ["seed", "claim", "statistic", "control", "kind"]
    out = d.groupby(keys, sort=False)[["verdict"]].apply(agree).rename("verdict")
    return out.unstack("kind").reset_index().rename_axis(columns=None)
