"""Drift of embedding matrices and hidden states: the "Drift and centering" chapter (seed 004).

Biš, Podkorytov and Liu (2021), *Too Much in Common* (NAACL; seed 004), argue that the rows of a
language model's input embedding matrix W drift along a common direction -- every training step
pushes all non-target embeddings the same way ("common enemies") and rare tokens are pushed
most -- so that W looks like a narrow cone only because it is shifted; centring restores an
almost isotropic shape and improves word similarity. :mod:`lmgeometry.measures.isotropy` and its
neighbours (``centering``, ``mean_cosines``, ``shift``, ``spectra``) have the measures; this
module applies them.

:func:`analyse` is the entry point: the models' W (loaded with their tokenizers, one at a
time, by :func:`embedding_drift`) and the hidden-state stores of a corpus in, every table of
the chapter and seed 004's claims out. Its parts:

* token frequencies of a reference corpus tokenised with each model's own tokenizer
  (:func:`token_counts`, :func:`frequency_ranks`, :func:`unseen_tokens`, :func:`zipf_curve`,
  :func:`coverage`, :func:`word_counts`) for the Fig. 3 and appendix-B analogues;
* :func:`rare_token_table`: rare-token cosines by frequency (or vocabulary-id) bin, with
  intervals from a bootstrap over tokens and a Spearman trend over the bins;
* :func:`word_similarity`: Tables 2-3 on single-token benchmark pairs, with paired bootstrap
  intervals of each post-processing's change;
* :func:`hidden_state_layers`: the same isotropy measures on the hidden states of every layer,
  under each control (a decoder's first word excluded), with intervals over sentences;
* :func:`drift_claims`, :func:`hidden_claims`: seed 004's claims as :class:`Claim` records.

Its helpers live in :mod:`~lmgeometry.chapters.drift.tokens`,
:mod:`~lmgeometry.chapters.drift.matrix`, :mod:`~lmgeometry.chapters.drift.words` and
:mod:`~lmgeometry.chapters.drift.claims`.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import (
    ChapterResult,
    check_wholes,
    control_rows,
    controls_for,
    per_layer,
    with_blas_threads,
)
from lmgeometry.chapters.drift.claims import drift_claims, hidden_claims
from lmgeometry.chapters.drift.matrix import norm_histograms, rare_token_table
from lmgeometry.chapters.drift.tokens import coverage, token_counts, word_counts, zipf_curve
from lmgeometry.chapters.drift.words import word_similarity
from lmgeometry.chapters.nulls import with_nulls
from lmgeometry.claims.record import claims_frame, first_token_flags
from lmgeometry.errors import UsageError
from lmgeometry.io import models
from lmgeometry.measures import isotropy, similarity
from lmgeometry.measures.shift import shift_cosine, shift_cosine_replicates
from lmgeometry.measures.spectra import norm_distribution, spectral_views, toy_sphere_shift
from lmgeometry.measures.stats import bootstrap_spearman, percentile_interval
from lmgeometry.report.prose import number

__all__ = [
    "DriftParams",
    "analyse",
    "embedding_drift",
    "hidden_check",
    "hidden_state_layers",
    "isotropy_long",
    "w_tables",
    "wordsim_table",
]


@dataclass(frozen=True)
class DriftParams:
    """Every parameter of chapter 4's analysis (the keyword arguments of
    :func:`analyse`, documented there), checked once before any model is loaded."""

    seed: int = 0
    point_budget: int = 2000
    hidden_rows: int | None = 4000
    n_bins: int = 30
    n_boot: int = 1000
    device: str | None = "cpu"

    def __post_init__(self) -> None:
        check_wholes(self, {"seed": 0, "point_budget": 1, "hidden_rows": 1, "n_bins": 1,
                            "n_boot": 0}, optional=["hidden_rows"])
        if self.device is not None and not isinstance(self.device, str):
            raise UsageError(f"device={self.device!r}: pass a device name such as 'cpu' or "
                             "'cuda', or None")


def embedding_drift(
    spec: str,
    texts: Sequence[str],
    *,
    point_budget: int = 2000,
    n_bins: int = 30,
    n_boot: int = 1000,
    seed: int = 0,
    device: str | None = "cpu",
) -> dict[str, Any]:
    """Load one model and compute every W-level table of the chapter (Biš et al. 2021).

    W = :func:`models.input_embeddings`; token counts of ``texts`` with the model's tokenizer;
    then :func:`w_tables`. The model is dropped before returning.

    Returns
    -------
    dict
        ``facts`` (the model's facts and caveats) and the tables of :func:`w_tables`.
    """
    loaded = models.load_model(spec, device=device)
    W = models.input_embeddings(loaded)
    counts = _shared_counts(loaded.tokenizer, texts, W.shape[0])
    out = w_tables(W, loaded.tokenizer, counts, point_budget=point_budget, n_bins=n_bins,
                   n_boot=n_boot, seed=seed)
    out["facts"] = loaded.facts() | {"caveats": "; ".join(loaded.caveats) or "none"}
    return out


#: Token counts made in this process, by tokenizer, text and length (:func:`_shared_counts`).
_COUNTS: dict[tuple[str, int, int, int], np.ndarray] = {}


def _shared_counts(tokenizer: Any, texts: Sequence[str], n_rows: int) -> np.ndarray:
    """:func:`token_counts`, made once per tokenizer and text in a process: a model and its
    untrained twin (the same tokenizer) share them. Keyed by the sha256 of the tokenizer's
    serialised form, so two tokenizers that differ in any way never share counts."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return token_counts(tokenizer, texts, n_rows)
    key = (hashlib.sha256(backend.to_str().encode()).hexdigest(), n_rows, len(texts),
           hash(tuple(texts)))
    if key not in _COUNTS:
        if len(_COUNTS) >= 8:
            _COUNTS.pop(next(iter(_COUNTS)))
        _COUNTS[key] = token_counts(tokenizer, texts, n_rows)
    return _COUNTS[key].copy()


def w_tables(W: np.ndarray, tokenizer: Any, counts: np.ndarray, *, point_budget: int = 2000,
             n_bins: int = 30, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Every number the chapter shows for one embedding matrix W, with its intervals.

    * ``statistics``: :func:`isotropy.embedding_statistics` (Table 1; intervals for I(W),
      I(W_c) and the gap centring closes), the mean cosine of the rows with its interval,
      and ``norm_count_spearman`` (rank correlation of row norm and corpus count over the
      tokens seen, Schakel & Wilson 2015) with its interval;
    * ``spectra``, ``projection`` (a seeded sample of ``point_budget`` rows on the first two
      singular vectors, before and after centring; Fig. 1), ``norms`` (Figs. 5-6);
    * ``rare``, ``rare_trends`` (:func:`rare_token_table`, Fig. 3);
    * ``wordsim``, ``wordsim_change`` (:func:`word_similarity`, Tables 2-3);
    * ``zipf``, ``coverage`` (appendix B, Sec. 3).

    Every bootstrap draws from one generator seeded with ``seed``.
    """
    gen = np.random.default_rng(seed)
    stats_ = isotropy.embedding_statistics(W, n_boot=n_boot, rng=gen)
    rare, rare_trends, mean_cos = rare_token_table(W, counts, tokenizer, n_bins, n_boot=n_boot,
                                                   rng=gen)
    lo, hi = percentile_interval(mean_cos[1:], mean_cos[0]) if n_boot else (math.nan,) * 2
    stats_.update(mean_cosine=float(mean_cos[0]), mean_cosine_lo=lo, mean_cosine_hi=hi)
    norms = norm_distribution(W)
    seen = counts > 0
    rho, lo, hi = bootstrap_spearman(norms[seen], counts[seen], n_boot, gen)
    stats_.update(norm_count_spearman=rho, norm_count_spearman_lo=lo,
                  norm_count_spearman_hi=hi)
    wordsim, change = word_similarity(W, tokenizer, n_boot=n_boot, rng=gen)
    rows = similarity.subsample(W.shape[0], point_budget, seed)
    views = spectral_views(W, rows=rows)
    k = np.arange(1, W.shape[1] + 1)
    spectra = pd.concat([pd.DataFrame({"variant": v, "component": k, "singular_value": views[key]})
                         for v, key in (("raw", "singular_values"),
                                        ("centered", "singular_values_centered"))],
                        ignore_index=True)
    n_vocab = len(tokenizer)
    tokens = tokenizer.convert_ids_to_tokens([int(i) if i < n_vocab else 0 for i in rows])
    projection = pd.DataFrame({
        "token_id": rows,
        "token": [t if i < n_vocab else "" for t, i in zip(tokens, rows, strict=True)],
        "log10_count": np.log10(counts[rows] + 1),
        "x": views["projection"][:, 0], "y": views["projection"][:, 1],
        "x_centered": views["projection_centered"][:, 0],
        "y_centered": views["projection_centered"][:, 1],
    })
    hist = norm_histograms({"raw": norms, "centered": norm_distribution(W, centered=True)})
    cover = coverage(counts)
    return {
        "statistics": stats_, "spectra": spectra, "projection": projection,
        "norms": hist.rename(columns={"label": "variant"}), "rare": rare,
        "rare_trends": rare_trends, "wordsim": wordsim, "wordsim_change": change,
        "zipf": zipf_curve(counts),
        "coverage": {"tokens_30pct": cover[0.3], "tokens_50pct": cover[0.5],
                     "tokens_98pct": cover[0.98], "seen": cover["seen"], "total": cover["total"]},
    }


def hidden_state_layers(store: Store, n_rows: int | None = 4000, seed: int = 0,
                        n_boot: int = 1000, top_share: float = 0.01) -> dict[str, pd.DataFrame]:
    """The Table 1 measures on the hidden states of every layer, each layer read once.

    A seeded sample of ``n_rows`` word rows (the same in every layer) goes through
    :func:`isotropy.embedding_statistics` (I(X) raw and after subtracting the layer's mean,
    in log space since it underflows for large norms; IsoScore, translation invariant; the
    mean cosine before and after centring; norms) and :func:`shift.shift_cosine` (the mean
    cosine that the layer's mean vector alone predicts, and the gap to the measured one), under
    every control of the store (:func:`controls_for`: a decoder's rows again without each
    sentence's first word). The mean cosine, the prediction and the gap get 95% intervals from
    a bootstrap over sentences (:func:`shift.shift_cosine_replicates`).

    Per layer, whatever the control: ``first_word_norm_ratio`` (median norm of the sampled
    first words over that of the other words: a decoder's attention sink, Xiao et al. 2023;
    Sun et al. 2024) and, among the other words, the one most common among the
    ``top_share`` longest rows (``longest_word``, its ``longest_share`` of them and its median
    norm over the rest, ``longest_norm_ratio``).

    Returns
    -------
    dict
        ``hidden``: one row per (layer, control); ``layers``: one row per layer.
    """
    rows = similarity.subsample(store.n_words, store.n_words if n_rows is None else n_rows, seed)
    words = store.words.iloc[rows]
    first = words["word_index"].to_numpy() == 0
    sentence = words["sentence_id"].to_numpy()
    text = words["text"].to_numpy()
    masks = {c: np.isin(rows, control_rows(store, c)) for c in controls_for(store)}
    gen = np.random.default_rng(seed)
    hidden, layers = [], []
    for layer in range(store.n_layers):
        X = store.layer(layer, rows, dtype=np.float64)
        layers.append({"layer": layer} | _layer_facts(X, first, text, top_share))
        for control, mask in masks.items():
            hidden.append({"layer": layer, "control": control}
                          | _control_statistics(X[mask], sentence[mask], n_boot, gen))
    return {"hidden": pd.DataFrame(hidden), "layers": pd.DataFrame(layers)}


def _layer_facts(X: np.ndarray, first: np.ndarray, text: np.ndarray, top_share: float
                 ) -> dict[str, Any]:
    """First-word norm ratio, and the word that dominates the longest other rows."""
    rest, words = X[~first], text[~first]
    k = max(1, math.ceil(top_share * len(rest)))
    top = np.argsort(-np.linalg.norm(rest, axis=1), kind="stable")[:k]
    word, n_top = Counter(words[top].tolist()).most_common(1)[0]
    return {"first_word_norm_ratio": similarity.norm_ratio(X, first),
            "n_longest": k, "longest_word": str(word), "longest_share": n_top / k,
            "longest_norm_ratio": similarity.norm_ratio(rest, words == word)}


def _control_statistics(X: np.ndarray, sentence: np.ndarray, n_boot: int,
                        gen: np.random.Generator) -> dict[str, float]:
    """The hidden-state measures of one layer under one control, with intervals."""
    st = isotropy.embedding_statistics(X)
    shift = shift_cosine(X)
    reps = shift_cosine_replicates(X, sentence, n_boot, gen)
    out = {"n_rows": len(X), "width": X.shape[1]}
    out |= {k: st[k] for k in ("log_isotropy_raw", "log_isotropy_centered", "isoscore",
                               "mean_cosine_centered", "mean_norm", "mean_vector_norm",
                               "mean_vector_ratio")}
    for key in ("mean_cosine", "shift_prediction", "shift_residual"):
        out[key] = shift[key]
        out[f"{key}_lo"], out[f"{key}_hi"] = percentile_interval(reps[key], shift[key])
    out["shift_share"] = shift["shift_share"]
    return out


#: Shifts of the toy sphere of Fig. 2.
TOY_SHIFTS: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)


def _toy_tables(seed: int) -> dict[str, pd.DataFrame]:
    """Fig. 2: 500 points on a unit sphere in 3-D moved along the diagonal, and their spectra."""
    points, values = [], []
    for s in TOY_SHIFTS:
        P, sv = toy_sphere_shift(500, 3, s, seed=seed)
        points.append(pd.DataFrame({"shift": s, "x": P[:, 0], "y": P[:, 1], "z": P[:, 2]}))
        values += [{"shift": s, "singular_value": f"sigma_{i + 1}", "value": v}
                   for i, v in enumerate(sv)]
    return {"toy_points": pd.concat(points, ignore_index=True),
            "toy_singular_values": pd.DataFrame(values)}


def _w_frames(runs: Mapping[str, Mapping[str, Any]], texts: Sequence[str]
              ) -> dict[str, pd.DataFrame]:
    """The W-level tables of every model, each with a leading ``model`` column."""
    out: dict[str, pd.DataFrame] = {}
    for name in ("spectra", "projection", "norms", "rare", "rare_trends", "wordsim",
                 "wordsim_change", "zipf"):
        out[name] = pd.concat([r[name].assign(model=m) for m, r in runs.items()],
                              ignore_index=True)
        out[name] = out[name][["model"] + [c for c in out[name] if c != "model"]]
    words = zipf_curve(word_counts(texts)).assign(model="words (whitespace)")
    out["zipf"] = pd.concat([out["zipf"], words], ignore_index=True)
    for name, key in (("table1", "statistics"), ("coverage", "coverage"), ("models", "facts")):
        out[name] = pd.DataFrame([{"model": m} | dict(r[key]) for m, r in runs.items()])
    keep = ["model", "name", "kind", "n_layers", "hidden_size", "position_scheme", "caveats"]
    out["models"] = out["models"][[c for c in keep if c in out["models"]]]
    out["table1_reference"] = pd.DataFrame(
        [{"model": v["label"]} | {k: x for k, x in v.items() if k != "label"}
         for v in isotropy.BIS2021_TABLE1.values()])
    return out


def _sentences(tables: Mapping[str, pd.DataFrame], claims: pd.DataFrame) -> list[str]:
    """A few sentences on what this run shows, each read from the tables."""
    t1 = tables["table1"]
    iso = ", ".join(f"{r.model} {number(r.isotropy_raw)} -> {number(r.isotropy_centered)}"
                    for r in t1.itertuples())
    out = [f"I(W) before -> after centring: {iso}."]
    ch = tables["wordsim_change"]
    centred = ch[(ch["variant"] == "centered") & (ch["score"] == "dot")]
    if len(centred):
        parts = ", ".join(
            f"{r.model} {r.change_x100:+.1f} [{r.change_x100_lo:+.1f}, {r.change_x100_hi:+.1f}]"
            for r in centred.itertuples())
        out.append("Centring changes the inner-product word-similarity score (Pearson r x 100, "
                   f"mean over the benchmarks) by {parts} points.")
    eig = ", ".join(f"{r.model} {number(r.top_eigvec_mean_cosine)}" for r in t1.itertuples())
    out.append(f"|cos| between the top eigenvector of W^T W and the mean row: {eig}.")
    if len(centred) and "over_cosine_x100" in centred:
        parts = ", ".join(f"{r.model} {r.over_cosine_x100:+.1f} [{r.over_cosine_x100_lo:+.1f}, "
                          f"{r.over_cosine_x100_hi:+.1f}]" for r in centred.itertuples())
        out.append("Centring's change with the inner product minus its change with the cosine "
                   f"(points of Pearson r x 100): {parts}.")
    shift = claims[claims["claim"].str.startswith("beyond the paper")]
    decoders = shift[shift["control"] != "none"]["model"].unique()
    for m in decoders:
        rows = shift[shift["model"] == m].set_index("control")
        out.append(
            f"In {m} the largest gap between the measured mean cosine and the mean vector's "
            f"prediction is {number(rows.loc['none', 'value'])} over all words and "
            f"{number(rows.loc['first word excluded', 'value'])} without each sentence's first "
            "word.")
    return out


@with_blas_threads
def analyse(
    specs: Sequence[str],
    stores: Mapping[str, Store],
    texts: Sequence[str],
    *,
    seed: int = 0,
    point_budget: int = 2000,
    hidden_rows: int | None = 4000,
    n_bins: int = 30,
    n_boot: int = 1000,
    device: str | None = "cpu",
    null_stores: Mapping[str, Store] | None = None,
) -> ChapterResult:
    """Seed 004 on the models' embedding matrices W and, beyond it, on their hidden states.

    Parameters
    ----------
    specs : sequence of str
        Models whose W is analysed (loaded one at a time, :func:`embedding_drift`).
    stores : mapping
        Hidden-state stores of one corpus (e.g. ``mnli_polysemy``), by model.
    texts : sequence of str
        The frequency corpus (:func:`lmgeometry.io.corpus.frequency_texts`).
    seed : int
        Seeds every sample and bootstrap.
    point_budget : int
        Rows of W in the projection figure.
    hidden_rows : int or None
        Word rows sampled per store (the same in every layer; None: all).
    n_bins : int
        Frequency bins of the rare-token figure.
    n_boot : int
        Bootstrap replicates of every interval.
    device : str, optional
        Where the models are loaded.
    null_stores : mapping, optional
        The models' untrained twins' stores on the same corpus (:func:`.nulls.null_stores`):
        every claim is also computed on the twins (their W and hidden states) with the same
        parameters, and each row carries its twin's (:func:`.nulls.with_nulls`).

    Raises
    ------
    UsageError
        A parameter out of its range (:class:`DriftParams`), before any model is loaded.

    Returns
    -------
    ChapterResult
        Tables ``models``, ``table1`` (+ ``table1_reference``), ``coverage``, ``spectra``,
        ``projection``, ``norms``, ``rare``, ``rare_trends``, ``wordsim``,
        ``wordsim_change``, ``zipf``, ``toy_points``, ``toy_singular_values``, ``hidden``
        (model, layer, depth, control, ...), ``hidden_layers`` (model, layer, depth, ...);
        the claims of :func:`drift_claims` and :func:`hidden_claims`; a few sentences.
    """
    p = DriftParams(seed=seed, point_budget=point_budget, hidden_rows=hidden_rows,
                    n_bins=n_bins, n_boot=n_boot, device=device)
    runs = {spec: embedding_drift(spec, texts, point_budget=p.point_budget, n_bins=p.n_bins,
                                  n_boot=p.n_boot, seed=p.seed, device=p.device)
            for spec in specs}
    tables = _w_frames(runs, texts) | _toy_tables(p.seed)
    parts = {id(s): hidden_state_layers(s, p.hidden_rows, p.seed, p.n_boot)
             for s in stores.values()}
    for name, key in (("hidden", "hidden"), ("hidden_layers", "layers")):
        tables[name] = per_layer(stores.values(), lambda s, k=key: parts[id(s)][k])
    claims = [c for spec, r in runs.items()
              for c in drift_claims(spec, r["statistics"], r["rare_trends"],
                                    r["wordsim_change"])]
    facts = {spec: r["facts"] for spec, r in runs.items()} | calibration.store_facts(
        stores.values())
    frame = calibration.annotate(claims_frame(claims + hidden_claims(tables["hidden"])), facts)
    flip = first_token_flags(frame) & (frame["control"] != "none")
    frame.loc[flip, "evidence"] += "; verdict differs from all words: driven by the first word"
    if null_stores:
        frame = with_nulls(frame, analyse(list(null_stores), null_stores, texts, seed=seed,
                                          point_budget=point_budget, hidden_rows=hidden_rows,
                                          n_bins=n_bins, n_boot=n_boot, device=device).claims)
    return ChapterResult(tables=tables, claims=frame, sentences=_sentences(tables, frame))


def isotropy_long(table1: pd.DataFrame) -> pd.DataFrame:
    """The isotropy figure's points: ``table1`` once per measure (I(W), I(W_c), W's mean
    cosine) with ``measure``, ``value``, ``lo`` and ``hi`` added, measures in that order."""
    return pd.concat(
        [table1.assign(measure=label, value=table1[key], lo=table1[f"{key}_lo"],
                       hi=table1[f"{key}_hi"])
         for key, label in (("isotropy_raw", "I(W)"), ("isotropy_centered", "I(W_c)"),
                            ("mean_cosine", "mean cosine of W"))],
        ignore_index=True,
    )


def wordsim_table(wordsim: pd.DataFrame) -> pd.DataFrame:
    """Word similarity (Pearson r x 100): a row per (model, benchmark), a column per (score,
    variant), in their order in ``wordsim``."""
    return wordsim.pivot_table(index=["model", "benchmark"], columns=["score", "variant"],
                               values="pearson_x100", sort=False)


def hidden_check(hidden: pd.DataFrame) -> pd.DataFrame:
    """Per model and control (in their order in ``hidden``): its layers and whether the mean
    cosine exceeds 0.5 in any of them.

    Returns
    -------
    DataFrame
        ``model``, ``control``, ``layers``, ``above_half`` (bool).
    """
    rows = [{"model": spec, "control": control, "layers": len(part),
             "above_half": bool(part["mean_cosine"].max() > 0.5)}
            for (spec, control), part in hidden.groupby(["model", "control"], sort=False)]
    return pd.DataFrame(rows, columns=["model", "control", "layers", "above_half"])
