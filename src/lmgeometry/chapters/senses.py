"""Chapter "Senses" (seeds 000 and 001): sense separability, WiC and polysemy, per layer.

Seed 000 looked at PCA and UMAP projections of polysemous words and concluded, by eye, that
senses are not visible along the principal components but cluster locally (UMAP), and that a
model "must be able to distinguish between senses in the high-dimensional space"; seed 001
(Ethayarajh 2019) argued that the variety of a word's contexts, rather than its polysemy,
drives the variation of its vectors, and that the models do not assign each word one of a
few sense vectors. :func:`analyse` measures these claims, reading each layer of each store
once per analysis:

* **SemCor** (:func:`semcor_pass`): leave-one-out 1-NN sense accuracy of the sense-tagged
  targets against the most-frequent-sense (MFS) baseline, under two protocols: the
  occurrences *as sampled* (``semcor_targets`` draws them round-robin over senses, which
  deflates the MFS baseline) and *natural* subsamples whose senses follow their SemCor-wide
  frequencies (:func:`lmgeometry.measures.senses.natural_sample`; the claims use these); the
  silhouette of the senses; the same 1-NN accuracy inside 2-D views (PCA of all words, as the
  seed projected them; PCA and UMAP of one word's occurrences).
* **WiC** (:func:`wic_pass`): a cosine threshold fitted on the training pairs, the layer
  chosen on dev, the test accuracy reported with its Wilson interval.
* **Polysemy** (:func:`polysemy_pass`): per layer, the standardised coefficients of a word's
  self-similarity on log(WordNet senses) and log(distinct contexts), with a bootstrap over
  words; words without a WordNet entry are counted, and a second fit counts them as one
  sense.

Intervals: bootstraps over target words (SemCor; the same draws for every layer, so a
maximum over layers gets the interval of the maximum), over words (polysemy), Wilson over
pairs (WiC). Decoder numbers are computed under the seeds' protocol and with each sentence's
first word left out (:data:`lmgeometry.chapters.common.CONTROLS`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import ChapterResult, control_rows, controls_for, with_blas_threads
from lmgeometry.io.lexical import sense_labels
from lmgeometry.measures import clusters
from lmgeometry.measures.contextual import word_measures
from lmgeometry.measures.polysemy import standardised_coefficients
from lmgeometry.measures.senses import (
    mfs_credit,
    natural_sample,
    nn_credit,
    similarity_matrix,
    similarity_silhouette,
)
from lmgeometry.measures.similarity import subsample, unit_rows
from lmgeometry.measures.stats import (
    cohens_h,
    percentile_interval,
    plateau,
    weighted_bootstrap_means,
    wilson_interval,
)
from lmgeometry.measures.transforms import TRANSFORMS, LayerFit
from lmgeometry.measures.wic import evaluate_wic
from lmgeometry.report.claims import Claim, claim_sentences, claims_frame
from lmgeometry.report.prose import layers_phrase, pct, plural

__all__ = [
    "BETA",
    "CLAIMS",
    "COHEN_H",
    "FIGURES",
    "RARE_SENSES",
    "SILHOUETTE",
    "SensesResult",
    "VIEW_METHODS",
    "WIC_ACCURACY",
    "analyse",
    "context_snippet",
    "polysemy_pass",
    "selfsim_by_bins",
    "semcor_pass",
    "spread_layers",
    "wic_pass",
]

#: Cohen's (1988) small effect for two proportions: 1-NN accuracy against the MFS baseline.
COHEN_H = 0.2
#: Kaufman & Rousseeuw (1990): a silhouette of 0.5 or more is a reasonable cluster structure.
SILHOUETTE = 0.5
#: WiC test accuracy: 5 points above the 50% of the balanced test set.
WIC_ACCURACY = 0.55
#: Cohen's small effect for a standardised coefficient (a correlation).
BETA = 0.1

#: The 2-D views whose 1-NN accuracy the chapter measures.
VIEW_METHODS: tuple[str, ...] = ("PCA of all words", "PCA of one word", "UMAP of one word")

#: Figure labels of the claims' evidence.
FIGURES = {"separate": "sense-1nn", "silhouette": "sense-silhouette", "views": "view-accuracy",
           "wic": "wic", "polysemy": "polysemy"}

_H_RULE = ("Cohen's h >= 0.2, his small effect for two proportions (10 points above a 50% "
           "baseline): a difference a reader of the figure can see")
_BETA_RULE = ("|beta| = 0.1 is Cohen's small effect for a standardised coefficient (a "
              "correlation)")
_SEED001_POLYSEMY = ("stopwords, which are not polysemous, are among the least self-similar "
                     "words: 'the variety of contexts a word appears in, rather than its "
                     "inherent polysemy' drives the variation of its vectors")


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a seed (a row of :data:`CLAIMS`)."""

    seed: str
    claim: str
    statistic: str
    threshold: float
    direction: str
    rule: str
    published: str
    figure: str


