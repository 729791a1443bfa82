"""Chapter 3, context measures: the generated sentences and the check cell's numbers.

The sentences :func:`lmgeometry.chapters.context.analysis.analyse` returns, by topic
(:data:`TOPICS`: each claim's verdict by kind of model, the attention-sink layers, the
verdicts the first token drives, the standardised dimensions, the PC1 static vectors), the
page's lines on the run, on the static corpus and on the static budget curve
(:func:`run_sentence`, :func:`static_corpus_sentence`, :func:`budget_sentences`),
:func:`standardised_table` and :func:`summary`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.chapters.common import STANDARDISED, ChapterResult
from lmgeometry.chapters.context.claims import ANISOTROPY_CLAIMS, CLAIMS, corrected_claims
from lmgeometry.chapters.context.layers import STANDARDISED_PRESET
from lmgeometry.chapters.context.static import CENTRED_PC1, GLOVE, INPUT, MEAN, PC1
from lmgeometry.claims.record import CONTROLS
from lmgeometry.measures import stats
from lmgeometry.report import prose
from lmgeometry.report.claims import claim_sentences

__all__ = [
    "SINK_RATIO",
    "TOPICS",
    "budget_sentences",
    "fasttext_sentence",
    "run_sentence",
    "standardised_table",
    "static_corpus_sentence",
    "summary",
]


#: A layer whose first words have a median norm this many times the other words' is called
#: an attention-sink layer in the generated text (an order of magnitude).
SINK_RATIO = 10.0

#: The topics of the generated sentences (``ChapterResult.topics``), in the order the
#: sentences come: each claim's verdict by kind of model, the attention-sink layers, the
#: verdicts the first token drives, the standardised dimensions, the PC1 static vectors.
TOPICS: tuple[str, ...] = ("verdicts", "sink", "first token", "standardised", "static")


def _flip_sentences(claims: pd.DataFrame) -> list[str]:
    """Per decoder: the claims whose verdict changes when the first word is left out."""
    out = []
    for model, d in claims[claims["control"].isin(CONTROLS)].groupby("model", sort=False):
        if d["control"].nunique() < 2:
            continue
        wide = d.pivot_table(index=["claim", "statistic", "preset"], columns="control",
                             values="verdict", aggfunc="first", sort=False)
        wide = wide.dropna(subset=list(CONTROLS))  # a claim made under one control only
        flips = wide[wide["none"] != wide["first word excluded"]]
        if flips.empty:
            out.append(f"**{model}**: no verdict changes when each sentence's first word is "
                       f"left out ({len(wide)} claims).")
            continue
        items = [f"{claim} ({f'{preset} estimators' if preset else 'one estimator'}: "
                 f"{row['none']} -> {row['first word excluded']})"
                 for (claim, _, preset), row in flips.iterrows()]
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
    presets differ, :func:`corrected_claims`):
    :func:`lmgeometry.report.claims.claim_sentences`."""
    return claim_sentences(corrected_claims(claims[claims["control"] == "none"]), kinds)


def _best_line(pc1: pd.DataFrame) -> str:
    """``"layers 2-4 (the plateau of intervals overlapping the best), mean Spearman rho 0.70
    [0.67, 0.73] in layer 3"`` for one embedding's ``static_layers`` rows (mean, layers
    1-L)."""
    best = pc1.loc[pc1["rho"].idxmax()]
    return (f"{prose.layers_phrase(pc1.loc[pc1['plateau'], 'layer'])} (the plateau of "
            f"intervals overlapping the best), mean Spearman rho {best['rho']:.2f} "
            f"[{best['rho_lo']:.2f}, {best['rho_hi']:.2f}] in layer {int(best['layer'])}")


