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
# different sentences, and the MEV of random occurrences. The paper found that anisotropy
# grows with depth (extremely so in GPT-2's last layer), that upper layers are more
# context-specific (lower adjusted self-similarity), that stopwords are among the least
# self-similar words, that intra-sentence similarity behaves differently in ELMo, BERT and
# GPT-2, and that on average less than 5% of a word's variance is explained by a static
# vector.
#
# **Two sets of estimators.** The authors' code (kawine/contextual) differs from the paper in
# ways that change the numbers: self-similarity over at most 1,000 random ordered pairs with
# same-sentence pairs allowed; word MEV from centred PCA but the MEV baseline from an
# uncentred truncated SVD (which made GPT-2's adjusted MEV negative); baseline pairs drawn
# with replacement; every value rounded to 3 decimals. `lmgeometry.measures` makes each choice
# an argument and offers two presets: `ethayarajh2019` (the authors' code) and `corrected`
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
static_layers = "quartiles"
results_path = "03_context_measures.results.json"

# %%
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry import contextuality, corpus, plots, results, store, wordbench
from lmgeometry.figures import show

sts = corpus.sts(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, sts) for spec in models}
per_layer = pd.concat(
    [
        contextuality.layer_measures(acts, seed=seed, n_boot=n_boot, label=spec).assign(model=spec)
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
for preset in contextuality.PRESET_NAMES:
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
    for preset in contextuality.PRESET_NAMES:
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
# Each claim is decided by a rule stated in `lmgeometry.contextuality.claims` (layer 0, the
# context-free input, is left out of trends; "upper" and "lower" are the two halves of the
# remaining layers).

# %%
lowest = {spec: contextuality.lowest_words(acts, seed=seed) for spec, acts in stores.items()}
claim_tables = []
for spec in models:
    for preset in contextuality.PRESET_NAMES:
        sel = per_layer[(per_layer["model"] == spec) & (per_layer["preset"] == preset)]
        claim_tables.append(
            contextuality.claims(sel, lowest[spec]).assign(model=spec, preset=preset)
        )
claim_table = pd.concat(claim_tables, ignore_index=True)
display(
    claim_table.pivot_table(
        index="claim", columns=["model", "preset"], values="holds", aggfunc="first", sort=False
    ).replace({True: "holds", False: "does not hold"})
)
display(claim_table[claim_table["preset"] == "corrected"][["model", "claim", "evidence"]])

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
    tables = contextuality.token_tables(acts, label=spec)
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
        contextuality.neighbour_table(acts, queries=neighbour_queries, seed=seed,
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
# one layer serves as a static vector, scored on word benchmarks with the Word Embeddings
# Benchmarks conventions the paper used (pairs with a missing word are scored with the mean
# vector). **Coverage matters here**: the paper built its vocabulary from all of STS; this
# run's vocabulary is the words that occur in at least 5 of its sampled sentences, so most
# benchmark items are missing and the scores are not comparable with the paper's. The
# `coverage` column says how many items had both words; raise `n_sentences` for more.

# %%
static = []
for spec, acts in stores.items():
    last = acts.n_layers - 1
    layers = (sorted({0, 1, last // 4, last // 2, 3 * last // 4, last})
              if static_layers == "quartiles" else list(static_layers))
    static.append(contextuality.static_scores(acts, layers, seed=seed).assign(model=spec))
static = pd.concat(static, ignore_index=True)
display(
    static.pivot_table(index=["model", "layer"], columns="benchmark", values="value",
                       sort=False).round(3)
)
display(
    static.pivot_table(index=["model", "layer"], columns="benchmark", values="coverage",
                       sort=False).round(3)
)

# %% [markdown]
# The paper's Table 1, for reference only (not this run): PC1 static embeddings of GPT-2,
# BERT and ELMo layers, and GloVe and FastText, on the full-STS vocabulary.

# %%
display(
    wordbench.reference_frame("ethayarajh2019_table1")
    .pivot_table(index="embedding", columns="benchmark", values="value", sort=False)
)

# %% [markdown]
# ## What this run shows

# %%
display(
    Markdown(
        "\n\n".join(
            s
            for spec in models
            for s in contextuality.findings(
                per_layer[(per_layer["model"] == spec) & (per_layer["preset"] == "corrected")],
                spec,
                neighbours[neighbours["model"] == spec],
            )
        )
    )
)

# %%
# NBVAL_CHECK_OUTPUT
print(contextuality.summary(per_layer).to_string())
print(claim_table.pivot_table(index="claim", columns=["model", "preset"], values="holds",
                              aggfunc="first", sort=False).to_string())

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
        "static_embeddings": static,
    },
)