#: The chapter's claims, with the statistic, threshold and reason of each.
CLAIMS: dict[str, ClaimSpec] = {
    "separate": ClaimSpec(
        "000", "senses separate in context: a word's nearest other occurrence shares its sense "
        "more often than the most frequent sense is right",
        "Cohen's h of leave-one-out 1-NN sense accuracy over the most-frequent-sense baseline "
        "(natural sense distribution), at the best of layers 1-L", COHEN_H, "above", _H_RULE,
        "BERT: senses can be told apart 'in the high-dimensional space' (cited sense-"
        "disambiguation work; the seed measured nothing)", FIGURES["separate"]),
    "not_points": ClaimSpec(
        "001", "a word's occurrences are not a few sense vectors (no tight sense clusters)",
        "largest mean silhouette of the sense partition (cosine) over layers 1-L",
        SILHOUETTE, "below",
        "Kaufman & Rousseeuw (1990): 0.5 or more is a reasonable cluster structure; one "
        "vector per sense would give a silhouette near 1",
        "ELMo, BERT and GPT-2 do not assign each word one of a finite number of word-sense "
        "representations", FIGURES["silhouette"]),
    "pca_hides": ClaimSpec(
        "000", "senses are not visible along the first principal components",
        "Cohen's h of 1-NN sense accuracy in the 2-D PCA of all words over the MFS baseline "
        "(natural), at the best of layers 1-L", COHEN_H, "below", _H_RULE,
        "GPT-2 and BERT: in the PCA projection 'no direct conclusion' on whether senses are "
        "encoded", FIGURES["views"]),
    "umap_shows": ClaimSpec(
        "000", "senses cluster in UMAP views",
        "Cohen's h of 1-NN sense accuracy in a word's 2-D UMAP over the MFS baseline "
        "(natural), at the best of the viewed layers after 0", COHEN_H, "above", _H_RULE,
        "GPT-2 and BERT: individual tokens show clustering in UMAP", FIGURES["views"]),
    "wic": ClaimSpec(
        "000", "beyond the paper: a cosine threshold tells same from different senses (WiC) "
        "above chance",
        "WiC test accuracy of a cosine threshold fitted on training pairs, at the layer "
        "chosen on dev", WIC_ACCURACY, "above",
        "5 points above the 50% of WiC's balanced test set: less than the lead of the "
        "weakest contextual model in Pilehvar & Camacho-Collados (2019; ELMo, 57.7%)",
        "not measured in the seed; a cosine threshold reaches 65.5% with BERT-large and 57.7% "
        "with ELMo on the WiC test set (Pilehvar & Camacho-Collados 2019)", FIGURES["wic"]),
    "contexts": ClaimSpec(
        "001", "words seen in more contexts are less self-similar",
        "standardised coefficient of log(distinct contexts) on self-similarity with "
        "log(WordNet senses) held fixed, mean over layers 1-L", -BETA, "below", _BETA_RULE,
        _SEED001_POLYSEMY, FIGURES["polysemy"]),
    "polysemy": ClaimSpec(
        "001", "more senses do not make a word less self-similar",
        "standardised coefficient of log(WordNet senses) on self-similarity with "
        "log(distinct contexts) held fixed, mean over layers 1-L", -BETA, "above", _BETA_RULE,
        _SEED001_POLYSEMY, FIGURES["polysemy"]),
}

