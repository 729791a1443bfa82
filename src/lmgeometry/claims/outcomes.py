"""What the claims come to: per seed claim and kind of model, an outcome on the scorecard.

:func:`kind_verdicts` asks whether every model of a kind agrees; :func:`primary_table` gives
each (seed, claim, task, model kind) its outcome (:data:`OUTCOMES`) from the fair stand-ins'
primary rows, their nulls and controls; :func:`seed_summary` and :func:`tier_totals` count
the outcomes per seed and calibration tier, never adding the tiers up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from lmgeometry.claims.record import (
    CALIBRATION_KINDS,
    PERMUTED_LABELS,
    ROTATED_BASIS,
    SHUFFLED_LAYERS,
    calibration_kind,
    null_kind,
    shortfall,
)

__all__ = [
    "AGREEING",
    "calibration_text",
    "cell_text",
    "fails_null",
    "flipping_controls",
    "how_it_fails",
    "kind_verdicts",
    "outcome_of",
    "OUTCOMES",
    "primary_table",
    "seed_summary",
    "tier_totals",
]


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


#: What a (seed claim, model kind) comes to on the scorecard, in the order it counts them.
#: ``reproduced``: every fair stand-in's verdict is what the seed reports for that kind and, where
#: the seed reports that the claim holds, the same rule fails on each stand-in's null
#: (:func:`lmgeometry.claims.record.attach_nulls`: an untrained twin, or the labels permuted);
#: ``also true of an untrained model``: the verdicts agree with the seed but the rule holds on an
#: untrained twin too, so it does not show what training did; ``also true with labels permuted``:
#: the same, where the null the rule holds on is its own statistic with the labels permuted (the
#: rule is met by labels the vectors cannot know, so it does not show that they carry them; for a
#: claim of absence, "no clusters", such a null holds by construction); ``also true with the layers
#: shuffled``: the same, where the null is the depth statistic over random orders of the layers (the
#: rule is met without any order of depth); ``also true with the basis rotated``: the same, where
#: the null is the statistic of single coordinates in a random basis (the rule is met without
#: privileged coordinates: it sees a few directions, not a few dimensions); ``held without a null
#: run``: the verdicts agree with the seed and no null was run for some stand-in; ``contradicted``:
#: every fair stand-in's verdict is the opposite (the ``how it fails`` column of
#: :func:`primary_table` says whether the effect is opposite or only weaker, :func:`shortfall`);
#: ``inconclusive``: anything else (an interval on the threshold, models that disagree); ``not
#: testable here``: no model here is a fair stand-in, or the seed's own evidence cannot meet the
#: claim under its stated method; ``seed silent``: the seed reports nothing for this kind.
OUTCOMES: tuple[str, ...] = ("reproduced", "also true of an untrained model",
                             "also true with labels permuted",
                             "also true with the layers shuffled",
                             "also true with the basis rotated", "held without a null run",
                             "contradicted", "inconclusive", "not testable here", "seed silent")

#: The outcomes in which the stand-ins agree with the seed.
AGREEING: tuple[str, ...] = OUTCOMES[:OUTCOMES.index("held without a null run") + 1]

#: The outcome of a claim whose rule holds on its null too, per kind of null
#: (:func:`lmgeometry.claims.record.null_kind`).
_ALSO_TRUE = {"untrained": "also true of an untrained model",
              PERMUTED_LABELS: "also true with labels permuted",
              SHUFFLED_LAYERS: "also true with the layers shuffled",
              ROTATED_BASIS: "also true with the basis rotated"}

_OPPOSITE = {"holds": "does not hold", "does not hold": "holds"}


def calibration_text(entries: Sequence[Mapping[str, object]] | None) -> tuple[str, bool]:
    """``("BERT holds (seed: holds); GPT-2 ...", valid)`` for a row's calibration list."""
    parts, valid = [], True
    for e in entries or []:
        found, reported = e.get("verdict"), e.get("reported")
        if found is None:
            parts.append(f"{e['seed_model']}: {reported} (the seed's words)")
            continue
        valid &= found == reported
        value = e.get("value")
        shown = f" {float(value):.3g}" if isinstance(value, int | float) else ""
        parts.append(f"{e['seed_model']}{shown}: {found}"
                     + ("" if found == reported else f" (the seed reports: {reported})"))
    return "; ".join(parts), valid


