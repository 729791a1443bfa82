"""Classifiers on word or sentence vectors: linear probes, 1-D thresholds, ablations.

* :func:`linear_probe` -- a multinomial logistic regression trained on some sentences' words
  and scored on held-out sentences (Alain & Bengio 2017; Hewitt & Liang 2019 on why the split
  and a baseline matter); :func:`sentence_split` keeps every sentence on one side;
  :func:`control_task_labels` gives Hewitt & Liang's control task, whose accuracy a probe
  reaches by memorising word types;
* :class:`ThresholdClassifier` -- the best single threshold on one coordinate (seed 003's
  classifier on the principal rogue dimension);
* :func:`fit_logistic` -- the logistic-regression head all of them share;
* :func:`ablate`, :func:`ablation_curve` -- a head on raw vectors and its accuracy when the top-
  or bottom-variance dimensions are zeroed or mean-replaced (seed 003, Fig. 6).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupShuffleSplit
from sklearn.preprocessing import StandardScaler

from lmgeometry.measures.arrays import float_arrays

__all__ = [
    "ablate",
    "ablation_curve",
    "ABLATION_MODES",
    "control_task_labels",
    "fit_logistic",
    "linear_probe",
    "LogisticHead",
    "ProbeResult",
    "sentence_split",
    "ThresholdClassifier",
]


@dataclass(frozen=True)
class ProbeResult:
    """Held-out accuracy of a linear probe and of the majority-class baseline.

    ``test`` holds the test rows, ``correct`` whether the probe got each of them right and
    ``majority`` the baseline's label (the most frequent training label), so that intervals
    over the test rows (or their sentences) can be computed; ``converged`` is the head's.
    """

    accuracy: float
    majority_baseline: float
    n_train: int
    n_test: int
    n_classes: int
    test: np.ndarray | None = None
    correct: np.ndarray | None = None
    majority: object = None
    converged: bool = True


def sentence_split(
    groups: np.ndarray, test_size: float = 0.25, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Train and test row indices such that each group (sentence) lies on one side only."""
    groups = np.asarray(groups)
    if len(np.unique(groups)) < 2:
        raise ValueError("a sentence split needs words from at least two sentences")
    splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
    train, test = next(splitter.split(np.zeros(len(groups)), groups=groups))
    return train, test


@float_arrays("X", "labels", "groups")
def linear_probe(
    X: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    test_size: float = 0.25,
    seed: int = 0,
    C: float = 0.1,
    max_iter: int = 100,
    tol: float = 1e-3,
    *,
    split: tuple[np.ndarray, np.ndarray] | None = None,
) -> ProbeResult:
    """Held-out accuracy of a multinomial logistic-regression probe, split by ``groups``.

    The probe minimises the L2-regularised cross-entropy
    ``sum_i -log softmax(W x_i + b)[y_i] + ||W||^2 / (2 C)`` with L-BFGS, stopped after
    ``max_iter`` iterations or at gradient tolerance ``tol`` (:func:`fit_logistic`; a fixed
    iteration budget keeps the run time bounded and deterministic; on standardised hidden states
    it changes the accuracy by well under a point). Features are standardised on the training
    rows (so layers with huge norms, as decoders have, are comparable). The baseline predicts
    the most frequent training label for every test row. Labels absent from the training side
    still count as errors on the test side. ``split`` gives the train and test rows instead of
    :func:`sentence_split` (e.g. one split shared by every layer and model).
    """
    X = np.asarray(X, dtype=np.float32)
    labels = np.asarray(labels)
    train, test = split if split is not None else sentence_split(groups, test_size, seed)
    head = fit_logistic(X[train], labels[train], C=C, max_iter=max_iter, tol=tol, seed=seed)
    correct = head.predict(X[test]) == labels[test]
    values, counts = np.unique(labels[train], return_counts=True)
    majority = values[np.argmax(counts)]
    return ProbeResult(
        accuracy=float(correct.mean()),
        majority_baseline=float((labels[test] == majority).mean()),
        n_train=len(train),
        n_test=len(test),
        n_classes=len(np.unique(labels)),
        test=np.asarray(test),
        correct=correct,
        majority=majority,
        converged=head.converged,
    )


