"""Chapter 3, context measures: PC1 static embeddings (seed 001, Table 1).

Each word's PC1 over its contexts in each layer (and its mean layer-0 vector, the model's own
input vectors) scored on the word benchmarks, beside GloVe 6B-50d; the same-item comparisons
with a paired bootstrap, the best-layer plateau, seed 001's static-embedding claims, the
budget curve (PC1 and mean vectors of the best layer from 1, 2, ... contexts per word), and
the tables the chapter draws (:func:`static_curves`, :func:`table1_beside`).

A PC1 is made as each estimator preset makes it (:data:`PC1_EMBEDDINGS`): :data:`PC1`, the
authors' vectors (``ethayarajh2019``: the uncentred first singular vector,
``TruncatedSVD.components_[0]``, signed by 2019 scikit-learn's ``svd_flip``, as Table 1 was
made: docs/SEED001_ESTIMATORS.md), and :data:`CENTRED_PC1` (``corrected``: the centred first
principal component, signed along the mean). The claims are made under both presets.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from lmgeometry.activations.store import Store
from lmgeometry.chapters.common import control_rows, controls_for
from lmgeometry.chapters.context.claims import (
    MIN_COVERED_ITEMS,
    STATIC_CLAIMS,
    _claim,
    _interval,
)
from lmgeometry.chapters.context.layers import _band
from lmgeometry.chapters.context.params import ContextParams
from lmgeometry.chapters.nulls import shuffled_claim
from lmgeometry.claims import Claim
from lmgeometry.errors import DataUnavailable
from lmgeometry.io import vectors
from lmgeometry.measures import contextual, reference_tables, stats, wordbench
from lmgeometry.measures.static import budget_embeddings, mean_embeddings, static_embeddings
from lmgeometry.measures.unit_rows import UnitRows
from lmgeometry.measures.word_similarity import paired_correlations, similarity_scores
from lmgeometry.report import prose

__all__ = [
    "CENTRED_PC1",
    "DISJOINT_SIMILARITY",
    "GLOVE",
    "INPUT",
    "MEAN",
    "PC1",
    "PC1_EMBEDDINGS",
    "STATIC_STREAMS",
    "static_curves",
    "table1_beside",
]


#: Similarity benchmarks with disjoint item sets (WS353's similarity and relatedness splits
#: are subsets of WS353, so averaging them with it would count those items twice).
DISJOINT_SIMILARITY: tuple[str, ...] = ("simlex999", "men", "ws353", "rw")

#: The random streams of the static part, by name: a stream seeds its generator with
#: ``[seed, number, ...]`` (no other seed list of chapter 3 uses these numbers). ``"items"``:
#: the resamples of a benchmark's items (``[seed, 9, j]`` for its ``j``-th benchmark), shared
#: by every embedding and by the budget curve; ``"budget"``: the order in which each word's
#: contexts enter the budget curve (:func:`lmgeometry.measures.static.context_ranks`).
STATIC_STREAMS: dict[str, int] = {"items": 9, "budget": 12}


def _web_layers(n_layers: int, choice: str | Sequence[int]) -> list[int]:
    """The layers scored with the ``web`` protocol: the paper's 1, 2, L-1, L (``"paper"``,
    the one string :class:`ContextParams` lets through), or the given ones."""
    last = n_layers - 1
    if isinstance(choice, str):
        return sorted({x for x in (1, 2, last - 1, last) if 0 <= x <= last})
    return sorted(set(choice))


def _score(vectors: dict, frames: Mapping[str, pd.DataFrame], protocol: str, seed: int,
           **columns: Any) -> pd.DataFrame:
    """:func:`wordbench.score_all`, with a benchmark left unscored (NaN) below
    :data:`MIN_COVERED_ITEMS` covered items."""
    s = wordbench.score_all(vectors, frames=frames, protocol=protocol, seed=seed)
    s["covered"] = np.rint(s["coverage"].fillna(0) * s["total"]).astype(int)
    s["scored"] = s["covered"] >= MIN_COVERED_ITEMS
    s.loc[~s["scored"], "value"] = np.nan
    return s.assign(vocabulary=len(vectors), **columns)


#: The static baseline from a package (:func:`lmgeometry.io.vectors.glove_vectors`).
GLOVE = "GloVe 6B-50d"
#: The model's own input vectors: each word's mean layer-0 vector.
INPUT = "layer-0 mean"
#: A diagnostic beside PC1: each word's mean vector over its contexts in a layer (1-L).
MEAN = "mean of contexts"
#: The authors' PC1 vectors (the ``ethayarajh2019`` preset's): uncentred, ``svd_flip`` sign.
PC1 = "PC1"
#: The centred PC1 vectors (the ``corrected`` preset's), signed along the mean.
CENTRED_PC1 = "centred PC1"
#: Estimator preset -> the name of its PC1 static vectors in the chapter's tables.
PC1_EMBEDDINGS: dict[str, str] = {"ethayarajh2019": PC1, "corrected": CENTRED_PC1}
PRESET_OF = {name: preset for preset, name in PC1_EMBEDDINGS.items()}


def _pc1_options(preset: str) -> dict[str, Any]:
    """How ``preset`` makes PC1 vectors: the ``centered`` and ``orientation`` arguments of
    :func:`static_embeddings` and :func:`budget_embeddings`."""
    est = contextual.get_preset(preset)
    return {"centered": est.pc1_centered, "orientation": est.pc1_orientation}


def _target_rows(store: Store, control: str) -> tuple[np.ndarray, pd.DataFrame]:
    """The rows a control keeps whose vectors make static embeddings, and their word table.

    On a corpus built for the benchmarks (:func:`lmgeometry.io.corpus.benchmark_contexts`)
    these are the target rows, with ``text`` set to the benchmark word they stand for (a
    plural form counts for its word); on any other corpus, every row."""
    rows = control_rows(store, control)
    w = store.words
    if "is_target" in w and w["is_target"].any():
        rows = rows[w["is_target"].to_numpy()[rows]]
        words = w.iloc[rows].reset_index(drop=True)
        return rows, words.assign(text=words["target"].astype(str))
    return rows, w.iloc[rows].reset_index(drop=True)


def _scan_static(store: Store, frames: Mapping[str, pd.DataFrame], p: ContextParams,
                 glove: Mapping[str, np.ndarray] | None) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Read each layer once: PC1 static vectors (and layer-0 mean vectors), scored.

    The authors' PC1 vectors (:data:`PC1`) are scored on every benchmark (``strict``, and
    ``web`` on the paper's layers) under the seed's protocol; under the first-word control
    only on the similarity items the comparisons need. GloVe is scored on the words that have
    PC1 vectors (the same items); the centred PC1 (:data:`CENTRED_PC1`) and each word's mean
    vector in layers 1-L (:data:`MEAN`) only on the similarity items. Returns
    the scores table and, per control, the per-item similarity scores of each embedding
    (``(embedding, layer) -> benchmark -> scores``).
    """
    controls = controls_for(store)
    picked = {c: _target_rows(store, c) for c in controls}
    web = _web_layers(store.n_layers, p.static_web_layers)
    sim = {b: frames[b] for b in DISJOINT_SIMILARITY if b in frames}
    scores, items = [], {c: {} for c in controls}
    union = np.unique(np.concatenate([r for r, _ in picked.values()]))
    local = {c: np.searchsorted(union, r) for c, (r, _) in picked.items()}
    for i in tqdm(range(store.n_layers), desc=f"static {store.label}", unit="layer",
                  mininterval=1.0):
        X = store.layer(i, rows=union)
        for c, (_, words) in picked.items():
            u = UnitRows.of(X[local[c]])
            found = {PC1: static_embeddings(u, words, p.min_contexts,
                                            **_pc1_options(PRESET_OF[PC1]))}
            if i == 0:
                found[INPUT] = mean_embeddings(u, words, p.min_contexts)
                if glove is not None:
                    found[GLOVE] = {w: glove[w] for w in found[PC1] if w in glove}
            if i > 0:
                extra = {MEAN: mean_embeddings(u, words, p.min_contexts),
                         CENTRED_PC1: static_embeddings(u, words, p.min_contexts,
                                                        **_pc1_options(PRESET_OF[CENTRED_PC1]))}
                for name, vec in extra.items():
                    items[c][name, i] = {b: similarity_scores(vec, f) for b, f in sim.items()}
            for name, vec in found.items():
                if c == "none":
                    scores.append(_score(vec, frames, "strict", p.seed, layer=i, control=c,
                                         embedding=name))
                items[c][name, i] = {b: similarity_scores(vec, f)
                                     for b, f in sim.items()}
            if c == "none" and i in web:
                scores.append(_score(found[PC1], frames, "web", p.seed, layer=i,
                                     control=c, embedding=PC1))
    frame = pd.concat(scores, ignore_index=True).assign(
        model=store.label, depth=lambda f: f["layer"].map(store.depth))
    first = ["model", "layer", "depth", "control", "embedding", "protocol"]
    return frame[first + [c for c in frame.columns if c not in first]], items