RARE_SENSES = "(senses seen fewer than {k} times)"


@dataclass
class SensesResult(ChapterResult):
    """:class:`ChapterResult` with the figures' arrays: ``views[model][method]`` holds the
    occurrence views of :func:`lmgeometry.report.plots.choice_layer_slider` (``coords``,
    ``color``, ``hover`` and ``layers``) for ``method`` "pca" and "umap" (not saved)."""

    views: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


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


def context_snippet(sentence: str, start: int, end: int, width: int = 40) -> str:
    """The word at ``sentence[start:end]`` in brackets with up to ``width`` characters each side.

    Example: ``context_snippet("I ran home", 2, 5, 3)`` is ``"I [ran] ho..."``.
    """
    left = sentence[max(0, start - width):start]
    right = sentence[end:end + width]
    return (("..." if start > width else "") + left + "[" + sentence[start:end] + "]" + right
            + ("..." if end + width < len(sentence) else ""))


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


# ---------------------------------------------------------------------------------------------
# SemCor: 1-NN sense accuracy, silhouette and views
# ---------------------------------------------------------------------------------------------


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


def _plan_words(words: pd.DataFrame, keep: np.ndarray, weights: Mapping[str, float],
                n_draws: int, seed: int) -> list[_Word]:
    """The targets kept by a control, each with its natural draws and MFS baselines.

    A word's draws depend only on its kept occurrences and ``seed``, so a control that keeps
    every occurrence of a word draws the same samples as the seeds' protocol.
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
                          float(mfs_credit(y[sampled]).mean()) if two else np.nan))
    return plan


def _word_scores(S: np.ndarray, word: _Word) -> tuple[float, float, float]:
    """Natural 1-NN accuracy (mean over draws), as-sampled accuracy and silhouette."""
    natural = (float(np.mean([nn_credit(S[np.ix_(d, d)], word.senses[d]).mean()
                              for d in word.draws])) if word.draws else np.nan)
    if np.isnan(word.mfs_sampled):
        return natural, np.nan, np.nan
    s = word.sampled
    block = S[np.ix_(s, s)]
    return (natural, float(nn_credit(block, word.senses[s]).mean()),
            similarity_silhouette(block, word.senses[s]))


def _view_accuracy(coords: np.ndarray, word: _Word) -> float:
    """Natural 1-NN accuracy of a word inside a 2-D view (Euclidean neighbours)."""
    if not word.draws:
        return np.nan
    S = similarity_matrix(coords, "euclidean")
    return float(np.mean([nn_credit(S[np.ix_(d, d)], word.senses[d]).mean()
                          for d in word.draws]))


def _project_word(X: np.ndarray, method: str, seed: int) -> np.ndarray:
    if method == "PCA of one word":
        return clusters.pca_project(X, n_components=2, seed=seed)[0]
    with warnings.catch_warnings():  # "n_jobs overridden by random_state"
        warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
        return clusters.umap_project(X, n_components=2, seed=seed,
                                     n_neighbors=min(15, len(X) - 1))


@dataclass
class _SemcorRun:
    """Per-word scores of one model under one control, layer by layer."""

    words: list[_Word]
    fit_rows: np.ndarray
    scores: dict[tuple[str, str], list[np.ndarray]] = field(default_factory=dict)
    views: dict[str, list[np.ndarray]] = field(default_factory=dict)
    view_layers: dict[str, list[int]] = field(default_factory=dict)

    def add(self, key: tuple[str, str] | str, values: Sequence[float], layer: int | None = None
            ) -> None:
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
        rows = [_word_scores(U[w.occ] @ U[w.occ].T, w) for w in run.words]
        for i, name in enumerate(("natural", "as sampled", "silhouette")):
            run.add((how, name), [r[i] for r in rows])
    coords = fit.project(T)
    run.add("PCA of all words", [_view_accuracy(coords[w.occ], w) for w in run.words], layer)
    drawn: dict[str, dict[str, np.ndarray]] = {}
    if not view:
        return drawn
    for method in VIEW_METHODS[1:]:
        if method.startswith("UMAP") and not umap_words:
            continue
        accuracies = []
        for w in run.words:
            if method.startswith("UMAP") and w.name not in umap_words:
                accuracies.append(np.nan)  # UMAP views of the most frequent targets only
                continue
            key = (method, layer, w.name, w.occ.tobytes())
            if key not in cache:  # a control that keeps every occurrence reuses the view
                cache[key] = _project_word(T[w.occ], method, seed)
            drawn.setdefault(method, {})[w.name] = cache[key]
            accuracies.append(_view_accuracy(cache[key], w))
        run.add(method, accuracies, layer)
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
            sil = np.stack(run.scores[(how, "silhouette")], axis=1)
            if protocol == "as sampled":
                s_reps = weighted_bootstrap_means(sil[np.isfinite(sil).all(axis=1)], None,
                                                  n_boot, seed)
                s_val = np.nanmean(sil[np.isfinite(sil).all(axis=1)], axis=0)
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


# ---------------------------------------------------------------------------------------------
# WiC
# ---------------------------------------------------------------------------------------------


def _wic_row(sim: np.ndarray, pairs: pd.DataFrame) -> dict[str, float]:
    split = pairs["split"].to_numpy()
    y = pairs["label"].to_numpy(dtype=bool)
    parts = {k: (sim[split == k], y[split == k]) for k in ("train", "dev", "test")}
    r = evaluate_wic(*parts["train"], *parts["dev"],
                     *(parts["test"] if len(parts["test"][0]) else (None, None)))
    for name in ("dev", "test"):
        lo, hi = wilson_interval(float(r[f"{name}_accuracy"]), int(r[f"n_{name}"]))
        r.update({f"{name}_accuracy_lo": lo, f"{name}_accuracy_hi": hi})
    return r


def wic_pass(store: Store, pairs: pd.DataFrame, *, seed: int = 0, fit_rows: int = 2000,
             transforms: Sequence[str] = TRANSFORMS) -> pd.DataFrame:
    """WiC accuracy of a cosine threshold per layer, control and transform, each layer read
    once.

    ``pairs`` (``corpus.wic_corpus``) give the store rows of the two targets (``row1``,
    ``row2``), the ``split`` and the ``label``. The threshold is fitted on the training pairs
    (:func:`lmgeometry.measures.wic.evaluate_wic`); dev and test accuracies get Wilson
    intervals. The transforms are fitted on ``fit_rows`` sampled words of the layer. Under
    the control "first word excluded" the pairs whose target is a sentence's first word are
    left out, and so are first words from the fit.

    Returns
    -------
    pandas.DataFrame
        ``model, layer, depth, control, transform`` and :func:`evaluate_wic`'s columns, with
        ``dev_accuracy_lo/hi`` and ``test_accuracy_lo/hi``.
    """
    first = store.words["word_index"].to_numpy() == 0
    r1, r2 = pairs["row1"].to_numpy(), pairs["row2"].to_numpy()
    sample = subsample(store.n_words, fit_rows, seed)
    rows = np.unique(np.concatenate([r1, r2, sample]))
    p1, p2, s_pos = (np.searchsorted(rows, r) for r in (r1, r2, sample))
    plans = {}
    for control in controls_for(store):
        keep = ~(first[r1] | first[r2]) if control != "none" else np.ones(len(pairs), bool)
        fit = s_pos if control == "none" else s_pos[~first[sample]]
        plans[control] = (keep, fit)
    out = []
    for layer in range(store.n_layers):
        X = store.layer(layer, rows)
        for control, (keep, fit) in plans.items():
            layer_fit = LayerFit.of(X[fit])
            for how in transforms:
                U = unit_rows(layer_fit.apply(X, how))[0]
                sim = (U[p1[keep]] * U[p2[keep]]).sum(axis=1)
                out.append({"model": store.label, "layer": layer, "depth": store.depth(layer),
                            "control": control, "transform": how,
                            **_wic_row(sim, pairs[keep])})
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------------------------
# Polysemy against contexts (seed 001)
# ---------------------------------------------------------------------------------------------


def _sense_counts(words: pd.DataFrame) -> pd.Series:
    """Each lower-cased word's WordNet sense count: the most frequent ``n_senses`` of its
    occurrences (spaCy's lemma and POS decide it); NaN without a WordNet entry (a closed-class
    POS, or a lemma WordNet lacks)."""
    key = words["text"].str.lower()
    known = words.assign(word=key).dropna(subset=["n_senses"])
    known = known[known["n_senses"].astype(float) >= 1]
    return known.groupby("word")["n_senses"].agg(lambda s: s.mode().iloc[0]).astype(float)


def polysemy_pass(store: Store, *, seed: int = 0, min_contexts: int = 5, n_boot: int = 1000
                  ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Self-similarity regressed on sense and context counts, per layer 1..L and control.

    SelfSim uses the ``corrected`` preset of :mod:`lmgeometry.measures.contextual` over the
    words in at least ``min_contexts`` distinct sentences. Two fits per layer: over the words
    with a WordNet entry (``sample = "WordNet words"``; the others are counted in
    ``n_without_entry``), and over all of them with a missing entry counted as one sense
    (``"all words, no entry = 1 sense"``, as seed 001 treats stopwords). Coefficients are
    standardised (:func:`lmgeometry.measures.polysemy.standardised_coefficients`), with a
    bootstrap over words shared by every layer.

    Returns
    -------
    table : ``model, layer, depth, control, sample, n_words, n_without_entry, r2`` and
        ``beta_senses``, ``beta_contexts`` with ``_lo/_hi``
    words : per layer (control "none"), ``word, selfsim, n_senses, n_sentences`` (WordNet
        words), for the figures
    replicates : ``(control, sample) -> (beta, replicates)`` for the claims
    """
    words = store.words
    senses_of = _sense_counts(words)
    per_control: dict[str, list[pd.DataFrame]] = {c: [] for c in controls_for(store)}
    keep = {c: control_rows(store, c) for c in per_control}
    for layer in range(1, store.n_layers):
        X = store.layer(layer)
        for control, rows in keep.items():
            t = word_measures(X[rows], words.iloc[rows], "corrected", seed,
                              min_contexts=min_contexts, measures=("selfsim",))
            per_control[control].append(t[["word", "n_sentences", "selfsim"]]
                                        .assign(layer=layer))
    frames, reps, figure = [], {}, None
    for control, tables in per_control.items():
        long = pd.concat(tables, ignore_index=True)
        wide = long.pivot(index="word", columns="layer", values="selfsim").dropna()
        contexts = long.groupby("word")["n_sentences"].first().reindex(wide.index)
        n_senses = wide.index.to_series().map(senses_of)
        if control == "none":
            figure = long.assign(n_senses=long["word"].map(senses_of)).dropna(
                subset=["n_senses"])
        for sample, use in (("WordNet words", n_senses.notna().to_numpy()),
                            ("all words, no entry = 1 sense", np.ones(len(wide), bool))):
            X = np.column_stack([np.log(n_senses.fillna(1.0).to_numpy()[use]),
                                 np.log(contexts.to_numpy()[use].astype(float))])
            beta, rep, r2 = standardised_coefficients(X, wide.to_numpy()[use], n_boot, seed)
            reps[(control, sample)] = (beta, rep)
            cols = _interval_columns(
                {"s": (beta[0], rep[:, 0]), "c": (beta[1], rep[:, 1])},
                {"s": "beta_senses", "c": "beta_contexts"})
            layers = wide.columns.to_numpy()
            frames.append(pd.DataFrame({
                "model": store.label, "layer": layers,
                "depth": [store.depth(int(i)) for i in layers], "control": control,
                "sample": sample, "n_words": int(use.sum()),
                "n_without_entry": int(n_senses.isna().sum()), "r2": r2, **cols}))
    return pd.concat(frames, ignore_index=True), figure, reps


