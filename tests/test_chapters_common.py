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


def _blas_threads_now() -> set[int]:
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_with_blas_threads_limits_blas_inside_and_restores_it(monkeypatch) -> None:
    import numpy  # noqa: F401  (loads a BLAS)

    from lmgeometry.chapters.common import BLAS_THREADS_ENV, with_blas_threads

    before = _blas_threads_now()

    @with_blas_threads
    def analyse(x: int) -> tuple[int, set[int]]:
        """Docstring kept."""
        return x, _blas_threads_now()

    monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    assert analyse(3) == (3, {1})
    assert analyse.__doc__ == "Docstring kept."
    assert _blas_threads_now() == before
    monkeypatch.setenv(BLAS_THREADS_ENV, "2")
    assert analyse(0)[1] == {2}


@pytest.mark.parametrize("raw", ["0", "-1", "two", ""])
def test_blas_threads_rejects_what_is_not_a_positive_count(monkeypatch, raw: str) -> None:
    from lmgeometry.chapters.common import BLAS_THREADS_ENV, blas_threads

    monkeypatch.setenv(BLAS_THREADS_ENV, raw)
    with pytest.raises(ValueError, match="LMGEOMETRY_BLAS_THREADS"):
        blas_threads()
