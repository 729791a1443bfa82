"""The polysemy regression and its standardised coefficients: hand-computed fits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmgeometry.measures.polysemy import polysemy_regression


def test_polysemy_regression_hand_computed():
    # predictors +-1 (population SD 1, mean 0), orthogonal; y = 1.75 + 1.25 x + 0.75 w + e,
    # residuals +-0.25, RSS 0.25, dof 1, se = sqrt(0.25 / 4) = 0.25, TSS 8.75
    frame = pd.DataFrame(
        {
            "selfsim": [0.0, 1.0, 2.0, 4.0, 9.0],
            "n_senses": [-1, -1, 1, 1, None],
            "n_contexts": [-1, 1, -1, 1, 3],
        }
    )
    out = polysemy_regression(frame)
    t975_1 = 12.706204736174707  # Student t, 1 dof, 97.5% quantile (tabulated)
    assert out["n"] == 4
    assert out["intercept"] == pytest.approx(1.75)
    b = out["coefficients"]
    assert b["n_senses"]["coef"] == pytest.approx(1.25)
    assert b["n_contexts"]["coef"] == pytest.approx(0.75)
    assert b["n_senses"]["se"] == pytest.approx(0.25)
    assert b["n_senses"]["ci_low"] == pytest.approx(1.25 - t975_1 * 0.25)
    assert b["n_contexts"]["ci_high"] == pytest.approx(0.75 + t975_1 * 0.25)
    assert b["n_senses"]["t"] == pytest.approx(5.0)
    assert out["r2"] == pytest.approx(1 - 0.25 / 8.75)
    assert out["adj_r2"] == pytest.approx(1 - 3 * 0.25 / 8.75)
    assert out["predictor_correlation"]["n_senses"]["n_contexts"] == pytest.approx(0.0)


def test_polysemy_regression_exact_fit_with_correlated_predictors():
    rng = np.random.default_rng(3)
    senses = rng.integers(1, 30, size=50).astype(float)
    contexts = senses * 2 + rng.integers(5, 100, size=50)
    zs = (senses - senses.mean()) / senses.std()
    zc = (contexts - contexts.mean()) / contexts.std()
    y = 0.5 - 0.2 * zs + 0.1 * zc
    frame = pd.DataFrame({"selfsim": y, "n_senses": senses, "n_contexts": contexts})
    out = polysemy_regression(frame)
    assert out["coefficients"]["n_senses"]["coef"] == pytest.approx(-0.2)
    assert out["coefficients"]["n_contexts"]["coef"] == pytest.approx(0.1)
    assert out["intercept"] == pytest.approx(0.5)
    assert out["r2"] == pytest.approx(1.0)
    assert out["predictor_sd"]["n_senses"] == pytest.approx(senses.std())


def test_polysemy_regression_rejects_constant_predictor():
    with pytest.raises(ValueError):
        polysemy_regression(pd.DataFrame({"selfsim": [1, 2, 3], "n_senses": [1, 1, 1],
                                          "n_contexts": [1, 2, 3]}))


def test_standardised_coefficients_match_the_regression_and_pearson() -> None:
    from lmgeometry.measures.polysemy import standardised_coefficients

    rng = np.random.default_rng(3)
    n = 200
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n)])
    Y = np.column_stack([0.5 * X[:, 0] - 0.2 * X[:, 1] + rng.normal(size=n),
                         X[:, 1] + 0.1 * rng.normal(size=n)])
    beta, reps, r2 = standardised_coefficients(X, Y, n_boot=300, rng=0)
    for layer in range(2):
        frame = pd.DataFrame({"y": Y[:, layer], "a": X[:, 0], "b": X[:, 1]})
        fit = polysemy_regression(frame, "y", ("a", "b"))
        sd_y = Y[:, layer].std()
        assert beta[0, layer] == pytest.approx(fit["coefficients"]["a"]["coef"] / sd_y)
        assert beta[1, layer] == pytest.approx(fit["coefficients"]["b"]["coef"] / sd_y)
        assert r2[layer] == pytest.approx(fit["r2"])
    one, _, _ = standardised_coefficients(X[:, :1], Y[:, :1], n_boot=0)
    assert one[0, 0] == pytest.approx(np.corrcoef(X[:, 0], Y[:, 0])[0, 1])  # Pearson's r
    assert reps.shape == (300, 2, 2)
    lo, hi = np.quantile(reps[:, 0, 0], [0.025, 0.975])
    assert lo < beta[0, 0] < hi and hi - lo < 0.3