# ---------------------------------------------------------------------------------------------
# Claims
# ---------------------------------------------------------------------------------------------


def _claim(key: str, model: str, control: str, value: float, lo: float, hi: float,
           evidence: str) -> Claim:
    spec = CLAIMS[key]
    return Claim(seed=spec.seed, claim=spec.claim, model=model, control=control,
                 statistic=spec.statistic, value=value, ci_low=lo, ci_high=hi,
                 threshold=spec.threshold, direction=spec.direction, rule=spec.rule,
                 published=spec.published, figure=spec.figure, evidence=evidence)


def _best_over(values: np.ndarray, reps: np.ndarray, layers: Sequence[int]
               ) -> tuple[float, float, float, int]:
    """The largest value over ``layers`` (positions), with the bootstrap interval of the
    largest value (the maximum taken in every replicate, so the choice of layer is part of
    the interval), and its position."""
    layers = [int(i) for i in layers if np.isfinite(values[i])]
    if not layers:
        return math.nan, math.nan, math.nan, -1
    best = layers[int(np.argmax(values[layers]))]
    value = float(values[best])
    return (value, *percentile_interval(np.nanmax(reps[:, layers], axis=1), value), best)


def _separability_claims(table: pd.DataFrame, reps: dict, views: dict, model: str,
                         control: str) -> list[Claim]:
    part = table[(table["model"] == model) & (table["control"] == control)
                 & (table["transform"] == "raw")]
    nat = part[part["protocol"] == "natural"].set_index("layer")
    smp = part[part["protocol"] == "as sampled"].set_index("layer")
    later = list(range(1, len(nat)))
    h, h_reps = reps[(control, "raw", "natural")]
    value, lo, hi, at = _best_over(h, h_reps, later)
    on = plateau(nat["cohen_h"].to_numpy()[1:], nat["cohen_h_lo"].to_numpy()[1:],
                 nat["cohen_h_hi"].to_numpy()[1:]) + 1
    out = [_claim("separate", model, control, value, lo, hi,
                  f"layer {at}: 1-NN {pct(nat.loc[at, 'accuracy_1nn'])} against MFS "
                  f"{pct(nat.loc[at, 'mfs_baseline'])} ({nat.loc[at, 'n_words']} words, natural "
                  f"sense distribution; as sampled: {pct(smp.loc[at, 'accuracy_1nn'])} against "
                  f"{pct(smp.loc[at, 'mfs_baseline'])}); plateau {layers_phrase(on)}")]
    s, s_reps = reps[(control, "raw", "silhouette")]
    value, lo, hi, at = _best_over(s, s_reps, later)
    out.append(_claim("not_points", model, control, value, lo, hi,
                      f"largest at layer {at}; {smp.loc[at, 'n_words']} words, occurrences "
                      f"as sampled"))
    for key, method in (("pca_hides", "PCA of all words"), ("umap_shows", "UMAP of one word")):
        if (control, method) not in reps:
            out.append(_claim(key, model, control, math.nan, math.nan, math.nan,
                              "not computed (no words were given UMAP views)"))
            continue
        h, h_reps, layers = reps[(control, method)]
        v = views[(views["model"] == model) & (views["control"] == control)
                  & (views["method"] == method)].set_index("layer")
        pos = [i for i, layer in enumerate(layers) if layer >= 1]
        value, lo, hi, at = _best_over(h, h_reps, pos)
        layer = layers[at]
        out.append(_claim(key, model, control, value, lo, hi,
                          f"layer {layer}: 1-NN {pct(v.loc[layer, 'accuracy_view'])} in the "
                          f"view, {pct(v.loc[layer, 'accuracy_full'])} in the full space, MFS "
                          f"{pct(v.loc[layer, 'mfs_baseline'])} ({v.loc[layer, 'n_words']} "
                          f"words)"))
    return out


