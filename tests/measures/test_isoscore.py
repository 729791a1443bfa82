"""Tests for lmgeometry.measures.isoscore against analytic values and the IsoScore package."""

from __future__ import annotations

import numpy as np
import pytest

from lmgeometry.measures import isoscore


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_isoscore_isotropic_gaussian_near_one():
    X = _rng(10).standard_normal((20_000, 10))
    assert isoscore.isoscore(X) > 0.97
    assert isoscore.isoscore(X, "package") > 0.97


def test_isoscore_published_extremes():
    # Rudman et al. (2022): variance spread equally over k of n dims -> phi = k/n and
    # IsoScore = (k - 1)/(n - 1); k = 1 (a line) gives 0, k = n gives 1.
    n = 12
    for k in (1, 3, 7, 12):
        eye = np.eye(n)[:k]
        X = np.concatenate([eye, -eye]) + 5.0  # covariance exactly proportional to diag(1_k, 0)
        assert isoscore.isoscore(X) == pytest.approx((k - 1) / (n - 1), abs=1e-12)
        assert isoscore.isoscore(X, "package") == pytest.approx((k - 1) / (n - 1), abs=1e-6)
    line = np.outer(_rng(11).standard_normal(300), _rng(12).standard_normal(n))
    assert isoscore.isoscore(line) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("shape", [(400, 5), (60, 30), (25, 40)])
def test_isoscore_ours_equals_package(shape):
    rng = _rng(sum(shape))
    X = rng.standard_normal(shape) @ rng.standard_normal((shape[1], shape[1])) + 3.0
    assert isoscore.isoscore(X, chunk_rows=17) == pytest.approx(isoscore.isoscore(X, "package"),
                                                                rel=1e-6)


def test_isoscore_invariances():
    rng = _rng(13)
    X = rng.standard_normal((300, 6)) * np.array([3, 2, 1, 1, 0.5, 0.1])
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    base = isoscore.isoscore(X)
    assert isoscore.isoscore(X @ Q + 7.0) == pytest.approx(base, rel=1e-10)
    assert isoscore.isoscore(4.5 * X) == pytest.approx(base, rel=1e-10)
