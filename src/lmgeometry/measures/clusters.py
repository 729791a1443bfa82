"""Global geometry of a layer's word vectors: projections, clusters and what drives them.

Seed 000 looked at per-layer PCA and UMAP projections of GPT-2 and BERT and described, by eye,
two well-separated clusters in GPT-2 (their separation decreasing in the last layer) and, inside
the larger one, a manifold "similar to the Swiss roll" along which the token's position runs.
This module turns those observations into numbers:

* :func:`pca_project`, :func:`umap_project` and :func:`tsne_project` give the projections
  the figures show (t-SNE: seed 003's Figure 2);
* :func:`detect_clusters` finds well-separated clusters and reports how separated they are
  (:func:`separation_replicates` gives the separation a bootstrap interval);
* :func:`variance_explained_by` says how much of a layer's variance one word attribute
  (position, being the first word, part of speech, word identity) accounts for, so "position
  is the dominant global feature" becomes a comparison of numbers, with and without the first
  words (:func:`first_word_norm_ratio` measures how far out those lie), with a jackknife
  interval from :func:`variance_explained_jackknife`;
* :func:`position_knn_r2` asks whether position is a smooth function of where a word lies in
  the top principal components (a position manifold), whatever the curve's shape.

The chapter's per-layer tables are built by :mod:`lmgeometry.chapters.geometry.analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_samples

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import norm_ratio, subsample
from lmgeometry.measures.stats import GroupBootstrap, group_sums

__all__ = [
    "cluster_purity",
    "purity",
    "purity_credit",
    "as_float",
    "Clusters",
    "detect_clusters",
    "first_word_norm_ratio",
    "knn_predictions",
    "knn_r2",
    "label_silhouette_by_layer",
    "pca_project",
    "planar_share_replicates",
    "position_bins",
    "position_knn_r2",
    "PositionR2",
    "r2_replicates",
    "separation_ratio",
    "separation_replicates",
    "tsne_project",
    "umap_project",
    "unit_kmeans",
    "variance_explained_by",
    "variance_explained_jackknife",
]


def as_float(X: np.ndarray) -> np.ndarray:
    """A float32 copy-on-need of ``X`` (stores hold float16; sklearn wants float32/64)."""
    return np.asarray(X, dtype=np.float32)


def pca_project(
    X: np.ndarray, n_components: int = 3, seed: int = 0, *, fit: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Project the rows of ``X`` on their first principal components.

    PCA centres the data: coordinates are ``(X - mean) @ V[:, :k]`` with ``V`` the right singular
    vectors of the centred matrix. With ``fit``, the mean and ``V`` are those of ``fit`` (e.g. a
    sample of all the layer's words, as seed 000 projected every token at once) and ``X`` is
    only projected.

    Returns
    -------
    coords : (n, n_components) array
    explained : (n_components,) explained-variance ratios (of ``fit`` when given)
    """
    pca = PCA(n_components=n_components, random_state=seed, svd_solver="randomized")
    if fit is None:
        coords = pca.fit_transform(as_float(X))
    else:
        coords = pca.fit(as_float(fit)).transform(as_float(X))
    return coords.astype(np.float32), pca.explained_variance_ratio_.astype(np.float64)


