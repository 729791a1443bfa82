"""Chapter 3, context measures: the layer pass and its per-layer tables.

:func:`_scan` reads each layer of a store once and collects, per model and control
(:class:`_Run`), the context tables of both estimator presets (:data:`PRESET_NAMES`), the
baseline's sentence-bootstrap replicates, the same on standardised dimensions
(:data:`STANDARDISED_PRESET`), seed 000's token measures, the nearest neighbours and the first
word's norm ratio. The rest turns a run into per-layer tables, with intervals from bootstraps
drawn once per model and control and shared by every layer (joint intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from lmgeometry.activations.store import Store
from lmgeometry.chapters.common import control_rows, controls_for
from lmgeometry.chapters.context.params import ContextParams
from lmgeometry.claims.record import CONTROLS
from lmgeometry.measures import contextual, stats
from lmgeometry.measures.baselines import baseline_and_replicates, cross_sentence_replicates
from lmgeometry.measures.contextual import ContextTables
from lmgeometry.measures.tokens import neighbour_measures, token_measures
from lmgeometry.measures.unit_rows import UnitRows

__all__ = [
    "PRESET_NAMES",
    "STANDARDISED_PRESET",
]


#: The two estimator presets of :data:`lmgeometry.measures.contextual.PRESETS`.
PRESET_NAMES: tuple[str, ...] = ("ethayarajh2019", "corrected")

#: The estimators of the SelfSim and IntraSim claims on standardised dimensions: the corrected
#: ones (pseudo-sentence baseline). There the authors' pairwise baseline is about 0, while a
#: word's cosine to the mean of its own m-word sentence stays near 1/sqrt(m) even for random
#: vectors, so the authors' adjusted IntraSim would show that floor, not the model.
STANDARDISED_PRESET = PRESET_NAMES[1]


@dataclass
class _Run:
    """What the layer pass collects for one model under one control, layer by layer."""

    model: str
    control: str
    depth: list[float]
    words: pd.DataFrame
    draws: np.ndarray
    ctx: dict[str, list[ContextTables]] = field(default_factory=dict)
    base_reps: list[np.ndarray] = field(default_factory=list)
    std_base: list[tuple[float, np.ndarray]] = field(default_factory=list)  # standardised
    std_ctx: list[ContextTables] = field(default_factory=list)  # standardised, primary preset
    token_intra: list[np.ndarray] = field(default_factory=list)
    token_self: list[np.ndarray] = field(default_factory=list)
    token_self_cased: list[np.ndarray] = field(default_factory=list)
    neighbours: list[pd.DataFrame] = field(default_factory=list)
    sink_ratio: list[float] = field(default_factory=list)
    decoder: bool = False

    @property
    def n_layers(self) -> int:
        return len(self.depth)


def _sentence_draws(sentence_ids: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` bootstrap counts of the distinct sentences (columns in sorted id order)."""
    n_s = len(np.unique(sentence_ids))
    gen = np.random.default_rng([seed, 3])
    return gen.multinomial(n_s, np.full(n_s, 1.0 / n_s), size=n_boot).astype(np.float64)


def _sink_ratio(ur: UnitRows, words: pd.DataFrame) -> float:
    """Median norm of each sentence's first word over the median norm of the other words."""
    first = words["word_index"].to_numpy() == 0
    if first.all() or not first.any():
        return math.nan
    return float(np.median(ur.norms[first]) / np.median(ur.norms[~first]))


def _add_layer(run: _Run, u: UnitRows, nn: pd.DataFrame, p: ContextParams) -> None:
    """Every measure of one layer of one run, from its unit rows."""
    w = run.words
    for preset in PRESET_NAMES:
        run.ctx.setdefault(preset, []).append(contextual.context_tables(
            u, w, preset, p.seed, min_contexts=p.min_contexts,
            n_intra_sentences=p.n_intra_sentences))
    run.base_reps.append(cross_sentence_replicates(u, w["sentence_id"], run.draws))
    tokens = token_measures(u, w)
    run.token_intra.append(tokens["token_intra"].to_numpy())
    run.token_self.append(tokens["token_self"].to_numpy())
    if run.control == "none":  # the first-word claim's tokens: case kept, as GPT-2's ids
        run.token_self_cased.append(token_measures(u, w, lowercase=False)["token_self"].to_numpy())
    run.neighbours.append(nn.drop(columns="subset").reset_index(drop=True))
    run.sink_ratio.append(_sink_ratio(u, w))


