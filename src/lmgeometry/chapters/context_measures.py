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
  own layer-0 (input) vectors;
* the authors' released per-layer numbers for BERT, ELMo and GPT-2 beside this run's;
* seed 001's and seed 000's claims as :class:`~lmgeometry.report.claims.Claim` rows.

Intervals come from bootstraps drawn once per model and control and shared by every layer
(words, sentences, or sentences as clusters of tokens), so that a statistic over layers (the
smallest baseline, a Spearman trend over depth, the largest adjusted MEV) gets a joint interval.
Layer 0, the context-free input, is left out of every claim about layers (as in the paper).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.calibration import authors_table
from lmgeometry.chapters.common import (
    CONTROLS,
    STANDARDISED,
    ChapterResult,
    control_rows,
    controls_for,
    standardised_baseline_rows,
    standardised_control,
    with_blas_threads,
)
from lmgeometry.errors import DataUnavailable
from lmgeometry.io import vectors
from lmgeometry.io.benchmarks import load_benchmarks
from lmgeometry.measures import contextual, reference_tables, stats, wordbench
from lmgeometry.measures.baselines import baseline_and_replicates, cross_sentence_replicates
from lmgeometry.measures.contextual import ContextTables
from lmgeometry.measures.static import mean_embeddings, static_embeddings
from lmgeometry.measures.tokens import neighbour_measures, token_measures
from lmgeometry.measures.unit_rows import UnitRows
from lmgeometry.measures.word_similarity import paired_correlations, similarity_scores
from lmgeometry.report import prose
from lmgeometry.report.claims import Claim, claim_sentences, claims_frame

__all__ = [
    "CLAIMS",
    "CONTENT_UPOS",
    "GLOVE",
    "INPUT",
    "MEAN",
    "DISJOINT_SIMILARITY",
    "FUNCTION_UPOS",
    "MIN_COVERED_ITEMS",
    "POSITION_DEPTH",
    "PRESET_NAMES",
    "SINK_RATIO",
    "ANISOTROPY_CLAIMS",
    "STANDARDISED_CLAIMS",
    "STANDARDISED_PRESET",
    "standardised_table",
    "static_curves",
    "ClaimSpec",
    "analyse",
    "authors_table",
    "summary",
    "table1_beside",
]

#: The two estimator presets of :data:`lmgeometry.measures.contextual.PRESETS`.
PRESET_NAMES: tuple[str, ...] = ("ethayarajh2019", "corrected")

#: The estimators of the SelfSim and IntraSim claims on standardised dimensions: the corrected
#: ones (pseudo-sentence baseline). There the authors' pairwise baseline is about 0, while a
#: word's cosine to the mean of its own m-word sentence stays near 1/sqrt(m) even for random
#: vectors, so the authors' adjusted IntraSim would show that floor, not the model.
STANDARDISED_PRESET = PRESET_NAMES[1]

#: Seed 001's claims on the anisotropy baseline: near 0 by construction on standardised
#: dimensions, so their rows there are shown, not tests
#: (:func:`lmgeometry.chapters.common.standardised_baseline_rows`).
ANISOTROPY_CLAIMS: tuple[str, ...] = ("anisotropic", "anisotropy_rises")

#: Seed 001's claims on adjusted SelfSim and IntraSim, also tested on standardised dimensions
#: (a rogue dimension can drive a cosine measure's differences between words and layers).
STANDARDISED_CLAIMS: tuple[str, ...] = ("selfsim_falls", "stopwords", "intrasim_above",
                                        "intrasim_falls", "intrasim_rises", "intrasim_near_zero")

#: Parts of speech seed 000 calls content words and function words.
CONTENT_UPOS: tuple[str, ...] = ("NOUN", "PROPN", "VERB", "ADJ", "ADV")
FUNCTION_UPOS: tuple[str, ...] = ("DET", "ADP", "PRON", "CCONJ", "SCONJ", "AUX", "PART")

#: Similarity benchmarks with disjoint item sets (WS353's similarity and relatedness splits
#: are subsets of WS353, so averaging them with it would count those items twice).
DISJOINT_SIMILARITY: tuple[str, ...] = ("simlex999", "men", "ws353", "rw")

