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
# # Senses: are word senses encoded, and in which layers?
#
# Seed 000 projected the occurrences of polysemous words of MultiNLI sentences with PCA and
# UMAP and concluded, by eye, that the senses of a word are **not** visible along the first
# principal components but **do** show as local clusters in UMAP, more so in BERT than in
# GPT-2. Ethayarajh (2019, seed 001) argued that what makes a word's vectors vary is the
# variety of its contexts rather than its number of senses.
#
# This chapter shows the seed's views and then measures what it only looked at, with
# sense-annotated text:
#
# * **SemCor** (Miller et al. 1993; WordNet 3.0 sense keys): 30 polysemous target nouns and
#   verbs, each with at least two senses that occur 10 or more times (the selection rule is
#   `lmgeometry.corpus.semcor_targets`). For each target and layer, **leave-one-out
#   1-nearest-neighbour sense accuracy** (is a word's most similar other occurrence, by
#   cosine, of the same sense?) against the **most-frequent-sense** baseline, and the
#   **silhouette** of the sense partition.
# * **WiC** (Pilehvar & Camacho-Collados 2019): pairs of sentences sharing a target word,
#   labelled same sense or not. The cosine of the two occurrences is thresholded; the
#   threshold is fitted on training pairs and scored on dev and test (chance: 50%).
# * **Polysemy versus context**: a regression, per layer, of a word's self-similarity on its
#   number of WordNet senses and its number of distinct contexts (both on a log scale), on
#   the STS sentences of chapter "Context measures".
# * The same measures after **removing the top principal components** or **standardising
#   every dimension**, to see how much anisotropy hides.

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_semcor_words = 30
wic_train_pairs = 400
wic_test_pairs = 400
n_sts_sentences = 1000
n_mnli_sentences = 600
n_view_words = 3
point_budget = 1500
seed = 0
results_path = "05_senses.results.json"

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry import corpus, geometry, plots, results, senses, store
from lmgeometry.figures import show

semcor = corpus.semcor_targets(n_words=n_semcor_words, seed=seed)
wic, wic_pairs = senses.wic_corpus(wic_train_pairs, wic_test_pairs, seed)
semcor_stores = {spec: store.activations(spec, semcor) for spec in models}
wic_stores = {spec: store.activations(spec, wic) for spec in models}
tagged = semcor.words.dropna(subset=["sense_key"])
print(
    f"SemCor: {len(semcor.sentences)} sentences, {len(tagged)} sense-tagged occurrences of "
    f"{tagged['target'].nunique()} targets; WiC pairs: "
    + ", ".join(f"{k} {v}" for k, v in wic_pairs["split"].value_counts().sort_index().items())
)

# %% [markdown]
# ## The seed's views
#
# Each panel is one layer; the points are the occurrences of one target word in SemCor,
# projected on that layer's first two principal components (computed on the word's
# occurrences) and coloured by their annotated sense. Click a sense in the legend to hide it.
# The last figure of each model uses UMAP instead of PCA for the most frequent target (UMAP
# keeps local neighbourhoods, which is where the seed saw senses cluster).