def _scan(store: Store, p: ContextParams) -> list[_Run]:
    """Read each layer of ``store`` once; compute every measure under every control."""
    controls = controls_for(store)
    rows = {c: control_rows(store, c) for c in controls}
    runs = []
    for c in controls:
        w = store.words.iloc[rows[c]].reset_index(drop=True)
        runs.append(_Run(store.label, c, [store.depth(i) for i in range(store.n_layers)], w,
                         _sentence_draws(w["sentence_id"].to_numpy(), p.n_boot, p.seed),
                         decoder=controls == CONTROLS))
    n = store.n_words
    gen = np.random.default_rng([p.seed, 1])
    queries = np.sort(gen.choice(n, size=min(p.neighbour_queries, n), replace=False))
    subsets = {c: np.isin(np.arange(n), rows[c]) for c in controls}
    for i in tqdm(range(store.n_layers), desc=f"context measures {store.label}", unit="layer",
                  mininterval=1.0):
        X = store.layer(i)
        ur = UnitRows.of(X)
        nn = neighbour_measures(ur, store.words, p.k, queries=queries,
                                           subsets=subsets)
        for run in runs:
            u = ur if run.control == "none" else ur.take(rows[run.control])
            _add_layer(run, u, nn[nn["subset"] == run.control], p)
            _add_standardised(run, X if run.control == "none" else X[rows[run.control]], p)
    return runs


def _add_standardised(run: _Run, X: np.ndarray, p: ContextParams) -> None:
    """One layer on standardised dimensions (moments over the run's rows): the exact baseline
    with its replicates, and the context tables under :data:`STANDARDISED_PRESET`."""
    units = UnitRows.of(X, standardise=True)
    run.std_base.append(baseline_and_replicates(units, run.words["sentence_id"], run.draws,
                                                standardise=True))
    run.std_ctx.append(contextual.context_tables(
        units, run.words, STANDARDISED_PRESET, p.seed, min_contexts=p.min_contexts,
        n_intra_sentences=p.n_intra_sentences, standardise=True))


def _columns(tables: Sequence[pd.DataFrame], key: str, value: str) -> np.ndarray:
    """items x layers matrix of ``value`` from per-layer tables that list the same items."""
    first = tables[0][key].to_numpy()
    for t in tables[1:]:
        if not np.array_equal(t[key].to_numpy(), first):
            raise RuntimeError(f"per-layer tables list different {key}s; cannot stack them")
    return np.column_stack([t[value].to_numpy(dtype=np.float64) for t in tables])


