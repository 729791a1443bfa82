"""Chapter "Senses" (seeds 000 and 001): sense clusters, WiC and polysemy, per layer.

Applies the measures of :mod:`lmgeometry.measures.senses` to every layer of a store: 1-NN sense
separability of SemCor targets (:func:`separability_by_layer`), WiC thresholds
(:func:`wic_by_layer`), self-similarity against sense and context counts
(:func:`polysemy_tables`), the occurrence views of the figures and the generated sentences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.io.data import sense_labels
from lmgeometry.measures import clusters
from lmgeometry.measures.contextual import word_measures
from lmgeometry.measures.senses import (
    TRANSFORMS,
    evaluate_wic,
    loo_1nn_sense_accuracy,
    most_frequent_sense_baseline,
    polysemy_regression,
    sense_separability,
    separability_summary,
    transform,
)
from lmgeometry.measures.stats import wilson_interval
from lmgeometry.report.prose import layer_ranges, points

__all__ = [
    "context_snippet",
    "findings",
    "occurrence_views",
    "polysemy_by_layer",
    "polysemy_findings",
    "polysemy_tables",
    "RARE_SENSES",
    "selfsim_by_bins",
    "separability_by_layer",
    "spread_layers",
    "summary",
    "view_separability",
    "wic_by_layer",
    "word_views",
]


def _pair_cosines(X: np.ndarray, pairs: pd.DataFrame) -> np.ndarray:
    a, b = X[pairs["row1"].to_numpy()], X[pairs["row2"].to_numpy()]
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / np.where(na * nb > 0, na * nb, 1.0)


def wic_by_layer(store: Any, pairs: pd.DataFrame,
                 transforms: Sequence[str] = TRANSFORMS) -> pd.DataFrame:
    """WiC accuracy per layer and transform: cosine of the two targets, threshold from train.

    Transforms are fitted on all the store's rows of the layer (train, dev and test
    sentences), which uses no labels.
    """
    rows = []
    split = pairs["split"].to_numpy()
    y = pairs["label"].to_numpy(dtype=bool)
    for layer in range(store.n_layers):
        raw = store.layer(layer, dtype=np.float64)
        for how in transforms:
            sim = _pair_cosines(transform(raw, how), pairs)
            r = evaluate_wic(sim[split == "train"], y[split == "train"],
                             sim[split == "dev"], y[split == "dev"],
                             sim[split == "test"], y[split == "test"])
            rows.append({"layer": layer, "transform": how, **r})
    return pd.DataFrame(rows)


def separability_by_layer(store: Any, transforms: Sequence[str] = TRANSFORMS,
                          word_col: str = "target") -> pd.DataFrame:
    """:func:`separability_summary` of the sense-tagged targets per layer and transform.

    Each :func:`transform` is fitted on all the store's rows of the layer (every word of the
    sentences, no labels); the targets' transformed vectors are then scored with
    :func:`sense_separability`.

    Returns
    -------
    pandas.DataFrame
        ``layer, transform`` and the :func:`separability_summary` columns.
    """
    words = store.words
    tagged = words["sense_key"].notna().to_numpy() & words[word_col].notna().to_numpy()
    rows = []
    for layer in range(store.n_layers):
        raw = store.layer(layer, dtype=np.float64)
        for how in transforms:
            X = transform(raw, how)[tagged]
            frame = sense_separability(X, words[tagged].reset_index(drop=True), word_col)
            rows.append({"layer": layer, "transform": how, **separability_summary(frame)})
    return pd.DataFrame(rows)


def polysemy_tables(store: Any, min_contexts: int = 5, seed: int = 0) -> pd.DataFrame:
    """Per layer (1..L) and word: SelfSim, WordNet sense count and distinct contexts.

    SelfSim uses the ``corrected`` preset of :mod:`lmgeometry.measures.contextual`; contexts are
    distinct sentences.

    A word's sense count is the most frequent ``n_senses`` of its occurrences (spaCy's lemma
    and POS decide it); words without one, or with none in WordNet, are left out.

    Returns
    -------
    pandas.DataFrame
        ``layer, word, selfsim, n_senses, n_sentences, log_senses, log_contexts``.
    """

    words = store.words
    key = words["text"].str.lower()
    senses_of = (words.assign(word=key).dropna(subset=["n_senses"])
                 .groupby("word")["n_senses"].agg(lambda s: s.mode().iloc[0]))
    tables = []
    for layer in range(1, store.n_layers):
        table = word_measures(store.layer(layer), words, "corrected",
                           seed, min_contexts=min_contexts, measures=("selfsim",))
        table["n_senses"] = table["word"].map(senses_of).astype(float)
        table = table[table["n_senses"] >= 1]  # no WordNet entry: no sense count
        tables.append(table.assign(layer=layer, log_senses=np.log(table["n_senses"]),
                                   log_contexts=np.log(table["n_sentences"])))
    cols = ["layer", "word", "selfsim", "n_senses", "n_sentences", "log_senses", "log_contexts"]
    return pd.concat(tables, ignore_index=True)[cols]


def polysemy_by_layer(tables: pd.DataFrame) -> pd.DataFrame:
    """Per layer: :func:`polysemy_regression` of SelfSim on log sense count and log number of
    contexts, over the words of :func:`polysemy_tables`.

    Returns
    -------
    pandas.DataFrame
        ``layer, n_words, r2`` and ``coef_/se_/ci_low_/ci_high_/t_/p_`` for ``log_senses`` and
        ``log_contexts``.
    """
    rows = []
    for layer, table in tables.groupby("layer", sort=True):
        r = polysemy_regression(table, "selfsim", ("log_senses", "log_contexts"))
        rows.append({"layer": int(layer), "n_words": r["n"], "r2": r["r2"],
                     **{f"{k}_{name}": v for name, d in r["coefficients"].items()
                        for k, v in d.items()}})
    return pd.DataFrame(rows)


def selfsim_by_bins(tables: pd.DataFrame, column: str, edges: Sequence[float]) -> pd.DataFrame:
    """Mean SelfSim per layer of the words whose ``column`` falls in each bin.

    Bins are ``[edges[k], edges[k+1])``; the last edge may be ``inf``. Labels read
    ``"lo-hi"`` on integers (``"lo"`` for a one-value bin, ``"lo+"`` for an open one).

    Returns
    -------
    pandas.DataFrame
        ``layer, bin, mean_selfsim, n_words`` (empty bins left out).
    """
    edges = list(edges)
    labels = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if math.isinf(hi):
            labels.append(f"{lo:g}+")
        elif hi - lo == 1:
            labels.append(f"{lo:g}")
        else:
            labels.append(f"{lo:g}-{hi - 1:g}")
    binned = tables.assign(bin=pd.cut(tables[column], edges, right=False, labels=labels))
    out = (binned.dropna(subset=["bin"]).groupby(["layer", "bin"], observed=True)["selfsim"]
           .agg(mean_selfsim="mean", n_words="size").reset_index())
    out["bin"] = out["bin"].astype(str)
    return out




def findings(separability: pd.DataFrame, wic: pd.DataFrame, model: str,
             views: pd.DataFrame | None = None) -> list[str]:
    """Sentences on one model's sense measures, all computed from the per-layer tables.

    Parameters
    ----------
    separability
        :func:`separability_by_layer` rows of one model (``layer, transform, accuracy_1nn,
        mfs_baseline, gain, silhouette, n_words``).
    wic
        :func:`wic_by_layer` rows of one model; the best layer is chosen on dev and its test
        accuracy is reported with a Wilson 95% interval (or said to be missing).
    model
        Name used in the text.
    views
        Optional :func:`view_separability` rows of one model (``method`` "pca" / "umap").
    """
    s = separability[separability["transform"] == "raw"].sort_values("layer")
    last = int(s["layer"].max())
    best = s.loc[s["gain"].idxmax()]
    n_beat = int((s["gain"] > 0).sum())
    if best["gain"] > 0:
        verdict = (f"beats the most-frequent-sense baseline in {n_beat} of {len(s)} layers; it is "
                   f"best at layer {int(best['layer'])} of {last} "
                   f"({best['layer'] / max(last, 1):.0%} of the depth)")
    else:
        verdict = (f"never beats the most-frequent-sense baseline (in any of {len(s)} layers); "
                   f"it comes closest at layer {int(best['layer'])} of {last}")
    out = [
        f"**{model}**: leave-one-out 1-NN sense accuracy (is a word's nearest other occurrence "
        f"of the same SemCor sense?) {verdict}, with {best['accuracy_1nn']:.1%} against "
        f"{best['mfs_baseline']:.1%} ({points(best['gain'])}, {int(best['n_words'])} target "
        f"words); at layer 0 the gain is {points(s['gain'].iloc[0])}."
    ]
    if "n_occurrences" in s and int(best["n_occurrences"]) > 0:

        lo, hi = wilson_interval(float(best["accuracy_1nn"]), int(best["n_occurrences"]))
        near = s.loc[s["accuracy_1nn"] >= lo, "layer"].astype(int).tolist()
        interval = (f"the 95% Wilson interval of the best accuracy ({lo:.1%} to {hi:.1%} over "
                    f"{int(best['n_occurrences'])} occurrences; a rough guide, as the accuracy "
                    "is a mean over words)")
        out.append(
            f"Layers {layer_ranges(near)} all reach {interval}, so the best layer is one of a "
            "plateau rather than a sharp peak." if len(near) > 1 else
            f"No other layer reaches {interval}."
        )
    if "silhouette" in s and s["silhouette"].notna().any():
        sb = s.loc[s["silhouette"].idxmax()]
        out.append(
            f"The senses do not form separate clouds: their silhouette peaks at "
            f"{sb['silhouette']:.2f} (layer {int(sb['layer'])}; 1 would be tight, separated "
            f"groups, 0 overlapping ones)." if sb["silhouette"] < 0.25 else
            f"The silhouette of the senses peaks at {sb['silhouette']:.2f} (layer "
            f"{int(sb['layer'])})."
        )
    w = wic[wic["transform"] == "raw"].sort_values("layer")
    if len(w):
        wb = w.loc[w["dev_accuracy"].idxmax()]
        text = (f"On WiC, a cosine threshold fitted on the training pairs is best on dev at "
                f"layer {int(wb['layer'])} ({wb['dev_accuracy']:.1%}; layer 0: "
                f"{w['dev_accuracy'].iloc[0]:.1%}; chance 50%)")
        if pd.notna(wb.get("test_accuracy", math.nan)) and int(wb.get("n_test", 0)) > 0:
            lo, hi = wilson_interval(float(wb["test_accuracy"]), int(wb["n_test"]))
            text += (f"; at that layer the test accuracy is {wb['test_accuracy']:.1%} "
                     f"(95% interval {lo:.1%} to {hi:.1%} over {int(wb['n_test'])} pairs: "
                     + ("above chance)." if lo > 0.5 else "not distinguishable from chance)."))
        else:
            text += "; no test labels were available, so only dev is reported."
        out.append(text)
    for how in TRANSFORMS[1:]:
        t = separability[separability["transform"] == how]
        tw = wic[wic["transform"] == how]
        if not len(t):
            continue
        text = (f"With {how}, the best 1-NN gain is {points(t['gain'].max())} (layer "
                f"{int(t.loc[t['gain'].idxmax(), 'layer'])}; raw: {points(best['gain'])})")
        if len(tw) and len(w):
            text += (f" and the best WiC dev accuracy {tw['dev_accuracy'].max():.1%} (raw: "
                     f"{w['dev_accuracy'].max():.1%})")
        out.append(text + ".")
    if views is not None and len(views):
        parts = []
        for method in ("pca", "umap"):
            v = views[views["method"] == method]
            if len(v):
                vb = v.loc[v["accuracy_1nn"].idxmax()]
                full_gain = vb["accuracy_full"] - vb["mfs_baseline"]
                kept = ((vb["accuracy_1nn"] - vb["mfs_baseline"]) / full_gain
                        if full_gain > 0 else math.nan)
                parts.append(
                    f"in 2-D {method.upper()} views ({int(vb['n_words'])} words) at most "
                    f"{vb['accuracy_1nn']:.1%} (layer {int(vb['layer'])}; the same occurrences "
                    f"in the full space: {vb['accuracy_full']:.1%}, MFS "
                    f"{vb['mfs_baseline']:.1%}"
                    + (f"; the view keeps {kept:.0%} of the full space's gain over MFS)"
                       if np.isfinite(kept) else ")")
                )
        out.append("The seed's pictures, measured: 1-NN sense accuracy is " + "; ".join(parts)
                   + ".")
    return out


def polysemy_findings(polysemy: pd.DataFrame, model: str) -> list[str]:
    """One sentence on :func:`polysemy_by_layer`: in how many layers each predictor matters."""
    n = len(polysemy)
    sig = {name: int(((polysemy[f"ci_high_{col}"] < 0) | (polysemy[f"ci_low_{col}"] > 0)).sum())
           for name, col in (("senses", "log_senses"), ("contexts", "log_contexts"))}
    neg_ctx = int((polysemy["ci_high_log_contexts"] < 0).sum())
    neg_sen = int((polysemy["ci_high_log_senses"] < 0).sum())
    ctx_larger = int((polysemy["coef_log_contexts"].abs()
                      > polysemy["coef_log_senses"].abs()).sum())
    return [
        f"Regressing self-similarity on both counts ({int(polysemy['n_words'].iloc[0])} words), "
        f"the number of contexts has a coefficient whose 95% interval excludes zero in "
        f"{sig['contexts']} of {n} layers ({neg_ctx} of them negative: more contexts, less "
        f"self-similar), the number of senses in {sig['senses']} of {n} ({neg_sen} negative); "
        f"the contexts' coefficient is the larger in size in {ctx_larger} of {n} layers; "
        f"the median R^2 is {polysemy['r2'].median():.2f}."
    ]


def summary(separability: pd.DataFrame, wic: pd.DataFrame) -> pd.DataFrame:
    """Coarse, machine-stable per-model summary (the chapter's nbval-checked output)."""
    rows = {}
    for model, s in separability[separability["transform"] == "raw"].groupby("model", sort=False):
        w = wic[(wic["model"] == model) & (wic["transform"] == "raw")]
        rows[model] = {
            "target words": int(s["n_words"].max()),
            "1-NN beats MFS by > 5 points somewhere": bool((s["gain"] > 0.05).any()),
            "WiC dev > 55% somewhere": bool((w["dev_accuracy"] > 0.55).any()),
        }
    return pd.DataFrame(rows).T


def context_snippet(sentence: str, start: int, end: int, width: int = 40) -> str:
    """The word at ``sentence[start:end]`` in brackets with up to ``width`` characters each side.

    Example: ``context_snippet("I ran home", 2, 5, 3)`` is ``"I [ran] ho..."``.
    """
    left = sentence[max(0, start - width):start]
    right = sentence[end:end + width]
    return (("..." if start > width else "") + left + "[" + sentence[start:end] + "]" + right
            + ("..." if end + width < len(sentence) else ""))


RARE_SENSES = "(senses seen fewer than {k} times)"


def occurrence_views(store: Any, target: str, layers: Sequence[int], method: str = "pca",
                     seed: int = 0, word_col: str = "target",
                     sentences: Sequence[str] | None = None,
                     min_sense_count: int = 3) -> dict[str, Any]:
    """2-D projections of one target's sense-tagged occurrences in chosen layers (seed 000).

    Each layer is projected on its own, fitted on the target's occurrences only: PCA (first
    two components) or UMAP (:mod:`lmgeometry.chapters.geometry`; with at most ``n - 1``
    neighbours).

    Parameters
    ----------
    sentences
        The corpus sentences (indexed by ``sentence_id``); when given the hover text is
        :func:`context_snippet` of each occurrence, otherwise the word form.
    min_sense_count
        Senses with fewer occurrences share one display label (:data:`RARE_SENSES`), so the
        legend stays readable; ``keys`` keeps every sense.

    Returns
    -------
    dict
        ``panels`` (list of (n, 2) arrays), ``senses`` (display labels, :func:`sense_labels`),
        ``keys`` (the sense keys), ``hover``, ``layers`` and ``rows`` (the occurrences' rows of
        ``store.words``).
    """
    import warnings


    words = store.words
    rows = np.flatnonzero((words[word_col] == target).to_numpy()
                          & words["sense_key"].notna().to_numpy())
    if len(rows) < 3:
        raise ValueError(f"{target!r} has {len(rows)} sense-tagged occurrences; need 3")
    keys = words["sense_key"].to_numpy()[rows]
    names = sense_labels(sorted(set(keys)))
    panels = []
    for i in layers:
        X = store.layer(i, rows)
        if method == "pca":
            panels.append(clusters.pca_project(X, n_components=2, seed=seed)[0])
        elif method == "umap":
            with warnings.catch_warnings():  # "n_jobs overridden by random_state"
                warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
                panels.append(clusters.umap_project(X, n_components=2, seed=seed,
                                                    n_neighbors=min(15, len(rows) - 1)))
        else:
            raise ValueError(f"method must be 'pca' or 'umap', not {method!r}")
    if sentences is None:
        hover = words["text"].to_numpy()[rows]
    else:
        w = words.iloc[rows]
        hover = np.array([context_snippet(sentences[int(sid)], int(a), int(b))
                          for sid, a, b in zip(w["sentence_id"], w["start"], w["end"],
                                               strict=True)])
    counts = pd.Series(keys).value_counts()
    rare = RARE_SENSES.format(k=min_sense_count)
    labels = np.array([names[k] if counts[k] >= min_sense_count else rare for k in keys])
    return {"panels": panels, "senses": labels, "keys": keys, "hover": hover,
            "layers": list(layers), "rows": rows}


def word_views(store: Any, targets: Sequence[str], layers: Sequence[int], method: str = "pca",
               seed: int = 0, word_col: str = "target", sentences: Sequence[str] | None = None,
               min_sense_count: int = 3) -> dict[str, Any]:
    """:func:`occurrence_views` of several targets, shaped for
    :func:`lmgeometry.report.plots.choice_layer_slider`: ``coords``, ``color`` and ``hover`` (and
    ``keys`` and ``rows``), each a dict keyed by target, and ``background``: the display label
    of the rare senses."""
    views = {t: occurrence_views(store, t, layers, method, seed, word_col, sentences,
                                 min_sense_count)
             for t in targets}
    return {"coords": {t: v["panels"] for t, v in views.items()},
            "color": {t: v["senses"] for t, v in views.items()},
            "hover": {t: v["hover"] for t, v in views.items()},
            "keys": {t: v["keys"] for t, v in views.items()},
            "rows": {t: v["rows"] for t, v in views.items()},
            "background": RARE_SENSES.format(k=min_sense_count)}


def view_separability(views: dict[str, dict[str, Any]], layers: Sequence[int],
                      method: str, store: Any = None) -> pd.DataFrame:
    """Leave-one-out 1-NN sense accuracy *inside the 2-D views* of :func:`word_views`.

    This puts a number on what seed 000 judged by eye: whether the senses of a word are
    visible in a 2-D PCA or UMAP picture. Neighbours are Euclidean in the projection
    (:func:`loo_1nn_sense_accuracy` with ``metric="euclidean"``), with singleton senses dropped
    as in :func:`sense_separability` (senses are ``views["keys"]``, not the display labels);
    the result averages over the words. Given the ``store``
    the views came from, ``accuracy_full`` is the cosine 1-NN accuracy of the same occurrences
    in the layer's full space, for comparison.

    Returns
    -------
    pandas.DataFrame
        ``layer, method, n_words, accuracy_1nn, accuracy_full, mfs_baseline`` (macro averages
        over words).
    """
    rows = []
    for li, layer in enumerate(layers):
        acc, full, mfs = [], [], []
        for word, panels in views["coords"].items():
            y = np.asarray(views["keys"][word])
            counts = pd.Series(y).value_counts()
            keep = np.isin(y, counts.index[counts >= 2])
            if len(set(y[keep])) < 2:
                continue
            acc.append(loo_1nn_sense_accuracy(np.asarray(panels[li])[keep], y[keep],
                                              metric="euclidean"))
            mfs.append(most_frequent_sense_baseline(y[keep]))
            if store is not None:
                X = store.layer(layer, views["rows"][word][keep], dtype=np.float64)
                full.append(loo_1nn_sense_accuracy(X, y[keep]))
        rows.append({"layer": int(layer), "method": method, "n_words": len(acc),
                     "accuracy_1nn": float(np.mean(acc)) if acc else math.nan,
                     "accuracy_full": float(np.mean(full)) if full else math.nan,
                     "mfs_baseline": float(np.mean(mfs)) if mfs else math.nan})
    return pd.DataFrame(rows)


def spread_layers(n_layers: int, k: int) -> list[int]:
    """At most ``k`` layer indices of ``0..n_layers-1`` spread evenly, always with the first
    and the last (``round(linspace(0, n_layers - 1, k))``, duplicates dropped)."""
    if n_layers < 1 or k < 1:
        raise ValueError("n_layers and k must be positive")
    if k >= n_layers:
        return list(range(n_layers))
    if k == 1:
        return [n_layers - 1]
    return sorted({int(round(x)) for x in np.linspace(0, n_layers - 1, k)})