# %%
counts = tagged["target"].value_counts()
view_words = list(counts.index[:n_view_words])
views = [("pca", target) for target in view_words] + [("umap", view_words[0])]
for spec, acts in semcor_stores.items():
    last = acts.n_layers - 1
    for method, target in views:
        layers = (sorted({0, last // 4, last // 2, 3 * last // 4, last}) if method == "pca"
                  else sorted({0, last // 2, last}))
        v = senses.occurrence_views(acts, target, layers, method, seed)
        show(
            plots.layer_grid(
                v["panels"], [f"layer {i}" for i in layers], v["senses"], "sense",
                categorical=True, hover=v["hover"], cols=len(layers),
                title=f"{spec}: occurrences of '{target}' by sense ({method.upper()} per layer)",
            ),
            f"{method}-{spec}-{target}",
        )

# %% [markdown]
# And the seed's own view: the polysemous target words of the MNLI sentences (chapter
# "Geometry"), coloured by word over a gray shadow of all the other words.

# %%
mnli = corpus.mnli_polysemy(n=n_mnli_sentences, seed=seed)
for spec in models:
    acts = store.activations(spec, mnli)
    words = acts.words
    idx = geometry.subsample(len(words), point_budget, seed)
    targets = words["target"].to_numpy()[idx]
    last = acts.n_layers - 1
    layers = sorted({0, last // 2, last})
    panels = [
        geometry.pca_project(np.asarray(acts.layer(i)[idx], dtype=np.float32), n_components=2,
                             seed=seed)[0]
        for i in layers
    ]
    show(
        plots.layer_grid(
            panels, [f"layer {i}" for i in layers],
            np.where(pd.notna(targets), targets, "(other words)").astype(str), "target word",
            categorical=True, hover=words["text"].to_numpy()[idx], cols=len(layers),
            shadow=True, background="(other words)",
            title=f"{spec}: MNLI target words over all words (PCA per layer)",
        ),
        f"mnli-targets-{spec}",
    )

# %% [markdown]
# ## Sense separability per layer
#
# Solid: leave-one-out 1-NN sense accuracy averaged over the target words; the dotted line is
# the most-frequent-sense baseline. Line styles: raw vectors, top principal components
# removed, dimensions standardised.

# %%
separability = pd.concat(
    [senses.separability_by_layer(acts).assign(model=spec)
     for spec, acts in semcor_stores.items()],
    ignore_index=True,
)
separability["depth"] = separability["layer"] / separability.groupby("model")["layer"].transform(
    "max"
)
mfs = float(separability["mfs_baseline"].iloc[0])
show(
    plots.lines_by_layer(
        separability, "accuracy_1nn", x="depth", dash="transform",
        title="SemCor: leave-one-out 1-NN sense accuracy", y_title="accuracy",
        reference=mfs, reference_name="most frequent sense",
    ),
    "sense-1nn",
)
show(
    plots.lines_by_layer(
        separability, "silhouette", x="depth", dash="transform",
        title="SemCor: silhouette of the senses (cosine)", y_title="silhouette",
        reference=0.0,
    ),
    "sense-silhouette",
)

# %% [markdown]
# ## WiC per layer
#
# Dev accuracy of the cosine threshold fitted on the training pairs (test accuracy is in the
# results file and the text below; the best layer is chosen on dev).

# %%
wic_results = pd.concat(
    [senses.wic_by_layer(acts, wic_pairs).assign(model=spec) for spec, acts in wic_stores.items()],
    ignore_index=True,
)
wic_results["depth"] = wic_results["layer"] / wic_results.groupby("model")["layer"].transform(
    "max"
)
show(
    plots.lines_by_layer(
        wic_results, "dev_accuracy", x="depth", dash="transform",
        title="WiC dev accuracy of a cosine threshold", y_title="accuracy",
        reference=0.5, reference_name="chance",
    ),
    "wic",
)

# %% [markdown]
# ## Polysemy or context?
#
# Per layer, the standardised coefficients of a regression of a word's self-similarity
# (`corrected` estimators) on log(number of WordNet senses) and log(number of distinct
# contexts), with 95% intervals, over STS words that occur in at least 5 sentences and have a
# WordNet entry. A negative coefficient means more senses (or more contexts) go with less
# self-similar vectors.

# %%
sts = corpus.sts(n=n_sts_sentences, seed=seed)
polysemy = pd.concat(
    [senses.polysemy_by_layer(store.activations(spec, sts), seed=seed).assign(model=spec)
     for spec in models],
    ignore_index=True,
)
polysemy["depth"] = polysemy["layer"] / polysemy.groupby("model")["layer"].transform("max")
coefficients = pd.concat(
    [
        polysemy.assign(
            predictor=name, coef=polysemy[f"coef_{col}"], lo=polysemy[f"ci_low_{col}"],
            hi=polysemy[f"ci_high_{col}"],
        )
        for name, col in (("senses", "log_senses"), ("contexts", "log_contexts"))
    ],
    ignore_index=True,
)
show(
    plots.lines_by_layer(
        coefficients, "coef", x="depth", dash="predictor", lower="lo", upper="hi",
        title="Self-similarity regressed on sense count and context count",
        y_title="standardised coefficient", reference=0.0,
    ),
    "polysemy",
)

# %% [markdown]
# ## What this run shows
#
# The seed concluded, from pictures, that senses are not visible along the principal
# components but form local clusters. Measured:

# %%
lines = []
for spec in models:
    lines += senses.findings(
        separability[separability["model"] == spec], wic_results[wic_results["model"] == spec],
        spec,
    )
    lines += senses.polysemy_findings(polysemy[polysemy["model"] == spec], spec)
display(Markdown("\n\n".join(lines)))

# %%
# NBVAL_CHECK_OUTPUT
print(senses.summary(separability, wic_results).to_string())

# %%
results.save_results(
    results_path,
    {
        "models": models,
        "seed": seed,
        "semcor_targets": sorted(tagged["target"].unique()),
        "wic_pairs": wic_pairs["split"].value_counts().to_dict(),
        "separability": separability,
        "wic": wic_results,
        "polysemy_regression": polysemy,
    },
)
