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
# forms two very separate clusters**, that "for the lower layers, the embedding space stays
# mostly the same", and that it "makes some big changes in the last layer, where the
# separation decreases". Projecting the two clusters separately, it found in one of them a
# manifold "similar to the Swiss roll" along which the absolute position of the token in its
# sentence runs: position is GPT-2's globally dominant feature. The seed's surviving text does
# not say in words which tokens make the other cluster; it later refers back to GPT-2
# emphasising "this initial token" (position 0), whose representations differ from all
# others. **BERT** showed no such split: several small clouds in the lower layers that merge
# into a few larger clusters and a "wing-like shape" in the last layer, with position encoded
# only locally.
#
# This chapter repeats the views for the models of this build and measures what the seed
# described by eye: whether a layer splits into well-separated clusters (k-means on the top
# principal components, kept when the silhouette reaches 0.5), how far apart the clusters are,
# which words they hold, how much of each layer's variance the word's position, its part of
# speech and its identity explain (with and without the first word of each sentence), and
# whether position is a smooth function of where a word lies (a position manifold).
#
# **The last layer.** For decoders, `transformers` returns as the last hidden state the output
# after the model's final normalisation (GPT-2's `ln_f`, the final RMSNorm of Llama-style
# models such as SmolLM2), not the last block's raw output; every earlier layer of a decoder is
# a block's raw output (see the docstring of `lmgeometry.activations.extract`). The last layer of a
# decoder is therefore rescaled, and the jump in norms and cluster structure at the last layer in
# the
# figures below is, at least in part, this normalisation. If the seed used the same convention
# (it does not say), its GPT-2 last layer, where the separation decreased, was also taken after
# `ln_f`.

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_sentences = 600
seed = 0
point_budget = 1000
umap_layers = 4
results_path = "01_geometry.results.json"

# %%
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import geometry
from lmgeometry.io import corpus
from lmgeometry.report import plots, results
from lmgeometry.report.figures import show

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
# `point_budget` words (the same in every layer) keeps the pages light.

# %%
analyses = {spec: geometry.model_geometry(acts, spec, point_budget, seed)
            for spec, acts in stores.items()}
for spec, g in analyses.items():
    show(
        plots.layer_grid(
            [xyz[:, :2] for xyz in g.coords],
            [f"layer {i}" for i in range(len(g.coords))],
            g.words["word_index"].to_numpy(),
            "position",
            hover=geometry.hover_labels(g.words),
            title=f"{spec}: first two principal components of every layer, coloured by position",
        ),
        f"pca-grid-{spec}",
    )
summary = pd.concat([g.summary for g in analyses.values()], ignore_index=True)

# %% [markdown]
# ## Clusters and what drives the global structure
#
# For every layer: the best k-means split (k = 2 to 4) of the words on the top 50 principal
# components and its silhouette (a layer counts as split when it reaches 0.5). The x axis of
# the line figures is the depth, layer / number of layers (0 is the embedding output, 1 the
# last layer), so models of different depths share a plot.
#
# **The first word.** A decoder run without a beginning-of-sequence token (SmolLM2 here, GPT-2
# in the seed) makes the first token of every sentence its *attention sink*: later tokens
# attend to it heavily (Xiao et al. 2023, "Efficient streaming language models with attention
# sinks"), and its hidden state carries *massive activations*, a few coordinates far larger
# than anywhere else (Sun et al. 2024, "Massive activations in large language models").
# `norm_ratio_first` is the first words' mean vector norm over the other words'. A small group
# of far-away points can dominate any all-word measure of variance, so the measures below are
# given over all words and over the words after the first (`_later`).
#
# **Variance explained** is omega-squared (ω², Hays 1963, generalised to vectors): the share of
# the total variance that lies between the groups of an attribute, less what chance alone would
# put there. It is about 0 for an attribute unrelated to the vectors and 1 when words sharing
# the attribute share a vector. Being an estimate with that correction subtracted, it can fall
# below 0 (the true share cannot): a negative value means the grouping explains less than
# chance would, which happens for an attribute with many values (word identity) when a few
# outliers inflate the variance within its groups. Position is binned as 0, 1, 2-3, 4-7, 8-15,
# 16-31, 32+ (`var_position`); `var_first` groups the words only as first or not.
#
# **A position manifold.** Seed 000 saw position run along a rolled-up curve. Such a curve is
# monotone in no single principal component, so a correlation with one component would miss
# it. The test used here is nonlinear: among the words after the first, projected on their own
# top 3 principal components, a 10-nearest-neighbour regression predicts each word's position
# from its neighbours' positions, with 5-fold cross-validation that holds out all words of a
# sentence together (fixed seed). `position_knn_r2` is its R² (1 - residual variance / variance
# of position); `position_knn_shuffled` is the largest R² of the same regression on 5 seeded
# shuffles of the positions, what it scores by chance. A clean Swiss roll scores R² near 1
# (see `tests/test_geometry.py`). **Rule:** a layer holds a position manifold when R² >= 0.8;
# position is predicted above chance where R² exceeds its shuffled baseline.

