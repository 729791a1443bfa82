"""Claims as data: each finding of a seed, tested on this run, with its interval and verdict.

A chapter states a seed's claim as a statistic with a 95% interval, a threshold and a
direction (:class:`Claim`); the verdict is computed from the interval by
:func:`lmgeometry.measures.stats.verdict`, never typed. :func:`claims_frame` turns a chapter's
claims into the table its results file stores under ``claims`` and its page shows;
:func:`scorecard` lays the claims of several chapters out with one column per model.

A chapter's page puts the answer first and the verdicts after the evidence: a findings box at
the top (:func:`findings_box`, generated from the claims table), a compact grid of verdicts
after the figures (:func:`verdict_grid`, shown by :func:`show_verdict_grid`: claims as rows,
models as columns, each row linked to its figure), and the full table at the end.

A rule is only as good as its check on the seed's own evidence. Every row therefore also
carries (:data:`CALIBRATION_COLUMNS`): its ``role`` (:data:`ROLES`: only ``primary`` rows are
tallied as evidence on the seed), what the seed reports for a model of the row's kind
(``expected``), the ``calibration`` (the same statistic and rule applied to each seed model's
published evidence, :class:`Evidence` and :func:`calibration_entry`), whether the seed's own
evidence can meet the claim under its stated method (``reproducible``), and whether the row's
model is a fair stand-in for the seed's model on this claim (``applies``). The chapters fill
them from the seeds' evidence (:mod:`lmgeometry.chapters.calibration`).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from lmgeometry.measures.stats import VERDICTS, Direction, verdict
from lmgeometry.report.plot_style import label, plain
from lmgeometry.report.results import list_results, load_results

__all__ = [
    "CALIBRATION_COLUMNS",
    "calibration_entry",
    "calibration_kind",
    "CALIBRATION_KINDS",
    "CLAIM_COLUMNS",
    "Claim",
    "Evidence",
    "claim_sentences",
    "claims_frame",
    "collect_claims",
    "findings_box",
    "findings_html",
    "GRID_ANCHOR",
    "GRID_CAPTION",
    "kind_verdicts",
    "OUTCOMES",
    "primary_table",
    "ROLES",
    "AGREEING",
    "attach_nulls",
    "NULL_COLUMNS",
    "PERMUTED_LABELS",
    "is_permuted",
    "permuted_model",
    "shortfall",
    "on_other_estimator",
    "role_of",
    "scorecard",
    "seed_summary",
    "tier_totals",
    "show_verdict_grid",
    "verdict_counts",
    "VERDICT_CLASSES",
    "verdict_grid",
]

#: What a claim row is. ``primary``: the seed's claim, on the seed's protocol, with the
#: estimator the seed's numbers come from: the rows tallied as evidence on the seed.
#: ``control``: the same claim under a control (each sentence's first word excluded, a BOS
#: token). ``estimator``: under the other estimator preset, beside the primary row.
#: ``beyond``: a claim the seed does not make.
ROLES: tuple[str, ...] = ("primary", "control", "estimator", "beyond")

#: The columns that put a row beside the seed's own evidence (see the module docstring).
CALIBRATION_COLUMNS: tuple[str, ...] = (
    "role", "expected", "calibration", "calibration_kind", "reproducible", "reproducible_reason",
    "applies", "applies_reason",
)

#: The tiers of calibration (:func:`calibration_kind`): a rule checked on the seed's own numbers
#: (released values, a table, a figure's readable values), or only on its words.
CALIBRATION_KINDS: tuple[str, ...] = ("numeric", "quoted")

#: The columns that put a row beside its null (:func:`attach_nulls`): the same rule on an
#: untrained twin of the row's model (same architecture and tokenizer, random weights), or,
#: for a statistic that reads labels, on the same vectors with the labels permuted
#: (:func:`permuted_model`): which null, its statistic, interval and verdict, and
#: ``discriminates``: the rule holds here and not on the null (True), or not (False: it fails
#: here, or holds on the null too); None when the row has no null.
NULL_COLUMNS: tuple[str, ...] = (
    "null_model", "null_value", "null_ci_low", "null_ci_high", "null_verdict", "discriminates",
)

#: How a row's ``null_model`` names the labels-permuted null (:func:`permuted_model`).
PERMUTED_LABELS = "labels permuted"


def permuted_model(model: str) -> str:
    """The ``null_model`` of a row whose null is its own statistic with the labels permuted
    (:mod:`lmgeometry.measures.permutation`): the same model and vectors, labels shuffled.

    Examples
    --------
    >>> permuted_model("minilm-l6"), is_permuted(permuted_model("minilm-l6"))
    ('labels permuted: minilm-l6', True)
    >>> is_permuted("untrained:minilm-l6")
    False
    """
    return f"{PERMUTED_LABELS}: {model}"


def is_permuted(null_model: object) -> bool:
    """Whether a row's ``null_model`` is a labels-permuted null (:func:`permuted_model`)."""
    return str(null_model).startswith(f"{PERMUTED_LABELS}: ")

