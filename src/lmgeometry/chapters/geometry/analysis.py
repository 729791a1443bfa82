"""Chapter "Geometry" (seed 000): per-layer projections, clusters and what drives them.

:func:`analyse` reads every layer of each model's store once and measures, on a seeded sample
of words, what seed 000 described by eye in its PCA views of GPT-2 and BERT: whether a layer
splits into well-separated clusters and how far apart they are, whether the smaller cluster is
the sentences' first words, how much of the variance the word's position, its part of speech
and its identity explain, and whether position runs along a manifold. Each number comes with a
95% interval over sentences, and seed 000's claims are tested as :class:`Claim` records. The
measures are in :mod:`lmgeometry.measures.clusters`.

Special tokens (:func:`special_measures`): the store keeps the template's special tokens
([CLS] and [SEP], MPNet's ``<s>`` and ``</s>``, a decoder's BOS) apart from the words; this
chapter reads them to test seed 000's token-level statements about them: BERT's [SEP] has the
lowest token intra-sentence similarity in the upper layers, and GPT-2's first token the lowest
similarity to the rest of its sentence throughout.

Intervals: a cluster bootstrap over sentences (:class:`GroupBootstrap`, the same draws for
every layer and measure of a model, conditional on the fitted clusters and regressions) for the
silhouette, separation, first-word shares, k-NN R^2 and the special tokens' measures; a
delete-a-group jackknife over blocks of sentences for omega-squared, whose many small groups
(word identity) a bootstrap would inflate with the duplicated sentences' identical rows.

Its per-layer measures live in :mod:`~lmgeometry.chapters.geometry.layers` and its special-token
measures in :mod:`~lmgeometry.chapters.geometry.special`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations.lm_loss import lm_loss
from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import (
    ChapterResult,
    check_wholes,
    control_rows,
    controls_for,
    with_blas_threads,
)
from lmgeometry.chapters.geometry.layers import (
    JACKKNIFE_BLOCKS,
    KNN_COMPONENTS,
    KNN_NEIGHBORS,
    SILHOUETTE,
    Views,
    _blocks,
    cluster_profile,
    cluster_projections,
    layer_measures,
)
from lmgeometry.chapters.geometry.special import PUNCTUATION, special_measures, special_plan
from lmgeometry.chapters.nulls import with_nulls
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.io.models import seed_protocol
from lmgeometry.measures import stats
from lmgeometry.measures.clusters import umap_project
from lmgeometry.measures.similarity import subsample
from lmgeometry.measures.stats import (
    GroupBootstrap,
    extreme_over_layers,
    jackknife_interval,
    percentile_interval,
)
from lmgeometry.report.claims import claim_sentences
from lmgeometry.report.prose import layer_ranges, layers_phrase, number, plural, span

__all__ = [
    "FIGURES",
    "FIRST_SHARE",
    "GeometryParams",
    "GeometryResult",
    "MANIFOLD_GAIN",
    "PLANAR_SHARE",
    "SILHOUETTE",
    "analyse",
    "bos_dependence",
    "bos_sentences",
    "BROKEN_LOSS_RATIO",
    "claim_layers",
    "hover_labels",
    "special_check",
    "special_sentences",
    "split_check",
]


#: A cluster *is* the sentences' first words when they make up most of it.
FIRST_SHARE = 0.5


#: "Almost two-dimensional": at most a tenth of a cluster's variance in a 3-D projection lies
#: off its best plane (an isotropic 3-D cloud has a third there).
PLANAR_SHARE = 0.9


#: A position manifold makes position predictable from where a word lies: the k-NN R^2 of
#: position, above its shuffled-position value by more than 0.5, means the location explains
#: more of the position's variance than it leaves unexplained.
MANIFOLD_GAIN = 0.5


#: The layers of a claim about "the layers", as statistics name them (see :func:`claim_layers`).
_SPAN = "layers 1 to L - 1"


#: Figure labels (the notebook's ``show`` names) of the claims' evidence.
FIGURES = {"split": "silhouette", "first": "first-word-share", "last": "separation",
           "manifold": "position-knn", "position": "position-lead", "special": "special-intra",
           "planar": "planar-share"}


_PUBLISHED = {
    "split_decoder": "GPT-2: two very separate clusters (PCA views of every layer, by eye)",
    "split_encoder": "BERT: no such strict separation; small clouds that merge with depth",
    "first": "GPT-2 encodes the first token (position 0) distinctly from all others; the "
             "seed does not say which tokens form the smaller cluster",
    "last": "GPT-2: big changes in the last layer, where the separation decreases",
    "manifold": "GPT-2: the larger cluster holds a manifold, like a Swiss roll, along which "
                "the token's absolute position runs",
    "planar": "GPT-2: 'If we retain both clusters, the second cluster is almost "
              "two-dimensional'; projected on its own, the (larger) cluster shows its Swiss roll",
    "position_decoder": "GPT-2: position is the globally most important feature",
    "position_encoder": "BERT: position is encoded only locally, within each cluster",
    "sep": "BERT: 'the [SEP] and punctuation marks have the lowest token-based-intra-sentence-"
           "similarity in the upper layers'",
    "first_token": "GPT-2: 'throughout all layers', tokens at position 0 have the lowest "
                   "similarity to the remaining tokens in the sentence",
}


@dataclass(frozen=True)
class GeometryParams:
    """Every parameter of chapter 1's analysis (the keyword arguments of
    :func:`analyse`, documented there), checked once; the model pass reads its fields and
    checks nothing again."""

    seed: int = 0
    n_words: int = 2000
    point_budget: int = 1000
    umap_layers: int = 4
    n_boot: int = 1000

    def __post_init__(self) -> None:
        check_wholes(self, {"seed": 0, "n_words": 1, "point_budget": 1, "umap_layers": 0,
                            "n_boot": 0})


@dataclass
class GeometryResult(ChapterResult):
    """:class:`ChapterResult` with the arrays the figures draw (``views``, per model)."""

    views: dict[str, Views] = field(default_factory=dict)


def claim_layers(n_layers: int) -> list[int]:
    """The layers a claim about "the layers" covers: 1 to L - 1 (L the last layer).

    Layer 0 is the embedding output, before any attention (no first-token sink can form
    there); seed 000 describes the last layer apart ("big changes in the last layer"). Models
    with fewer than three layers use all of them.
    """
    return list(range(1, n_layers - 1)) if n_layers >= 3 else list(range(n_layers))


def hover_labels(words: pd.DataFrame) -> np.ndarray:
    """Hover text of each word: ``"text (pos i)"`` with ``i`` its position in the sentence."""
    return (words["text"] + " (pos " + words["word_index"].astype(str) + ")").to_numpy()


def _model_pass(store: Store, p: GeometryParams
                ) -> tuple[pd.DataFrame, dict, Views, pd.DataFrame, pd.DataFrame]:
    """:func:`layer_measures` of every layer and control of one store, and
    :func:`special_measures` of every layer, reading each layer once.

    Returns the model's per-layer table, the replicates by ``(control, measure)`` (arrays of
    layers x replicates; the special tokens' under ``("special", token)``), the figures'
    :class:`Views`, the widest split's cluster profile and the special tokens' table.
    """
    seed, umap_layers = p.seed, p.umap_layers
    rows = subsample(store.n_words, p.n_words, seed)
    words = store.words.iloc[rows].reset_index(drop=True)
    drawn = subsample(len(rows), p.point_budget, seed)
    boot = GroupBootstrap(words["sentence_id"].to_numpy(), p.n_boot, seed)
    blocks = _blocks(words["sentence_id"].to_numpy(), JACKKNIFE_BLOCKS, seed)
    keep = {c: np.flatnonzero(np.isin(rows, control_rows(store, c)))
            for c in controls_for(store)}
    chosen = set(np.linspace(0, store.n_layers - 1, umap_layers).round().astype(int).tolist()
                 if umap_layers > 0 else [])
    views = Views(words.iloc[drawn].reset_index(drop=True))
    table, reps, previous, special = [], {}, {}, []
    plan = special_plan(store, p.n_boot, seed)
    widest = (-np.inf, None, None, None)
    for layer in range(store.n_layers):
        full = store.layer(layer)
        X = full[rows]
        with threadpool_limits(limits=1):
            found_rows, found_reps = special_measures(full, store.special_layer(layer), plan)
        special += [{"layer": layer, "depth": store.depth(layer), **r} for r in found_rows]
        for name, values in found_reps.items():
            reps.setdefault(("special", name), []).append(values)
        for control, idx in keep.items():
            with threadpool_limits(limits=1):  # small problems: threads only contend
                row, rep, found = layer_measures(X[idx], words.iloc[idx], boot, idx,
                                                 blocks[idx], seed=seed,
                                                 previous=previous.get(control))
            previous[control] = found
            table.append({"layer": layer, "depth": store.depth(layer), "control": control,
                          **row})
            for name, values in rep.items():
                reps.setdefault((control, name), []).append(values)
        none = previous["none"]
        views.coords.append(none.coords[drawn, :3].copy())
        views.labels.append(none.labels[drawn].copy())
        if layer in chosen:
            views.umap_layers.append(layer)
            views.umap_coords.append(umap_project(X[drawn], 3, seed=seed))
        if none.k >= 2 and none.separation > widest[0]:
            widest = (none.separation, layer, X[drawn], none.labels)
    if widest[1] is not None:
        _, views.split_layer, X_drawn, labels = widest
        views.split_coords = cluster_projections(X_drawn, labels[drawn], seed)
        profile = cluster_profile(words, labels).assign(layer=views.split_layer)
    else:
        profile = pd.DataFrame()
    return (pd.DataFrame(table), {k: np.stack(v) for k, v in reps.items()}, views,
            profile, pd.DataFrame(special))


def _over_layers(part: pd.DataFrame, reps: dict, control: str, name: str,
                 layers: list[int], jackknife: bool = False) -> tuple[float, float, float]:
    """Mean of a per-layer statistic over ``layers``, with the interval of the mean."""
    values = part.set_index("layer").loc[layers, name].astype(float)
    rep = np.nanmean(reps[(control, name)][layers], axis=0) if len(layers) else np.nan
    fn = jackknife_interval if jackknife else percentile_interval
    value = float(np.nanmean(values)) if values.notna().any() else np.nan
    return (value, *fn(rep, value))


def _layers_text(part: pd.DataFrame, layers: list[int], separation: bool = False) -> str:
    """"26 of layers 1-29 split (2-9, 12-29)", with their mean separation if asked."""
    rows = part[part["split"] & part["layer"].isin(layers)]
    split = rows["layer"].tolist()
    text = f"{len(split)} of {layers_phrase(layers)} split"
    if split:
        text += f" ({layer_ranges(split)})"
    if split and separation:
        text += f"; mean separation {rows['separation'].mean():.1f} radii"
    return text


def _claim(part: pd.DataFrame, name: str, stat: tuple[float, float, float], **fields) -> Claim:
    value, lo, hi = stat
    control = str(part["control"].iloc[0])
    return Claim(seed="000", model=str(part["model"].iloc[0]), control=control, value=value,
                 ci_low=lo, ci_high=hi, figure=FIGURES[name], **fields)


def _split_claim(part: pd.DataFrame, reps: dict, layers: list[int], decoder: bool) -> Claim:
    control = str(part["control"].iloc[0])
    if decoder:
        return _claim(
            part, "split", _over_layers(part, reps, control, "silhouette", layers),
            claim="the representations split into two well-separated clusters",
            statistic=f"mean over {_SPAN} of the best k-means silhouette (k = 2-4)",
            threshold=SILHOUETTE, direction="above",
            rule=f"Kaufman & Rousseeuw (1990): a mean silhouette above {SILHOUETTE} is a "
                 f"reasonable cluster structure",
            published=_PUBLISHED["split_decoder"], evidence=_layers_text(part, layers, True))
    sel = part.set_index("layer").loc[layers]
    value, lo, hi, at = extreme_over_layers(sel["silhouette"], sel["silhouette_lo"],
                                            sel["silhouette_hi"], which="max")
    return _claim(
        part, "split", (value, lo, hi),
        claim="no layer splits into well-separated clusters",
        statistic=f"largest over {_SPAN} of the best k-means silhouette (k = 2-4)",
        threshold=SILHOUETTE, direction="below",
        rule=f"Kaufman & Rousseeuw (1990): a silhouette above {SILHOUETTE} is a reasonable "
             f"cluster structure; below it in every layer, none splits",
        published=_PUBLISHED["split_encoder"],
        evidence=f"largest at layer {layers[at]}; {_layers_text(part, layers)}")


def _decoder_claims(part: pd.DataFrame, reps: dict, layers: list[int]) -> list[Claim]:
    """The first-word cluster, the last-layer separation and the manifold (GPT-2's claims)."""
    control = str(part["control"].iloc[0])
    by_layer = part.set_index("layer")
    last = int(part["layer"].max())
    out = []
    if control == "none":
        split = [layer for layer in layers if by_layer.loc[layer, "split"]]
        recall = by_layer.loc[split, "first_recall"].mean() if split else float("nan")
        planar = by_layer.loc[split, "larger_planar"]
        out.append(_claim(
            part, "first", _over_layers(part, reps, control, "first_share", split),
            claim="one of the clusters is the sentences' first words",
            statistic=f"mean over the split layers among {_SPAN} of the share of first "
                      f"words among the words outside the largest cluster",
            threshold=FIRST_SHARE, direction="above",
            rule="a cluster is the first words when they make up most of it",
            published=_PUBLISHED["first"],
            evidence=(f"{plural(len(split), 'split layer')}; those clusters hold "
                      f"{recall:.0%} of all first words (mean)" if split
                      else "no layer splits")))
        out.append(_claim(
            part, "planar", _over_layers(part, reps, control, "larger_planar", split),
            claim="in a 3-D projection of both clusters the larger one is almost "
                  "two-dimensional",
            statistic=f"mean over the split layers among {_SPAN} of the share of the larger "
                      "cluster's variance on the layer's first three principal components "
                      "that lies along its own top two directions",
            threshold=PLANAR_SHARE, direction="above",
            rule="'almost two-dimensional' read as at most a tenth of the cluster's variance "
                 "in the projection off its best plane (an isotropic 3-D cloud: a third); the "
                 "seed's 'second cluster' read as the larger one, whose manifold the separate "
                 "projection shows. A split whose gap takes the first component makes this "
                 "nearly certain: the remark is about the view, and adds little to the split",
            published=_PUBLISHED["planar"],
            evidence=(f"{plural(len(split), 'split layer')}; share "
                      f"{span(planar.min(), planar.max())}" if split else "no layer splits")))
    before = by_layer.loc[last - 1]
    evidence = (f"layer {last - 1}: separation {before['separation']:.2f}, silhouette "
                f"{before['silhouette']:.2f}; layer {last}: silhouette "
                f"{by_layer.loc[last, 'silhouette']:.2f}")
    ratio = (float("nan"),) * 3
    if before["split"]:
        carried = reps[(control, "separation_carried")][last]
        with np.errstate(invalid="ignore", divide="ignore"):
            value = by_layer.loc[last, "separation_carried"] / before["separation"]
            ratio = (value, *percentile_interval(
                carried / reps[(control, "separation")][last - 1], value))
    else:
        evidence += f"; layer {last - 1} does not split: no clusters to come closer"
    out.append(_claim(
        part, "last", ratio,
        claim="the separation of the clusters decreases in the last layer",
        statistic="separation of layer L - 1's clusters in the last layer L over that in "
                  "layer L - 1 (when layer L - 1 splits)",
        threshold=1.0, direction="below",
        rule="the seed gives a direction, not a size: a ratio below 1 is a decrease",
        published=_PUBLISHED["last"], evidence=evidence))
    out.append(_claim(
        part, "manifold", _over_layers(part, reps, control, "knn_gain", layers),
        claim="within the larger cluster, position runs along a manifold (a Swiss roll)",
        statistic=f"mean over {_SPAN} of the {KNN_NEIGHBORS}-NN R² of "
                  f"position from the larger cluster's top {KNN_COMPONENTS} PCs, minus its "
                  f"value for shuffled positions",
        threshold=MANIFOLD_GAIN, direction="above",
        rule="location along a manifold predicts position: more of its variance explained "
             f"than left, beyond chance (R² gain above {MANIFOLD_GAIN})",
        published=_PUBLISHED["manifold"],
        evidence=f"R² at most {part['knn_r2'].max():.2f} (layer "
                 f"{int(part.loc[part['knn_r2'].idxmax(), 'layer'])})"))
    return out


def _position_claim(part: pd.DataFrame, reps: dict, layers: list[int], decoder: bool
                    ) -> Claim:
    control = str(part["control"].iloc[0])
    sel = part.set_index("layer").loc[layers]
    return _claim(
        part, "position",
        _over_layers(part, reps, control, "position_lead", layers, jackknife=True),
        claim=("position is the dominant global feature" if decoder
               else "position is not the dominant global feature"),
        statistic=f"mean over {_SPAN} of ω²(position) minus the larger of "
                  f"ω²(part of speech) and ω²(word identity)",
        threshold=0.0, direction="above" if decoder else "below",
        rule="dominant: position explains more of the variance than part of speech and than "
             "word identity, so the difference is above 0",
        published=_PUBLISHED["position_decoder" if decoder else "position_encoder"],
        evidence=f"mean ω²: position {sel['var_position'].mean():.2f}, part of speech "
                 f"{sel['var_upos'].mean():.2f}, word identity {sel['var_word'].mean():.2f}")


def _special_claim(part: pd.DataFrame, reps: dict, decoder: bool) -> Claim | None:
    """Seed 000's [SEP] claim (encoders) or first-token claim (decoders), if the store has
    the token: [SEP] against the parts of speech in the upper half of the layers, the first
    token against the later positions in every layer from 1 on."""
    suffix = "(first token)" if decoder else "(last token)"
    names = [t for t in pd.unique(part["token"]) if t.endswith(suffix)]
    if not names:
        return None
    name = names[0]
    sub = part[part["token"] == name].set_index("layer")
    rep = reps[("special", name)]
    base = {"seed": "000", "model": str(part["model"].iloc[0]), "control": "none",
            "threshold": 0.0, "direction": "below", "figure": FIGURES["special"]}
    if decoder:
        layers = [layer for layer in sub.index if layer >= 1]
        at = int(sub.loc[layers, "difference"].idxmax())
        value = float(sub.loc[at, "difference"])
        lo, hi = percentile_interval(np.max(rep[layers], axis=0), value)
        return Claim(
            claim="the first token is the least similar to the rest of its sentence, in every "
                  "layer",
            statistic="largest over layers 1 to L of the first token's mean token intra-"
                      "sentence similarity minus the lowest mean of the later input positions "
                      "(grouped 1, 2-3, 4-7, 8-15, 16-31, 32+)",
            value=value, ci_low=lo, ci_high=hi,
            rule="'lowest' is an ordering: below every later position in every layer, so the "
                 "largest difference is below 0",
            published=_PUBLISHED["first_token"],
            evidence=f"first token: {name}; closest at layer {at} (to "
                     f"{sub.loc[at, 'reference']}); a claim about the first token itself, so "
                     f"it has no first-word control", **base)
    return _lowest_claim(
        sub, rep, base,
        claim="[SEP] has the lowest token intra-sentence similarity in the upper layers",
        statistic="mean over the upper half of the layers (depth >= 0.5) of the closing "
                  "special token's ([SEP], </s>) mean token intra-sentence similarity minus the "
                  "lowest mean of a part of speech (punctuation, which the seed names with "
                  "[SEP], left out)",
        evidence=f"closing token: {name}")


def _punctuation_claim(part: pd.DataFrame, reps: dict) -> Claim | None:
    """Seed 000's punctuation claim (encoders), if the store has enough punctuation marks:
    their token intra-sentence similarity against the other parts of speech in the upper half
    of the layers, as the [SEP] claim's closing token."""
    sub = part[part["token"] == PUNCTUATION].set_index("layer")
    if sub.empty:
        return None
    base = {"seed": "000", "model": str(part["model"].iloc[0]), "control": "none",
            "threshold": 0.0, "direction": "below", "figure": FIGURES["special"]}
    return _lowest_claim(
        sub, reps[("special", PUNCTUATION)], base,
        claim="punctuation marks have the lowest token intra-sentence similarity in the upper "
              "layers",
        statistic="mean over the upper half of the layers (depth >= 0.5) of the punctuation "
                  "marks' (spaCy's PUNCT) mean token intra-sentence similarity minus the "
                  "lowest mean of another part of speech",
        evidence=f"{int(sub['n'].iloc[0])} punctuation marks", words="the other words")


def _lowest_claim(sub: pd.DataFrame, rep: np.ndarray, base: Mapping[str, Any], *, claim: str,
                  statistic: str, evidence: str, words: str = "the words") -> Claim:
    """A "lowest in the upper layers" claim of seed 000 on one subject's rows of the special
    table (indexed by layer) and its replicates of the difference from the lowest group."""
    upper = [layer for layer in sub.index if layer >= 1 and sub.loc[layer, "depth"] >= 0.5]
    value = float(sub.loc[upper, "difference"].mean())
    lo, hi = percentile_interval(rep[upper].mean(axis=0), value)
    lowest = sub.loc[upper, "reference"].value_counts().index[0]
    return Claim(
        claim=claim, statistic=statistic, value=value, ci_low=lo, ci_high=hi,
        rule="'lowest' is an ordering: below every part of speech, so the difference from "
             "the lowest is below 0",
        published=_PUBLISHED["sep"],
        evidence=f"{evidence}; {layers_phrase(upper)}; lowest part of speech most often "
                 f"{lowest}; norm ratio to {words} "
                 f"{sub.loc[upper, 'norm_ratio'].min():.2f} to "
                 f"{sub.loc[upper, 'norm_ratio'].max():.2f}", **base)


def special_sentences(special: pd.DataFrame) -> list[str]:
    """One sentence per model and special token from ``tables["special"]``: the layers where
    its token intra-sentence similarity is, with its 95% interval, wholly below or wholly
    above the lowest of its reference groups, and its norm relative to the words' (layers 1
    on; layer 0, the embedding output, apart). A special token is written as code (Markdown),
    so that ``<s>`` is shown, not read as a tag."""
    out = []
    for (model, token), part in special.groupby(["model", "token"], sort=False):
        part = part.sort_values("layer")
        role = part["role"].iloc[0]
        groups = ("the later input positions" if role == "first token" else
                  "every other part of speech" if token == PUNCTUATION else
                  "every part of speech (punctuation left out)")
        below = part.loc[part["difference_hi"] < 0, "layer"].tolist()
        above = part.loc[part["difference_lo"] > 0, "layer"].tolist()
        later = part[part["layer"] >= 1]
        # a decoder's first word is itself a word: its ratio is over the other words
        words_too = token.startswith("first word") or token == PUNCTUATION
        words = "other words'" if words_too else "words'"
        ratio = later if len(later) else part
        name, _, bracket = token.partition(" (")
        shown = ("punctuation marks" if token == PUNCTUATION else
                 token if words_too else f"`{name}` ({bracket}")
        text = (f"{model}, {shown}: less similar to the rest of its sentence than {groups} in "
                f"{len(below)} of {plural(len(part), 'layer')}"
                + (f" ({layer_ranges(below)})" if below else "")
                + (f", more similar than the least similar of them in {layers_phrase(above)}"
                   if above else "")
                + f"; its norm is {span(ratio['norm_ratio'].min(), ratio['norm_ratio'].max())}"
                f" times the {words} mean norm"
                + (" from layer 1 on" if len(later) else "")
                + f" ({number(float(part.iloc[0]['norm_ratio']))} in layer 0).")
        out.append(text)
    return out


def _model_claims(part: pd.DataFrame, reps: dict, decoder: bool) -> list[Claim]:
    """Seed 000's claims on one model, per control: GPT-2's for decoders, BERT's otherwise."""
    layers = claim_layers(int(part["layer"].max()) + 1)
    out = []
    for _, sub in part.groupby("control", sort=False):
        out.append(_split_claim(sub, reps, layers, decoder))
        if decoder:
            out.extend(_decoder_claims(sub, reps, layers))
        out.append(_position_claim(sub, reps, layers, decoder))
    return out


def _kind(store: Store) -> str:
    return str(store.meta.get("model", {}).get("kind", ""))


def _split_sentence(layers: pd.DataFrame, bos: Mapping[str, bool]) -> str:
    """How many of each model's layers split, from the per-layer table (control "none").

    ``bos`` names the decoders whose tokenizer prepends a beginning-of-sequence token: their
    first word is not the sequence's first token (which the store keeps with the special
    tokens).
    """
    parts = []
    for model, part in layers[layers["control"] == "none"].groupby("model", sort=False):
        split = part.loc[part["split"], "layer"].tolist()
        parts.append(f"{model} {len(split)} of {len(part)}"
                     + (f" ({layers_phrase(split)})" if split else ""))
    sentence = (f"Layers that split into well-separated clusters (silhouette of at "
                f"least {SILHOUETTE}), over all words: {'; '.join(parts)}.")
    prepends = [model for model, flag in bos.items() if flag]
    if prepends:
        sentence += (f" The tokenizer of {' and '.join(prepends)} prepends a "
                     f"beginning-of-sequence token, stored apart from the words: there the "
                     f"first word is not the sequence's first token.")
    return sentence


#: The loss ratio at which running a decoder without its BOS token counts as breaking it (the
#: limit issue-tracker and mechanism papers use for interventions: the loss doubles).
BROKEN_LOSS_RATIO = 2.0


def bos_dependence(models: Sequence[str], texts: Sequence[str], *, n_boot: int = 1000,
                   seed: int = 0) -> pd.DataFrame:
    """What running each decoder as the seeds ran GPT-2 (no BOS token) costs its language model.

    For every decoder whose tokenizer prepends a beginning-of-sequence token
    (:func:`lmgeometry.io.models.seed_protocol`), the mean loss per target token (each text's
    tokens after its first, :func:`lmgeometry.activations.lm_loss.lm_loss`) with and without
    the BOS token, and their ratio with a 95% bootstrap interval over texts.

    Returns
    -------
    DataFrame
        One row per such decoder: ``model``, ``loss_bos``, ``loss_none``, ``ratio``,
        ``ratio_lo``, ``ratio_hi``, ``texts``, ``tokens``, ``broken`` (the interval lies above
        :data:`BROKEN_LOSS_RATIO`). Empty when no model prepends a BOS token.
    """
    rows = []
    for spec in models:
        if not seed_protocol(spec):
            continue
        with_bos, without = (lm_loss(spec, texts, prepend_bos=b) for b in (True, False))
        V = np.column_stack([with_bos.nll / np.maximum(with_bos.tokens, 1),
                             without.nll / np.maximum(without.tokens, 1)])
        keep = with_bos.tokens > 0
        reps = stats.weighted_bootstrap_means(V[keep], with_bos.tokens[keep].astype(float),
                                              n_boot, np.random.default_rng(seed))
        ratio = without.mean / with_bos.mean
        lo, hi = stats.percentile_interval(reps[:, 1] / reps[:, 0], ratio)
        rows.append({"model": spec, "loss_bos": with_bos.mean, "loss_none": without.mean,
                     "ratio": ratio, "ratio_lo": lo, "ratio_hi": hi, "texts": int(keep.sum()),
                     "tokens": int(with_bos.tokens.sum()), "broken": lo > BROKEN_LOSS_RATIO})
    return pd.DataFrame(rows, columns=["model", "loss_bos", "loss_none", "ratio", "ratio_lo",
                                       "ratio_hi", "texts", "tokens", "broken"])


def bos_sentences(table: pd.DataFrame) -> list[str]:
    """One sentence per row of :func:`bos_dependence`: the losses, their ratio, and what it
    means for the seed's protocol."""
    out = []
    for row in table.itertuples():
        verdict = ("more than doubles it: without its BOS token the model is broken, so this "
                   "book runs it with the token, and the claims about GPT-2's first token are "
                   "not a fair test of it (the BOS token, kept apart from the words, takes that "
                   "role)" if row.broken else
                   "stays below twice it: the model still works without its BOS token")
        out.append(f"{row.model}: without its BOS token the loss per token on {row.texts} "
                   f"held-out sentences is {number(row.loss_none)} nats against "
                   f"{number(row.loss_bos)} with it, {number(row.ratio)} times "
                   f"[{number(row.ratio_lo)}, {number(row.ratio_hi)}] as much; the loss "
                   f"{verdict}.")
    return out


@with_blas_threads
def analyse(stores: Mapping[str, Store], *, seed: int = 0, n_words: int = 2000,
            point_budget: int = 1000, umap_layers: int = 4, n_boot: int = 1000,
            null_stores: Mapping[str, Store] | None = None) -> GeometryResult:
    """Seed 000's geometry measures and claims for every model, each layer read once.

    Parameters
    ----------
    stores : mapping of model spec -> :class:`Store`
        The same corpus for every model.
    seed : int
        Seeds the word sample, clusterings, regressions, bootstrap and jackknife blocks.
    n_words : int
        Words sampled (the same in every layer) for the measures.
    point_budget : int
        Of those, the words the figures draw.
    umap_layers : int
        Evenly spaced layers (first and last included) given a 3-D UMAP; 0 for none.
    n_boot : int
        Bootstrap replicates.
    null_stores : mapping of model spec -> :class:`Store`, optional
        The models' untrained twins on the same corpus (:func:`.nulls.null_stores`): every
        claim is also computed on them with the same parameters (no UMAP), and each row
        carries its twin's (:func:`.nulls.with_nulls`).

    Raises
    ------
    UsageError
        A parameter that is not a whole number in its range (:class:`GeometryParams`).

    Returns
    -------
    GeometryResult
        ``tables["layers"]``: one row per (model, layer, control) with :func:`layer_measures`'
        columns; ``tables["clusters"]``: :func:`cluster_profile` of each model's widest split;
        ``tables["special"]``: one row per (model, layer, special token) with
        :func:`special_measures`' columns; ``claims``: seed 000's claims (GPT-2's for
        decoders, under both controls, and the first-token claim; BERT's for encoders, and the
        [SEP] claim); ``sentences``; ``views``: the figures' arrays.
    """
    params = GeometryParams(seed=seed, n_words=n_words, point_budget=point_budget,
                            umap_layers=umap_layers, n_boot=n_boot)
    tables, profiles, claims, views, kinds, bos, specials = [], [], [], {}, {}, {}, []
    for spec, store in stores.items():
        part, reps, views[spec], profile, special = _model_pass(store, params)
        kinds[spec] = _kind(store)
        if kinds[spec] == "decoder":
            bos[spec] = bool(store.meta.get("template", {}).get("bos_prepended"))
        part.insert(0, "model", spec)
        tables.append(part)
        if not profile.empty:
            profiles.append(profile.assign(model=spec))
        claims += _model_claims(part, reps, kinds[spec] == "decoder")
        if not special.empty:
            special.insert(0, "model", spec)
            specials.append(special)
            found = [_special_claim(special, reps, kinds[spec] == "decoder")]
            if kinds[spec] != "decoder":
                found.append(_punctuation_claim(special, reps))
            claims += [c for c in found if c is not None]
    layers = pd.concat(tables, ignore_index=True)
    clusters = (pd.concat(profiles, ignore_index=True)[
        ["model", "layer", "cluster", "share", "position0_share", "mean_position", "top_words"]]
        if profiles else pd.DataFrame())
    frame = calibration.annotate(claims_frame(claims), calibration.store_facts(stores.values()))
    if null_stores:
        frame = with_nulls(frame, analyse(null_stores, seed=seed, n_words=n_words,
                                          point_budget=point_budget, umap_layers=0,
                                          n_boot=n_boot).claims)
    special = pd.concat(specials, ignore_index=True) if specials else pd.DataFrame()
    return GeometryResult(
        tables={"layers": layers, "clusters": clusters, "special": special}, claims=frame,
        sentences=[_split_sentence(layers, bos), *claim_sentences(frame, kinds)], views=views)


def split_check(layers: pd.DataFrame) -> pd.DataFrame:
    """Per model, without a control: its layers and how many of them split in two clusters.

    Returns
    -------
    DataFrame
        ``model``, ``layers``, ``split`` (int), models in their order in ``layers``.
    """
    rows = [{"model": spec, "layers": len(part), "split": int(part["split"].sum())}
            for spec, part in layers[layers["control"] == "none"].groupby("model", sort=False)]
    return pd.DataFrame(rows, columns=["model", "layers", "split"])


def special_check(special: pd.DataFrame) -> pd.DataFrame:
    """Per model and special token (in their order in ``special``), its layers.

    Returns
    -------
    DataFrame
        ``model``, ``token``, ``layers``.
    """
    rows = [{"model": spec, "token": token, "layers": len(part)}
            for (spec, token), part in special.groupby(["model", "token"], sort=False)]
    return pd.DataFrame(rows, columns=["model", "token", "layers"])
