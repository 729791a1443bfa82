"""A seed's claim as data, before any model is measured: what is measured, the rule and why."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ClaimSpec"]


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a seed: its statistic, threshold, direction and the reason for them.

    A chapter declares its claims as a mapping of short keys to specs (its ``CLAIMS``) and turns
    each, per model and control, into a :class:`lmgeometry.claims.record.Claim` with the
    statistic's value and 95% interval.

    Attributes
    ----------
    seed : str
        The seed document (``"000"``, ``"001"``, ...).
    claim : str
        The claim in plain words, as the seed makes it.
    statistic : str
        What is measured, in words.
    threshold : float
        The effect size the statistic's interval must clear.
    direction : str
        ``"above"`` or ``"below"`` the threshold.
    rule : str
        Why this threshold (an effect-size convention or the seed's own numbers).
    published : str
        What the seed reports.
    figure : str
        The page's figure that shows the evidence.
    per_preset : bool
        Whether the claim is tested under each estimator preset (chapter 3) or once.
    """

    seed: str
    claim: str
    statistic: str
    threshold: float
    direction: str
    rule: str
    published: str
    figure: str
    per_preset: bool = True