def _wic_claim(wic: pd.DataFrame, model: str, control: str) -> Claim:
    part = wic[(wic["model"] == model) & (wic["control"] == control)
               & (wic["transform"] == "raw")].reset_index(drop=True)
    best = part.loc[part["dev_accuracy"].idxmax()]
    return _claim("wic", model, control, float(best["test_accuracy"]),
                  float(best["test_accuracy_lo"]), float(best["test_accuracy_hi"]),
                  f"layer {int(best['layer'])} (best on dev, {pct(best['dev_accuracy'])}); "
                  f"{int(best['n_test'])} test pairs; layer 0: "
                  f"{pct(part.loc[0, 'test_accuracy'])}")


def _polysemy_claims(table: pd.DataFrame, reps: dict, model: str, control: str
                     ) -> list[Claim]:
    beta, rep = reps[(control, "WordNet words")]
    row = table[(table["model"] == model) & (table["control"] == control)
                & (table["sample"] == "WordNet words")].iloc[0]
    other, other_rep = reps[(control, "all words, no entry = 1 sense")]
    out = []
    for key, k in (("contexts", 1), ("polysemy", 0)):
        value = float(beta[k].mean())
        lo, hi = percentile_interval(rep[:, k].mean(axis=1), value)
        out.append(_claim(
            key, model, control, value, lo, hi,
            f"{row['n_words']} words with a WordNet entry ({row['n_without_entry']} without "
            f"one left out; counted as one sense: {other[k].mean():+.2f}); beta over layers "
            f"{beta[k].min():+.2f} to {beta[k].max():+.2f}"))
    return out


