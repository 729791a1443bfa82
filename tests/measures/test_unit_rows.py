"""Known-answer tests for lmgeometry.measures.unit_rows: invariances, large norms, zero rows.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fixtures.references import brute_mean_pairwise, brute_token_intra, random_layer, svd_share

from lmgeometry.measures import baselines, contextual, cosines, mev, similarity, tokens, unit_rows


def test_invariance_to_positive_row_scaling():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((25, 8)) + 1.0
    scales = rng.uniform(1e-3, 1e3, size=(25, 1))
    sid = np.repeat(np.arange(5), 5)
    Y = X * scales
    assert cosines.self_similarity(Y) == pytest.approx(cosines.self_similarity(X), abs=1e-12)
    np.testing.assert_allclose(tokens.token_intra_similarity(Y), tokens.token_intra_similarity(X),
                               atol=1e-12)
    assert baselines.anisotropy_baseline(Y, sid, n=None) == pytest.approx(
        baselines.anisotropy_baseline(X, sid, n=None), abs=1e-12
    )
    assert baselines.anisotropy_baseline(Y, sid, n=10, rng=4, scheme="sentence", replace=True) == (
        pytest.approx(
            baselines.anisotropy_baseline(X, sid, n=10, rng=4, scheme="sentence", replace=True),
            abs=1e-12,
        )
    )
    ix, _ = tokens.nearest_neighbours(X, 3, dtype=np.float64)
    iy, _ = tokens.nearest_neighbours(Y, 3, dtype=np.float64)
    np.testing.assert_array_equal(ix, iy)
    # MEV and IntraSim use raw vectors: invariant to one global positive scale only
    assert mev.max_explainable_variance(7.5 * X, True) == pytest.approx(
        mev.max_explainable_variance(X, True), abs=1e-12
    )
    assert cosines.intra_sentence_similarity(7.5 * X) == pytest.approx(
        cosines.intra_sentence_similarity(X), abs=1e-12
    )



def test_numerically_safe_with_large_norms():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((40, 32))
    for big, dtype in [(1e4, np.float32), (1e4, np.float16), (1e200, np.float64)]:
        Xs = X / np.linalg.norm(X, axis=1, keepdims=True)  # unit rows
        Y = (Xs * big).astype(dtype)
        ref = Y.astype(np.float64) / big  # the same directions, at norm ~1
        assert cosines.mean_pairwise_cosine(Y) == pytest.approx(brute_mean_pairwise(ref), abs=1e-6)
        np.testing.assert_allclose(tokens.token_intra_similarity(Y), brute_token_intra(ref),
                                   atol=1e-6)
        assert cosines.intra_sentence_similarity(Y) == pytest.approx(
            cosines.intra_sentence_similarity(ref), abs=1e-9
        )
        assert mev.max_explainable_variance(Y, True) == pytest.approx(svd_share(ref, True),
                                                                      abs=1e-9)
        U, norms = similarity.unit_rows(Y)
        np.testing.assert_allclose(norms / big, np.linalg.norm(ref, axis=1), rtol=1e-9)
        np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-12)



def test_zero_rows_are_left_out():
    X = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    # non-zero rows 0, 2, 3: cosines 1/sqrt2, 0, 1/sqrt2
    assert cosines.mean_pairwise_cosine(X) == pytest.approx(math.sqrt(2) / 3, abs=1e-12)
    t = tokens.token_intra_similarity(X)
    assert math.isnan(t[1])
    assert t[0] == pytest.approx((1 / math.sqrt(2) + 0) / 2, abs=1e-12)
    assert math.isnan(cosines.mean_pairwise_cosine(np.zeros((3, 2))))
    with pytest.raises(ValueError):
        similarity.unit_rows(np.array([[np.nan, 1.0]]))



def test_unit_rows_give_the_same_numbers_as_the_raw_layer():
    X, words = random_layer()
    ur = unit_rows.UnitRows.of(X)
    assert unit_rows.UnitRows.of(ur) is ur and len(ur) == len(X)
    for preset in contextual.PRESETS:
        a = contextual.context_measures(X, words, preset, seed=3, min_contexts=2, n_boot=50)
        b = contextual.context_measures(ur, words, preset, seed=3, min_contexts=2, n_boot=50)
        assert a == pytest.approx(b, nan_ok=True)
    pd.testing.assert_frame_equal(tokens.token_measures(X, words), tokens.token_measures(ur, words))
    assert baselines.anisotropy_baseline(ur, words["sentence_id"], None) == pytest.approx(
        brute_mean_pairwise(X, words["sentence_id"].to_numpy()))
