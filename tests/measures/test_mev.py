"""Known-answer tests for lmgeometry.measures.mev: MEV and the authors' TruncatedSVD ratio.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.references import svd_share
from sklearn.decomposition import PCA, TruncatedSVD

from lmgeometry.measures import mev


def test_rank_one_matrix_has_mev_one():
    rng = np.random.default_rng(1)
    v = rng.standard_normal(12)
    a = np.array([3.0, -1.0, 0.5, 2.0, -4.0, 1.5])  # signs and sizes vary
    X = a[:, None] * v[None, :]
    assert mev.max_explainable_variance(X) == pytest.approx(1.0, abs=1e-12)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(1.0, abs=1e-12)



def test_max_explainable_variance_matches_svd_and_sklearn_pca():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 12)) @ rng.standard_normal((12, 12)) + 3.0
    assert mev.max_explainable_variance(X) == pytest.approx(svd_share(X, False), abs=1e-10)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(
        svd_share(X, True), abs=1e-10
    )
    pca = PCA(n_components=1, svd_solver="full").fit(X)
    assert mev.max_explainable_variance(X, centered=True) == pytest.approx(
        pca.explained_variance_ratio_[0], abs=1e-10
    )
    # the Lanczos path (more than 64 rows and columns) against a dense SVD
    Y = rng.standard_normal((300, 80)) + rng.standard_normal(80)
    for centered in (False, True):
        assert mev.max_explainable_variance(Y, centered) == pytest.approx(
            svd_share(Y, centered), abs=1e-8
        )



def test_truncated_svd_ratio_matches_sklearn():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 15)) * np.linspace(0.2, 3, 15) + 2.0
    svd = TruncatedSVD(n_components=2, algorithm="arpack").fit(X)
    assert mev.truncated_svd_variance_ratio(X) == pytest.approx(
        svd.explained_variance_ratio_[0], abs=1e-8
    )