# %%
omega_title = "ω² (chance-corrected share of variance; < 0: less than chance)"

show(
    plots.lines_by_layer(
        summary,
        "silhouette",
        x="depth",
        title="Best k-means silhouette per layer (0.5 and above: well-separated clusters)",
        y_title="mean silhouette (-1 to 1)",
        reference=0.5,
        reference_name="0.5",
    ),
    "silhouette",
)
show(
    plots.lines_by_layer(
        summary,
        "norm_ratio_first",
        x="depth",
        title="Mean norm of the first words' vectors over the other words' (log scale)",
        y_title="norm ratio, first words / other words",
        reference=1.0,
        reference_name="1",
    ).update_layout(yaxis_type="log"),
    "first-word-norm",
)
show(
    plots.column_lines(
        summary,
        {"var_position": "position", "var_first": "first word or not",
         "var_upos": "part of speech", "var_word": "word identity"},
        y_title=omega_title,
        title="Variance explained over all words",
        reference=0.0,
        reference_name="0",
    ),
    "variance-explained",
)
show(
    plots.column_lines(
        summary,
        {"var_position_later": "position", "var_upos_later": "part of speech",
         "var_word_later": "word identity"},
        y_title=omega_title,
        title="Variance explained among the words after the first",
        reference=0.0,
        reference_name="0",
    ),
    "variance-explained-later",
)
show(
    plots.column_lines(
        summary,
        {"position_knn_r2": "real positions", "position_knn_shuffled": "shuffled (largest of 5)"},
        y_title="cross-validated R² of position (1: determined by location)",
        title="Position predicted from the top 3 PCs by 10-NN regression (words after the first)",
        reference=geometry.MANIFOLD_R2,
        reference_name=f"manifold rule: R² >= {geometry.MANIFOLD_R2}",
    ),
    "position-knn",
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
            "position0_in_minor",
            "norm_ratio_first",
            "var_position",
            "var_first",
            "var_upos",
            "var_word",
            "var_position_later",
            "var_upos_later",
            "var_word_later",
            "position_knn_r2",
            "position_knn_shuffled",
            "mean_norm",
        ]
    ].round(3)
)

# %% [markdown]
# ## The clusters, one at a time
#
# Seed 000 separated GPT-2's two clusters and projected each on its own, which revealed the
# position manifold inside one of them (its "right" cluster). Here, for each model, the layer
# whose split is the widest (if any layer splits) is separated the same way.

# %%
for spec, acts in stores.items():
    g = analyses[spec]
    layer = geometry.widest_split(g.summary)
    if layer is None:
        display(Markdown(f"*{spec}: no layer splits into well-separated clusters.*"))
        continue
    labels = g.clusters[layer].labels
    display(Markdown(f"**{spec}, layer {layer}**"))
    display(geometry.cluster_profile(g.words, labels).round(3))
    position = g.words["word_index"].to_numpy()
    show(
        plots.side_by_side(
            geometry.cluster_projections(acts.layer(layer, g.rows), labels, seed),
            [f"cluster {c} ({(labels == c).sum()} words)" for c in range(labels.max() + 1)],
            [position[labels == c] for c in range(labels.max() + 1)],
            "position",
            title=f"{spec}, layer {layer}: each cluster projected on its own principal components",
        ),
        f"clusters-{spec}",
    )

