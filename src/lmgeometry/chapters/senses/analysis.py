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
first word left out (:data:`lmgeometry.claims.record.CONTROLS`).

Every claim that reads the senses (1-NN accuracy in the full space and in the views, the
silhouette, WiC) gets its null (:mod:`lmgeometry.chapters.nulls`): the same statistic, the same
maximum over layers and the same interval, with the senses permuted within each natural draw
(and within the occurrences as sampled) and WiC's labels within each split. Of the polysemy
regressions, the claim that words seen in more contexts are less self-similar gets the same
regression with each word's count of contexts permuted across the words as its null; the
claim that more senses do not lower self-similarity is a claim of absence, which a permuted
null would meet by construction, and keeps none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import ChapterResult, check_wholes, with_blas_threads
from lmgeometry.chapters.nulls import null_sentences, permuted_claim, with_permuted
from lmgeometry.chapters.senses.polysemy import CONTEXTS_PERMUTED, polysemy_pass
from lmgeometry.chapters.senses.semcor import (
    VIEW_METHODS,
    _permuted_reps,
    _separability_table,
    _views_table,
    semcor_pass,
    spread_layers,
)
from lmgeometry.chapters.senses.wic import wic_pass
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.claims.spec import ClaimSpec
from lmgeometry.io.lexical import sense_labels
from lmgeometry.measures.stats import percentile_interval, plateau
from lmgeometry.report.claims import claim_sentences
from lmgeometry.report.prose import layers_phrase, pct, plural

