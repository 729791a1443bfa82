"""Word senses in contextual vector space: separability, WiC thresholds, polysemy regression.

These measures ask whether a model's contextual vectors of one word fall into groups that
match the word's senses:

* :func:`loo_1nn_sense_accuracy` -- leave-one-out 1-nearest-neighbour sense accuracy among one
  word's occurrences, against :func:`most_frequent_sense_baseline`;
* :func:`sense_silhouette` -- the silhouette of the sense partition under cosine distance;
* :func:`sense_separability` -- both, per target word of a sense-tagged word table;
* :func:`fit_wic_threshold` / :func:`evaluate_wic` -- the Word-in-Context task (Pilehvar &
  Camacho-Collados 2019) solved by thresholding the similarity of the two occurrences;
* :func:`polysemy_regression` -- OLS of self-similarity on sense count and context count.

Every function takes vectors already transformed as the caller wants (centred, top principal
components removed, standardised: see :mod:`lmgeometry.isotropy`).

References
----------
Pilehvar, M. T., Camacho-Collados, J. (2019). WiC: the Word-in-Context dataset for evaluating
context-sensitive meaning representations. NAACL.
Rousseeuw, P. J. (1987). Silhouettes: a graphical aid to the interpretation and validation of
cluster analysis. J. Comput. Appl. Math. 20, 53-65.
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Wiedemann, G., Remus, S., Chawla, A., Biemann, C. (2019). Does BERT make any sense?
Interpretable word sense disambiguation with contextualized embeddings. KONVENS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from .measures import unit_rows

Ties = Literal["split", "first"]

TIE_TOL = 1e-9
"""Cosine similarities within this of a row's maximum count as tied for nearest."""



def _codes(senses: ArrayLike) -> np.ndarray:
    """Integer codes of the labels (in order of first appearance)."""
    codes, _ = pd.factorize(pd.Series(list(np.asarray(senses, dtype=object))), sort=False)
    if (codes < 0).any():
        raise ValueError("senses contain missing values")
    return codes


# ---------------------------------------------------------------------------------------------
# Leave-one-out 1-NN and most-frequent-sense baseline
# ---------------------------------------------------------------------------------------------


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
    n = len(y)
    if X.ndim != 2 or X.shape[0] != n:
        raise ValueError("X must be (n, d) with one row per sense label")
    if n < 2:
        raise ValueError("leave-one-out needs at least two occurrences")
    if ties not in ("split", "first"):
        raise ValueError(f"ties must be 'split' or 'first', not {ties!r}")
    if metric == "cosine":
        U = unit_rows(X)[0]
        S = U @ U.T
    elif metric == "euclidean":
        sq = (X * X).sum(axis=1)
        S = -(sq[:, None] + sq[None, :] - 2.0 * (X @ X.T))
    else:
        raise ValueError(f"metric must be 'cosine' or 'euclidean', not {metric!r}")
    np.fill_diagonal(S, -np.inf)
    best = S.max(axis=1, keepdims=True)
    tied = S >= best - tie_tol
    same = y[:, None] == y[None, :]
    if ties == "split":
        credit = (tied & same).sum(axis=1) / tied.sum(axis=1)
        return float(credit.mean())
    first = np.argmax(tied, axis=1)
    return float((y[first] == y).mean())


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
        credit = tied[np.arange(n), y] / tied.sum(axis=1)
        return float(credit.mean())
    # codes follow first appearance, so the lowest tied code is the first to appear
    pred = np.argmax(tied, axis=1)
    return float((pred == y).mean())


# ---------------------------------------------------------------------------------------------
# Silhouette
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Per word
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Word-in-Context
# ---------------------------------------------------------------------------------------------


def _bool_labels(labels: ArrayLike) -> np.ndarray:
    """WiC labels as booleans (True = same meaning); accepts bools, 0/1 and 'T'/'F'."""
    a = np.asarray(labels)
    if a.dtype.kind in "USO":
        text = pd.Series(a.astype(str)).str.strip().str.upper()
        mapping = {"T": True, "TRUE": True, "1": True, "F": False, "FALSE": False, "0": False}
        bad = ~text.isin(list(mapping))
        if bad.any():
            raise ValueError(f"unrecognised labels: {sorted(set(text[bad]))[:5]}")
        return text.map(mapping).to_numpy(dtype=bool)
    if a.dtype.kind == "f" and np.isnan(a).any():
        raise ValueError("labels contain NaN")
    if not np.isin(a, [0, 1]).all():
        raise ValueError("numeric labels must be 0 or 1")
    return a.astype(bool)


