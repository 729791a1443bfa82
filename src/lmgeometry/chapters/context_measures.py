"""Per-layer tables of the context measures, and seed 001's claims tested on them.

:mod:`lmgeometry.measures.contextual` computes each measure on one layer's vectors; this module runs
them over every layer of an activation store and turns the results into the tables the
"Context measures" chapter plots, plus :func:`claims`, which marks each claim of Ethayarajh
(2019) as holding or not for one model from those tables (computed, never typed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats
from tqdm.auto import tqdm

from lmgeometry.io import data
from lmgeometry.measures import contextual, wordbench
from lmgeometry.report.prose import layer_ranges

if TYPE_CHECKING:
    from lmgeometry.activations.store import Store

__all__ = [
    "claims",
    "claims_table",
    "depth_trend",
    "DISJOINT_SIMILARITY",
    "findings",
    "holds_matrix",
    "INTRASIM_DIFFERS",
    "intrasim_pattern",
    "isotropic_cosine_band",
    "layer_measures",
    "lowest_words",
    "NEAR_ZERO",
    "neighbour_table",
    "PRESET_NAMES",
    "saturated_mev_baseline",
    "static_findings",
    "static_scores",
    "summary",
    "table1_beside",
    "token_tables",
    "TREND_RHO",
]


PRESET_NAMES: tuple[str, ...] = ("ethayarajh2019", "corrected")


def _layer(store: Store, i: int) -> np.ndarray:
    return store.layer(i)


def layer_measures(store: Store, presets: Sequence[str] = PRESET_NAMES, seed: int = 0, *,
                   min_contexts: int = 5, n_intra_sentences: int = 500, n_boot: int = 1000,
                   label: str = "") -> pd.DataFrame:
    """:func:`lmgeometry.measures.contextual.context_measures` for every layer and preset.

    Returns
    -------
    pandas.DataFrame
        One row per (preset, layer): ``layer``, ``depth`` (layer / last layer), ``width``
        (the model's hidden size) and every key
        of :func:`~lmgeometry.measures.contextual.context_measures` (baselines, SelfSim, IntraSim,
        MEV,
        raw and adjusted, with 95% bootstrap bounds).
    """
    rows = []
    last = store.n_layers - 1
    for i in tqdm(range(store.n_layers), desc=f"context measures {label}".strip(),
                  unit="layer", mininterval=1.0):
        X = _layer(store, i)
        for preset in presets:
            m = contextual.context_measures(X, store.words, preset, seed, min_contexts=min_contexts,
                                          n_intra_sentences=n_intra_sentences, n_boot=n_boot)
            rows.append({"layer": i, "depth": i / last if last else 0.0,
                         "width": store.width, **m})
    return pd.DataFrame(rows)


def token_tables(store: Store, *, max_position: int = 20, min_count: int = 20,
                 label: str = "") -> dict[str, pd.DataFrame]:
    """Seed 000's token-level measures over every layer, summarised for heatmaps.

    :func:`lmgeometry.measures.contextual.token_measures` per layer, then the mean token
    intra-sentence
    similarity by word position (0..``max_position``) and by UPOS, and the mean token
    self-similarity by UPOS (groups with fewer than ``min_count`` tokens left out).

    Returns
    -------
    dict of DataFrame
        ``intra_by_position``, ``intra_by_upos``, ``self_by_upos``: layers as rows.
    """
    by_pos, intra_upos, self_upos = {}, {}, {}
    for i in tqdm(range(store.n_layers), desc=f"token measures {label}".strip(), unit="layer",
                  mininterval=1.0):
        t = contextual.token_measures(_layer(store, i), store.words)
        t = t[t["word_index"] <= max_position]
        by_pos[i] = contextual.summarise_tokens(t, "token_intra", "word_index",
                                              min_count=min_count)["mean"]
        intra_upos[i] = contextual.summarise_tokens(t, "token_intra", "upos",
                                                  min_count=min_count)["mean"]
        self_upos[i] = contextual.summarise_tokens(t, "token_self", "upos",
                                                 min_count=min_count)["mean"]
    return {name: pd.DataFrame(d).T.rename_axis("layer")
            for name, d in (("intra_by_position", by_pos), ("intra_by_upos", intra_upos),
                            ("self_by_upos", self_upos))}


def neighbour_table(store: Store, k: int = 10, queries: int = 3000, seed: int = 0,
                    label: str = "") -> pd.DataFrame:
    """Per layer: mean share of same-word neighbours and mean neighbour cosine (seed 000).

    The same ``queries`` random tokens in every layer; neighbours among all tokens of the
    layer (:func:`lmgeometry.measures.contextual.neighbour_measures`, blocked, memory bounded).
    """
    rows = []
    for i in tqdm(range(store.n_layers), desc=f"neighbours {label}".strip(), unit="layer",
                  mininterval=1.0):
        t = contextual.neighbour_measures(_layer(store, i), store.words, k, queries=queries,
                                        seed=seed)
        rows.append({"layer": i, "same_word_share": float(t["same_word_share"].mean()),
                     "mean_neighbour_cosine": float(t["mean_neighbour_cosine"].mean()),
                     "queries": len(t)})
    return pd.DataFrame(rows)


def lowest_words(store: Store, n: int = 5, preset: str = "corrected", seed: int = 0
                 ) -> pd.DataFrame:
    """The ``n`` least self-similar words of every layer, with whether each is a stopword."""
    stop = set(store.words.loc[store.words["is_stop"], "text"].str.lower())
    frames = []
    for i in range(store.n_layers):
        low = contextual.lowest_self_similarity(_layer(store, i), store.words, n, preset=preset,
                                              seed=seed)
        frames.append(low.assign(layer=i, is_stop=low["word"].isin(stop)))
    return pd.concat(frames, ignore_index=True)


def static_scores(store: Store, layers: Sequence[int], protocol: str = "web",
                  min_contexts: int = 5, seed: int = 0,
                  frames: Mapping[str, pd.DataFrame] | None = None,
                  label: str = "") -> pd.DataFrame:
    """Seed 001's Table 1: PC1 static embeddings of chosen layers on every word benchmark.

    For each layer, :func:`lmgeometry.measures.contextual.static_embeddings` (first principal
    component of each word's occurrences, words with at least ``min_contexts`` sentences) scored by
    :func:`lmgeometry.measures.wordbench.score_all` with ``protocol`` (``"web"`` is the Word
    Embeddings Benchmarks convention the paper used; ``"strict"`` scores only covered items).
    ``frames``
    (benchmark name -> frame) avoids reloading the benchmarks for every layer.

    Returns
    -------
    pandas.DataFrame
        :func:`~lmgeometry.measures.wordbench.score_all` rows plus ``layer`` and ``vocabulary`` (the
        number of words with a static vector).
    """
    frames = dict(frames) if frames is not None else data.load_benchmarks()
    out = []
    for i in tqdm(list(layers), desc=f"static {protocol} {label}".strip(), unit="layer",
                  mininterval=1.0):
        vectors = contextual.static_embeddings(_layer(store, i), store.words, min_contexts)
        scores = wordbench.score_all(vectors, protocol=protocol, frames=frames, seed=seed)
        out.append(scores.assign(layer=i, vocabulary=len(vectors)))
    return pd.concat(out, ignore_index=True)


def table1_beside(scores: pd.DataFrame) -> pd.DataFrame:
    """This run's PC1 scores in the layout of seed 001's Table 1, the paper's rows below.

    ``scores`` holds :func:`static_scores` rows of one or more models (column ``model``). The
    result has benchmarks as columns (the paper's nine, in its order) and a two-level index:
    ``("this run", "<model>, layer <l>")`` for each scored layer, ``("this run: coverage",
    "<model>")`` with the share of each benchmark's items whose words all have a vector, and
    ``("paper (reference only)", "<embedding>")`` for every row of
    :data:`lmgeometry.measures.wordbench.ETHAYARAJH2019_TABLE1`. The paper's numbers are printed as
    a reference; they are not results of this run.
    """
    columns = list(wordbench.ETHAYARAJH2019_COLUMNS.values())
    d = scores[scores["benchmark"].isin(columns)]
    run = d.assign(row=d["model"] + ", layer " + d["layer"].astype(str)).pivot_table(
        index="row", columns="benchmark", values="value", sort=False)
    cov = d.pivot_table(index="model", columns="benchmark", values="coverage", aggfunc="first",
                        sort=False)
    ref = wordbench.reference_frame("ethayarajh2019_table1").pivot_table(
        index="embedding", columns="benchmark", values="value", sort=False)
    parts = {"this run": run, "this run: coverage": cov, "paper (reference only)": ref}
    return pd.concat({k: v.reindex(columns=columns) for k, v in parts.items()},
                     names=["source", "embedding"])


#: Rank correlation with depth that counts as a trend ("rises" / "falls") in :func:`claims`.
TREND_RHO = 0.5

#: |adjusted IntraSim| below this counts as "close to 0" (seed 001's GPT-2 pattern).
NEAR_ZERO = 0.05


def depth_trend(per_layer: pd.DataFrame, column: str) -> float:
    """Spearman correlation of ``column`` with the layer index over layers 1..L.

    Layer 0 (the context-free input) is left out. Returns NaN with fewer than three layers or
    a constant column.
    """
    d = per_layer[per_layer["layer"] > 0]
    if len(d) < 3 or d[column].nunique() < 2:
        return float("nan")
    return float(stats.spearmanr(d["layer"], d[column]).statistic)


def isotropic_cosine_band(width: int) -> float:
    """3 / sqrt(width): three standard deviations of the cosine of two independent isotropic
    random vectors in ``width`` dimensions (the cosine has mean 0 and variance 1 / width)."""
    return 3.0 / float(np.sqrt(width))


def intrasim_pattern(per_layer: pd.DataFrame) -> str:
    """Which of seed 001's three intra-sentence-similarity patterns one model follows.

    On adjusted IntraSim over layers 1..L (Ethayarajh 2019, section 4.3 and Figure 3):

    * ``"near 0 (GPT-2)"``: |adjusted IntraSim| < :data:`NEAR_ZERO` in most layers (checked
      first: a trend among values that are all close to 0 means little);
    * ``"rises (ELMo)"``: Spearman rho with depth >= :data:`TREND_RHO`;
    * ``"falls, above 0 (BERT)"``: rho <= -:data:`TREND_RHO` and above 0 in every layer;
    * ``"none of the seed's"`` otherwise.
    """
    d = per_layer[per_layer["layer"] > 0]
    rho = depth_trend(per_layer, "intrasim_adj")
    if float((d["intrasim_adj"].abs() < NEAR_ZERO).mean()) > 0.5:
        return "near 0 (GPT-2)"
    if rho >= TREND_RHO:
        return "rises (ELMo)"
    if rho <= -TREND_RHO and bool((d["intrasim_adj"] > 0).all()):
        return "falls, above 0 (BERT)"
    return "none of the seed's"


def claims(per_layer: pd.DataFrame, lowest: pd.DataFrame) -> pd.DataFrame:
    """Seed 001's claims, each marked holds / does not hold for one model, with the evidence.

    ``per_layer`` is one model's :func:`layer_measures` for one preset; ``lowest`` its
    :func:`lowest_words`. Layer 0, the context-free input, is left out everywhere; a trend is a
    Spearman correlation with the layer index (:func:`depth_trend`) of at least
    :data:`TREND_RHO` in size. The rules (Ethayarajh 2019, section 4):

    1. *Anisotropic in every non-input layer*: the cosine baseline exceeds
       :func:`isotropic_cosine_band` (3 / sqrt(width)) in every layer.
    2. *Anisotropy generally rises with depth*: rho(layer, baseline) >= 0.5 (the paper allows
       exceptions, such as BERT's last layer).
    3. *Upper layers are more context-specific*: rho(layer, adjusted SelfSim) <= -0.5.
    4. *Stopwords are the least self-similar*: in most layers, a majority of the five least
       self-similar words are stopwords.
    5-6. *IntraSim as in BERT* (falls with depth, above 0 in every layer) and *as in GPT-2*
       (near 0 in most layers); :func:`intrasim_pattern` names the pattern a model follows.
    7. *Adjusted MEV is below 5%* in every layer.
    """
    d = per_layer.sort_values("layer")
    upper = d[d["layer"] > 0]
    band = isotropic_cosine_band(int(d["width"].iloc[0]))
    i_min = upper["baseline_cosine"].idxmin()
    rho_base = depth_trend(d, "baseline_cosine")
    rho_self = depth_trend(d, "selfsim_adj")
    rho_intra = depth_trend(d, "intrasim_adj")
    intra = upper["intrasim_adj"]
    near = int((intra.abs() < NEAR_ZERO).sum())
    top5 = lowest[lowest["layer"] > 0].groupby("layer")["is_stop"].mean()
    stop_layers = int((top5 > 0.5).sum())
    mev = upper["mev_adj"]
    first, last = upper.iloc[0], upper.iloc[-1]
    rows = [
        ("anisotropic in every non-input layer", bool((upper["baseline_cosine"] > band).all()),
         f"lowest baseline cosine {upper.loc[i_min, 'baseline_cosine']:.3f} (layer "
         f"{int(upper.loc[i_min, 'layer'])}) against 3/sqrt(d) = {band:.3f}"),
        ("anisotropy rises with depth", rho_base >= TREND_RHO,
         f"Spearman rho {rho_base:.2f}; baseline cosine {first['baseline_cosine']:.2f} "
         f"(layer 1) -> {last['baseline_cosine']:.2f} (layer {int(last['layer'])})"),
        ("upper layers are more context-specific", rho_self <= -TREND_RHO,
         f"Spearman rho {rho_self:.2f}; adjusted SelfSim {first['selfsim_adj']:.2f} -> "
         f"{last['selfsim_adj']:.2f}"),
        ("stopwords are the least self-similar words", stop_layers > len(top5) / 2,
         f"most of the 5 least self-similar words are stopwords in {stop_layers} of "
         f"{len(top5)} layers"),
        ("IntraSim as in BERT: falls with depth, above 0", rho_intra <= -TREND_RHO
         and bool((intra > 0).all()),
         f"Spearman rho {rho_intra:.2f}; adjusted IntraSim {intra.min():.3f} to "
         f"{intra.max():.3f}"),
        ("IntraSim as in GPT-2: near 0 in most layers", near > len(intra) / 2,
         f"|adjusted IntraSim| < {NEAR_ZERO} in {near} of {len(intra)} layers"),
        ("adjusted MEV is below 5% in every layer", bool((mev < 0.05).all()),
         f"max adjusted MEV {mev.max():.3f} (layer {int(d.loc[mev.idxmax(), 'layer'])})"),
    ]
    return pd.DataFrame(rows, columns=["claim", "holds", "evidence"])


INTRASIM_DIFFERS = "IntraSim follows different patterns in different models"


def claims_table(per_layer: pd.DataFrame, lowest: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`claims` for every model and preset, plus the between-model IntraSim claim.

    Seed 001 found that intra-sentence similarity behaves differently in ELMo (rises), BERT
    (falls, stays above the baseline) and GPT-2 (close to the baseline). Per model and preset
    :func:`intrasim_pattern` names the pattern; :data:`INTRASIM_DIFFERS` holds (for every model
    of a preset alike) when at least two models follow *different seed patterns* (a model that
    follows none of them does not count). With a single model it cannot hold.

    Parameters
    ----------
    per_layer : DataFrame
        :func:`layer_measures` rows with columns ``model``, ``preset`` and ``width``.
    lowest : mapping
        Model -> its :func:`lowest_words`.

    Returns
    -------
    pandas.DataFrame
        Columns ``claim, holds, evidence, model, preset``.
    """
    frames, extra = [], []
    for preset, p in per_layer.groupby("preset", sort=False):
        patterns = {}
        for model, d in p.groupby("model", sort=False):
            frames.append(claims(d, lowest[model]).assign(model=model, preset=preset))
            patterns[model] = intrasim_pattern(d)
        seed_patterns = {v for v in patterns.values() if v != "none of the seed's"}
        evidence = "; ".join(f"{m}: {v}" for m, v in patterns.items())
        extra += [{"claim": INTRASIM_DIFFERS, "holds": len(seed_patterns) > 1,
                   "evidence": evidence, "model": m, "preset": preset} for m in patterns]
    return pd.concat([*frames, pd.DataFrame(extra)], ignore_index=True)


def holds_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """Claims as rows, (model, preset) as columns, "holds" / "does not hold" as values."""
    wide = table.pivot_table(index="claim", columns=["model", "preset"], values="holds",
                             aggfunc="first", sort=False)
    return wide.apply(lambda c: c.map({True: "holds", False: "does not hold"}))


def findings(per_layer: pd.DataFrame, model: str, neighbours: pd.DataFrame | None = None
             ) -> list[str]:
    """Sentences on one model's per-layer measures (one preset), generated from the numbers."""
    d = per_layer.sort_values("layer")
    first, last = d.iloc[1] if len(d) > 1 else d.iloc[0], d.iloc[-1]
    most = d.iloc[int(np.argmax(d["baseline_cosine"].to_numpy()))]
    least_self = d.iloc[1:].loc[d.iloc[1:]["selfsim_adj"].idxmin()] if len(d) > 1 else d.iloc[0]
    out = [
        f"**{model}** ({d['preset'].iloc[0]} estimators): two random words from different "
        f"sentences have a mean cosine of {first['baseline_cosine']:.2f} in layer 1 and "
        f"{last['baseline_cosine']:.2f} in the last layer (highest {most['baseline_cosine']:.2f}, "
        f"layer {int(most['layer'])}). Adjusted for it, a word's occurrences are least "
        f"self-similar in layer {int(least_self['layer'])} (adjusted SelfSim "
        f"{least_self['selfsim_adj']:.2f}); the adjusted MEV stays at or below "
        f"{d['mev_adj'].iloc[1:].max():.3f}, so a single static vector would explain at most "
        f"{max(d['mev_adj'].iloc[1:].max(), 0):.1%} more of a word's variance than chance.",
    ]
    if neighbours is not None and len(neighbours):
        n0, nl = neighbours.iloc[0], neighbours.iloc[-1]
        out.append(
            f"Among a token's 10 nearest neighbours, the share that are the same word goes from "
            f"{n0['same_word_share']:.0%} in layer 0 to {nl['same_word_share']:.0%} in the last "
            f"layer; their mean cosine from {n0['mean_neighbour_cosine']:.2f} to "
            f"{nl['mean_neighbour_cosine']:.2f}."
        )
    return out


def saturated_mev_baseline(per_layer: pd.DataFrame, threshold: float = 0.99) -> list[str]:
    """Sentences naming the layers whose MEV baseline is at least ``threshold``, per model.

    A baseline that close to 1 means the first singular direction of *random* occurrences
    holds almost all their variance: a few rows of huge norm (such as a decoder's first token
    without a BOS token) dominate, and the adjusted MEV of every word is then about
    ``MEV - 1``. ``per_layer`` holds :func:`layer_measures` rows (columns ``model`` and
    ``preset``); the baseline used is ``mev_baseline_used``.
    """

    out = []
    for (model, preset), d in per_layer.groupby(["model", "preset"], sort=False):
        hit = d.loc[d["mev_baseline_used"] >= threshold, "layer"].astype(int).tolist()
        if hit:
            out.append(f"**{model}** ({preset} estimators): the MEV baseline is at least "
                       f"{threshold} in {len(hit)} of {len(d)} layers "
                       f"(layers {layer_ranges(hit)}), up to "
                       f"{d['mev_baseline_used'].max():.3f}.")
    return out


#: Similarity benchmarks with disjoint item sets (WS353's similarity and relatedness splits
#: are subsets of WS353, so averaging them with it would count those items twice).
DISJOINT_SIMILARITY = ("simlex999", "men", "ws353", "rw")


def static_findings(scores: pd.DataFrame, model: str) -> list[str]:
    """One sentence on a model's strict PC1 scores per layer, generated from the numbers.

    ``scores`` is :func:`static_scores` output of one model over several layers with the
    ``"strict"`` protocol. Over :data:`DISJOINT_SIMILARITY` it reports the layer whose mean
    Spearman correlation is highest, that mean, the mean of the first layer, the coverage
    range, and whether the difference exceeds twice the approximate standard error of a
    correlation on the pooled scored items, 1 / sqrt(N - 3) (Fisher's approximation).
    """
    sim = scores[scores["benchmark"].isin(DISJOINT_SIMILARITY) & scores["value"].notna()]
    if sim.empty:
        return [f"**{model}**: no word-similarity item has both words covered, so the PC1 "
                "static vectors cannot be scored."]
    by_layer = sim.groupby("layer")["value"].mean()
    best = int(by_layer.idxmax())
    first_layer = int(by_layer.index[0])
    n_items = int(sim.loc[sim["layer"] == best, "n"].sum())
    se = 1 / np.sqrt(max(n_items - 3, 1))
    gap = by_layer[best] - by_layer.iloc[0]
    verdict = ("more than" if gap > 2 * se else "within")
    return [
        f"**{model}**: over {', '.join(DISJOINT_SIMILARITY)} (items with both words covered, "
        f"{sim['coverage'].min():.0%} to {sim['coverage'].max():.0%} of each benchmark, "
        f"{n_items} items in all), the PC1 static vectors correlate best with human ratings in "
        f"layer {best} (mean Spearman {by_layer[best]:.2f}), against {by_layer.iloc[0]:.2f} in "
        f"layer {first_layer}: a difference {verdict} twice the standard error of a "
        f"correlation on {n_items} items (about {se:.2f})."
    ]


def summary(per_layer: pd.DataFrame) -> pd.DataFrame:
    """Coarse, machine-stable per-model summary (the chapter's nbval-checked output).

    ``per_layer`` holds :func:`layer_measures` rows of several models (column ``model``) and
    presets.
    """
    rows = {}
    for (model, preset), d in per_layer.groupby(["model", "preset"], sort=False):
        d = d.sort_values("layer")
        rows[(model, preset)] = {
            "layers": len(d),
            "last-layer baseline > 0.2": bool(d["baseline_cosine"].iloc[-1] > 0.2),
            "baseline rises": bool(depth_trend(d, "baseline_cosine") >= TREND_RHO),
            "adjusted MEV < 0.05 everywhere": bool((d["mev_adj"].iloc[1:] < 0.05).all()),
        }
    return pd.DataFrame(rows).T