def control_task_labels(
    words: Sequence[str] | np.ndarray,
    tags: Sequence[object] | np.ndarray,
    *,
    fit_rows: np.ndarray | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Hewitt & Liang's control task: one random tag per word type, the same at every occurrence.

    .. math:: \\tilde y_i = c(w_i), \\qquad c(v) \\sim \\hat p(y) = \\frac{1}{|F|}
              \\sum_{j \\in F} [y_j = y] \\ \\text{independently for each type } v

    (Hewitt & Liang 2019, "Designing and Interpreting Probes with Control Tasks", EMNLP,
    section 2): each word type ``v`` gets a tag drawn once from the empirical tag distribution
    ``p`` of the rows ``F`` (the training words), and every occurrence of ``v`` carries it. The
    control tags depend on the word's identity only, so a probe that scores well on them has
    memorised word types; *selectivity*, the task's accuracy minus the control's (same probe,
    features and split), is what the representation adds beyond that capacity.

    Parameters
    ----------
    words : sequence of str
        The word type of each row (normalise first, e.g. lower-case, if case should not count).
    tags : sequence
        The real tag of each row; only the rows ``fit_rows`` enter the distribution.
    fit_rows : array of int, optional
        Rows whose tags give ``p`` (default: all rows).
    seed : int
        Seeds the draw. Types are drawn in sorted order, so the labels depend on the set of
        types and ``p``, not on the order of the rows.

    Returns
    -------
    numpy.ndarray
        The control tag of each row (values among the tags of ``fit_rows``).
    """
    words = np.asarray(words, dtype=object)
    tags = np.asarray(tags, dtype=object)
    if words.ndim != 1 or words.shape != tags.shape:
        raise ValueError(f"words and tags must be 1-D of one length, not {words.shape} and "
                         f"{tags.shape}: pass one word and one tag per row")
    fit = tags if fit_rows is None else tags[np.asarray(fit_rows, dtype=int)]
    if len(fit) == 0:
        raise ValueError("no rows to take the tag distribution from: pass non-empty fit_rows "
                         "(the training words)")
    values, counts = np.unique(fit, return_counts=True)
    types, inverse = np.unique(words.astype(str), return_inverse=True)
    drawn = np.random.default_rng(seed).choice(len(values), size=len(types), p=counts / len(fit))
    return values[drawn][inverse]


@dataclass
class ThresholdClassifier:
    """A binary classifier that thresholds one number: ``predict = sign * (x - t) > 0``.

    :meth:`fit` tries every cut between consecutive distinct training values, in both
    directions, and keeps the one with the highest training accuracy (ties: the first). This
    is the best 1-D linear separator under 0-1 loss, what seed 003's "1-D SVM" on the
    principal rogue dimension approximates with a hinge loss.
    """

    threshold: float = 0.0
    sign: int = 1
    train_accuracy: float = float("nan")

    def fit(self, x: np.ndarray, y: np.ndarray) -> ThresholdClassifier:
        """Fit on values ``x`` (n,) and binary labels ``y`` (n,) in {0, 1}."""
        x = np.asarray(x, dtype=np.float64).ravel()
        y = np.asarray(y).astype(int).ravel()
        if len(x) != len(y) or len(x) < 2:
            raise ValueError("x and y must have the same length, at least 2")
        if not set(np.unique(y)) <= {0, 1}:
            raise ValueError("labels must be 0 or 1")
        order = np.argsort(x, kind="stable")
        xs, ys = x[order], y[order]
        n = len(xs)
        # Positives at or below each cut: predicting 1 above the cut (sign=+1) gets right the
        # negatives below and the positives above.
        pos_below = np.concatenate([[0], np.cumsum(ys)])
        neg_below = np.arange(n + 1) - pos_below
        correct_up = neg_below + (ys.sum() - pos_below)
        correct_down = n - correct_up
        cuts = np.concatenate([[0], np.flatnonzero(np.diff(xs) > 0) + 1, [n]])
        best_up, best_down = cuts[np.argmax(correct_up[cuts])], cuts[np.argmax(correct_down[cuts])]
        if correct_up[best_up] >= correct_down[best_down]:
            cut, self.sign, correct = best_up, 1, correct_up[best_up]
        else:
            cut, self.sign, correct = best_down, -1, correct_down[best_down]
        lo = xs[cut - 1] if cut > 0 else xs[0] - 1.0
        hi = xs[cut] if cut < n else xs[-1] + 1.0
        self.threshold = float((lo + hi) / 2)
        self.train_accuracy = float(correct / n)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Labels in {0, 1}."""
        return (self.sign * (np.asarray(x, dtype=np.float64) - self.threshold) > 0).astype(int)

    def score(self, x: np.ndarray, y: np.ndarray) -> float:
        """Accuracy on ``(x, y)``."""
        return float((self.predict(x) == np.asarray(y).astype(int)).mean())


@dataclass
class LogisticHead:
    """A fitted logistic-regression head and the standardisation it reads its input through."""

    model: LogisticRegression
    scaler: StandardScaler | None
    converged: bool

    def transform(self, X: np.ndarray) -> np.ndarray:
        """``X`` as the model sees it (standardised when the head was fitted that way)."""
        return X if self.scaler is None else self.scaler.transform(X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted labels of the rows of ``X``."""
        return self.model.predict(self.transform(X))

    def accuracy(self, X: np.ndarray, y: np.ndarray) -> float:
        """Share of rows of ``X`` whose predicted label is ``y``."""
        return float((self.predict(X) == np.asarray(y)).mean())


def fit_logistic(
    X: np.ndarray,
    y: np.ndarray,
    *,
    standardise: bool = True,
    solver: str = "lbfgs",
    C: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-4,
    seed: int = 0,
) -> LogisticHead:
    """The one logistic-regression head of the book: POS probes, SST-2 heads, ablations.

    .. math:: p(y = k \\mid x) = \\mathrm{softmax}(W z + b)_k, \\qquad
              \\min_{W,b} \\tfrac12 \\lVert W\\rVert^2 + C \\sum_i -\\log p(y_i \\mid x_i)

    with ``z`` the row standardised on the training rows (``standardise=True``: hidden states
    of different layers and models, some with huge norms, become comparable) or the raw row
    (``standardise=False``: seed 003 feeds the raw hidden state to its head, so an ablation
    changes the coordinates the head was trained on). ``solver`` is scikit-learn's:
    ``"lbfgs"`` by default; ``"newton-cholesky"`` (Newton steps with the exact Hessian) for
    raw features that rogue dimensions scale badly, where L-BFGS needs hundreds of iterations.
    Rows are used in the dtype given. Convergence is checked, not assumed.

    Returns
    -------
    LogisticHead
        ``converged`` is False when scikit-learn raised a ``ConvergenceWarning`` or used every
        iteration (a probe with a deliberately small ``max_iter`` budget accepts that).
    """
    scaler = StandardScaler().fit(X) if standardise else None
    model = LogisticRegression(C=C, solver=solver, max_iter=max_iter, tol=tol, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X if scaler is None else scaler.transform(X), y)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    converged = converged and int(np.max(model.n_iter_)) < max_iter
    return LogisticHead(model, scaler, converged)


ABLATION_MODES = ("zero", "mean")


def ablate(X: np.ndarray, dims: Sequence[int] | np.ndarray, mode: str = "zero",
           mean: np.ndarray | None = None) -> np.ndarray:
    """A copy of ``X`` with the coordinates ``dims`` of every row replaced.

    .. math:: \\tilde x_{ij} = \\begin{cases} c_j & j \\in \\text{dims} \\\\
              x_{ij} & \\text{otherwise} \\end{cases}, \\qquad
              c_j = 0 \\ (\\text{"zero"}) \\text{ or } c_j = \\bar x^{\\text{train}}_j
              \\ (\\text{"mean"})

    ``"zero"`` is seed 003's ablation ("setting the representations of GPT-2 in a given
    dimension to zero", after Kovaleva et al. 2021): for a dimension with a large mean it
    moves every vector far from the data. ``"mean"`` (mean ablation) removes only the
    dimension's variation around its training mean ``mean``, the information a head can read
    from it, and leaves the rest of the vector where the head expects it.
    """
    if mode not in ABLATION_MODES:
        raise ValueError(f"mode must be one of {ABLATION_MODES}, not {mode!r}")
    out = np.array(X, dtype=np.float64, copy=True)
    dims = np.asarray(dims, dtype=int)
    if mode == "zero":
        out[:, dims] = 0.0
    else:
        if mean is None:
            raise ValueError("mode='mean' needs the training mean")
        out[:, dims] = np.asarray(mean, dtype=np.float64)[dims]
    return out


def ablation_curve(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                   y_test: np.ndarray, ks: Sequence[int], mode: str = "zero",
                   C: float = 1.0, head: LogisticHead | None = None) -> pd.DataFrame:
    """Accuracy of one trained head when the top-k or bottom-k variance dimensions are ablated.

    Seed 003's Figure 6 protocol (after Kovaleva et al. 2021): a linear head is trained once
    on the full raw training vectors (:func:`fit_logistic` with ``standardise=False``); then,
    on the test vectors, the ``k`` dimensions of highest (``"top"``) or lowest (``"bottom"``)
    training variance are ablated with :func:`ablate` and the same head is scored. The head's
    logit changes by

    .. math:: \\Delta_i = \\sum_{j \\in \\text{dims}} w_j (c_j - x_{ij}),

    so ``mode="zero"`` (the seed's, :math:`c_j = 0`) also shifts every logit by
    :math:`-\\sum_j w_j \\bar x_j`, the dimensions' mean contribution, while
    ``mode="mean"`` (:math:`c_j = \\bar x_j`) removes only their variation.

    Parameters
    ----------
    ks : sequence of int
        Numbers of dimensions to ablate (0 gives the unablated head).
    mode : {"zero", "mean"}
        ``"zero"``: seed 003's protocol, raw coordinates set to 0; ``"mean"``: set to their
        training mean.
    C : float
        Inverse L2 strength of the head.
    head : LogisticHead, optional
        A head already fitted on ``X_train`` (e.g. the one whose unablated accuracy a chapter
        reports elsewhere, so that both numbers are one); any linear head reads raw vectors
        through its own standardisation, so the ablation still changes raw coordinates.

    Returns
    -------
    pandas.DataFrame
        Columns ``mode``, ``removed`` ("top" / "bottom"), ``k``, ``accuracy``,
        ``head_converged``.
    """
    if mode not in ABLATION_MODES:
        raise ValueError(f"mode must be one of {ABLATION_MODES}, not {mode!r}")
    X_train = np.asarray(X_train, dtype=np.float64)
    if head is None:
        head = fit_logistic(X_train, y_train, standardise=False, solver="newton-cholesky", C=C)
    mean = X_train.mean(axis=0)
    order = np.argsort(-X_train.var(axis=0), kind="stable")
    y_test = np.asarray(y_test)
    rows = []
    for removed in ("top", "bottom"):
        for k in ks:
            dims = order[:k] if removed == "top" else order[len(order) - k:]
            Xk = ablate(X_test, dims, mode, mean)
            rows.append({"mode": mode, "removed": removed, "k": int(k),
                         "accuracy": head.accuracy(Xk, y_test),
                         "head_converged": head.converged})
    return pd.DataFrame(rows)