def _static_correlations(items: dict, frames: Mapping[str, pd.DataFrame], p: ContextParams
                         ) -> tuple[list[tuple[str, int]], dict[str, np.ndarray], dict]:
    """Spearman rho of every embedding with the human ratings, on the items every embedding
    covers, per similarity benchmark with at least :data:`MIN_COVERED_ITEMS` such items, with
    replicates from one resample of the items shared by the embeddings
    (:func:`paired_correlations`); benchmarks are resampled independently.

    Returns the embeddings (columns), ``benchmark -> (1 + n_boot, E)`` correlations (row 0 on
    all items), and per benchmark ``(covered items, total items)``."""
    order = [k for k in ((INPUT, 0), (GLOVE, 0)) if k in items]
    for name in (PC1, CENTRED_PC1, MEAN):
        order += sorted(k for k in items if k[0] == name)
    rhos, counts = {}, {}
    for j, b in enumerate(items[order[0]]):
        S = np.column_stack([items[key][b] for key in order])
        ok = np.isfinite(S).all(axis=1)
        counts[b] = (int(ok.sum()), len(ok))
        if ok.sum() >= MIN_COVERED_ITEMS:
            rhos[b] = _item_correlations(frames[b], S, ok, j, p)
    return order, rhos, counts


def _item_correlations(frame: pd.DataFrame, S: np.ndarray, ok: np.ndarray, j: int,
                       p: ContextParams) -> np.ndarray:
    """Spearman rho of each column of ``S`` (per-item scores) with the ratings of ``frame``
    on the items ``ok``, with replicates on the resamples of the ``j``-th benchmark's items
    (the ``"items"`` stream of :data:`STATIC_STREAMS`)."""
    return paired_correlations(frame["score"].to_numpy(dtype=np.float64)[ok], S[ok].T,
                               p.n_boot, [p.seed, STATIC_STREAMS["items"], j],
                               method="spearman")


