"""The claim record: a seed's finding tested on one model, with its interval and verdict.

A chapter states a seed's claim as a statistic with a 95% interval, a threshold and a
direction (:class:`Claim`); the verdict is computed from the interval by
:func:`lmgeometry.measures.stats.verdict`, never typed. :func:`claims_frame` turns a chapter's
claims into the table its results file stores under ``claims`` and its page shows.

A rule is only as good as its check on the seed's own evidence. Every row therefore also
carries (:data:`CALIBRATION_COLUMNS`): its ``role`` (:data:`ROLES`: only ``primary`` rows are
tallied as evidence on the seed), what the seed reports for a model of the row's kind
(``expected``), the ``calibration`` (the same statistic and rule applied to each seed model's
published evidence, :class:`Evidence` and :func:`calibration_entry`), whether the seed's own
evidence can meet the claim under its stated method (``reproducible``), and whether the row's
model is a fair stand-in for the seed's model on this claim (``applies``). The chapters fill
them from the seeds' evidence (:mod:`lmgeometry.chapters.calibration`). A rule must also fail
where the claim should not hold: :func:`attach_nulls` puts each row beside the same rule run
on its null (:data:`NULL_COLUMNS`), and :func:`shortfall` tells an opposite effect from a
weaker one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import pandas as pd

from lmgeometry.measures.stats import Direction, verdict

__all__ = [
    "attach_nulls",
    "CALIBRATION_COLUMNS",
    "calibration_entry",
    "calibration_kind",
    "CALIBRATION_KINDS",
    "Claim",
    "CLAIM_COLUMNS",
    "claims_frame",
    "CONTROLS",
    "Evidence",
    "first_token_flags",
    "LATER_COLUMNS",
    "NO_NULL",
    "NULL_COLUMNS",
    "NULL_DTYPES",
    "on_other_estimator",
    "null_kind",
    "PERMUTED_LABELS",
    "permuted_model",
    "is_permuted",
    "SHUFFLED_LAYERS",
    "shuffled_model",
    "role_of",
    "ROLES",
    "ROTATED_BASIS",
    "rotated_model",
    "shortfall",
]

#: The seeds' protocol, and the control that leaves out each sentence's first word: the
#: ``control`` of a decoder's claim rows (an encoder's rows are under the first only).
CONTROLS: tuple[str, ...] = ("none", "first word excluded")

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
#: (:func:`permuted_model`), or, for a statistic of depth, over random orders of the same
#: layers (:func:`shuffled_model`), or, for a statistic of single coordinates, in a random
#: basis (:func:`rotated_model`): which null, its statistic, interval and verdict, and
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


#: How a row's ``null_model`` names the layers-shuffled null (:func:`shuffled_model`).
SHUFFLED_LAYERS = "layers shuffled"


def shuffled_model(model: str) -> str:
    """The ``null_model`` of a row whose null is its own depth statistic over random orders of
    the same layers (:func:`lmgeometry.measures.permutation.layer_order_null`).

    Examples
    --------
    >>> shuffled_model("minilm-l6"), null_kind(shuffled_model("minilm-l6"))
    ('layers shuffled: minilm-l6', 'layers shuffled')
    """
    return f"{SHUFFLED_LAYERS}: {model}"


#: How a row's ``null_model`` names the rotated-basis null (:func:`rotated_model`).
ROTATED_BASIS = "basis rotated"


def rotated_model(model: str) -> str:
    """The ``null_model`` of a row whose null is its own statistic of coordinates (rogue
    dimensions: the variance of single coordinates) on the same vectors in a random
    orthonormal basis (:func:`lmgeometry.measures.similarity.random_rotation`): the spectrum
    kept, no coordinate privileged.

    Examples
    --------
    >>> rotated_model("minilm-l6"), null_kind(rotated_model("minilm-l6"))
    ('basis rotated: minilm-l6', 'basis rotated')
    """
    return f"{ROTATED_BASIS}: {model}"


def null_kind(null_model: object) -> str:
    """Which null a row's ``null_model`` names: ``"labels permuted"``, ``"layers shuffled"``,
    ``"basis rotated"``, ``"untrained"`` (an untrained twin) or ``""`` (no null).

    Examples
    --------
    >>> [null_kind(m) for m in ("labels permuted: m", "untrained:m", "", None)]
    ['labels permuted', 'untrained', '', '']
    """
    text = "" if null_model is None else str(null_model)
    for kind in (PERMUTED_LABELS, SHUFFLED_LAYERS, ROTATED_BASIS):
        if text.startswith(f"{kind}: "):
            return kind
    return "untrained" if text else ""


#: Columns of a claims table, in order.
CLAIM_COLUMNS: tuple[str, ...] = (
    "seed", "claim", "model", "control", "statistic", "preset", "task", "value", "ci_low",
    "ci_high", "threshold", "direction", "rule", "published", "verdict", "figure", "evidence",
    *CALIBRATION_COLUMNS, *NULL_COLUMNS,
)

#: The null columns' types, the same in every chapter's table (a chapter without nulls holds
#: only missing values, which must not decide the type of the gathered column).
NULL_DTYPES: dict[str, str] = {"null_model": "object", "null_value": "float64",
                                "null_ci_low": "float64", "null_ci_high": "float64",
                                "null_verdict": "object", "discriminates": "object"}

#: A row's default null columns: no null run.
NO_NULL: dict[str, object] = {"null_model": "", "null_value": math.nan,
                               "null_ci_low": math.nan, "null_ci_high": math.nan,
                               "null_verdict": "", "discriminates": None}

#: The estimator preset that is not the seed's own (its rows are ``estimator`` rows).
_OTHER_PRESET = "corrected"

#: Columns a results file written before they existed may lack, with the value its rows
#: are read with (:func:`collect_claims`): ``preset`` (its rows' ``role``, which the scorecard
#: counts by, was stored with them) and ``task``.
LATER_COLUMNS: dict[str, object] = {"preset": "", "task": "", "calibration_kind": "",
                                      **NO_NULL}


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
                   applies=True, applies_reason="", **NO_NULL)
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
    seed, claim, control, preset, task and statistic (a row without one keeps the null it
    had, none in a fresh :func:`claims_frame`: nulls of two kinds attach one after the other).

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
    for column, default in NO_NULL.items():
        out[column] = (out[column].astype(object) if column in out
                       else pd.Series([default] * len(out), index=out.index, dtype=object))
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


def first_token_flags(claims: pd.DataFrame) -> pd.Series:
    """Per claim row: True when its verdict differs between the controls of its model.

    A verdict that flips when each sentence's first word is left out is driven by the first
    token (the decoder's attention sink), not by the rest of the words. Rows are compared
    within one (seed, claim, model, statistic): a claim tested with two statistics (e.g. two
    estimators) is two tests.

    Other controls are compared with the same control without the first word
    ("frequency-matched" with "first word excluded, frequency-matched"), never with the seed's
    protocol: a verdict that a control of another kind changes is not the first token's.
    """
    pair = claims["control"].astype(str).str.removeprefix(CONTROLS[1]).str.removeprefix(", ")
    pair = pair.replace("", CONTROLS[0])
    key = [claims["seed"], claims["claim"], claims["model"], claims["statistic"], pair]
    n_verdicts = claims.groupby(key)["verdict"].transform("nunique")
    return n_verdicts > 1
