"""Chapter "Geometry" (seed 000): per-layer projections, clusters and what drives them.

For every layer of a store, :func:`layer_geometry` summarises the global shape of the word
vectors with the measures of :mod:`lmgeometry.measures.clusters` (cluster split, variance
explained by position, first word, part of speech and word identity, the position-manifold
test); :func:`model_geometry` adds the sampled PCA/UMAP projections the figures show and
:func:`findings` the chapter's generated sentences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lmgeometry.measures.clusters import (
    as_float,
    detect_clusters,
    first_word_norm_ratio,
    pca_project,
    position_bins,
    position_knn_r2,
    umap_project,
    variance_explained_by,
)
from lmgeometry.measures.similarity import subsample
from lmgeometry.report.prose import layer_ranges

if TYPE_CHECKING:
    from lmgeometry.measures.clusters import Clusters

__all__ = [
    "model_geometry",
    "cluster_profile",
    "cluster_projections",
    "findings",
    "FIRST_WORD_SHARE",
    "hover_labels",
    "KNN_COMPONENTS",
    "KNN_NEIGHBORS",
    "layer_geometry",
    "leading_attribute",
    "MANIFOLD_R2",
    "ModelGeometry",
    "POSITION0_SPLIT",
    "sample_projections",
    "umap_layers",
    "widest_split",
]


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


#: Principal components of the words after the first on which :func:`position_knn_r2` runs
#: (seed 000 looked at 3-D projections), and the number of neighbours of the regression.
KNN_COMPONENTS = 3

KNN_NEIGHBORS = 10


def layer_geometry(
    X: np.ndarray, words: pd.DataFrame, seed: int = 0, max_k: int = 4, sample: int = 3000
) -> tuple[dict, Clusters]:
    """Numbers that describe one layer's global geometry.

    ``X`` and ``words`` are row-aligned; ``words`` needs ``word_index`` (position of the word
    in its sentence), ``text`` and ``upos``, and may have ``sentence_id``. Returns a dict with

    * ``pc1_var``, ``pc1_3_var``: explained-variance ratios of the first (three) principal
      components;
    * the clusters found by :func:`detect_clusters` (``k``, ``best_k``, ``silhouette``,
      ``separation``), the share of the words in the smaller clusters (``minor_share``), the
      share of first words among them (``minor_position0_share``), the share of all first words
      they hold (``position0_in_minor``), and the most frequent of their other words
      (``minor_other_top``, with its share of them ``minor_other_top_share``);
    * variance explained, omega-squared (:func:`variance_explained_by`), over all words by the
      word's position (binned, :func:`position_bins`: ``var_position``), by whether it is the
      first word of its sentence (``var_first``), by its UPOS tag (``var_upos``) and by its
      identity (lower-cased text, ``var_word``); and the same three without the first words
      (``var_position_later``, ``var_upos_later``, ``var_word_later``). When the first words
      are far-away outliers they alone can make ``var_position`` near 1 (then ``var_first`` is
      about as large) and can push ``var_word`` below 0; the ``_later`` columns say what
      organises the rest;
    * ``norm_ratio_first``: :func:`first_word_norm_ratio`; ``mean_norm``: mean vector norm;
    * ``position_knn_r2`` and ``position_knn_shuffled``: :func:`position_knn_r2` of position
      among the words after the first, on their own first ``KNN_COMPONENTS`` principal
      components, folds grouped by ``sentence_id`` when present. Seed 000's position manifold
      (position running along a rolled-up curve) would give an R^2 near 1.
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
    text = words["text"].str.lower().to_numpy()
    upos = words["upos"].to_numpy()

    def omega2(mask: np.ndarray, groups: np.ndarray) -> float:
        g = groups[mask]
        return variance_explained_by(Xf[mask], g) if len(np.unique(g)) > 1 else nan

    everyone = np.ones(len(Xf), dtype=bool)
    Xl = Xf[later]
    if len(Xl) >= 20 and len(np.unique(position[later])) > 1:
        coords, _ = pca_project(Xl, n_components=min(KNN_COMPONENTS, Xl.shape[1]), seed=seed)
        sentence = words["sentence_id"].to_numpy()[later] if "sentence_id" in words else None
        knn, knn_shuffled = position_knn_r2(
            coords, position[later], sentence, n_neighbors=KNN_NEIGHBORS, seed=seed
        )
    else:
        knn, knn_shuffled = nan, nan
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
        "var_position": omega2(everyone, position_bins(position)),
        "var_first": omega2(everyone, first.astype(np.int8)),
        "var_upos": omega2(everyone, upos),
        "var_word": omega2(everyone, text),
        "var_position_later": omega2(later, position_bins(position)),
        "var_upos_later": omega2(later, upos),
        "var_word_later": omega2(later, text),
        "norm_ratio_first": first_word_norm_ratio(Xf, first),
        "position_knn_r2": knn,
        "position_knn_shuffled": knn_shuffled,
        "mean_norm": float(np.linalg.norm(Xf.astype(np.float64), axis=1).mean()),
    }
    return row, clusters


