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
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry import corpus, geometry, plots, probes, results, store
from lmgeometry.figures import show

words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
upos_counts = words_corpus.words["upos"].value_counts()
display(upos_counts.rename("words").to_frame().T)

# %% [markdown]
# ## Projections coloured by part of speech

# %%
for spec, acts in stores.items():
    idx = geometry.subsample(len(acts.words), point_budget, seed)
    sample_words = acts.words.iloc[idx].reset_index(drop=True)
    upos = sample_words["upos"].to_numpy()
    hover = sample_words["text"].to_numpy()
    panels = [
        geometry.pca_project(np.asarray(acts.layer(i)[idx], dtype=np.float32), 2, seed)[0]
        for i in range(acts.n_layers)
    ]
    show(
        plots.layer_grid(
            panels,
            [f"layer {i}" for i in range(acts.n_layers)],
            upos,
            "UPOS",
            categorical=True,
            hover=hover,
            shadow=True,
            title=f"{spec}: first two principal components of every layer, coloured by UPOS",
        ),
        f"pos-grid-{spec}",
    )
    coords = [
        geometry.pca_project(np.asarray(acts.layer(i)[idx], dtype=np.float32), 3, seed)[0]
        for i in range(acts.n_layers)
    ]
    show(
        plots.layer_slider_3d(
            coords,
            [str(i) for i in range(acts.n_layers)],
            upos,
            "UPOS",
            hover=hover,
            categorical=True,
            title=f"{spec}: 3-D PCA per layer, coloured by UPOS",
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
rows = []
for spec, acts in stores.items():
    idx = geometry.subsample(len(acts.words), probe_words, seed)
    sample_words = acts.words.iloc[idx].reset_index(drop=True)
    upos = sample_words["upos"].to_numpy()
    sentence = sample_words["sentence_id"].to_numpy()
    for layer in range(acts.n_layers):
        X = np.asarray(acts.layer(layer)[idx], dtype=np.float32)
        probe = probes.linear_probe(X, upos, sentence, seed=seed)
        rows.append(
            {
                "model": spec,
                "layer": layer,
                "depth": layer / (acts.n_layers - 1),
                "probe_accuracy": probe.accuracy,
                "majority_baseline": probe.majority_baseline,
                "cluster_purity": probes.cluster_purity(X, upos, seed=seed),
                "n_train": probe.n_train,
                "n_test": probe.n_test,
            }
        )
probe_table = pd.DataFrame(rows)
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

# %%
display(Markdown("\n\n".join(probes.findings(probe_table))))

# %%
# NBVAL_CHECK_OUTPUT
for spec in models:
    part = probe_table[probe_table["model"] == spec]
    best = part.loc[part["probe_accuracy"].idxmax()]
    print(
        spec, "best probe layer:", int(best["layer"]), "accuracy:", round(best["probe_accuracy"], 1)
    )

# %%
results.save_results(
    results_path,
    {
        "parameters": {
            "models": models,
            "n_sentences": n_sentences,
            "seed": seed,
            "probe_words": probe_words,
        },
        "upos_counts": upos_counts,
        "per_layer": probe_table,
    },
)
