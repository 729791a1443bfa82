"""Polysemy regression: how a word's self-similarity depends on its sense and context counts.

:func:`polysemy_regression` -- OLS of self-similarity on sense count and context count;
:func:`standardised_coefficients` -- its standardised coefficients for many layers at once,
with a bootstrap over words.

References
----------
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

__all__ = [
    "polysemy_regression",
    "standardised_coefficients",
]


def polysemy_regression(
    frame: pd.DataFrame,
    outcome: str = "selfsim",
    predictors: Sequence[str] = ("n_senses", "n_contexts"),
    *,
    level: float = 0.95,
) -> dict[str, Any]:
    """OLS of a word's self-similarity on its sense count and its number of distinct contexts.

    Ethayarajh (2019) relates a word's average self-similarity (mean cosine between its
    contextual vectors in different contexts) to how many senses it has; the number of distinct
    contexts it was seen in is a confound (more contexts, more spread). This fits

    ``y = b0 + sum_k b_k z_k + e``,  ``z_k = (x_k - mean(x_k)) / sd(x_k)``

    (population SD, ``ddof=0``), so ``b_k`` is the change in ``y`` per standard deviation of
    predictor ``k`` holding the others fixed. Standard errors are the classical
    ``sqrt(diag(sigma^2 (Z'Z)^-1))`` with ``sigma^2 = RSS / (n - p - 1)``; the confidence
    interval is ``b_k +/- t_{(1+level)/2, n-p-1} se_k``. Rows with a missing value in a used
    column are dropped.

    Parameters
    ----------
    frame
        One row per word with the outcome and predictor columns.
    outcome
        Outcome column (default ``selfsim``).
    predictors
        Predictor columns (default ``n_senses``, ``n_contexts``); transform them first (e.g.
        logs) if wanted.
    level
        Confidence level of the intervals.

    Returns
    -------
    dict
        ``n``, ``r2``, ``adj_r2``, ``intercept``, ``coefficients``
        (predictor -> ``{coef, se, ci_low, ci_high, t, p}``), ``predictor_mean``,
        ``predictor_sd`` and ``predictor_correlation`` (predictor -> predictor -> Pearson r).
        Standard errors and intervals are NaN when ``n <= p + 1`` or the design is singular.
    """
    predictors = list(predictors)
    if not predictors:
        raise ValueError("need at least one predictor")
    data = frame[[outcome, *predictors]].apply(pd.to_numeric, errors="coerce").dropna()
    n, p = len(data), len(predictors)
    if n < 2:
        raise ValueError(f"only {n} complete rows")
    y = data[outcome].to_numpy(dtype=np.float64)
    Xraw = data[predictors].to_numpy(dtype=np.float64)
    mean = Xraw.mean(axis=0)
    sd = Xraw.std(axis=0, ddof=0)
    if (sd == 0).any():
        constant = [c for c, v in zip(predictors, sd, strict=True) if v == 0]
        raise ValueError(f"constant predictor(s): {constant}")
    Z = (Xraw - mean) / sd
    D = np.column_stack([np.ones(n), Z])
    beta, _, rank, _ = np.linalg.lstsq(D, y, rcond=None)
    resid = y - D @ beta
    rss = float(resid @ resid)
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - rss / tss if tss > 0 else math.nan
    dof = n - p - 1
    adj = 1.0 - (1.0 - r2) * (n - 1) / dof if dof > 0 and not math.isnan(r2) else math.nan
    if dof > 0 and rank == p + 1:
        sigma2 = rss / dof
        se = np.sqrt(np.diag(sigma2 * np.linalg.inv(D.T @ D)))
        tcrit = float(stats.t.ppf((1.0 + level) / 2.0, dof))
    else:
        se = np.full(p + 1, math.nan)
        tcrit = math.nan
    coefficients = _coefficients(predictors, beta, se, tcrit, dof)
    corr = np.corrcoef(Xraw, rowvar=False) if p > 1 else np.ones((1, 1))
    return {
        "n": int(n),
        "r2": r2,
        "adj_r2": adj,
        "intercept": float(beta[0]),
        "coefficients": coefficients,
        "predictor_mean": dict(zip(predictors, mean.tolist(), strict=True)),
        "predictor_sd": dict(zip(predictors, sd.tolist(), strict=True)),
        "predictor_correlation": {
            a: {b: float(corr[i, j]) for j, b in enumerate(predictors)}
            for i, a in enumerate(predictors)
        },
        "level": level,
    }


def _coefficients(predictors: list[str], beta: np.ndarray, se: np.ndarray, tcrit: float,
                  dof: int) -> dict[str, dict[str, float]]:
    """Per predictor: coefficient, standard error, interval, t statistic and two-sided p."""
    out: dict[str, dict[str, float]] = {}
    for k, name in enumerate(predictors, start=1):
        b, s = float(beta[k]), float(se[k])
        if s > 0:
            tval = b / s
            pval = float(2.0 * stats.t.sf(abs(tval), dof))
        else:
            tval = pval = math.nan
        out[name] = {
            "coef": b,
            "se": s,
            "ci_low": b - tcrit * s,
            "ci_high": b + tcrit * s,
            "t": tval,
            "p": pval,
        }
    return out


def standardised_coefficients(
    X: ArrayLike, Y: ArrayLike, n_boot: int = 1000, rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardised OLS coefficients of many outcomes on the same predictors, with a bootstrap.

    For each column ``l`` of ``Y`` (a layer), the OLS fit ``y_l = b0 + X b_l + e`` gives
    ``beta_kl = b_kl sd(x_k) / sd(y_l)``: the change of ``y_l``, in its standard deviations,
    per standard deviation of predictor ``k`` with the others held fixed (for one predictor,
    Pearson's r; Cohen's 0.1, 0.3 and 0.5 read as small, medium and large). The items (rows:
    words) are resampled with replacement ``n_boot`` times, the same draw for every column,
    and every replicate is fitted from weighted moments, so a mean of ``beta`` over layers
    keeps the layers' correlation.

    Parameters
    ----------
    X : (n, p) predictors (e.g. log sense count, log number of contexts)
    Y : (n, L) outcomes (e.g. self-similarity in each of L layers); finite
    n_boot : replicates (0: none)
    rng : seed or Generator

    Returns
    -------
    beta : (p, L)
    replicates : (n_boot, p, L) (NaN where a replicate's design is singular)
    r2 : (L,) the full-sample R^2 of each column
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or len(X) != len(Y):
        raise ValueError(f"X and Y must be (n, p) and (n, L), not {X.shape} and {Y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise ValueError("X and Y must be finite")
    if len(X) <= X.shape[1] + 1:
        raise ValueError(f"{len(X)} items cannot fit {X.shape[1]} predictors and an intercept")
    beta, r2 = _weighted_beta(X, Y, np.ones((1, len(X))))
    gen = np.random.default_rng(rng)
    counts = np.stack([np.bincount(gen.integers(0, len(X), len(X)), minlength=len(X))
                       for _ in range(n_boot)]).astype(np.float64) if n_boot > 0 \
        else np.zeros((0, len(X)))
    reps = _weighted_beta(X, Y, counts)[0] if n_boot > 0 else np.zeros((0, *beta.shape[1:]))
    return beta[0], reps, r2[0]


def _weighted_beta(X: np.ndarray, Y: np.ndarray, W: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Standardised coefficients (B, p, L) and R^2 (B, L) under B rows of item weights."""
    n_w = W.sum(axis=1)
    sx, sy = W @ X, W @ Y
    Cxx = np.einsum("bn,ni,nj->bij", W, X, X) - sx[:, :, None] * sx[:, None, :] / n_w[:, None,
                                                                                        None]
    Cxy = np.einsum("bn,ni,nl->bil", W, X, Y) - sx[:, :, None] * sy[:, None, :] / n_w[:, None,
                                                                                       None]
    Cyy = W @ (Y * Y) - sy * sy / n_w[:, None]
    out = np.full(Cxy.shape, np.nan)
    r2 = np.full(Cyy.shape, np.nan)
    ok = np.linalg.matrix_rank(Cxx) == X.shape[1]
    if ok.any():
        raw = np.linalg.solve(Cxx[ok], Cxy[ok])
        sdx = np.sqrt(np.einsum("bii->bi", Cxx[ok]))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[ok] = raw * sdx[:, :, None] / np.sqrt(Cyy[ok])[:, None, :]
            r2[ok] = np.einsum("bil,bil->bl", raw, Cxy[ok]) / Cyy[ok]
    return out, r2
