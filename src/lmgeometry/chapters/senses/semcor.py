"""Chapter "Senses", its SemCor pass: 1-NN sense accuracy, silhouettes and 2-D views per layer.

:func:`semcor_pass` reads each layer of each SemCor store once and scores every target word
under each control: leave-one-out 1-NN sense accuracy against the most-frequent-sense baseline,
in natural-frequency samples and as sampled, the silhouette of the senses, and the same 1-NN
accuracy inside the 2-D :data:`VIEW_METHODS`; the tables with their bootstrap over target
words follow. :func:`spread_layers` picks the layers whose views are drawn.

The claims' null (:mod:`lmgeometry.chapters.nulls`) is computed in the same pass: the same
scores of the raw vectors (:data:`NULL_TRANSFORM`) with each word's senses permuted within
each natural draw and within the occurrences as sampled
(:func:`lmgeometry.measures.permutation.permute_within`: every draw keeps its sense counts, so
its most-frequent-sense baseline is the real one), in the full space and inside the views.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters.common import control_rows, controls_for
from lmgeometry.measures import clusters
from lmgeometry.measures.permutation import permute_within
from lmgeometry.measures.senses import (
    mfs_credit,
    natural_sample,
    nn_credit,
    similarity_matrix,
    similarity_silhouette,
)
from lmgeometry.measures.similarity import subsample, unit_rows
from lmgeometry.measures.stats import cohens_h, percentile_interval, weighted_bootstrap_means
from lmgeometry.measures.transforms import TRANSFORMS, LayerFit

__all__ = [
    "NULL_TRANSFORM",
    "VIEW_METHODS",
    "semcor_pass",
    "spread_layers",
]

#: The 2-D views whose 1-NN accuracy the chapter measures.
VIEW_METHODS: tuple[str, ...] = ("PCA of all words", "PCA of one word", "UMAP of one word")

#: The transform the claims read, and whose scores are also computed on permuted senses.
NULL_TRANSFORM = "raw"


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


@dataclass
class _Word:
    """One target word under one control: its occurrences and the draws scored on them."""

    name: str
    occ: np.ndarray          # positions in the targets' rows
    senses: np.ndarray       # sense codes of occ
    sampled: np.ndarray      # positions in occ of senses with >= 2 occurrences
    draws: list[np.ndarray]  # positions in occ of each natural sample
    mfs_natural: float
    mfs_sampled: float
    permuted_draws: list[np.ndarray] = field(default_factory=list)  # each draw's senses, shuffled
    permuted_sampled: np.ndarray | None = None  # the as-sampled senses, shuffled

    def labels(self, permuted: bool = False) -> tuple[list[np.ndarray], np.ndarray]:
        """The senses of each natural draw and of the occurrences as sampled: the real ones,
        or (``permuted``) the same senses shuffled within each (the null)."""
        if permuted:
            return self.permuted_draws, self.permuted_sampled
        return [self.senses[d] for d in self.draws], self.senses[self.sampled]


def _plan_words(words: pd.DataFrame, keep: np.ndarray, weights: Mapping[str, float],
                n_draws: int, seed: int) -> list[_Word]:
    """The targets kept by a control, each with its natural draws and MFS baselines.

    A word's draws depend only on its kept occurrences and ``seed``, so a control that keeps
    every occurrence of a word draws the same samples as the seeds' protocol; so do the
    permuted senses of each draw (the null, :func:`permute_within`).
    """
    plan = []
    names = words["target"].to_numpy()
    senses = words["sense_key"].to_numpy()
    for code, name in enumerate(sorted(set(names))):
        occ = np.flatnonzero((names == name) & keep)
        if len(occ) < 2:
            continue
        _, y = np.unique(senses[occ], return_inverse=True)
        counts = np.bincount(y)
        sampled = np.flatnonzero(counts[y] >= 2)
        w = np.array([float(weights.get(k, 0.0)) for k in senses[occ]])
        w = np.where(w > 0, w, 1.0)  # a sense SemCor never counts (cannot happen) weighs 1
        rng = np.random.default_rng([seed, code])
        draws = [natural_sample(y, w, rng) for _ in range(n_draws)]
        draws = [d for d in draws if len(d) >= 2]
        mfs_nat = float(np.mean([mfs_credit(y[d]).mean() for d in draws])) if draws else np.nan
        two = len(np.unique(y[sampled])) >= 2
        plan.append(_Word(name, occ, y, sampled, draws, mfs_nat,
                          float(mfs_credit(y[sampled]).mean()) if two else np.nan,
                          [permute_within(y[d], seed=(seed, code, j)) for j, d in
                           enumerate(draws)], permute_within(y[sampled], seed=(seed, code))))
    return plan


def _word_scores(S: np.ndarray, word: _Word, permuted: bool = False
                 ) -> tuple[float, float, float]:
    """Natural 1-NN accuracy (mean over draws), as-sampled accuracy and silhouette; with
    ``permuted``, of the word's permuted senses (:meth:`_Word.labels`)."""
    draws, sampled = word.labels(permuted)
    natural = (float(np.mean([nn_credit(S[np.ix_(d, d)], y).mean()
                              for d, y in zip(word.draws, draws, strict=True)]))
               if word.draws else np.nan)
    if np.isnan(word.mfs_sampled):
        return natural, np.nan, np.nan
    s = word.sampled
    block = S[np.ix_(s, s)]
    return natural, float(nn_credit(block, sampled).mean()), similarity_silhouette(block, sampled)


