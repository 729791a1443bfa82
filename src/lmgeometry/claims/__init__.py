"""Claims as data: a seed's finding, the rule that tests it, its verdict on each model and what
the verdicts come to.

A claim's path is three modules: :mod:`~lmgeometry.claims.spec` (a chapter's ``CLAIMS``: the
statistic, threshold, direction and the reason for them), :mod:`~lmgeometry.claims.record` (a
:class:`Claim` per model and control, with its interval and computed verdict, the seed's own
evidence beside it and its null) and :mod:`~lmgeometry.claims.outcomes` (per seed claim and kind
of model, what it comes to on the scorecard). Pages show them with :mod:`lmgeometry.report.claims`.
This layer sits between the measures and the chapters: it imports only ``measures``.
"""

from lmgeometry.claims.outcomes import (
    AGREEING,
    OUTCOMES,
    kind_verdicts,
    primary_table,
    seed_summary,
    tier_totals,
)
from lmgeometry.claims.record import (
    CALIBRATION_COLUMNS,
    CALIBRATION_KINDS,
    CLAIM_COLUMNS,
    CONTROLS,
    NULL_COLUMNS,
    ROLES,
    Claim,
    Evidence,
    attach_nulls,
    calibration_entry,
    calibration_kind,
    claims_frame,
    first_token_flags,
    role_of,
    shortfall,
)
from lmgeometry.claims.spec import ClaimSpec

__all__ = [
    "AGREEING",
    "attach_nulls",
    "CALIBRATION_COLUMNS",
    "calibration_entry",
    "calibration_kind",
    "CALIBRATION_KINDS",
    "Claim",
    "CLAIM_COLUMNS",
    "claims_frame",
    "ClaimSpec",
    "CONTROLS",
    "Evidence",
    "first_token_flags",
    "kind_verdicts",
    "NULL_COLUMNS",
    "OUTCOMES",
    "primary_table",
    "role_of",
    "ROLES",
    "seed_summary",
    "shortfall",
    "tier_totals",
]
