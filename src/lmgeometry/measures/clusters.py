"""Global geometry of a layer's word vectors: projections, clusters and what drives them.

Seed 000 looked at per-layer PCA and UMAP projections of GPT-2 and BERT and described, by eye,
two well-separated clusters in GPT-2 (their separation decreasing in the last layer) and, inside
the larger one, a manifold "similar to the Swiss roll" along which the token's position runs.
This module turns those observations into numbers:

* :func:`pca_project` and :func:`umap_project` give the projections the figures show;
* :func:`detect_clusters` finds well-separated clusters and reports how separated they are;
* :func:`variance_explained_by` says how much of a layer's variance one word attribute
  (position, being the first word, part of speech, word identity) accounts for, so "position
  is the dominant global feature" becomes a comparison of numbers, with and without the first
  words (:func:`first_word_norm_ratio` measures how far out those lie);
* :func:`position_knn_r2` asks whether position is a smooth function of where a word lies in
  the top principal components (a position manifold), whatever the curve's shape.

The chapter's per-layer tables are built by :mod:`lmgeometry.chapters.geometry`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score

from lmgeometry.measures.similarity import norm_ratio, subsample

__all__ = [
    "cluster_purity",
    "purity",
    "as_float",
    "Clusters",
    "detect_clusters",
    "first_word_norm_ratio",
    "knn_r2",
    "pca_project",
    "position_bins",
    "position_knn_r2",
    "separation_ratio",
    "umap_project",
    "variance_explained_by",
]


def as_float(X: np.ndarray) -> np.ndarray:
    """A float32 copy-on-need of ``X`` (stores hold float16; sklearn wants float32/64)."""
    return np.asarray(X, dtype=np.float32)


def pca_project(
    X: np.ndarray, n_components: int = 3, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Project the rows of ``X`` on their first principal components.

    PCA centres the data: coordinates are ``(X - mean) @ V[:, :k]`` with ``V`` the right singular
    vectors of the centred matrix.

    Returns
    -------
    coords : (n, n_components) array
    explained : (n_components,) explained-variance ratios
    """
    pca = PCA(n_components=n_components, random_state=seed, svd_solver="randomized")
    coords = pca.fit_transform(as_float(X))
    return coords.astype(np.float32), pca.explained_variance_ratio_.astype(np.float64)


def umap_project(
    X: np.ndarray,
    n_components: int = 3,
    n_neighbors: int = 15,
    min_dist: float = 0.1,
    seed: int = 0,
    metric: str = "cosine",
) -> np.ndarray:
    """UMAP coordinates of the rows of ``X``, initialised from their PCA projection.

    Seed 000 reports that UMAP "fell back to a random initialization"; here the initialisation
    is always the (scaled) PCA projection, so the global arrangement starts from PCA's
    (McInnes et al. 2018; Kobak & Linderman 2021 on initialisation). ``seed`` makes it
    deterministic (UMAP then runs single-threaded).
    """
    import umap

    Xf = as_float(X)
    init, _ = pca_project(Xf, n_components=n_components, seed=seed)
    init = init / (np.abs(init).max() + 1e-12) * 10.0
    reducer = umap.UMAP(
        n_components=n_components,
        n_neighbors=n_neighbors,
        min_dist=min_dist,
        metric=metric,
        init=init,
        random_state=seed,
    )
    return reducer.fit_transform(Xf).astype(np.float32)


@dataclass(frozen=True)
class Clusters:
    """Result of :func:`detect_clusters`.

    Attributes
    ----------
    k : number of clusters kept (1 when no split is well separated)
    labels : cluster label of every row, ordered so cluster 0 is the largest
    silhouette : mean silhouette of the best split with ``k >= 2`` (cosine or euclidean as asked)
    separation : centroid distance divided by the mean within-cluster RMS radius for the best
        two-way split (a scale-free "gap" measure: > 2 means the clouds barely touch)
    best_k : the k with the highest silhouette among the candidates (kept even if not separated)
    """

    k: int
    labels: np.ndarray
    silhouette: float
    separation: float
    best_k: int