def _view_accuracy(coords: np.ndarray, word: _Word, permuted: bool = False) -> float:
    """Natural 1-NN accuracy of a word inside a 2-D view (Euclidean neighbours); with
    ``permuted``, of its permuted senses."""
    if not word.draws:
        return np.nan
    S = similarity_matrix(coords, "euclidean")
    return float(np.mean([nn_credit(S[np.ix_(d, d)], y).mean()
                          for d, y in zip(word.draws, word.labels(permuted)[0], strict=True)]))


def _project_word(X: np.ndarray, method: str, seed: int) -> np.ndarray:
    if method == "PCA of one word":
        return clusters.pca_project(X, n_components=2, seed=seed)[0]
    with warnings.catch_warnings():  # "n_jobs overridden by random_state"
        warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
        return clusters.umap_project(X, n_components=2, seed=seed,
                                     n_neighbors=min(15, len(X) - 1))


@dataclass
class _SemcorRun:
    """Per-word scores of one model under one control, layer by layer; ``permuted`` holds the
    null's (senses permuted), keyed by protocol ("natural", "silhouette") or view method."""

    words: list[_Word]
    fit_rows: np.ndarray
    scores: dict[tuple[str, str], list[np.ndarray]] = field(default_factory=dict)
    views: dict[str, list[np.ndarray]] = field(default_factory=dict)
    view_layers: dict[str, list[int]] = field(default_factory=dict)
    permuted: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def add(self, key: tuple[str, str] | str, values: Sequence[float], layer: int | None = None,
            *, null: Sequence[float] | None = None) -> None:
        if null is not None:
            name = key if isinstance(key, str) else key[1]
            self.permuted.setdefault(name, []).append(np.asarray(null, dtype=np.float64))
        if isinstance(key, str):
            self.views.setdefault(key, []).append(np.asarray(values, dtype=np.float64))
            self.view_layers.setdefault(key, []).append(int(layer))
        else:
            self.scores.setdefault(key, []).append(np.asarray(values, dtype=np.float64))


def _semcor_layer(run: _SemcorRun, T: np.ndarray, F: np.ndarray, *, layer: int, view: bool,
                  umap_words: set[str], transforms: Sequence[str], seed: int,
                  cache: dict) -> dict[str, dict[str, np.ndarray]]:
    """Score one layer under one control; returns the per-word view coordinates drawn."""
    fit = LayerFit.of(F)
    for how in transforms:
        U = unit_rows(fit.apply(T, how))[0]
        blocks = [U[w.occ] @ U[w.occ].T for w in run.words]
        rows = [_word_scores(S, w) for S, w in zip(blocks, run.words, strict=True)]
        nulls = ([_word_scores(S, w, permuted=True) for S, w in zip(blocks, run.words,
                                                                    strict=True)]
                 if how == NULL_TRANSFORM else None)
        for i, name in enumerate(("natural", "as sampled", "silhouette")):
            run.add((how, name), [r[i] for r in rows],
                    null=None if nulls is None or i == 1 else [r[i] for r in nulls])
    coords = fit.project(T)
    run.add("PCA of all words", [_view_accuracy(coords[w.occ], w) for w in run.words], layer,
            null=[_view_accuracy(coords[w.occ], w, permuted=True) for w in run.words])
    drawn: dict[str, dict[str, np.ndarray]] = {}
    if not view:
        return drawn
    for method in VIEW_METHODS[1:]:
        if method.startswith("UMAP") and not umap_words:
            continue
        accuracies, nulls = [], []
        for w in run.words:
            if method.startswith("UMAP") and w.name not in umap_words:
                accuracies.append(np.nan)  # UMAP views of the most frequent targets only
                nulls.append(np.nan)
                continue
            key = (method, layer, w.name, w.occ.tobytes())
            if key not in cache:  # a control that keeps every occurrence reuses the view
                cache[key] = _project_word(T[w.occ], method, seed)
            drawn.setdefault(method, {})[w.name] = cache[key]
            accuracies.append(_view_accuracy(cache[key], w))
            nulls.append(_view_accuracy(cache[key], w, permuted=True))
        run.add(method, accuracies, layer, null=nulls)
    return drawn


