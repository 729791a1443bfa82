"""The Word-in-Context task solved by a similarity threshold.

:func:`fit_wic_threshold` / :func:`evaluate_wic` -- the Word-in-Context task (Pilehvar &
Camacho-Collados 2019) solved by thresholding the similarity of a target word's two
occurrences; :func:`wic_accuracy` -- the accuracy of one threshold.

References
----------
Pilehvar, M. T., Camacho-Collados, J. (2019). WiC: the Word-in-Context dataset for evaluating
context-sensitive meaning representations. NAACL.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lmgeometry.measures.arrays import float_arrays

__all__ = [
    "evaluate_wic",
    "fit_wic_threshold",
    "wic_accuracy",
]


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


@float_arrays("sim_train", "y_train", "sim_dev", "y_dev", "sim_test", "y_test")
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
