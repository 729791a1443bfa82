"""Word senses in contextual vector space: how well one word's vectors separate its senses.

These measures ask whether a model's contextual vectors of one word fall into groups that
match the word's senses:

* :func:`loo_1nn_sense_accuracy` -- leave-one-out 1-nearest-neighbour sense accuracy among one
  word's occurrences, against :func:`most_frequent_sense_baseline`;
* :func:`sense_silhouette` -- the silhouette of the sense partition under cosine distance;
* :func:`sense_separability` -- both, per target word of a sense-tagged word table;
* :func:`nn_credit`, :func:`mfs_credit` -- the per-occurrence credits behind the 1-NN and MFS
  accuracies, :func:`similarity_silhouette` -- the silhouette from a similarity matrix, and
  :func:`natural_sample` -- a subsample of a word's occurrences in its senses' natural
  proportions, so that the MFS baseline is the one a reader of WSD papers knows.

The Word-in-Context task is in :mod:`lmgeometry.measures.wic`, the polysemy regression in
:mod:`lmgeometry.measures.polysemy`. Every function takes vectors already transformed as the
caller wants (centred, top principal components removed, standardised:
:func:`lmgeometry.measures.transforms.transform`).

References
----------
Rousseeuw, P. J. (1987). Silhouettes: a graphical aid to the interpretation and validation of
cluster analysis. J. Comput. Appl. Math. 20, 53-65.
Wiedemann, G., Remus, S., Chawla, A., Biemann, C. (2019). Does BERT make any sense?
Interpretable word sense disambiguation with contextualized embeddings. KONVENS.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import unit_rows

__all__ = [
    "loo_1nn_sense_accuracy",
    "mfs_credit",
    "most_frequent_sense_baseline",
    "natural_sample",
    "nn_credit",
    "similarity_silhouette",
    "similarity_matrix",
    "sense_separability",
    "sense_silhouette",
    "separability_summary",
    "TIE_TOL",
    "Ties",
]


Ties = Literal["split", "first"]


TIE_TOL = 1e-9
"""Cosine similarities within this of a row's maximum count as tied for nearest."""


def _codes(senses: ArrayLike) -> np.ndarray:
    """Integer codes of the labels (in order of first appearance)."""
    a = np.asarray(senses)
    if a.dtype.kind in "iu" and a.ndim == 1:  # already codes: keep their order of appearance
        return pd.factorize(a, sort=False)[0]
    codes, _ = pd.factorize(pd.Series(list(np.asarray(senses, dtype=object))), sort=False)
    if (codes < 0).any():
        raise ValueError("senses contain missing values")
    return codes