def tsne_project(X: np.ndarray, *, perplexity: float = 30.0, pca_components: int = 50,
                 max_iter: int = 500, seed: int = 0) -> np.ndarray:
    """2-D t-SNE coordinates of the rows of ``X`` (van der Maaten & Hinton 2008).

    The raw rows, as seed 003 embeds them (Fig. 2: the last token of each sentence, coloured
    by label), are reduced to their first ``pca_components`` principal components (so a rogue
    dimension weighs in every distance in proportion to its variance, as in the raw space),
    then embedded by scikit-learn's Barnes-Hut t-SNE with a PCA initialisation and the
    automatic learning rate (Kobak & Berens 2019), for ``max_iter`` iterations (500: the
    PCA start makes the default 1,000 unnecessary for a few hundred points, at half the
    cost): deterministic for a seed. Distances between clusters in a t-SNE map mean little;
    whether points of one label group together is what it shows.
    """
    from sklearn.manifold import TSNE

    Z = np.asarray(X, dtype=np.float64)
    k = min(pca_components, Z.shape[1], max(len(Z) - 1, 1))
    Z = PCA(n_components=k, random_state=seed).fit_transform(Z)
    perplexity = min(perplexity, max((len(Z) - 1) / 3, 1.0))
    tsne = TSNE(n_components=2, perplexity=perplexity, init="pca", learning_rate="auto",
                max_iter=max_iter, random_state=seed)
    return tsne.fit_transform(Z).astype(np.float32)


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
    split_labels : the best split's labels (largest cluster 0) even when it is not kept
    silhouettes : each row's silhouette in the best split (NaN for rows outside the sample the
        silhouettes were computed on); their mean is ``silhouette``
    coords : the principal-component coordinates the clustering ran on
    """

    k: int
    labels: np.ndarray
    silhouette: float
    separation: float
    best_k: int
    split_labels: np.ndarray | None = None
    silhouettes: np.ndarray | None = None
    coords: np.ndarray | None = None


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


def separation_replicates(
    Z: np.ndarray, labels: np.ndarray, boot: GroupBootstrap, rows: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    """:func:`separation_ratio` of the two largest clusters and its bootstrap replicates.

    The centroids ``mu_c = S_c / n_c`` and radii ``r_c = sqrt(Q_c / n_c - ||mu_c||^2)`` are
    functions of per-sentence sums (counts ``n_c``, coordinate sums ``S_c``, squared norms
    ``Q_c``), so ``boot`` (:class:`lmgeometry.measures.stats.GroupBootstrap`) resamples the
    sentences without refitting the clusters: the interval is conditional on the labels.
    ``rows`` maps the rows of ``Z`` to the bootstrap's rows (all, in order, when None).

    Returns
    -------
    value : float
        Equal to ``separation_ratio(Z, labels)``.
    replicates : array of shape (n_boot,)
    """
    Z64 = np.asarray(Z, dtype=np.float64)
    values, counts = np.unique(labels, return_counts=True)
    if len(values) < 2:
        return float("nan"), np.full(boot.n_boot, np.nan)
    parts = []
    for c in values[np.argsort(-counts, kind="stable")[:2]]:
        mask = (labels == c).astype(np.float64)
        parts.append([boot.sums(mask, rows), boot.sums(Z64 * mask[:, None], rows),
                      boot.sums((Z64 ** 2).sum(1) * mask, rows)])

    def ratio(k: int) -> np.ndarray:
        (n_a, s_a, q_a), (n_b, s_b, q_b) = ([p[k] for p in part] for part in parts)
        with np.errstate(invalid="ignore", divide="ignore"):
            mu_a, mu_b = s_a / n_a[..., None], s_b / n_b[..., None]
            r_a = np.sqrt(np.maximum(q_a / n_a - (mu_a ** 2).sum(-1), 0))
            r_b = np.sqrt(np.maximum(q_b / n_b - (mu_b ** 2).sum(-1), 0))
            return np.linalg.norm(mu_a - mu_b, axis=-1) / np.maximum((r_a + r_b) / 2, 1e-12)

    return float(ratio(0)), ratio(1)


def planar_share_replicates(
    Z: np.ndarray, mask: np.ndarray, boot: GroupBootstrap, rows: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    """How flat a cluster is in a projection: the share of its variance on its top two
    principal directions, with bootstrap replicates.

    ``(l_1 + l_2) / sum_j l_j`` with ``l_1 >= l_2 >= ...`` the eigenvalues of the covariance
    of the rows of ``Z`` (e.g. a layer's coordinates on its first three principal components,
    seed 000's 3-D projection) where ``mask`` is True: 1 for a cloud that lies in a plane,
    2/3 for an isotropic 3-D cloud. The covariance ``Q / n - mu mu^T`` is a function of sums
    (count ``n``, coordinate sums ``S``, sums of outer products ``Q``), so ``boot`` resamples
    the sentences without recomputing the projection (conditional on it and on ``mask``).
    NaN with fewer than ``d + 1`` rows.
    """
    Z64 = np.asarray(Z, dtype=np.float64)[mask]
    rows = np.flatnonzero(mask) if rows is None else np.asarray(rows)[mask]
    d = Z64.shape[1]
    if len(Z64) <= d:
        return float("nan"), np.full(boot.n_boot, np.nan)
    n, n_reps = boot.sums(np.ones(len(Z64)), rows)
    s, s_reps = boot.sums(Z64, rows)
    q, q_reps = boot.sums((Z64[:, :, None] * Z64[:, None, :]).reshape(len(Z64), -1), rows)

    def share(n: np.ndarray, s: np.ndarray, q: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=np.float64)[..., None, None]
        mu = s.reshape(*s.shape[:-1], d, 1) / n
        cov = q.reshape(*q.shape[:-1], d, d) / n - mu @ np.swapaxes(mu, -1, -2)
        with np.errstate(invalid="ignore", divide="ignore"):
            eig = np.sort(np.linalg.eigvalsh(cov), axis=-1)[..., ::-1]
            return eig[..., :2].sum(-1) / eig.sum(-1)

    return float(share(n, s, q)), share(n_reps, s_reps, q_reps)


def label_silhouette_by_layer(states: ArrayLike, labels: ArrayLike, counts: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray]:
    """How well each layer separates the rows by their labels: the mean silhouette of the
    labels (Rousseeuw 1987), per layer, with bootstrap replicates.

    ``s_i = (b_i - a_i) / max(a_i, b_i)``, with ``a_i`` the mean Euclidean distance from row
    ``i`` to the other rows of its label and ``b_i`` that to the rows of the nearest other
    label: near 1 when the labels lie apart, near 0 when they are mixed (a permutation of the
    labels gives about 0). Euclidean on the raw vectors, so a high-variance (rogue) dimension
    weighs as it does in seed 003's t-SNE views (Fig. 2). The replicates are the weighted
    means of the same ``s_i`` under ``counts`` (``(n_boot, n)`` multinomial counts of the
    rows, shared by all layers so differences between layers keep their correlation),
    conditional on the distances.

    Parameters
    ----------
    states : array of shape (layers, n, d)
    labels : array of shape (n,)
    counts : array of shape (n_boot, n)

    Returns
    -------
    means : array of shape (layers,)
    replicates : array of shape (n_boot, layers)
    """
    y = np.asarray(labels)
    S = np.column_stack([silhouette_samples(np.asarray(X, dtype=np.float64), y)
                         for X in states])
    return S.mean(axis=0), (counts @ S) / counts.sum(axis=1, keepdims=True)


@float_arrays("X")
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
    best: tuple[float, int, np.ndarray | None, np.ndarray | None] = (-1.0, 2, None, None)
    for k in range(2, max_k + 1):
        labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(Z)
        if len(np.unique(labels[idx])) < 2:
            continue
        values = silhouette_samples(Z[idx], labels[idx])
        if values.mean() > best[0]:
            best = (float(values.mean()), k, labels, values)
    score, k, labels, values = best
    ones = np.zeros(n, dtype=np.int32)
    if labels is None:
        return Clusters(1, ones, float("nan"), float("nan"), 1, ones, np.full(n, np.nan), Z)
    labels = _order_by_size(labels)
    silhouettes = np.full(n, np.nan)
    silhouettes[idx] = values
    sep = separation_ratio(Z, labels)
    kept = (k, labels) if score >= min_silhouette else (1, ones)
    return Clusters(*kept, score, sep, k, labels, silhouettes, Z)


def _order_by_size(labels: np.ndarray) -> np.ndarray:
    values, counts = np.unique(labels, return_counts=True)
    order = values[np.argsort(-counts, kind="stable")]
    remap = np.empty(values.max() + 1, dtype=np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)
    return remap[labels]


@float_arrays("X", "groups")
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
    counts = np.bincount(groups_idx, minlength=k).astype(np.float64)
    sums = group_sums(groups_idx, X64, k)
    total = X64.sum(0)
    between = float(((sums ** 2).sum(1) / counts).sum())
    return _omega(float((X64 ** 2).sum()), total, n, between, k, adjusted)


def _omega(sum_sq, total, n, between_raw, k, adjusted: bool = True):
    """Omega-squared (or eta-squared) from ``sum ||x||^2``, ``sum x``, ``n``,
    ``sum_g ||sum_g x||^2 / n_g`` and the number of groups ``k`` (arrays broadcast)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        grand = (np.asarray(total) ** 2).sum(-1) / n
        ss_total = sum_sq - grand
        ss_between = between_raw - grand
        if not adjusted:
            out = ss_between / ss_total
        else:
            ms_within = (ss_total - ss_between) / (n - k)
            out = (ss_between - (k - 1) * ms_within) / (ss_total + ms_within)
        out = np.where((ss_total > 0) & (n > k), out, np.nan)
    return float(out) if np.ndim(out) == 0 else out


def variance_explained_jackknife(
    X: np.ndarray, groups: np.ndarray, blocks: np.ndarray, adjusted: bool = True
) -> tuple[float, np.ndarray]:
    """:func:`variance_explained_by` and its delete-a-block jackknife replicates.

    ``blocks[i]`` is the block (a set of whole sentences) of row ``i``; replicate ``j`` is
    omega-squared without block ``j``'s rows. Each replicate is computed from the full sums
    less the block's (per-group sums ``sum_g x``, counts, ``sum ||x||^2``), so the cost is one
    pass over ``X``. Feed the replicates to
    :func:`lmgeometry.measures.stats.jackknife_interval`.

    Returns
    -------
    value : float
    replicates : array of shape (n_blocks,)
    """
    X64 = np.asarray(X, dtype=np.float64)
    labels, g = np.unique(np.asarray(groups), return_inverse=True)
    block_ids, b = np.unique(np.asarray(blocks), return_inverse=True)
    n, k, nb = len(X64), len(labels), len(block_ids)
    sq = (X64 ** 2).sum(1)
    n_g = np.bincount(g, minlength=k).astype(np.float64)
    t_g = group_sums(g, X64, k)
    a_g = (t_g ** 2).sum(1) / n_g
    value = _omega(float(sq.sum()), X64.sum(0), n, float(a_g.sum()), k, adjusted)
    pair, p = np.unique(b.astype(np.int64) * k + g, return_inverse=True)
    pb, pg = pair // k, pair % k
    left_n = n_g[pg] - np.bincount(p, minlength=len(pair))
    left_t = t_g[pg] - group_sums(p, X64, len(pair))
    with np.errstate(invalid="ignore", divide="ignore"):
        left_a = np.where(left_n > 0, (left_t ** 2).sum(1) / left_n, 0.0)
    delta = np.bincount(pb, weights=left_a - a_g[pg], minlength=nb)
    vanished = np.bincount(pb, weights=(left_n == 0).astype(np.float64), minlength=nb)
    n_j = n - np.bincount(b, minlength=nb)
    reps = _omega(sq.sum() - np.bincount(b, weights=sq, minlength=nb),
                  X64.sum(0) - group_sums(b, X64, nb), n_j, a_g.sum() + delta, k - vanished,
                  adjusted)
    return value, np.atleast_1d(reps)


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


def knn_predictions(
    coords: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray | None = None,
    n_neighbors: int = 10,
    n_splits: int = 5,
    seed: int = 0,
) -> np.ndarray:
    """Out-of-fold predictions of a k-nearest-neighbour regression of ``values`` on ``coords``.

    Each held-out row is predicted by the mean value of its ``n_neighbors`` nearest training
    rows (Euclidean distance in ``coords``; k-NN regression, Stone 1977, "Consistent
    nonparametric regression") in ``n_splits``-fold cross-validation drawn with a fixed
    ``seed``; with ``groups`` (e.g. the sentence of each word) all rows of a group fall in the
    same fold, so a word is never predicted from its own sentence's neighbours.
    """
    from sklearn.model_selection import GroupKFold, KFold, cross_val_predict
    from sklearn.neighbors import KNeighborsRegressor

    coords = np.asarray(coords, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    if groups is None:
        cv = KFold(n_splits=n_splits, shuffle=True, random_state=seed)
    else:
        cv = GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    model = KNeighborsRegressor(n_neighbors=n_neighbors)
    return cross_val_predict(model, coords, y, groups=groups, cv=cv)


def r2_replicates(
    values: np.ndarray, predictions: np.ndarray, boot: GroupBootstrap | None = None,
    rows: np.ndarray | None = None,
) -> tuple[float, np.ndarray | None]:
    """``R^2 = 1 - sum (y - y_hat)^2 / sum (y - mean y)^2`` over all rows, and its replicates.

    The sums are per-sentence sums, so ``boot`` resamples sentences without refitting (the
    predictions are held fixed); ``rows`` maps the rows to the bootstrap's rows.
    """
    y = np.asarray(values, dtype=np.float64)
    e = (y - np.asarray(predictions, dtype=np.float64)) ** 2
    parts = np.column_stack([e, y, y ** 2, np.ones_like(y)])
    total = parts.sum(0)

    def r2(t: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1 - t[..., 0] / (t[..., 2] - t[..., 1] ** 2 / t[..., 3])

    if boot is None:
        return float(r2(total)), None
    return float(r2(total)), r2(boot.sums(parts, rows)[1])


def knn_r2(
    coords: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray | None = None,
    n_neighbors: int = 10,
    n_splits: int = 5,
    seed: int = 0,
) -> float:
    """Cross-validated R^2 of a k-nearest-neighbour regression of ``values`` on ``coords``.

    :func:`r2_replicates` of the :func:`knn_predictions`: R^2 pooled over the held-out rows of
    every fold. Unlike a correlation with one coordinate, this asks whether ``values`` is a
    smooth function of where a row lies, whatever the shape of the curve: a value that runs
    along a rolled-up 1-D curve (a "Swiss roll") in 3-D gives R^2 near 1, values unrelated to
    the coordinates give R^2 near or below 0 (it can be negative: the prediction is then worse
    than the mean).
    """
    predictions = knn_predictions(coords, values, groups, n_neighbors, n_splits, seed)
    return r2_replicates(values, predictions)[0]


@dataclass(frozen=True)
class PositionR2:
    """Result of :func:`position_knn_r2`: R^2 of position and of shuffled positions.

    ``r2_reps`` and ``shuffled_reps`` are bootstrap replicates (None without a bootstrap);
    ``shuffled`` is the mean over the shuffles.
    """

    r2: float
    shuffled: float
    r2_reps: np.ndarray | None = None
    shuffled_reps: np.ndarray | None = None


def position_knn_r2(
    coords: np.ndarray,
    positions: np.ndarray,
    groups: np.ndarray | None = None,
    n_neighbors: int = 10,
    n_splits: int = 5,
    n_shuffles: int = 5,
    seed: int = 0,
    *,
    boot: GroupBootstrap | None = None,
    rows: np.ndarray | None = None,
) -> PositionR2:
    """:func:`knn_r2` of the word position, and the same for shuffled positions.

    The baseline permutes ``positions`` across rows (``n_shuffles`` seeded permutations, which
    breaks any link with ``coords`` but keeps their distribution): what the regression scores
    by chance, about ``-1 / n_neighbors`` (the mean of k unrelated values still varies). With
    ``boot`` (:class:`lmgeometry.measures.stats.GroupBootstrap`; ``rows`` maps the rows to
    its rows) both come with replicates over resampled sentences, the shuffled one averaged
    over the shuffles in each replicate.
    """
    positions = np.asarray(positions, dtype=np.float64)
    pred = knn_predictions(coords, positions, groups, n_neighbors, n_splits, seed)
    r2, r2_reps = r2_replicates(positions, pred, boot, rows)
    rng = np.random.default_rng(seed)
    shuffled, reps = [], []
    for _ in range(n_shuffles):
        y = rng.permutation(positions)
        pred = knn_predictions(coords, y, groups, n_neighbors, n_splits, seed)
        value, rep = r2_replicates(y, pred, boot, rows)
        shuffled.append(value)
        reps.append(rep)
    shuffled_reps = None if boot is None else np.mean(reps, axis=0)
    return PositionR2(r2, float(np.mean(shuffled)), r2_reps, shuffled_reps)


def purity_credit(labels_true: ArrayLike, labels_pred: ArrayLike) -> np.ndarray:
    """Whether each item belongs to its cluster's most frequent gold class.

    The mean of the credits is :func:`purity`; as per-item values they can be resampled
    (a cluster's majority class held fixed). Ties go to the class that sorts first.
    """
    t = np.asarray(labels_true)
    p = np.asarray(labels_pred)
    if t.shape != p.shape:
        raise ValueError("labels_true and labels_pred differ in length")
    if t.size == 0:
        raise ValueError("purity needs at least one item")
    classes, ti = np.unique(t, return_inverse=True)
    clusters, pi = np.unique(p, return_inverse=True)
    table = np.zeros((len(clusters), len(classes)), dtype=np.int64)
    np.add.at(table, (pi, ti), 1)
    return table.argmax(axis=1)[pi] == ti


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
    return float(purity_credit(labels_true, labels_pred).mean())


def unit_kmeans(X: np.ndarray, n_clusters: int, seed: int = 0, n_init: int = 2) -> np.ndarray:
    """k-means cluster ids of the rows of ``X`` after unit-normalising them.

    Unit rows make the clustering follow cosine geometry like the other measures of the book;
    k-means keeps the best of ``n_init`` seeded starts.
    """
    X = np.asarray(X, dtype=np.float32)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = X / np.where(norms == 0, 1.0, norms)
    return KMeans(n_clusters=n_clusters, n_init=n_init, random_state=seed).fit_predict(X)


def cluster_purity(
    X: np.ndarray,
    labels: np.ndarray,
    n_clusters: int | None = None,
    seed: int = 0,
    n_init: int = 2,
) -> float:
    """:func:`purity` of :func:`unit_kmeans` clusters (k = number of classes unless given)."""
    k = n_clusters or len(np.unique(labels))
    return purity(labels, unit_kmeans(X, k, seed, n_init))
