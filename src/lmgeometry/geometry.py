"""Global geometry of a layer's word vectors: projections, clusters and what drives them.

Seed 000 looked at per-layer PCA and UMAP projections of GPT-2 and BERT and described, by eye,
two well-separated clusters in GPT-2 (one holding the tokens at position 0) and a position
manifold. This module turns those observations into numbers:

* :func:`pca_project` and :func:`umap_project` give the projections the figures show;
* :func:`detect_clusters` finds well-separated clusters and reports how separated they are;
* :func:`variance_explained_by` says how much of a layer's variance one word attribute
  (position, part of speech, word identity) accounts for, so "position is the dominant global
  feature" becomes a comparison of three numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score


def subsample(n: int, budget: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of at most ``budget`` of ``n`` items, drawn without replacement."""
    if budget >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=budget, replace=False))


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


def component_correlations(coords: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Spearman correlation of each projected coordinate with ``values`` (e.g. the position)."""
    from scipy.stats import spearmanr

    return np.array([spearmanr(coords[:, j], values).statistic for j in range(coords.shape[1])])


def cluster_profile(words: pd.DataFrame, labels: np.ndarray, top: int = 5) -> pd.DataFrame:
    """Describe each cluster of a layer: size, share of position-0 words, positions, top words.

    ``words`` needs ``word_index`` (position of the word in its sentence) and ``text``.
    """
    rows = []
    for c in np.unique(labels):
        part = words[labels == c]
        rows.append(
            {
                "cluster": int(c),
                "share": len(part) / len(words),
                "position0_share": float((part["word_index"] == 0).mean()),
                "mean_position": float(part["word_index"].mean()),
                "top_words": ", ".join(part["text"].str.lower().value_counts().index[:top]),
            }
        )
    return pd.DataFrame(rows)


def layer_geometry(
    X: np.ndarray, words: pd.DataFrame, seed: int = 0, max_k: int = 4, sample: int = 3000
) -> tuple[dict, Clusters]:
    """Numbers that describe one layer's global geometry.

    Returns a dict with the explained-variance ratios of the first three principal components,
    the clusters found by :func:`detect_clusters` (k, silhouette, separation), the share of
    position-0 words in the smaller clusters (``minor_position0_share``) and the share of all
    position-0 words that the smaller clusters hold (``position0_in_minor``), the most frequent
    word among the smaller clusters' other words (``minor_other_top``, with its share of them
    ``minor_other_top_share``), and the variance
    explained (omega-squared, see :func:`variance_explained_by`) by the word's position
    (binned), its UPOS tag and its identity (lower-cased text). ``var_position_later`` is the
    variance explained by position among the words at positions 1 and later only: when the
    first words are far-away outliers they alone can make ``var_position`` near 1, and this
    column says whether position still organises the rest. ``position_rho`` is the largest
    absolute Spearman correlation between position and the first three principal components of
    the largest cluster projected on its own (all words when k = 1): seed 000's "position
    manifold" inside GPT-2's larger cluster shows as a high value. ``X`` and ``words`` are
    row-aligned.
    """
    Xf = as_float(X)
    nan = float("nan")
    _, explained = pca_project(Xf, n_components=3, seed=seed)
    clusters = detect_clusters(Xf, max_k=max_k, seed=seed, sample=sample)
    position = words["word_index"].to_numpy()
    minor = clusters.labels != 0
    first = position == 0
    later = ~first
    others = words.loc[minor & later, "text"].str.lower().value_counts()
    row = {
        "pc1_var": explained[0],
        "pc1_3_var": float(explained.sum()),
        "k": clusters.k,
        "best_k": clusters.best_k,
        "silhouette": clusters.silhouette,
        "separation": clusters.separation,
        "minor_share": float(minor.mean()),
        "minor_position0_share": float((position[minor] == 0).mean()) if minor.any() else nan,
        "position0_share": float(first.mean()),
        "position0_in_minor": float(minor[first].mean()) if first.any() else nan,
        "minor_other_top": str(others.index[0]) if len(others) else "",
        "minor_other_top_share": float(others.iloc[0] / others.sum()) if len(others) else nan,
        "var_position": variance_explained_by(Xf, position_bins(position)),
        "var_position_later": (
            variance_explained_by(Xf[later], position_bins(position[later]))
            if len(np.unique(position_bins(position[later]))) > 1
            else nan
        ),
        "position_rho": float(np.nanmax(np.abs(component_correlations(
            pca_project(Xf[~minor], n_components=3, seed=seed)[0], position[~minor])))),
        "var_upos": variance_explained_by(Xf, words["upos"].to_numpy()),
        "var_word": variance_explained_by(Xf, words["text"].str.lower().to_numpy()),
        "mean_norm": float(np.linalg.norm(Xf.astype(np.float64), axis=1).mean()),
    }
    return row, clusters


@dataclass
class ModelGeometry:
    """Per-layer geometry of one model's sampled words (see :func:`analyse_model`).

    Attributes
    ----------
    spec : the model as the chapter names it
    kind : "encoder" or "decoder" (from the store's model facts; "" when unknown)
    rows : store rows of the sampled words (sorted), the same in every layer
    words : the sampled words (store word table rows, re-indexed 0..n-1)
    summary : one row per layer: ``model``, ``layer``, ``depth`` (layer / last layer) and the
        keys of :func:`layer_geometry`
    coords : per layer, the (n, 3) PCA coordinates (the first two columns are the 2-D view)
    clusters : per layer, the :class:`Clusters` found
    """

    spec: str
    kind: str
    rows: np.ndarray
    words: pd.DataFrame
    summary: pd.DataFrame
    coords: list[np.ndarray]
    clusters: list[Clusters]


def sample_projections(
    store, point_budget: int, seed: int = 0
) -> tuple[np.ndarray, pd.DataFrame, list[np.ndarray]]:
    """3-D :func:`pca_project` of the same sampled words in every layer of a store.

    Returns the sampled store rows (:func:`subsample`, at most ``point_budget``), their words
    (re-indexed 0..n-1) and, per layer, the (n, 3) coordinates (the first two columns are the
    2-D projection).
    """
    rows = subsample(len(store.words), point_budget, seed)
    words = store.words.iloc[rows].reset_index(drop=True)
    coords = [pca_project(as_float(store.layer(i)[rows]), n_components=3, seed=seed)[0]
              for i in range(store.n_layers)]
    return rows, words, coords


def analyse_model(store, spec: str, point_budget: int, seed: int = 0) -> ModelGeometry:
    """Run :func:`sample_projections` and :func:`layer_geometry` on every layer.

    ``store`` is a :class:`lmgeometry.store.Store`; at most ``point_budget`` words are sampled
    (seeded, :func:`subsample`), the same words in every layer.
    """
    rows, words, coords = sample_projections(store, point_budget, seed)
    table, clusters = [], []
    last = max(store.n_layers - 1, 1)
    for layer in range(store.n_layers):
        X = as_float(store.layer(layer)[rows])
        row, found = layer_geometry(X, words, seed=seed)
        table.append({"model": spec, "layer": layer, "depth": layer / last, **row})
        clusters.append(found)
    kind = str(store.meta.get("model", {}).get("kind", ""))
    return ModelGeometry(spec, kind, rows, words, pd.DataFrame(table), coords, clusters)


def hover_labels(words: pd.DataFrame) -> np.ndarray:
    """Hover text of each word: ``"text (pos i)"`` with ``i`` its position in the sentence."""
    return (words["text"] + " (pos " + words["word_index"].astype(str) + ")").to_numpy()


def widest_split(summary: pd.DataFrame) -> int | None:
    """The layer whose well-separated split (k >= 2) has the largest separation, or None."""
    split = summary[summary["k"] >= 2]
    if split.empty:
        return None
    return int(split.loc[split["separation"].idxmax(), "layer"])


def cluster_projections(
    X: np.ndarray, labels: np.ndarray, seed: int = 0
) -> list[np.ndarray]:
    """Each cluster's rows projected on its own first two principal components.

    Seed 000 did this for GPT-2's two clusters: the larger one, projected alone, showed the
    position manifold that the global projection flattened. Cluster ``c``'s panel is element
    ``c`` of the list (labels as :func:`detect_clusters` orders them, largest first).
    """
    Xf = as_float(X)
    return [pca_project(Xf[labels == c], n_components=2, seed=seed)[0]
            for c in range(int(labels.max()) + 1)]


def umap_layers(
    store, rows: np.ndarray, n_show: int, seed: int = 0
) -> tuple[list[int], list[np.ndarray]]:
    """3-D :func:`umap_project` of ``n_show`` evenly spaced layers (first and last included).

    Returns the chosen layer indices and, for each, the (len(rows), 3) coordinates.
    """
    chosen = np.unique(np.linspace(0, store.n_layers - 1, max(n_show, 1)).round().astype(int))
    coords = [umap_project(as_float(store.layer(int(i))[rows]), 3, seed=seed) for i in chosen]
    return [int(i) for i in chosen], coords


def layer_ranges(layers: list[int]) -> str:
    """``[2, 3, 4, 7, 9, 10]`` -> ``"2-4, 7, 9-10"``."""
    parts: list[str] = []
    for layer in sorted(int(v) for v in layers):
        if parts and parts[-1][1] == layer - 1:
            parts[-1][1] = layer
        else:
            parts.append([layer, layer])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in parts)


#: A split whose smaller clusters hold at least this share of the first words is a position-0
#: split; it is pure when at least this share of the smaller clusters' words are first words.
POSITION0_SPLIT = 0.9


def findings(summary: pd.DataFrame, model: str, kind: str = "") -> list[str]:
    """Sentences stating what one model's per-layer summary shows, generated from the numbers.

    ``summary`` has one row per layer with the keys of :func:`layer_geometry` plus ``layer``.
    ``kind`` ("encoder" or "decoder") picks the model of seed 000 the last sentence compares
    with: GPT-2 for decoders (two clusters in every layer, one of them the position-0 tokens),
    BERT for encoders (no such split).
    """
    n_layers = len(summary)
    split = summary[summary["k"] >= 2]
    pos0 = split[split["position0_in_minor"].astype(float) >= POSITION0_SPLIT]
    pure = pos0[pos0["minor_position0_share"].astype(float) >= POSITION0_SPLIT]
    mixed = pos0[pos0["minor_position0_share"].astype(float) < POSITION0_SPLIT]
    out = []
    if len(split):
        best = split.loc[split["separation"].idxmax()]
        out.append(
            f"**{model}**: {len(split)} of {n_layers} layers split into well-separated clusters "
            f"(silhouette >= 0.5; layers {layer_ranges(split['layer'].tolist())}). The widest "
            f"gap is at layer {int(best['layer'])} (k = {int(best['k'])}, silhouette "
            f"{best['silhouette']:.2f}, centroid distance {best['separation']:.1f} "
            f"within-cluster radii); its smaller clusters hold {best['minor_share']:.1%} of the "
            f"words, of which {best['minor_position0_share']:.0%} are the first word of their "
            f"sentence, and they hold {best['position0_in_minor']:.0%} of all first words "
            f"(first words are {best['position0_share']:.1%} of all words)."
        )
        sentence = (
            f"In {len(pos0)} of the {len(split)} split layers the smaller clusters hold at "
            f"least {POSITION0_SPLIT:.0%} of the first words"
        )
        if len(pos0):
            sentence += f" (layers {layer_ranges(pos0['layer'].tolist())})"
        if len(pure):
            sentence += (
                f"; in layers {layer_ranges(pure['layer'].tolist())} at least "
                f"{POSITION0_SPLIT:.0%} of their words are first words"
            )
        if len(mixed) and (mixed["minor_other_top"].fillna("") != "").any():
            word = mixed["minor_other_top"].mode().iloc[0]
            shares = mixed.loc[mixed["minor_other_top"] == word, "minor_other_top_share"]
            sentence += (
                f"; in layers {layer_ranges(mixed['layer'].tolist())} first words are "
                f"{mixed['minor_position0_share'].min():.0%} to "
                f"{mixed['minor_position0_share'].max():.0%} of them, and the other words are "
                f"most often \"{word}\" ({shares.min():.0%} to {shares.max():.0%} of those)"
            )
        out.append(sentence + ".")
    else:
        top = summary.loc[summary["silhouette"].idxmax()]
        out.append(
            f"**{model}**: no layer splits into well-separated clusters (the best k-means "
            f"silhouette, {top['silhouette']:.2f} at layer {int(top['layer'])}, is below 0.5)."
        )
    drivers = summary[["var_position", "var_upos", "var_word"]].idxmax(axis=1)
    names = {"var_position": "position", "var_upos": "part of speech", "var_word": "word identity"}
    counts = drivers.map(names).value_counts()
    parts = ", ".join(f"{name} in {c} layer{'s' if c > 1 else ''}" for name, c in counts.items())
    pos_max = summary.loc[summary["var_position"].idxmax()]
    sentence = (
        f"Of position, part of speech and word identity, the attribute that explains most of a "
        f"layer's variance is {parts}. Position explains at most "
        f"{pos_max['var_position']:.0%} of the variance (layer {int(pos_max['layer'])})"
    )
    later = summary["var_position_later"].astype(float) if "var_position_later" in summary else None
    if later is not None and later.notna().any():
        lmax = summary.loc[later.idxmax()]
        sentence += (
            f"; among the words after the first it explains at most "
            f"{lmax['var_position_later']:.0%} (layer {int(lmax['layer'])})"
        )
    out.append(sentence + ".")
    if "position_rho" in summary:
        rho = summary.loc[summary["position_rho"].idxmax()]
        strong = summary.loc[summary["position_rho"] >= 0.7, "layer"].tolist()
        out.append(
            f"Projected on its own principal components, the largest cluster (every word when a "
            f"layer does not split) has a component that follows position with Spearman "
            f"|rho| up to {rho['position_rho']:.2f} (layer {int(rho['layer'])}); |rho| >= 0.7 "
            + (f"in layers {layer_ranges(strong)}." if strong else "in no layer.")
        )
    if kind == "decoder":
        if len(pos0) == n_layers:
            verdict = "as GPT-2 did in the seed, every layer splits off the first words"
        elif len(pos0):
            verdict = (
                f"as with GPT-2 in the seed, the first words are split off from the rest, but "
                f"in {len(pos0)} of {n_layers} layers, not in every layer"
            )
        else:
            verdict = "unlike GPT-2 in the seed, no layer has a separate cluster of first words"
        if "position_rho" in summary:
            strong = summary.loc[summary["position_rho"] >= 0.7, "layer"].tolist()
            verdict += (
                f"; a component of the largest cluster follows position closely (|rho| >= "
                f"0.7) in layers {layer_ranges(strong)}, which fits the seed's position "
                f"manifold"
                if strong
                else "; no component of the largest cluster follows position closely (|rho| < "
                "0.7 in every layer), so nothing here matches the seed's position manifold"
            )
        out.append(f"Compared with seed 000: {verdict}.")
    elif kind == "encoder":
        if split.empty:
            verdict = "as BERT did in the seed, no layer splits into well-separated clusters"
        else:
            verdict = (
                f"unlike BERT in the seed, {len(split)} of {n_layers} layers split into "
                f"well-separated clusters"
            )
        out.append(f"Compared with seed 000: {verdict}.")
    return out
