"""The verdict rule and claim records (lmgeometry.measures.stats, lmgeometry.report.claims)."""

import math

import pytest

from lmgeometry.measures.stats import verdict
from lmgeometry.report.claims import CLAIM_COLUMNS, Claim, claims_frame, scorecard, verdict_counts


@pytest.mark.parametrize(
    ("lo", "hi", "threshold", "direction", "expected"),
    [
        (0.2, 0.4, 0.1, "above", "holds"),
        (0.0, 0.4, 0.1, "above", "inconclusive"),  # straddles the threshold
        (0.1, 0.4, 0.1, "above", "inconclusive"),  # touching is not enough to hold
        (-0.2, 0.05, 0.1, "above", "does not hold"),
        (-0.2, 0.1, 0.1, "above", "does not hold"),
        (-0.9, -0.7, -0.5, "below", "holds"),
        (-0.6, -0.4, -0.5, "below", "inconclusive"),
        (-0.5, 0.3, -0.5, "below", "does not hold"),
        (math.nan, 0.3, 0.0, "above", "inconclusive"),
    ],
)
def test_verdict_follows_the_interval(lo, hi, threshold, direction, expected):
    assert verdict(lo, hi, threshold, direction) == expected


def test_verdict_refuses_bad_input():
    with pytest.raises(ValueError):
        verdict(0.0, 1.0, 0.5, "up")
    with pytest.raises(ValueError):
        verdict(1.0, 0.0, 0.5, "above")


def _claim(model="m", value=0.3, lo=0.2, hi=0.4, **kw):
    return Claim(seed="001", claim="anisotropy rises", model=model, statistic="rho",
                 value=value, ci_low=lo, ci_high=hi, threshold=0.1, direction="above",
                 rule="a moderate correlation", **kw)


def test_claim_computes_its_verdict_and_checks_its_interval():
    assert _claim().verdict == "holds"
    assert _claim(lo=-0.1).verdict == "inconclusive"
    with pytest.raises(ValueError):
        _claim(value=0.5)  # outside its own interval
    with pytest.raises(TypeError):
        Claim(seed="001", claim="c", model="m", statistic="s", value=0, ci_low=0, ci_high=0,
              threshold=0, direction="above", rule="r", verdict="holds")  # never typed


def test_claims_frame_and_scorecard():
    frame = claims_frame([_claim("a"), _claim("b", lo=-0.1, value=0.0, hi=0.2)])
    assert list(frame.columns) == list(CLAIM_COLUMNS)
    assert frame["verdict"].tolist() == ["holds", "inconclusive"]
    card = scorecard(frame, models=["b", "a"])
    assert list(card.columns) == ["b", "a"]
    assert card.iloc[0]["a"] == "holds: 0.30 [0.20, 0.40]"
    counts = verdict_counts(frame)
    assert counts.loc["a", "holds"] == 1 and counts.loc["b", "inconclusive"] == 1
    assert counts.loc["a", "does not hold"] == 0


def test_bootstrap_means_resample_items_jointly():
    import numpy as np

    from lmgeometry.measures.stats import weighted_bootstrap_means

    V = np.tile(np.array([1.0, 2.0, 3.0]), (50, 1))  # every item the same
    reps = weighted_bootstrap_means(V, n_boot=20, rng=0)
    assert reps.shape == (20, 3) and np.allclose(reps, [1.0, 2.0, 3.0])
    # weights: an item with weight 0 never counts, NaN entries drop out of their column
    V2 = np.array([[1.0, np.nan], [3.0, 5.0], [100.0, 100.0]])
    reps2 = weighted_bootstrap_means(V2, weights=np.array([1.0, 1.0, 0.0]), n_boot=200, rng=1)
    assert np.nanmax(reps2[:, 0]) <= 3.0 and np.nanmin(reps2[:, 0]) >= 1.0
    assert np.allclose(reps2[np.isfinite(reps2[:, 1]), 1], 5.0)


def test_spearman_trend_known_answers():
    import numpy as np

    from lmgeometry.measures.stats import spearman_trend

    rng = np.random.default_rng(0)
    layers = np.arange(8.0)
    rising = layers + rng.normal(scale=0.01, size=(300, 8))
    rho, lo, hi = spearman_trend(rising, n_boot=200, rng=0)
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0) and hi == pytest.approx(1.0)
    rho, lo, hi = spearman_trend(-rising, n_boot=200, rng=0)
    assert rho == pytest.approx(-1.0) and hi == pytest.approx(-1.0)
    # no trend in the population: most intervals (nominally 95%) hold 0
    covered = 0
    for seed in range(40):
        noise = np.random.default_rng(seed).normal(size=(40, 8))
        _, lo, hi = spearman_trend(noise, n_boot=300, rng=seed)
        covered += lo <= 0 <= hi
    assert covered >= 32
    assert np.isnan(spearman_trend(noise[:, :2])[0])  # two layers: no trend


def test_extreme_over_layers_bounds_every_layer():
    from lmgeometry.measures.stats import extreme_over_layers, verdict

    v, lo, hi, at = extreme_over_layers([0.5, 0.2, 0.4], [0.45, 0.15, 0.35], [0.55, 0.25, 0.45])
    assert (v, lo, hi, at) == (0.2, 0.15, 0.25, 1)
    assert verdict(lo, hi, 0.1, "above") == "holds"  # every layer's interval is above 0.1
    assert verdict(lo, hi, 0.2, "above") == "inconclusive"
    v, lo, hi, at = extreme_over_layers([0.5, 0.2], [0.4, 0.1], [0.6, 0.3], which="max")
    assert (v, lo, hi, at) == (0.5, 0.4, 0.6, 0)


def test_bootstrap_spearman_and_percentile_interval():
    import numpy as np

    from lmgeometry.measures.stats import bootstrap_spearman, percentile_interval, poisson_weights

    x = np.arange(200.0)
    rho, lo, hi = bootstrap_spearman(x, x ** 3, n_boot=100, rng=0)  # monotone: rho 1
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0)
    noise = np.random.default_rng(1).normal(size=(2, 300))
    rho, lo, hi = bootstrap_spearman(*noise, n_boot=300, rng=1)
    assert lo < rho < hi and lo < 0 < hi
    assert percentile_interval([0.4, 0.5, 0.6], 0.9) == (pytest.approx(0.405), 0.9)  # widened
    w = poisson_weights(2000, 50, np.random.default_rng(2))
    assert w.shape == (2000, 50) and abs(w.mean() - 1) < 0.02 and abs(w.var() - 1) < 0.05