def cell_text(row: pd.Series, digits: int = 2, null: bool = False) -> str:
    """``"holds: 0.41 [0.38, 0.44]"``; ``"not a fair test"``; no NaN is ever printed. With
    ``null``, a row with a null run adds it: ``"...; untrained: 0.05, does not hold"`` (or
    ``"...; labels permuted: 0.50, does not hold"``, ``"...; layers shuffled: ..."``)."""
    if not bool(row.get("applies", True)):
        return "not a fair test"
    value, lo, hi = (float(row[c]) for c in ("value", "ci_low", "ci_high"))
    if not math.isfinite(value):
        return f"{row['verdict']}: not computable on this run"
    interval = (f" [{lo:.{digits}f}, {hi:.{digits}f}]"
                if math.isfinite(lo) and math.isfinite(hi) else " (no interval)")
    cell = f"{row['verdict']}: {value:.{digits}f}{interval}"
    ref = row.get("null_value")
    if null and row.get("null_verdict") and isinstance(ref, int | float) \
            and math.isfinite(float(ref)):
        which = null_kind(row.get("null_model"))
        cell += f"; {which}: {float(ref):.{digits}f}, {row['null_verdict']}"
    return cell


def outcome_of(expected: str, reproducible: bool, fair: pd.DataFrame) -> str:
    """A (claim, kind)'s :data:`OUTCOMES` entry from its fair rows."""
    verdicts = list(fair["verdict"])
    if not expected:
        return "seed silent"
    if not reproducible or not verdicts:
        return "not testable here"
    if all(v == expected for v in verdicts):
        if expected != "holds":
            return "reproduced"
        nulls = list(fair["null_verdict"])
        held = fair[fair["null_verdict"] == "holds"]
        if len(held):  # an untrained twin first: the harder null
            kinds = set(held["null_model"].map(null_kind))
            return _ALSO_TRUE["untrained" if "untrained" in kinds else min(kinds)]
        return "reproduced" if all(nulls) else "held without a null run"
    if all(v == _OPPOSITE.get(expected) for v in verdicts):
        return "contradicted"
    return "inconclusive"


def how_it_fails(outcome: str, expected: str, fair: pd.DataFrame) -> str:
    """For a contradicted claim the seed says holds: ``"opposite"``, ``"weaker"``, ``"opposite
    for some, weaker for others"`` or ``"no null to tell"`` (:func:`shortfall`)."""
    if outcome != "contradicted" or expected != "holds":
        return ""
    found = {shortfall(r) for _, r in fair.iterrows()}
    if "" in found:
        return "no null to tell"
    return found.pop() if len(found) == 1 else "opposite for some, weaker for others"


def primary_table(claims: pd.DataFrame, kinds: Mapping[str, str],
                  models: Sequence[str] | None = None) -> pd.DataFrame:
    """The scorecard's primary table: one row per (seed, claim, task, model kind).

    Only ``primary`` rows (:data:`ROLES`) count. Each row gives what the seed reports for its
    model of that kind (``seed expects``), the calibration of the rule on the seed's own
    evidence (and whether it agrees with what the seed reports), one column per model of
    the kind (``verdict: value [interval]``, or ``not a fair test``), the ``outcome``
    (:data:`OUTCOMES`), the reason a row cannot be tested, and the chapter and figure.

    Parameters
    ----------
    claims : DataFrame
        :func:`collect_claims`' table (with the calibration columns and ``chapter``).
    kinds : mapping
        Model -> ``"encoder"`` / ``"decoder"``.
    models : sequence of str, optional
        Column order of the models.
    """
    if claims.empty:
        return pd.DataFrame(columns=["seed", "claim", "task", "kind", "seed expects",
                                     "calibration", "calibration kind", "outcome"])
    d = claims[claims["role"] == "primary"].assign(kind=claims["model"].map(kinds))
    d = d.dropna(subset=["kind"])
    controls = claims[claims["role"] == "control"]
    order = list(models) if models is not None else list(dict.fromkeys(d["model"]))
    rows = []
    for (seed, claim, task, kind), g in d.groupby(["seed", "claim", "task", "kind"],
                                                  sort=False):
        first = g.iloc[0]
        text, valid = calibration_text(first["calibration"])
        reproducible = bool(first["reproducible"])
        fair = g[g["applies"].astype(bool)]
        outcome = outcome_of(str(first["expected"]), reproducible, fair)
        why = ("" if reproducible else str(first["reproducible_reason"])) or "; ".join(
            dict.fromkeys(f"{m}: {r}" for m, r in zip(g["model"], g["applies_reason"],
                                                      strict=True) if r))
        row = {"seed": seed, "claim": claim, "task": task, "kind": kind,
               "seed expects": first["expected"] or "(silent)",
               "calibration": (text or "none") + ("" if valid else " [rule fails the seed]"),
               "calibration kind": calibration_kind(first["calibration"]) or "none",
               "fair stand-ins": len(fair), "outcome": outcome,
               "how it fails": how_it_fails(outcome, str(first["expected"]), fair),
               "fails its null": fails_null(fair),
               "controls that flip it": flipping_controls(fair, controls),
               "why not testable": why, "chapter": first.get("chapter", ""),
               "figure": first["figure"]}
        for model in order:  # a claim tested with two statistics shows both
            row[model] = "; ".join(cell_text(r, null=True)
                                   for _, r in g[g["model"] == model].iterrows())
        rows.append(row)
    return pd.DataFrame(rows)