__all__ = [
    "BETA",
    "CLAIMS",
    "COHEN_H",
    "FIGURES",
    "RARE_SENSES",
    "SILHOUETTE",
    "SensesParams",
    "SensesResult",
    "VIEW_METHODS",
    "WIC_ACCURACY",
    "analyse",
    "best_rows",
    "coefficients_long",
    "context_snippet",
    "polysemy_means",
    "polysemy_pass",
    "selfsim_by_bins",
    "semcor_pass",
    "spread_layers",
    "view_accuracy_table",
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


@dataclass(frozen=True)
class SensesParams:
    """Every parameter of chapter 5's analysis (the keyword arguments of :func:`analyse` after
    its data, documented there), checked once before any layer is read."""

    seed: int = 0
    n_boot: int = 1000
    n_draws: int = 5
    fit_rows: int = 2000
    view_layers: int = 13
    umap_words: int = 8
    min_contexts: int = 5

    def __post_init__(self) -> None:
        check_wholes(self, {"seed": 0, "n_boot": 0, "n_draws": 1, "fit_rows": 1,
                            "view_layers": 0, "umap_words": 0, "min_contexts": 1})


@dataclass
class SensesResult(ChapterResult):
    """:class:`ChapterResult` with the figures' arrays: ``views[model][method]`` holds the
    occurrence views of :func:`lmgeometry.report.plots.choice_layer_slider` (``coords``,
    ``color``, ``hover`` and ``layers``) for ``method`` "pca" and "umap" (not saved)."""

    views: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


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


def _permuted_claims(reps: dict, wic: pd.DataFrame, model: str, control: str) -> list[Claim]:
    """The null rows (:func:`permuted_claim`) of the claims that read senses: each statistic
    as :func:`_separability_claims` and :func:`_wic_claim` compute it (the best of layers 1-L
    or of the viewed layers after 0, the layer chosen on dev), on the permuted senses
    (:func:`_permuted_reps`' ``reps``) and WiC's permuted labels."""
    found = {}
    for key, name in (("separate", "natural"), ("not_points", "silhouette")):
        value, replicates = reps[(control, name)]
        found[key] = _best_over(value, replicates, range(1, len(value)))
    for key, method in (("pca_hides", "PCA of all words"), ("umap_shows", "UMAP of one word")):
        if (control, method) in reps:
            value, replicates, layers = reps[(control, method)]
            found[key] = _best_over(value, replicates,
                                    [i for i, layer in enumerate(layers) if layer >= 1])
    part = wic[(wic["model"] == model) & (wic["control"] == control)
               & (wic["transform"] == "raw")].reset_index(drop=True)
    best = part.loc[part["permuted_dev_accuracy"].idxmax()]
    found["wic"] = tuple(float(best[f"permuted_test_accuracy{s}"]) for s in ("", "_lo", "_hi"))
    return [permuted_claim(_claim(key, model, control, *v[:3], "labels permuted"), v)
            for key, v in found.items()]


def _contexts_null(reps: dict, model: str, control: str) -> Claim:
    """The contexts claim's null row (:func:`permuted_claim`): its statistic (the mean over
    layers 1-L of the standardised coefficient of log contexts) with each word's count of
    contexts permuted across the words, its senses kept
    (:data:`~lmgeometry.chapters.senses.polysemy.CONTEXTS_PERMUTED`)."""
    beta, rep = reps[(control, CONTEXTS_PERMUTED)]
    value = float(beta[1].mean())
    interval = (value, *percentile_interval(rep[:, 1].mean(axis=1), value))
    return permuted_claim(_claim("contexts", model, control, *interval,
                                 "counts of contexts permuted across words"), interval)


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

    Raises
    ------
    UsageError
        A parameter that is not a whole number in its range (:class:`SensesParams`).

    Returns
    -------
    SensesResult
        ``tables``: ``separability`` (per model, layer, control, transform and protocol),
        ``views`` (1-NN accuracy inside 2-D views), ``wic``, ``polysemy`` and
        ``selfsim_bins``; ``claims``; ``sentences``; ``views`` (the figures' coordinates).
    """
    p = SensesParams(seed=seed, n_boot=n_boot, n_draws=n_draws, fit_rows=fit_rows,
                     view_layers=view_layers, umap_words=umap_words, min_contexts=min_contexts)
    tables: dict[str, list[pd.DataFrame]] = {k: [] for k in
                                             ("separability", "views", "wic", "polysemy",
                                              "selfsim_bins")}
    claims, drawn, kinds, nulls = [], {}, {}, []
    for spec in semcor:
        kinds[spec] = str(semcor[spec].meta.get("model", {}).get("kind", ""))
        # Matrices of tens to a few thousand rows: BLAS threads only contend (measured: a
        # 768 x 768 eigendecomposition 40 times slower with 2 threads on 2 busy cores).
        with threadpool_limits(limits=1):
            runs, views = semcor_pass(semcor[spec], sense_weights, seed=p.seed,
                                      n_draws=p.n_draws, fit_rows=p.fit_rows,
                                      view_layers=p.view_layers, umap_words=p.umap_words)
            sep, sep_reps = _separability_table(semcor[spec], runs, n_boot=p.n_boot,
                                                seed=p.seed)
            view, view_reps = _views_table(semcor[spec], runs, n_boot=p.n_boot, seed=p.seed)
            null_reps = _permuted_reps(runs, n_boot=p.n_boot, seed=p.seed)
            wic_table = wic_pass(wic[spec], wic_pairs, seed=p.seed, fit_rows=p.fit_rows)
            poly, figure, poly_reps = polysemy_pass(sts[spec], seed=p.seed,
                                                    min_contexts=p.min_contexts,
                                                    n_boot=p.n_boot)
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
            nulls += _permuted_claims(null_reps, wic_table.assign(model=spec), spec, control)
            nulls.append(_contexts_null(poly_reps, spec, control))
    out = {name: pd.concat(frames, ignore_index=True) for name, frames in tables.items()}
    frame = calibration.annotate(claims_frame(claims), calibration.store_facts(semcor.values()))
    frame = with_permuted(frame, nulls)
    return SensesResult(tables=out, claims=frame,
                        sentences=[*_sentences(out["separability"], out["polysemy"], frame,
                                               kinds), *null_sentences(frame)],
                        views=drawn)


def view_accuracy_table(views: pd.DataFrame) -> pd.DataFrame:
    """Without a control, per model and view method: the best 1-NN sense accuracy in the 2-D
    view and in the full space and the best MFS baseline, each the maximum over layers."""
    return views[views["control"] == "none"].groupby(["model", "method"])[
        ["accuracy_view", "accuracy_full", "mfs_baseline"]].max()


def best_rows(table: pd.DataFrame, by: list[str], column: str) -> pd.DataFrame:
    """Per group of ``by``, the row where ``column`` is largest (the first such row), groups
    sorted (e.g. the best layer per model, control, transform and protocol)."""
    return table.loc[table.groupby(by)[column].idxmax()]


def coefficients_long(poly: pd.DataFrame) -> pd.DataFrame:
    """The polysemy table once per predictor (senses, then contexts) with ``predictor``,
    ``beta``, ``lo`` and ``hi`` added."""
    return pd.concat(
        [poly.assign(predictor=name, beta=poly[f"beta_{col}"], lo=poly[f"beta_{col}_lo"],
                     hi=poly[f"beta_{col}_hi"])
         for name, col in (("senses", "senses"), ("contexts", "contexts"))],
        ignore_index=True)


def polysemy_means(poly: pd.DataFrame) -> pd.DataFrame:
    """The polysemy regression per model, control and sample: counts, coefficients and R²,
    each the mean over layers."""
    return poly.groupby(["model", "control", "sample"])[
        ["n_words", "n_without_entry", "beta_senses", "beta_contexts", "r2"]].mean()
