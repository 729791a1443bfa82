"""Cosine measures of one item (Ethayarajh 2019): SelfSim of a word, IntraSim of a sentence.

* :func:`self_similarity` (his eq. 1): the mean cosine over ordered pairs of a word's
  occurrences, exact in closed form (:func:`mean_pairwise_cosine`) or over at most ``n_pairs``
  pairs drawn as the authors' code draws them (:func:`sample_ordered_pairs`);
* :func:`intra_sentence_similarity` (eq. 2): the mean cosine of a sentence's words to the
  sentence's mean vector.

The same measures over every eligible word and sampled sentence of a layer, under an estimator
preset, are in :mod:`lmgeometry.measures.contextual`; rows are normalised and zero rows left out
as :mod:`lmgeometry.measures.unit_rows` describes.

Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import unit_rows
from lmgeometry.measures.stats import RngLike
from lmgeometry.measures.unit_rows import _as_codes, _cross_mean, _mean_or_nan, _pairdot, _rng

__all__ = [
    "intra_sentence_similarity",
    "mean_pairwise_cosine",
    "sample_ordered_pairs",
    "self_similarity",
]


@float_arrays("X")
def mean_pairwise_cosine(X: np.ndarray) -> float:
    """Mean cosine similarity over all ordered pairs ``i != j`` of the rows of ``X``.

    .. math:: \\frac{1}{n^2 - n} \\sum_i \\sum_{j \\ne i} \\cos(x_i, x_j)
              = \\frac{\\lVert \\sum_i \\hat x_i \\rVert^2 - n}{n^2 - n},
              \\quad \\hat x_i = x_i / \\lVert x_i \\rVert

    This is Ethayarajh's (2019) self-similarity, eq. 1, when the rows are the occurrences of one
    word. Zero rows are left out (``n`` counts non-zero rows); fewer than two non-zero rows give
    NaN. Invariant to positive scaling of each row.

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    float
    """
    U, norms = unit_rows(X)
    return _cross_mean(U, norms > 0, None)



def sample_ordered_pairs(
    n: int,
    n_pairs: int | None,
    rng: RngLike = None,
    *,
    sentence_ids: np.ndarray | Sequence | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Ordered index pairs ``(i, j)``, ``i != j``, as the authors' self-similarity draws them.

    The admissible pairs are all ordered pairs of distinct indices in ``range(n)`` (and, when
    ``sentence_ids`` is given, only those from different sentences). If there are at most
    ``n_pairs`` of them (or ``n_pairs`` is None) all are returned, in row-major order;
    otherwise a uniformly random subset of exactly ``n_pairs`` of them, drawn **without
    replacement**, in random order. This is what ``random.sample(index_pairs, 1000)`` does in
    the authors' ``calculate_word_similarity_across_sentences``.

    Parameters
    ----------
    n : int
        Number of rows.
    n_pairs : int or None
        Largest number of pairs to return.
    rng : int, Generator or None
        Random source (only used when sampling).
    sentence_ids : array of shape (n,), optional
        Sentence of each row; pairs within one sentence are then inadmissible.

    Returns
    -------
    i, j : int64 arrays of equal length
    """
    codes = None if sentence_ids is None else _as_codes(sentence_ids)
    if codes is not None and len(codes) != n:
        raise ValueError("sentence_ids must have length n")
    total = n * (n - 1)
    if codes is None:
        admissible = total
    else:
        counts = np.bincount(codes) if n else np.zeros(0, dtype=np.int64)
        admissible = n * n - int(counts @ counts)
    if n_pairs is None or admissible <= n_pairs:
        mask = ~np.eye(n, dtype=bool)
        if codes is not None:
            mask &= codes[:, None] != codes[None, :]
        i, j = np.nonzero(mask)
        return i.astype(np.int64), j.astype(np.int64)
    gen = _rng(rng)
    # Oversample from all ordered pairs and keep the first admissible ones: a uniformly random
    # ordered sample, filtered, is a uniformly random sample of the admissible pairs.
    draw = min(total, int(np.ceil(1.2 * n_pairs * total / admissible)) + 32)
    while True:
        flat = gen.choice(total, size=draw, replace=False)
        i = flat // (n - 1)
        r = flat % (n - 1)
        j = r + (r >= i)
        if codes is not None:
            ok = codes[i] != codes[j]
            i, j = i[ok], j[ok]
        if len(i) >= n_pairs:
            return i[:n_pairs].astype(np.int64), j[:n_pairs].astype(np.int64)
        draw = min(total, 2 * draw)



@float_arrays("X")
def self_similarity(
    X: np.ndarray,
    n_pairs: int | None = None,
    rng: RngLike = None,
    *,
    sentence_ids: np.ndarray | Sequence | None = None,
) -> float:
    """Self-similarity of one word from its occurrence matrix (Ethayarajh 2019, eq. 1).

    .. math:: \\mathrm{SelfSim}(w) = \\frac{1}{n^2 - n} \\sum_j \\sum_{k \\ne j}
              \\cos(f(s_j, i_j), f(s_k, i_k))

    Parameters
    ----------
    X : ndarray of shape (n, d)
        One row per occurrence of the word.
    n_pairs : int or None
        None: every admissible ordered pair, computed exactly in closed form (then, without
        ``sentence_ids``, equal to :func:`mean_pairwise_cosine`). An int: the authors'
        estimator, the mean over at most ``n_pairs`` ordered pairs drawn without replacement
        (:func:`sample_ordered_pairs`); their code uses 1,000.
    rng : int, Generator or None
        Random source for the pair sample.
    sentence_ids : array of shape (n,), optional
        Sentence of each occurrence. If given, pairs of occurrences in the same sentence are
        left out (the paper's "n unique contexts"); the authors' code keeps them.

    Returns
    -------
    float
        Mean cosine over the pairs whose rows are both non-zero; NaN if there are none.
    """
    U, norms = unit_rows(X)
    nz = norms > 0
    if n_pairs is None:
        codes = None if sentence_ids is None else _as_codes(sentence_ids)
        if codes is not None and len(codes) != len(U):
            raise ValueError("sentence_ids must have one entry per row")
        return _cross_mean(U, nz, codes)
    i, j = sample_ordered_pairs(len(U), n_pairs, rng, sentence_ids=sentence_ids)
    ok = nz[i] & nz[j]
    return _mean_or_nan(_pairdot(U, i[ok], j[ok]))



@float_arrays("S")
def intra_sentence_similarity(S: np.ndarray) -> float:
    """Intra-sentence similarity of one sentence (Ethayarajh 2019, eq. 2).

    .. math:: \\mathrm{IntraSim}(s) = \\frac{1}{n} \\sum_i \\cos(\\vec s, f(s, i)),
              \\qquad \\vec s = \\frac{1}{n} \\sum_i f(s, i)

    The sentence vector is the mean of the *raw* word vectors (so a word with a very large norm,
    such as a decoder's first token, dominates its direction). The mean over ``i`` runs over
    the non-zero rows; NaN if the sentence vector is zero.

    Parameters
    ----------
    S : ndarray of shape (n, d)
        The word vectors of one sentence.

    Returns
    -------
    float
    """
    U, norms = unit_rows(S)
    nz = norms > 0
    if not nz.any():
        return float("nan")
    m = (norms / norms.max()) @ U  # direction of sum_i x_i, without overflow
    mu, mnorm = unit_rows(m[None, :])
    if mnorm[0] == 0:
        return float("nan")
    return float((U[nz] @ mu[0]).mean())
