"""Anisotropy baselines (Ethayarajh 2019, section 3.4): what random pairs of word vectors score.

* :func:`anisotropy_baseline` (his eq. 4): the mean cosine of word occurrences from different
  sentences, exact over all of them or over a random pool drawn as the authors' code draws it
  (``PoolScheme``);
* :func:`cross_sentence_replicates`: the exact baseline of resampled sets of sentences, a
  sentence bootstrap whose resamples a caller shares across layers;
* :func:`baseline_and_replicates`: the exact baseline and its sentence bootstrap together,
  on raw or standardised dimensions (``standardise``);
* :func:`mev_baseline`: the MEV of a random pool of occurrences.

The cosine baselines take ``standardise=True`` for standardised dimensions (Timkey & van
Schijndel 2021): each dimension z-scored over the layer's rows before the rows are normalised
(:func:`lmgeometry.measures.unit_rows.dimension_moments`), which removes what a few rogue
dimensions (large mean or variance) contribute to every cosine.

How SelfSim, IntraSim and MEV are adjusted by them under each estimator preset:
:class:`lmgeometry.measures.contextual.Estimators`.

Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Timkey, W. & van Schijndel, M. (2021). All Bark and No Bite: Rogue Dimensions in Transformer
Language Models Obscure Representational Quality. EMNLP.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.cosines import sample_ordered_pairs
from lmgeometry.measures.mev import MevMethod, _mev_of
from lmgeometry.measures.similarity import as_rows
from lmgeometry.measures.stats import RngLike
from lmgeometry.measures.unit_rows import (
    LayerVectors,
    UnitRows,
    _as_codes,
    _block_group_sums,
    _cross_mean,
    _group_sum,
    _mean_or_nan,
    _pairdot,
    _rng,
    _sq_norms_of_sums,
    _unit,
    _UnitReader,
)

__all__ = [
    "anisotropy_baseline",
    "baseline_and_replicates",
    "cross_sentence_replicates",
    "mev_baseline",
    "PoolScheme",
]


PoolScheme = Literal["sentence", "occurrence"]



def _draw_pool(
    sent_codes: np.ndarray, n: int, scheme: PoolScheme, rng: np.random.Generator
) -> np.ndarray:
    """Row indices of a random pool of ``min(n, available)`` word occurrences."""
    N = len(sent_codes)
    if scheme == "occurrence":
        return np.sort(rng.choice(N, size=min(n, N), replace=False))
    if scheme != "sentence":
        raise ValueError(f"unknown pool scheme {scheme!r}")
    order = np.argsort(sent_codes, kind="stable")
    counts = np.bincount(sent_codes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    present = np.flatnonzero(counts)
    chosen = rng.choice(present, size=min(n, len(present)), replace=False)
    offsets = rng.integers(0, counts[chosen])
    return order[starts[chosen] + offsets]



def _pool_cosine(
    U: np.ndarray,
    nz: np.ndarray,
    sent_codes: np.ndarray,
    pool: np.ndarray,
    replace: bool,
    n_pairs: int | None,
    rng: np.random.Generator,
) -> float:
    if len(pool) == 0:
        return float("nan")
    if replace:
        m = len(pool) if n_pairs is None else n_pairs
        a = pool[rng.integers(0, len(pool), size=m)]
        b = pool[rng.integers(0, len(pool), size=m)]
        ok = nz[a] & nz[b]
        return _mean_or_nan(_pairdot(U, a[ok], b[ok]))
    if n_pairs is None:
        return _cross_mean(U[pool], nz[pool], sent_codes[pool])
    i, j = sample_ordered_pairs(len(pool), n_pairs, rng, sentence_ids=sent_codes[pool])
    a, b = pool[i], pool[j]
    ok = nz[a] & nz[b]
    return _mean_or_nan(_pairdot(U, a[ok], b[ok]))



@float_arrays("vectors", "sentence_ids")
def anisotropy_baseline(
    vectors: LayerVectors,
    sentence_ids: np.ndarray | Sequence,
    n: int | None = 1000,
    rng: RngLike = None,
    *,
    replace: bool = False,
    scheme: PoolScheme = "occurrence",
    n_pairs: int | None = None,
    standardise: bool = False,
) -> float:
    """Cosine anisotropy baseline (Ethayarajh 2019, section 3.4, eq. 4).

    .. math:: \\mathrm{Baseline}(f_\\ell) = \\mathbb{E}_{x, y \\sim U(\\mathcal O)}
              [\\cos(f_\\ell(x), f_\\ell(y))]

    over word occurrences ``x, y`` from *different* sentences ("uniformly randomly sampled words
    from different contexts").

    Estimators:

    * ``n=None``: the exact mean over all ordered pairs of occurrences in different sentences,
      in closed form (``||S||^2 - sum_s ||S_s||^2`` over ``c^2 - sum_s c_s^2``). No sampling.
    * otherwise a pool of ``min(n, available)`` occurrences is drawn: ``scheme="sentence"``
      takes that many distinct sentences uniformly and one word uniformly from each (the
      authors' code; note this favours words of short sentences), ``scheme="occurrence"`` takes
      occurrences uniformly without replacement. Then

      - ``replace=True`` (the authors' code): ``n_pairs`` (default: the pool size) pairs, each
        member drawn independently with replacement from the pool. A word can be paired with
        itself (cosine 1), which biases the estimate up by about ``(1 - b) / n``.
      - ``replace=False``: every ordered pair of distinct pool members from different sentences
        (or ``n_pairs`` of them drawn without replacement).

    Parameters
    ----------
    vectors : ndarray of shape (N, d), or its :class:`UnitRows`
        All word occurrences of one layer.
    sentence_ids : array of shape (N,)
    n : int or None
        Pool size; None for the exact population mean.
    rng : int, Generator or None
    replace, scheme, n_pairs
        See above.
    standardise : bool
        On standardised dimensions: :math:`\\cos(z_x, z_y)` with
        :math:`z_{k} = (x_k - \\mu_k) / \\sigma_k`, the mean and standard deviation of each
        dimension over all ``N`` rows (Timkey & van Schijndel 2021). Invariant to shifting
        and rescaling any dimension; near 0 for rows that differ only by noise around a
        common mean, however anisotropic their raw dimensions. Needs the raw rows (or
        ``UnitRows.of(X, standardise=True)``).

    Returns
    -------
    float
        NaN if no admissible pair has two non-zero rows.
    """
    U, norms = _unit(vectors, standardise)
    codes = _as_codes(sentence_ids)
    if len(codes) != len(U):
        raise ValueError("sentence_ids must have one entry per row")
    nz = norms > 0
    if n is None:
        return _cross_mean(U, nz, codes)
    gen = _rng(rng)
    pool = _draw_pool(codes, n, scheme, gen)
    return _pool_cosine(U, nz, codes, pool, replace, n_pairs, gen)



def cross_sentence_replicates(
    vectors: LayerVectors,
    sentence_ids: np.ndarray | Sequence,
    counts: np.ndarray,
    *,
    standardise: bool = False,
) -> np.ndarray:
    """The exact cosine baseline (eq. 4) of resampled sets of sentences: a sentence bootstrap.

    With ``T_s = sum_{i in s} u_i`` the sum of sentence ``s``'s unit rows and ``c_s`` its
    number of non-zero rows, a resample that takes sentence ``s`` ``m_s`` times has the mean
    cosine over pairs of occurrences in different sentences

    .. math:: b(m) = \\frac{\\lVert \\sum_s m_s T_s \\rVert^2 - \\sum_s m_s^2
              \\lVert T_s \\rVert^2}{(\\sum_s m_s c_s)^2 - \\sum_s m_s^2 c_s^2}

    (pairs within one sentence, and between two copies of it, are left out, as the baseline
    leaves out pairs from the same sentence). ``m = 1`` gives the exact baseline,
    :func:`anisotropy_baseline` with ``n=None``. Drawing ``counts`` once and using it for
    every layer resamples the same sentences in every layer, so a statistic over layers (the
    smallest baseline, a trend) gets a joint interval. Cost ``O(B S d)`` for ``B`` resamples of
    ``S`` sentences, with no pairwise Gram matrix.

    Parameters
    ----------
    vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    sentence_ids : array of shape (N,)
    counts : array of shape (B, S)
        How often each resample takes each sentence; columns follow the sorted distinct
        ``sentence_ids`` (e.g. rows of ``numpy.random.Generator.multinomial(S, [1 / S] * S)``).
    standardise : bool
        On standardised dimensions (:func:`anisotropy_baseline`), with the dimensions'
        moments taken once over all the rows (not per resample).

    Returns
    -------
    ndarray of shape (B,)
        NaN for a resample with no admissible pair.
    """
    U, norms = _unit(vectors, standardise)
    _, codes = np.unique(np.asarray(sentence_ids), return_inverse=True)
    if len(codes) != len(U):
        raise ValueError("sentence_ids must have one entry per row")
    n_s = int(codes.max()) + 1 if len(codes) else 0
    M = np.asarray(counts, dtype=np.float64)
    if M.ndim != 2 or M.shape[1] != n_s:
        raise ValueError(f"counts must have one column per sentence ({n_s}), not {M.shape}")
    c = np.bincount(codes, weights=(norms > 0).astype(np.float64), minlength=n_s)
    if isinstance(U, _UnitReader):  # P = M T is linear in T: add each chunk's share of T
        P = np.zeros((len(M), U.shape[1]))
        for groups, sums in _block_group_sums(U, codes):
            P += M[:, groups] @ sums
        TT = _sq_norms_of_sums(U, codes, n_s)
    else:
        T = _group_sum(U, codes, n_s)
        P, TT = M @ T, np.einsum("sd,sd->s", T, T)
    M2 = M * M
    num = np.einsum("bd,bd->b", P, P) - M2 @ TT
    den = (M @ c) ** 2 - M2 @ (c * c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)



def baseline_and_replicates(
    vectors: LayerVectors,
    sentence_ids: np.ndarray | Sequence,
    counts: np.ndarray,
    *,
    standardise: bool = False,
) -> tuple[float, np.ndarray]:
    """The exact cosine baseline (eq. 4) and its sentence-bootstrap replicates, from one
    normalisation of the rows.

    :func:`anisotropy_baseline` with ``n=None`` and :func:`cross_sentence_replicates` of the
    same ``counts``; with ``standardise=True`` both on standardised dimensions (each
    dimension z-scored over the rows given, before normalising).

    Returns
    -------
    value : float
    replicates : ndarray of shape (B,)
    """
    units = UnitRows.of(vectors, standardise=standardise)
    return (anisotropy_baseline(units, sentence_ids, n=None),
            cross_sentence_replicates(units, sentence_ids, counts))



def mev_baseline(
    vectors: np.ndarray,
    sentence_ids: np.ndarray | Sequence,
    n: int = 1000,
    rng: RngLike = None,
    *,
    method: MevMethod = "centered",
    scheme: PoolScheme = "occurrence",
) -> float:
    """MEV anisotropy baseline (Ethayarajh 2019, section 3.4).

    "The proportion of variance in uniformly randomly sampled word representations that is
    explained by their first principal component": the MEV of a pool of ``min(n, available)``
    random occurrences, drawn as in :func:`anisotropy_baseline`.

    ``method``:

    * ``"centered"``: :func:`max_explainable_variance` with centring (the paper's reading, and
      what the authors' code uses for each word's own MEV from December 2019 on).
    * ``"uncentered"``: ``sigma_1^2 / sum sigma_i^2`` of the raw pool.
    * ``"truncated_svd"``: what every version of the authors' code does for the baseline,
      :func:`truncated_svd_variance_ratio` (uncentred direction, centred variances), as the
      version that made their released numbers does for each word's MEV
      (``docs/SEED001_ESTIMATORS.md``). In the authors' published statistics
      (``gpt2/embedding_space_stats.json``) this baseline is 0.97-0.998 for GPT-2 layers 2-11,
      against a raw word MEV the paper puts near 0.3, so the adjusted MEV of those layers is
      negative (the paper's Figure 4 shows it positive).

    Note that MEV depends strongly on the number of rows (``k`` centred random rows have MEV
    of at least ``1 / (k - 1)``), so a 1,000-row baseline is not comparable with a 5-row word;
    :class:`Estimators` ``mev_baseline_matched`` draws a size-matched baseline per word instead.

    Parameters
    ----------
    vectors : ndarray of shape (N, d)
        Or a memory map or lazy layer view: only the pool's rows are read.
    sentence_ids : array of shape (N,)
    n : int
    rng : int, Generator or None
    method : {"centered", "uncentered", "truncated_svd"}
    scheme : {"sentence", "occurrence"}

    Returns
    -------
    float in [0, 1]
    """
    codes = _as_codes(sentence_ids)
    X = as_rows(vectors)  # memory maps and lazy views stay lazy
    if len(codes) != len(X):
        raise ValueError("sentence_ids must have one entry per row")
    pool = _draw_pool(codes, n, scheme, _rng(rng))
    return _mev_of(np.asarray(X[np.sort(pool)], dtype=np.float64), method)
