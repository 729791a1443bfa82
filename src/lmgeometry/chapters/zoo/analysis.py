"""Chapter "Model zoo" (seed 000's closing gallery): every model on one corpus, side by side.

Seed 000 closes with the first layer of "some selected state-of-the-art language models",
projected with PCA, and concludes that "the embedding spaces are vastly different", that
embeddings of different models should not be used interchangeably, and that one should choose
"a model that is suitable for classical measures such as cosine similarity". :func:`analyse`
puts every model of a build on the same words and measures what that gallery shows by eye:

* the **gallery**: each model's layer 0 (the embedding output) and first block (layer 1),
  projected on their own first two principal components, for the same sampled words;
* a per-layer **fingerprint** on a shared depth axis (layer / last layer), from measures that
  exist elsewhere in the package: the anisotropy baseline (also on standardised dimensions,
  Timkey & van Schijndel 2021), SelfSim and IntraSim (Ethayarajh 2019;
  :func:`lmgeometry.measures.contextual.context_measures`, preset ``corrected``), the
  first word's norm ratio (:func:`lmgeometry.measures.similarity.norm_ratio`), the cluster
  split (:func:`lmgeometry.measures.clusters.detect_clusters`), and the variance share of the
  top dimension (seed 003's rogue dimension, :func:`lmgeometry.measures.similarity.variance_share`);
* per model, I(W) of the input embedding matrix (Biš et al. 2021;
  :func:`lmgeometry.measures.isotropy.embedding_statistics`) and the facts a reader needs to
  compare architectures (:meth:`lmgeometry.io.models.LoadedModel.facts`);
* seed 000's claims about other models as :class:`~lmgeometry.claims.Claim` rows: that
  the first layers of different models are vastly different (linear CKA between models on the
  same words, layer 0 and first block), and that the word vectors are extremely anisotropic.

Intervals come from one cluster bootstrap over sentences per model (:class:`GroupBootstrap`),
shared by every layer and measure, so a mean over layers keeps the layers' correlation; the
CKA intervals from a delete-a-group jackknife over blocks of sentences (as chapter 1's
omega-squared: a bootstrap's duplicated rows are identical in both spaces and inflate CKA;
the replicates are :func:`similarity.gram_cka`'s with 0/1 weights); I(W)'s from a bootstrap
over the rows (tokens) of W. Decoders are measured as the seed did (control
``none``) and without each sentence's first word (``first word excluded``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import (
    CONTROLS,
    ChapterResult,
    check_wholes,
    control_rows,
    controls_for,
    standardised_baseline_rows,
    standardised_control,
    with_blas_threads,
)
from lmgeometry.chapters.geometry.layers import JACKKNIFE_BLOCKS, SILHOUETTE
from lmgeometry.chapters.nulls import with_nulls
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.io import models, released
from lmgeometry.measures import clusters, contextual, isotropy, similarity
from lmgeometry.measures.baselines import baseline_and_replicates, cross_sentence_replicates
from lmgeometry.measures.stats import (
    GroupBootstrap,
    extreme_over_layers,
    jackknife_interval,
    percentile_interval,
)
from lmgeometry.measures.unit_rows import UnitRows
from lmgeometry.report.claims import claim_sentences
from lmgeometry.report.prose import span

__all__ = [
    "CKA_DIFFERENT",
    "EXTREME_ANISOTROPY",
    "FIGURES",
    "FINGERPRINT",
    "Gallery",
    "ZooParams",
    "ZooResult",
    "analyse",
    "common_rows",
    "facts_table",
    "fingerprint_long",
    "fingerprint_summary",
    "layer_fingerprint",
    "model_facts",
    "w_statistics",
]

#: "Vastly different" first layers: linear CKA (Kornblith et al. 2019) below 0.5, i.e. less
#: than half of the words' centred similarity structure shared (CKA is a normalised inner
#: product of the two Gram matrices, 1 for representations equal up to rotation and scale).
CKA_DIFFERENT = 0.5

#: "Extremely anisotropic": seed 000 cites Ethayarajh (2019), whose criterion is a mean cosine
#: of random words well above the isotropic 0; his rule here (seed 001's) is 0.1. His released
#: means over layers 1-12 are BERT 0.40, GPT-2 0.65: a level of 0.5 (one direction holding
#: more of a unit vector than all others together) failed BERT's own numbers.
EXTREME_ANISOTROPY = 0.1

#: The fingerprint's measures: column -> axis title (the figures' facets, in order).
FINGERPRINT: dict[str, str] = {
    "baseline_cosine": "anisotropy baseline (mean cosine of random words)",
    "baseline_cosine_standardised": "anisotropy baseline, standardised dimensions",
    "top_dim_share": "variance share of the top dimension",
    "first_word_norm_ratio": "first word's median norm / the others'",
    "silhouette": "best k-means silhouette (split at 0.5)",
    "selfsim_adj": "SelfSim, adjusted",
    "intrasim_adj": "IntraSim, adjusted",
}

#: Figure labels (the notebook's ``show`` names) of the claims' evidence.
FIGURES = {"cka": "zoo-cka", "anisotropy": "zoo-fingerprint-geometry"}

_PUBLISHED_CKA = ("the first layers of 'some selected state-of-the-art language models' are "
                  "'vastly different' (PCA views, by eye)")

#: Measures of :func:`contextual.context_measures` kept in the fingerprint.
_CONTEXT_KEYS = ("selfsim", "selfsim_adj", "intrasim", "intrasim_adj")


@dataclass
class Gallery:
    """The first-layer gallery: the same words, each model's layer 0 and first block in 2-D.

    Attributes
    ----------
    words : the drawn words (word-table rows, re-indexed 0..n-1)
    coords : per model, ``[layer 0, layer 1]`` coordinates (n, 2) on that layer's own first
        two principal components
    explained : per model, the two layers' explained-variance ratios of those components
    """

    words: pd.DataFrame
    coords: dict[str, list[np.ndarray]] = field(default_factory=dict)
    explained: dict[str, list[np.ndarray]] = field(default_factory=dict)


@dataclass(frozen=True)
class ZooParams:
    """Every parameter of chapter 8's analysis (the keyword arguments of :func:`analyse` after
    its data, documented there), checked once before any model is loaded."""

    seed: int = 0
    n_words: int = 2000
    point_budget: int = 1000
    n_boot: int = 1000
    w_boot: int = 200
    min_contexts: int = 5
    n_intra_sentences: int = 500

    def __post_init__(self) -> None:
        check_wholes(self, {"seed": 0, "n_words": 1, "point_budget": 1, "n_boot": 0,
                            "w_boot": 0, "min_contexts": 2, "n_intra_sentences": 1})


@dataclass
class ZooResult(ChapterResult):
    """:class:`ChapterResult` with the gallery's arrays (not saved in the results file)."""

    gallery: Gallery | None = None


