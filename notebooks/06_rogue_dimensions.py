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
# # Rogue dimensions and layer similarity
#
# Seed 003 ("GPTology") fine-tuned GPT-2 and BERT on SST-2 and QNLI and looked inside. It
# reported that layer-by-layer **CKA** (centred kernel alignment, Kornblith et al. 2019) of
# the pretrained GPT-2 has a block structure (early, middle and last layers), which
# fine-tuning turns into a "bow tie"; that the last layers of GPT-2 are dominated by a few
# **rogue dimensions** (Timkey & van Schijndel 2021), coordinates whose variance dwarfs the
# rest; and that after fine-tuning a **threshold on the single highest-variance dimension**
# classifies SST-2 with 91.3% accuracy against 92.8% for the whole model, while for BERT the
# same threshold gets 76.0% against 92.2%. Zeroing the highest-variance dimensions hurt the
# trained classifier; zeroing the lowest-variance ones barely did.
#
# **What this chapter does not do.** Fine-tuning, the core of seed 003, is not repeated:
# training even the smallest model of this build for a few epochs of SST-2 takes hours on
# the two CPU cores the book is built on, and CI re-executes every chapter. The chapter asks
# the seed's questions of the *pretrained* models instead: how similar their layers are,
# whether they have rogue dimensions, and how much sentiment a single such dimension carries
# before any task training. The sentence vector is the last word's vector (the only position
# a decoder lets see the whole sentence; seed 003's GPT-2 representation) and the mean of the
# words (how the sentence-transformers encoders pool). Special tokens are not stored, so
# BERT's `[CLS]` vector has no counterpart here.
#
# The measures, each implemented once in `lmgeometry.rogue`:
#
# * linear CKA of two representations $X, Y$ of the same $n$ items, column-centred:
#   $\mathrm{CKA} = \lVert Y^\top X\rVert_F^2 / (\lVert X^\top X\rVert_F \lVert Y^\top Y\rVert_F)$;
# * the contribution of dimension $k$ to the mean cosine of the rows,
#   $CC_k = \frac{1}{n(n-1)}\sum_{i\ne j}\hat x_{ik}\hat x_{jk}$, which sums over $k$ to the
#   mean cosine (the anisotropy of chapter "Context measures");
# * the principal rogue dimension: the coordinate of highest variance over the training
#   sentences; a threshold on it fitted on the training sentences (the best cut under 0-1
#   loss) and scored on SST-2 dev; and, as the "full representation", a logistic-regression
#   head on all standardised dimensions.

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_train = 2000
seed = 0
pooling = "auto"
ablation_ks = [0, 1, 3, 10, 30, 100, 300]
cka_words = 3000
n_mnli_sentences = 600
results_path = "06_rogue_dimensions.results.json"

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry import corpus, geometry, plots, results, rogue, store
from lmgeometry.figures import show

sst2, labels, is_dev = rogue.sst2_corpus(n_train=n_train, seed=seed)
stores = {spec: store.activations(spec, sst2) for spec in models}
kinds = {spec: acts.meta["model"]["kind"] for spec, acts in stores.items()}
poolings = {
    spec: (pooling if pooling != "auto" else ("last" if kinds[spec] == "decoder" else "mean"))
    for spec in models
}
print(
    f"SST-2: {n_train} training sentences (seeded sample, >= 4 words), {int(is_dev.sum())} dev "
    f"sentences; models: {', '.join(f'{m} ({kinds[m]}, {poolings[m]} word)' for m in models)}"
)

# %% [markdown]
# ## Layer-by-layer similarity (CKA)
#
# Each heatmap compares every layer of one model with every other, on the SST-2 dev sentence
# vectors (seed 003's Figure 1 for the pretrained GPT-2).

# %%
sentence_layers = {}
for spec, acts in stores.items():
    sentence_layers[spec] = [
        rogue.sentence_vectors(acts.words, acts.layer(i), poolings[spec])[0]
        for i in range(acts.n_layers)
    ]
cka = {}
for spec in models:
    dev_layers = [X[is_dev] for X in sentence_layers[spec]]
    cka[spec] = rogue.cka_matrix(dev_layers)
    n = len(dev_layers)
    show(
        plots.heatmap(
            cka[spec], range(n), range(n), title=f"{spec}: linear CKA between layers (SST-2 dev)",
            x_title="layer", y_title="layer", colorbar_title="CKA",
        ),
        f"cka-{spec}",
    )

# %% [markdown]
# Beyond the seed: because the activation store aligns every model to the same *words*, two
# models with different tokenizers can be compared layer by layer. The heatmap below is the
# CKA between the layers of the first and the second model on the word vectors of the MNLI
# sentences of chapter "Geometry" (a seeded subset of words).