def separation_ratio(X: np.ndarray, labels: np.ndarray) -> float:
    """Distance between the two largest clusters' centroids over their mean RMS radius.

    ``||mu_a - mu_b|| / ((r_a + r_b) / 2)`` with ``r = sqrt(mean ||x - mu||^2)`` in each cluster.
    Invariant to rotations, translations and a common scaling of ``X``.
    """
    values, counts = np.unique(labels, return_counts=True)
    if len(values) < 2:
        return float("nan")
    a, b = values[np.argsort(-counts)[:2]]
    Xa, Xb = X[labels == a].astype(np.float64), X[labels == b].astype(np.float64)
    mu_a, mu_b = Xa.mean(0), Xb.mean(0)
    r_a = np.sqrt(((Xa - mu_a) ** 2).sum(1).mean())
    r_b = np.sqrt(((Xb - mu_b) ** 2).sum(1).mean())
    return float(np.linalg.norm(mu_a - mu_b) / max((r_a + r_b) / 2, 1e-12))


def detect_clusters(
    X: np.ndarray,
    max_k: int = 4,
    min_silhouette: float = 0.5,
    n_pca: int = 50,
    sample: int = 3000,
    seed: int = 0,
) -> Clusters:
    """Find well-separated clusters among the rows of ``X``.

    k-means (k = 2 .. ``max_k``) runs on the first ``n_pca`` principal components; the split with
    the highest silhouette (Rousseeuw 1987) is kept when that silhouette is at least
    ``min_silhouette`` (0.5 and above is conventionally a "reasonable" structure), else the
    layer counts as one cloud (k = 1). Silhouettes are computed on a seeded sample of at most
    ``sample`` rows (they cost O(n^2)).
    """
    Xf = as_float(X)
    n = len(Xf)
    if n < 4 * max_k:
        raise ValueError(f"detect_clusters needs at least {4 * max_k} rows, got {n}")
    Z = PCA(n_components=min(n_pca, Xf.shape[1], n - 1), random_state=seed).fit_transform(Xf)
    idx = subsample(n, sample, seed)
    best = (-1.0, 2, None)
    for k in range(2, max_k + 1):
        labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(Z)
        if len(np.unique(labels[idx])) < 2:
            continue
        score = float(silhouette_score(Z[idx], labels[idx]))
        if score > best[0]:
            best = (score, k, labels)
    score, k, labels = best
    if labels is None:
        return Clusters(1, np.zeros(n, dtype=np.int32), float("nan"), float("nan"), 1)
    labels = _order_by_size(labels)
    sep = separation_ratio(Z, labels)
    if score < min_silhouette:
        return Clusters(1, np.zeros(n, dtype=np.int32), score, sep, k)
    return Clusters(k, labels, score, sep, k)


def _order_by_size(labels: np.ndarray) -> np.ndarray:
    values, counts = np.unique(labels, return_counts=True)
    order = values[np.argsort(-counts, kind="stable")]
    remap = np.empty(values.max() + 1, dtype=np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)
    return remap[labels]


def variance_explained_by(X: np.ndarray, groups: np.ndarray, adjusted: bool = True) -> float:
    """Share of the total variance of the rows of ``X`` explained by a grouping.

    The multivariate eta-squared: ``SS_between / SS_total`` with
    ``SS_between = sum_g n_g ||mu_g - mu||^2`` and ``SS_total = sum_i ||x_i - mu||^2``.
    With many small groups eta-squared is inflated (each group mean absorbs noise), so
    ``adjusted=True`` returns omega-squared (Hays 1963), generalised to vectors:
    ``(SS_between - (k - 1) MS_within) / (SS_total + MS_within)`` with
    ``MS_within = SS_within / (n - k)``. It is near 0 for a grouping unrelated to ``X`` and 1 when
    every row equals its group mean. Invariant to rotation, translation and scaling of ``X``.
    """
    X64 = np.asarray(X, dtype=np.float64)
    codes, groups_idx = np.unique(np.asarray(groups), return_inverse=True)
    n, k = len(X64), len(codes)
    if n <= k:
        raise ValueError(f"need more rows ({n}) than groups ({k})")
    mu = X64.mean(0)
    counts = np.bincount(groups_idx, minlength=k).astype(np.float64)
    sums = np.zeros((k, X64.shape[1]))
    np.add.at(sums, groups_idx, X64)
    means = sums / counts[:, None]
    ss_total = float(((X64 - mu) ** 2).sum())
    ss_between = float((counts * ((means - mu) ** 2).sum(1)).sum())
    if ss_total == 0:
        return float("nan")
    if not adjusted:
        return ss_between / ss_total
    ms_within = (ss_total - ss_between) / (n - k)
    return (ss_between - (k - 1) * ms_within) / (ss_total + ms_within)


def position_bins(
    positions: np.ndarray, edges: tuple[int, ...] = (0, 1, 2, 4, 8, 16, 32)
) -> np.ndarray:
    """Bin word positions as 0, 1, 2-3, 4-7, ... so every group has enough members."""
    return np.searchsorted(np.asarray(edges), np.asarray(positions), side="right") - 1