@dataclass
class ModelGeometry:
    """Per-layer geometry of one model's sampled words (see :func:`model_geometry`).

    Attributes
    ----------
    spec : the model as the chapter names it
    kind : "encoder" or "decoder" (from the store's model facts; "" when unknown)
    rows : store rows of the sampled words (sorted), the same in every layer
    words : the sampled words (store word table rows, re-indexed 0..n-1)
    summary : one row per layer: ``model``, ``layer``, ``depth`` (layer / number of
        transformer layers, so 0 is the embedding output and 1 the last layer) and the
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
    coords = [pca_project(store.layer(i, rows), n_components=3, seed=seed)[0]
              for i in range(store.n_layers)]
    return rows, words, coords


def model_geometry(store, spec: str, point_budget: int, seed: int = 0) -> ModelGeometry:
    """Run :func:`sample_projections` and :func:`layer_geometry` on every layer.

    ``store`` is a :class:`lmgeometry.activations.store.Store`; at most ``point_budget`` words are
    sampled (seeded, :func:`subsample`), the same words in every layer.
    """
    rows, words, coords = sample_projections(store, point_budget, seed)
    table, clusters = [], []
    last = max(store.n_layers - 1, 1)
    for layer in range(store.n_layers):
        X = store.layer(layer, rows)
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

    Seed 000 did this for GPT-2's two clusters: one of them (its "right" cluster), projected
    alone, showed the position manifold that the global projection flattened. Cluster ``c``'s
    panel is element ``c`` of the list (labels as :func:`detect_clusters` orders them, largest
    first).
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
    coords = [umap_project(store.layer(int(i), rows), 3, seed=seed) for i in chosen]
    return [int(i) for i in chosen], coords


#: A split whose smaller clusters hold at least this share of the first words is a position-0
#: split; it is pure when at least this share of the smaller clusters' words are first words.
POSITION0_SPLIT = 0.9


#: A layer whose leading attribute is position counts as led by *whether the word is first*
#: when the first-word indicator's omega-squared is at least this share of position's.
FIRST_WORD_SHARE = 0.9


#: Cross-validated k-NN R^2 of position (:func:`position_knn_r2`, words after the first) at or
#: above which a layer counts as holding a position manifold: position is then close to a
#: function of where a word lies in the top principal components, as along seed 000's
#: "Swiss roll" (a clean 1-D curve scores near 1; the cut is a choice, the values are shown).
MANIFOLD_R2 = 0.8


_ATTRIBUTES = {"var_position": "position", "var_upos": "part of speech",
               "var_word": "word identity"}

_FIRST = "whether the word is its sentence's first"


def leading_attribute(summary: pd.DataFrame, later: bool = False) -> pd.Series:
    """Per layer, the attribute with the largest omega-squared (position, UPOS, word identity).

    With ``later=True`` the ``_later`` columns (words after the first) are compared. Over all
    words, a layer led by position whose ``var_first`` is at least ``FIRST_WORD_SHARE`` of
    ``var_position`` is labelled "whether the word is its sentence's first": position's share
    then comes from the first words alone.
    """
    suffix = "_later" if later else ""
    cols = {f"{c}{suffix}": name for c, name in _ATTRIBUTES.items()}
    frame = summary[list(cols)].astype(float).fillna(-np.inf)
    top = frame.idxmax(axis=1).map(cols)
    if not later and "var_first" in summary:
        pos = summary["var_position"].astype(float)
        by_first = (top == "position") & (pos > 0) & (
            summary["var_first"].astype(float) >= FIRST_WORD_SHARE * pos
        )
        top = top.where(~by_first, _FIRST)
    return top


def _counted(labels: pd.Series) -> str:
    counts = labels.value_counts(sort=False).sort_values(ascending=False, kind="stable")
    return ", ".join(f"{name} in {c} layer{'s' if c > 1 else ''}" for name, c in counts.items())


def _has(summary: pd.DataFrame, *cols: str) -> bool:
    return all(c in summary and summary[c].astype(float).notna().any() for c in cols)


def findings(summary: pd.DataFrame, model: str, kind: str = "") -> list[str]:
    """Sentences stating what one model's per-layer summary shows, generated from the numbers.

    ``summary`` has one row per layer with the keys of :func:`layer_geometry` plus ``layer``
    (columns added after the first version, such as ``var_first`` or ``position_knn_r2``, may
    be missing; their sentences are then left out). ``kind`` ("encoder" or "decoder") picks the
    model of seed 000 the last sentence compares with: GPT-2 for decoders (two well-separated
    clusters whose separation decreases in the last layer, and a position manifold in one of
    them), BERT for encoders (no such split).
    """
    summary = summary.sort_values("layer").reset_index(drop=True)
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
    if _has(summary, "norm_ratio_first"):
        ratio = summary["norm_ratio_first"].astype(float)
        big = summary.loc[ratio >= 10, "layer"].tolist()
        out.append(
            f"The first words' mean hidden-state norm is {ratio.min():.1f} to {ratio.max():.1f} "
            f"times that of the other words (largest at layer "
            f"{int(summary.loc[ratio.idxmax(), 'layer'])})"
            + (f"; at least 10 times in layers {layer_ranges(big)}." if big else ".")
        )
    pos_max = summary.loc[summary["var_position"].astype(float).idxmax()]
    sentence = (
        f"Over all words, the attribute that explains most of a layer's variance (ω²) is "
        f"{_counted(leading_attribute(summary))}. Position explains at most "
        f"{pos_max['var_position']:.0%} of the variance (layer {int(pos_max['layer'])})"
    )
    if _has(summary, "var_first"):
        fmax = summary.loc[summary["var_first"].astype(float).idxmax()]
        sentence += (
            f", and whether a word is the first of its sentence alone explains at most "
            f"{fmax['var_first']:.0%} (layer {int(fmax['layer'])})"
        )
    if _has(summary, "var_position_later"):
        lmax = summary.loc[summary["var_position_later"].astype(float).idxmax()]
        sentence += (
            f". Without the first words, position explains at most "
            f"{lmax['var_position_later']:.0%} (layer {int(lmax['layer'])})"
        )
        if _has(summary, "var_upos_later", "var_word_later"):
            sentence += (
                f", and the attribute that explains most is "
                f"{_counted(leading_attribute(summary, later=True))}"
            )
    out.append(sentence + ".")
    for col, name in _ATTRIBUTES.items():
        values = summary[col].astype(float)
        neg = summary[values < 0]
        if neg.empty:
            continue
        sentence = (
            f"{name[0].upper() + name[1:]}'s ω² over all words is below 0 in layers "
            f"{layer_ranges(neg['layer'].tolist())} (down to {values.min():.2f}); ω² subtracts "
            f"the between-group variance that chance alone would give, so it is negative when a "
            f"grouping explains less than that"
        )
        later_col = f"{col}_later"
        if later_col in neg and neg[later_col].astype(float).notna().all():
            lo, hi = neg[later_col].astype(float).min(), neg[later_col].astype(float).max()
            sentence += (
                f". Without the first words it is {lo:.2f} to {hi:.2f} in those layers"
                + (", so it is the first words that push it below 0" if lo >= 0 else "")
            )
        out.append(sentence + ".")
    manifold: list[int] = []
    above: list[int] = []
    if _has(summary, "position_knn_r2", "position_knn_shuffled"):
        r2 = summary["position_knn_r2"].astype(float)
        shuffled = summary["position_knn_shuffled"].astype(float)
        rmax = summary.loc[r2.idxmax()]
        manifold = summary.loc[r2 >= MANIFOLD_R2, "layer"].tolist()
        above = summary.loc[r2 > shuffled, "layer"].tolist()
        out.append(
            f"Among the words after the first, a {KNN_NEIGHBORS}-nearest-neighbour regression on "
            f"their top {KNN_COMPONENTS} principal components predicts position with "
            f"cross-validated R² up to {rmax['position_knn_r2']:.2f} (layer "
            f"{int(rmax['layer'])}); with shuffled positions it reaches at most "
            f"{shuffled.max():.2f}, and the real positions score above their shuffled baseline "
            f"in {len(above)} of {n_layers} layers. R² >= {MANIFOLD_R2} (position close to a "
            f"function of where a word lies: the rule for a position manifold) holds "
            + (f"in layers {layer_ranges(manifold)}." if manifold else "in no layer.")
        )
    last = summary.iloc[-1]
    prev = summary.iloc[-2] if n_layers >= 2 else None
    if kind == "decoder" and prev is not None:
        sentence = (
            f"The last layer ({int(last['layer'])}) is the hidden state after the model's final "
            f"normalisation, not the last block's raw output: from layer {int(prev['layer'])} "
            f"to {int(last['layer'])} the mean norm goes from {prev['mean_norm']:.1f} to "
            f"{last['mean_norm']:.1f}"
        )
        if _has(summary, "norm_ratio_first"):
            sentence += (
                f", the first words' norm ratio from {prev['norm_ratio_first']:.1f} to "
                f"{last['norm_ratio_first']:.1f}"
            )
        sentence += (
            f" and the best silhouette from {prev['silhouette']:.2f} to "
            f"{last['silhouette']:.2f}"
            + (" (the split disappears)" if prev["k"] >= 2 and last["k"] == 1 else "")
        )
        out.append(sentence + ".")
    if kind == "decoder":
        if len(pos0) == n_layers:
            verdict = "the first words form a separate cluster in every layer"
        elif len(pos0):
            verdict = (
                f"the first words form a separate cluster in {len(pos0)} of {n_layers} layers "
                f"(layers {layer_ranges(pos0['layer'].tolist())})"
            )
        else:
            verdict = "no layer has a separate cluster of first words"
        if prev is not None:
            verdict += (
                "; as in the seed, the separation decreases at the last layer"
                if last["silhouette"] < prev["silhouette"]
                else "; unlike the seed, the separation does not decrease at the last layer"
            )
        if _has(summary, "position_knn_r2"):
            rmax = float(summary["position_knn_r2"].astype(float).max())
            if manifold:
                verdict += (
                    f"; among the words after the first, position lies along a manifold in "
                    f"layers {layer_ranges(manifold)} (k-NN R² >= {MANIFOLD_R2}), which fits "
                    f"the seed's Swiss roll"
                )
            else:
                verdict += (
                    f"; no layer shows the seed's position manifold (k-NN R² of position at "
                    f"most {rmax:.2f}, below {MANIFOLD_R2})"
                    + (
                        f", although position is predicted above its shuffled baseline in "
                        f"{len(above)} of {n_layers} layers"
                        if above
                        else ""
                    )
                )
        out.append(
            "Compared with seed 000, which showed GPT-2 as two well-separated clusters whose "
            f"separation decreases in the last layer, with a position manifold in one of them: "
            f"{verdict}."
        )
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