def _best_pc1(order: list, rhos: dict[str, np.ndarray], embedding: str = PC1
              ) -> tuple[np.ndarray, list[int], int]:
    """The mean over benchmarks of the correlations (``(1 + n_boot, E)``), the columns of the
    PC1 vectors ``embedding`` in layers 1-L, and the best of them (largest mean rho on all
    items)."""
    R = np.mean(list(rhos.values()), axis=0)
    pc1 = [e for e, (name, layer) in enumerate(order) if name == embedding and layer > 0]
    return R, pc1, pc1[int(np.nanargmax(R[0, pc1]))]


def _static_budget(store: Store, bench: Mapping[str, pd.DataFrame], items: dict, order: list,
                   rhos: dict[str, np.ndarray], p: ContextParams) -> pd.DataFrame:
    """The budget curve of one model (seed's protocol): in the best layer of the authors' PC1
    (read again, one layer), both PC1 vectors (:data:`PC1_EMBEDDINGS`) and the mean vectors
    from ``k = 1, ..., static_budget`` contexts per word (:func:`budget_embeddings`; PC1 from
    2), each word's contexts in one order drawn from the ``"budget"`` stream, the same for
    every embedding; mean Spearman rho over the benchmarks the chapter scored, on their shared
    items that every budget covers, with intervals from the chapter's item resamples."""
    layer = order[_best_pc1(order, rhos)[2]][1]
    rows, words = _target_rows(store, "none")
    X = store.layer(layer, rows=rows)
    found: dict[int, dict[str, dict[str, np.ndarray]]] = {}
    for preset, name in PC1_EMBEDDINGS.items():
        made = budget_embeddings(X, words, range(1, p.static_budget + 1),
                                 [p.seed, STATIC_STREAMS["budget"]], **_pc1_options(preset))
        for k, vecs in made.items():
            found.setdefault(k, {MEAN: vecs["mean"]})  # the same contexts under each preset
            if "PC1" in vecs:
                found[k][name] = vecs["PC1"]
    columns = [(k, name) for k, vecs in found.items() for name in (PC1, CENTRED_PC1, MEAN)
               if name in vecs]
    names = list(items[order[0]])
    reps, n_items = [], 0
    for b in rhos:
        S = np.column_stack([items[key][b] for key in order]
                            + [similarity_scores(found[k][name], bench[b]) for k, name in columns])
        ok = np.isfinite(S).all(axis=1)
        if ok.sum() >= MIN_COVERED_ITEMS:
            reps.append(_item_correlations(bench[b], S[:, len(order):], ok, names.index(b), p))
            n_items += int(ok.sum())
    if not reps:
        return pd.DataFrame()
    R = np.mean(reps, axis=0)
    lo, hi = _band(R[1:])
    return pd.DataFrame({"model": store.label, "control": "none", "layer": layer,
                         "k": [k for k, _ in columns],
                         "embedding": [n for _, n in columns],
                         "rho": R[0], "rho_lo": lo, "rho_hi": hi, "n_items": n_items})