# ---------------------------------------------------------------------------------------------
# analyse
# ---------------------------------------------------------------------------------------------


def _occurrence_views(views: dict, sentences: Sequence[str] | None, min_sense_count: int = 3
                      ) -> dict[str, dict[str, Any]]:
    """The drawn per-word views, shaped for ``plots.choice_layer_slider``."""
    targets = views["targets"]
    keys = targets["sense_key"].to_numpy()
    names = sense_labels(sorted(set(keys)))
    rare = RARE_SENSES.format(k=min_sense_count)
    out = {}
    for method in ("pca", "umap"):
        panels = views[method]
        if not panels or not panels[0]:
            continue
        words = list(panels[0])
        coords, color, hover = {}, {}, {}
        for word in words:
            occ = np.flatnonzero(targets["target"].to_numpy() == word)
            k = keys[occ]
            counts = pd.Series(k).value_counts()
            color[word] = np.array([names[s] if counts[s] >= min_sense_count else rare
                                    for s in k])
            coords[word] = [layer[word] for layer in panels]
            w = targets.iloc[occ]
            hover[word] = (w["text"].to_numpy() if sentences is None else np.array([
                context_snippet(sentences[int(sid)], int(a), int(b))
                for sid, a, b in zip(w["sentence_id"], w["start"], w["end"], strict=True)]))
        out[method] = {"coords": coords, "color": color, "hover": hover,
                       "layers": views["layers"], "background": rare}
    return out