#: Columns of a claims table, in order.
CLAIM_COLUMNS: tuple[str, ...] = (
    "seed", "claim", "model", "control", "statistic", "preset", "task", "value", "ci_low",
    "ci_high", "threshold", "direction", "rule", "published", "verdict", "figure", "evidence",
    *CALIBRATION_COLUMNS, *NULL_COLUMNS,
)

#: The null columns' types, the same in every chapter's table (a chapter without nulls holds
#: only missing values, which must not decide the type of the gathered column).
_NULL_DTYPES: dict[str, str] = {"null_model": "object", "null_value": "float64",
                                "null_ci_low": "float64", "null_ci_high": "float64",
                                "null_verdict": "object", "discriminates": "object"}

#: A row's default null columns: no null run.
_NO_NULL: dict[str, object] = {"null_model": "", "null_value": math.nan,
                               "null_ci_low": math.nan, "null_ci_high": math.nan,
                               "null_verdict": "", "discriminates": None}

#: The estimator preset that is not the seed's own (its rows are ``estimator`` rows).
_OTHER_PRESET = "corrected"

#: Columns a results file written before they existed may lack, with the value its rows
#: are read with (:func:`collect_claims`): ``preset`` (its rows' ``role``, which the scorecard
#: counts by, was stored with them) and ``task``.
_LATER_COLUMNS: dict[str, object] = {"preset": "", "task": "", "calibration_kind": "",
                                      **_NO_NULL}


@dataclass(frozen=True)
class Evidence:
    """A seed model's own evidence on one claim: the claim's statistic on what the seed
    published, and what the seed says of that model.

    Attributes
    ----------
    seed_model : str
        The model of the seed ("BERT", "GPT-2", "ELMo").
    reported : str
        What the seed reports for it: ``"holds"`` or ``"does not hold"``.
    source : str
        Where the value comes from ("released self_similarity.csv", "Table 1", "qualitative:
        Figure 3's text").
    value, ci_low, ci_high : float, optional
        The statistic; the interval where the seed's data allow one (a bootstrap over the
        released per-word values), else None (point values); no value for ``qualitative``
        evidence (the seed's words only).
    """

    seed_model: str
    reported: str
    source: str
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


def calibration_entry(evidence: Evidence, threshold: float, direction: Direction
                      ) -> dict[str, object]:
    """One ``calibration`` item: the evidence and the verdict of the row's rule on it.

    The verdict comes from the interval where there is one, else from the value alone (a point
    equal to the threshold is inconclusive); qualitative evidence has no verdict (None).

    Examples
    --------
    >>> e = Evidence("GPT-2", "holds", "released embedding_space_stats.json", 0.46)
    >>> calibration_entry(e, 0.3, "above")["verdict"], calibration_entry(e, 0.5, "above")["verdict"]
    ('holds', 'does not hold')
    """
    value = evidence.value
    if value is None or not math.isfinite(value):
        found = None
    elif evidence.ci_low is not None and evidence.ci_high is not None:
        found = verdict(evidence.ci_low, evidence.ci_high, threshold, direction)
    else:
        found = verdict(value, value, threshold, direction)
    return {"seed_model": evidence.seed_model, "value": value, "ci_low": evidence.ci_low,
            "ci_high": evidence.ci_high, "verdict": found, "reported": evidence.reported,
            "source": evidence.source}


def calibration_kind(entries: Sequence[Mapping[str, object]] | None) -> str:
    """A rule's tier (:data:`CALIBRATION_KINDS`): ``"numeric"`` when the rule was run on at
    least one seed model's number (its entry has a verdict), ``"quoted"`` when the seed's
    evidence is only its words, ``""`` without calibration (a claim beyond the seed).

    Examples
    --------
    >>> calibration_kind([{"verdict": None}, {"verdict": "holds"}])
    'numeric'
    >>> calibration_kind([{"verdict": None}]), calibration_kind([])
    ('quoted', '')
    """
    entries = list(entries or [])
    if not entries:
        return ""
    return "numeric" if any(e.get("verdict") is not None for e in entries) else "quoted"


def on_other_estimator(preset: str) -> bool:
    """Whether a row's ``preset`` (:attr:`Claim.preset`) is the estimator preset that is not
    the seed's.

    Examples
    --------
    >>> [on_other_estimator(p) for p in ("corrected", "ethayarajh2019", "")]
    [True, False, False]
    """
    return preset == _OTHER_PRESET