def loo_1nn_sense_accuracy(
    X: ArrayLike, senses: ArrayLike, *, ties: Ties = "split", tie_tol: float = TIE_TOL,
    metric: Literal["cosine", "euclidean"] = "cosine",
) -> float:
    """Leave-one-out 1-nearest-neighbour sense accuracy among one word's occurrences.

    Each occurrence ``i`` is labelled with the sense of its nearest other occurrence by cosine
    similarity, ``j*(i) = argmax_{j != i} cos(x_i, x_j)``; the accuracy is the fraction labelled
    correctly. This is the k = 1 case of the nearest-neighbour sense classifiers of Wiedemann et
    al. (2019), with the leave-one-out protocol so that no held-out split is needed.

    Ties (similarities within ``tie_tol`` of the row maximum, so that rounding in the matrix
    product cannot break them arbitrarily) are resolved deterministically:

    * ``ties="split"`` (default): occurrence ``i`` earns the fraction of its tied nearest
      neighbours that share its sense -- the expected accuracy of breaking ties uniformly at
      random. With all vectors identical this gives exactly
      ``sum_s c_s (c_s - 1) / (n (n - 1))`` for sense counts ``c_s``.
    * ``ties="first"``: the tied neighbour with the lowest index wins.

    A zero vector has cosine 0 with everything. ``metric="euclidean"`` ranks neighbours by
    ``-||x_i - x_j||^2`` instead (for low-dimensional projections such as a 2-D PCA view, where
    the angle to the origin means little); ``tie_tol`` then applies to squared distances.

    Parameters
    ----------
    X
        ``(n, d)`` vectors of the occurrences, ``n >= 2``.
    senses
        ``n`` sense labels (any hashables).
    ties
        ``"split"`` or ``"first"``.
    tie_tol
        Tolerance on cosine similarity for ties.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    X = np.asarray(X, dtype=np.float64)
    y = _codes(senses)
    if X.ndim != 2 or X.shape[0] != len(y):
        raise ValueError("X must be (n, d) with one row per sense label")
    return float(nn_credit(similarity_matrix(X, metric), y, ties=ties, tie_tol=tie_tol).mean())


def similarity_matrix(X: ArrayLike, metric: Literal["cosine", "euclidean"] = "cosine"
                      ) -> np.ndarray:
    """``(n, n)`` similarities of the rows: cosine, or minus the squared Euclidean distance."""
    X = np.asarray(X, dtype=np.float64)
    if metric == "cosine":
        U = unit_rows(X)[0]
        return U @ U.T
    if metric == "euclidean":
        sq = (X * X).sum(axis=1)
        return -(sq[:, None] + sq[None, :] - 2.0 * (X @ X.T))
    raise ValueError(f"metric must be 'cosine' or 'euclidean', not {metric!r}")


def nn_credit(S: ArrayLike, senses: ArrayLike, *, ties: Ties = "split",
              tie_tol: float = TIE_TOL) -> np.ndarray:
    """Each occurrence's leave-one-out 1-nearest-neighbour credit, from a similarity matrix.

    ``credit_i = [sense(j*(i)) = sense(i)]`` with ``j*(i) = argmax_{j != i} S_ij``; the mean
    of the credits is :func:`loo_1nn_sense_accuracy`. Ties within ``tie_tol`` of the row
    maximum are resolved as that function describes (``"split"``: the share of the tied
    neighbours that share the sense). The diagonal of ``S`` is ignored. An occurrence whose
    sense has no other occurrence always earns 0.

    Parameters
    ----------
    S : (n, n) similarities (e.g. :func:`similarity_matrix`), ``n >= 2``
    senses : n sense labels (any hashables, or integer codes)

    Returns
    -------
    numpy.ndarray
        ``(n,)`` credits in [0, 1].
    """
    S = np.array(S, dtype=np.float64)
    y = _codes(senses)
    n = len(y)
    if S.shape != (n, n):
        raise ValueError("S must be (n, n) with one row per sense label")
    if n < 2:
        raise ValueError("leave-one-out needs at least two occurrences")
    if ties not in ("split", "first"):
        raise ValueError(f"ties must be 'split' or 'first', not {ties!r}")
    np.fill_diagonal(S, -np.inf)
    best = S.max(axis=1, keepdims=True)
    tied = S >= best - tie_tol
    same = y[:, None] == y[None, :]
    if ties == "split":
        return (tied & same).sum(axis=1) / tied.sum(axis=1)
    first = np.argmax(tied, axis=1)
    return (y[first] == y).astype(np.float64)


def most_frequent_sense_baseline(senses: ArrayLike, *, ties: Ties = "split") -> float:
    """Leave-one-out most-frequent-sense (MFS) accuracy.

    For each occurrence ``i`` the prediction is the sense that is most frequent among the
    *other* occurrences (counts ``c_s - [s = s_i]``); the baseline is the fraction predicted
    correctly. It is the chance level that :func:`loo_1nn_sense_accuracy` must beat under the
    same leave-one-out protocol. Ties between equally frequent senses:

    * ``ties="split"`` (default): credit ``1/k`` when the true sense is one of ``k`` tied senses
      (the expected accuracy of a uniform random choice);
    * ``ties="first"``: the tied sense that appears first in ``senses`` is predicted.

    Example: senses ``a a a b b c`` -- an ``a`` sees ``a:2, b:2, c:1`` (tie), a ``b`` sees
    ``a:3`` and ``c`` sees ``a:3``; ``split`` gives ``3 * 1/2 / 6 = 0.25``, ``first`` gives
    ``3 / 6 = 0.5``.

    Parameters
    ----------
    senses
        ``n >= 2`` sense labels.
    ties
        ``"split"`` or ``"first"``.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    return float(mfs_credit(senses, ties=ties).mean())