def w_statistics(W: np.ndarray, *, n_boot: int = 200, seed: int = 0) -> dict[str, float]:
    """I(W) of an input embedding matrix with its 95% interval, and its mean cosine.

    :func:`isotropy.embedding_statistics` (Biš et al. 2021, eqs. 7-8; Poisson bootstrap over
    the rows of W).

    Returns
    -------
    dict
        ``w_rows``, ``w_width``, ``isotropy``, ``isotropy_lo``, ``isotropy_hi``,
        ``log_isotropy``, ``w_mean_cosine``.
    """
    st = isotropy.embedding_statistics(W, n_boot=n_boot, rng=seed)
    lo, hi = (st.get(f"isotropy_raw_{s}", math.nan) for s in ("lo", "hi"))
    return {"w_rows": st["n_rows"], "w_width": st["width"], "isotropy": st["isotropy_raw"],
            "isotropy_lo": lo, "isotropy_hi": hi, "log_isotropy": st["log_isotropy_raw"],
            "w_mean_cosine": st["mean_cosine"]}


def model_facts(spec: str, *, n_boot: int = 200, seed: int = 0,
                device: str | None = "cpu") -> dict[str, Any]:
    """Load one model: its facts (:meth:`LoadedModel.facts`) and :func:`w_statistics` of W.

    The model is dropped before returning (one model in memory at a time).
    """
    loaded = models.load_model(spec, device=device)
    out = loaded.facts() | w_statistics(models.input_embeddings(loaded), n_boot=n_boot,
                                        seed=seed)
    del loaded
    return out