def _sentences(separability: pd.DataFrame, polysemy: pd.DataFrame, claims: pd.DataFrame,
               kinds: Mapping[str, str]) -> list[str]:
    base = separability[(separability["control"] == "none")
                        & (separability["transform"] == "raw") & (separability["layer"] == 0)]
    mfs = base.groupby("protocol")["mfs_baseline"].mean()
    words = polysemy[(polysemy["control"] == "none") & (polysemy["sample"] == "WordNet words")]
    n_all = words["n_words"] + words["n_without_entry"]
    out = [
        f"The most-frequent-sense baseline is {pct(mfs['natural'])} when each word's senses "
        f"keep their SemCor frequencies, and {pct(mfs['as sampled'])} over the occurrences as "
        "sampled (round-robin over senses, so that every sense is seen); every claim uses the "
        "first.",
        f"Of the {int(n_all.iloc[0])} STS words in enough sentences, "
        f"{plural(int(words['n_without_entry'].iloc[0]), 'word')} have no WordNet entry "
        "(closed-class words such as determiners, pronouns and prepositions, which WordNet "
        "does not list) and are left out of the regression the claims use; the table also "
        "gives the fit that counts them as one sense.",
    ]
    return out + claim_sentences(claims, kinds)


@with_blas_threads
def analyse(semcor: Mapping[str, Store], wic: Mapping[str, Store], sts: Mapping[str, Store],
            *, wic_pairs: pd.DataFrame, sense_weights: Mapping[str, float],
            sentences: Sequence[str] | None = None, seed: int = 0, n_boot: int = 1000,
            n_draws: int = 5, fit_rows: int = 2000, view_layers: int = 13,
            umap_words: int = 8, min_contexts: int = 5) -> SensesResult:
    """Seed 000's and seed 001's sense claims for every model, each layer read once per store.

    Parameters
    ----------
    semcor, wic, sts : mapping of model spec -> :class:`Store`
        The models' stores of ``corpus.semcor_targets``, ``corpus.wic_corpus`` and
        ``corpus.sts`` (the same models in each).
    wic_pairs : the pairs of ``corpus.wic_corpus`` (store rows of both targets)
    sense_weights : a sense key's natural frequency (its count in all of SemCor:
        ``lmgeometry.io.lexical.semcor_sense_counts``)
    sentences : the SemCor sentences, for the views' hover text
    seed : seeds the natural draws, the sampled rows, UMAP and the bootstraps
    n_boot : bootstrap replicates
    n_draws : natural subsamples per word
    fit_rows : sampled words per layer on which the transforms and the PCA are fitted
    view_layers, umap_words : layers given per-word views; words given UMAP views
    min_contexts : sentences a word needs to enter the polysemy regression

    Returns
    -------
    SensesResult
        ``tables``: ``separability`` (per model, layer, control, transform and protocol),
        ``views`` (1-NN accuracy inside 2-D views), ``wic``, ``polysemy`` and
        ``selfsim_bins``; ``claims``; ``sentences``; ``views`` (the figures' coordinates).
    """
    tables: dict[str, list[pd.DataFrame]] = {k: [] for k in
                                             ("separability", "views", "wic", "polysemy",
                                              "selfsim_bins")}
    claims, drawn, kinds = [], {}, {}
    for spec in semcor:
        kinds[spec] = str(semcor[spec].meta.get("model", {}).get("kind", ""))
        # Matrices of tens to a few thousand rows: BLAS threads only contend (measured: a
        # 768 x 768 eigendecomposition 40 times slower with 2 threads on 2 busy cores).
        with threadpool_limits(limits=1):
            runs, views = semcor_pass(semcor[spec], sense_weights, seed=seed,
                                      n_draws=n_draws, fit_rows=fit_rows,
                                      view_layers=view_layers, umap_words=umap_words)
            sep, sep_reps = _separability_table(semcor[spec], runs, n_boot=n_boot, seed=seed)
            view, view_reps = _views_table(semcor[spec], runs, n_boot=n_boot, seed=seed)
            wic_table = wic_pass(wic[spec], wic_pairs, seed=seed, fit_rows=fit_rows)
            poly, figure, poly_reps = polysemy_pass(sts[spec], seed=seed,
                                                    min_contexts=min_contexts, n_boot=n_boot)
        drawn[spec] = _occurrence_views(views, sentences)
        for name, frame in (("separability", sep), ("views", view), ("wic", wic_table),
                            ("polysemy", poly)):
            tables[name].append(frame.assign(model=spec))
        for column, edges, name in (("n_senses", [1, 2, 4, 8, np.inf], "WordNet senses"),
                                    ("n_sentences", [5, 10, 20, 50, np.inf], "contexts")):
            bins = selfsim_by_bins(figure, column, edges)
            tables["selfsim_bins"].append(bins.assign(
                model=spec, grouping=name, depth=bins["layer"].map(semcor[spec].depth)))
        for control in runs:
            claims += _separability_claims(sep.assign(model=spec), {**sep_reps, **view_reps},
                                           view.assign(model=spec), spec, control)
            claims.append(_wic_claim(wic_table.assign(model=spec), spec, control))
            claims += _polysemy_claims(poly.assign(model=spec), poly_reps, spec, control)
    out = {name: pd.concat(frames, ignore_index=True) for name, frames in tables.items()}
    frame = calibration.annotate(claims_frame(claims), calibration.store_facts(semcor.values()))
    return SensesResult(tables=out, claims=frame,
                        sentences=_sentences(out["separability"], out["polysemy"], frame, kinds),
                        views=drawn)