def wic_accuracy(similarities: ArrayLike, labels: ArrayLike, threshold: float) -> float:
    """Accuracy of predicting "same meaning" exactly when ``similarity > threshold``.

    Parameters
    ----------
    similarities
        One similarity (e.g. cosine) of the target word's two occurrences per WiC item.
    labels
        Gold labels (True / 1 / "T" = same meaning).
    threshold
        Decision threshold.

    Returns
    -------
    float
        Fraction of items predicted right.
    """
    s = np.asarray(similarities, dtype=np.float64)
    y = _bool_labels(labels)
    if s.shape != y.shape:
        raise ValueError("similarities and labels differ in length")
    if s.size == 0:
        return math.nan
    return float(((s > threshold) == y).mean())


def fit_wic_threshold(similarities: ArrayLike, labels: ArrayLike) -> float:
    """The threshold on similarity that maximises training accuracy on WiC.

    The threshold baseline that Pilehvar & Camacho-Collados (2019) apply to contextualised
    embeddings: predict "same meaning" when the two occurrences' similarity exceeds ``t``; here
    ``t`` is fitted on the training split only (dev and test stay held out). Candidate
    thresholds are the midpoints between consecutive sorted unique similarities, plus one value
    below the minimum (``min - 1``: everything positive) and one above the maximum (``max + 1``:
    everything negative); training accuracy is computed for all of them at once with cumulative
    counts. Ties between candidates of equal accuracy go to the smallest threshold.

    Parameters
    ----------
    similarities
        Training similarities.
    labels
        Training labels (True / 1 / "T" = same meaning).

    Returns
    -------
    float
        The chosen threshold.
    """
    s = np.asarray(similarities, dtype=np.float64)
    y = _bool_labels(labels)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError("similarities and labels must be 1-D of the same length")
    if s.size == 0:
        raise ValueError("no training items")
    if not np.isfinite(s).all():
        raise ValueError("similarities must be finite")
    u, inv = np.unique(s, return_inverse=True)
    pos = np.bincount(inv, weights=y.astype(np.float64), minlength=len(u))
    neg = np.bincount(inv, weights=(~y).astype(np.float64), minlength=len(u))
    # Candidate k (0..K) predicts positive for unique values with index >= k.
    pos_at_or_above = np.concatenate([np.cumsum(pos[::-1])[::-1], [0.0]])
    neg_below = np.concatenate([[0.0], np.cumsum(neg)])
    correct = pos_at_or_above + neg_below
    candidates = np.concatenate([[u[0] - 1.0], (u[:-1] + u[1:]) / 2.0, [u[-1] + 1.0]])
    return float(candidates[int(np.argmax(correct))])


def evaluate_wic(
    sim_train: ArrayLike,
    y_train: ArrayLike,
    sim_dev: ArrayLike,
    y_dev: ArrayLike,
    sim_test: ArrayLike | None = None,
    y_test: ArrayLike | None = None,
) -> dict[str, float | int]:
    """Fit the WiC threshold on the training split and score every split.

    Parameters
    ----------
    sim_train, y_train
        Training similarities and labels (the threshold is fitted here:
        :func:`fit_wic_threshold`).
    sim_dev, y_dev
        Development split.
    sim_test, y_test
        Test split (optional; WiC's test labels were released later).

    Returns
    -------
    dict
        ``threshold``, ``train_accuracy``, ``dev_accuracy``, ``test_accuracy`` (NaN without a
        test split), ``n_train``, ``n_dev``, ``n_test`` and ``majority_dev`` /
        ``majority_test``: the accuracy of always predicting the training split's majority
        label (WiC is balanced, so about 0.5).
    """
    t = fit_wic_threshold(sim_train, y_train)
    ytr = _bool_labels(y_train)
    majority = bool(ytr.mean() >= 0.5)
    out: dict[str, float | int] = {
        "threshold": t,
        "train_accuracy": wic_accuracy(sim_train, ytr, t),
        "dev_accuracy": wic_accuracy(sim_dev, y_dev, t),
        "test_accuracy": math.nan,
        "n_train": int(len(ytr)),
        "n_dev": int(len(np.asarray(sim_dev))),
        "n_test": 0,
        "majority_dev": float((_bool_labels(y_dev) == majority).mean()),
        "majority_test": math.nan,
    }
    if sim_test is not None and y_test is not None:
        out["test_accuracy"] = wic_accuracy(sim_test, y_test, t)
        out["n_test"] = int(len(np.asarray(sim_test)))
        out["majority_test"] = float((_bool_labels(y_test) == majority).mean())
    return out


