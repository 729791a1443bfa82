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
# principal components but **do** show as local clusters in UMAP (its figures show such
# clusters for both GPT-2 and BERT). Ethayarajh (2019, seed 001) argued that what makes a
# word's vectors vary is the variety of its contexts rather than its number of senses.
#
# This chapter shows the seed's views and then measures what it only looked at, with
# sense-annotated text:
#
# * **SemCor** (Miller et al. 1993; WordNet 3.0 sense keys): 30 polysemous target nouns and
#   verbs, each with at least two senses that occur 10 or more times (the selection rule is
#   `lmgeometry.io.corpus.semcor_targets`). For each target and layer, **leave-one-out
#   1-nearest-neighbour sense accuracy** (is a word's most similar other occurrence, by
#   cosine, of the same sense?) against the **most-frequent-sense** (MFS) baseline, and the
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
models = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_semcor_words = 30
wic_train_pairs = 400
wic_test_pairs = 400
n_sts_sentences = 1000
n_mnli_sentences = 600
n_umap_words = 8
max_view_layers = 13
point_budget = 1500
seed = 0
results_path = "05_senses.results.json"

# %%
import warnings

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import senses
from lmgeometry.io import corpus
from lmgeometry.measures import clusters, similarity
from lmgeometry.report import plots, results
from lmgeometry.report.figures import show

warnings.filterwarnings("ignore", message="n_jobs value")  # UMAP: seeded, so single-threaded

semcor = corpus.semcor_targets(n_words=n_semcor_words, seed=seed)
wic, wic_pairs = corpus.wic_corpus(wic_train_pairs, wic_test_pairs, seed)
semcor_stores = {spec: store.activations(spec, semcor) for spec in models}
wic_stores = {spec: store.activations(spec, wic) for spec in models}
tagged = semcor.words.dropna(subset=["sense_key"])
print(
    f"SemCor: {len(semcor.sentences)} sentences, {len(tagged)} sense-tagged occurrences of "
    f"{tagged['target'].nunique()} targets; WiC pairs: "
    + ", ".join(f"{k} {v}" for k, v in wic_pairs["split"].value_counts().sort_index().items())
)
display(Markdown("Models: " + "; ".join(
    f"**{spec}** ({acts.meta['model']['name']}, {acts.n_layers - 1} layers; caveats: "
    + ("; ".join(acts.meta["model"].get("caveats", [])) or "none") + ")"
    for spec, acts in semcor_stores.items()
)))

# %% [markdown]
# ## The seed's views
#
# The occurrences of one target word in SemCor, projected on one layer's first two principal
# components (computed on that word's occurrences only) and coloured by their annotated sense:
# pick the word in the menu and the layer with the slider (for the 30-layer model every
# other layer or so is shown). Hover a point to read its sentence; click a sense in the legend
# to hide it. The second figure of each model uses UMAP (cosine, 15 neighbours) instead of
# PCA for the most frequent targets: UMAP keeps local neighbourhoods, which is where the seed
# saw senses cluster. Unlike the seed, each projection is fitted on one word's occurrences
# (the seed projected all words together, so a word's senses had to stand out against the
# whole vocabulary).

# %%
counts = tagged["target"].value_counts()
view_words = {"pca": sorted(counts.index), "umap": sorted(counts.index[:n_umap_words])}
view_tables = []
for spec, acts in semcor_stores.items():
    layers = senses.spread_layers(acts.n_layers, max_view_layers)
    for method, targets in view_words.items():
        views = senses.word_views(acts, targets, layers, method, seed,
                                  sentences=semcor.sentences)
        view_tables.append(senses.view_separability(views, layers, method, acts)
                           .assign(model=spec))
        show(
            plots.choice_layer_slider(
                views["coords"], [str(i) for i in layers], views["color"], "senses",
                hover=views["hover"], background=views["background"],
                title=f"{spec}: SemCor occurrences by sense ({method.upper()} per word and layer)",
            ),
            f"{method}-{spec}",
        )
view_scores = pd.concat(view_tables, ignore_index=True)

# %% [markdown]
# How visible are the senses in these pictures? The leave-one-out 1-NN sense accuracy
# (defined in the next section) computed *inside* each 2-D view, averaged over the words shown,
# against the same measure in the layer's full space for the same occurrences (the UMAP words
# are the `n_umap_words` most frequent targets, so their full-space line differs from the
# PCA words').