#: A benchmark with fewer covered items than this is not scored (a Spearman correlation on 20
#: items has a 95% interval about +-0.45 wide).
MIN_COVERED_ITEMS = 20


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a seed: what is measured, its threshold and why (a row of :data:`CLAIMS`)."""

    seed: str
    claim: str
    statistic: str
    threshold: float
    direction: str
    rule: str
    published: str
    figure: str
    per_preset: bool = True


_TREND_RULE = ("|rho| >= 0.5 over the layers is a large rank correlation (Cohen 1988): the "
               "trend holds for most layers, as the paper's 'generally' allows exceptions")
_NEAR_RULE = ("0.10 is half the 0.20 that the paper gives as the adjusted IntraSim of ELMo "
              "and BERT in all but one layer: below it a model is nearer GPT-2's 0 than them")

_STATIC_RULE = ("0.05 is FastText's lead over GloVe in the paper's Table 1, averaged over "
                "SimLex-999, MEN, WS353 and RW (0.052), a gap the paper reports as one "
                "embedding outperforming another")

#: Seed 000's layers 8-11 of GPT-2's 12 as relative depths: where, it says, the token
#: intra-sentence similarity falls with position.
POSITION_DEPTH: tuple[float, float] = (8 / 12, 11 / 12)

_POSITION_STATISTIC = (
    "Spearman rho over tokens of position (1 to the token tables' max_position, 20 by "
    "default; position 0 left out) with token intra-sentence similarity, mean over the layers "
    "at relative depth 8/12-11/12 (the seed's layers 8-11 of 12); sentences resampled")

#: Seed 001's and seed 000's claims, with the statistic, threshold and reason of each.
CLAIMS: dict[str, ClaimSpec] = {
    "anisotropic": ClaimSpec(
        "001", "representations are anisotropic in every non-input layer",
        "smallest baseline cosine over layers 1-L (exact mean over pairs of words from "
        "different sentences)", 0.1, "above",
        "the mean cosine of unit vectors is the squared length of their mean, the least share "
        "of their energy along one direction (1/d if isotropic); 0.1 separates the paper's "
        "isotropic case (ELMo input, 0.008) from its least anisotropic layers (ELMo, 0.14)",
        "every layer of ELMo, BERT and GPT-2 except ELMo's input layer", "fig-ch03-anisotropy",
        per_preset=False),
    "anisotropy_rises": ClaimSpec(
        "001", "anisotropy rises with depth",
        "Spearman rho of the baseline cosine with the layer index, layers 0-L (the input layer "
        "included, as in the seed's Figure 1)", 0.3, "above",
        "the seed says 'generally more anisotropic in higher layers', names exceptions (BERT's "
        "last layer) and compares the contextual layers with the input layer: a positive rank "
        "trend over the layers of its Figure 1 of at least Cohen's medium size (rho >= 0.3). "
        "The authors' released baselines give BERT 0.95, ELMo 0.50, GPT-2 0.40; the earlier "
        "rule (rho >= 0.5 over layers 1-L) failed GPT-2's own numbers (0.46)",
        "generally more anisotropic in higher layers (exceptions: BERT's last "
        "layer)", "fig-ch03-anisotropy", per_preset=False),
    "selfsim_falls": ClaimSpec(
        "001", "upper layers are more context-specific (adjusted SelfSim falls with depth)",
        "Spearman rho of mean adjusted SelfSim with the layer index, layers 1-L", -0.5,
        "below", _TREND_RULE, "the higher the layer, the lower the self-similarity, in all "
        "three models", "fig-ch03-selfsim"),
    "stopwords": ClaimSpec(
        "001", "stopwords are among the least self-similar words",
        "Cohen's d of adjusted SelfSim (mean over layers 1-L), stopwords minus other words",
        -0.2, "below", "the seed gives no size: 'stopwords have among the lowest "
        "self-similarity of all words' needs stopwords below the other words, and d <= -0.2 "
        "is Cohen's small effect, the least difference with a name. The authors' released "
        "numbers give d = -0.42 (BERT), -0.60 (ELMo), -0.34 (GPT-2): Cohen's large effect "
        "(-0.8), the earlier rule, failed all three",
        "across all layers; the five least self-similar words of ELMo are 'and', 'of', 's', "
        "'the', 'to'", "fig-ch03-stopwords"),
    "intrasim_above": ClaimSpec(
        "001", "adjusted IntraSim stays above the baseline in every layer (BERT, ELMo)",
        "smallest mean adjusted IntraSim over layers 1-L", 0.1, "above", _NEAR_RULE,
        "BERT and ELMo: above 0.20 in all but one layer", "fig-ch03-intrasim"),
    "intrasim_falls": ClaimSpec(
        "001", "adjusted IntraSim falls with depth (BERT)",
        "Spearman rho of mean adjusted IntraSim with the layer index, layers 1-L", -0.5,
        "below", _TREND_RULE, "BERT: words of a sentence drift apart in upper layers",
        "fig-ch03-intrasim"),
    "intrasim_rises": ClaimSpec(
        "001", "adjusted IntraSim rises with depth (ELMo)",
        "Spearman rho of mean adjusted IntraSim with the layer index, layers 1-L", 0.5,
        "above", _TREND_RULE, "ELMo: words of a sentence grow more similar in upper layers",
        "fig-ch03-intrasim"),
    "intrasim_near_zero": ClaimSpec(
        "001", "adjusted IntraSim is close to 0 in most layers (GPT-2)",
        "median over layers 1-L of |mean adjusted IntraSim|", 0.1, "below", _NEAR_RULE,
        "GPT-2: no more similar than random words in most layers", "fig-ch03-intrasim"),
    "mev_small": ClaimSpec(
        "001", "a static vector explains less than 5% of a word's variance in every layer",
        "largest mean adjusted MEV over layers 1-L", 0.05, "below",
        "the paper's own threshold (5% of the variance)",
        "below 5% in every layer of ELMo, BERT and GPT-2", "fig-ch03-mev"),
    "static_beats_input": ClaimSpec(
        "001", "beyond the paper: PC1 static embeddings of some layer beat the model's input "
        "(layer-0) vectors on word similarity",
        "largest gain over layers 1-L in mean Spearman rho (similarity benchmarks with at least "
        f"{MIN_COVERED_ITEMS} items covered by every embedding) of PC1 vectors over layer-0 "
        "mean vectors, the best layer picked inside each resample", 0.05, "above",
        _STATIC_RULE, "PC1 vectors of lower layers beat the static baselines on most "
        "benchmarks (Table 1: BERT layer 1 0.315 on SimLex-999 against GloVe's 0.194)",
        "fig-ch03-static", per_preset=False),
    "static_beats_glove": ClaimSpec(
        "001", "PC1 static embeddings of some layer beat GloVe on word similarity",
        "largest gain over layers 1-L in mean Spearman rho (the same items) of PC1 vectors over "
        "GloVe 6B-50d vectors, the best layer picked inside each resample", 0.0, "above",
        "the seed says the PC1 vectors of BERT and ELMo 'outperform' GloVe: any gain (above "
        "0). Table 1's best listed layer, mean over SimLex-999, MEN, WS353 and RW, minus "
        "GloVe: BERT +0.060, ELMo +0.008, GPT-2 -0.083 (the earlier rule, a gain of 0.05, "
        "failed ELMo's own numbers)",
        "BERT's and ELMo's PC1 vectors outperform GloVe and FastText on most benchmarks; "
        "GPT-2's do not (Table 1: mean over SimLex-999, MEN, WS353 and RW of "
        "0.219 for GloVe, 0.279 for BERT layer 1, 0.136 for GPT-2 layer 1)", "fig-ch03-static",
        per_preset=False),
    "static_lower_better": ClaimSpec(
        "001", "PC1 static embeddings from lower layers are better than those from upper layers",
        "Spearman rho of the mean Spearman rho of PC1 vectors (similarity benchmarks) with the "
        "layer index, layers 1-L", -0.5, "below", _TREND_RULE,
        "for all three models, lower layers more effective than upper ones (Table 1: BERT "
        "0.279 layer 1, 0.196 layer 12, mean over SimLex-999, MEN, WS353, RW)",
        "fig-ch03-static", per_preset=False),
    "nn_same_word_falls": ClaimSpec(
        "000", "fewer of a token's 10 nearest neighbours are the same word in upper layers",
        "Spearman rho of the mean same-word share of the 10 nearest neighbours with the layer "
        "index, layers 1-L", -0.5, "below", _TREND_RULE,
        "GPT-2 and BERT: most neighbours are the same token in lower layers, fewer in upper",
        "fig-ch03-neighbours", per_preset=False),
    "token_self_content": ClaimSpec(
        "000", "content words have a higher token self-similarity than function words",
        "Cohen's d of token self-similarity (mean over layers 1-L), content minus function "
        "words", 0.2, "above", "the seed gives a direction only ('higher for content than "
        "function words'): d >= 0.2, Cohen's small effect. On the authors' released per-word "
        "SelfSim of BERT and GPT-2 (seed 001's data, stopwords as the function words) the "
        "difference is d = 0.42 and 0.34: the earlier d >= 0.5 failed both",
        "GPT-2 and BERT: self-similarity higher for content than function "
        "words", "fig-ch03-tokens", per_preset=False),
    "token_intra_function": ClaimSpec(
        "000", "function words are more similar to the rest of their sentence than content words",
        "Cohen's d of token intra-sentence similarity, function minus content words, mean over "
        "layers 1-L (encoders) or over the lower third of the layers (decoders: the seed's "
        "layers 1-4 of GPT-2's 12)", 0.2, "above", "the seed gives a direction only: d >= 0.2, "
        "Cohen's small effect; for GPT-2 it names layers 1-4 (above them, it says, position "
        "drives the measure), so decoders are tested on the lower third of their layers",
        "BERT in all layers, GPT-2 in layers 1-4", "fig-ch03-tokens", per_preset=False),
    "intra_position_falls": ClaimSpec(
        "000", "token intra-sentence similarity falls with position in the upper layers",
        _POSITION_STATISTIC, -0.3, "below",
        "the seed gives a direction it calls plain to see ('the later the token's position in "
        "the sentence, the lower the similarity'): a rank correlation over tokens of at least "
        "Cohen's medium size (rho <= -0.3). Over tokens, not over per-position means, so that "
        "the size of the effect counts (the means of 20 positions give rho near -1 for any "
        "steady drift, however small). Rotary decoders are fair stand-ins: the seed explains "
        "the trend by causal attention ('attention is paid only to the previous tokens'), "
        "not by GPT-2's learned position embeddings",
        "GPT-2, layers 8-11: 'the later the token's position in the sentence, the lower the "
        "similarity for this token gets'; BERT: no pattern", "fig-ch03-tokens",
        per_preset=False),
    "intra_position_none": ClaimSpec(
        "000", "token intra-sentence similarity shows no pattern with position",
        "|rho| of the same Spearman correlation (its interval: |r| over rho's interval, so it "
        "is wholly below the threshold only when rho's interval lies inside (-0.1, 0.1))", 0.1,
        "below", "'we don't see any patterns related to the token's position in the sentence' "
        "(BERT): position orders the tokens less than Cohen's small effect (|rho| < 0.1, under "
        "1% of the rank variance)",
        "BERT: 'we don't see any patterns related to the token's position in the sentence'; "
        "GPT-2: falls with position in layers 8-11", "fig-ch03-tokens", per_preset=False),
    "self_first_word": ClaimSpec(
        "000", "sentence-initial tokens have a far higher token self-similarity than the others",
        "Cohen's d of case-sensitive token self-similarity (mean over layers 1-L), each "
        "sentence's first word minus the other words", 0.8, "above",
        "'a very high similarity to themselves', an exception to the content/function-word "
        "pattern: Cohen's large effect (d >= 0.8). Case-sensitive because the seed's tokens "
        "are GPT-2 token ids ('The' is another token than ' the'); lower-cased, a first word "
        "would be averaged with its mid-sentence occurrences. Rotary decoders are fair "
        "stand-ins: under the causal mask a first word sees only itself (and a fixed BOS "
        "token), whatever the position scheme",
        "GPT-2: 'tokens at position 0 ... have a very high similarity to themselves'",
        "fig-ch03-tokens", per_preset=False),
    "nn_cosine_high": ClaimSpec(
        "000", "a token's 10 nearest neighbours have a mean cosine of about 1 in most layers",
        "median over layers 1-L of the mean cosine of the 10 nearest neighbours", 0.9, "above",
        "'the average cosine similarity between tokens and their nearest neighbours is 1 in "
        "most cases' (GPT-2), read at one decimal: the top tenth of the cosine scale (>= 0.9) "
        "in most layers, i.e. the median over layers 1-L",
        "GPT-2: 'the average cosine similarity between tokens and their nearest neighbours is "
        "1 in most cases'; lower for BERT", "fig-ch03-neighbours", per_preset=False),
}


# ---------------------------------------------------------------------------------------------
# the layer pass
# ---------------------------------------------------------------------------------------------


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


def _add_layer(run: _Run, u: UnitRows, nn: pd.DataFrame, p: dict[str, Any]) -> None:
    """Every measure of one layer of one run, from its unit rows."""
    w = run.words
    for preset in PRESET_NAMES:
        run.ctx.setdefault(preset, []).append(contextual.context_tables(
            u, w, preset, p["seed"], min_contexts=p["min_contexts"],
            n_intra_sentences=p["n_intra_sentences"]))
    run.base_reps.append(cross_sentence_replicates(u, w["sentence_id"], run.draws))
    tokens = token_measures(u, w)
    run.token_intra.append(tokens["token_intra"].to_numpy())
    run.token_self.append(tokens["token_self"].to_numpy())
    if run.control == "none":  # the first-word claim's tokens: case kept, as GPT-2's ids
        run.token_self_cased.append(token_measures(u, w, lowercase=False)["token_self"].to_numpy())
    run.neighbours.append(nn.drop(columns="subset").reset_index(drop=True))
    run.sink_ratio.append(_sink_ratio(u, w))


def _scan(store: Store, p: dict[str, Any]) -> list[_Run]:
    """Read each layer of ``store`` once; compute every measure under every control."""
    controls = controls_for(store)
    rows = {c: control_rows(store, c) for c in controls}
    runs = []
    for c in controls:
        w = store.words.iloc[rows[c]].reset_index(drop=True)
        runs.append(_Run(store.label, c, [store.depth(i) for i in range(store.n_layers)], w,
                         _sentence_draws(w["sentence_id"].to_numpy(), p["n_boot"], p["seed"]),
                         decoder=controls == CONTROLS))
    n = store.n_words
    gen = np.random.default_rng([p["seed"], 1])
    queries = np.sort(gen.choice(n, size=min(p["neighbour_queries"], n), replace=False))
    subsets = {c: np.isin(np.arange(n), rows[c]) for c in controls}
    for i in tqdm(range(store.n_layers), desc=f"context measures {store.label}", unit="layer",
                  mininterval=1.0):
        X = store.layer(i)
        ur = UnitRows.of(X)
        nn = neighbour_measures(ur, store.words, p["k"], queries=queries,
                                           subsets=subsets)
        for run in runs:
            u = ur if run.control == "none" else ur.take(rows[run.control])
            _add_layer(run, u, nn[nn["subset"] == run.control], p)
            _add_standardised(run, X if run.control == "none" else X[rows[run.control]], p)
    return runs


def _add_standardised(run: _Run, X: np.ndarray, p: dict[str, Any]) -> None:
    """One layer on standardised dimensions (moments over the run's rows): the exact baseline
    with its replicates, and the context tables under :data:`STANDARDISED_PRESET`."""
    units = UnitRows.of(X, standardise=True)
    run.std_base.append(baseline_and_replicates(units, run.words["sentence_id"], run.draws,
                                                standardise=True))
    run.std_ctx.append(contextual.context_tables(
        units, run.words, STANDARDISED_PRESET, p["seed"], min_contexts=p["min_contexts"],
        n_intra_sentences=p["n_intra_sentences"], standardise=True))


# ---------------------------------------------------------------------------------------------
# joint bootstraps and the per-layer tables
# ---------------------------------------------------------------------------------------------


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


def _preset_series(run: _Run, preset: str, p: dict[str, Any]
                   ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-layer means and joint replicates of one preset's measures, raw and adjusted."""
    t = run.ctx[preset]
    wt, st = [x.words for x in t], [x.sentences for x in t]
    out = {}
    for name, tables, key in (("selfsim", wt, "word"), ("mev", wt, "word"),
                              ("intrasim", st, "sentence")):
        for suffix in ("", "_adj"):
            out[name + suffix] = _joint(_columns(tables, key, name + suffix), p["n_boot"],
                                        p["seed"])
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


def _query_series(run: _Run, column: str, p: dict[str, Any]
                  ) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """Per-layer mean of a per-query neighbour column and its joint replicates, bootstrapped
    over sentences (the queries of one sentence are one cluster; the same draws for every
    column), and the number of sentences."""
    codes, uniq = pd.factorize(run.neighbours[0]["sentence_id"].to_numpy())
    weights = np.bincount(codes).astype(np.float64)
    V = np.column_stack([np.bincount(codes, weights=n[column].fillna(0).to_numpy())
                         for n in run.neighbours]) / weights[:, None]
    return _joint(V, p["n_boot"], p["seed"] + 7, weights), len(uniq)


def _neighbour_series(run: _Run, p: dict[str, Any]
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


# ---------------------------------------------------------------------------------------------
# claims
# ---------------------------------------------------------------------------------------------


def _row_means(V: np.ndarray) -> np.ndarray:
    """Mean of each row over its finite entries (NaN for a row without any)."""
    finite = np.isfinite(V)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(finite, V, 0.0).sum(axis=1) / finite.sum(axis=1)


def _interval(value: float, reps: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """``value`` and the percentile interval of its replicates, widened to contain it."""
    reps = np.asarray(reps, dtype=np.float64)
    reps = reps[np.isfinite(reps)]
    if not math.isfinite(value) or len(reps) == 0:
        return float(value), math.nan, math.nan
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return float(value), float(min(lo, value)), float(max(hi, value))


def _over_layers(kind: str, means: np.ndarray, reps: np.ndarray) -> tuple[float, float, float]:
    """A statistic over layers 1..L of per-layer means, with its joint bootstrap interval.

    ``kind``: ``"min"``, ``"max"``, ``"rho"`` (Spearman with the layer index),
    ``"rho_all"`` (the same over layers 0..L, the input layer included), ``"median"`` or
    ``"median_abs"`` (median of the absolute values).
    """
    first = 0 if kind == "rho_all" else 1
    kind = "rho" if kind == "rho_all" else kind
    m, r = np.asarray(means)[first:], np.asarray(reps)[:, first:]
    if kind == "rho":
        return _interval(float(stats.spearman_rows(m[None])[0]), stats.spearman_rows(r))
    fn = {"min": np.min, "max": np.max, "median": np.median,
          "median_abs": lambda a, axis=None: np.median(np.abs(a), axis=axis)}[kind]
    with np.errstate(invalid="ignore"):
        return _interval(float(fn(m)), fn(r, axis=1))


def _claim(key: str, run: _Run | tuple[str, str], preset: str | None,
           value: tuple[float, float, float], evidence: str) -> Claim:
    """The :class:`Claim` of :data:`CLAIMS` ``[key]`` for a run (or a (model, control) pair)."""
    model, control = (run.model, run.control) if isinstance(run, _Run) else run
    spec = CLAIMS[key]
    statistic = spec.statistic + (f" [{preset} estimators]" if preset else "")
    return Claim(seed=spec.seed, claim=spec.claim, model=model, control=control,
                 statistic=statistic, value=value[0], ci_low=value[1], ci_high=value[2],
                 threshold=spec.threshold, direction=spec.direction, rule=spec.rule,
                 published=spec.published,
                 figure=spec.figure, evidence=evidence)


def _layer_of(values: np.ndarray, pick: str) -> tuple[int, float]:
    """Layer (1..L) and value of the smallest or largest of layers 1..L."""
    v = np.asarray(values)[1:]
    i = int(np.nanargmin(v) if pick == "min" else np.nanargmax(v))
    return i + 1, float(v[i])


def _anisotropy_claims(run: _Run, standardised: bool = False) -> list[Claim]:
    """The anisotropy claims of a run, on raw or (a control) on standardised dimensions."""
    if standardised:
        base = np.array([value for value, _ in run.std_base])
        reps = np.column_stack([r for _, r in run.std_base])
    else:
        base = np.array([t.baseline_cosine for t in run.ctx["corrected"]])
        reps = np.column_stack(run.base_reps)
    who = (run.model, standardised_control(run.control)) if standardised else run
    lo_layer, lo_value = _layer_of(base, "min")
    hi_layer, hi_value = _layer_of(base, "max")
    last = run.n_layers - 1
    return [
        _claim("anisotropic", who, None, _over_layers("min", base, reps),
               f"lowest in layer {lo_layer} ({lo_value:.3f}); highest {hi_value:.3f} "
               f"(layer {hi_layer})"),
        _claim("anisotropy_rises", who, None, _over_layers("rho_all", base, reps),
               f"baseline {base[0]:.3f} (input layer), {base[1]:.3f} (layer 1) to "
               f"{base[last]:.3f} (layer {last}); highest "
               f"{hi_value:.3f} (layer {hi_layer})"),
    ]


def _preset_claims(run: _Run, preset: str, series: dict, p: dict[str, Any]) -> list[Claim]:
    """SelfSim, stopword, IntraSim and MEV claims of one run under one preset."""
    self_m, self_r = series["selfsim_adj"]
    intra_m, intra_r = series["intrasim_adj"]
    mev_m, mev_r = series["mev_adj"]
    last = run.n_layers - 1
    stop = _stopword_flags(run.words)
    words = run.ctx[preset][0].words["word"]
    per_word = _columns([t.words for t in run.ctx[preset]], "word", "selfsim_adj")[:, 1:]
    mean_word = _row_means(per_word)
    is_stop = words.map(stop).fillna(False).to_numpy(dtype=bool)
    d = stats.standardised_difference(mean_word, is_stop, n_boot=p["n_boot"],
                                      rng=[p["seed"], 5])
    matched = _frequency_matched(run, preset, mean_word, is_stop, p)
    near = int((np.abs(intra_m[1:]) < CLAIMS["intrasim_near_zero"].threshold).sum())
    i_lo, v_lo = _layer_of(intra_m, "min")
    m_hi, v_hi = _layer_of(mev_m, "max")
    trend = (f"{self_m[1]:.3f} (layer 1) to {self_m[last]:.3f} (layer {last})")
    intra = (f"{intra_m[1]:.3f} (layer 1) to {intra_m[last]:.3f} (layer {last}); lowest "
             f"{v_lo:.3f} (layer {i_lo})")
    return [
        _claim("selfsim_falls", run, preset, _over_layers("rho", self_m, self_r),
               f"mean adjusted SelfSim {trend}"),
        _claim("stopwords", run, preset, d,
               f"{int(is_stop.sum())} stopwords, {int((~is_stop).sum())} other words; mean "
               f"adjusted SelfSim {np.nanmean(mean_word[is_stop]):.3f} vs "
               f"{np.nanmean(mean_word[~is_stop]):.3f}"),
        matched,
        _claim("intrasim_above", run, preset, _over_layers("min", intra_m, intra_r),
               f"adjusted IntraSim {intra}"),
        _claim("intrasim_falls", run, preset, _over_layers("rho", intra_m, intra_r),
               f"adjusted IntraSim {intra}"),
        _claim("intrasim_rises", run, preset, _over_layers("rho", intra_m, intra_r),
               f"adjusted IntraSim {intra}"),
        _claim("intrasim_near_zero", run, preset, _over_layers("median_abs", intra_m, intra_r),
               f"|adjusted IntraSim| < 0.1 in {near} of {last} layers; {intra}"),
        _claim("mev_small", run, preset, _over_layers("max", mev_m, mev_r),
               f"largest in layer {m_hi} ({v_hi:.3f})"),
    ]


#: Largest difference in log number of contexts between a stopword and its partner in the
#: frequency-matched stopword control (a factor of about 1.3).
FREQUENCY_CALIPER = 0.25


def _frequency_matched(run: _Run, preset: str, mean_word: np.ndarray, is_stop: np.ndarray,
                       p: dict[str, Any]) -> Claim:
    """The stopword claim on stopwords and other words of the same frequency.

    Stopwords are the most frequent words, and a word seen in more contexts can be less
    self-similar for that reason alone. Each stopword is paired with the other word nearest
    in log number of contexts (within :data:`FREQUENCY_CALIPER`,
    :func:`lmgeometry.measures.stats.matched_pairs`); Cohen's d is taken over the pairs, its
    interval bootstrapped over pairs.
    """
    contexts = run.ctx[preset][0].words["n_sentences"].to_numpy(dtype=np.float64)
    covariate = np.where(np.isfinite(mean_word), np.log(contexts), np.nan)  # only scored words
    a, b = stats.matched_pairs(is_stop, covariate, FREQUENCY_CALIPER)
    rows = np.concatenate([a, b])
    pairs = np.concatenate([np.arange(len(a)), np.arange(len(a))])
    d = stats.standardised_difference(mean_word[rows], is_stop[rows], pairs,
                                      n_boot=p["n_boot"], rng=[p["seed"], 8])
    control = ("frequency-matched" if run.control == "none"
               else f"{run.control}, frequency-matched")
    evidence = (f"{len(a)} of {int(is_stop.sum())} stopwords paired with another word of about "
                f"the same number of contexts (within a factor "
                f"{math.exp(FREQUENCY_CALIPER):.2f})")
    if len(a):
        evidence += (f"; mean adjusted SelfSim {np.nanmean(mean_word[a]):.3f} vs "
                     f"{np.nanmean(mean_word[b]):.3f}")
    return _claim("stopwords", (run.model, control), preset, d, evidence)


def _token_claims(run: _Run, nn: tuple[np.ndarray, np.ndarray], p: dict[str, Any]) -> list[Claim]:
    """Seed 000's claims: neighbour same-word share over depth, content vs function words."""
    upos = run.words["upos"].astype(str)
    content, function = upos.isin(CONTENT_UPOS).to_numpy(), upos.isin(FUNCTION_UPOS).to_numpy()
    both = content | function
    sent = run.words["sentence_id"].to_numpy()
    out = []
    means, _ = nn
    last = run.n_layers - 1
    out.append(_claim("nn_same_word_falls", run, None, _over_layers("rho", *nn),
                      f"same-word share {means[1]:.2f} (layer 1) to {means[last]:.2f} (layer "
                      f"{last}); {means[0]:.2f} in layer 0"))
    lower = [i for i in range(1, run.n_layers) if run.depth[i] <= 1 / 3] or [1]
    for key, values, group in (("token_self_content", run.token_self, content),
                               ("token_intra_function", run.token_intra, function)):
        layers = lower if key == "token_intra_function" and run.decoder else range(1, last + 1)
        per_token = _row_means(np.column_stack([values[i] for i in layers]))
        d = stats.standardised_difference(per_token[both], group[both], sent[both],
                                          n_boot=p["n_boot"], rng=[p["seed"], 6])
        a, b = np.nanmean(per_token[content]), np.nanmean(per_token[function])
        out.append(_claim(key, run, None, d,
                          f"mean over layers {min(layers)}-{max(layers)}: content words {a:.3f} "
                          f"({int(content.sum())} tokens), function words {b:.3f} "
                          f"({int(function.sum())} tokens)"))
    return out



def _absolute(value: tuple[float, float, float]) -> tuple[float, float, float]:
    """|statistic| and the values of |r| over the statistic's interval: ``[0, max |bound|]``
    when the interval contains 0, else the sorted absolute bounds."""
    v, lo, hi = value
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return abs(v), math.nan, math.nan
    if lo <= 0 <= hi:
        return abs(v), 0.0, max(-lo, hi)
    return abs(v), min(abs(lo), abs(hi)), max(abs(lo), abs(hi))


def _position_claims(run: _Run, p: dict[str, Any]) -> list[Claim]:
    """Seed 000's position claims: token intra-sentence similarity against position in the
    seed's upper layers (:data:`POSITION_DEPTH`; falls, or shows no pattern), and, under the
    seed's protocol only (the control drops the first words), the first word's token
    self-similarity against the other words'."""
    pos = run.words["word_index"].to_numpy()
    sent = run.words["sentence_id"].to_numpy()
    low, high = POSITION_DEPTH
    layers = [i for i in range(1, run.n_layers)
              if low - 1e-9 <= run.depth[i] <= high + 1e-9] or [run.n_layers - 1]
    intra = _row_means(np.column_stack([run.token_intra[i] for i in layers]))
    keep = (pos >= 1) & (pos <= p["max_position"]) & np.isfinite(intra)
    rho = stats.cluster_spearman(pos[keep], intra[keep], sent[keep], p["n_boot"],
                                 [p["seed"], 10])
    ends = (int(pos[keep].min()), int(pos[keep].max())) if keep.any() else (1, 1)
    means = [np.mean(intra[keep & (pos == q)]) if keep.any() else math.nan for q in ends]
    evidence = (f"{prose.layers_phrase(layers)}, {int(keep.sum())} tokens at positions "
                f"{ends[0]}-{ends[1]}; mean token intra-sentence similarity {means[0]:.3f} at "
                f"position {ends[0]}, {means[1]:.3f} at position {ends[1]}")
    out = [_claim("intra_position_falls", run, None, rho, evidence),
           _claim("intra_position_none", run, None, _absolute(rho), evidence)]
    if run.control == "none":
        self_ = _row_means(np.column_stack(run.token_self_cased[1:]))
        first = pos == 0
        d = stats.standardised_difference(self_, first, sent, n_boot=p["n_boot"],
                                          rng=[p["seed"], 11])
        n = [int(np.isfinite(self_[g]).sum()) for g in (first, ~first)]
        out.append(_claim("self_first_word", run, None, d,
                          f"mean over layers 1-{run.n_layers - 1}: first words "
                          f"{np.nanmean(self_[first]):.3f} ({n[0]} tokens whose word occurs in "
                          f"another sentence), other words {np.nanmean(self_[~first]):.3f} "
                          f"({n[1]})"))
    return out


def _nn_cosine_claim(run: _Run, cosine: tuple[np.ndarray, np.ndarray]) -> Claim:
    """Seed 000's 'nearest neighbours have a cosine of 1 in most cases', over layers 1-L."""
    means = cosine[0]
    lo_layer, lo_value = _layer_of(means, "min")
    hi_layer, hi_value = _layer_of(means, "max")
    high = int((means[1:] >= CLAIMS["nn_cosine_high"].threshold).sum())
    return _claim("nn_cosine_high", run, None, _over_layers("median", *cosine),
                  f"mean neighbour cosine {lo_value:.3f} (layer {lo_layer}) to {hi_value:.3f} "
                  f"(layer {hi_layer}); at least {CLAIMS['nn_cosine_high'].threshold:g} in "
                  f"{high} of {run.n_layers - 1} layers")


# ---------------------------------------------------------------------------------------------
# static embeddings (seed 001, Table 1)
# ---------------------------------------------------------------------------------------------


def _web_layers(n_layers: int, choice: str | Sequence[int]) -> list[int]:
    """The layers scored with the ``web`` protocol: the paper's 1, 2, L-1, L, or a list."""
    last = n_layers - 1
    if isinstance(choice, str):
        if choice != "paper":
            raise ValueError(f"static_web_layers must be 'paper' or a list, not {choice!r}")
        return sorted({x for x in (1, 2, last - 1, last) if 0 <= x <= last})
    return sorted({int(x) for x in choice})


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


def _scan_static(store: Store, frames: Mapping[str, pd.DataFrame], p: dict[str, Any],
                 glove: Mapping[str, np.ndarray] | None) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Read each layer once: PC1 static vectors (and layer-0 mean vectors), scored.

    Every benchmark is scored (``strict``, and ``web`` on the paper's layers) under the seed's
    protocol; under the first-word control only the similarity items the comparisons need.
    GloVe is scored on the words that have PC1 vectors (the same items); each word's mean
    vector in layers 1-L (:data:`MEAN`) only on the similarity items, as a diagnostic. Returns
    the scores table and, per control, the per-item similarity scores of each embedding
    (``(embedding, layer) -> benchmark -> scores``).
    """
    controls = controls_for(store)
    picked = {c: _target_rows(store, c) for c in controls}
    web = _web_layers(store.n_layers, p["static_web_layers"])
    sim = {b: frames[b] for b in DISJOINT_SIMILARITY if b in frames}
    scores, items = [], {c: {} for c in controls}
    union = np.unique(np.concatenate([r for r, _ in picked.values()]))
    local = {c: np.searchsorted(union, r) for c, (r, _) in picked.items()}
    for i in tqdm(range(store.n_layers), desc=f"static {store.label}", unit="layer",
                  mininterval=1.0):
        X = store.layer(i, rows=union)
        for c, (_, words) in picked.items():
            u = UnitRows.of(X[local[c]])
            found = {"PC1": static_embeddings(u, words, p["min_contexts"])}
            if i == 0:
                found[INPUT] = mean_embeddings(u, words, p["min_contexts"])
                if glove is not None:
                    found[GLOVE] = {w: glove[w] for w in found["PC1"] if w in glove}
            if i > 0:
                means = mean_embeddings(u, words, p["min_contexts"])
                items[c][MEAN, i] = {b: similarity_scores(means, f)
                                     for b, f in sim.items()}
            for name, vec in found.items():
                if c == "none":
                    scores.append(_score(vec, frames, "strict", p["seed"], layer=i, control=c,
                                         embedding=name))
                items[c][name, i] = {b: similarity_scores(vec, f)
                                     for b, f in sim.items()}
            if c == "none" and i in web:
                scores.append(_score(found["PC1"], frames, "web", p["seed"], layer=i,
                                     control=c, embedding="PC1"))
    frame = pd.concat(scores, ignore_index=True).assign(
        model=store.label, depth=lambda f: f["layer"].map(store.depth))
    first = ["model", "layer", "depth", "control", "embedding", "protocol"]
    return frame[first + [c for c in frame.columns if c not in first]], items


def _static_correlations(items: dict, frames: Mapping[str, pd.DataFrame], p: dict[str, Any]
                         ) -> tuple[list[tuple[str, int]], dict[str, np.ndarray], dict]:
    """Spearman rho of every embedding with the human ratings, on the items every embedding
    covers, per similarity benchmark with at least :data:`MIN_COVERED_ITEMS` such items, with
    replicates from one resample of the items shared by the embeddings
    (:func:`paired_correlations`); benchmarks are resampled independently.

    Returns the embeddings (columns), ``benchmark -> (1 + n_boot, E)`` correlations (row 0 on
    all items), and per benchmark ``(covered items, total items)``."""
    order = [k for k in ((INPUT, 0), (GLOVE, 0)) if k in items]
    order += sorted(k for k in items if k[0] == "PC1")
    order += sorted(k for k in items if k[0] == MEAN)
    rhos, counts = {}, {}
    for j, b in enumerate(items[order[0]]):
        S = np.column_stack([items[key][b] for key in order])
        ok = np.isfinite(S).all(axis=1)
        counts[b] = (int(ok.sum()), len(ok))
        if ok.sum() >= MIN_COVERED_ITEMS:
            rhos[b] = paired_correlations(
                frames[b]["score"].to_numpy(dtype=np.float64)[ok], S[ok].T, p["n_boot"],
                [p["seed"], 9, j], method="spearman")
    return order, rhos, counts


def _static_layers(model: str, control: str, depth: Sequence[float], order: list,
                   rhos: dict[str, np.ndarray], counts: dict) -> pd.DataFrame:
    """Per embedding (PC1 of each layer, the input vectors, GloVe) and benchmark (and their
    mean, ``"mean"``): Spearman rho on the shared items with its 95% interval, and whether a
    PC1 layer is on the plateau of the mean (its interval overlaps the best layer's, layers
    1-L)."""
    rows = []
    for b, r in {**rhos, **({"mean": np.mean(list(rhos.values()), axis=0)} if rhos else {})
                 }.items():
        for e, (name, layer) in enumerate(order):
            lo, hi = _band(r[1:, e:e + 1])
            rows.append({"model": model, "layer": layer,
                         "depth": depth[layer] if name in ("PC1", MEAN) else np.nan,
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
    mean = frame[(frame["benchmark"] == "mean") & (frame["embedding"] == "PC1")
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
                   table: pd.DataFrame) -> list[Claim]:
    """Seed 001's static-embedding claims on one model under one control: PC1 of the best
    layer against the input vectors and against GloVe (the best layer picked inside each
    resample, so the choice is part of the interval), and the trend over layers."""
    def claim(key: str, value: tuple[float, float, float], evidence: str) -> Claim:
        return _claim(key, (model, control), None, value, evidence)

    if not rhos:
        nan = (math.nan, math.nan, math.nan)
        low = [f"{b} ({n} items)" for b, (n, _) in counts.items() if n]
        evidence = (f"no similarity benchmark has {MIN_COVERED_ITEMS} items that every "
                    "embedding covers" + (f"; covered: {', '.join(low)}" if low else ""))
        return [claim(k, nan, evidence) for k in ("static_beats_input", "static_beats_glove",
                                                  "static_lower_better")]
    R = np.mean(list(rhos.values()), axis=0)
    pc1 = [e for e, (name, layer) in enumerate(order) if name == "PC1" and layer > 0]
    layers = [order[e][1] for e in pc1]
    best = pc1[int(np.nanargmax(R[0, pc1]))]
    on = table.loc[table["plateau"], "layer"].to_numpy() if "plateau" in table else []
    where = (f"best layer {order[best][1]} (mean rho {R[0, best]:.3f}); plateau "
             f"{prose.layers_phrase(on)}; {_coverage_phrase(counts, rhos)}")
    out = []
    for key, name in (("static_beats_input", INPUT), ("static_beats_glove", GLOVE)):
        if (name, 0) not in order:
            continue
        e = order.index((name, 0))
        gain = R[:, pc1] - R[:, e:e + 1]
        value = _interval(float(np.nanmax(gain[0])), np.nanmax(gain[1:], axis=1))
        out.append(claim(key, value, f"{name} mean rho {R[0, e]:.3f}; {where}"))
    trend = _interval(float(stats.spearman_rows(R[:1, pc1])[0]), stats.spearman_rows(R[1:, pc1]))
    out.append(claim("static_lower_better", trend,
                     f"mean rho {R[0, pc1[0]]:.3f} (layer {layers[0]}) to {R[0, pc1[-1]]:.3f} "
                     f"(layer {layers[-1]}); {where}"))
    return out


def _static_part(static_stores: Mapping[str, Store], bench: Mapping[str, pd.DataFrame],
                 glove: bool, p: dict[str, Any],
                 frames: dict[str, list[pd.DataFrame]]) -> list[Claim]:
    """Seed 001's Table 1 part: per static store and control, the scores, the same-item
    comparisons (added to ``frames``) and the static claims."""
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
            claims += _static_claims(store.label, c, order, rhos, counts, layers)
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
    benchmarks, per model and layer 1-L, for PC1 vectors and each word's mean vector, with the
    input vectors and GloVe repeated over layers 1-L as flat reference lines."""
    d = layers[(layers["benchmark"] == "mean") & (layers["control"] == control)]
    curves = d[d["embedding"].isin(["PC1", MEAN]) & (d["layer"] > 0)]
    flat = []
    for model, part in curves.groupby("model", sort=False):
        grid = part.loc[part["embedding"] == "PC1", ["layer", "depth"]]
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


# ---------------------------------------------------------------------------------------------
# the authors' released numbers
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# the entry point
# ---------------------------------------------------------------------------------------------


#: A layer whose first words have a median norm this many times the other words' is called
#: an attention-sink layer in the generated text (an order of magnitude).
SINK_RATIO = 10.0


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


def _standardised_part(run: _Run, p: dict[str, Any]) -> tuple[dict, list[Claim]]:
    """Adjusted SelfSim and IntraSim on standardised dimensions: the per-layer series (joint
    bootstrap, as the raw ones) and the claims of :data:`STANDARDISED_CLAIMS` under the control
    ``standardised_control(run.control)``, with the primary rows' statistics."""
    std = replace(run, control=standardised_control(run.control),
                  ctx={STANDARDISED_PRESET: run.std_ctx})
    series = _preset_series(std, STANDARDISED_PRESET, p)
    wanted = {CLAIMS[k].claim for k in STANDARDISED_CLAIMS}
    return series, [c for c in _preset_claims(std, STANDARDISED_PRESET, series, p)
                    if c.claim in wanted and c.control == std.control]


def _run_results(run: _Run, p: dict[str, Any]
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
        lowest, stopwords = _word_tables(run, preset, p["n_lowest"])
        put("lowest_self_similarity", lowest)
        put("stopwords", stopwords)
        claims += _preset_claims(run, preset, series, p)
    by_position, by_upos = _token_tables(run, p["max_position"], p["min_count"])
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
    glove: bool = True,
) -> ChapterResult:
    """Chapter 3: every number the chapter shows, from one pass over each layer of each store.

    Parameters
    ----------
    stores : mapping of str to Store
        The models' activation stores on the STS corpus (the ``model`` column is
        ``Store.label``). A decoder's numbers are computed under both controls of
        :data:`lmgeometry.chapters.common.CONTROLS`, an encoder's under ``"none"``.
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
    min_contexts, n_intra_sentences
        See :func:`lmgeometry.measures.contextual.context_measures`.
    neighbour_queries, k
        Tokens whose ``k`` nearest neighbours are searched (the same tokens in every layer).
    n_lowest : int
        Least self-similar words listed per layer.
    max_position, min_count
        Token tables: positions up to ``max_position``; groups of at least ``min_count``.
    static_web_layers : "paper" or list of int
        Layers also scored with the ``web`` protocol (the paper's: 1, 2, L-1, L).
    glove : bool
        Compare with GloVe 6B-50d (:func:`lmgeometry.io.vectors.glove_vectors`) when its package
        is installed; the comparison is left out (and said so) when it is not.

    Returns
    -------
    ChapterResult
        ``tables``: ``per_layer`` (model, layer, depth, preset, control, counts, the first
        word's norm ratio, baselines, ``baseline_cosine_standardised`` with ``_lo``/``_hi``
        (``corrected`` rows), and ``selfsim``, ``intrasim``, ``mev`` raw and ``_adj``
        with ``_lo``/``_hi``), ``lowest_self_similarity``, ``stopwords`` (per-layer Cohen's d),
        ``tokens_by_position``, ``tokens_by_upos``, ``neighbours``, ``static_scores`` (every
        benchmark per layer and protocol), ``static_layers`` (Spearman rho with its interval
        per embedding, similarity benchmark and their mean, on the items every embedding
        covers; ``plateau`` marks the PC1 layers whose interval overlaps the best one's),
        ``authors`` and ``beside_authors`` (the authors' released numbers); ``claims``: one
        row per claim of :data:`CLAIMS`, model, preset (in the statistic) and control;
        ``sentences``: each claim's verdict by kind of model (italic claim first), the
        attention-sink findings, and the verdicts the first token drives.
    """
    p = {"seed": seed, "n_boot": n_boot, "min_contexts": min_contexts,
         "n_intra_sentences": n_intra_sentences, "neighbour_queries": neighbour_queries,
         "k": k, "n_lowest": n_lowest, "max_position": max_position, "min_count": min_count,
         "static_web_layers": static_web_layers}
    author_layers = pd.DataFrame()
    if authors:
        author_layers = authors_table()[0]
    frames: dict[str, list[pd.DataFrame]] = {}
    claims: list[Claim] = []
    kinds = {s.label: s.meta.get("model", {}).get("kind", "") for s in stores.values()}
    for store in stores.values():
        for run in _scan(store, p):
            f, c = _run_results(run, p)
            for name, parts in f.items():
                frames.setdefault(name, []).extend(parts)
            claims += c
    if static_stores:
        bench = dict(benchmarks) if benchmarks is not None else load_benchmarks()
        claims += _static_part(static_stores, bench, glove, p, frames)
    tables = {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items()}
    tables["authors"] = author_layers
    tables["beside_authors"] = _beside_authors(tables["per_layer"], author_layers)
    facts = calibration.store_facts(stores.values())
    table = _static_comparability(calibration.annotate(claims_frame(claims), facts),
                                  tables.get("static_layers"))
    table = standardised_baseline_rows(table, [CLAIMS[k].claim for k in ANISOTROPY_CLAIMS])
    return ChapterResult(tables=tables, claims=table,
                         sentences=_sentences(tables, table, kinds))


def _static_comparability(claims: pd.DataFrame, layers: pd.DataFrame | None) -> pd.DataFrame:
    """PC1 static-embedding rows whose PC1 vectors are mostly noise are not a fair test.

    The centred first component of a word's occurrences is its main direction of *variation*;
    from a few contexts it is mostly noise. Where a model's best PC1 vectors score (mean
    Spearman rho on the similarity benchmarks) below half of what the mean vectors of the very
    same contexts score (:data:`MEAN`), its PC1 rows measure the context budget, not the
    model, and do not count as evidence on the seed.
    """
    if layers is None or layers.empty:
        return claims
    mean = layers[(layers["benchmark"] == "mean") & (layers["layer"] > 0)]
    best = mean.groupby(["model", "control", "embedding"])["rho"].max()
    out = claims.copy()
    for i, row in out[out["claim"].str.contains("PC1 static embeddings")].iterrows():
        key = (row["model"], row["control"])
        pc1, ctx = best.get((*key, "PC1"), math.nan), best.get((*key, MEAN), math.nan)
        if row["applies"] and math.isfinite(pc1) and math.isfinite(ctx) and pc1 < ctx / 2:
            out.at[i, "applies"] = False
            out.at[i, "applies_reason"] = (
                f"this run's PC1 vectors score a mean rho of {pc1:.2f} where the mean vectors "
                f"of the same contexts score {ctx:.2f}: the first component of a few contexts "
                "is mostly noise, so the row measures the context budget, not the model")
    return out


# ---------------------------------------------------------------------------------------------
# generated sentences and the check summary
# ---------------------------------------------------------------------------------------------


def _preset_of(statistic: str) -> str:
    """The estimator preset named at the end of a claim's statistic, or "one estimator"."""
    if statistic.endswith(" estimators]"):
        return statistic.rsplit("[", 1)[1].removesuffix("]")
    return "one estimator"


def _flip_sentences(claims: pd.DataFrame) -> list[str]:
    """Per decoder: the claims whose verdict changes when the first word is left out."""
    out = []
    for model, d in claims[claims["control"].isin(CONTROLS)].groupby("model", sort=False):
        if d["control"].nunique() < 2:
            continue
        wide = d.pivot_table(index=["claim", "statistic"], columns="control", values="verdict",
                             aggfunc="first", sort=False)
        wide = wide.dropna(subset=list(CONTROLS))  # a claim made under one control only
        flips = wide[wide["none"] != wide["first word excluded"]]
        if flips.empty:
            out.append(f"**{model}**: no verdict changes when each sentence's first word is "
                       f"left out ({len(wide)} claims).")
            continue
        items = [f"{claim} ({_preset_of(stat)}: {row['none']} -> {row['first word excluded']})"
                 for (claim, stat), row in flips.iterrows()]
        verb = "changes" if len(flips) == 1 else "change"
        out.append(f"**{model}**: {len(flips)} of {len(wide)} verdicts {verb} when each "
                   "sentence's first word is left out (driven by the first token): "
                   f"{'; '.join(items)}.")
    return out


def _sink_sentences(per_layer: pd.DataFrame) -> list[str]:
    """Per model with attention-sink layers: adjusted IntraSim and the MEV baseline in and
    outside them (authors' estimators), with and without the first word."""
    out = []
    d = per_layer[(per_layer["preset"] == "ethayarajh2019") & (per_layer["layer"] > 0)]
    for model, m in d.groupby("model", sort=False):
        seed_run = m[m["control"] == "none"].set_index("layer")
        sink = seed_run.index[seed_run["first_word_norm_ratio"] >= SINK_RATIO]
        if len(sink) == 0:
            continue
        rest = seed_run.index.difference(sink)
        intra = seed_run["intrasim_adj"]
        text = (f"**{model}** (authors' estimators): in {prose.layers_phrase(sink)} a "
                f"sentence's first word has a median norm at least {SINK_RATIO:g} times the "
                f"other words' (an attention sink); there the adjusted IntraSim is "
                f"{prose.span(intra[sink].min(), intra[sink].max())}")
        if len(rest):
            text += (f", against {prose.span(intra[rest].min(), intra[rest].max())} in "
                     f"{prose.layers_phrase(rest)}")
        excl = m[m["control"] == "first word excluded"].set_index("layer")
        if len(excl):
            e = excl["intrasim_adj"][sink]
            text += (f"; with each sentence's first word left out it is "
                     f"{prose.span(e.min(), e.max())} in the sink layers")
        mev = seed_run["mev_baseline"][sink]
        text += (f". The authors' MEV baseline of random words is "
                 f"{prose.span(mev.min(), mev.max(), '.3f')} there")
        matched = per_layer[(per_layer["model"] == model) & (per_layer["control"] == "none")
                            & (per_layer["preset"] == "corrected") & (per_layer["layer"] > 0)]
        matched = matched.set_index("layer")["mev_baseline_used"]
        if len(rest) and len(matched):
            text += (f"; the corrected estimators' size-matched one "
                     f"{prose.span(matched[sink].min(), matched[sink].max())}, against "
                     f"{prose.span(matched[rest].min(), matched[rest].max())} elsewhere")
        out.append(text + ".")
    return out


def _kind_sentences(claims: pd.DataFrame, kinds: Mapping[str, str]) -> list[str]:
    """One sentence per claim under the seed's protocol (corrected estimators where the two
    presets differ): :func:`lmgeometry.report.claims.claim_sentences`."""
    d = claims[(claims["control"] == "none")
               & ~claims["statistic"].str.endswith("[ethayarajh2019 estimators]")]
    return claim_sentences(d, kinds)


def _static_sentences(layers: pd.DataFrame) -> list[str]:
    """Per model (seed's protocol): the benchmarks its PC1 vectors were scored on, the best
    layers (plateau) and their mean Spearman rho beside the baselines on the same items. Only
    scored benchmarks are named."""
    out = []
    for model, m in layers[layers["control"] == "none"].groupby("model", sort=False):
        per = m[(m["benchmark"] != "mean") & (m["embedding"] == "PC1")].drop_duplicates(
            "benchmark")
        mean = m[m["benchmark"] == "mean"]
        pc1 = mean[(mean["embedding"] == "PC1") & (mean["layer"] > 0)]
        if pc1.empty:
            continue
        best = pc1.loc[pc1["rho"].idxmax()]
        scored = ", ".join(f"{b} ({n} of {t} items)" for b, n, t in
                           zip(per["benchmark"], per["items"], per["total"], strict=True))
        text = (f"**{model}**: PC1 static vectors scored on {scored}; best "
                f"{prose.layers_phrase(pc1.loc[pc1['plateau'], 'layer'])} (the plateau of "
                f"intervals overlapping the best), mean Spearman rho {best['rho']:.2f} "
                f"[{best['rho_lo']:.2f}, {best['rho_hi']:.2f}] in layer {int(best['layer'])}")
        names = {INPUT: "its layer-0 vectors", GLOVE: GLOVE}
        base = [f"{r['rho']:.2f} for {names[r['embedding']]}"
                for _, r in mean[mean["embedding"].isin(list(names))].iterrows()]
        means = mean[mean["embedding"] == MEAN]
        if len(means):
            top = means.loc[means["rho"].idxmax()]
            base.append(f"{top['rho']:.2f} for the mean of its contexts in layer "
                        f"{int(top['layer'])}")
        out.append(text + (f", against {', '.join(base)} on the same items." if base
                           else "."))
    return out


def _standardised_sentences(claims: pd.DataFrame, per_layer: pd.DataFrame) -> list[str]:
    """Per model (seed's protocol): the baseline over layers 1-L on standardised and on raw
    dimensions (near 0 by construction on standardised ones, so the gap is what a common
    offset and the per-dimension scales carry), and each verdict, raw -> standardised."""
    out = []
    seed_run = claims[claims["control"] == "none"]
    base = dict(zip(zip(seed_run["model"], seed_run["claim"], seed_run["statistic"], strict=True),
                    seed_run["verdict"], strict=True))
    baseline = [CLAIMS[k].claim for k in ANISOTROPY_CLAIMS]
    for model, rows in claims[claims["control"] == STANDARDISED].groupby("model", sort=False):
        d = per_layer[(per_layer["model"] == model) & (per_layer["control"] == "none")
                      & (per_layer["preset"] == "corrected") & (per_layer["layer"] > 0)]
        std, raw = d["baseline_cosine_standardised"], d["baseline_cosine"]
        items = {k: [f"{r.claim}: {base.get((model, r.claim, r.statistic), 'not tested')} -> "
                     f"{r.verdict}" + ("" if r.applies or r.claim in baseline
                                       else f" (not a fair test here: {r.applies_reason})")
                     for r in part.itertuples()]
                 for k, part in rows.groupby(rows["claim"].isin(baseline))}
        text = (f"**{model}**, on standardised dimensions (each dimension z-scored over the "
                "layer's words before the cosine, Timkey & van Schijndel 2021): the "
                f"anisotropy baseline is {prose.span(std.min(), std.max(), '.3f')} in layers 1-"
                f"{int(d['layer'].max())}, against {prose.span(raw.min(), raw.max())} on raw "
                "dimensions. Standardising centres every dimension, so this baseline is near 0 "
                "by construction and is no test of the anisotropy claims (their verdicts, raw "
                f"-> standardised, are shown, not counted: {'; '.join(items.get(True, []))}); "
                "what the gap measures is how much of the raw baseline a common offset and the "
                f"per-dimension scales carry: {raw.mean() - std.mean():.3f} of its mean "
                f"{raw.mean():.3f}.")
        if items.get(False):
            text += (f" Adjusted SelfSim and IntraSim ({STANDARDISED_PRESET} estimators), "
                     f"verdicts raw -> standardised: {'; '.join(items[False])}.")
        out.append(text)
    return out


def standardised_table(per_layer: pd.DataFrame) -> pd.DataFrame:
    """Adjusted SelfSim and IntraSim (:data:`STANDARDISED_PRESET`) in layer 1 and the last
    layer, on raw and on standardised dimensions: one row per model, control and measure."""
    d = per_layer[(per_layer["preset"] == STANDARDISED_PRESET)
                  & ((per_layer["layer"] == 1) | (per_layer["depth"] == 1.0))]
    names = {"selfsim_adj": "adjusted SelfSim", "intrasim_adj": "adjusted IntraSim"}
    long = d.melt(["model", "control", "layer", "depth"],
                  [f"{m}{s}" for m in names for s in ("", "_standardised")])
    long["measure"] = long["variable"].str.removesuffix("_standardised").map(names)
    long["column"] = (np.where(long["variable"].str.endswith("_standardised"), "standardised",
                               "raw") + np.where(long["layer"] == 1, ", layer 1", ", last layer"))
    wide = long.pivot_table(index=["model", "control", "measure"], columns="column",
                            values="value", sort=False)
    return wide.reindex(columns=[f"{dims}, {at}" for dims in ("raw", "standardised")
                                 for at in ("layer 1", "last layer")]).round(3).reset_index()


def _sentences(tables: Mapping[str, pd.DataFrame], claims: pd.DataFrame,
               kinds: Mapping[str, str]) -> list[str]:
    static = tables.get("static_layers")
    return (_kind_sentences(claims, kinds) + _sink_sentences(tables["per_layer"])
            + _flip_sentences(claims) + _standardised_sentences(claims, tables["per_layer"])
            + (_static_sentences(static) if static is not None and len(static) else []))


def summary(result: ChapterResult) -> pd.DataFrame:
    """Coarse, stable numbers for the chapter's check cell: per model and control, the
    number of layers and how many claims hold, are inconclusive or do not hold."""
    claims = result.claims
    counts = claims.groupby(["model", "control", "verdict"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(stats.VERDICTS), fill_value=0)
    layers = result.tables["per_layer"].groupby(["model", "control"])["layer"].max() + 1
    return counts.assign(layers=layers.reindex(counts.index)).reset_index()