def _static_sentences(layers: pd.DataFrame) -> list[str]:
    """Per model (seed's protocol): the benchmarks its PC1 vectors were scored on, the best
    layers (plateau) and mean Spearman rho of the authors' PC1 vectors and of the centred PC1
    beside the baselines on the same items, and how far the authors' PC1 vectors are from
    the mean vectors of the same contexts. Only scored benchmarks are named."""
    out = []
    for model, m in layers[layers["control"] == "none"].groupby("model", sort=False):
        per = m[(m["benchmark"] != "mean") & (m["embedding"] == PC1)].drop_duplicates(
            "benchmark")
        mean = m[m["benchmark"] == "mean"]
        upper = mean[mean["layer"] > 0]
        pc1, centred = (upper[upper["embedding"] == e] for e in (PC1, CENTRED_PC1))
        if pc1.empty:
            continue
        scored = ", ".join(f"{b} ({n} of {t} items)" for b, n, t in
                           zip(per["benchmark"], per["items"], per["total"], strict=True))
        text = (f"**{model}**: PC1 static vectors scored on {scored}; the authors' PC1 "
                f"(uncentred, as Table 1) is best in {_best_line(pc1)}")
        if len(centred):
            text += f"; the centred PC1 in {_best_line(centred)}"
        names = {INPUT: "its layer-0 vectors", GLOVE: GLOVE}
        base = [f"{r['rho']:.2f} for {names[r['embedding']]}"
                for _, r in mean[mean["embedding"].isin(list(names))].iterrows()]
        text += f", against {', '.join(base)} on the same items." if base else "."
        means = upper[upper["embedding"] == MEAN].set_index("layer")["rho"]
        gap = (pc1.set_index("layer")["rho"] - means).dropna().abs()
        if len(gap):
            text += (f" The authors' PC1 vectors score within {gap.max():.3f} of the mean "
                     f"vectors of the same contexts in every layer (largest gap in layer "
                     f"{int(gap.idxmax())}).")
        out.append(text)
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
               kinds: Mapping[str, str]) -> dict[str, list[str]]:
    """The generated sentences by topic (:data:`TOPICS`, each present even when empty)."""
    static = tables.get("static_layers")
    said = {"verdicts": _kind_sentences(claims, kinds),
            "sink": _sink_sentences(tables["per_layer"]),
            "first token": _flip_sentences(claims),
            "standardised": _standardised_sentences(claims, tables["per_layer"]),
            "static": _static_sentences(static) if static is not None and len(static) else []}
    return {topic: said[topic] for topic in TOPICS}


def run_sentence(per_layer: pd.DataFrame, n_sentences: int, n_words: int) -> str:
    """The page's line on this run: its STS sentences and words, and the words eligible under
    each preset (seed's protocol): in at least 5 distinct sentences (``corrected``), with at
    least 5 occurrences (the authors' rule); one count where every model has the same, else
    one per model."""
    eligible = per_layer[per_layer["control"] == "none"].groupby(["preset", "model"])[
        "n_words"].max()

    def counts(preset: str) -> str:
        n = eligible[preset]
        if n.nunique() == 1:
            return f"{int(n.iloc[0]):,} words" + (" per model" if len(n) > 1 else "")
        return ", ".join(f"`{m}` {int(k):,}" for m, k in n.items())

    return (f"**This run:** {n_sentences:,} STS sentences, {n_words:,} words; "
            f"{counts('corrected')} in at least 5 distinct sentences (corrected estimators), "
            f"{counts('ethayarajh2019')} with at least 5 occurrences (the authors' rule).")


def budget_sentences(budget: pd.DataFrame) -> list[str]:
    """Per model, from the ``static_budget`` table: each PC1's (the authors', the centred) and
    the mean vectors' mean Spearman rho (95% interval) at the smallest and largest budget of
    PC1, the mean vectors' from one context, and each PC1's score at the largest budget as a
    share of the mean vectors'."""
    def at(rows: pd.DataFrame, k: int) -> str:
        r = rows.loc[rows["k"] == k].iloc[0]
        return f"{r['rho']:.2f} [{r['rho_lo']:.2f}, {r['rho_hi']:.2f}]"

    names = {PC1: "the authors' PC1", CENTRED_PC1: "the centred PC1"}
    out = []
    for model, m in budget.groupby("model", sort=False):
        mean = m[m["embedding"] == MEAN]
        pcs = {e: m[m["embedding"] == e] for e in names if (m["embedding"] == e).any()}
        ks = pd.concat(list(pcs.values()))["k"]
        a, b = int(ks.min()), int(ks.max())
        one = (f" ({at(mean, 1)} from a single context)" if (mean["k"] == 1).any() else "")
        top = mean.loc[mean["k"] == b, "rho"].iloc[0]
        goes = "; ".join(f"{names[e]} from {at(rows, a)} to {at(rows, b)}"
                         for e, rows in pcs.items())
        shares = " and ".join(
            f"{names[e]} {prose.pct(rows.loc[rows['k'] == b, 'rho'].iloc[0] / top)}"
            for e, rows in pcs.items())
        out.append(f"**{model}** (layer {int(m['layer'].iloc[0])}, {int(m['n_items'].iloc[0]):,} "
                   f"items): from {a} to {b} contexts per word, the mean Spearman rho goes: "
                   f"{goes}; the mean vectors from {at(mean, a)} to {at(mean, b)}{one}. At "
                   f"{b} contexts, {shares} of what the mean vectors score.")
    return out


