"""SemEval-2012 task 2 on hand-built pair offsets whose rankings are known in advance."""

from __future__ import annotations

import math

import pytest
from fixtures.word_cases import semeval_case

from lmgeometry.measures.semeval2012 import evaluate_semeval2012


def test_semeval_mean_cosine():
    vectors, frame = semeval_case()
    out = evaluate_semeval2012(vectors, frame)
    assert out["by_category"]["1a"] == pytest.approx(1.0)
    assert out["by_category"]["1b"] == pytest.approx(-1.0)
    assert math.isnan(out["by_category"]["2c"])
    assert out["spearman"] == pytest.approx(0.0)
    assert (out["n_categories"], out["n_scored_categories"]) == (3, 2)
    assert out["total"] == 11
    assert out["coverage"] == pytest.approx(10 / 11)
    assert out["paradigm_coverage"] == 1.0


def test_semeval_web_score():
    vectors, frame = semeval_case()
    out = evaluate_semeval2012(vectors, frame, method="web", oov="skip")
    # ranks (1,2,3,4) vs gold ranks (1,3,4,2): sum d^2 = 0+1+1+4 = 6, rho = 1 - 36/60 = 0.4
    assert out["by_category"]["1a"] == pytest.approx(0.4)
    # reversed gold (4,2,1,3): d = -3, 0, 2, 1 -> 14, rho = 1 - 84/60 = -0.4
    assert out["by_category"]["1b"] == pytest.approx(-0.4)
    # NaN counts as 0 under the web rule: (0.4 - 0.4 + 0) / 3
    assert out["spearman"] == pytest.approx(0.0)
    only_1a = evaluate_semeval2012(vectors, frame[frame["category"] != "1b"], method="web")
    assert only_1a["spearman"] == pytest.approx(0.4 / 2)
    strict_1a = evaluate_semeval2012(
        vectors, frame[frame["category"] != "1b"], method="web", nan_as_zero=False
    )
    assert strict_1a["spearman"] == pytest.approx(0.4)
