"""The chapter contract's shared pieces (lmgeometry.chapters.common)."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

from lmgeometry.chapters.common import (
    ChapterResult,
    control_rows,
    controls_for,
    first_token_flags,
)
from lmgeometry.report.claims import Claim, claims_frame


def _store(tmp_path, kind):
    store = array_store(tmp_path, [np.eye(4)], {"word_index": [0, 1, 0, 1], "text": list("abab")})
    meta = json.loads((store.path / "meta.json").read_text())
    meta["model"]["kind"] = kind
    (store.path / "meta.json").write_text(json.dumps(meta))
    return type(store)(store.path)


def test_controls_follow_the_model_kind(tmp_path):
    decoder = _store(tmp_path / "d", "decoder")
    encoder = _store(tmp_path / "e", "encoder")
    assert controls_for(decoder) == ("none", "first word excluded")
    assert controls_for(encoder) == ("none",)
    assert control_rows(decoder, "none").tolist() == [0, 1, 2, 3]
    assert control_rows(decoder, "first word excluded").tolist() == [1, 3]
    with pytest.raises(ValueError):
        control_rows(decoder, "bos please")


def _claim(control, lo, hi):
    return Claim(seed="001", claim="c", model="m", statistic="s", value=(lo + hi) / 2,
                 ci_low=lo, ci_high=hi, threshold=0.0, direction="above", rule="r",
                 control=control)


def test_first_token_flags_mark_flipped_verdicts():
    flipped = claims_frame([_claim("none", 0.1, 0.2), _claim("first word excluded", -0.2, -0.1)])
    kept = claims_frame([_claim("none", 0.1, 0.2), _claim("first word excluded", 0.3, 0.4)])
    assert first_token_flags(flipped).tolist() == [True, True]
    assert first_token_flags(kept).tolist() == [False, False]


def test_chapter_result_saves_tables_and_claims():
    result = ChapterResult(tables={"per_layer": pd.DataFrame({"layer": [0]})})
    saved = result.results()
    assert set(saved) == {"per_layer", "claims"} and saved["claims"].empty