# %%
view_scores["depth"] = view_scores["layer"] / view_scores.groupby("model")["layer"].transform(
    "max"
)
view_lines = pd.concat(
    [
        view_scores.assign(space=view_scores["method"].str.upper() + " 2-D"),
        view_scores.assign(space="full space, " + view_scores["method"].str.upper() + " words",
                           accuracy_1nn=view_scores["accuracy_full"]),
    ],
    ignore_index=True,
)
show(
    plots.lines_by_layer(
        view_lines, "accuracy_1nn", x="depth", dash="space",
        title="1-NN sense accuracy inside the 2-D views and in the full space",
        y_title="accuracy", reference=float(view_scores["mfs_baseline"].iloc[0]),
        reference_name="most frequent sense (PCA words)",
    ),
    "view-accuracy",
)

# %% [markdown]
# And the seed's own view: the polysemous target words of the MNLI sentences (chapter
# "Geometry"), coloured by word over a gray shadow of all the other words.

# %%
mnli = corpus.mnli_polysemy(n=n_mnli_sentences, seed=seed)
for spec in models:
    acts = store.activations(spec, mnli)
    words = acts.words
    idx = similarity.subsample(len(words), point_budget, seed)
    targets = words["target"].to_numpy()[idx]
    layers = senses.spread_layers(acts.n_layers, 3)
    panels = [
        clusters.pca_project(acts.layer(i, idx), n_components=2,
                             seed=seed)[0]
        for i in layers
    ] + [
        clusters.umap_project(acts.layer(i, idx), n_components=2,
                              seed=seed)
        for i in layers
    ]
    show(
        plots.layer_grid(
            panels, [f"{m} layer {i}" for m in ("PCA", "UMAP") for i in layers],
            np.where(pd.notna(targets), targets, "(other words)").astype(str), "target word",
            categorical=True, hover=words["text"].to_numpy()[idx], cols=len(layers),
            shadow=True, background="(other words)",
            title=f"{spec}: MNLI target words over all words (PCA, then UMAP, per layer)",
        ),
        f"mnli-targets-{spec}",
    )

# %% [markdown]
# ## Sense separability per layer
#
# Leave-one-out 1-NN sense accuracy (cosine) averaged over the target words, per layer; the
# dotted gray line is the most-frequent-sense baseline under the same leave-one-out protocol
# (it does not depend on the layer). Line styles (see the legend) distinguish the raw vectors,
# the vectors with the top principal components removed (centred, then ceil(d/100)
# directions projected out) and the vectors with every dimension standardised; both
# transforms are fitted on all the layer's word vectors of the SemCor sentences (no labels).

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
# Accuracy of the cosine threshold fitted on the training pairs: first on dev for the three
# versions of the vectors, then dev and test for the raw vectors (the WiC test gold labels are
# in the data mirror; the best layer is chosen on dev, test is only reported).

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
wic_raw = wic_results[wic_results["transform"] == "raw"]
show(
    plots.lines_by_layer(
        pd.concat([wic_raw.assign(split=split, accuracy=wic_raw[f"{split}_accuracy"])
                   for split in ("dev", "test")], ignore_index=True),
        "accuracy", x="depth", dash="split",
        title="WiC accuracy of a cosine threshold (raw vectors): dev and test",
        y_title="accuracy", reference=0.5, reference_name="chance",
    ),
    "wic-test",
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
word_tables = {spec: senses.polysemy_tables(store.activations(spec, sts), seed=seed)
               for spec in models}
polysemy = pd.concat(
    [senses.polysemy_by_layer(t).assign(model=spec) for spec, t in word_tables.items()],
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
# The raw picture behind the regression: mean self-similarity per layer of the words grouped by
# their number of WordNet senses, then by their number of contexts (sentences).

# %%
for column, edges, name in (("n_senses", [1, 2, 4, 8, np.inf], "WordNet senses"),
                            ("n_sentences", [5, 10, 20, 50, np.inf], "contexts")):
    bins = pd.concat(
        [senses.selfsim_by_bins(t, column, edges).assign(model=spec)
         for spec, t in word_tables.items()],
        ignore_index=True,
    )
    bins["depth"] = bins["layer"] / bins.groupby("model")["layer"].transform("max")
    bins["group"] = name + " " + bins["bin"]
    show(
        plots.lines_by_layer(
            bins, "mean_selfsim", color="group", x="depth", dash="model",
            title=f"Mean self-similarity by number of {name}", y_title="mean self-similarity",
        ),
        f"selfsim-by-{column}",
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
        spec, view_scores[view_scores["model"] == spec],
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
        "view_separability": view_scores,
        "polysemy_regression": polysemy,
    },
)
