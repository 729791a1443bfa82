"""Rogue dimensions, layer-by-layer CKA and one-dimension classifiers (seed 003, GPTology).

Seed 003 fine-tuned GPT-2 and BERT on SST-2 and QNLI and reported that (1) layer-by-layer CKA
shows a block structure that fine-tuning turns into a "bow tie"; (2) a few *rogue dimensions*
(Timkey & van Schijndel 2021), coordinates with far more variance than the rest, dominate the
last layers of GPT-2; (3) a threshold on the single highest-variance dimension classifies
SST-2 almost as well as the whole fine-tuned model (91.3% vs 92.8%) for GPT-2 but not for BERT
(76.0% vs 92.2%); (4) zeroing the top-variance dimensions hurts the trained classifier while
zeroing the bottom ones barely does.

This module measures the same quantities on any set of vectors; the chapter applies them to
pretrained (not fine-tuned) models. Beyond the seed it compares layers *across* models on the
same words, with and without the first word of each sentence, whose hidden state decoders run
without BOS blow up (attention sinks, Xiao et al. 2023; massive activations, Sun et al. 2024).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from . import measures
from .measures import unit_rows

if TYPE_CHECKING:
    from .corpus import Corpus


def _centered(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"expected a 2-D array with at least 2 rows, got shape {X.shape}")
    return X - X.mean(axis=0)


def linear_cka(X: np.ndarray, Y: np.ndarray) -> float:
    """Linear centred kernel alignment of two representations of the same n items.

    .. math:: \\mathrm{CKA}(X, Y) = \\frac{\\lVert \\tilde Y^\\top \\tilde X \\rVert_F^2}
              {\\lVert \\tilde X^\\top \\tilde X \\rVert_F \\, \\lVert \\tilde Y^\\top \\tilde Y
              \\rVert_F}

    with :math:`\\tilde X, \\tilde Y` the column-centred matrices (Kornblith et al. 2019, eq. 4,
    the form seed 003 uses). CKA is 1 for identical representations and invariant to
    orthogonal transforms, isotropic scaling and translation of either one; the widths of X
    and Y may differ (two models on the same words).

    Parameters
    ----------
    X : ndarray of shape (n, d1)
    Y : ndarray of shape (n, d2)

    Returns
    -------
    float
        In [0, 1]; NaN when one representation is constant.
    """
    Xc, Yc = _centered(X), _centered(Y)
    if len(Xc) != len(Yc):
        raise ValueError(f"X and Y must describe the same items: {len(Xc)} vs {len(Yc)} rows")
    cross = np.linalg.norm(Yc.T @ Xc) ** 2
    denom = np.linalg.norm(Xc.T @ Xc) * np.linalg.norm(Yc.T @ Yc)
    return float(cross / denom) if denom > 0 else float("nan")


def cka_matrix(A: Sequence[np.ndarray], B: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """Linear CKA between every layer of ``A`` and every layer of ``B`` (``A`` when None).

    Each element of ``A`` / ``B`` is one layer's (n, d) representation of the same n items.
    Uses the Gram-free form of :func:`linear_cka` with the per-layer self-norms computed once.

    Returns
    -------
    ndarray of shape (len(A), len(B))
    """
    As = [_centered(a) for a in A]
    Bs = As if B is None else [_centered(b) for b in B]
    if any(len(b) != len(As[0]) for b in [*As, *Bs]):
        raise ValueError("every layer must describe the same items (same number of rows)")
    norm_a = [np.linalg.norm(a.T @ a) for a in As]
    norm_b = norm_a if B is None else [np.linalg.norm(b.T @ b) for b in Bs]
    out = np.empty((len(As), len(Bs)))
    for i, a in enumerate(As):
        for j, b in enumerate(Bs):
            if B is None and j < i:
                out[i, j] = out[j, i]
                continue
            denom = norm_a[i] * norm_b[j]
            out[i, j] = np.linalg.norm(b.T @ a) ** 2 / denom if denom > 0 else np.nan
    return out


def norm_ratio(X: np.ndarray, rows: np.ndarray) -> float:
    """Median Euclidean norm of the selected rows over the median norm of the other rows.

    .. math:: \\mathrm{median}_{i \\in S} \\lVert x_i \\rVert \\big/
              \\mathrm{median}_{i \\notin S} \\lVert x_i \\rVert

    With ``rows`` the first word of each sentence, this measures the "attention sink" /
    "massive activation" effect of decoders run without a BOS token (Xiao et al. 2023;
    Sun et al. 2024): the first position's hidden state is far larger than the others. Rows
    that large dominate :func:`linear_cka`, whose numerator and denominator are sums over
    pairs of rows weighted by their inner products.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    rows : boolean ndarray of shape (n,)
        The selected rows; both groups must be non-empty.
    """
    rows = np.asarray(rows, dtype=bool)
    if rows.shape != (len(X),) or rows.all() or not rows.any():
        raise ValueError("rows must be a boolean mask over X with both groups non-empty")
    return measures.norm_ratio(X, rows, statistic="median")


def best_match(cross: np.ndarray) -> np.ndarray:
    """For each column (layer of the second model), the highest CKA over the rows.

    Cross-model CKA matrices need not peak on a diagonal (the models have different
    numbers of layers), so each layer is summarised by its best-matching layer.
    """
    return np.nanmax(np.asarray(cross, dtype=np.float64), axis=0)


def cross_model_cka(A: Sequence[np.ndarray], B: Sequence[np.ndarray], first: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Layer-by-layer CKA of two models on the same word rows, with and without first words.

    Parameters
    ----------
    A, B : sequences of ndarray of shape (n, d_a) / (n, d_b)
        Every layer of two models on the same n word occurrences.
    first : boolean ndarray of shape (n,)
        Rows that are the first word of their sentence.

    Returns
    -------
    all_rows : ndarray of shape (len(A), len(B))
        :func:`cka_matrix` on every row.
    without_first : ndarray of shape (len(A), len(B))
        The same on the rows that are not first words.
    table : pandas.DataFrame
        One row per layer of ``B``: ``layer``, ``best_cka_all`` and ``best_cka_without_first``
        (:func:`best_match`), ``first_word_norm_ratio`` (:func:`norm_ratio` of B's first-word
        rows), ``top_dim`` and ``top_dim_variance_share_without_first`` (the highest-variance
        dimension of B's other rows and its :func:`variance_share`), and
        ``best_cka_without_first_and_top_dim`` (the best match once that dimension of B is
        dropped as well).
    """
    first = np.asarray(first, dtype=bool)
    all_rows = cka_matrix(A, B)
    A_rest, B_rest = [a[~first] for a in A], [b[~first] for b in B]
    without = cka_matrix(A_rest, B_rest)
    top = [int(top_dimensions(b, 1)[0]) for b in B_rest]
    without_top = cka_matrix(A_rest, [np.delete(b, d, axis=1) for b, d in zip(B_rest, top,
                                                                               strict=True)])
    table = pd.DataFrame({
        "layer": np.arange(len(B)),
        "best_cka_all": best_match(all_rows),
        "best_cka_without_first": best_match(without),
        "first_word_norm_ratio": [norm_ratio(b, first) for b in B],
        "top_dim": top,
        "top_dim_variance_share_without_first": [variance_share(b, 1) for b in B_rest],
        "best_cka_without_first_and_top_dim": best_match(without_top),
    })
    return all_rows, without, table