def fails_null(fair: pd.DataFrame) -> str:
    """``"yes"`` when every fair row holds and fails its null, ``"no"`` when some fair row's
    rule holds on its null too, ``"no null run"`` when a holding row has none, else ``""``."""
    held = fair[fair["verdict"] == "holds"]
    if held.empty or len(held) < len(fair):
        return ""
    if (held["null_verdict"] == "holds").any():
        return "no"
    return "yes" if held["null_verdict"].astype(bool).all() else "no null run"


def flipping_controls(fair: pd.DataFrame, controls: pd.DataFrame) -> str:
    """The controls under which some fair row's verdict differs from its primary verdict."""
    found = []
    for _, r in fair.iterrows():
        same = controls[(controls["seed"] == r["seed"]) & (controls["claim"] == r["claim"])
                        & (controls["task"] == r["task"]) & (controls["model"] == r["model"])
                        & (controls["statistic"] == r["statistic"])]
        found += [c for c, v in zip(same["control"], same["verdict"], strict=True)
                  if v != r["verdict"]]
    return ", ".join(dict.fromkeys(found))


def seed_summary(primary: pd.DataFrame) -> pd.DataFrame:
    """Per seed and calibration tier: how many claims and (claim, kind) rows of
    :func:`primary_table` there are, how many rows came to each outcome, and of the
    contradicted ones how many are opposite and how many only weaker than claimed.

    The tiers (``calibration``: :data:`CALIBRATION_KINDS`) are never added up: a rule checked
    on the seed's numbers and one the seed's words alone support are evidence of different
    weight. Claims and rows are counted apart (a claim is tested per kind of model and task).
    """
    columns = ["seed", "calibration", "claims", "rows", *OUTCOMES, "of which opposite",
               "of which weaker"]
    if primary.empty:
        return pd.DataFrame(columns=columns)
    d = primary.assign(calibration=primary.get("calibration kind", "none"))
    d = d[d["calibration"].isin(CALIBRATION_KINDS)]
    keys = ["seed", "calibration"]
    counts = d.groupby([*keys, "outcome"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(OUTCOMES), fill_value=0)
    counts.insert(0, "rows", d.groupby(keys).size())
    counts.insert(0, "claims", d.groupby(keys)["claim"].nunique())
    fails = d.get("how it fails", pd.Series("", index=d.index))
    for name in ("opposite", "weaker"):
        counts[f"of which {name}"] = (fails == name).groupby([d[k] for k in keys]).sum()
    return counts.reset_index()[columns]


def tier_totals(summary: pd.DataFrame) -> dict[str, dict[str, int]]:
    """:func:`seed_summary`'s counts added up over the seeds, per calibration tier.

    Examples
    --------
    >>> s = pd.DataFrame([{"seed": "001", "calibration": "numeric", "reproduced": 2},
    ...                   {"seed": "003", "calibration": "numeric", "reproduced": 1},
    ...                   {"seed": "000", "calibration": "quoted", "reproduced": 4}])
    >>> tier_totals(s)["numeric"]["reproduced"], tier_totals(s)["quoted"]["reproduced"]
    (3, 4)
    """
    numbers = [c for c in summary.columns if c not in ("seed", "calibration")]
    return {tier: {c: int(summary.loc[summary["calibration"] == tier, c].sum())
                   for c in numbers} for tier in CALIBRATION_KINDS}
