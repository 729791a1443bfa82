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
# # Geometry: what the layers look like
#
# Seed 000 projected every layer of GPT-2 and BERT, for words of MultiNLI sentences that
# contain polysemous words, onto its first principal components. It reported that **GPT-2
# forms two very separate clusters** in every layer, that the tokens at position 0 make one of
# them, and that the other, projected on its own, is a manifold "similar to a Swiss roll"
# along which the position of the token in the sentence runs: position is GPT-2's globally
# dominant feature. **BERT** showed no such split: several small clouds in the lower layers
# that merge into a few larger clusters and a "wing-like shape" in the last layer, with
# position encoded only locally.
#
# This chapter repeats the views for the models of this build and measures what the seed
# described by eye: whether a layer splits into well-separated clusters (k-means on the top
# principal components, kept when the silhouette reaches 0.5), how far apart the clusters are,
# which words they hold, and how much of each layer's variance the word's position, its part
# of speech and its identity explain.

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_sentences = 600
seed = 0
point_budget = 1000
umap_layers = 4
results_path = "01_geometry.results.json"

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry import corpus, geometry, plots, results, store
from lmgeometry.figures import show

words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
print(
    f"{len(words_corpus.sentences)} MNLI sentences, {len(words_corpus.words)} words; "
    f"models: {', '.join(models)}"
)

# %% [markdown]
# ## Every layer in two dimensions
#
# Each panel is one layer (layer 0 is the input embedding output), projected on its own first
# two principal components; colour is the word's position in its sentence. A random subset of
# the words (the same in every layer) keeps the pages light.

# %%
summaries = []
cluster_tables = {}
projections = {}
for spec, acts in stores.items():
    words = acts.words
    idx = geometry.subsample(len(words), point_budget, seed)
    sample_words = words.iloc[idx].reset_index(drop=True)
    position = sample_words["word_index"].to_numpy()
    hover = (
        sample_words["text"] + " (pos " + sample_words["word_index"].astype(str) + ")"
    ).to_numpy()
    panels, rows = [], []
    for layer in range(acts.n_layers):
        X = np.asarray(acts.layer(layer)[idx], dtype=np.float32)
        xy, _ = geometry.pca_project(X, n_components=2, seed=seed)
        panels.append(xy)
        row, clusters = geometry.layer_geometry(X, sample_words, seed=seed)
        rows.append({"model": spec, "layer": layer, **row})
        cluster_tables[(spec, layer)] = (clusters, X)
    projections[spec] = (idx, sample_words, hover)
    summaries.append(pd.DataFrame(rows))
    show(
        plots.layer_grid(
            panels,
            [f"layer {i}" for i in range(acts.n_layers)],
            position,
            "position",
            hover=hover,
            title=f"{spec}: first two principal components of every layer, coloured by position",
        ),
        f"pca-grid-{spec}",
    )
summary = pd.concat(summaries, ignore_index=True)

# %% [markdown]
# ## Clusters and what drives the global structure
#
# For every layer: the best k-means split (k = 2 to 4) of the words on the top 50 principal
# components, its silhouette (a layer counts as split when it reaches 0.5), and the variance
# explained by three word attributes (omega-squared: 0 when the attribute is unrelated to the
# vectors, 1 when words sharing the attribute share a vector). Position is binned as
# 0, 1, 2-3, 4-7, 8-15, 16-31, 32+.

# %%
summary["depth"] = summary["layer"] / summary.groupby("model")["layer"].transform("max")
show(
    plots.lines_by_layer(
        summary,
        "silhouette",
        x="depth",
        title="Best k-means silhouette per layer (0.5 and above: well-separated clusters)",
        reference=0.5,
        reference_name="0.5",
    ),
    "silhouette",
)
long = summary.melt(
    id_vars=["model", "depth"],
    value_vars=["var_position", "var_upos", "var_word"],
    var_name="attribute",
    value_name="variance explained",
)
show(
    plots.lines_by_layer(
        long,
        "variance explained",
        x="depth",
        dash="attribute",
        title="Variance explained by position, part of speech and word identity",
    ),
    "variance-explained",
)
display(
    summary[
        [
            "model",
            "layer",
            "k",
            "silhouette",
            "separation",
            "minor_share",
            "minor_position0_share",
            "var_position",
            "var_upos",
            "var_word",
            "mean_norm",
        ]
    ].round(3)
)

