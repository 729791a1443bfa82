"""Rogue dimensions, layer-by-layer CKA and one-dimension classifiers (seed 003, GPTology).

Seed 003 fine-tuned GPT-2 and BERT on SST-2 and QNLI and reported that (1) layer-by-layer CKA
shows a block structure that fine-tuning turns into a "bow tie"; (2) a few *rogue dimensions*
(Timkey & van Schijndel 2021), coordinates with far more variance than the rest, dominate the
last layers of GPT-2; (3) a threshold on the single highest-variance dimension classifies
SST-2 almost as well as the whole fine-tuned model (91.3% vs 92.8%) for GPT-2 but not for BERT
(76.0% vs 92.2%); (4) zeroing the top-variance dimensions hurts the trained classifier while
zeroing the bottom ones barely does.

This module measures the same quantities on any set of vectors; the chapter applies them to
pretrained (not fine-tuned) models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

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
    """A logistic-regression head on standardised features (the "full representation")."""
    scaler = StandardScaler().fit(np.asarray(X, dtype=np.float64))
    clf = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
    clf.fit(scaler.transform(np.asarray(X, dtype=np.float64)), y)
    return scaler, clf


def ablation_curve(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                   y_test: np.ndarray, ks: Sequence[int], seed: int = 0) -> pd.DataFrame:
    """Accuracy of one trained head when the top-k or bottom-k variance dimensions are zeroed.

    As seed 003 (after Kovaleva et al. 2021): a head is trained once on the full training
    vectors; then, on the test vectors, the ``k`` dimensions of highest (``"top"``) or lowest
    (``"bottom"``) training variance are set to their training mean (zero after the head's
    standardisation, i.e. the seed's "set to zero" in the head's input space) and the same
    head is scored.

    Returns
    -------
    pandas.DataFrame
        Columns ``removed`` ("top" / "bottom"), ``k``, ``accuracy``.
    """
    scaler, clf = fit_probe(X_train, y_train, seed=seed)
    order = np.argsort(-np.asarray(X_train, dtype=np.float64).var(axis=0), kind="stable")
    Z = scaler.transform(np.asarray(X_test, dtype=np.float64))
    rows = []
    for removed in ("top", "bottom"):
        for k in ks:
            dims = order[:k] if removed == "top" else order[len(order) - k:]
            Zk = Z.copy()
            Zk[:, dims] = 0.0
            rows.append({"removed": removed, "k": int(k),
                         "accuracy": float((clf.predict(Zk) == y_test).mean())})
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
        a = ablation.set_index(["removed", "k"])["accuracy"]
        k = int(max(ablation["k"]))
        out.append(
            f"Zeroing the {k} highest-variance dimensions of the last layer takes the trained "
            f"head from {a[('top', 0)]:.1%} to {a[('top', k)]:.1%}; zeroing the {k} lowest "
            f"takes it to {a[('bottom', k)]:.1%}."
        )
    return out
