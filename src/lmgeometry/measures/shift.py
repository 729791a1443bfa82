"""How much of a cloud's mean cosine its mean vector alone accounts for (the common shift).

Biš, Podkorytov and Liu (2021), *Too Much in Common* (NAACL 2021) argue that embeddings are
shifted along a common direction rather than confined to a narrow cone. :func:`shift_cosine`
sets the mean pairwise cosine of a set of vectors (their Appendix A, eqs. 12-14) beside the
mean cosine that their mean vector predicts, and :func:`shift_cosine_replicates` gives it
under a bootstrap over sentences (groups of rows).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.mean_cosines import mean_cosine
from lmgeometry.measures.stats import RngLike

__all__ = ["shift_cosine", "shift_cosine_replicates"]


@float_arrays("X")
def shift_cosine(X: npt.ArrayLike) -> dict[str, float]:
    """Mean pairwise cosine of the rows of X beside what their mean vector alone predicts.

    For the N non-zero rows x_i with unit vectors u_i = x_i / ||x_i||, mean mu = avg_i x_i and
    mean squared norm m2 = avg_i ||x_i||^2:

    * ``mean_cosine`` c = avg_{i != j} u_i . u_j = (||sum_i u_i||^2 - N) / (N (N - 1))
      (Biš et al. 2021, Appendix A, eqs. 12-14; :func:`mean_cosine`);
    * ``shift_share`` s = ||mu||^2 / m2, the share of the raw second moment carried by the mean
      (for rows mu + e_i with zero-mean noise of covariance Sigma it tends to
      ||mu||^2 / (||mu||^2 + tr Sigma));
    * ``shift_prediction`` c_mu = (N s - 1) / (N - 1). This is exactly the mean inner product of
      distinct rows in units of m2, avg_{i != j} x_i . x_j / m2 =
      (||sum_i x_i||^2 - sum_i ||x_i||^2) / (N (N - 1) m2), so it equals c when every row has
      the same norm: it is the mean cosine that the layer's mean vector predicts for a cloud
      of equal norms;
    * ``shift_residual`` c - c_mu.

    Why not the mean cosine after centring: centred rows sum to zero, so their mean pairwise
    cosine is about 0 for any cloud whose rows have similar norms, whatever its shape, and "it
    vanishes after centring" would be true by construction. The residual is not zero by
    construction: c and c_mu part when the norms differ, most when a few rows with very large
    norms dominate mu and m2 (as the first token of a decoder, see :func:`first_word_mask`);
    then mu is mostly those rows' direction, and subtracting it (centring) does not remove
    what the directions of the other rows have in common. The shape of the spread left after
    centring is measured separately (IsoScore, :func:`isoscore.isoscore`).

    Returns
    -------
    dict
        ``n_rows`` (N), ``mean_cosine``, ``shift_share``, ``shift_prediction``,
        ``shift_residual`` (floats).
    """
    X = np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    X = X[sq > 0]
    sq = sq[sq > 0]
    n = X.shape[0]
    if n < 2:
        raise ValueError("need at least two non-zero rows")
    mu = X.mean(axis=0)
    share = float(mu @ mu / sq.mean())
    prediction = (n * share - 1) / (n - 1)
    c = mean_cosine(X)
    return {
        "n_rows": int(n),
        "mean_cosine": c,
        "shift_share": share,
        "shift_prediction": float(prediction),
        "shift_residual": float(c - prediction),
    }


def shift_cosine_replicates(X: npt.ArrayLike, groups: npt.ArrayLike, n_boot: int = 1000,
                            rng: RngLike = None) -> dict[str, np.ndarray]:
    """:func:`shift_cosine` on bootstrap resamples of whole groups of rows (e.g. sentences).

    Rows of one sentence share its context, so the sentences, not the rows, are resampled
    (a cluster bootstrap). Each statistic of :func:`shift_cosine` is a function of four sums
    over the rows, so per group g only U_g = sum u_i, S_g = sum x_i, Q_g = sum ||x_i||^2 and
    n_g are kept, and a replicate with group counts k_g (a multinomial draw of as many groups
    as there are) has ``sum_g k_g U_g`` and so on: the replicates are exact and cost
    ``n_boot x groups x width``. Duplicated rows count as distinct rows, as in any bootstrap.

    Parameters
    ----------
    X : array_like, shape (n, d)
    groups : array_like, shape (n,)
        Group (sentence) label of each row.
    n_boot : int
    rng : seed or Generator

    Returns
    -------
    dict
        ``mean_cosine``, ``shift_prediction``, ``shift_residual``: arrays of shape (n_boot,).
    """
    X = np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    keep = sq > 0
    X, sq = X[keep], sq[keep]
    _, g = np.unique(np.asarray(groups)[keep], return_inverse=True)
    order = np.argsort(g, kind="stable")
    X, sq, g = X[order], sq[order], g[order]
    n_groups = int(g.max()) + 1
    starts = np.searchsorted(g, np.arange(n_groups))
    U_g = np.add.reduceat(X / np.sqrt(sq)[:, None], starts, axis=0)
    S_g = np.add.reduceat(X, starts, axis=0)
    Q_g, n_g = np.bincount(g, sq, n_groups), np.bincount(g, minlength=n_groups).astype(float)
    gen = np.random.default_rng(rng)
    K = gen.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=n_boot).astype(float)
    U, S, Q, N = K @ U_g, K @ S_g, K @ Q_g, K @ n_g
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (np.einsum("bd,bd->b", U, U) - N) / (N * (N - 1))
        share = np.einsum("bd,bd->b", S, S) / (N * Q)
        prediction = (N * share - 1) / (N - 1)
    return {"mean_cosine": c, "shift_prediction": prediction, "shift_residual": c - prediction}