# %% [markdown]
# ## The clusters, one at a time
#
# Seed 000 separated GPT-2's two clusters and projected each on its own, which revealed the
# position manifold inside the larger one. Here, for each model, the layer whose split is the
# widest (if any layer splits) is separated the same way.

# %%
for spec in models:
    split = summary[(summary["model"] == spec) & (summary["k"] >= 2)]
    if split.empty:
        display(Markdown(f"*{spec}: no layer splits into well-separated clusters.*"))
        continue
    layer = int(split.loc[split["separation"].idxmax(), "layer"])
    clusters, X = cluster_tables[(spec, layer)]
    idx, sample_words, _ = projections[spec]
    display(Markdown(f"**{spec}, layer {layer}**"))
    display(geometry.cluster_profile(sample_words, clusters.labels).round(3))
    members = [clusters.labels == c for c in range(clusters.k)]
    show(
        plots.side_by_side(
            [geometry.pca_project(X[m], n_components=2, seed=seed)[0] for m in members],
            [f"cluster {c} ({m.sum()} words)" for c, m in enumerate(members)],
            [sample_words["word_index"].to_numpy()[m] for m in members],
            "position",
            title=f"{spec}, layer {layer}: each cluster projected on its own principal components",
        ),
        f"clusters-{spec}",
    )

# %% [markdown]
# ## Interactive 3-D views
#
# Drag to rotate, scroll to zoom; the slider picks the layer. The PCA view keeps the global
# structure; the UMAP view (initialised from PCA, cosine metric) keeps local neighbourhoods
# and is computed for a few evenly spaced layers only.

# %%
for spec, acts in stores.items():
    idx, sample_words, hover = projections[spec]
    position = sample_words["word_index"].to_numpy()
    coords = [
        geometry.pca_project(np.asarray(acts.layer(i)[idx], dtype=np.float32), 3, seed)[0]
        for i in range(acts.n_layers)
    ]
    show(
        plots.layer_slider_3d(
            coords,
            [str(i) for i in range(acts.n_layers)],
            position,
            "position",
            hover=hover,
            title=f"{spec}: 3-D PCA per layer, coloured by position",
        ),
        f"pca3d-{spec}",
    )
    chosen = np.unique(np.linspace(0, acts.n_layers - 1, umap_layers).round().astype(int))
    umap_idx = idx[: min(len(idx), 1000)]
    coords = [
        geometry.umap_project(np.asarray(acts.layer(i)[umap_idx], dtype=np.float32), 3, seed=seed)
        for i in chosen
    ]
    show(
        plots.layer_slider_3d(
            coords,
            [str(i) for i in chosen],
            position[: len(umap_idx)],
            "position",
            hover=hover[: len(umap_idx)],
            title=f"{spec}: 3-D UMAP of selected layers",
        ),
        f"umap3d-{spec}",
    )

# %% [markdown]
# ## What this run shows
#
# The sentences below are generated from the numbers above.

# %%
display(
    Markdown(
        "\n\n".join(
            s for spec in models for s in geometry.findings(summary[summary["model"] == spec], spec)
        )
    )
)

# %%
# NBVAL_CHECK_OUTPUT
for spec in models:
    part = summary[summary["model"] == spec]
    print(spec, "layers split (k>=2):", part.loc[part["k"] >= 2, "layer"].tolist())
    print(spec, "max position variance:", round(float(part["var_position"].max()), 1))

# %%
results.save_results(
    results_path,
    {
        "parameters": {
            "models": models,
            "n_sentences": n_sentences,
            "seed": seed,
            "point_budget": point_budget,
        },
        "corpus": {"sentences": len(words_corpus.sentences), "words": len(words_corpus.words)},
        "models": {spec: acts.meta.get("model", {}) for spec, acts in stores.items()},
        "per_layer": summary,
    },
)