def semcor_pass(store: Store, weights: Mapping[str, float], *, seed: int = 0,
                n_draws: int = 5, fit_rows: int = 2000, view_layers: int = 13,
                umap_words: int = 8, transforms: Sequence[str] = TRANSFORMS
                ) -> tuple[dict[str, _SemcorRun], dict[str, Any]]:
    """Per-word sense scores of every layer of a SemCor store, each layer read once.

    Reads the labelled target rows and ``fit_rows`` sampled rows of every word (on which the
    transforms and the PCA of all words are fitted) of each layer; per control, every target
    word is scored under each transform (natural draws, occurrences as sampled, silhouette)
    and inside the 2-D views (the PCA of all words in every layer; a PCA and, for the
    ``umap_words`` most frequent targets, a UMAP of each word's occurrences in
    ``view_layers`` spread layers).

    Returns
    -------
    runs : dict control -> per-word scores
    views : the control "none" views drawn (``layers``, per method the per-word coordinates
        of every viewed layer, ``rows``: the targets' store rows)
    """
    words = store.words
    tagged = np.flatnonzero(words["sense_key"].notna().to_numpy()
                            & words["target"].notna().to_numpy())
    targets = words.iloc[tagged].reset_index(drop=True)
    sample = subsample(store.n_words, fit_rows, seed)
    rows = np.union1d(tagged, sample)
    t_pos, s_pos = np.searchsorted(rows, tagged), np.searchsorted(rows, sample)
    counts = targets["target"].value_counts()
    umap_set = set(sorted(counts.index, key=lambda t: (-counts[t], t))[:umap_words])
    viewed = set(spread_layers(store.n_layers, view_layers))
    runs = {}
    for control in controls_for(store):
        kept = control_rows(store, control)
        runs[control] = _SemcorRun(
            _plan_words(targets, np.isin(tagged, kept), weights, n_draws, seed),
            s_pos[np.isin(sample, kept)])
    cache: dict = {}
    views: dict[str, Any] = {"layers": sorted(viewed), "rows": tagged, "targets": targets,
                             "pca": [], "umap": []}
    for layer in range(store.n_layers):
        X = store.layer(layer, rows)
        T = X[t_pos]
        for control, run in runs.items():
            drawn = _semcor_layer(run, T, X[run.fit_rows], layer=layer, view=layer in viewed,
                                  umap_words=umap_set, transforms=transforms, seed=seed,
                                  cache=cache)
            if control == "none" and drawn:
                views["pca"].append(drawn.get("PCA of one word", {}))
                views["umap"].append(drawn.get("UMAP of one word", {}))
    return runs, views