# ---------------------------------------------------------------------------------------------
# Self-similarity vs polysemy
# ---------------------------------------------------------------------------------------------


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
    coefficients: dict[str, dict[str, float]] = {}
    for k, name in enumerate(predictors, start=1):
        b, s = float(beta[k]), float(se[k])
        if s > 0:
            tval = b / s
            pval = float(2.0 * stats.t.sf(abs(tval), dof))
        else:
            tval = pval = math.nan
        coefficients[name] = {
            "coef": b,
            "se": s,
            "ci_low": b - tcrit * s,
            "ci_high": b + tcrit * s,
            "t": tval,
            "p": pval,
        }
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


# ---------------------------------------------------------------------------------------------
# Per-layer tables for the "Senses" chapter
# ---------------------------------------------------------------------------------------------

TRANSFORMS: tuple[str, ...] = ("raw", "top PCs removed", "standardised")


def transform(X: ArrayLike, how: str = "raw") -> np.ndarray:
    """One layer's vectors as the sense measures see them.

    ``"raw"``; ``"top PCs removed"``: centred, then the top ``ceil(d / 100)`` principal
    directions projected out (Mu & Viswanath 2018, as :func:`lmgeometry.isotropy.remove_top_pcs`);
    ``"standardised"``: every dimension centred and divided by its standard deviation (so no
    rogue dimension dominates a cosine; Timkey & van Schijndel 2021).
    """
    X = np.asarray(X, dtype=np.float64)
    if how == "raw":
        return X
    if how == "top PCs removed":
        from .isotropy import remove_top_pcs

        return np.asarray(remove_top_pcs(X), dtype=np.float64)
    if how == "standardised":
        sd = X.std(axis=0)
        return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    raise ValueError(f"how must be one of {TRANSFORMS}, not {how!r}")


def wic_corpus(n_train: int = 400, n_test: int = 400, seed: int = 0) -> tuple[Any, pd.DataFrame]:
    """WiC pairs of all three splits in one corpus (one extraction per model).

    A seeded sample of ``n_train`` training and ``n_test`` test pairs (None: all) and the
    whole dev split (638 pairs), keeping only pairs whose two targets map onto a spaCy word.
    Sentences are re-parsed as one corpus; each target keeps its word index, so ``row1`` and
    ``row2`` are re-pointed at the new word table.

    Returns
    -------
    corpus : Corpus
    pairs : DataFrame
        ``split``, ``word``, ``pos``, ``label``, ``row1``, ``row2`` (rows of ``corpus.words``).
    """
    from . import corpus as corpus_mod

    texts: list[str] = []
    frames = []
    for split, n in (("train", n_train), ("dev", None), ("test", n_test)):
        c, pairs = corpus_mod.wic_pairs(split)
        pairs = pairs[pairs["mapped"]].reset_index(drop=True)
        if n is not None and n < len(pairs):
            pairs = pairs.sample(n=n, random_state=seed).sort_index().reset_index(drop=True)
        wi = c.words["word_index"].to_numpy()
        for k in (1, 2):
            pairs[f"word_index{k}"] = wi[pairs[f"row{k}"].to_numpy(dtype=np.int64)]
            pairs[f"sentence{k}"] = len(texts) + 2 * np.arange(len(pairs)) + (k - 1)
        for s1, s2 in zip(pairs["sentence_id1"], pairs["sentence_id2"], strict=True):
            texts += [c.sentences[int(s1)], c.sentences[int(s2)]]
        frames.append(pairs.assign(split=split))
    corpus = corpus_mod.sentences(texts, name=f"wic-train{n_train}-test{n_test}-seed{seed}")
    words = corpus.words
    row_of = pd.Series(np.arange(len(words)),
                       index=pd.MultiIndex.from_arrays([words["sentence_id"].to_numpy(),
                                                        words["word_index"].to_numpy()]))
    pairs = pd.concat(frames, ignore_index=True)
    for k in (1, 2):
        keys = pd.MultiIndex.from_arrays([pairs[f"sentence{k}"].to_numpy(),
                                          pairs[f"word_index{k}"].to_numpy()])
        pairs[f"row{k}"] = row_of.reindex(keys).to_numpy()
    if pairs[["row1", "row2"]].isna().any().any():
        raise RuntimeError("a WiC target did not keep its word index when re-parsed")
    pairs[["row1", "row2"]] = pairs[["row1", "row2"]].astype(np.int64)
    return corpus, pairs[["split", "word", "pos", "label", "row1", "row2"]]


