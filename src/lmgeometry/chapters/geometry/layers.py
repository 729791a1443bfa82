"""Per-layer measures of the "Geometry" chapter (seed 000): cluster profiles and projections, the
cluster, variance and manifold measures of one layer (:func:`layer_measures`) with jackknife
intervals over sentence blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lmgeometry.measures.clusters import (
    Clusters,
    as_float,
    detect_clusters,
    first_word_norm_ratio,
    pca_project,
    planar_share_replicates,
    position_bins,
    position_knn_r2,
    separation_replicates,
    variance_explained_jackknife,
)
from lmgeometry.measures.stats import GroupBootstrap, jackknife_interval, percentile_interval

__all__ = [
    "SILHOUETTE",
    "KNN_COMPONENTS",
    "KNN_NEIGHBORS",
    "JACKKNIFE_BLOCKS",
    "Views",
    "cluster_profile",
    "cluster_projections",
    "layer_measures",
]


#: Kaufman & Rousseeuw (1990): an average silhouette above 0.5 is a reasonable cluster
#: structure (0.26-0.50 weak, possibly artificial). A layer *splits* when its best k-means
#: split (k = 2 to 4, top 50 PCs) reaches it.
SILHOUETTE = 0.5


#: Principal components of the larger cluster's words on which the k-NN regression of
#: position runs (seed 000 looked at 3-D projections), and its number of neighbours.
KNN_COMPONENTS = 3


KNN_NEIGHBORS = 10


#: Blocks of sentences of the omega-squared jackknife.
JACKKNIFE_BLOCKS = 20


@dataclass
class Views:
    """What the chapter's figures draw for one model (arrays; not saved in the results file).

    Attributes
    ----------
    words : the drawn words (at most ``point_budget``, re-indexed 0..n-1)
    coords : per layer, the drawn words' (n, 3) coordinates on the layer's first three
        principal components (computed on the whole sample)
    labels : per layer, the drawn words' cluster labels (0 everywhere when it does not split)
    umap_layers, umap_coords : the layers given a 3-D UMAP, and the drawn words' coordinates
    split_layer : the layer whose split is the widest (largest separation), or None
    split_coords : the drawn words of each cluster of ``split_layer`` on their own first two
        principal components (:func:`cluster_projections`)
    """

    words: pd.DataFrame
    coords: list[np.ndarray] = field(default_factory=list)
    labels: list[np.ndarray] = field(default_factory=list)
    umap_layers: list[int] = field(default_factory=list)
    umap_coords: list[np.ndarray] = field(default_factory=list)
    split_layer: int | None = None
    split_coords: list[np.ndarray] = field(default_factory=list)


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


def cluster_projections(
    X: np.ndarray, labels: np.ndarray, seed: int = 0
) -> list[np.ndarray]:
    """Each cluster's rows projected on its own first two principal components.

    Seed 000 did this for GPT-2's two clusters: one of them (its "right" cluster), projected
    alone, showed the position manifold that the global projection flattened. Cluster ``c``'s
    panel is element ``c`` of the list (labels as :func:`detect_clusters` orders them, largest
    first).
    """
    Xf = as_float(X)
    return [pca_project(Xf[labels == c], n_components=2, seed=seed)[0]
            for c in range(int(labels.max()) + 1)]


def _interval(name: str, value: float, reps: np.ndarray, jackknife: bool = False) -> dict:
    fn = jackknife_interval if jackknife else percentile_interval
    lo, hi = fn(reps, value)
    return {name: float(value), f"{name}_lo": lo, f"{name}_hi": hi}


def _cluster_measures(found: Clusters, first: np.ndarray, text: np.ndarray,
                      boot: GroupBootstrap, rows: np.ndarray, previous: Clusters | None
                      ) -> tuple[dict, dict]:
    """Silhouette, separation and first-word shares of one layer's split, with replicates."""
    nan, reps = float("nan"), {}
    has = np.isfinite(found.silhouettes)
    minor = found.labels != 0
    values = {"silhouette": boot.ratio(found.silhouettes[has], rows=rows[has]),
              "separation": separation_replicates(found.coords, found.split_labels, boot, rows)}
    if previous is not None:
        values["separation_carried"] = separation_replicates(
            found.coords, previous.split_labels, boot, rows)
    if found.k >= 2:  # the larger cluster in the layer's 3-D projection (seed 000's view)
        values["larger_planar"] = planar_share_replicates(found.coords[:, :3], ~minor, boot,
                                                          rows)
    if minor.any() and first.any():
        values["first_share"] = boot.ratio(first[minor], rows=rows[minor])
        values["first_recall"] = boot.ratio(minor[first], rows=rows[first])
    row: dict = {"k": found.k, "best_k": found.best_k, "split": found.k >= 2,
                 "minor_share": float(minor.mean())}
    for name in ("silhouette", "separation", "separation_carried", "first_share",
                 "first_recall", "larger_planar"):
        value, rep = values.get(name, (nan, np.full(boot.n_boot, nan)))
        row.update(_interval(name, value, rep))
        reps[name] = rep
    others = pd.Series(text[minor & ~first]).value_counts()
    row["minor_other_top"] = str(others.index[0]) if len(others) else ""
    row["minor_other_top_share"] = float(others.iloc[0] / others.sum()) if len(others) else nan
    return row, reps


