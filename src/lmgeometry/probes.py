"""Linear probes and cluster purity: how decodable is a word label from a layer's vectors.

Seed 000 coloured projections by part of speech and judged by eye that BERT's clusters
"represent POS tags". A probe measures it: a multinomial logistic regression trained on some
sentences' words and scored on held-out sentences (Alain & Bengio 2017; Hewitt & Liang 2019
on why the split and a baseline matter). The split is by sentence so that no sentence
contributes words to both sides.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupShuffleSplit
from sklearn.preprocessing import StandardScaler

from . import wordbench


@dataclass(frozen=True)
class ProbeResult:
    """Held-out accuracy of a linear probe and of the majority-class baseline."""

    accuracy: float
    majority_baseline: float
    n_train: int
    n_test: int
    n_classes: int


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


def linear_probe(
    X: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    test_size: float = 0.25,
    seed: int = 0,
    C: float = 0.1,
    max_iter: int = 100,
    tol: float = 1e-3,
) -> ProbeResult:
    """Held-out accuracy of a multinomial logistic-regression probe, split by ``groups``.

    The probe minimises the L2-regularised cross-entropy
    ``sum_i -log softmax(W x_i + b)[y_i] + ||W||^2 / (2 C)`` with L-BFGS, stopped after
    ``max_iter`` iterations or at gradient tolerance ``tol`` (a fixed iteration budget keeps
    the run time bounded and deterministic; on standardised hidden states it changes the
    accuracy by well under a point). Features are standardised on the training rows (so layers
    with huge norms, as decoders have, are comparable). The baseline predicts the most
    frequent training label for every test row. Labels absent from the training side still
    count as errors on the test side.
    """
    X = np.asarray(X, dtype=np.float32)
    labels = np.asarray(labels)
    train, test = sentence_split(groups, test_size, seed)
    scaler = StandardScaler().fit(X[train])
    clf = LogisticRegression(C=C, max_iter=max_iter, tol=tol, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the iteration budget is chosen
        clf.fit(scaler.transform(X[train]), labels[train])
    accuracy = float((clf.predict(scaler.transform(X[test])) == labels[test]).mean())
    values, counts = np.unique(labels[train], return_counts=True)
    majority = values[np.argmax(counts)]
    return ProbeResult(
        accuracy=accuracy,
        majority_baseline=float((labels[test] == majority).mean()),
        n_train=len(train),
        n_test=len(test),
        n_classes=len(np.unique(labels)),
    )


def purity(labels_true: np.ndarray, labels_pred: np.ndarray) -> float:
    """Cluster purity: ``(1/n) sum_c max_j |c ∩ class_j|`` (Manning et al. 2008, sec. 16.3).

    1 when every cluster holds one class; the share of the largest class when there is a single
    cluster. The measure is :func:`lmgeometry.wordbench.purity`; this wrapper refuses empty
    input instead of returning NaN.
    """
    labels_true, labels_pred = np.asarray(labels_true), np.asarray(labels_pred)
    if len(labels_true) != len(labels_pred) or len(labels_true) == 0:
        raise ValueError("purity needs two label arrays of the same, non-zero length")
    return wordbench.purity(labels_true, labels_pred)


def cluster_purity(
    X: np.ndarray,
    labels: np.ndarray,
    n_clusters: int | None = None,
    seed: int = 0,
    n_init: int = 2,
) -> float:
    """Purity of k-means clusters (k = number of classes unless given) of the rows of ``X``.

    Rows are unit-normalised first, so the clustering follows cosine geometry like the other
    measures of the book; k-means keeps the best of ``n_init`` seeded starts.
    """
    X = np.asarray(X, dtype=np.float32)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = X / np.where(norms == 0, 1.0, norms)
    k = n_clusters or len(np.unique(labels))
    predicted = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(X)
    return purity(labels, predicted)


def probe_by_layer(store, spec: str, n_words: int, seed: int = 0) -> pd.DataFrame:
    """UPOS :func:`linear_probe` and :func:`cluster_purity` on every layer of a store.

    ``store`` is a :class:`lmgeometry.store.Store`; at most ``n_words`` words are sampled
    (seeded, the same in every layer) and split by sentence. One row per layer: ``model``,
    ``layer``, ``depth`` (layer / last layer), ``probe_accuracy``, ``majority_baseline``,
    ``cluster_purity``, ``n_train``, ``n_test``.
    """
    from lmgeometry.geometry import subsample

    rows = subsample(len(store.words), n_words, seed)
    words = store.words.iloc[rows]
    upos = words["upos"].to_numpy()
    sentence = words["sentence_id"].to_numpy()
    last = max(store.n_layers - 1, 1)
    table = []
    for layer in range(store.n_layers):
        X = np.asarray(store.layer(layer)[rows], dtype=np.float32)
        probe = linear_probe(X, upos, sentence, seed=seed)
        table.append(
            {
                "model": spec,
                "layer": layer,
                "depth": layer / last,
                "probe_accuracy": probe.accuracy,
                "majority_baseline": probe.majority_baseline,
                "cluster_purity": cluster_purity(X, upos, seed=seed),
                "n_train": probe.n_train,
                "n_test": probe.n_test,
            }
        )
    return pd.DataFrame(table)


def findings(table: pd.DataFrame) -> list[str]:
    """Sentences stating what the per-layer probe table shows, generated from the numbers.

    ``table`` has columns model, layer, probe_accuracy, majority_baseline, cluster_purity.
    Layer 0 is (nearly) the word's context-free embedding, so its accuracy is what the word's
    identity alone gives; the gain of the best layer over it is what context adds.
    """
    out = []
    for model, part in table.groupby("model", sort=False):
        best = part.loc[part["probe_accuracy"].idxmax()]
        first, last = part.iloc[0], part.iloc[-1]
        purest = part.loc[part["cluster_purity"].idxmax()]
        above = (part["probe_accuracy"] > part["majority_baseline"]).all()
        gain = best["probe_accuracy"] - first["probe_accuracy"]
        out.append(
            f"**{model}**: the UPOS probe is most accurate at layer {int(best['layer'])} of "
            f"{int(part['layer'].max())} ({best['probe_accuracy']:.1%}, against a majority "
            f"baseline of {best['majority_baseline']:.1%}); it scores "
            f"{first['probe_accuracy']:.1%} at layer 0, where a vector carries little beyond "
            f"the word itself, so context adds {100 * gain:.1f} points at best, and "
            f"{last['probe_accuracy']:.1%} at the last layer. It "
            f"{'beats' if above else 'does not beat'} the baseline in every layer. "
            f"Unsupervised k-means clusters are purest at layer {int(purest['layer'])} "
            f"(purity {purest['cluster_purity']:.2f}; a single cluster would score the "
            f"majority share, about {purest['majority_baseline']:.2f}) and least pure at layer "
            f"{int(part.loc[part['cluster_purity'].idxmin(), 'layer'])} "
            f"({part['cluster_purity'].min():.2f})."
        )
    return out
