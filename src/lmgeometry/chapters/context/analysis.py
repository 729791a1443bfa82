"""Chapter 3, context measures: seed 001's claims (Ethayarajh 2019) and seed 000's token measures.

One entry point, :func:`analyse`, reads every layer of every store once and computes from it
everything the chapter shows:

* per layer, model, estimator preset and control: the anisotropy baseline, self-similarity
  (SelfSim), intra-sentence similarity (IntraSim) and maximum explainable variance (MEV), raw
  and adjusted, with 95% intervals (:mod:`lmgeometry.measures.contextual`), and the baseline
  on standardised dimensions (Timkey & van Schijndel 2021), under which the anisotropy claims
  are also tested (control ``"standardised dimensions"``);
* the least self-similar words, the stopword effect per layer, seed 000's token-level tables
  (intra-sentence similarity by position and part of speech, token self-similarity) and the
  10-nearest-neighbour measures;
* PC1 static embeddings (seed 001, Table 1) scored on the word benchmarks, against the model's
  own layer-0 (input) vectors, and their budget curve (PC1 and mean vectors of the best layer
  from 1, 2, ... contexts per word);
* the authors' released per-layer numbers for BERT, ELMo and GPT-2 beside this run's;
* seed 001's and seed 000's claims as :class:`~lmgeometry.claims.Claim` rows.

Intervals come from bootstraps drawn once per model and control and shared by every layer
(words, sentences, or sentences as clusters of tokens), so that a statistic over layers (the
smallest baseline, a Spearman trend over depth, the largest adjusted MEV) gets a joint interval.
Layer 0, the context-free input, is left out of every claim about layers (as in the paper).

The layer pass and its per-layer tables are in :mod:`.layers`, the claims and their
statistics in :mod:`.claims`, the PC1 static embeddings in :mod:`.static`,
the generated sentences and the check summary in :mod:`.sentences`, the frames the
page's tables and heatmaps show in :mod:`.views`; this module runs them (the page
imports their names from the package, :mod:`lmgeometry.chapters.context`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.calibration import authors_table
from lmgeometry.chapters.common import (
    ChapterResult,
    standardised_baseline_rows,
    standardised_control,
    with_blas_threads,
)
from lmgeometry.chapters.context.claims import (
    ANISOTROPY_CLAIMS,
    CLAIMS,
    STANDARDISED_CLAIMS,
    STATIC_CLAIMS,
    _anisotropy_claims,
    _nn_cosine_claim,
    _position_claims,
    _preset_claims,
    _token_claims,
)
from lmgeometry.chapters.context.layers import (
    PRESET_NAMES,
    STANDARDISED_PRESET,
    _band,
    _neighbour_series,
    _per_layer_frame,
    _preset_series,
    _Run,
    _scan,
    _token_tables,
    _word_tables,
)
from lmgeometry.chapters.context.params import ContextParams
from lmgeometry.chapters.context.sentences import _sentences
from lmgeometry.chapters.context.static import (
    CENTRED_PC1,
    MEAN,
    PRESET_OF,
    _static_part,
)
from lmgeometry.chapters.nulls import with_nulls, with_shuffled
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.io.benchmarks import load_benchmarks

__all__ = ["analyse"]


def _beside_authors(per_layer: pd.DataFrame, authors: pd.DataFrame) -> pd.DataFrame:
    """This run's raw baseline, mean SelfSim and random-word MEV (authors' estimators, seed
    protocol) beside the authors' released ones, long: one row per model, layer, statistic."""
    names = {"baseline_cosine": "anisotropy baseline (mean cosine of random words)",
             "selfsim": "mean self-similarity (raw)",
             "mev_baseline": "MEV of random words (the MEV baseline)"}
    ours = per_layer[(per_layer["preset"] == "ethayarajh2019")
                     & (per_layer["control"] == "none")].assign(source="this run")
    theirs = authors.assign(source="Ethayarajh (2019) release")
    cols = ["model", "layer", "depth", "source", *names]
    both = pd.concat([ours[cols], theirs[cols]] if len(theirs) else [ours[cols]],
                     ignore_index=True)
    long = both.melt(id_vars=cols[:4], var_name="statistic", value_name="value")
    long["statistic"] = long["statistic"].map(names)
    return long


def _with_standardised(frame: pd.DataFrame, run: _Run, series: dict) -> pd.DataFrame:
    """``baseline_cosine_standardised`` (exact, with its sentence-bootstrap interval) beside
    the raw baseline, on the ``corrected`` preset's rows, and ``selfsim_adj_standardised``
    and ``intrasim_adj_standardised`` with theirs on the :data:`STANDARDISED_PRESET` rows (NaN
    on the others)."""
    exact = frame["preset"] == "corrected"
    value = np.array([v for v, _ in run.std_base])
    lo, hi = _band(np.column_stack([r for _, r in run.std_base]))
    for name, column in (("", value), ("_lo", lo), ("_hi", hi)):
        frame[f"baseline_cosine_standardised{name}"] = np.where(exact, column, np.nan)
    for measure in ("selfsim_adj", "intrasim_adj"):
        means, reps = series[measure]
        for name, column in zip(("", "_lo", "_hi"), (means, *_band(reps)), strict=True):
            frame[f"{measure}_standardised{name}"] = np.where(
                frame["preset"] == STANDARDISED_PRESET, column, np.nan)
    return frame


