"""Word categorisation: cluster the words' vectors and score the clusters' purity.

Agglomerative clustering or k-means into as many clusters as the benchmark has categories, or
the best purity over the clusterings of the Word Embeddings Benchmarks package (its
``method="all"``, behind the BLESS and AP columns of Ethayarajh 2019, Table 1; Baroni, Dinu and
Kruszewski 2014 describe the benchmarks).

References
----------
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Baroni, M., Dinu, G., Kruszewski, G. (2014). Don't count, predict! ACL.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.measures.clusters import purity
from lmgeometry.measures.word_lookup import OOV, Case, Vectors, _Lookup

__all__ = ["evaluate_categorisation"]


_WEB_AGGLOMERATIVE: tuple[tuple[str, str], ...] = (
    ("ward", "euclidean"),
    ("average", "cosine"),
    ("complete", "cosine"),
    ("average", "euclidean"),
    ("complete", "euclidean"),
)


def _cluster(
    X: np.ndarray, k: int, method: str, seed: int, linkage: str, metric: str
) -> np.ndarray:
    """Cluster labels of the rows of ``X``, single-threaded.

    A few hundred words gain nothing from BLAS or OpenMP threads, and on shared, busy cores
    their spin-waiting makes k-means' distance products many times slower.
    """
    from sklearn.cluster import AgglomerativeClustering, KMeans

    if linkage == "ward" and metric != "euclidean" and method != "kmeans":
        raise ValueError("ward linkage needs the euclidean metric")
    with threadpool_limits(limits=1):
        if method == "kmeans":
            return KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(X)
        return AgglomerativeClustering(n_clusters=k, linkage=linkage,
                                       metric=metric).fit_predict(X)


def evaluate_categorisation(
    vectors: Vectors,
    items: pd.DataFrame,
    method: Literal["agglomerative", "kmeans", "best"] = "agglomerative",
    seed: int = 0,
    *,
    linkage: Literal["ward", "average", "complete", "single"] = "ward",
    metric: Literal["euclidean", "cosine"] = "euclidean",
    case: Case = "lower",
    oov: OOV = "skip",
) -> dict[str, Any]:
    """Cluster words into as many clusters as there are categories; report cluster purity.

    Concept categorisation as in Baroni, Dinu & Kruszewski (2014) and Ethayarajh (2019): the
    words' vectors are clustered into ``k`` clusters, ``k`` the number of gold categories
    (among the evaluated words), with scikit-learn, and scored by :func:`purity`.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    items
        Frame with columns ``word, category`` (as ``data.load_categorisation`` returns).
    method
        ``"agglomerative"`` (``AgglomerativeClustering`` with ``linkage`` and ``metric``;
        deterministic), ``"kmeans"`` (``KMeans(n_init=10, random_state=seed)``), or ``"best"``:
        the maximum purity over Ward, average/complete linkage under cosine and euclidean
        distance and k-means -- the Word Embeddings Benchmarks package's ``method="all"``
        (used for Ethayarajh 2019, Table 1). ``"best"`` picks the clustering with the gold
        labels, so it is optimistic.
    seed
        Random state of k-means.
    linkage, metric
        Agglomerative settings (``"ward"`` needs ``"euclidean"``).
    case
        ``"lower"`` (default) or ``"exact"`` lookup.
    oov
        ``"skip"`` (default): cluster only words with vectors. ``"mean"``: give missing words
        the mean vector (WEB package); needs a mapping.

    Returns
    -------
    dict
        ``purity``, ``n`` (words clustered), ``total`` (words in the benchmark), ``coverage``
        (fraction with vectors), ``n_clusters``, ``method``. Purity is NaN when fewer words
        than clusters remain.
    """
    if method not in ("agglomerative", "kmeans", "best"):
        raise ValueError(f"unknown method {method!r}")
    lk = _Lookup(vectors, case, oov)
    words = items["word"].tolist()
    labels = items["category"].to_numpy()
    total = len(words)
    vecs = [lk.get(w) for w in words]
    has = np.array([v is not None for v in vecs], dtype=bool)
    keep = has if oov == "skip" else np.ones(total, dtype=bool)
    rows = np.flatnonzero(keep)
    y = labels[rows]
    k = len(pd.unique(y))
    out: dict[str, Any] = {
        "purity": math.nan,
        "n": int(len(rows)),
        "total": int(total),
        "coverage": float(has.mean()) if total else math.nan,
        "n_clusters": int(k),
        "method": method,
    }
    if len(rows) < max(k, 2) or k < 1:
        return out
    X = np.vstack([lk.fill(words[i]) for i in rows])  # type: ignore[misc]
    if method == "best":
        scores = [purity(y, _cluster(X, k, "agglomerative", seed, lk_, m)) for lk_, m in
                  _WEB_AGGLOMERATIVE]
        scores.append(purity(y, _cluster(X, k, "kmeans", seed, linkage, metric)))
        out["purity"] = max(scores)
    else:
        out["purity"] = purity(y, _cluster(X, k, method, seed, linkage, metric))
    return out