def _ranges(layers: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"``."""
    out: list[str] = []
    layers = sorted(int(v) for v in layers)
    i = 0
    while i < len(layers):
        j = i
        while j + 1 < len(layers) and layers[j + 1] == layers[j] + 1:
            j += 1
        out.append(str(layers[i]) if i == j else f"{layers[i]}-{layers[j]}")
        i = j + 1
    return ", ".join(out)


def _layers(layers: Sequence[int]) -> str:
    """``"layer 3"`` or ``"layers 3-9, 30"``."""
    return f"layer{'' if len(layers) == 1 else 's'} {_ranges(layers)}"


def _span(lo: float, hi: float, fmt: str) -> str:
    """``"0.46 to 0.65"``, or one number when both round alike."""
    a, b = format(lo, fmt), format(hi, fmt)
    return a if a == b else f"{a} to {b}"


def cross_cka_findings(table: pd.DataFrame, model_a: str, model_b: str, n_rows: int,
                       n_first: int, sink_ratio: float = 10.0, low_cka: float = 0.3,
                       rogue_share: float = 0.3) -> list[str]:
    """Sentences on a :func:`cross_model_cka` table, every number read from it.

    *Sink layers* are the layers of ``model_b`` whose first-word rows have a median norm more
    than ``sink_ratio`` times the others'. Layers whose best match stays below ``low_cka``
    without first words are split by whether one dimension holds more than ``rogue_share`` of
    the variance of the remaining rows.
    """
    t = table
    sink = t[t["first_word_norm_ratio"] > sink_ratio]
    rest = t[t["first_word_norm_ratio"] <= sink_ratio]
    out = [f"Cross-model CKA ({model_a} against {model_b}) is computed on {n_rows} words, "
           f"{n_first} of them the first word of their sentence."]
    if len(sink):
        r, w = sink["first_word_norm_ratio"], sink["best_cka_without_first"]
        out.append(
            f"In {model_b} {_layers(sink['layer'])} the first word's hidden state has a "
            f"median norm {_span(r.min(), r.max(), '.0f')} times that of the other words. There "
            f"the best-matching {model_a} layer reaches a CKA of "
            f"{_span(sink['best_cka_all'].min(), sink['best_cka_all'].max(), '.2f')} on all "
            f"words and {_span(w.min(), w.max(), '.2f')} without the first words."
        )
    else:
        out.append(f"In no {model_b} layer is the first word's median norm more than "
                   f"{sink_ratio:.0f} times the other words'.")
    if len(rest):
        diff = rest["best_cka_without_first"] - rest["best_cka_all"]
        i = diff.abs().idxmax()
        out.append(
            f"In the other layer{'' if len(rest) == 1 else 's'} ({_ranges(rest['layer'])}) "
            f"leaving out the first words changes the best match by at most {diff[i]:+.2f} "
            f"(layer {int(rest['layer'][i])})."
        )
    low = t[t["best_cka_without_first"] < low_cka]
    if len(low):
        share = low["top_dim_variance_share_without_first"]
        rogue_low, other_low = low[share > rogue_share], low[share <= rogue_share]
        text = (f"Without the first words the best match stays below {low_cka} in {model_b} "
                f"{_layers(low['layer'])}")
        if len(rogue_low):
            s_ = rogue_low["top_dim_variance_share_without_first"]
            c_ = rogue_low["best_cka_without_first_and_top_dim"]
            dims = sorted(set(rogue_low["top_dim"].astype(int)))
            text += (f"; in {_layers(rogue_low['layer'])} one dimension "
                     f"({', '.join(map(str, dims))}) holds {_span(s_.min(), s_.max(), '.0%')} of "
                     f"the variance of the remaining rows, and dropping it as well raises the "
                     f"best match to {_span(c_.min(), c_.max(), '.2f')}")
        if len(other_low):
            s_ = other_low["top_dim_variance_share_without_first"]
            text += (f"; in {_layers(other_low['layer'])} no dimension holds more than "
                     f"{s_.max():.0%} of it")
        out.append(text + ".")
    return out


def cosine_contributions(X: np.ndarray) -> np.ndarray:
    """Each dimension's contribution to the mean pairwise cosine of the rows of ``X``.

    .. math:: CC_k = \\frac{1}{n(n-1)} \\sum_{i \\ne j} \\hat x_{ik} \\hat x_{jk}
              = \\frac{(\\sum_i \\hat x_{ik})^2 - \\sum_i \\hat x_{ik}^2}{n(n-1)},
              \\qquad \\sum_k CC_k = \\overline{\\cos}

    with :math:`\\hat x_i = x_i / \\lVert x_i \\rVert` (Timkey & van Schijndel 2021, eq. 2;
    they estimate it from sampled pairs, this is the exact mean over all ordered pairs). A
    *rogue dimension* is one whose contribution is a large share of the total; the sum equals
    :func:`lmgeometry.measures.mean_pairwise_cosine`.

    Returns
    -------
    ndarray of shape (d,)
    """
    U, norms = unit_rows(X)
    U = np.asarray(U, dtype=np.float64)[norms > 0]
    n = len(U)
    if n < 2:
        raise ValueError("cosine contributions need at least two non-zero rows")
    return (U.sum(axis=0) ** 2 - (U**2).sum(axis=0)) / (n * (n - 1))


def top_dimensions(X: np.ndarray, k: int = 1, by: str = "variance") -> np.ndarray:
    """Indices of the ``k`` dimensions with the largest variance (or cosine contribution).

    ``by="variance"`` is seed 003's *principal rogue dimension* for ``k=1``: the coordinate
    with the highest variance over the rows. ``by="contribution"`` ranks by
    :func:`cosine_contributions` (Timkey & van Schijndel 2021).
    """
    if by == "variance":
        score = np.asarray(X, dtype=np.float64).var(axis=0)
    elif by == "contribution":
        score = cosine_contributions(X)
    else:
        raise ValueError(f"by must be 'variance' or 'contribution', not {by!r}")
    return np.argsort(-score, kind="stable")[:k]


def variance_share(X: np.ndarray, k: int = 1) -> float:
    """Share of the total variance held by the ``k`` highest-variance coordinates.

    .. math:: \\sum_{j \\in top_k} \\mathrm{Var}(x_{\\cdot j}) / \\sum_j \\mathrm{Var}(x_{\\cdot j})

    ``k / d`` for an isotropic Gaussian; close to 1 when a few rogue dimensions dominate.
    """
    var = np.asarray(X, dtype=np.float64).var(axis=0)
    total = var.sum()
    return float(np.sort(var)[::-1][:k].sum() / total) if total > 0 else float("nan")


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


def fit_probe(X: np.ndarray, y: np.ndarray, C: float = 1.0, seed: int = 0,
              max_iter: int = 1000) -> tuple[StandardScaler, LogisticRegression]:
    """A logistic-regression head on standardised features (the "full representation").

    Used for the per-layer accuracy of :func:`layer_report`, where only the head's accuracy
    matters. The ablation of :func:`ablation_curve` uses :func:`fit_head` instead: its head
    reads the raw coordinates, as seed 003's does.
    """
    scaler = StandardScaler().fit(np.asarray(X, dtype=np.float64))
    clf = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
    clf.fit(scaler.transform(np.asarray(X, dtype=np.float64)), y)
    return scaler, clf


def fit_head(X: np.ndarray, y: np.ndarray, C: float = 1.0, max_iter: int = 1000
             ) -> tuple[LogisticRegression, bool]:
    """An L2 logistic-regression head on the *raw* vectors (no standardisation).

    .. math:: p(y=1 \\mid x) = \\sigma(w^\\top x + b), \\qquad
              \\min_{w,b} \\tfrac12 \\lVert w\\rVert^2 + C \\sum_i \\ell(y_i, w^\\top x_i + b)

    Seed 003 feeds GPT-2's raw last-token hidden state to a linear classification head, so
    its ablation changes the raw coordinates the head was trained on. Rogue dimensions make
    the raw features badly scaled (the top coordinate's spread can be ten times the median
    one's), on which the default ``lbfgs`` solver needs hundreds of iterations; the
    ``newton-cholesky`` solver (Newton steps with the exact Hessian, cheap for a few hundred
    dimensions) converges in a handful without any rescaling. Convergence is checked, not
    assumed.

    Returns
    -------
    head : LogisticRegression
    converged : bool
        False when scikit-learn raised a ``ConvergenceWarning`` or used every iteration.
    """
    X = np.asarray(X, dtype=np.float64)
    clf = LogisticRegression(C=C, solver="newton-cholesky", max_iter=max_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf.fit(X, y)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    converged = converged and int(np.max(clf.n_iter_)) < max_iter
    return clf, converged


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
                   C: float = 1.0) -> pd.DataFrame:
    """Accuracy of one trained head when the top-k or bottom-k variance dimensions are ablated.

    Seed 003's Figure 6 protocol (after Kovaleva et al. 2021): a linear head is trained once
    on the full raw training vectors (:func:`fit_head`); then, on the test vectors, the ``k``
    dimensions of highest (``"top"``) or lowest (``"bottom"``) training variance are ablated
    with :func:`ablate` and the same head is scored. The head's logit changes by

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

    Returns
    -------
    pandas.DataFrame
        Columns ``mode``, ``removed`` ("top" / "bottom"), ``k``, ``accuracy``,
        ``head_converged``.
    """
    if mode not in ABLATION_MODES:
        raise ValueError(f"mode must be one of {ABLATION_MODES}, not {mode!r}")
    X_train = np.asarray(X_train, dtype=np.float64)
    clf, converged = fit_head(X_train, y_train, C=C)
    mean = X_train.mean(axis=0)
    order = np.argsort(-X_train.var(axis=0), kind="stable")
    y_test = np.asarray(y_test)
    rows = []
    for removed in ("top", "bottom"):
        for k in ks:
            dims = order[:k] if removed == "top" else order[len(order) - k:]
            Xk = ablate(X_test, dims, mode, mean)
            rows.append({"mode": mode, "removed": removed, "k": int(k),
                         "accuracy": float((clf.predict(Xk) == y_test).mean()),
                         "head_converged": converged})
    return pd.DataFrame(rows)


def sentence_vectors(words: pd.DataFrame, layer: np.ndarray, pooling: str = "last"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """One vector per sentence from a store's word rows.

    ``"last"``: the sentence's last word (seed 003's GPT-2 representation: the last token, the
    only one a decoder lets see the whole sentence); ``"mean"``: the mean of its words (how
    sentence-transformers encoders pool). Special tokens are not in the store, so BERT's
    [CLS] is not available; say so when comparing with the seed's BERT numbers.

    Returns
    -------
    vectors : ndarray of shape (sentences, d), float64
    sentence_ids : ndarray of the sentence ids, ascending
    """
    sid = words["sentence_id"].to_numpy()
    ids, start, counts = np.unique(sid, return_index=True, return_counts=True)
    if np.any(np.diff(sid) < 0):
        raise ValueError("word rows must be ordered by sentence (store order)")
    X = np.asarray(layer, dtype=np.float64)
    if pooling == "last":
        return X[start + counts - 1], ids
    if pooling == "mean":
        return np.add.reduceat(X, start, axis=0) / counts[:, None], ids
    raise ValueError(f"pooling must be 'last' or 'mean', not {pooling!r}")


def layer_report(train_layers: Sequence[np.ndarray], y_train: np.ndarray,
                 test_layers: Sequence[np.ndarray], y_test: np.ndarray, seed: int = 0
                 ) -> pd.DataFrame:
    """Per layer: rogue-dimension statistics and 1-D versus full-representation accuracy.

    For each layer's sentence vectors: the principal rogue dimension (highest training
    variance), its share of the variance and of the mean cosine; the dimension contributing
    most to the mean cosine (Timkey & van Schijndel's sense of "rogue": a large shared mean
    rather than a large variance) and its share; the accuracy on the test sentences of a
    :class:`ThresholdClassifier` on each of the two dimensions and of a logistic head on all
    dimensions; and the majority-class baseline.
    """
    majority = float(max(np.mean(y_test), 1 - np.mean(y_test)))
    rows = []
    for layer, (Xtr, Xte) in enumerate(zip(train_layers, test_layers, strict=True)):
        dim = int(top_dimensions(Xtr, 1)[0])
        contributions = cosine_contributions(Xtr)
        total = contributions.sum()
        cos_dim = int(np.argmax(contributions))
        scaler, clf = fit_probe(Xtr, y_train, seed=seed)
        threshold = ThresholdClassifier().fit(Xtr[:, dim], y_train)
        cos_threshold = ThresholdClassifier().fit(Xtr[:, cos_dim], y_train)
        rows.append({
            "layer": layer,
            "rogue_dim": dim,
            "variance_share_top1": variance_share(Xtr, 1),
            "variance_share_top3": variance_share(Xtr, 3),
            "mean_cosine": float(total),
            "cosine_share_top1": float(contributions[dim] / total) if total else float("nan"),
            "cosine_dim": cos_dim,
            "cosine_share_cosine_dim": (float(contributions[cos_dim] / total) if total
                                        else float("nan")),
            "threshold_accuracy": threshold.score(Xte[:, dim], y_test),
            "threshold_accuracy_cosine_dim": cos_threshold.score(Xte[:, cos_dim], y_test),
            "probe_accuracy": float((clf.predict(scaler.transform(Xte)) == y_test).mean()),
            "majority_baseline": majority,
        })
    return pd.DataFrame(rows)


def sst2_corpus(n_train: int = 2000, seed: int = 0, min_words: int = 4
                ) -> tuple[Corpus, np.ndarray, np.ndarray]:
    """SST-2 sentences with their labels: a seeded sample of train plus the whole dev split.

    GLUE's SST-2 train split holds every labelled phrase of the treebank, many of them a word
    or two long; only rows with at least ``min_words`` whitespace-separated tokens are
    sampled. The dev split (872 full sentences) is kept whole, as seed 003 evaluates on it.

    Returns
    -------
    corpus : Corpus
        Train sentences first, then dev (``sentence_id`` order).
    labels : ndarray of int, one per sentence (1 positive, 0 negative)
    is_dev : ndarray of bool, one per sentence
    """
    from . import corpus as corpus_mod
    from . import data

    train = data.load_sst2("train")
    train = train[train["sentence"].str.split().str.len() >= min_words]
    if not 0 < n_train <= len(train):
        raise ValueError(f"n_train must be in 1..{len(train)} (SST-2 train rows with at least "
                         f"{min_words} words), not {n_train}")
    train = train.sample(n=n_train, random_state=seed)
    dev = data.load_sst2("dev")
    texts = train["sentence"].tolist() + dev["sentence"].tolist()
    corpus = corpus_mod.sentences(texts, name=f"sst2-train{n_train}-seed{seed}+dev")
    labels = np.concatenate([train["label"].to_numpy(int), dev["label"].to_numpy(int)])
    is_dev = np.arange(len(texts)) >= n_train
    return corpus, labels, is_dev


SEED003_SST2 = {"GPT-2 (fine-tuned)": {"threshold": 91.3, "full": 92.8},
                "BERT (fine-tuned)": {"threshold": 76.03, "full": 92.22}}
"""Seed 003's SST-2 validation accuracies (%) of the principal-rogue-dimension threshold and
of the full fine-tuned model."""


def summary(report: pd.DataFrame) -> pd.DataFrame:
    """Coarse per-model summary of :func:`layer_report` rows (with a ``model`` column).

    Rounded to whole percentages and booleans so it is stable across machines (the chapter's
    nbval-checked output).
    """
    rows = {}
    for model, r in report.groupby("model", sort=False):
        rows[model] = {
            "layers": len(r),
            "best probe accuracy (%)": round(100 * float(r["probe_accuracy"].max())),
            "best 1-D threshold beats majority": bool(
                (r["threshold_accuracy"] > r["majority_baseline"] + 0.05).any()),
            "last layer: top dimension > half the variance": bool(
                r["variance_share_top1"].iloc[-1] > 0.5),
        }
    return pd.DataFrame(rows).T


def findings(report: pd.DataFrame, model: str, ablation: pd.DataFrame | None = None
             ) -> list[str]:
    """Sentences on one model's :func:`layer_report` and :func:`ablation_curve`, from numbers."""
    last = report.iloc[-1]
    best = report.loc[report["threshold_accuracy"].idxmax()]
    gap = last["probe_accuracy"] - last["threshold_accuracy"]
    top_cos = report.loc[report["cosine_share_cosine_dim"].idxmax()]
    dominated = report[report["variance_share_top1"] > 0.5]["layer"].tolist()
    out = [
        f"**{model}**: in the last layer the principal rogue dimension ({int(last['rogue_dim'])}) "
        f"holds {last['variance_share_top1']:.1%} of the variance and "
        f"{last['cosine_share_top1']:.1%} of the mean cosine ({last['mean_cosine']:.2f}); a "
        f"threshold on it reaches {last['threshold_accuracy']:.1%} on SST-2 dev against "
        f"{last['probe_accuracy']:.1%} for a linear head on all dimensions ({gap * 100:.1f} "
        f"points apart; majority baseline {last['majority_baseline']:.1%}). The best "
        f"single-dimension threshold over layers is {best['threshold_accuracy']:.1%} "
        f"(layer {int(best['layer'])}).",
        f"The largest share of the mean cosine held by one dimension is "
        f"{top_cos['cosine_share_cosine_dim']:.0%} (dimension {int(top_cos['cosine_dim'])}, "
        f"layer {int(top_cos['layer'])}); a threshold on that dimension reaches "
        f"{top_cos['threshold_accuracy_cosine_dim']:.1%}.",
        (f"One dimension holds more than half the variance in layers {dominated}."
         if dominated else "No layer has a dimension holding more than half the variance."),
    ]
    if ablation is not None and len(ablation):
        out.extend(ablation_findings(ablation))
    return out


def ablation_findings(ablation: pd.DataFrame) -> list[str]:
    """Sentences on :func:`ablation_curve` rows (one mode or both), from the numbers."""
    labels = {"zero": "Zero ablation (seed 003's: head fitted on raw vectors, raw coordinates "
                      "set to 0)",
              "mean": "Mean ablation (coordinates set to their training mean)"}
    out = []
    for mode, part in ablation.groupby("mode", sort=False):
        a = part.set_index(["removed", "k"])["accuracy"]
        k = int(max(part["k"]))
        one = (f"; ablating only the top one, to {a[('top', 1)]:.1%}"
               if ("top", 1) in a.index else "")
        note = ("" if bool(part["head_converged"].all())
                else " (the head's optimiser did not converge)")
        out.append(
            f"{labels[str(mode)]}: ablating the {k} highest-variance dimensions of the last "
            f"layer takes the trained head from {a[('top', 0)]:.1%} to {a[('top', k)]:.1%}"
            f"{one}; ablating the {k} lowest, to {a[('bottom', k)]:.1%}{note}."
        )
    if set(ablation["mode"]) >= {"zero", "mean"}:
        wide = ablation.pivot_table(index=["removed", "k"], columns="mode", values="accuracy")
        gap = (wide["zero"] - wide["mean"]).abs()
        removed, k = gap.idxmax()
        side = "highest" if removed == "top" else "lowest"
        out.append(
            f"The two ablations differ most when the {k} {side}-variance dimensions are "
            f"ablated: {wide.loc[(removed, k), 'zero']:.1%} zeroed against "
            f"{wide.loc[(removed, k), 'mean']:.1%} mean-ablated." if gap.max() > 0 else
            "The two ablations give the same accuracy at every k."
        )
    return out