def facts_table(facts: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per model: what a reader needs to compare the architectures.

    Columns: ``model``, ``architecture``, ``kind``, ``parameters``, ``layers x width``,
    ``position scheme``, ``normalisation``, ``tied embeddings``, ``vocabulary``, ``objective``
    and ``caveats`` (joined with "; ", "none" when there are none).
    """
    rows = []
    for spec, f in facts.items():
        rows.append({
            "model": spec, "architecture": f.get("architecture", ""), "kind": f.get("kind", ""),
            "parameters": f.get("n_parameters"),
            "layers x width": f"{f.get('n_layers')} x {f.get('hidden_size')}",
            "position scheme": f.get("position_scheme", ""),
            "normalisation": f.get("normalisation", ""),
            "tied embeddings": f.get("tied_embeddings", ""),
            "vocabulary": f.get("vocab_size"), "objective": f.get("objective", ""),
            "caveats": "; ".join(f.get("caveats") or []) or "none",
        })
    return pd.DataFrame(rows)


def common_rows(stores: Mapping[str, Store]) -> dict[str, np.ndarray]:
    """Each store's rows of the words that every store holds, in one common order.

    Stores of one corpus hold the same words unless a model skipped a sentence (too long for
    it); words are matched on (``sentence_id``, ``word_index``).
    """
    keys = None
    for store in stores.values():
        index = pd.MultiIndex.from_frame(store.words[["sentence_id", "word_index"]])
        keys = index if keys is None else keys.intersection(index, sort=False)
    assert keys is not None
    keys = keys.sort_values()
    out = {}
    for spec, store in stores.items():
        index = pd.MultiIndex.from_frame(store.words[["sentence_id", "word_index"]])
        out[spec] = index.get_indexer(keys)
    return out


def _interval(name: str, value: float, reps: np.ndarray) -> dict[str, float]:
    lo, hi = percentile_interval(reps, value)
    return {name: float(value), f"{name}_lo": lo, f"{name}_hi": hi}


def layer_fingerprint(X: np.ndarray, units: UnitRows, words: pd.DataFrame,
                      boot: GroupBootstrap, rows: np.ndarray, sample: np.ndarray, *,
                      seed: int = 0, min_contexts: int = 5, n_intra_sentences: int = 500
                      ) -> tuple[dict[str, Any], np.ndarray]:
    """The fingerprint of one layer on the rows a control keeps, with 95% intervals.

    Parameters
    ----------
    X, units : the whole layer (every stored word) and its unit rows
    words : the store's word table
    boot : the model's sentence bootstrap (built on every row of ``words``)
    rows : the rows the control keeps; ``sample`` : those the cluster and dimension measures
        use (a subset of ``rows``)

    Returns
    -------
    row : dict
        ``baseline_cosine`` (exact mean cosine of words from different sentences) and
        :data:`_CONTEXT_KEYS` (SelfSim over words in at least ``min_contexts`` sentences,
        IntraSim over ``n_intra_sentences`` sentences, raw and adjusted, with their bootstrap
        intervals over words / sentences), ``silhouette`` (with its interval), ``split``
        (silhouette at least :data:`SILHOUETTE`), ``k``, ``top_dim_share`` (with its
        interval), ``n_words``.
    baseline_reps : ndarray of shape (n_boot,)
        The baseline's sentence-bootstrap replicates (for claims over layers).
    """
    part = words.iloc[rows]
    sub = units if len(rows) == len(words) else units.take(rows)
    ctx = contextual.context_measures(sub, part, "corrected", seed, min_contexts=min_contexts,
                                      n_intra_sentences=n_intra_sentences, n_boot=boot.n_boot)
    groups = np.unique(boot.codes[rows])
    reps = cross_sentence_replicates(sub, part["sentence_id"].to_numpy(),
                                                boot.counts[:, groups])
    row: dict[str, Any] = _interval("baseline_cosine", ctx["baseline_cosine"], reps)
    for key in _CONTEXT_KEYS:
        row.update({k: ctx[k] for k in (key, f"{key}_lo", f"{key}_hi")})
    Xs = clusters.as_float(X[sample])
    with threadpool_limits(limits=1):  # small problems: threads only contend
        found = clusters.detect_clusters(Xs, max_k=4, min_silhouette=SILHOUETTE, seed=seed)
    has = np.isfinite(found.silhouettes)
    row.update(_interval("silhouette", *boot.ratio(found.silhouettes[has], rows=sample[has])))
    row.update(split=found.k >= 2, k=found.k)
    share = similarity.variance_share_replicates(Xs, boot.counts[:, boot.codes[sample]], (1,))
    row.update(_interval("top_dim_share", similarity.variance_share(Xs, 1), share[:, 0]))
    row["n_words"] = len(rows)
    return row, reps


def _model_pass(store: Store, p: ZooParams) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """:func:`layer_fingerprint` of every layer and control of one store, each layer read once.

    Returns the per-layer table and, per control, the baseline replicates (layers x n_boot).
    """
    words = store.words
    boot = GroupBootstrap(words["sentence_id"].to_numpy(), p.n_boot, p.seed)
    sample = similarity.subsample(store.n_words, p.n_words, p.seed)
    first = words["word_index"].to_numpy() == 0
    keep = {c: control_rows(store, c) for c in controls_for(store)}
    table, reps = [], {c: [] for c in keep} | {standardised_control(c): [] for c in keep}
    for layer in range(store.n_layers):
        X = store.layer(layer)
        units = UnitRows.of(X)
        ratio = similarity.norm_ratio(X, first)
        for control, rows in keep.items():
            row, base = layer_fingerprint(
                X, units, words, boot, rows, np.intersect1d(sample, rows), seed=p.seed,
                min_contexts=p.min_contexts, n_intra_sentences=p.n_intra_sentences)
            reps[control].append(base)
            row.update(_standardised(X, words, boot, rows, reps[standardised_control(control)]))
            table.append({"layer": layer, "depth": store.depth(layer), "control": control,
                          "first_word_norm_ratio": ratio if control == "none" else math.nan,
                          **row})
    return pd.DataFrame(table), {c: np.stack(v) for c, v in reps.items()}


def _standardised(X: np.ndarray, words: pd.DataFrame, boot: GroupBootstrap, rows: np.ndarray,
                  reps: list[np.ndarray]) -> dict[str, float]:
    """The baseline on standardised dimensions (moments over the control's rows) with its
    interval; its replicates are appended to ``reps``."""
    part = X if len(rows) == len(X) else X[rows]
    groups = np.unique(boot.codes[rows])
    value, rep = baseline_and_replicates(part, words["sentence_id"].to_numpy()[rows],
                                         boot.counts[:, groups], standardise=True)
    reps.append(rep)
    return _interval("baseline_cosine_standardised", value, rep)


def _first_layers(stores: Mapping[str, Store], rows: Mapping[str, np.ndarray],
                  point_budget: int, seed: int) -> tuple[pd.DataFrame, Gallery]:
    """Cross-model CKA of layer 0 and of the first block, per control, and the gallery.

    CKA's interval: the delete-a-group jackknife over :data:`JACKKNIFE_BLOCKS` blocks of whole
    sentences (each replicate leaves one block out: :func:`similarity.gram_cka` with 0/1
    counts).
    """
    specs = list(stores)
    first = next(iter(stores.values()))
    words = first.words.iloc[rows[specs[0]]].reset_index(drop=True)
    drawn = similarity.subsample(len(words), point_budget, seed)
    words = words.iloc[drawn].reset_index(drop=True)
    layers = {(spec, layer): stores[spec].layer(layer, rows[spec][drawn]).astype(np.float64)
              for spec in specs for layer in (0, 1)}
    gallery = Gallery(words)
    for spec in specs:
        projected = [clusters.pca_project(layers[(spec, i)], 2, seed=seed) for i in (0, 1)]
        gallery.coords[spec] = [p[0] for p in projected]
        gallery.explained[spec] = [p[1] for p in projected]
    sentences, codes = np.unique(words["sentence_id"].to_numpy(), return_inverse=True)
    n_blocks = min(JACKKNIFE_BLOCKS, len(sentences))
    block = (np.random.default_rng(seed).permutation(len(sentences)) % n_blocks)[codes]
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1:]]
    index = [(specs.index(a), specs.index(b)) for a, b in pairs]
    out = []
    for control in CONTROLS:
        keep = (np.arange(len(words)) if control == "none"
                else np.flatnonzero(words["word_index"].to_numpy() > 0))
        left_out = (block[keep][None, :] != np.arange(n_blocks)[:, None]).astype(np.float64)
        for layer in (0, 1):
            arrays = [layers[(spec, layer)][keep] for spec in specs]
            matrix, reps = similarity.gram_cka(arrays, index, counts=left_out)
            for col, (i, j) in enumerate(index):
                value = matrix[i, j]
                lo, hi = jackknife_interval(reps[:, col], value)
                out.append({"model_a": specs[i], "model_b": specs[j], "layer": layer,
                            "control": control, "cka": float(value), "cka_lo": lo,
                            "cka_hi": hi, "n_words": len(keep)})
    columns = ["model_a", "model_b", "layer", "control", "cka", "cka_lo", "cka_hi", "n_words"]
    return pd.DataFrame(out, columns=columns), gallery


_LAYER_NAMES = {0: "layer 0 (the embedding output)", 1: "the first block (layer 1)"}


def _cka_claims(cka: pd.DataFrame, kinds: Mapping[str, str]) -> list[Claim]:
    """Per model, layer and control: the largest CKA with any other model, below 0.5."""
    out = []
    for spec, kind in kinds.items():
        for control in CONTROLS if kind == "decoder" else CONTROLS[:1]:
            for layer in (0, 1):
                sel = cka[(cka["layer"] == layer) & (cka["control"] == control)
                          & ((cka["model_a"] == spec) | (cka["model_b"] == spec))]
                if sel.empty:
                    continue
                value, lo, hi, at = extreme_over_layers(sel["cka"], sel["cka_lo"],
                                                        sel["cka_hi"], which="max")
                pair = sel.iloc[at]
                other = pair["model_b"] if pair["model_a"] == spec else pair["model_a"]
                out.append(Claim(
                    seed="000", model=spec, control=control, value=value, ci_low=lo,
                    ci_high=hi, threshold=CKA_DIFFERENT, direction="below",
                    claim=f"{_LAYER_NAMES[layer]} is vastly different from every other "
                          f"model's",
                    statistic=f"largest linear CKA of layer {layer} with another model's, "
                              f"same words (interval: [largest lower, largest upper bound] of "
                              f"the pairs' jackknife intervals over sentences)",
                    rule=f"CKA below {CKA_DIFFERENT}: less than half of the words' centred "
                         "similarity structure shared (CKA is 1 for spaces equal up to rotation "
                         "and scale)",
                    published=_PUBLISHED_CKA, figure=FIGURES["cka"],
                    evidence=f"closest: {other} ({value:.2f}); CKA with the others "
                             f"{span(sel['cka'].min(), sel['cka'].max())}"))
    return out


def _published_anisotropy() -> str:
    """Seed 000's citation of Ethayarajh (2019), with his released baselines (layers 1-12)."""
    means = {name: released.load_ethayarajh2019(m)["layers"].query("layer >= 1")[
        "baseline_cosine"].mean() for name, m in (("BERT", "bert"), ("GPT-2", "gpt2"))}
    return ("'BERT and GPT-2 are extremely anisotropic' (citing Ethayarajh 2019); his released "
            "mean cosine of random words, mean over layers 1-12: "
            + ", ".join(f"{k} {v:.2f}" for k, v in means.items()))


def _anisotropy_claims(table: pd.DataFrame, reps: Mapping[str, np.ndarray], spec: str,
                       published: str) -> list[Claim]:
    """Mean baseline over layers 1..L above 0.1, per control (joint sentence bootstrap); on
    standardised dimensions too, as a control."""
    out = []
    for control, rep in reps.items():
        plain = next(c for c in table["control"].unique()
                     if control in (c, standardised_control(c)))
        column, digits = (("baseline_cosine", ".2f") if control == plain
                          else ("baseline_cosine_standardised", ".3f"))
        part = table[(table["control"] == plain) & (table["layer"] >= 1)]
        value = float(part[column].mean())
        lo, hi = percentile_interval(rep[1:].mean(axis=0), value)
        top = part.loc[part[column].idxmax()]
        out.append(Claim(
            seed="000", model=spec, control=control, value=value, ci_low=lo, ci_high=hi,
            threshold=EXTREME_ANISOTROPY, direction="above",
            claim="the word vectors are extremely anisotropic",
            statistic="mean over layers 1 to L of the mean cosine of words from different "
                      "sentences (exact; sentence bootstrap)",
            rule=f"above {EXTREME_ANISOTROPY}: the seed cites Ethayarajh (2019), whose criterion "
                 "is a mean cosine of random words well above the isotropic 0 (seed 001's rule: "
                 "0.1). His released means over layers 1-12, BERT 0.40 and GPT-2 0.65, failed "
                 "the earlier level of 0.5",
            published=published, figure=FIGURES["anisotropy"],
            evidence=f"layer {int(part['layer'].min())}-{int(part['layer'].max())}: "
                     f"{span(part[column].min(), part[column].max(), digits)}; "
                     f"largest at layer {int(top['layer'])}"))
    return out


def fingerprint_summary(layers: pd.DataFrame, embeddings: pd.DataFrame) -> pd.DataFrame:
    """One row per model and control: the fingerprint in a few numbers.

    ``I(W)``; the baseline at layer 0 and its largest value over layers 1..L; the layers that
    split (silhouette at least 0.5); the largest first-word norm ratio; the mean adjusted
    SelfSim and IntraSim over layers 1..L; the largest top-dimension variance share.
    """
    rows = []
    for (model, control), part in layers.groupby(["model", "control"], sort=False):
        upper = part[part["layer"] >= 1]
        w = embeddings.set_index("model").loc[model]
        rows.append({
            "model": model, "control": control, "I(W)": w["isotropy"],
            "baseline, layer 0": part.loc[part["layer"] == 0, "baseline_cosine"].iloc[0],
            "baseline, largest": upper["baseline_cosine"].max(),
            "layers that split": f"{int(part['split'].sum())} of {len(part)}",
            "first-word norm ratio, largest": part["first_word_norm_ratio"].max(),
            "SelfSim adj., mean": upper["selfsim_adj"].mean(),
            "IntraSim adj., mean": upper["intrasim_adj"].mean(),
            "top-dimension share, largest": part["top_dim_share"].max(),
        })
    return pd.DataFrame(rows)


def fingerprint_long(layers: pd.DataFrame, keys: list[str] | None = None) -> pd.DataFrame:
    """The per-layer table long, for small multiples: one row per model, layer, control and
    measure, with ``value``, ``lo`` and ``hi`` (the value itself where a measure has no
    interval) and ``measure`` named as in :data:`FINGERPRINT`."""
    frames = []
    for key in keys or list(FINGERPRINT):
        lo, hi = (f"{key}_{end}" if f"{key}_{end}" in layers else key for end in ("lo", "hi"))
        frames.append(pd.DataFrame({
            "model": layers["model"], "layer": layers["layer"], "depth": layers["depth"],
            "control": layers["control"], "measure": FINGERPRINT[key],
            "value": layers[key].astype(float), "lo": layers[lo].astype(float),
            "hi": layers[hi].astype(float)}))
    return pd.concat(frames, ignore_index=True).dropna(subset=["value"])


def _dominant_dimension_sentence(layers: pd.DataFrame) -> str:
    """Which models' first block has one dimension holding most of the variance.

    Linear CKA, like PCA, weighs directions by their variance: where one dimension holds most
    of it, both mostly compare that dimension.
    """
    first = layers[(layers["layer"] == 1) & (layers["control"] == "none")]
    big = first[first["top_dim_share"] > 0.5]
    if big.empty:
        return ("In no model does one dimension hold most of the first block's variance, so "
                "CKA and the PCA views weigh many directions.")
    parts = [f"{r.model} ({r.top_dim_share:.0%})" for r in big.itertuples()]
    return (f"One dimension holds most of the first block's variance in {', '.join(parts)}: "
            "linear CKA and the PCA views, which weigh directions by their variance, compare "
            "mostly that dimension there.")


def _standardised_sentence(layers: pd.DataFrame) -> str:
    """The baseline over layers 1-L on standardised dimensions beside the raw one: near 0 by
    construction, so the gap is what a common offset and the per-dimension scales carry."""
    upper = layers[(layers["layer"] >= 1) & (layers["control"] == "none")]
    std, raw = upper["baseline_cosine_standardised"], upper["baseline_cosine"]
    means = upper.groupby("model", sort=False)[["baseline_cosine",
                                                "baseline_cosine_standardised"]].mean()
    carried = [f"{m} {r.baseline_cosine - r.baseline_cosine_standardised:.3f} of "
               f"{r.baseline_cosine:.3f}" for m, r in means.iterrows()]
    return (f"On standardised dimensions the anisotropy baseline of layers 1-L is "
            f"{span(std.min(), std.max(), '.3f')} (raw: {span(raw.min(), raw.max())}). "
            "Standardising centres every dimension, so this baseline is near 0 by construction "
            "and the claim's rows under that control are shown, not tests; the gap is what a "
            "common offset and the per-dimension scales carry (mean over layers 1-L, of the "
            f"raw baseline): {'; '.join(carried)}.")


def _cka_sentence(cka: pd.DataFrame) -> str:
    parts = []
    for layer in (0, 1):
        sel = cka[(cka["layer"] == layer) & (cka["control"] == "none")]
        if len(sel):
            parts.append(f"{_LAYER_NAMES[layer]} {span(sel['cka'].min(), sel['cka'].max())}")
    if not parts:
        return "With a single model there is no pair of models to compare."
    return f"Linear CKA between the models, same words: {'; '.join(parts)}."


@with_blas_threads
def analyse(stores: Mapping[str, Store], *, facts: Mapping[str, Mapping[str, Any]] | None = None,
            seed: int = 0, n_words: int = 2000, point_budget: int = 1000, n_boot: int = 1000,
            w_boot: int = 200, min_contexts: int = 5, n_intra_sentences: int = 500,
            null_stores: Mapping[str, Store] | None = None) -> ZooResult:
    """Every model's first-layer gallery, per-layer fingerprint, facts and seed 000's claims.

    Parameters
    ----------
    stores : mapping of model spec -> :class:`Store`
        The same corpus for every model.
    facts : mapping of model spec -> dict, optional
        Each model's :func:`model_facts` (facts and I(W)); default: computed here, loading each
        model once.
    seed : int
        Seeds the word samples, the clusterings and every bootstrap.
    n_words : int
        Words (the same in every layer of a model) for the cluster split and the top-dimension
        share; the other measures use every stored word.
    point_budget : int
        Words of the gallery and of the cross-model CKA (the same words for every model).
    n_boot : int
        Sentence-bootstrap replicates (the fingerprint's intervals and the anisotropy claim).
    w_boot : int
        Bootstrap replicates of I(W) (over the rows of W).
    min_contexts, n_intra_sentences : int
        SelfSim's eligible words (at least this many sentences) and IntraSim's sentences.
    null_stores : mapping of model spec -> :class:`Store`, optional
        The models' untrained twins on the same corpus (:func:`.nulls.null_stores`): every
        claim is also computed on them with the same parameters, and each row carries its
        twin's (:func:`.nulls.with_nulls`).

    Raises
    ------
    UsageError
        A parameter that is not a whole number in its range (:class:`ZooParams`).

    Returns
    -------
    ZooResult
        ``tables``: ``layers`` (one row per model, layer and control: :func:`layer_fingerprint`'s
        columns and ``first_word_norm_ratio``), ``cka`` (model pairs at layer 0 and 1, per
        control), ``models`` (:func:`facts_table`), ``embeddings`` (I(W) per model), ``summary``
        (:func:`fingerprint_summary`); ``claims``; ``sentences``; ``gallery``.
    """
    p = ZooParams(seed=seed, n_words=n_words, point_budget=point_budget, n_boot=n_boot,
                  w_boot=w_boot, min_contexts=min_contexts, n_intra_sentences=n_intra_sentences)
    facts = dict(facts) if facts is not None else {
        spec: model_facts(spec, n_boot=p.w_boot, seed=p.seed) for spec in stores}
    kinds = {spec: str(store.meta.get("model", {}).get("kind", ""))
             for spec, store in stores.items()}
    published = _published_anisotropy()
    frames, claims = [], []
    for spec, store in stores.items():
        table, reps = _model_pass(store, p)
        table.insert(0, "model", spec)
        frames.append(table)
        claims += _anisotropy_claims(table, reps, spec, published)
    layers = pd.concat(frames, ignore_index=True)
    cka, gallery = _first_layers(stores, common_rows(stores), p.point_budget, p.seed)
    claims = _cka_claims(cka, kinds) + claims
    embeddings = pd.DataFrame([{"model": spec, **{k: facts[spec][k] for k in (
        "w_rows", "w_width", "isotropy", "isotropy_lo", "isotropy_hi", "w_mean_cosine")}}
        for spec in stores])
    frame = standardised_baseline_rows(
        calibration.annotate(claims_frame(claims), calibration.store_facts(stores.values())),
        ["the word vectors are extremely anisotropic"])
    if null_stores:
        frame = with_nulls(frame, analyse(
            null_stores, seed=seed, n_words=n_words, point_budget=point_budget, n_boot=n_boot,
            w_boot=w_boot, min_contexts=min_contexts, n_intra_sentences=n_intra_sentences).claims)
    return ZooResult(
        tables={"layers": layers, "cka": cka, "models": facts_table(facts),
                "embeddings": embeddings, "summary": fingerprint_summary(layers, embeddings)},
        claims=frame, sentences=[_cka_sentence(cka), _dominant_dimension_sentence(layers),
                                 _standardised_sentence(layers), *claim_sentences(frame, kinds)],
        gallery=gallery)