def _pair_cosines(X: np.ndarray, pairs: pd.DataFrame) -> np.ndarray:
    a, b = X[pairs["row1"].to_numpy()], X[pairs["row2"].to_numpy()]
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / np.where(na * nb > 0, na * nb, 1.0)


def wic_by_layer(store: Any, pairs: pd.DataFrame,
                 transforms: Sequence[str] = TRANSFORMS) -> pd.DataFrame:
    """WiC accuracy per layer and transform: cosine of the two targets, threshold from train.

    Transforms are fitted on all the store's rows of the layer (train, dev and test
    sentences), which uses no labels.
    """
    rows = []
    split = pairs["split"].to_numpy()
    y = pairs["label"].to_numpy(dtype=bool)
    for layer in range(store.n_layers):
        raw = np.asarray(store.layer(layer), dtype=np.float64)
        for how in transforms:
            sim = _pair_cosines(transform(raw, how), pairs)
            r = evaluate_wic(sim[split == "train"], y[split == "train"],
                             sim[split == "dev"], y[split == "dev"],
                             sim[split == "test"], y[split == "test"])
            rows.append({"layer": layer, "transform": how, **r})
    return pd.DataFrame(rows)


def separability_by_layer(store: Any, transforms: Sequence[str] = TRANSFORMS,
                          word_col: str = "target") -> pd.DataFrame:
    """:func:`separability_summary` of the sense-tagged targets per layer and transform.

    Each :func:`transform` is fitted on all the store's rows of the layer (every word of the
    sentences, no labels); the targets' transformed vectors are then scored with
    :func:`sense_separability`.

    Returns
    -------
    pandas.DataFrame
        ``layer, transform`` and the :func:`separability_summary` columns.
    """
    words = store.words
    tagged = words["sense_key"].notna().to_numpy() & words[word_col].notna().to_numpy()
    rows = []
    for layer in range(store.n_layers):
        raw = np.asarray(store.layer(layer), dtype=np.float64)
        for how in transforms:
            X = transform(raw, how)[tagged]
            frame = sense_separability(X, words[tagged].reset_index(drop=True), word_col)
            rows.append({"layer": layer, "transform": how, **separability_summary(frame)})
    return pd.DataFrame(rows)


def polysemy_tables(store: Any, min_contexts: int = 5, seed: int = 0) -> pd.DataFrame:
    """Per layer (1..L) and word: SelfSim (``corrected`` preset of :mod:`lmgeometry.measures`),
    WordNet sense count and number of distinct contexts (sentences).

    A word's sense count is the most frequent ``n_senses`` of its occurrences (spaCy's lemma
    and POS decide it); words without one, or with none in WordNet, are left out.

    Returns
    -------
    pandas.DataFrame
        ``layer, word, selfsim, n_senses, n_sentences, log_senses, log_contexts``.
    """
    from .measures import word_table

    words = store.words
    key = words["text"].str.lower()
    senses_of = (words.assign(word=key).dropna(subset=["n_senses"])
                 .groupby("word")["n_senses"].agg(lambda s: s.mode().iloc[0]))
    tables = []
    for layer in range(1, store.n_layers):
        table = word_table(np.asarray(store.layer(layer), dtype=np.float32), words, "corrected",
                           seed, min_contexts=min_contexts, measures=("selfsim",))
        table["n_senses"] = table["word"].map(senses_of).astype(float)
        table = table[table["n_senses"] >= 1]  # no WordNet entry: no sense count
        tables.append(table.assign(layer=layer, log_senses=np.log(table["n_senses"]),
                                   log_contexts=np.log(table["n_sentences"])))
    cols = ["layer", "word", "selfsim", "n_senses", "n_sentences", "log_senses", "log_contexts"]
    return pd.concat(tables, ignore_index=True)[cols]