def mfs_credit(senses: ArrayLike, *, ties: Ties = "split") -> np.ndarray:
    """Each occurrence's leave-one-out most-frequent-sense credit (the terms of
    :func:`most_frequent_sense_baseline`, whose mean it is)."""
    y = _codes(senses)
    n = len(y)
    if n < 2:
        raise ValueError("leave-one-out needs at least two occurrences")
    if ties not in ("split", "first"):
        raise ValueError(f"ties must be 'split' or 'first', not {ties!r}")
    counts = np.bincount(y).astype(np.int64)
    k = len(counts)
    # others[i, s]: count of sense s among the occurrences other than i
    others = np.broadcast_to(counts, (n, k)).copy()
    others[np.arange(n), y] -= 1
    top = others.max(axis=1, keepdims=True)
    tied = others == top
    if ties == "split":
        return tied[np.arange(n), y] / tied.sum(axis=1)
    # codes follow first appearance, so the lowest tied code is the first to appear
    pred = np.argmax(tied, axis=1)
    return (pred == y).astype(np.float64)


def similarity_silhouette(S: ArrayLike, senses: ArrayLike, *, min_per_sense: int = 2) -> float:
    """:func:`sense_silhouette` from a cosine-similarity matrix (distance ``1 - S``).

    The same number as ``sklearn.metrics.silhouette_score(X, senses, metric="cosine")`` on
    the rows that ``S`` compares (after dropping senses with fewer than
    ``max(min_per_sense, 2)`` occurrences), without recomputing the similarities: a chapter
    that already has ``S`` for the 1-NN credits reuses it. NaN with fewer than two senses left.
    """
    S = np.asarray(S, dtype=np.float64)
    y = _codes(senses)
    if S.shape != (len(y), len(y)):
        raise ValueError("S must be (n, n) with one row per sense label")
    counts = np.bincount(y)
    keep = counts[y] >= max(min_per_sense, 2)
    if len(np.unique(y[keep])) < 2:
        return math.nan
    D = np.clip(1.0 - S[np.ix_(keep, keep)], 0.0, 2.0)
    np.fill_diagonal(D, 0.0)
    _, codes = np.unique(y[keep], return_inverse=True)
    onehot = np.eye(codes.max() + 1)[codes]
    sizes = onehot.sum(axis=0)
    mean_to = (D @ onehot) / sizes  # mean distance of each row to each sense
    own = (D @ onehot)[np.arange(len(codes)), codes] / (sizes[codes] - 1)
    mean_to[np.arange(len(codes)), codes] = np.inf
    nearest = mean_to.min(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sil = np.nan_to_num((nearest - own) / np.maximum(own, nearest))
    return float(sil.mean())


def natural_sample(senses: ArrayLike, weights: ArrayLike,
                   rng: np.random.Generator) -> np.ndarray:
    """A subsample of one word's occurrences whose senses follow the natural proportions.

    A sense-tagged sample drawn evenly over senses (as ``semcor_targets`` draws it, so that
    every sense is seen) has a lower most-frequent-sense share than the word's text, which
    deflates the MFS baseline. This keeps, of each sense ``s`` with natural weight ``w_s``
    (e.g. its count in the whole of SemCor), ``floor(m p_s)`` occurrences drawn at random,
    ``p_s = w_s / sum_t w_t``, with ``m = min_s a_s / p_s`` (``a_s`` the occurrences at
    hand): the largest sample with those proportions. A sense left with one occurrence stays
    (in a natural sample a rare sense is rare): neither the 1-NN nor the MFS rule can label it
    right.

    Parameters
    ----------
    senses : the labels of the word's occurrences
    weights : ``w_s`` of each occurrence's sense (one per occurrence, equal within a sense;
        positive)
    rng : numpy Generator

    Returns
    -------
    numpy.ndarray
        Sorted indices into ``senses``.
    """
    y = _codes(senses)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != y.shape or not (w > 0).all():
        raise ValueError("weights must be positive, one per occurrence")
    available = np.bincount(y)
    weight = np.zeros(len(available))
    weight[y] = w
    p = weight / weight.sum()
    m = float((available / p).min())
    take = np.floor(m * p + 1e-9).astype(np.int64)
    picks = [rng.choice(np.flatnonzero(y == s), size=k, replace=False)
             for s, k in enumerate(take) if k > 0]
    return np.sort(np.concatenate(picks))


def _silhouette(X: np.ndarray, y: np.ndarray, min_per_sense: int) -> tuple[float, str]:
    from sklearn.metrics import silhouette_score

    counts = pd.Series(y).value_counts()
    keep_senses = counts.index[counts >= max(min_per_sense, 2)]
    if len(keep_senses) < 2:
        return math.nan, (
            f"fewer than 2 senses with >= {max(min_per_sense, 2)} occurrences "
            f"({len(keep_senses)})"
        )
    mask = np.isin(y, keep_senses)
    return float(silhouette_score(X[mask], y[mask], metric="cosine")), ""


def sense_silhouette(X: ArrayLike, senses: ArrayLike, *, min_per_sense: int = 2) -> float:
    """Mean silhouette of the sense partition under cosine distance (Rousseeuw 1987).

    For occurrence ``i`` in sense ``A``, with ``d = 1 - cos``:
    ``a(i)`` = mean ``d(x_i, x_j)`` over the other members of ``A``; ``b(i)`` = the smallest,
    over other senses ``B``, of the mean ``d(x_i, x_j)`` over ``B``;
    ``s(i) = (b(i) - a(i)) / max(a(i), b(i))``. The result is the mean of ``s(i)``
    (``sklearn.metrics.silhouette_score(metric="cosine")``): near 1 when senses form tight,
    well-separated groups, near 0 when they overlap, negative when occurrences sit closer to
    another sense.

    Only senses with at least ``max(min_per_sense, 2)`` occurrences take part (a singleton's
    silhouette is undefined). The value is NaN when fewer than two such senses remain; the
    reason is recorded by :func:`sense_separability`.

    Parameters
    ----------
    X
        ``(n, d)`` vectors.
    senses
        ``n`` sense labels.
    min_per_sense
        Minimum occurrences for a sense to take part.

    Returns
    -------
    float
        Silhouette in [-1, 1], or NaN.
    """
    X = np.asarray(X, dtype=np.float64)
    y = _codes(senses)
    if X.ndim != 2 or X.shape[0] != len(y):
        raise ValueError("X must be (n, d) with one row per sense label")
    return _silhouette(X, y, min_per_sense)[0]


@float_arrays("vectors")
def sense_separability(
    vectors: ArrayLike,
    words_frame: pd.DataFrame,
    word_col: str = "lemma",
    sense_col: str = "sense_key",
    *,
    min_per_sense: int = 2,
    min_senses: int = 2,
    ties: Ties = "split",
) -> pd.DataFrame:
    """Sense separability of every target word in a sense-tagged word table.

    For each word (a value of ``word_col``), its occurrences with a sense label are kept, then
    senses with fewer than ``min_per_sense`` occurrences are dropped with their occurrences
    (an occurrence whose sense has no other occurrence can never be labelled right by a
    leave-one-out neighbour). A word with at least ``min_senses`` remaining senses is scored
    with :func:`loo_1nn_sense_accuracy`, :func:`most_frequent_sense_baseline` (their difference
    is ``gain``) and :func:`sense_silhouette`; other words get NaN and a ``reason``.

    Parameters
    ----------
    vectors
        ``(len(words_frame), d)`` vectors, row ``i`` belonging to row ``i`` of the frame (for
        example ``Store.layer(l)`` with ``Store.words``).
    words_frame
        Word table with ``word_col`` and ``sense_col``; rows with a missing sense are ignored.
    word_col, sense_col
        Column names of the target word (e.g. its lemma) and of its sense (e.g. a WordNet
        sense key).
    min_per_sense
        Minimum occurrences for a sense to be kept (at least 2).
    min_senses
        Minimum number of kept senses for a word to be scored (at least 2).
    ties
        Tie rule passed to the 1-NN and MFS measures.

    Returns
    -------
    pandas.DataFrame
        One row per word (order of first appearance): ``word, n_occurrences, n_senses,
        n_dropped, accuracy_1nn, mfs_baseline, gain, silhouette, reason``. ``n_occurrences``
        and ``n_senses`` count what was scored; ``n_dropped`` the sense-tagged occurrences left
        out. ``frame.attrs["summary"]`` holds :func:`separability_summary` of the result.
    """
    if min_per_sense < 2 or min_senses < 2:
        raise ValueError("min_per_sense and min_senses must be at least 2")
    V = np.asarray(vectors)
    if V.ndim != 2 or V.shape[0] != len(words_frame):
        raise ValueError("vectors must have one row per row of words_frame")
    words = words_frame[word_col].to_numpy()
    senses = words_frame[sense_col]
    tagged = senses.notna().to_numpy()
    rows: list[dict[str, Any]] = []
    positions = pd.Series(np.arange(len(words_frame))).groupby(words, sort=False)
    for word, idx in positions:
        idx = idx.to_numpy()
        idx = idx[tagged[idx]]
        s = senses.to_numpy()[idx]
        counts = pd.Series(s).value_counts()
        kept = counts.index[counts >= min_per_sense]
        use = idx[np.isin(s, kept)]
        row: dict[str, Any] = {
            "word": word,
            "n_occurrences": int(len(use)),
            "n_senses": int(len(kept)),
            "n_dropped": int(len(idx) - len(use)),
            "accuracy_1nn": math.nan,
            "mfs_baseline": math.nan,
            "gain": math.nan,
            "silhouette": math.nan,
            "reason": "",
        }
        if len(kept) < min_senses:
            row["reason"] = (
                f"{len(kept)} sense(s) with >= {min_per_sense} occurrences (< {min_senses})"
            )
        else:
            X = V[use].astype(np.float64)
            y = senses.to_numpy()[use]
            row["accuracy_1nn"] = loo_1nn_sense_accuracy(X, y, ties=ties)
            row["mfs_baseline"] = most_frequent_sense_baseline(y, ties=ties)
            row["gain"] = row["accuracy_1nn"] - row["mfs_baseline"]
            sil, reason = _silhouette(X, _codes(y), min_per_sense)
            row["silhouette"] = sil
            row["reason"] = reason
        rows.append(row)
    columns = [
        "word", "n_occurrences", "n_senses", "n_dropped", "accuracy_1nn", "mfs_baseline",
        "gain", "silhouette", "reason",
    ]
    out = pd.DataFrame(rows, columns=columns)
    out.attrs["summary"] = separability_summary(out)
    return out


def separability_summary(frame: pd.DataFrame) -> dict[str, float | int]:
    """Average the per-word rows of :func:`sense_separability`.

    Macro averages weigh every scored word alike: ``accuracy_1nn``, ``mfs_baseline``, ``gain``,
    ``silhouette`` (NaN silhouettes skipped). Micro averages weigh words by their scored
    occurrences: ``accuracy_1nn_micro``, ``mfs_baseline_micro``.

    Parameters
    ----------
    frame
        Output of :func:`sense_separability`.

    Returns
    -------
    dict
        The averages plus ``n_words`` (scored), ``n_words_total`` and ``n_occurrences``.
    """
    scored = frame[frame["accuracy_1nn"].notna()]
    w = scored["n_occurrences"].to_numpy(dtype=np.float64)

    def macro(col: str) -> float:
        vals = scored[col].dropna()
        return float(vals.mean()) if len(vals) else math.nan

    def micro(col: str) -> float:
        return float(np.average(scored[col], weights=w)) if w.sum() > 0 else math.nan

    return {
        "n_words": int(len(scored)),
        "n_words_total": int(len(frame)),
        "n_occurrences": int(w.sum()),
        "accuracy_1nn": macro("accuracy_1nn"),
        "mfs_baseline": macro("mfs_baseline"),
        "gain": macro("gain"),
        "silhouette": macro("silhouette"),
        "accuracy_1nn_micro": micro("accuracy_1nn"),
        "mfs_baseline_micro": micro("mfs_baseline"),
    }