def first_word_norm_ratio(X: np.ndarray, first: np.ndarray) -> float:
    """Mean norm of the first words' vectors over that of the other words.

    :func:`lmgeometry.measures.similarity.norm_ratio` with ``statistic="mean"``: far above 1 in the
    layers where a decoder run without a BOS token turns its first token into an attention sink with
    massive activations. NaN when either group is empty.
    """
    return norm_ratio(X, first, statistic="mean")


def knn_r2(
    coords: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray | None = None,
    n_neighbors: int = 10,
    n_splits: int = 5,
    seed: int = 0,
) -> float:
    """Cross-validated R^2 of a k-nearest-neighbour regression of ``values`` on ``coords``.

    Each held-out row is predicted by the mean value of its ``n_neighbors`` nearest training
    rows (Euclidean distance in ``coords``; k-NN regression, Stone 1977, "Consistent
    nonparametric regression"), and ``R^2 = 1 - sum (y - y_hat)^2 / sum (y - mean(y))^2`` is
    computed on every held-out fold and averaged over the ``n_splits`` folds (sklearn's
    ``cross_val_score`` with ``KNeighborsRegressor``). Folds are drawn with a fixed ``seed``;
    with ``groups`` (e.g. the sentence of each word) all rows of a group fall in the same fold,
    so a word is never predicted from its own sentence's neighbours.

    Unlike a correlation with one coordinate, this asks whether ``values`` is a smooth
    function of where a row lies, whatever the shape of the curve: a value that runs along a
    rolled-up 1-D curve (a "Swiss roll") in 3-D gives R^2 near 1, values unrelated to the
    coordinates give R^2 near or below 0 (it can be negative: the prediction is then worse than
    the held-out mean).
    """
    from sklearn.model_selection import GroupKFold, KFold, cross_val_score
    from sklearn.neighbors import KNeighborsRegressor

    coords = np.asarray(coords, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    if groups is None:
        cv = KFold(n_splits=n_splits, shuffle=True, random_state=seed)
    else:
        cv = GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    scores = cross_val_score(
        KNeighborsRegressor(n_neighbors=n_neighbors), coords, y, groups=groups, cv=cv,
        scoring="r2",
    )
    return float(np.mean(scores))


def position_knn_r2(
    coords: np.ndarray,
    positions: np.ndarray,
    groups: np.ndarray | None = None,
    n_neighbors: int = 10,
    n_splits: int = 5,
    n_shuffles: int = 5,
    seed: int = 0,
) -> tuple[float, float]:
    """:func:`knn_r2` of the word position, and the same for shuffled positions.

    The baseline permutes ``positions`` across rows (``n_shuffles`` seeded permutations, which
    breaks any link with ``coords`` but keeps their distribution) and returns the largest
    :func:`knn_r2` they reach: what the regression scores by chance.

    Returns
    -------
    r2 : cross-validated R^2 of position
    shuffled : the largest R^2 over the shuffled positions
    """
    positions = np.asarray(positions, dtype=np.float64)
    r2 = knn_r2(coords, positions, groups, n_neighbors, n_splits, seed)
    rng = np.random.default_rng(seed)
    shuffled = max(
        knn_r2(coords, rng.permutation(positions), groups, n_neighbors, n_splits, seed)
        for _ in range(n_shuffles)
    )
    return r2, float(shuffled)


def purity(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Cluster purity: ``(1/n) sum_k max_j |C_k intersect T_j|``.

    Each predicted cluster ``C_k`` is credited with the count of its most frequent gold class
    ``T_j`` (Manning, Raghavan & Schütze 2008, sec. 16.3; the categorisation metric of Baroni et
    al. 2014 and of the Word Embeddings Benchmarks package used by Ethayarajh 2019).

    Parameters
    ----------
    labels_true, labels_pred
        Gold classes and cluster ids, one per item.

    Returns
    -------
    float
        Purity in (0, 1]: 1 when every cluster holds one class; the share of the largest class
        when there is a single cluster.
    """
    t = np.asarray(labels_true)
    p = np.asarray(labels_pred)
    if t.shape != p.shape:
        raise ValueError("labels_true and labels_pred differ in length")
    if t.size == 0:
        raise ValueError("purity needs at least one item")
    table = pd.crosstab(p, t)
    return float(table.to_numpy().max(axis=1).sum() / t.size)


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
