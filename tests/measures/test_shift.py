"""Tests for lmgeometry.measures.shift against direct recomputation on resampled rows."""

from __future__ import annotations

import numpy as np
import pytest

from lmgeometry.measures import shift


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_shift_cosine_replicates_resample_whole_sentences():
    rng = _rng(24)
    X = rng.standard_normal((300, 4)) + 1.5
    groups = np.repeat(np.arange(30), 10)
    reps = shift.shift_cosine_replicates(X, groups, n_boot=5, rng=9)
    k = np.random.default_rng(9).multinomial(30, np.full(30, 1 / 30), size=5)
    for b in range(5):
        rows = np.concatenate([np.flatnonzero(groups == g).repeat(1) for g in
                               np.repeat(np.arange(30), k[b])])
        direct = shift.shift_cosine(X[rows])
        for key in ("mean_cosine", "shift_prediction", "shift_residual"):
            assert reps[key][b] == pytest.approx(direct[key], abs=1e-10)