def fasttext_sentence(wins: pd.DataFrame) -> str:
    """What seed 001's own Table 1 says of "outperform GloVe and FastText on most benchmarks",
    from :func:`lmgeometry.chapters.calibration.table1_wins`: each seed model's wins against
    each static baseline over the table's benchmarks, whether winning on most of them (a
    majority) gives the seed's verdict, and whether a mean gain over the four similarity
    benchmarks does."""
    n = int(wins["benchmarks"].iloc[0])
    threshold = n // 2 + 1
    counts = "; ".join(
        f"{r.model} ({r.row.split(', ')[-1].lower()}) {r.wins_glove} of {n} against GloVe and "
        f"{r.wins_fasttext} against FastText" for r in wins.itertuples())
    count_ok = all(((r.wins_glove >= threshold) and (r.wins_fasttext >= threshold))
                   == (r.reported == "holds") for r in wins.itertuples())
    mean_bad = [f"{r.model} ({r.gain_fasttext:+.3f})" for r in wins.itertuples()
                if (r.gain_fasttext > 0) != (r.reported == "holds")]
    text = (f"On the paper's own Table 1, the best listed layer of each model (by its mean over "
            f"SimLex-999, MEN, WS353 and RW) beats the static baselines on: {counts}. A rule "
            f"of winning on at least {threshold} of the {n} benchmarks against each baseline "
            f"{'gives' if count_ok else 'does not give'} the seed's verdict for every model")
    if mean_bad:
        text += (", while a mean gain over FastText on the four similarity benchmarks "
                 f"contradicts it for {', '.join(mean_bad)}")
    return text + (". FastText vectors are not in this book's data, so the FastText half of "
                   "the claim is not tested on this run's models: it stays the seed's evidence "
                   "only, and this run's claim rows compare with GloVe 6B-50d (a smaller GloVe "
                   "than the paper's) by the mean gain on the four similarity benchmarks.")


def static_corpus_sentence(info: Mapping[str, Any]) -> str:
    """The page's line on the benchmark-context corpus, from its ``info``
    (:func:`lmgeometry.io.corpus.benchmark_contexts`)."""
    return (
        f"{info['contexts']} contexts ({info['contexts_from'].get('brown', 0)} from Brown, "
        f"{info['contexts_from'].get('sts', 0)} from STS; {info['contexts_trimmed']} trimmed "
        f"from longer sentences, at most {info['context_words_max']} words, "
        f"{info['context_words_mean']:.1f} on average) for {info['target_words']} benchmark "
        f"words; {info['plural_target_rows']} of the target occurrences are plural forms. "
        "Share of each benchmark's items whose words got at least 5 contexts:")


def summary(result: ChapterResult) -> pd.DataFrame:
    """Coarse, stable numbers for the chapter's check cell: per model and control, the
    number of layers and how many claims hold, are inconclusive or do not hold."""
    claims = result.claims
    counts = claims.groupby(["model", "control", "verdict"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(stats.VERDICTS), fill_value=0)
    layers = result.tables["per_layer"].groupby(["model", "control"])["layer"].max() + 1
    return counts.assign(layers=layers.reindex(counts.index)).reset_index()