def _static_layers(model: str, control: str, depth: Sequence[float], order: list,
                   rhos: dict[str, np.ndarray], counts: dict) -> pd.DataFrame:
    """Per embedding (each PC1 of each layer, the mean vectors, the input vectors, GloVe) and
    benchmark (and their mean, ``"mean"``): Spearman rho on the shared items with its 95%
    interval, and whether a layer of a PC1 embedding is on the plateau of its mean (its
    interval overlaps the best layer's, layers 1-L)."""
    rows = []
    for b, r in {**rhos, **({"mean": np.mean(list(rhos.values()), axis=0)} if rhos else {})
                 }.items():
        for e, (name, layer) in enumerate(order):
            lo, hi = _band(r[1:, e:e + 1])
            rows.append({"model": model, "layer": layer,
                         "depth": np.nan if name in (INPUT, GLOVE) else depth[layer],
                         "control": control, "embedding": name, "benchmark": b,
                         "rho": r[0, e], "rho_lo": lo[0], "rho_hi": hi[0],
                         "items": counts[b][0] if b in counts else
                         sum(counts[x][0] for x in rhos),
                         "total": counts[b][1] if b in counts else
                         sum(counts[x][1] for x in rhos)})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["plateau"] = False
    for name in PC1_EMBEDDINGS.values():
        mean = frame[(frame["benchmark"] == "mean") & (frame["embedding"] == name)
                     & (frame["layer"] > 0)]
        if len(mean):
            on = stats.plateau(mean["rho"], mean["rho_lo"], mean["rho_hi"])
            frame.loc[mean.index[on], "plateau"] = True
    return frame


