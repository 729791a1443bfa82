"""The claim record's pieces that need no chapter (lmgeometry.claims.record, .spec).

The verdict rule, Claim, claims_frame, attach_nulls and shortfall are also tested with the
scorecard they feed, in tests/report/test_claims.py.
"""

import dataclasses

import pytest

from lmgeometry.claims import Claim, ClaimSpec, claims_frame
from lmgeometry.claims.record import CONTROLS, first_token_flags


def _claim(control, lo, hi):
    return Claim(seed="001", claim="c", model="m", statistic="s", value=(lo + hi) / 2,
                 ci_low=lo, ci_high=hi, threshold=0.0, direction="above", rule="r",
                 control=control)


def test_first_token_flags_mark_flipped_verdicts():
    flipped = claims_frame([_claim("none", 0.1, 0.2), _claim("first word excluded", -0.2, -0.1)])
    kept = claims_frame([_claim("none", 0.1, 0.2), _claim("first word excluded", 0.3, 0.4)])
    assert first_token_flags(flipped).tolist() == [True, True]
    assert first_token_flags(kept).tolist() == [False, False]


def test_controls_are_the_seeds_protocol_then_the_first_word_left_out():
    assert CONTROLS == ("none", "first word excluded")


def test_a_claim_spec_is_frozen_and_tested_per_preset_unless_it_says_otherwise():
    spec = ClaimSpec("001", "c", "s", 0.5, "above", "r", "p", "fig")
    assert spec.per_preset
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.threshold = 0.1  # type: ignore[misc]
