# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Context measures: how contextual are the representations?
#
# Ethayarajh (2019, seed 001) asked how much a word's vector depends on its context, with
# three measures computed on the words of STS sentences, per layer:
#
# * **self-similarity** of a word $w$ with occurrences $x_1, \dots, x_n$ (in $n$ different
#   sentences): the mean cosine over pairs of its occurrences,
#   $\mathrm{SelfSim}(w) = \frac{1}{n^2 - n}\sum_i \sum_{j \ne i} \cos(x_i, x_j)$;
# * **intra-sentence similarity** of a sentence $s$ with word vectors $x_1, \dots, x_m$ and
#   mean $\bar x$: $\mathrm{IntraSim}(s) = \frac{1}{m}\sum_i \cos(x_i, \bar x)$;
# * **maximum explainable variance** of a word: the share of the variance of its occurrence
#   matrix along its first principal component,
#   $\mathrm{MEV}(w) = \sigma_1^2 / \sum_i \sigma_i^2$.
#
# Because the vector spaces are **anisotropic** (two random words already have a high
# cosine), each measure is *adjusted* by a baseline: the mean cosine of random word pairs from
# different sentences, $b_{\cos} = \mathbb{E}_{x, y \in O,\, s(x) \ne s(y)} \cos(x, y)$ over the
# occurrences $O$ of the layer, and the MEV $b_{\mathrm{MEV}}$ of random occurrences; the
# adjusted values are $\mathrm{SelfSim}(w) - b_{\cos}$, $\mathrm{IntraSim}(s) - b_{\cos}$ and
# $\mathrm{MEV}(w) - b_{\mathrm{MEV}}$. The paper found that anisotropy
# grows with depth (extremely so in GPT-2's last layer), that upper layers are more
# context-specific (lower adjusted self-similarity), that stopwords are among the least
# self-similar words, that intra-sentence similarity behaves differently in ELMo, BERT and
# GPT-2, and that on average less than 5% of a word's variance is explained by a static
# vector.
#
# **Two sets of estimators.** The authors' code (kawine/contextual) differs from the paper in
# ways that change the numbers: self-similarity over at most 1,000 random ordered pairs with
# same-sentence pairs allowed; word MEV from centred PCA but the MEV baseline from an
# uncentred truncated SVD (in the authors' published `gpt2/embedding_space_stats.json` that
# baseline, "variance explained for random words", is 0.969-0.998 in GPT-2's layers 2-11,
# which makes every adjusted MEV there negative); baseline pairs drawn
# with replacement; every value rounded to 3 decimals. `lmgeometry.measures.contextual` makes each
# choice an argument and offers two presets: `ethayarajh2019` (the authors' code) and `corrected`
# (exact means over all pairs of *different* sentences, centred MEV throughout with a
# size-matched random baseline, IntraSim adjusted by length-matched random pseudo-sentences).
# Every figure shows both.
#
# Seed 000 added token-level versions: each token's mean cosine to the other tokens of its
# sentence, by position and by part of speech, and each token's nearest neighbours.

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_sentences = 1000
seed = 0
n_boot = 1000
neighbour_queries = 3000
static_sentences = 2000
static_web_layers = "paper"
results_path = "03_context_measures.results.json"

# %%
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import context_measures
from lmgeometry.io import corpus, data
from lmgeometry.report import plots, results
from lmgeometry.report.figures import show

sts = corpus.sts(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, sts) for spec in models}
per_layer = pd.concat(
    [
        context_measures.layer_measures(acts, seed=seed, n_boot=n_boot, label=spec).assign(
            model=spec
        )
        for spec, acts in stores.items()
    ],
    ignore_index=True,
)
n_eligible = per_layer.groupby("model")["n_words"].max().to_dict()
print(
    f"{len(sts.sentences)} STS sentences, {len(sts.words)} words; words in at least 5 sentences: "
    + ", ".join(f"{m}: {n}" for m, n in n_eligible.items())
)