def _joint(V: np.ndarray, n_boot: int, seed: int,
           weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column means of ``V`` (items x layers) and their joint bootstrap replicates."""
    w = np.ones(len(V)) if weights is None else weights
    finite = np.isfinite(V)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (np.where(finite, V, 0.0) * w[:, None]).sum(0) / (finite * w[:, None]).sum(0)
    if len(V) == 0 or n_boot <= 0:
        return means, np.full((max(n_boot, 0), V.shape[1]), np.nan)
    return means, stats.weighted_bootstrap_means(V, w, n_boot, np.random.default_rng(seed))


def _band(reps: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per-column percentile interval of replicates (NaN columns stay NaN)."""
    if reps.size == 0 or not np.isfinite(reps).any():
        nan = np.full(reps.shape[1], np.nan)
        return nan, nan.copy()
    with np.errstate(invalid="ignore"):
        lo, hi = np.nanquantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return lo, hi


def _preset_series(run: _Run, preset: str, p: ContextParams
                   ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-layer means and joint replicates of one preset's measures, raw and adjusted."""
    t = run.ctx[preset]
    wt, st = [x.words for x in t], [x.sentences for x in t]
    out = {}
    for name, tables, key in (("selfsim", wt, "word"), ("mev", wt, "word"),
                              ("intrasim", st, "sentence")):
        for suffix in ("", "_adj"):
            out[name + suffix] = _joint(_columns(tables, key, name + suffix), p.n_boot,
                                        p.seed)
    return out


def _per_layer_frame(run: _Run, preset: str, series: dict, base: tuple) -> pd.DataFrame:
    """One run's per-layer table for one preset (columns as :func:`analyse` documents)."""
    t = run.ctx[preset]
    frame = pd.DataFrame({
        "model": run.model, "layer": np.arange(run.n_layers), "depth": run.depth,
        "preset": preset, "control": run.control,
        "n_words": [len(x.words) for x in t], "n_sentences": [len(x.sentences) for x in t],
        "first_word_norm_ratio": run.sink_ratio,
        "baseline_cosine": [x.baseline_cosine for x in t],
    })
    exact = preset == "corrected"
    lo, hi = _band(base[1]) if exact else (np.nan, np.nan)
    frame["baseline_cosine_lo"], frame["baseline_cosine_hi"] = lo, hi
    frame["mev_baseline"] = [x.mev_baseline for x in t]
    frame["intrasim_baseline"] = [x.intrasim_baseline for x in t]
    frame["mev_baseline_used"] = [
        x.words["mev_baseline"].mean() if "mev_baseline" in x.words else x.mev_baseline
        for x in t]
    for name, (means, reps) in series.items():
        lo, hi = _band(reps)
        frame[name], frame[name + "_lo"], frame[name + "_hi"] = means, lo, hi
    return frame


def _stopword_flags(words: pd.DataFrame) -> pd.Series:
    """Lower-cased word -> whether spaCy marks it a stopword (in any of its occurrences)."""
    key = words["text"].astype(str).str.lower()
    return words["is_stop"].fillna(False).astype(bool).groupby(key).any()


def _word_tables(run: _Run, preset: str, n_lowest: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The least self-similar words per layer, and the stopword effect per layer."""
    stop = _stopword_flags(run.words)
    lowest, effect = [], []
    for layer, t in enumerate(run.ctx[preset]):
        w = t.words.assign(is_stop=t.words["word"].map(stop).fillna(False).astype(bool))
        low = w.dropna(subset=["selfsim"]).sort_values(["selfsim", "word"], kind="stable")
        lowest.append(low.head(n_lowest).assign(rank=np.arange(1, min(n_lowest, len(low)) + 1),
                                                layer=layer))
        d = stats.standardised_difference(w["selfsim_adj"], w["is_stop"], n_boot=0)[0]
        effect.append({"layer": layer, "n_stop": int(w["is_stop"].sum()),
                       "n_other": int((~w["is_stop"]).sum()),
                       "selfsim_adj_stop": w.loc[w["is_stop"], "selfsim_adj"].mean(),
                       "selfsim_adj_other": w.loc[~w["is_stop"], "selfsim_adj"].mean(), "d": d})
    head = {"model": run.model, "preset": preset, "control": run.control}
    low = pd.concat(lowest, ignore_index=True)
    low = low[["layer", "rank", "word", "n_sentences", "selfsim", "selfsim_adj", "is_stop"]]
    return _tidy(low.assign(**head), run), _tidy(pd.DataFrame(effect).assign(**head), run)


def _tidy(frame: pd.DataFrame, run: _Run) -> pd.DataFrame:
    """``model, layer, depth`` first, then ``preset`` and ``control`` where present."""
    frame = frame.assign(model=run.model, depth=frame["layer"].map(lambda i: run.depth[i]))
    first = [c for c in ("model", "layer", "depth", "preset", "control") if c in frame]
    return frame[first + [c for c in frame.columns if c not in first]]


def _token_tables(run: _Run, max_position: int, min_count: int
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 000's token measures per layer: intra-sentence similarity by position, and
    intra-sentence and self-similarity by part of speech (groups under ``min_count`` left out).
    """
    pos = run.words["word_index"].to_numpy()
    upos = run.words["upos"].astype(str).to_numpy()
    by_pos, by_upos = [], []
    for layer, (intra, self_) in enumerate(zip(run.token_intra, run.token_self, strict=True)):
        t = pd.DataFrame({"position": pos, "upos": upos, "token_intra": intra,
                          "token_self": self_})
        g = t[t["position"] <= max_position].groupby("position")["token_intra"].agg(
            ["mean", "count"])
        g = g[g["count"] >= min_count]
        by_pos.append(pd.DataFrame({"layer": layer, "position": g.index,
                                    "token_intra": g["mean"].to_numpy(),
                                    "n": g["count"].to_numpy()}))
        u = t.groupby("upos").agg(token_intra=("token_intra", "mean"),
                                  token_self=("token_self", "mean"), n=("token_intra", "count"))
        u = u[u["n"] >= min_count].reset_index()
        by_upos.append(u.assign(layer=layer))
    head = {"control": run.control}
    return (_tidy(pd.concat(by_pos, ignore_index=True).assign(**head), run),
            _tidy(pd.concat(by_upos, ignore_index=True).assign(**head), run))


def _query_series(run: _Run, column: str, p: ContextParams
                  ) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """Per-layer mean of a per-query neighbour column and its joint replicates, bootstrapped
    over sentences (the queries of one sentence are one cluster; the same draws for every
    column), and the number of sentences."""
    codes, uniq = pd.factorize(run.neighbours[0]["sentence_id"].to_numpy())
    weights = np.bincount(codes).astype(np.float64)
    V = np.column_stack([np.bincount(codes, weights=n[column].fillna(0).to_numpy())
                         for n in run.neighbours]) / weights[:, None]
    return _joint(V, p.n_boot, p.seed + 7, weights), len(uniq)


def _neighbour_series(run: _Run, p: ContextParams
                      ) -> tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray],
                                 tuple[np.ndarray, np.ndarray]]:
    """Per-layer same-word share of the 10 nearest neighbours and their mean cosine, each
    with its 95% interval over sentences, and both series (means, replicates)."""
    (means, reps), n_sentences = _query_series(run, "same_word_share", p)
    cosine, _ = _query_series(run, "mean_neighbour_cosine", p)
    lo, hi = _band(reps)
    cos_lo, cos_hi = _band(cosine[1])
    frame = pd.DataFrame({
        "layer": np.arange(run.n_layers), "control": run.control, "same_word_share": means,
        "same_word_share_lo": lo, "same_word_share_hi": hi,
        "mean_neighbour_cosine": [n["mean_neighbour_cosine"].mean() for n in run.neighbours],
        "mean_neighbour_cosine_lo": cos_lo, "mean_neighbour_cosine_hi": cos_hi,
        "queries": len(run.neighbours[0]), "sentences": n_sentences})
    return _tidy(frame, run), (means, reps), cosine
