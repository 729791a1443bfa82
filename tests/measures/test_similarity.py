"""Known-answer tests for lmgeometry.measures.similarity: the norm ratio.

CKA, rogue dimensions and the streamed forms are tested with chapter 6
(``tests/chapters/test_rogue_dimensions.py``) and in ``tests/measures/test_streaming.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from lmgeometry.measures import similarity


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


def test_random_rotation_is_orthogonal_seeded_and_keeps_the_spectrum() -> None:
    Q = similarity.random_rotation(32, seed=4)
    assert np.allclose(Q @ Q.T, np.eye(32)) and np.allclose(Q, similarity.random_rotation(32, 4))
    assert not np.allclose(Q, similarity.random_rotation(32, seed=5))
    assert not np.allclose(Q, similarity.random_rotation(32, seed=(4, 1)))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 32))
    X[:, 3] *= 10.0  # one coordinate holds 100 / 131 of the variance
    R = X @ Q
    assert np.allclose(np.linalg.svd(X - X.mean(0), compute_uv=False),
                       np.linalg.svd(R - R.mean(0), compute_uv=False))
    assert similarity.variance_share(X, 1) > 0.7 > 0.5 > similarity.variance_share(R, 3)
    assert similarity.random_rotation(1).shape == (1, 1)