# %%
cross = None
if len(models) >= 2:
    mnli = corpus.mnli_polysemy(n=n_mnli_sentences, seed=seed)
    a_store, b_store = (store.activations(spec, mnli) for spec in models[:2])
    idx = geometry.subsample(a_store.n_words, cka_words, seed)
    cross = rogue.cka_matrix(
        [np.asarray(a_store.layer(i)[idx], dtype=np.float64) for i in range(a_store.n_layers)],
        [np.asarray(b_store.layer(i)[idx], dtype=np.float64) for i in range(b_store.n_layers)],
    )
    show(
        plots.heatmap(
            cross, range(b_store.n_layers), range(a_store.n_layers),
            title=f"CKA between layers of {models[0]} (rows) and {models[1]} (columns)",
            x_title=f"{models[1]} layer", y_title=f"{models[0]} layer", colorbar_title="CKA",
        ),
        "cka-cross",
    )

# %% [markdown]
# ## Rogue dimensions
#
# Seed 003's Figure 3 plots, for each block, the value of every dimension: rogue dimensions
# stand out as spikes. Here each point is a dimension's standard deviation over the training
# sentence vectors; the slider moves through the layers.
#
# Two notions of "rogue" are in use. Seed 003 takes the dimension of highest *variance*;
# Timkey & van Schijndel (2021) rank dimensions by their *contribution to the mean cosine*,
# which a dimension with a large shared mean and little variance can dominate. The table and
# text below report both.

# %%
reports = {}
for spec in models:
    X_layers = sentence_layers[spec]
    show(
        plots.dimension_profile(
            [X[~is_dev].std(axis=0) for X in X_layers],
            title=f"{spec}: standard deviation of each dimension ({poolings[spec]} word)",
            y_title="standard deviation",
        ),
        f"profile-{spec}",
    )
    reports[spec] = rogue.layer_report(
        [X[~is_dev] for X in X_layers], labels[~is_dev],
        [X[is_dev] for X in X_layers], labels[is_dev], seed=seed,
    )
report = pd.concat([r.assign(model=m) for m, r in reports.items()], ignore_index=True)
report["depth"] = report["layer"] / report.groupby("model")["layer"].transform("max")
show(
    plots.lines_by_layer(
        report, "variance_share_top1", x="depth",
        title="Share of the variance held by the principal rogue dimension",
        y_title="variance share of top dimension", reference=None,
    ),
    "variance-share",
)

# %% [markdown]
# ## How much sentiment does one dimension carry?
#
# Solid lines: a threshold on the principal rogue dimension; dashed: a logistic head on all
# dimensions; the dotted line is the majority class of SST-2 dev. The x axis is the layer
# divided by the model's depth.

# %%
long = pd.concat(
    [
        report.assign(classifier="1-D threshold", accuracy=report["threshold_accuracy"]),
        report.assign(classifier="all dimensions", accuracy=report["probe_accuracy"]),
    ],
    ignore_index=True,
)
show(
    plots.lines_by_layer(
        long, "accuracy", x="depth", dash="classifier",
        title="SST-2 dev accuracy of pretrained sentence vectors",
        y_title="accuracy", reference=float(report["majority_baseline"].iloc[0]),
        reference_name="majority class",
    ),
    "threshold-vs-probe",
)

# %% [markdown]
# ## Ablation
#
# As in seed 003's Figure 6, one logistic head is trained on the last layer's full vectors;
# then the $k$ dimensions of highest (top) or lowest (bottom) training variance are zeroed in
# the head's standardised input and the same head is scored on SST-2 dev.

# %%
ablations = []
for spec in models:
    X = sentence_layers[spec][-1]
    ks = [k for k in ablation_ks if k < X.shape[1]]
    curve = rogue.ablation_curve(X[~is_dev], labels[~is_dev], X[is_dev], labels[is_dev], ks,
                                 seed=seed)
    ablations.append(curve.assign(model=spec))
ablation = pd.concat(ablations, ignore_index=True)
show(
    plots.lines_by_layer(
        ablation, "accuracy", x="k", dash="removed",
        title="Last layer: accuracy of a trained head after zeroing k dimensions",
        y_title="accuracy", reference=float(report["majority_baseline"].iloc[0]),
        reference_name="majority class",
    ),
    "ablation",
)

# %% [markdown]
# ## What this run shows
#
# Seed 003's SST-2 numbers, for reference only (fine-tuned GPT-2 and BERT; not this run):

# %%
display(
    pd.DataFrame(rogue.SEED003_SST2).T.rename(
        columns={"threshold": "1-D threshold (%)", "full": "full model (%)"}
    )
)
display(
    Markdown(
        "\n\n".join(
            s
            for spec in models
            for s in rogue.findings(reports[spec], spec, ablation[ablation["model"] == spec])
        )
    )
)

# %%
# NBVAL_CHECK_OUTPUT
print(rogue.summary(report).to_string())

# %%
results.save_results(
    results_path,
    {
        "models": models,
        "poolings": poolings,
        "n_train": n_train,
        "n_dev": int(is_dev.sum()),
        "seed": seed,
        "layer_report": report,
        "ablation": ablation,
        "cka": cka,
        "cross_model_cka": None if cross is None else {"models": models[:2], "matrix": cross},
        "seed003_reference": rogue.SEED003_SST2,
    },
)