def polysemy_by_layer(tables: pd.DataFrame) -> pd.DataFrame:
    """Per layer: :func:`polysemy_regression` of SelfSim on log sense count and log number of
    contexts, over the words of :func:`polysemy_tables`.

    Returns
    -------
    pandas.DataFrame
        ``layer, n_words, r2`` and ``coef_/se_/ci_low_/ci_high_/t_/p_`` for ``log_senses`` and
        ``log_contexts``.
    """
    rows = []
    for layer, table in tables.groupby("layer", sort=True):
        r = polysemy_regression(table, "selfsim", ("log_senses", "log_contexts"))
        rows.append({"layer": int(layer), "n_words": r["n"], "r2": r["r2"],
                     **{f"{k}_{name}": v for name, d in r["coefficients"].items()
                        for k, v in d.items()}})
    return pd.DataFrame(rows)


def selfsim_by_bins(tables: pd.DataFrame, column: str, edges: Sequence[float]) -> pd.DataFrame:
    """Mean SelfSim per layer of the words whose ``column`` falls in each bin.

    Bins are ``[edges[k], edges[k+1])``; the last edge may be ``inf``. Labels read
    ``"lo-hi"`` on integers (``"lo"`` for a one-value bin, ``"lo+"`` for an open one).

    Returns
    -------
    pandas.DataFrame
        ``layer, bin, mean_selfsim, n_words`` (empty bins left out).
    """
    edges = list(edges)
    labels = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if math.isinf(hi):
            labels.append(f"{lo:g}+")
        elif hi - lo == 1:
            labels.append(f"{lo:g}")
        else:
            labels.append(f"{lo:g}-{hi - 1:g}")
    binned = tables.assign(bin=pd.cut(tables[column], edges, right=False, labels=labels))
    out = (binned.dropna(subset=["bin"]).groupby(["layer", "bin"], observed=True)["selfsim"]
           .agg(mean_selfsim="mean", n_words="size").reset_index())
    out["bin"] = out["bin"].astype(str)
    return out


