"""Known-answer tests for lmgeometry.measures.similarity: the norm ratio.

CKA, rogue dimensions and the streamed forms are tested with chapter 6
(``tests/chapters/test_rogue_dimensions.py``) and in ``tests/measures/test_streaming.py``.
"""

from __future__ import annotations

import numpy as np
import pytest


def test_norm_ratio_median_and_mean_known_answers() -> None:
    from lmgeometry.measures.similarity import norm_ratio

    # norms 3, 4 (selected) and 1, 1, 10 (others): medians 3.5 / 1, means 3.5 / 4
    X = np.array([[3.0, 0.0], [0.0, 4.0], [1.0, 0.0], [0.0, 1.0], [6.0, 8.0]])
    rows = np.array([True, True, False, False, False])
    assert norm_ratio(X, rows) == pytest.approx(3.5)
    assert norm_ratio(X, rows, statistic="mean") == pytest.approx(3.5 / 4)
    assert norm_ratio(2 * X, rows) == pytest.approx(3.5)  # scale invariant
    assert np.isnan(norm_ratio(X, np.zeros(5, dtype=bool)))
    with pytest.raises(ValueError, match="statistic"):
        norm_ratio(X, rows, statistic="max")