def _standardised_part(run: _Run, p: ContextParams) -> tuple[dict, list[Claim]]:
    """Adjusted SelfSim and IntraSim on standardised dimensions: the per-layer series (joint
    bootstrap, as the raw ones) and the claims of :data:`STANDARDISED_CLAIMS` under the control
    ``standardised_control(run.control)``, with the primary rows' statistics."""
    std = replace(run, control=standardised_control(run.control),
                  ctx={STANDARDISED_PRESET: run.std_ctx})
    series = _preset_series(std, STANDARDISED_PRESET, p)
    wanted = {CLAIMS[k].claim for k in STANDARDISED_CLAIMS}
    return series, [c for c in _preset_claims(std, STANDARDISED_PRESET, series, p)
                    if c.claim in wanted and c.control == std.control]


def _run_results(run: _Run, p: ContextParams
                 ) -> tuple[dict[str, list[pd.DataFrame]], list[Claim]]:
    """Every table and claim of one model under one control, from its layer pass."""
    frames: dict[str, list[pd.DataFrame]] = {}

    def put(name: str, frame: pd.DataFrame) -> None:
        frames.setdefault(name, []).append(frame)

    claims = _anisotropy_claims(run) + _anisotropy_claims(run, standardised=True)
    std_series, std_claims = _standardised_part(run, p)
    base = (None, np.column_stack(run.base_reps))
    for preset in PRESET_NAMES:
        series = _preset_series(run, preset, p)
        put("per_layer", _with_standardised(_per_layer_frame(run, preset, series, base), run,
                                            std_series))
        lowest, stopwords = _word_tables(run, preset, p.n_lowest)
        put("lowest_self_similarity", lowest)
        put("stopwords", stopwords)
        claims += _preset_claims(run, preset, series, p)
    by_position, by_upos = _token_tables(run, p.max_position, p.min_count)
    put("tokens_by_position", by_position)
    put("tokens_by_upos", by_upos)
    neighbours, nn, nn_cosine = _neighbour_series(run, p)
    put("neighbours", neighbours)
    claims += _token_claims(run, nn, p)
    claims += _position_claims(run, p) + [_nn_cosine_claim(run, nn_cosine)]
    return frames, claims + std_claims