def _coverage_phrase(counts: dict, rhos: dict) -> str:
    """The scored benchmarks with their shared items, then those left unscored that cover
    some items; a benchmark with no covered item is not named."""
    scored = "; ".join(f"{b} {counts[b][0]} of {counts[b][1]} items "
                       f"({counts[b][0] / counts[b][1]:.0%})" for b in rhos)
    low = [f"{b} ({counts[b][0]} items)" for b in counts if b not in rhos and counts[b][0]]
    return f"scored: {scored}" + (f"; not scored (under {MIN_COVERED_ITEMS} items): "
                                  f"{', '.join(low)}" if low else "")


def _static_claims(model: str, control: str, order: list, rhos: dict, counts: dict,
                   table: pd.DataFrame, seed: int = 0) -> tuple[list[Claim], list[Claim]]:
    """Seed 001's static-embedding claims on one model under one control, under each estimator
    preset with its PC1 vectors (:data:`PC1_EMBEDDINGS`): PC1 of the best layer against the
    input vectors and against GloVe (the best layer picked inside each resample, so the choice
    is part of the interval), and the trend over layers; then the trend's null, the same rank
    correlation with the layers in random orders (:func:`.nulls.shuffled_claim`)."""
    if not rhos:
        nan = (math.nan, math.nan, math.nan)
        low = [f"{b} ({n} items)" for b, (n, _) in counts.items() if n]
        evidence = (f"no similarity benchmark has {MIN_COVERED_ITEMS} items that every "
                    "embedding covers" + (f"; covered: {', '.join(low)}" if low else ""))
        return [_claim(k, (model, control), preset, nan, evidence)
                for preset in PC1_EMBEDDINGS for k in STATIC_CLAIMS], []
    out, nulls = [], []
    for preset, embedding in PC1_EMBEDDINGS.items():
        def claim(key: str, value: tuple[float, float, float], evidence: str,
                  preset: str = preset) -> Claim:
            return _claim(key, (model, control), preset, value, evidence)

        R, pc1, best = _best_pc1(order, rhos, embedding)
        layers = [order[e][1] for e in pc1]
        on = table.loc[table["plateau"] & (table["embedding"] == embedding), "layer"].unique()
        where = (f"{embedding} vectors; best layer {order[best][1]} (mean rho "
                 f"{R[0, best]:.3f}); plateau {prose.layers_phrase(on)}; "
                 f"{_coverage_phrase(counts, rhos)}")
        for key, name in (("static_beats_input", INPUT), ("static_beats_glove", GLOVE)):
            if (name, 0) not in order:
                continue
            e = order.index((name, 0))
            gain = R[:, pc1] - R[:, e:e + 1]
            value = _interval(float(np.nanmax(gain[0])), np.nanmax(gain[1:], axis=1))
            out.append(claim(key, value, f"{name} mean rho {R[0, e]:.3f}; {where}"))
        trend = _interval(float(stats.spearman_rows(R[:1, pc1])[0]),
                          stats.spearman_rows(R[1:, pc1]))
        out.append(claim("static_lower_better", trend,
                         f"mean rho {R[0, pc1[0]]:.3f} (layer {layers[0]}) to "
                         f"{R[0, pc1[-1]]:.3f} (layer {layers[-1]}); {where}"))
        scores = R[0, pc1]

        def rho(order: np.ndarray, scores: np.ndarray = scores) -> float:
            return float(stats.spearman_rows(scores[order][None])[0])

        nulls.append(shuffled_claim(out[-1], rho, len(pc1), seed))
    return out, nulls