# %% [markdown]
# ## Anisotropy: the baseline (seed 001, Figure 1)
#
# The mean cosine between two random words from different sentences, per layer. The x axis
# is the layer divided by the model's depth so that models of different depths share it.

# %%
for preset in context_measures.PRESET_NAMES:
    show(
        plots.lines_by_layer(
            per_layer[per_layer["preset"] == preset], "baseline_cosine", x="depth",
            title=f"Anisotropy baseline ({preset} estimators)",
            y_title="mean cosine of random words",
        ),
        f"baseline-{preset}",
    )

# %% [markdown]
# ## Self-similarity, intra-sentence similarity and MEV (Figures 2-4)
#
# Solid lines are raw values, dashed lines anisotropy-adjusted; bands are 95% bootstrap
# intervals over words (SelfSim, MEV) or sentences (IntraSim).

# %%
for measure, title in (
    ("selfsim", "Self-similarity"),
    ("intrasim", "Intra-sentence similarity"),
    ("mev", "Maximum explainable variance"),
):
    long = pd.concat(
        [
            per_layer.assign(
                kind=kind,
                value=per_layer[measure + suffix],
                lo=per_layer[measure + suffix + "_lo"],
                hi=per_layer[measure + suffix + "_hi"],
            )
            for kind, suffix in (("raw", ""), ("adjusted", "_adj"))
        ],
        ignore_index=True,
    )
    for preset in context_measures.PRESET_NAMES:
        show(
            plots.lines_by_layer(
                long[long["preset"] == preset], "value", x="depth", dash="kind",
                lower="lo", upper="hi", title=f"{title} ({preset} estimators)", y_title=measure,
            ),
            f"{measure}-{preset}",
        )

# %% [markdown]
# ## Seed 001's claims, tested on this run
#
# Each claim is decided by a rule stated in `lmgeometry.chapters.context_measures.claims`. Layer 0,
# the context-free input, is left out. "Anisotropic" means a baseline cosine above $3/\sqrt{d}$,
# the band within which the cosine of two random directions in $d$ dimensions falls. A trend
# ("rises", "falls") is a Spearman correlation with the layer index of at least 0.5 in size;
# the paper itself allows exceptions (BERT's last layer is less anisotropic than its
# penultimate one). For intra-sentence similarity the paper describes three patterns, one per
# model: rising with depth (ELMo), falling with depth while staying above the baseline (BERT),
# and close to the baseline, |adjusted IntraSim| < 0.05, in most layers (GPT-2). Each model
# here is tested against the BERT and the GPT-2 pattern, and the last claim asks whether the
# models of this run follow different ones.

# %%
lowest = {spec: context_measures.lowest_words(acts, seed=seed) for spec, acts in stores.items()}
claim_table = context_measures.claims_table(per_layer, lowest)
display(context_measures.holds_matrix(claim_table))
with pd.option_context("display.max_colwidth", None):
    display(claim_table[claim_table["preset"] == "corrected"][["model", "claim", "evidence"]])

# %% [markdown]
# **A decoder's first word.** Without a beginning-of-sequence token (the seeds' GPT-2 runs had
# none, and neither do this run's decoders), the first token of every sentence becomes an
# *attention sink*: later tokens attend to it heavily and, in the middle layers, its hidden
# state takes a norm orders of magnitude above the others ("massive activations"; Xiao et
# al. 2023, Sun et al. 2024; chapter [Geometry](01_geometry.ipynb) shows the norms). A few such rows
# dominate any statistic that is not normalised per vector: the uncentred MEV baseline of
# random occurrences is then close to 1, since one direction holds almost all their variance.
# The authors' GPT-2 file shows the same signature (the standard deviation of word norms,
# up to 807, exceeds their mean, up to 457). In this run:

# %%
saturated = context_measures.saturated_mev_baseline(per_layer)
display(Markdown("\n\n".join(saturated) if saturated else
                 "No model has an MEV baseline of 0.99 or more in any layer."))

# %% [markdown]
# The five least self-similar words in a few layers (`corrected` estimators), with whether
# spaCy marks them as stopwords:

# %%
for spec in models:
    low = lowest[spec]
    last = low["layer"].max()
    shown = low[low["layer"].isin(sorted({1, last // 2, last}))]
    display(Markdown(f"**{spec}**"))
    display(shown[["layer", "word", "n_sentences", "selfsim", "is_stop"]].round(3))

# %% [markdown]
# ## Token-level measures (seed 000)
#
# A token's mean cosine to the other tokens of its sentence, per layer, by its position in the
# sentence and by its part of speech (UPOS); and a token's mean cosine to the occurrences of
# the same word in other sentences (token self-similarity), by part of speech.

# %%
token_summaries = {}
for spec, acts in stores.items():
    tables = context_measures.token_tables(acts, label=spec)
    token_summaries[spec] = tables
    for name, title, x_title in (
        ("intra_by_position", "token intra-sentence similarity by position", "position"),
        ("intra_by_upos", "token intra-sentence similarity by UPOS", "UPOS"),
        ("self_by_upos", "token self-similarity by UPOS", "UPOS"),
    ):
        m = tables[name]
        show(
            plots.heatmap(
                m.to_numpy(), m.columns, m.index, title=f"{spec}: {title}",
                x_title=x_title, y_title="layer", colorbar_title="cosine",
            ),
            f"{name}-{spec}",
        )

# %% [markdown]
# ## Nearest neighbours
#
# For a fixed random sample of tokens, their 10 nearest neighbours by cosine among all tokens
# of the same layer: the share that are occurrences of the same word, and their mean cosine.

# %%
neighbours = pd.concat(
    [
        context_measures.neighbour_table(acts, queries=neighbour_queries, seed=seed,
                                      label=spec).assign(model=spec)
        for spec, acts in stores.items()
    ],
    ignore_index=True,
)
neighbours["depth"] = neighbours["layer"] / neighbours.groupby("model")["layer"].transform("max")
show(
    plots.lines_by_layer(neighbours, "same_word_share", x="depth",
                         title="Share of the 10 nearest neighbours that are the same word",
                         y_title="same-word share"),
    "nn-same-word",
)
show(
    plots.lines_by_layer(neighbours, "mean_neighbour_cosine", x="depth",
                         title="Mean cosine of the 10 nearest neighbours",
                         y_title="cosine"),
    "nn-cosine",
)

# %% [markdown]
# ## Static embeddings from contextual ones (seed 001, Table 1)
#
# For each word in at least 5 sentences, the first principal component of its occurrences in
# one layer serves as a static vector. The paper took every word in at least 5 of all ~39,000
# unique STS sentences; a random sample small enough for this CPU budget leaves almost every
# benchmark word out (the 1,000 sentences above give vectors to fewer than 400 words). So this
# part runs on a **second STS corpus chosen for the benchmarks**: `static_sentences` STS
# sentences picked greedily so that as many benchmark words as possible reach 5 sentences,
# preferring short sentences and words that many benchmark items need
# (`contextuality.benchmark_sentences`). Its sentences are shorter than STS on average, so a
# word's contexts are narrower than the paper's.
#
# Every layer is scored with the `strict` protocol (only items whose words all have a vector;
# `coverage` says how many); the paper's layers 1, 2, L-1 and L are also scored with the Word
# Embeddings Benchmarks conventions the paper used (`web`: a missing word gets the mean
# vector), printed beside the paper's Table 1. With coverage this low, neither is comparable
# with the paper's numbers. One more difference: a principal component has no sign, and
# here each word's PC1 is signed to point along the mean of its occurrences
# (`measures.static_embeddings`), where the authors' scikit-learn PCA keeps whatever sign the
# SVD returns; the sign of a cosine between two words' PC1 vectors depends on that choice.

# %%
static_corpus = corpus.sentences(
    corpus.benchmark_sentences(static_sentences), name="sts_benchmark_words"
)
static_stores = {spec: store.activations(spec, static_corpus) for spec in models}
frames = data.load_benchmarks()
static_strict, static_web = [], []
for spec, acts in static_stores.items():
    last = acts.n_layers - 1
    web_layers = sorted({1, 2, last - 1, last}) if static_web_layers == "paper" else list(
        static_web_layers
    )
    static_strict.append(
        context_measures.static_scores(acts, range(acts.n_layers), "strict", seed=seed,
                                    frames=frames, label=spec).assign(model=spec)
    )
    static_web.append(
        context_measures.static_scores(acts, web_layers, "web", seed=seed, frames=frames,
                                    label=spec).assign(model=spec)
    )
static_strict = pd.concat(static_strict, ignore_index=True)
static_web = pd.concat(static_web, ignore_index=True)
print(
    f"{len(static_corpus.sentences)} benchmark-word STS sentences, {len(static_corpus.words)} "
    "words; words with a static vector: "
    + ", ".join(f"{m}: {n}" for m, n in static_strict.groupby("model")["vocabulary"].max().items())
)

# %%
families = {
    "similarity and relations": (data.SIMILARITY_BENCHMARKS + ("semeval2012",),
                                 "Spearman rho"),
    "analogy": (data.ANALOGY_BENCHMARKS, "accuracy"),
    "categorisation": (data.CATEGORISATION_BENCHMARKS, "purity"),
}
for spec in models:
    for family, (names, metric) in families.items():
        part = static_strict[(static_strict["model"] == spec)
                             & static_strict["benchmark"].isin(names)]
        m = part.pivot_table(index="layer", columns="benchmark", values="value", sort=False)
        show(
            plots.heatmap(
                m.to_numpy(), m.columns, m.index,
                title=f"{spec}: PC1 static embeddings per layer, {family} ({metric}; strict "
                "protocol, covered items)",
                x_title="benchmark", y_title="layer", colorbar_title=metric,
            ),
            f"static-strict-{family.split()[0]}-{spec}",
        )
display(
    static_strict.pivot_table(index="model", columns="benchmark", values="coverage",
                              aggfunc="first", sort=False).round(3)
)

# %% [markdown]
# The `web` protocol on the paper's layers, with the paper's Table 1 below it **as a reference
# only** (GPT-2, BERT and ELMo layers, GloVe and FastText, on the full-STS vocabulary; not
# results of this run):

# %%
display(context_measures.table1_beside(static_web).round(3))

# %% [markdown]
# ## What this run shows
#
# The sentences below are generated from the numbers above (`corrected` estimators). The
# models are not those of the paper: `mpnet-base` is a sentence encoder fine-tuned
# contrastively (no masked-LM head), `smollm2-135m` an instruction-tuned decoder run from
# 4-bit GGUF weights dequantised to fp32; see the introduction for their caveats. MPNet was
# trained so that the mean of its last-layer word vectors represents the sentence (mean
# pooling under a contrastive objective), which pulls the words of a sentence toward their
# mean: a high or rising intra-sentence similarity in its upper layers is what that objective
# would produce, and says little about BERT-style pretraining.

# %%
display(
    Markdown(
        "\n\n".join(
            s
            for spec in models
            for s in context_measures.findings(
                per_layer[(per_layer["model"] == spec) & (per_layer["preset"] == "corrected")],
                spec,
                neighbours[neighbours["model"] == spec],
            )
            + context_measures.static_findings(static_strict[static_strict["model"] == spec], spec)
        )
    )
)

# %%
# NBVAL_CHECK_OUTPUT
print(context_measures.summary(per_layer).to_string())
print(context_measures.holds_matrix(claim_table).to_string())

# %%
results.save_results(
    results_path,
    {
        "models": models,
        "n_sentences": n_sentences,
        "seed": seed,
        "per_layer": per_layer,
        "claims": claim_table,
        "lowest_self_similarity": pd.concat(
            [low.assign(model=m) for m, low in lowest.items()], ignore_index=True
        ),
        "token_measures": {
            m: {name: table.reset_index() for name, table in t.items()}
            for m, t in token_summaries.items()
        },
        "neighbours": neighbours,
        "static_sentences": len(static_corpus.sentences),
        "static_embeddings_strict": static_strict,
        "static_embeddings_web": static_web,
    },
)