@with_blas_threads
def analyse(
    stores: Mapping[str, Store],
    *,
    seed: int = 0,
    static_stores: Mapping[str, Store] | None = None,
    benchmarks: Mapping[str, pd.DataFrame] | None = None,
    authors: bool = True,
    n_boot: int = 1000,
    min_contexts: int = 5,
    n_intra_sentences: int | None = 500,
    neighbour_queries: int = 3000,
    k: int = 10,
    n_lowest: int = 5,
    max_position: int = 20,
    min_count: int = 20,
    static_web_layers: str | Sequence[int] = "paper",
    static_budget: int | None = None,
    glove: bool = True,
    null_stores: Mapping[str, Store] | None = None,
) -> ChapterResult:
    """Chapter 3: every number the chapter shows, from one pass over each layer of each store.

    Parameters
    ----------
    stores : mapping of str to Store
        The models' activation stores on the STS corpus (the ``model`` column is
        ``Store.label``). A decoder's numbers are computed under both controls of
        :data:`lmgeometry.claims.record.CONTROLS`, an encoder's under ``"none"``.
    seed : int
        Seeds every sample and bootstrap.
    static_stores : mapping of str to Store, optional
        The models' stores on the benchmark-word corpus, for PC1 static embeddings; none: no
        static part.
    benchmarks : mapping of str to DataFrame, optional
        Word benchmarks by name (default :func:`lmgeometry.io.benchmarks.load_benchmarks`).
    authors : bool
        Load the authors' released numbers (:func:`authors_table`; needs the data files).
    n_boot : int
        Bootstrap replicates of every interval.
    min_contexts, n_intra_sentences, neighbour_queries, k, n_lowest, max_position, min_count
    static_web_layers, static_budget
        As the fields of :class:`~lmgeometry.chapters.context.params.ContextParams`.
    glove : bool
        Compare with GloVe 6B-50d (:func:`lmgeometry.io.vectors.glove_vectors`) when its package
        is installed; the comparison is left out (and said so) when it is not.
    null_stores : mapping of str to Store, optional
        The untrained twins' stores (:func:`.nulls.with_nulls`; no static part on them).

    Returns
    -------
    ChapterResult
        ``tables``: ``per_layer`` (model, layer, depth, preset, control, counts, the first
        word's norm ratio, baselines, ``baseline_cosine_standardised`` with ``_lo``/``_hi``
        (``corrected`` rows), and ``selfsim``, ``intrasim``, ``mev`` raw and ``_adj``
        with ``_lo``/``_hi``), ``lowest_self_similarity``, ``stopwords`` (per-layer Cohen's d),
        ``tokens_by_position``, ``tokens_by_upos``, ``neighbours``, ``static_scores`` (the
        authors' :data:`PC1`, every benchmark), ``static_layers`` (rho with its interval per
        embedding, both :data:`PC1_EMBEDDINGS` too, and benchmark, on shared items; ``plateau``:
        each PC1's layers overlapping its best), ``static_budget`` (both PC1s and the mean
        vectors from k contexts, in the authors' best PC1 layer),
        ``authors`` and ``beside_authors`` (the authors' released numbers); ``claims``: one
        row per claim of :data:`CLAIMS`, model, preset (the ``preset`` column, ``""`` for a
        claim with one estimator; the statistic names it too) and control; ``topics``: the
        generated sentences by topic (:data:`TOPICS`: each claim's verdict by kind of model,
        the attention-sink findings, the verdicts the first token drives, the standardised
        dimensions, the static vectors), ``sentences`` all of them in that order.
    """
    p = ContextParams(seed=seed, n_boot=n_boot, min_contexts=min_contexts,
                      n_intra_sentences=n_intra_sentences, neighbour_queries=neighbour_queries,
                      k=k, n_lowest=n_lowest, max_position=max_position, min_count=min_count,
                      static_web_layers=static_web_layers, static_budget=static_budget)
    author_layers = authors_table()[0] if authors else pd.DataFrame()
    frames: dict[str, list[pd.DataFrame]] = {}
    claims: list[Claim] = []
    shuffled: list[Claim] = []  # the depth trends' nulls: the layers in random orders
    kinds = {s.label: s.meta.get("model", {}).get("kind", "") for s in stores.values()}
    for store in stores.values():
        for run in _scan(store, p):
            f, c = _run_results(run, p)
            for name, parts in f.items():
                frames.setdefault(name, []).extend(parts)
            claims += c
    if static_stores:
        bench = dict(benchmarks) if benchmarks is not None else load_benchmarks()
        claims += _static_part(static_stores, bench, glove, p, frames, shuffled)
    tables = {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items()}
    tables["authors"] = author_layers
    tables["beside_authors"] = _beside_authors(tables["per_layer"], author_layers)
    facts = calibration.store_facts(stores.values())
    table = _static_comparability(calibration.annotate(claims_frame(claims), facts),
                                  tables.get("static_layers"))
    table = standardised_baseline_rows(table, [CLAIMS[k].claim for k in ANISOTROPY_CLAIMS])
    table = with_shuffled(table, shuffled)
    if null_stores:
        table = with_nulls(table, analyse(null_stores, authors=False, **asdict(p)).claims)
    return ChapterResult(tables=tables, claims=table, topics=_sentences(tables, table, kinds))


def _static_comparability(claims: pd.DataFrame, layers: pd.DataFrame | None) -> pd.DataFrame:
    """Centred PC1 static-embedding rows whose PC1 vectors are mostly noise are not a fair test.

    The centred first component of a word's occurrences (:data:`CENTRED_PC1`, the
    ``corrected`` rows) is its main direction of *variation*; from a few contexts it is mostly
    noise. Where a model's best centred PC1 vectors score (mean Spearman rho on the similarity
    benchmarks) below half of what the mean vectors of the very same contexts score
    (:data:`MEAN`), those rows measure the context budget, not the model, and do not count as
    evidence on the seed. The authors' vectors (:data:`PC1`, uncentred) point along the mean
    and are not judged by this rule.
    """
    if layers is None or layers.empty:
        return claims
    mean = layers[(layers["benchmark"] == "mean") & (layers["layer"] > 0)]
    best = mean.groupby(["model", "control", "embedding"])["rho"].max()
    out = claims.copy()
    static = [CLAIMS[k].claim for k in STATIC_CLAIMS]
    centred = out["claim"].isin(static) & (out["preset"] == PRESET_OF[CENTRED_PC1])
    for i, row in out[centred].iterrows():
        key = (row["model"], row["control"])
        pc1, ctx = best.get((*key, CENTRED_PC1), math.nan), best.get((*key, MEAN), math.nan)
        if row["applies"] and math.isfinite(pc1) and math.isfinite(ctx) and pc1 < ctx / 2:
            out.at[i, "applies"] = False
            out.at[i, "applies_reason"] = (
                f"this run's centred PC1 vectors score a mean rho of {pc1:.2f} where the mean "
                f"vectors of the same contexts score {ctx:.2f}: the centred first component of "
                "a few contexts is mostly noise, so the row measures the context budget, not "
                "the model")
    return out