def _static_part(static_stores: Mapping[str, Store], bench: Mapping[str, pd.DataFrame],
                 glove: bool, p: ContextParams, frames: dict[str, list[pd.DataFrame]],
                 nulls: list[Claim]) -> list[Claim]:
    """Seed 001's Table 1 part: per static store and control, the scores, the same-item
    comparisons (added to ``frames``) and the static claims (their nulls added to
    ``nulls``)."""
    vectors = _glove(static_stores.values()) if glove else None
    claims = []
    for store in static_stores.values():
        scores, items = _scan_static(store, bench, p, vectors)
        frames.setdefault("static_scores", []).append(scores)
        depth = [store.depth(i) for i in range(store.n_layers)]
        for c, it in items.items():
            order, rhos, counts = _static_correlations(it, bench, p)
            layers = _static_layers(store.label, c, depth, order, rhos, counts)
            frames.setdefault("static_layers", []).append(layers)
            made, shuffled = _static_claims(store.label, c, order, rhos, counts, layers,
                                            p.seed)
            claims += made
            nulls += shuffled
            if c == "none" and rhos:
                frames.setdefault("static_budget", []).append(
                    _static_budget(store, bench, it, order, rhos, p))
    return claims


def _glove(stores: Iterable[Store]) -> dict[str, np.ndarray] | None:
    """GloVe vectors of every word the static stores could give a vector, or None when the
    package is not installed."""
    words: set[str] = set()
    for store in stores:
        w = store.words
        key = w["target"] if "is_target" in w and w["is_target"].any() else w["text"]
        words.update(key.dropna().astype(str).str.lower())
    try:
        return vectors.glove_vectors(words)
    except DataUnavailable:
        return None


def static_curves(layers: pd.DataFrame, control: str = "none") -> pd.DataFrame:
    """The ``static_layers`` rows a figure draws: the mean over the scored similarity
    benchmarks, per model and layer 1-L, for both PC1 vectors (:data:`PC1_EMBEDDINGS`), with
    the input vectors and GloVe repeated over layers 1-L as flat reference lines. Each word's
    mean vector (:data:`MEAN`) is not drawn: the authors' PC1 vectors point along it and score
    what it scores (:func:`lmgeometry.chapters.context.sentences.static_sentences` says by
    how much)."""
    d = layers[(layers["benchmark"] == "mean") & (layers["control"] == control)]
    curves = d[d["embedding"].isin(list(PC1_EMBEDDINGS.values())) & (d["layer"] > 0)]
    flat = []
    for model, part in curves.groupby("model", sort=False):
        grid = part.loc[part["embedding"] == PC1, ["layer", "depth"]]
        for _, ref in d[(d["model"] == model) & d["embedding"].isin([INPUT, GLOVE])].iterrows():
            flat.append(grid.assign(**{c: ref[c] for c in ref.index
                                       if c not in ("layer", "depth")}))
    return pd.concat([curves, *flat], ignore_index=True)


def table1_beside(scores: pd.DataFrame) -> pd.DataFrame:
    """This run's ``web`` PC1 scores in the layout of seed 001's Table 1, the paper's below.

    ``scores`` is the ``static_scores`` table of :func:`analyse`. The result has the paper's
    nine benchmarks as columns and a two-level index: ``("this run", "<model>, layer <l>")``
    per scored layer (NaN where fewer than :data:`MIN_COVERED_ITEMS` items are covered: such a
    benchmark is not scored), ``("this run: coverage", "<model>")`` with the share of each
    benchmark's items whose words all have a vector, and ``("paper (reference only)",
    "<embedding>")`` for every row of
    :data:`lmgeometry.measures.reference_tables.ETHAYARAJH2019_TABLE1` (not results of this run).
    """
    columns = list(reference_tables.ETHAYARAJH2019_COLUMNS.values())
    d = scores[(scores["protocol"] == "web") & scores["benchmark"].isin(columns)]
    run = d.assign(row=d["model"] + ", layer " + d["layer"].astype(str)).pivot_table(
        index="row", columns="benchmark", values="value", sort=False, dropna=False)
    cov = d.pivot_table(index="model", columns="benchmark", values="coverage", aggfunc="first",
                        sort=False)
    ref = reference_tables.reference_frame("ethayarajh2019_table1").pivot_table(
        index="embedding", columns="benchmark", values="value", sort=False)
    parts = {"this run": run, "this run: coverage": cov, "paper (reference only)": ref}
    return pd.concat({k: v.reindex(columns=columns) for k, v in parts.items()},
                     names=["source", "embedding"])
