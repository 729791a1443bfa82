"""Statistics shared by every chapter: bootstrap and binomial intervals.

* :func:`bootstrap_ci` -- percentile bootstrap interval of a mean;
* :func:`wilson_interval` -- Wilson score interval of a proportion (Wilson 1927);
* :func:`verdict` -- the book's one rule that turns an interval into a verdict on a claim.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import stats

__all__ = [
    "Direction",
    "RngLike",
    "VERDICTS",
    "bootstrap_ci",
    "verdict",
    "wilson_interval",
]

#: The side of its threshold on which a claim puts its statistic.
Direction = Literal["above", "below"]
#: The three verdicts, in the order tables list them.
VERDICTS: tuple[str, ...] = ("holds", "inconclusive", "does not hold")

#: Anything ``numpy.random.default_rng`` accepts: a seed, a generator, a seed sequence, None.
RngLike = int | np.random.Generator | np.random.SeedSequence | None

_CHUNK_ELEMENTS = 1 << 22  # index-matrix elements per bootstrap chunk (32 MiB of int64)


def bootstrap_ci(
    values: np.ndarray | Sequence[float],
    n_boot: int = 1000,
    rng: RngLike = None,
    *,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """Mean of ``values`` and a percentile bootstrap interval for it.

    The items (words, sentences, tokens) are resampled with replacement ``n_boot`` times and the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled means are returned.
    Vectorised: each replicate is a row of an index matrix (chunked to bound memory); the
    per-item values are resampled, not recomputed. NaN values are dropped first.

    Parameters
    ----------
    values : array of shape (m,)
    n_boot : int
        Number of bootstrap replicates; 0 gives NaN bounds.
    rng : int, Generator or None
    level : float
        Coverage of the interval.

    Returns
    -------
    mean, low, high : float
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[~np.isnan(v)]
    m = len(v)
    if m == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(v.mean())
    if n_boot <= 0:
        return mean, float("nan"), float("nan")
    gen = np.random.default_rng(rng)
    means = np.empty(n_boot)
    per_chunk = max(1, _CHUNK_ELEMENTS // max(m, 1))
    for start in range(0, n_boot, per_chunk):
        k = min(per_chunk, n_boot - start)
        means[start : start + k] = v[gen.integers(0, m, size=(k, m))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return mean, float(lo), float(hi)


def wilson_interval(p: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` observed on ``n`` trials (Wilson 1927).

    ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``z`` the normal
    quantile at ``(1 + level) / 2``. NaN bounds when ``n == 0``.
    """
    if n <= 0 or not np.isfinite(p):
        return math.nan, math.nan
    z = float(stats.norm.ppf((1.0 + level) / 2.0))
    center = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (center - half) / (1 + z * z / n), (center + half) / (1 + z * z / n)


def verdict(ci_low: float, ci_high: float, threshold: float, direction: Direction) -> str:
    """The verdict on a claim "the statistic is ``direction`` ``threshold``", from its interval.

    ``"holds"`` when the whole interval ``[ci_low, ci_high]`` lies strictly on the claimed side
    of the threshold, ``"does not hold"`` when it lies wholly on the other side (touching the
    threshold counts as the other side), and ``"inconclusive"`` when the interval contains the
    threshold or a bound is missing (NaN).

    Examples
    --------
    >>> verdict(0.2, 0.4, 0.1, "above"), verdict(-0.3, 0.4, 0.1, "above")
    ('holds', 'inconclusive')
    >>> verdict(0.2, 0.4, 0.5, "above"), verdict(-0.9, -0.7, -0.5, "below")
    ('does not hold', 'holds')
    """
    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below', not {direction!r}")
    lo, hi = float(ci_low), float(ci_high)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "inconclusive"
    if lo > hi:
        raise ValueError(f"interval [{lo}, {hi}] has its bounds reversed")
    if direction == "above":
        return "holds" if lo > threshold else "does not hold" if hi <= threshold else "inconclusive"
    return "holds" if hi < threshold else "does not hold" if lo >= threshold else "inconclusive"