# %% [markdown]
# ## Interactive 3-D views
#
# Drag to rotate, scroll to zoom; the slider picks the layer and the menu at the top left how
# many of the sampled words are drawn (fewer points draw faster). The PCA view keeps the
# global structure; the UMAP view (initialised from PCA, cosine metric) keeps local
# neighbourhoods and is computed for `umap_layers` evenly spaced layers only.

# %%
for spec, acts in stores.items():
    g = analyses[spec]
    position = g.words["word_index"].to_numpy()
    hover = geometry.hover_labels(g.words)
    show(
        plots.layer_slider_3d(
            g.coords,
            [str(i) for i in range(len(g.coords))],
            position,
            "position",
            hover=hover,
            title=f"{spec}: 3-D PCA per layer, coloured by position",
            seed=seed,
        ),
        f"pca3d-{spec}",
    )
    chosen, coords = geometry.umap_layers(acts, g.rows, umap_layers, seed)
    show(
        plots.layer_slider_3d(
            coords,
            [str(i) for i in chosen],
            position,
            "position",
            hover=hover,
            title=f"{spec}: 3-D UMAP of selected layers",
            seed=seed,
        ),
        f"umap3d-{spec}",
    )

# %% [markdown]
# ## What this run shows
#
# The sentences below are generated from the numbers above, with the rules stated in this
# chapter (silhouette >= 0.5 for a split; a split is a first-word split when its smaller
# clusters hold at least 90% of the first words; a layer's leading attribute is named "whether
# the word is its sentence's first" when that indicator's ω² is at least 90% of position's;
# k-NN R² >= 0.8 for a position manifold). Seed 000 reported, for GPT-2, two well-separated
# clusters whose separation decreases in the last layer, and a position manifold inside one of
# them; for BERT, no such split, small clouds merging into a few clusters. The comparison
# sentences use the model's kind (decoder: GPT-2, encoder: BERT). For a decoder, remember that
# the last layer is taken after the final normalisation (see the top of this chapter).

# %%
display(
    Markdown(
        "\n\n".join(
            s for spec, g in analyses.items() for s in geometry.findings(g.summary, spec, g.kind)
        )
    )
)

# %%
# NBVAL_CHECK_OUTPUT
for spec, g in analyses.items():
    part = g.summary
    split = part[part["k"] >= 2]
    print(spec, "layers:", len(part), "split:", len(split))
    print(spec, "split layers mostly position 0:",
          int((split["minor_position0_share"].astype(float) >= 0.9).sum()))
    print(spec, "position explains over half the variance somewhere:",
          bool((part["var_position"] > 0.5).any()))
    print(spec, "first word or not explains over half the variance somewhere:",
          bool((part["var_first"] > 0.5).any()))
    print(spec, "position explains over 10% among later words somewhere:",
          bool((part["var_position_later"] > 0.1).any()))
    print(spec, "position manifold layers (k-NN R2 >= 0.8):",
          int((part["position_knn_r2"] >= geometry.MANIFOLD_R2).sum()))

# %%
results.save_results(
    results_path,
    {
        "parameters": {
            "models": models,
            "n_sentences": n_sentences,
            "seed": seed,
            "point_budget": point_budget,
            "umap_layers": umap_layers,
        },
        "corpus": {"sentences": len(words_corpus.sentences), "words": len(words_corpus.words)},
        "models": {spec: acts.meta.get("model", {}) for spec, acts in stores.items()},
        "per_layer": summary,
        "findings": [s for spec, g in analyses.items()
                     for s in geometry.findings(g.summary, spec, g.kind)],
    },
)