def role_of(claim: str, control: str, preset: str = "") -> str:
    """A row's default :data:`ROLES` entry from its claim text, control and estimator preset."""
    if claim.startswith("beyond the paper"):
        return "beyond"
    if control != "none":
        return "control"
    return "estimator" if on_other_estimator(preset) else "primary"


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
    preset : str
        The estimator preset the statistic is computed with, where a chapter computes it with
        several (chapter 3: ``"ethayarajh2019"``, the seed's, or ``"corrected"``); ``""`` for
        a statistic with one estimator. The statistic's text names it for the reader; code
        reads this field (:func:`role_of`), never the text.
    task : str
        The task a statistic is measured on, where a chapter tests a claim per task (seed
        003's: ``"SST-2"`` or ``"QNLI"``); ``""`` otherwise. The scorecard counts a claim per
        task (:func:`primary_table`) by this field; the statistic's text names the task for
        the reader.
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
    preset: str = ""
    task: str = ""
    verdict: str = field(init=False)

    def __post_init__(self) -> None:
        lo, hi, value = float(self.ci_low), float(self.ci_high), float(self.value)
        if math.isfinite(lo) and math.isfinite(hi) and math.isfinite(value) \
                and not lo - 1e-12 <= value <= hi + 1e-12:
            raise ValueError(f"{self.claim!r} ({self.model}): value {value} lies outside its "
                             f"interval [{lo}, {hi}]")
        object.__setattr__(self, "verdict", verdict(lo, hi, self.threshold, self.direction))


def claims_frame(claims: Iterable[Claim]) -> pd.DataFrame:
    """The claims as a table with :data:`CLAIM_COLUMNS` (one row per claim).

    The :data:`CALIBRATION_COLUMNS` start at their defaults: the role from :func:`role_of`, no
    expectation or calibration, reproducible and applicable; the chapters then fill them in
    (:func:`lmgeometry.chapters.calibration.annotate`).
    """
    rows = []
    for c in claims:
        row = asdict(c)
        row.update(role=role_of(c.claim, c.control, c.preset), expected="", calibration=[],
                   calibration_kind="", reproducible=True, reproducible_reason="",
                   applies=True, applies_reason="", **_NO_NULL)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


#: The columns a claim row and its null row must share (the model aside).
_NULL_KEY: tuple[str, ...] = ("seed", "claim", "control", "preset", "task", "statistic")


def attach_nulls(claims: pd.DataFrame, nulls: pd.DataFrame,
                 null_of: Mapping[str, str]) -> pd.DataFrame:
    """Put each claim row beside the same rule run on its model's null (:data:`NULL_COLUMNS`).

    A rule that also holds on a model that was never trained says nothing about training: it
    cannot count as reproducing a seed's finding (:func:`primary_table`). ``nulls`` is the
    claims table of the null models, computed by the same chapter code with the same
    parameters; a row is paired with the null row of ``null_of[row.model]`` with the same
    seed, claim, control, preset, task and statistic (a row without one keeps no null).

    Parameters
    ----------
    claims, nulls : DataFrame
        :func:`claims_frame` tables of the models and of their nulls.
    null_of : mapping
        Model -> the model its null rows carry (``"untrained:minilm-l6"`` for
        ``"minilm-l6"``).

    Returns
    -------
    DataFrame
        A copy of ``claims`` with the null columns filled.

    Examples
    --------
    >>> kw = dict(seed="001", claim="c", statistic="s", threshold=0.3, direction="above",
    ...           rule="r")
    >>> real = claims_frame([Claim(model="m", value=0.5, ci_low=0.4, ci_high=0.6, **kw)])
    >>> null = claims_frame([Claim(model="u:m", value=0.45, ci_low=0.4, ci_high=0.5, **kw)])
    >>> row = attach_nulls(real, null, {"m": "u:m"}).iloc[0]
    >>> row["null_verdict"], row["discriminates"]
    ('holds', False)
    """
    out = claims.copy()
    for column, default in _NO_NULL.items():
        out[column] = pd.Series([default] * len(out), index=out.index, dtype=object)
    if nulls.empty:
        return out
    index = {tuple(r[k] for k in ("model", *_NULL_KEY)): r for _, r in nulls.iterrows()}
    for i, row in out.iterrows():
        model = null_of.get(str(row["model"]))
        found = index.get((model, *(row[k] for k in _NULL_KEY))) if model else None
        if found is None:
            continue
        out.at[i, "null_model"] = model
        for column in ("value", "ci_low", "ci_high", "verdict"):
            out.at[i, f"null_{column}"] = found[column]
        out.at[i, "discriminates"] = row["verdict"] == "holds" and found["verdict"] != "holds"
    return out


def shortfall(row: Mapping[str, object]) -> str:
    """How a row that does not hold falls short: ``"opposite"``, ``"weaker"`` or ``""``.

    The reference is the row's null (:func:`attach_nulls`): ``"opposite"`` when the whole
    interval lies beyond the null's value on the side away from the claim (the trained model
    moved the other way), ``"weaker"`` when the statistic is on the claim's side of the null but
    short of the threshold; ``""`` for a row that holds, is inconclusive, or has no null to tell.

    Examples
    --------
    >>> base = dict(verdict="does not hold", direction="above", null_value=0.1)
    >>> shortfall({**base, "ci_low": -0.3, "ci_high": -0.2})
    'opposite'
    >>> shortfall({**base, "ci_low": 0.15, "ci_high": 0.25})
    'weaker'
    >>> shortfall({**base, "null_value": float("nan"), "ci_low": 0.1, "ci_high": 0.2})
    ''
    """
    ref = row.get("null_value")
    if row.get("verdict") != "does not hold" or not isinstance(ref, int | float) \
            or not math.isfinite(float(ref)):
        return ""
    lo, hi, ref = float(row["ci_low"]), float(row["ci_high"]), float(ref)
    away = hi < ref if row["direction"] == "above" else lo > ref
    return "opposite" if away else "weaker"


def scorecard(claims: pd.DataFrame, models: Sequence[str] | None = None,
              digits: int = 2) -> pd.DataFrame:
    """Claims as rows, one column per model: ``"holds: 0.41 [0.38, 0.44]"``.

    Rows are (seed, claim, control, statistic, threshold); a model without that claim shows
    an empty cell. ``models`` fixes the column order (default: as they appear).
    """
    if claims.empty:
        return pd.DataFrame()
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))

    d = claims.assign(
        cell=claims.apply(lambda r: _cell(r, digits), axis=1),
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
            fair = sub["applies"].astype(bool) if "applies" in sub else pd.Series(True, sub.index)
            ok = sub[fair]
            verdicts = [_verdict_phrase(v, list(dict.fromkeys(ok.loc[ok["verdict"] == v,
                                                                      "model"])), kinds)
                        for v in VERDICTS if (ok["verdict"] == v).any()]
            unfair = list(dict.fromkeys(sub.loc[~fair, "model"]))
            if unfair:
                verdicts.append(f"not a fair test on {_and(unfair)}")
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
    are each other's inputs and a warm rebuild settles. A file written before a column was
    added (``preset``, ``task``) is read with that column's default (``""``); a per-task
    chapter's file (seed 003's) written before ``task`` would count its tasks as one: run the
    chapter again.
    """
    frames = []
    for path in list_results(folder, before):
        if path.name in exclude:
            continue
        rows = load_results(path).get("claims") or []
        frame = pd.DataFrame(rows)
        if not frame.empty:
            frame = frame.assign(**{c: v for c, v in _LATER_COLUMNS.items() if c not in frame})
        if frame.empty or not set(CLAIM_COLUMNS) <= set(frame.columns):
            continue
        chapter = path.name.removesuffix(".results.json")
        frames.append(frame[list(CLAIM_COLUMNS)].assign(chapter=chapter).astype(_NULL_DTYPES))
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


#: What a (seed claim, model kind) comes to on the scorecard, in the order it counts them.
#: ``reproduced``: every fair stand-in's verdict is what the seed reports for that kind and,
#: where the seed reports that the claim holds, the same rule fails on each stand-in's
#: null (:func:`attach_nulls`: an untrained twin, or the labels permuted); ``also true of an
#: untrained model``: the verdicts agree with the seed but the rule holds on an untrained twin
#: too, so it does not show what training did; ``also true with labels permuted``: the same,
#: where the null the rule holds on is its own statistic with the labels permuted (the rule is
#: met by labels the vectors cannot know, so it does not show that they carry them; for a
#: claim of absence, "no clusters", such a null holds by construction); ``held without a
#: null run``: the verdicts agree with the seed and no null was run for some stand-in;
#: ``contradicted``: every fair stand-in's verdict is the opposite (the ``how it fails``
#: column of :func:`primary_table` says whether the effect is opposite or only weaker,
#: :func:`shortfall`); ``inconclusive``: anything else (an interval on the threshold, models
#: that disagree); ``not testable here``: no model here is a fair stand-in, or the
#: seed's own evidence cannot meet the claim under its stated method; ``seed silent``: the
#: seed reports nothing for this kind.
OUTCOMES: tuple[str, ...] = ("reproduced", "also true of an untrained model",
                             "also true with labels permuted", "held without a null run",
                             "contradicted", "inconclusive", "not testable here", "seed silent")

#: The outcomes in which the stand-ins agree with the seed.
AGREEING: tuple[str, ...] = OUTCOMES[:4]

_OPPOSITE = {"holds": "does not hold", "does not hold": "holds"}


def _calibration_text(entries: Sequence[Mapping[str, object]] | None) -> tuple[str, bool]:
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


def _cell(row: pd.Series, digits: int = 2, null: bool = False) -> str:
    """``"holds: 0.41 [0.38, 0.44]"``; ``"not a fair test"``; no NaN is ever printed. With
    ``null``, a row with a null run adds it: ``"...; untrained: 0.05, does not hold"`` (or
    ``"...; labels permuted: 0.50, does not hold"``)."""
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
        which = PERMUTED_LABELS if is_permuted(row.get("null_model")) else "untrained"
        cell += f"; {which}: {float(ref):.{digits}f}, {row['null_verdict']}"
    return cell


def _outcome(expected: str, reproducible: bool, fair: pd.DataFrame) -> str:
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
        if len(held):
            return ("also true with labels permuted" if held["null_model"].map(is_permuted).all()
                    else "also true of an untrained model")
        return "reproduced" if all(nulls) else "held without a null run"
    if all(v == _OPPOSITE.get(expected) for v in verdicts):
        return "contradicted"
    return "inconclusive"


def _how_it_fails(outcome: str, expected: str, fair: pd.DataFrame) -> str:
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
        text, valid = _calibration_text(first["calibration"])
        reproducible = bool(first["reproducible"])
        fair = g[g["applies"].astype(bool)]
        outcome = _outcome(str(first["expected"]), reproducible, fair)
        why = ("" if reproducible else str(first["reproducible_reason"])) or "; ".join(
            dict.fromkeys(f"{m}: {r}" for m, r in zip(g["model"], g["applies_reason"],
                                                      strict=True) if r))
        row = {"seed": seed, "claim": claim, "task": task, "kind": kind,
               "seed expects": first["expected"] or "(silent)",
               "calibration": (text or "none") + ("" if valid else " [rule fails the seed]"),
               "calibration kind": calibration_kind(first["calibration"]) or "none",
               "fair stand-ins": len(fair), "outcome": outcome,
               "how it fails": _how_it_fails(outcome, str(first["expected"]), fair),
               "fails its null": _fails_null(fair),
               "controls that flip it": _flipping_controls(fair, controls),
               "why not testable": why, "chapter": first.get("chapter", ""),
               "figure": first["figure"]}
        for model in order:  # a claim tested with two statistics shows both
            row[model] = "; ".join(_cell(r, null=True)
                                   for _, r in g[g["model"] == model].iterrows())
        rows.append(row)
    return pd.DataFrame(rows)


def _fails_null(fair: pd.DataFrame) -> str:
    """``"yes"`` when every fair row holds and fails its null, ``"no"`` when some fair row's
    rule holds on its null too, ``"no null run"`` when a holding row has none, else ``""``."""
    held = fair[fair["verdict"] == "holds"]
    if held.empty or len(held) < len(fair):
        return ""
    if (held["null_verdict"] == "holds").any():
        return "no"
    return "yes" if held["null_verdict"].astype(bool).all() else "no null run"


def _flipping_controls(fair: pd.DataFrame, controls: pd.DataFrame) -> str:
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


#: The HTML id of a chapter's verdict grid (:func:`show_verdict_grid`); the findings box
#: (:func:`findings_box`) links to it.
GRID_ANCHOR = "verdicts"

#: The CSS class of a verdict grid's cell, per verdict (``lmgeometry.css`` colours them).
VERDICT_CLASSES: dict[str, str] = {"holds": "lmg-holds", "does not hold": "lmg-fails",
                                   "inconclusive": "lmg-open", "not a fair test": "lmg-unfair"}

#: Characters trimmed from the ends of a statistic's distinguishing words (:func:`_variants`).
_TRIM = " ,;:([])"


def _rule(direction: str, threshold: float) -> str:
    """``"above 0.5"``, ``"below 0.167"`` (three significant digits)."""
    return f"{direction} {threshold:.3g}"


def _balanced(text: str) -> str:
    """``text`` without its brackets when they do not pair up (``"zeroed (SST-2"``)."""
    for left, right in ("()", "[]"):
        if text.count(left) != text.count(right):
            text = text.replace(left, "").replace(right, "")
    return text


def _variants(statistics: Sequence[str]) -> list[str]:
    """What tells statistics apart: each one without the words that all of them share at the
    start and at the end; ``""`` for each when they are all the same.

    Examples
    --------
    >>> _variants(["rho, layers 1-L [ethayarajh2019 estimators]",
    ...            "rho, layers 1-L [corrected estimators]"])
    ['ethayarajh2019', 'corrected']
    >>> _variants(["share, last layer (SST-2, fine-tuned)", "share, last layer (QNLI, fine-tuned)"])
    ['SST-2', 'QNLI']
    """
    unique = list(dict.fromkeys(statistics))
    if len(unique) < 2:
        return [""] * len(statistics)
    words = [s.split() for s in unique]
    shortest = min(len(w) for w in words)
    head = 0
    while head < shortest and len({w[head] for w in words}) == 1:
        head += 1
    tail = 0
    while head + tail < shortest and len({w[-1 - tail] for w in words}) == 1:
        tail += 1
    short = {s: _balanced(" ".join(w[head:len(w) - tail]).strip(_TRIM)).strip(_TRIM) or s
             for s, w in zip(unique, words, strict=True)}
    return [short[s] for s in statistics]


def verdict_grid(claims: pd.DataFrame, models: Sequence[str] | None = None,
                 digits: int = 2) -> pd.DataFrame:
    """The claims as a compact grid: one row per claim, control and test, one column per model.

    Parameters
    ----------
    claims : DataFrame
        A claims table (:data:`CLAIM_COLUMNS`), or the rows of it to show.
    models : sequence of str, optional
        The model columns, in order (default: as they appear).
    digits : int
        Decimals of the values and intervals.

    Returns
    -------
    DataFrame
        Columns ``claim``, ``test`` (what tells apart the statistics of one claim under one
        control for one model, e.g. the task or the estimator; ``""`` where there is one),
        ``control``, ``rule`` (``"above 0.5"``), one column per model (``"holds: 0.41 [0.38,
        0.44]"``, ``"not a fair test"``, ``""`` where the model has no such row), then
        ``figure`` and ``statistic`` (of the row's first model). No ``published`` column: the
        full claims table keeps it.
    """
    if claims.empty:
        return pd.DataFrame(columns=["claim", "test", "control", "rule", "figure", "statistic"])
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))
    d = claims[claims["model"].isin(order)].copy()
    d["cell"] = [_cell(r, digits) for _, r in d.iterrows()]
    d["rule"] = [_rule(a, b) for a, b in zip(d["direction"], d["threshold"], strict=True)]
    d["test"] = ""
    for _, rows in d.groupby(["claim", "control", "model"], sort=False):
        d.loc[rows.index, "test"] = [label(t) if t else t
                                     for t in _variants(list(rows["statistic"]))]
    key = ["claim", "test", "control", "rule"]
    cells = d.pivot_table(index=key, columns="model", values="cell", aggfunc="first",
                          sort=False)
    ranked = d.sort_values("model", key=lambda m: m.map(order.index), kind="stable")
    first = ranked.groupby(key, sort=False)[["figure", "statistic"]].first()
    wide = first.reindex(cells.index).join(
        cells.reindex(columns=[m for m in order if m in cells.columns])).fillna("")
    return wide.reset_index()[["claim", "test", "control", "rule",
                               *[m for m in order if m in wide.columns], "figure", "statistic"]]


def _figure_link(name: str) -> str:
    """A grid row's link text for figure ``name``: ``"Figure 3"`` where this chapter has shown
    it, ``"section"`` for a section label, else the name."""
    from lmgeometry.report.figures import figure_number

    number = figure_number(name)
    if number is not None:
        return f"Figure {number}"
    return "section" if name.startswith("fig-ch") else name


#: Caption of a chapter's verdict grid (:func:`show_verdict_grid`).
GRID_CAPTION = ("The verdicts, claim by model, each cell <i>verdict: statistic [95% interval]"
                "</i>: <i>holds</i> when the whole interval lies on the claimed side of the "
                "threshold (the rule), <i>does not hold</i> when it lies wholly on the other "
                "side, <i>inconclusive</i> otherwise; <i>not a fair test</i> where the model is "
                "no fair stand-in for the seed's, empty where the claim is not made of that "
                "model. Each claim links to the figure that shows its evidence (hover it for "
                "its statistic); the table at the end of the chapter gives every field, with "
                "the seed's published value and the reason for each threshold.")


def show_verdict_grid(claims: pd.DataFrame, models: Sequence[str] | None = None,
                      caption: str = GRID_CAPTION, *, control_name: str = "control",
                      digits: int = 2, anchor: str = GRID_ANCHOR) -> None:
    """Display :func:`verdict_grid` as the chapter's next table, after the figures it links to.

    Each claim links to the figure (or section) that shows its evidence and names it in the
    ``evidence`` column; hovering a claim shows its statistic; the cells are coloured by verdict
    (:data:`VERDICT_CLASSES`). Columns with one value throughout (no ``test``, only the
    seed's protocol as ``control``) are left out.

    Parameters
    ----------
    claims, models, digits
        As for :func:`verdict_grid`.
    caption : str
        The table's caption (HTML; default :data:`GRID_CAPTION`).
    control_name : str
        The header of the ``control`` column ("intervention").
    anchor : str
        The table's HTML id (the findings box links to :data:`GRID_ANCHOR`).
    """
    from lmgeometry.report.figures import figure_anchor, show_table

    grid = verdict_grid(claims, models, digits)
    names = [m for m in grid.columns if m not in
             ("claim", "test", "control", "rule", "figure", "statistic")]
    hrefs = [f"#{figure_anchor(f)}" if f else None for f in grid["figure"]]
    shown = grid.assign(evidence=[_figure_link(f) if f else "" for f in grid["figure"]])
    drop = ["figure", "statistic"] + [c for c in ("test", "control") if
                                      set(grid[c]) <= {"", "none"}]
    if "control" in shown.columns:  # the seed's protocol keeps every word
        shown["control"] = [label(c) if c == "none" else c for c in shown["control"]]
    display_names = {m: plain(m) for m in names}  # MiniLM, not minilm-l6
    shown = shown.drop(columns=drop).rename(columns={"control": control_name, **display_names})
    show_table(shown, caption, fold_rows=max(len(shown), 1), anchor=anchor,
               links={"claim": hrefs, "evidence": hrefs},
               titles={"claim": list(grid["statistic"])},
               classes={display_names[m]: [VERDICT_CLASSES.get(str(c).split(":")[0])
                                           for c in grid[m]] for m in names})


def findings_html(question: str, answer: str, caveat: str = "") -> str:
    """A chapter's findings box: an HTML admonition (it renders in the book and in Jupyter)
    with the question, the answer (HTML, generated from the results) and the main caveat."""
    return ('<div class="admonition note lmg-findings"><p class="admonition-title">Findings'
            f"</p><p><b>Question.</b> {question}</p>{answer}"
            + (f'<p class="lmg-caveat"><b>Main caveat.</b> {caveat}</p>' if caveat else "")
            + "</div>")


def _tally(verdicts: Sequence[str]) -> str:
    """``"1 holds, 2 do not hold, 1 inconclusive"`` (counts of 0 left out)."""
    forms = {"holds": ("holds", "hold"), "does not hold": ("does not hold", "do not hold"),
             "inconclusive": ("inconclusive", "inconclusive")}
    counts = [(v, list(verdicts).count(v)) for v in VERDICTS]
    return ", ".join(f"{n} {forms[v][n != 1]}" for v, n in counts if n)


def _seed_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows tallied as tests of the seed's claims: its protocol, not beyond the seed."""
    return rows[(rows["control"] == "none") & (rows["role"] != "beyond")]


def _model_line(model: str, rows: pd.DataFrame, kind: str) -> str:
    """One model's tally: the seed's claims, the claims beyond it, the verdicts a control
    changes."""
    fair = rows["applies"].astype(bool)
    parts = []
    for what, part in (("of the seed's claims", _seed_rows(rows)),
                        ("beyond the seed", rows[(rows["control"] == "none")
                                                 & (rows["role"] == "beyond")])):
        if part.empty:
            continue
        ok = part[fair[part.index]]
        text = f"{len(part)} {'test' if len(part) == 1 else 'tests'} {what}"
        unfair = len(part) - len(ok)
        if ok.empty:
            parts.append(text + ", none a fair test here")
            continue
        parts.append(f"{text}: {_tally(list(ok['verdict']))}"
                     + (f"; {unfair} not a fair test here" if unfair else ""))
    base = rows[(rows["control"] == "none") & fair].set_index(["seed", "claim", "statistic"])
    for control, part in rows[rows["control"] != "none"].groupby("control", sort=False):
        found = part[fair[part.index]].set_index(["seed", "claim", "statistic"])["verdict"]
        both = found.index.intersection(base.index)
        said = []
        if len(both):
            changed = int((found.loc[both] != base.loc[both, "verdict"]).sum())
            said.append(f"{changed} of {len(both)} verdicts change")
        unfair = int((~fair[part.index]).sum())
        if unfair:
            said.append(f"{unfair} not a fair test here")
        if said:
            parts.append(f"{label(control)}: {', '.join(said)}")
    named = f"<b>{plain(model)}</b>" + (f" ({html.escape(kind)})" if kind else "")
    return f"{named}: {'; '.join(parts)}."


def _key_line(claim: str, rows: pd.DataFrame, order: Sequence[str], digits: int) -> str:
    """One key claim across the models: each verdict with the models and their values."""
    rows = rows.sort_values("model", key=lambda m: m.map(list(order).index), kind="stable")
    tests = pd.Series("", index=rows.index)
    for _, part in rows.groupby("model", sort=False):
        tests[part.index] = [label(t) if t else t
                             for t in _variants(list(part["statistic"]))]
    groups: dict[str, dict[str, list[str]]] = {}  # verdict -> model -> its tests
    for i, r in rows.iterrows():
        fair = bool(r["applies"])
        shown = _cell(r, digits).split(": ", 1)[-1] if fair else ""
        if fair and r["verdict"] == "holds" and r.get("null_verdict") == "holds":
            # the rule does not show what training did, or that the vectors carry the labels
            shown += (", as with the labels permuted" if is_permuted(r.get("null_model"))
                      else ", as on an untrained copy")
        test = " ".join(t for t in (tests[i], shown) if t)
        groups.setdefault(r["verdict"] if fair else "not a fair test", {}).setdefault(
            str(r["model"]), []).append(test)
    named = {v: [plain(m) + html.escape(f" ({'; '.join(t for t in found if t)})" if any(found)
                                        else "")
                 for m, found in by_model.items()] for v, by_model in groups.items()}
    phrases = [f"{v} for {_and(named[v])}" for v in VERDICTS if v in named]
    if "not a fair test" in named:
        phrases.append(f"not a fair test on {_and(named['not a fair test'])}")
    # what the numbers are: the statistic, without the estimators' tag its variants name
    measured = re.sub(r"\s*\[[^\]]*\]\s*$", "", str(rows["statistic"].iloc[0])) \
        if len(rows) else ""
    unit = (f' <span class="lmg-stat">(the numbers: {html.escape(measured)})</span>'
            if measured else "")
    return f"\u201c{html.escape(claim)}\u201d{unit}: {'; '.join(phrases)}."


def _key_claims(claims: pd.DataFrame, kinds: Mapping[str, str], n: int) -> list[str]:
    """The first ``n`` seed claims (table order), starting with the first that each kind of
    model (in order of appearance) has a fair test of."""
    rows = _seed_rows(claims)
    fair = rows[rows["applies"].astype(bool)]
    keys: list[str] = []
    models = list(dict.fromkeys(claims["model"]))
    for kind in dict.fromkeys(kinds.get(m, "") for m in models):
        of_kind = fair[fair["model"].isin([m for m in models if kinds.get(m, "") == kind])]
        found = [c for c in dict.fromkeys(of_kind["claim"]) if c not in keys]
        keys += found[:1]
    keys += [c for c in dict.fromkeys(rows["claim"]) if c not in keys]
    return keys[:max(n, 0)]


def _bullets(lines: Sequence[str]) -> str:
    """An HTML list of ``lines``; ``"<p>None.</p>"`` when there are none."""
    return "<ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>" if lines \
        else "<p>None.</p>"


def findings_box(claims: pd.DataFrame, kinds: Mapping[str, str] | None = None, *,
                 question: str, caveat: str = "", models: Sequence[str] | None = None,
                 answer: str = "",
                 key_claims: Sequence[str] | None = None, n_key: int = 2, digits: int = 2,
                 anchor: str = GRID_ANCHOR) -> str:
    """A chapter's answer first: the findings box, generated from its claims table.

    Parameters
    ----------
    claims : DataFrame
        The claims to tally (:data:`CLAIM_COLUMNS`); a chapter passes the rows its verdict
        grid shows.
    kinds : mapping, optional
        Model -> kind ("encoder", "decoder"), named beside each model.
    question : str
        The chapter's question (HTML).
    caveat : str
        The main caveat (HTML), if any.
    models : sequence of str, optional
        The models, in order (default: as they appear).
    answer : str
        The answer in one plain-English sentence (HTML), shown first
        (:func:`report.narrative.plain_answer`); the verdicts follow it.
    key_claims : sequence of str, optional
        The claims whose verdicts the box states with their values (default:
        :func:`_key_claims`, the first claim of the seed's that each kind of model is fairly
        tested on, then the next ones, ``n_key`` in all).
    n_key : int
        How many key claims by default.
    digits : int
        Decimals of the values and intervals.
    anchor : str
        The id of the verdict grid the box links to.

    Returns
    -------
    str
        An HTML admonition (:func:`findings_html`): the key claims' verdicts with value and
        interval per model; folded (``<details>``, so that the answer and the chapter's key
        figure fit the first screen), per model, how many tests of the seed's claims and beyond them
        hold, do not hold or are inconclusive, how many are not a fair test here and how many
        verdicts each control changes; a link to the verdict grid. Every name is escaped.
    """
    kinds = kinds or {}
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))
    claims = claims[claims["model"].isin(order)]
    main = claims[claims["control"] == "none"]
    keys = list(key_claims) if key_claims is not None else _key_claims(claims, kinds, n_key)
    lines = [_key_line(k, main[main["claim"] == k], order, digits) for k in keys
             if (main["claim"] == k).any()]
    tallies = [_model_line(m, claims[claims["model"] == m], kinds.get(m, "")) for m in order
               if (claims["model"] == m).any()]
    said = (f'<p class="lmg-answer"><b>Answer.</b> {answer}</p>' if answer else "")
    answer = (said + f'<p><b>The verdicts, from this run</b> (each claim with its figure: <a '
              f'href="#{html.escape(anchor)}">the verdict grid</a>, after the evidence):</p>'
              + _bullets(lines)
              + (f"<details><summary><b>Every verdict, per model</b> ({len(tallies)} "
                 f"model{'s' if len(tallies) != 1 else ''})</summary>{_bullets(tallies)}"
                 "</details>" if tallies else ""))
    return findings_html(question, answer, caveat)