def wilson_interval(p: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` observed on ``n`` trials (Wilson 1927).

    ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``z`` the normal
    quantile at ``(1 + level) / 2``. NaN bounds when ``n == 0``.
    """
    if n <= 0 or not np.isfinite(p):
        return math.nan, math.nan
    z = float(stats.norm.ppf((1.0 + level) / 2.0))
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def _points(x: float) -> str:
    return f"{'+' if x >= 0 else ''}{x * 100:.1f} points"


def findings(separability: pd.DataFrame, wic: pd.DataFrame, model: str,
             views: pd.DataFrame | None = None) -> list[str]:
    """Sentences on one model's sense measures, all computed from the per-layer tables.

    Parameters
    ----------
    separability
        :func:`separability_by_layer` rows of one model (``layer, transform, accuracy_1nn,
        mfs_baseline, gain, silhouette, n_words``).
    wic
        :func:`wic_by_layer` rows of one model; the best layer is chosen on dev and its test
        accuracy is reported with a Wilson 95% interval (or said to be missing).
    model
        Name used in the text.
    views
        Optional :func:`view_separability` rows of one model (``method`` "pca" / "umap").
    """
    s = separability[separability["transform"] == "raw"].sort_values("layer")
    last = int(s["layer"].max())
    best = s.loc[s["gain"].idxmax()]
    n_beat = int((s["gain"] > 0).sum())
    if best["gain"] > 0:
        verdict = (f"beats the most-frequent-sense baseline in {n_beat} of {len(s)} layers; it is "
                   f"best at layer {int(best['layer'])} of {last} "
                   f"({best['layer'] / max(last, 1):.0%} of the depth)")
    else:
        verdict = (f"never beats the most-frequent-sense baseline (in any of {len(s)} layers); "
                   f"it comes closest at layer {int(best['layer'])} of {last}")
    out = [
        f"**{model}**: leave-one-out 1-NN sense accuracy (is a word's nearest other occurrence "
        f"of the same SemCor sense?) {verdict}, with {best['accuracy_1nn']:.1%} against "
        f"{best['mfs_baseline']:.1%} ({_points(best['gain'])}, {int(best['n_words'])} target "
        f"words); at layer 0 the gain is {_points(s['gain'].iloc[0])}."
    ]
    if "n_occurrences" in s and int(best["n_occurrences"]) > 0:
        from .geometry import layer_ranges

        lo, hi = wilson_interval(float(best["accuracy_1nn"]), int(best["n_occurrences"]))
        near = s.loc[s["accuracy_1nn"] >= lo, "layer"].astype(int).tolist()
        interval = (f"the 95% Wilson interval of the best accuracy ({lo:.1%} to {hi:.1%} over "
                    f"{int(best['n_occurrences'])} occurrences; a rough guide, as the accuracy "
                    "is a mean over words)")
        out.append(
            f"Layers {layer_ranges(near)} all reach {interval}, so the best layer is one of a "
            "plateau rather than a sharp peak." if len(near) > 1 else
            f"No other layer reaches {interval}."
        )
    if "silhouette" in s and s["silhouette"].notna().any():
        sb = s.loc[s["silhouette"].idxmax()]
        out.append(
            f"The senses do not form separate clouds: their silhouette peaks at "
            f"{sb['silhouette']:.2f} (layer {int(sb['layer'])}; 1 would be tight, separated "
            f"groups, 0 overlapping ones)." if sb["silhouette"] < 0.25 else
            f"The silhouette of the senses peaks at {sb['silhouette']:.2f} (layer "
            f"{int(sb['layer'])})."
        )
    w = wic[wic["transform"] == "raw"].sort_values("layer")
    if len(w):
        wb = w.loc[w["dev_accuracy"].idxmax()]
        text = (f"On WiC, a cosine threshold fitted on the training pairs is best on dev at "
                f"layer {int(wb['layer'])} ({wb['dev_accuracy']:.1%}; layer 0: "
                f"{w['dev_accuracy'].iloc[0]:.1%}; chance 50%)")
        if pd.notna(wb.get("test_accuracy", math.nan)) and int(wb.get("n_test", 0)) > 0:
            lo, hi = wilson_interval(float(wb["test_accuracy"]), int(wb["n_test"]))
            text += (f"; at that layer the test accuracy is {wb['test_accuracy']:.1%} "
                     f"(95% interval {lo:.1%} to {hi:.1%} over {int(wb['n_test'])} pairs: "
                     + ("above chance)." if lo > 0.5 else "not distinguishable from chance)."))
        else:
            text += "; no test labels were available, so only dev is reported."
        out.append(text)
    for how in TRANSFORMS[1:]:
        t = separability[separability["transform"] == how]
        tw = wic[wic["transform"] == how]
        if not len(t):
            continue
        text = (f"With {how}, the best 1-NN gain is {_points(t['gain'].max())} (layer "
                f"{int(t.loc[t['gain'].idxmax(), 'layer'])}; raw: {_points(best['gain'])})")
        if len(tw) and len(w):
            text += (f" and the best WiC dev accuracy {tw['dev_accuracy'].max():.1%} (raw: "
                     f"{w['dev_accuracy'].max():.1%})")
        out.append(text + ".")
    if views is not None and len(views):
        parts = []
        for method in ("pca", "umap"):
            v = views[views["method"] == method]
            if len(v):
                vb = v.loc[v["accuracy_1nn"].idxmax()]
                full_gain = vb["accuracy_full"] - vb["mfs_baseline"]
                kept = ((vb["accuracy_1nn"] - vb["mfs_baseline"]) / full_gain
                        if full_gain > 0 else math.nan)
                parts.append(
                    f"in 2-D {method.upper()} views ({int(vb['n_words'])} words) at most "
                    f"{vb['accuracy_1nn']:.1%} (layer {int(vb['layer'])}; the same occurrences "
                    f"in the full space: {vb['accuracy_full']:.1%}, MFS "
                    f"{vb['mfs_baseline']:.1%}"
                    + (f"; the view keeps {kept:.0%} of the full space's gain over MFS)"
                       if np.isfinite(kept) else ")")
                )
        out.append("The seed's pictures, measured: 1-NN sense accuracy is " + "; ".join(parts)
                   + ".")
    return out


def sense_labels(keys: Sequence[str], width: int = 40) -> dict[str, str]:
    """Readable labels for WordNet 3.0 sense keys: ``synset name: gloss`` (gloss cut to width).

    Keys WordNet does not know keep the key itself as label.
    """
    from .data import wordnet

    wn = wordnet()
    out = {}
    for key in keys:
        try:
            synset = wn.lemma_from_key(key).synset()
            gloss = synset.definition()
            out[key] = f"{synset.name()}: {gloss[:width]}{'...' if len(gloss) > width else ''}"
        except Exception:  # nltk raises WordNetError (or ValueError) for an unknown key
            out[key] = key
    return out


def polysemy_findings(polysemy: pd.DataFrame, model: str) -> list[str]:
    """One sentence on :func:`polysemy_by_layer`: in how many layers each predictor matters."""
    n = len(polysemy)
    sig = {name: int(((polysemy[f"ci_high_{col}"] < 0) | (polysemy[f"ci_low_{col}"] > 0)).sum())
           for name, col in (("senses", "log_senses"), ("contexts", "log_contexts"))}
    neg_ctx = int((polysemy["ci_high_log_contexts"] < 0).sum())
    neg_sen = int((polysemy["ci_high_log_senses"] < 0).sum())
    ctx_larger = int((polysemy["coef_log_contexts"].abs()
                      > polysemy["coef_log_senses"].abs()).sum())
    return [
        f"Regressing self-similarity on both counts ({int(polysemy['n_words'].iloc[0])} words), "
        f"the number of contexts has a coefficient whose 95% interval excludes zero in "
        f"{sig['contexts']} of {n} layers ({neg_ctx} of them negative: more contexts, less "
        f"self-similar), the number of senses in {sig['senses']} of {n} ({neg_sen} negative); "
        f"the contexts' coefficient is the larger in size in {ctx_larger} of {n} layers; "
        f"the median R^2 is {polysemy['r2'].median():.2f}."
    ]


def summary(separability: pd.DataFrame, wic: pd.DataFrame) -> pd.DataFrame:
    """Coarse, machine-stable per-model summary (the chapter's nbval-checked output)."""
    rows = {}
    for model, s in separability[separability["transform"] == "raw"].groupby("model", sort=False):
        w = wic[(wic["model"] == model) & (wic["transform"] == "raw")]
        rows[model] = {
            "target words": int(s["n_words"].max()),
            "1-NN beats MFS by > 5 points somewhere": bool((s["gain"] > 0.05).any()),
            "WiC dev > 55% somewhere": bool((w["dev_accuracy"] > 0.55).any()),
        }
    return pd.DataFrame(rows).T


def context_snippet(sentence: str, start: int, end: int, width: int = 40) -> str:
    """The word at ``sentence[start:end]`` in brackets with up to ``width`` characters each side.

    Example: ``context_snippet("I ran home", 2, 5, 3)`` is ``"I [ran] ho..."``.
    """
    left = sentence[max(0, start - width):start]
    right = sentence[end:end + width]
    return (("..." if start > width else "") + left + "[" + sentence[start:end] + "]" + right
            + ("..." if end + width < len(sentence) else ""))


RARE_SENSES = "(senses seen fewer than {k} times)"


def occurrence_views(store: Any, target: str, layers: Sequence[int], method: str = "pca",
                     seed: int = 0, word_col: str = "target",
                     sentences: Sequence[str] | None = None,
                     min_sense_count: int = 3) -> dict[str, Any]:
    """2-D projections of one target's sense-tagged occurrences in chosen layers (seed 000).

    Each layer is projected on its own, fitted on the target's occurrences only: PCA (first
    two components) or UMAP (:mod:`lmgeometry.geometry`; with at most ``n - 1`` neighbours).

    Parameters
    ----------
    sentences
        The corpus sentences (indexed by ``sentence_id``); when given the hover text is
        :func:`context_snippet` of each occurrence, otherwise the word form.
    min_sense_count
        Senses with fewer occurrences share one display label (:data:`RARE_SENSES`), so the
        legend stays readable; ``keys`` keeps every sense.

    Returns
    -------
    dict
        ``panels`` (list of (n, 2) arrays), ``senses`` (display labels, :func:`sense_labels`),
        ``keys`` (the sense keys), ``hover``, ``layers`` and ``rows`` (the occurrences' rows of
        ``store.words``).
    """
    import warnings

    from . import geometry

    words = store.words
    rows = np.flatnonzero((words[word_col] == target).to_numpy()
                          & words["sense_key"].notna().to_numpy())
    if len(rows) < 3:
        raise ValueError(f"{target!r} has {len(rows)} sense-tagged occurrences; need 3")
    keys = words["sense_key"].to_numpy()[rows]
    names = sense_labels(sorted(set(keys)))
    panels = []
    for i in layers:
        X = np.asarray(store.layer(i)[rows], dtype=np.float32)
        if method == "pca":
            panels.append(geometry.pca_project(X, n_components=2, seed=seed)[0])
        elif method == "umap":
            with warnings.catch_warnings():  # "n_jobs overridden by random_state"
                warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
                panels.append(geometry.umap_project(X, n_components=2, seed=seed,
                                                    n_neighbors=min(15, len(rows) - 1)))
        else:
            raise ValueError(f"method must be 'pca' or 'umap', not {method!r}")
    if sentences is None:
        hover = words["text"].to_numpy()[rows]
    else:
        w = words.iloc[rows]
        hover = np.array([context_snippet(sentences[int(sid)], int(a), int(b))
                          for sid, a, b in zip(w["sentence_id"], w["start"], w["end"],
                                               strict=True)])
    counts = pd.Series(keys).value_counts()
    rare = RARE_SENSES.format(k=min_sense_count)
    labels = np.array([names[k] if counts[k] >= min_sense_count else rare for k in keys])
    return {"panels": panels, "senses": labels, "keys": keys, "hover": hover,
            "layers": list(layers), "rows": rows}


def word_views(store: Any, targets: Sequence[str], layers: Sequence[int], method: str = "pca",
               seed: int = 0, word_col: str = "target", sentences: Sequence[str] | None = None,
               min_sense_count: int = 3) -> dict[str, Any]:
    """:func:`occurrence_views` of several targets, shaped for
    :func:`lmgeometry.plots.choice_layer_slider`: ``coords``, ``color`` and ``hover`` (and
    ``keys`` and ``rows``), each a dict keyed by target, and ``background``: the display label
    of the rare senses."""
    views = {t: occurrence_views(store, t, layers, method, seed, word_col, sentences,
                                 min_sense_count)
             for t in targets}
    return {"coords": {t: v["panels"] for t, v in views.items()},
            "color": {t: v["senses"] for t, v in views.items()},
            "hover": {t: v["hover"] for t, v in views.items()},
            "keys": {t: v["keys"] for t, v in views.items()},
            "rows": {t: v["rows"] for t, v in views.items()},
            "background": RARE_SENSES.format(k=min_sense_count)}


def view_separability(views: dict[str, dict[str, Any]], layers: Sequence[int],
                      method: str, store: Any = None) -> pd.DataFrame:
    """Leave-one-out 1-NN sense accuracy *inside the 2-D views* of :func:`word_views`.

    This puts a number on what seed 000 judged by eye: whether the senses of a word are
    visible in a 2-D PCA or UMAP picture. Neighbours are Euclidean in the projection
    (:func:`loo_1nn_sense_accuracy` with ``metric="euclidean"``), with singleton senses dropped
    as in :func:`sense_separability` (senses are ``views["keys"]``, not the display labels);
    the result averages over the words. Given the ``store``
    the views came from, ``accuracy_full`` is the cosine 1-NN accuracy of the same occurrences
    in the layer's full space, for comparison.

    Returns
    -------
    pandas.DataFrame
        ``layer, method, n_words, accuracy_1nn, accuracy_full, mfs_baseline`` (macro averages
        over words).
    """
    rows = []
    for li, layer in enumerate(layers):
        acc, full, mfs = [], [], []
        for word, panels in views["coords"].items():
            y = np.asarray(views["keys"][word])
            counts = pd.Series(y).value_counts()
            keep = np.isin(y, counts.index[counts >= 2])
            if len(set(y[keep])) < 2:
                continue
            acc.append(loo_1nn_sense_accuracy(np.asarray(panels[li])[keep], y[keep],
                                              metric="euclidean"))
            mfs.append(most_frequent_sense_baseline(y[keep]))
            if store is not None:
                X = np.asarray(store.layer(layer)[views["rows"][word][keep]], dtype=np.float64)
                full.append(loo_1nn_sense_accuracy(X, y[keep]))
        rows.append({"layer": int(layer), "method": method, "n_words": len(acc),
                     "accuracy_1nn": float(np.mean(acc)) if acc else math.nan,
                     "accuracy_full": float(np.mean(full)) if full else math.nan,
                     "mfs_baseline": float(np.mean(mfs)) if mfs else math.nan})
    return pd.DataFrame(rows)


def spread_layers(n_layers: int, k: int) -> list[int]:
    """At most ``k`` layer indices of ``0..n_layers-1`` spread evenly, always with the first
    and the last (``round(linspace(0, n_layers - 1, k))``, duplicates dropped)."""
    if n_layers < 1 or k < 1:
        raise ValueError("n_layers and k must be positive")
    if k >= n_layers:
        return list(range(n_layers))
    if k == 1:
        return [n_layers - 1]
    return sorted({int(round(x)) for x in np.linspace(0, n_layers - 1, k)})
