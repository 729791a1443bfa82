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
# # Part of speech: is syntax laid out in the space?
#
# Seed 000 coloured its projections by the part-of-speech tags spaCy assigns and concluded, by
# eye, that **BERT's clusters represent POS tags**, especially in the middle layers, while in
# **GPT-2** the tags lie along the position manifold, because position is encoded more
# strongly than the tag. It did not measure either claim.
#
# This chapter shows the same views for the models of this build (click a tag in the legend to
# hide it, double-click to show it alone; the gray points are all words, for context), then
# measures what the seed looked at: for every layer, the held-out accuracy of a linear probe
# that predicts the universal POS tag (UPOS) from the word vector, trained and tested on
# different sentences, against the majority-class baseline, and the purity of k-means
# clusters with respect to the tags.

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_sentences = 600
seed = 0
point_budget = 1000
probe_words = 6000
results_path = "02_part_of_speech.results.json"

# %%
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import geometry, part_of_speech
from lmgeometry.io import corpus
from lmgeometry.report import plots, results
from lmgeometry.report.figures import show

words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
upos_counts = words_corpus.words["upos"].value_counts()
display(upos_counts.rename("words").to_frame().T)

# %% [markdown]
# ## Projections coloured by part of speech
#
# The same `point_budget` sampled words as in the Geometry chapter, in every layer; the 3-D
# view has a layer slider and, at the top left, a menu for the number of words drawn.

# %%
for spec, acts in stores.items():
    _, words, coords = geometry.sample_projections(acts, point_budget, seed)
    upos = words["upos"].to_numpy()
    hover = geometry.hover_labels(words)
    show(
        plots.layer_grid(
            [xyz[:, :2] for xyz in coords],
            [f"layer {i}" for i in range(len(coords))],
            upos,
            "UPOS",
            categorical=True,
            hover=hover,
            shadow=True,
            title=f"{spec}: first two principal components of every layer, coloured by UPOS",
        ),
        f"pos-grid-{spec}",
    )
    show(
        plots.layer_slider_3d(
            coords,
            [str(i) for i in range(len(coords))],
            upos,
            "UPOS",
            hover=hover,
            categorical=True,
            title=f"{spec}: 3-D PCA per layer, coloured by UPOS",
            seed=seed,
        ),
        f"pos3d-{spec}",
    )

# %% [markdown]
# ## Probing for part of speech, layer by layer
#
# The probe is a multinomial logistic regression on standardised vectors of up to
# `probe_words` words; a quarter of the sentences are held out, so no sentence contributes to
# both training and test. The majority baseline always predicts the most frequent training
# tag. Cluster purity runs k-means (k = number of tags) on unit-normalised vectors.

# %%
probe_table = pd.concat(
    [part_of_speech.probe_by_layer(acts, spec, probe_words, seed) for spec, acts in stores.items()],
    ignore_index=True,
)
long = probe_table.melt(
    id_vars=["model", "depth"],
    value_vars=["probe_accuracy", "cluster_purity", "majority_baseline"],
    var_name="measure",
    value_name="score",
)
show(
    plots.lines_by_layer(
        long,
        "score",
        x="depth",
        dash="measure",
        title="UPOS probe accuracy, cluster purity and majority baseline",
    ),
    "probe-lines",
)
display(probe_table.round(3))

# %% [markdown]
# ## What this run shows
#
# Generated from the table above. Seed 000 judged by eye that BERT's clusters represent POS
# tags, most clearly in the middle layers, and that in GPT-2 the tags lie along the position
# manifold; it measured neither.

# %%
display(Markdown("\n\n".join(part_of_speech.findings(probe_table))))

# %%
# NBVAL_CHECK_OUTPUT
for spec in models:
    part = probe_table[probe_table["model"] == spec]
    print(spec, "layers:", len(part))
    print(spec, "probe accuracy above 0.8 at layer 0:", bool(part["probe_accuracy"].iloc[0] > 0.8))
    print(spec, "probe beats the majority baseline by 30 points in every layer:",
          bool((part["probe_accuracy"] > part["majority_baseline"] + 0.3).all()))

# %%
results.save_results(
    results_path,
    {
        "parameters": {
            "models": models,
            "n_sentences": n_sentences,
            "seed": seed,
            "point_budget": point_budget,
            "probe_words": probe_words,
        },
        "upos_counts": upos_counts,
        "per_layer": probe_table,
        "findings": part_of_speech.findings(probe_table),
    },
)