def _bootstrap_macro(acc: np.ndarray, mfs: np.ndarray, n_boot: int, seed: int
                     ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Macro means over words of accuracy (words x layers) and MFS, their gain and Cohen's h,
    each with its replicates (words resampled, the same draws for every layer)."""
    V = np.column_stack([acc, mfs])
    ok = np.isfinite(V).all(axis=1)
    V = V[ok]
    n_layers = acc.shape[1]
    means = V.mean(axis=0)
    reps = weighted_bootstrap_means(V, None, n_boot, seed)
    out = {"accuracy": (means[:n_layers], reps[:, :n_layers]),
           "mfs": (np.full(n_layers, means[-1]), np.repeat(reps[:, -1:], n_layers, axis=1))}
    out["gain"] = (out["accuracy"][0] - out["mfs"][0], out["accuracy"][1] - out["mfs"][1])
    out["cohen_h"] = (cohens_h(out["accuracy"][0], out["mfs"][0]),
                      cohens_h(out["accuracy"][1], out["mfs"][1]))
    return out


def _interval_columns(stats: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      names: Mapping[str, str]) -> dict[str, np.ndarray]:
    """``name``, ``name_lo``, ``name_hi`` columns (per layer) from values and replicates."""
    cols = {}
    for key, name in names.items():
        value, reps = stats[key]
        bounds = np.array([percentile_interval(reps[:, i], value[i]) for i in range(len(value))])
        cols.update({name: value, f"{name}_lo": bounds[:, 0], f"{name}_hi": bounds[:, 1]})
    return cols


_MACRO_NAMES = {"accuracy": "accuracy_1nn", "mfs": "mfs_baseline", "gain": "gain",
                "cohen_h": "cohen_h"}


def _separability_table(store: Store, runs: Mapping[str, _SemcorRun], *, n_boot: int,
                        seed: int) -> tuple[pd.DataFrame, dict]:
    """Per layer, control, transform and protocol: macro 1-NN accuracy, MFS, gain, Cohen's
    h and (as sampled) silhouette, with intervals; and the replicates the claims need."""
    frames, reps = [], {}
    layers = np.arange(store.n_layers)
    for control, run in runs.items():
        for (how, protocol), values in run.scores.items():
            if protocol == "silhouette":
                continue
            acc = np.stack(values, axis=1)
            mfs = np.array([w.mfs_natural if protocol == "natural" else w.mfs_sampled
                            for w in run.words])
            macro = _bootstrap_macro(acc, mfs, n_boot, seed)
            cols = _interval_columns(macro, _MACRO_NAMES)
            if protocol == "as sampled":
                s_val, s_reps = _silhouette_macro(run.scores[(how, "silhouette")], n_boot, seed)
                cols.update(_interval_columns({"s": (s_val, s_reps)}, {"s": "silhouette"}))
                reps[(control, how, "silhouette")] = (s_val, s_reps)
            else:
                cols.update({c: np.full(len(layers), np.nan)
                             for c in ("silhouette", "silhouette_lo", "silhouette_hi")})
            reps[(control, how, protocol)] = macro["cohen_h"]
            scored = [w for w, m in zip(run.words, mfs, strict=True) if np.isfinite(m)]
            n_occ = (sum(len(w.sampled) for w in scored) if protocol == "as sampled" else
                     sum(float(np.mean([len(d) for d in w.draws])) for w in scored))
            n_words = len(scored)
            frames.append(pd.DataFrame({
                "model": store.label, "layer": layers,
                "depth": [store.depth(i) for i in layers], "control": control,
                "transform": how, "protocol": protocol, **cols, "n_words": n_words,
                "n_occurrences": round(float(n_occ), 1)}))
    return pd.concat(frames, ignore_index=True), reps


def _silhouette_macro(values: Sequence[np.ndarray], n_boot: int, seed: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Per layer, the mean silhouette over the words that have one in every layer, and its
    replicates (words resampled, the same draws for every layer)."""
    sil = np.stack(values, axis=1)
    sil = sil[np.isfinite(sil).all(axis=1)]
    return np.nanmean(sil, axis=0), weighted_bootstrap_means(sil, None, n_boot, seed)


def _permuted_reps(runs: Mapping[str, _SemcorRun], *, n_boot: int, seed: int) -> dict:
    """The claims' null: per control, the macro Cohen's h of natural 1-NN accuracy over the
    most-frequent-sense baseline (``(control, "natural")``) and the mean silhouette
    (``(control, "silhouette")``), each per layer with its replicates, and per view method
    the same h with its layers (``(control, method)``), all on the permuted senses of the
    :data:`NULL_TRANSFORM` scores, with the bootstrap over words of the real ones."""
    reps: dict = {}
    for control, run in runs.items():
        mfs = np.array([w.mfs_natural for w in run.words])
        accuracy = np.stack(run.permuted["natural"], axis=1)
        reps[(control, "natural")] = _bootstrap_macro(accuracy, mfs, n_boot, seed)["cohen_h"]
        reps[(control, "silhouette")] = _silhouette_macro(run.permuted["silhouette"], n_boot,
                                                          seed)
        for method in (m for m in VIEW_METHODS if m in run.permuted):
            accuracy = np.stack(run.permuted[method], axis=1)
            shown = np.isfinite(accuracy).all(axis=1) & np.isfinite(mfs)
            reps[(control, method)] = (*_bootstrap_macro(accuracy[shown], mfs[shown], n_boot,
                                                         seed)["cohen_h"],
                                       run.view_layers[method])
    return reps


def _views_table(store: Store, runs: Mapping[str, _SemcorRun], *, n_boot: int, seed: int
                 ) -> tuple[pd.DataFrame, dict]:
    """Per viewed layer, control and view: 1-NN accuracy inside the 2-D view against the
    same words' accuracy in the full space and their MFS baseline (natural draws)."""
    frames, reps = [], {}
    for control, run in runs.items():
        full = np.stack(run.scores[("raw", "natural")], axis=1)
        mfs = np.array([w.mfs_natural for w in run.words])
        for method in (m for m in VIEW_METHODS if m in run.views):
            layers = run.view_layers[method]
            accuracy = np.stack(run.views[method], axis=1)
            shown = np.isfinite(accuracy).all(axis=1) & np.isfinite(mfs)
            macro = _bootstrap_macro(accuracy[shown], mfs[shown], n_boot, seed)
            reps[(control, method)] = (*macro["cohen_h"], layers)
            frames.append(pd.DataFrame({
                "model": store.label, "layer": layers,
                "depth": [store.depth(i) for i in layers], "control": control,
                "method": method, "n_words": int(shown.sum()),
                **_interval_columns(macro, {"accuracy": "accuracy_view",
                                            "cohen_h": "cohen_h"}),
                "accuracy_full": full[np.ix_(shown, layers)].mean(axis=0),
                "mfs_baseline": macro["mfs"][0]}))
    return pd.concat(frames, ignore_index=True), reps