def _variance_measures(X: np.ndarray, words: pd.DataFrame, blocks: np.ndarray
                       ) -> tuple[dict, dict]:
    """Omega-squared of position, first word, UPOS and word identity, with jackknife replicates.

    ``position_lead`` is position's omega-squared minus the larger of UPOS's and word
    identity's: above 0 when position explains more of the variance than either.
    """
    position = words["word_index"].to_numpy()
    attributes = {"var_position": position_bins(position),
                  "var_first": (position == 0).astype(np.int8),
                  "var_upos": words["upos"].to_numpy(),
                  "var_word": words["text"].str.lower().to_numpy()}
    row, reps = {}, {}
    for name, groups in attributes.items():
        if len(np.unique(groups)) > 1 and len(np.unique(groups)) < len(groups):
            value, rep = variance_explained_jackknife(X, groups, blocks)
        else:
            value, rep = float("nan"), np.full(len(np.unique(blocks)), np.nan)
        row.update(_interval(name, value, rep, jackknife=True))
        reps[name] = rep
    lead = row["var_position"] - np.fmax(row["var_upos"], row["var_word"])
    reps["position_lead"] = reps["var_position"] - np.fmax(reps["var_upos"], reps["var_word"])
    row.update(_interval("position_lead", lead, reps["position_lead"], jackknife=True))
    return row, reps


def _manifold_measures(X: np.ndarray, words: pd.DataFrame, found: Clusters,
                       boot: GroupBootstrap, rows: np.ndarray, seed: int) -> tuple[dict, dict]:
    """k-NN R^2 of position from the larger cluster's top principal components, vs shuffled."""
    larger = found.labels == 0
    position = words["word_index"].to_numpy()[larger]
    nan = np.full(boot.n_boot, np.nan)
    if larger.sum() < 5 * KNN_NEIGHBORS or len(np.unique(position)) < 2:
        result = None
    else:
        coords, _ = pca_project(X[larger], n_components=min(KNN_COMPONENTS, X.shape[1]),
                                seed=seed)
        result = position_knn_r2(coords, position, words["sentence_id"].to_numpy()[larger],
                                 n_neighbors=KNN_NEIGHBORS, seed=seed, boot=boot,
                                 rows=rows[larger])
    values = {
        "knn_r2": (result.r2, result.r2_reps) if result else (np.nan, nan),
        "knn_shuffled": (result.shuffled, result.shuffled_reps) if result else (np.nan, nan),
    }
    values["knn_gain"] = (values["knn_r2"][0] - values["knn_shuffled"][0],
                          values["knn_r2"][1] - values["knn_shuffled"][1])
    row, reps = {"knn_words": int(larger.sum())}, {}
    for name, (value, rep) in values.items():
        row.update(_interval(name, float(value), rep))
        reps[name] = rep
    return row, reps


def layer_measures(X: np.ndarray, words: pd.DataFrame, boot: GroupBootstrap,
                   rows: np.ndarray, blocks: np.ndarray, *, seed: int = 0,
                   previous: Clusters | None = None) -> tuple[dict, dict, Clusters]:
    """Every measure of one layer under one control, with its 95% interval.

    Parameters
    ----------
    X : (n, d) the layer's vectors of the control's words
    words : their word-table rows (``word_index``, ``sentence_id``, ``text``, ``upos``)
    boot : the model's sentence bootstrap; ``rows`` maps the words to its rows
    blocks : the jackknife block of each word (whole sentences per block)
    previous : the previous layer's clusters (same words), for ``separation_carried``

    Returns
    -------
    row : dict
        ``k``, ``best_k``, ``split`` (silhouette >= :data:`SILHOUETTE`), ``silhouette``,
        ``separation`` (:func:`separation_ratio` of the best split, top 50 PCs),
        ``separation_carried`` (the previous layer's split measured in this layer),
        ``minor_share`` (share of the words outside the largest cluster), ``larger_planar``
        (share of the largest cluster's variance on the layer's first three principal
        components along its own top two directions, when the layer splits:
        :func:`planar_share_replicates`), ``first_share``
        (share of first words among them), ``first_recall`` (share of the first words that
        are among them), ``minor_other_top`` (their most frequent other word, with its share),
        ``var_position``, ``var_first``, ``var_upos``, ``var_word`` (omega-squared of position
        bins, first word or not, UPOS, lower-cased word), ``position_lead``, ``knn_r2``,
        ``knn_shuffled``, ``knn_gain`` (k-NN R^2 of position within the larger cluster, for
        shuffled positions, and the difference), ``norm_ratio_first``, ``mean_norm``; each
        statistic with ``_lo`` and ``_hi``.
    replicates : dict
        Bootstrap (or jackknife, for the omega-squared columns) replicates of each statistic.
    clusters : :class:`Clusters`
    """
    X = as_float(X)
    first = words["word_index"].to_numpy() == 0
    found = detect_clusters(X, max_k=4, min_silhouette=SILHOUETTE, seed=seed)
    row, reps = _cluster_measures(found, first, words["text"].str.lower().to_numpy(), boot,
                                  rows, previous)
    for part in (_variance_measures(X, words, blocks),
                 _manifold_measures(X, words, found, boot, rows, seed)):
        row.update(part[0])
        reps.update(part[1])
    row["norm_ratio_first"] = first_word_norm_ratio(X, first)
    row["mean_norm"] = float(np.linalg.norm(X.astype(np.float64), axis=1).mean())
    row["n_words"] = len(X)
    return row, reps, found


def _blocks(sentences: np.ndarray, n_blocks: int, seed: int) -> np.ndarray:
    """Each row's jackknife block: whole sentences dealt at random into ``n_blocks`` blocks."""
    labels, codes = np.unique(sentences, return_inverse=True)
    deal = np.random.default_rng(seed).permutation(len(labels)) % n_blocks
    return deal[codes]
