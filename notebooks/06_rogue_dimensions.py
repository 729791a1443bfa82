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
# The measures, each implemented once in `lmgeometry.measures.similarity` and
# `lmgeometry.measures.probes`:
#
# * linear CKA of two representations $X, Y$ of the same $n$ items, column-centred:
#   $\mathrm{CKA} = \lVert Y^\top X\rVert_F^2 / (\lVert X^\top X\rVert_F \lVert Y^\top Y\rVert_F)$;
# * the contribution of dimension $k$ to the mean cosine of the rows,
#   $CC_k = \frac{1}{n(n-1)}\sum_{i\ne j}\hat x_{ik}\hat x_{jk}$, which sums over $k$ to the
#   mean cosine (the anisotropy of chapter "Context measures");
# * the principal rogue dimension: the coordinate of highest variance over the training
#   sentences; a threshold on it fitted on the training sentences (the best cut under 0-1
#   loss) and scored on SST-2 dev; and, as the "full representation", a logistic-regression
#   head on all standardised dimensions;
# * ablation (seed 003's Figure 6): a logistic head fitted on the *raw* vectors, scored after
#   the $k$ top- or bottom-variance coordinates of the test vectors are replaced by $c_j$,
#   with $c_j = 0$ (the seed's zeroing) or $c_j = \bar x_j$, the training mean (mean ablation).
#   The head's logit moves by $\sum_j w_j (c_j - x_{ij})$: zeroing also removes each
#   dimension's mean contribution $w_j \bar x_j$, which for a rogue dimension with a large mean
#   is a large shift; mean ablation removes only the dimension's variation.

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

from lmgeometry.activations import store
from lmgeometry.chapters import rogue_dimensions
from lmgeometry.io import corpus
from lmgeometry.measures import probes, similarity
from lmgeometry.report import plots, results
from lmgeometry.report.figures import show

sst2, labels, is_dev = corpus.sst2_corpus(n_train=n_train, seed=seed)
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
# vectors (seed 003's Figure 1 for the pretrained GPT-2). Its rows are sentence vectors (a
# decoder's last word, an encoder's mean word), so the first-word outliers discussed below
# enter them only through the mean pooling of the encoder, whose first words are not outliers.

# %%
sentence_layers = {}
for spec, acts in stores.items():
    sentence_layers[spec] = [
        rogue_dimensions.sentence_vectors(acts.words, acts.layer(i), poolings[spec])[0]
        for i in range(acts.n_layers)
    ]
cka = {}
for spec in models:
    dev_layers = [X[is_dev] for X in sentence_layers[spec]]
    cka[spec] = similarity.cka_matrix(dev_layers)
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
# models with different tokenizers can be compared layer by layer. The rows of these CKA
# matrices are *word* vectors (not sentence vectors): a seeded subset of the words of the MNLI
# sentences of chapter "Geometry", at every position of the sentence.
#
# Linear CKA sums inner products over pairs of rows, so a few rows with very large norms can
# dominate it. Decoders run without a BOS token, as here, are known to put a huge hidden state
# on the first position (the "attention sink" of Xiao et al. 2023; the "massive activations"
# of Sun et al. 2024). Each matrix is therefore computed twice: on all sampled words, and
# without the words that open a sentence. The first line plot gives, for each layer of the
# second model, the CKA of the best-matching layer of the first: on all words; without the
# first words; and without the first words *and* the second model's highest-variance
# dimension (a rogue dimension weighs on linear CKA the same way an outlier row does). The
# second gives the first word's median norm relative to the other words'.

# %%
cross = cross_without_first = cross_table = None
cross_text: list[str] = []
if len(models) >= 2:
    mnli = corpus.mnli_polysemy(n=n_mnli_sentences, seed=seed)
    a_store, b_store = (store.activations(spec, mnli) for spec in models[:2])
    if not a_store.words[["sentence_id", "word_index"]].equals(
        b_store.words[["sentence_id", "word_index"]]
    ):
        raise ValueError("the two stores do not hold the same words")
    idx = similarity.subsample(a_store.n_words, cka_words, seed)
    first_word = a_store.words["word_index"].to_numpy()[idx] == 0
    cross, cross_without_first, cross_table = similarity.cross_model_cka(
        [a_store.layer(i, idx, dtype=np.float64) for i in range(a_store.n_layers)],
        [b_store.layer(i, idx, dtype=np.float64) for i in range(b_store.n_layers)],
        first_word,
    )
    for matrix, rows, name in [
        (cross, f"all {len(idx)} words", "cka-cross"),
        (cross_without_first, f"{int((~first_word).sum())} words, first words left out",
         "cka-cross-without-first"),
    ]:
        show(
            plots.heatmap(
                matrix, range(b_store.n_layers), range(a_store.n_layers),
                title=f"CKA between layers of {models[0]} (rows) and {models[1]} (columns): "
                f"{rows}",
                x_title=f"{models[1]} layer", y_title=f"{models[0]} layer",
                colorbar_title="CKA",
            ),
            name,
        )
    best = pd.concat(
        [
            cross_table.assign(rows="all words", value=cross_table["best_cka_all"]),
            cross_table.assign(rows="first words left out",
                               value=cross_table["best_cka_without_first"]),
            cross_table.assign(
                rows="first words and top dimension left out",
                value=cross_table["best_cka_without_first_and_top_dim"],
            ),
        ],
        ignore_index=True,
    ).assign(model=f"best {models[0]} layer")
    fig = plots.lines_by_layer(
        best, "value", dash="rows",
        title=f"Best cross-model CKA for each {models[1]} layer",
        y_title="CKA of the best-matching layer",
    )
    fig.update_layout(xaxis_title=f"{models[1]} layer")
    show(fig, "cka-cross-best")
    fig = plots.lines_by_layer(
        cross_table.assign(model=models[1]), "first_word_norm_ratio",
        title=f"{models[1]}: median norm of first words / median norm of the other words",
        y_title="norm ratio (log scale)", reference=1.0, reference_name="equal norms",
    )
    fig.update_layout(xaxis_title=f"{models[1]} layer")
    fig.update_yaxes(type="log")
    show(fig, "first-word-norm-ratio")
    cross_text = rogue_dimensions.cross_cka_findings(
        cross_table, models[0], models[1], len(idx), int(first_word.sum())
    )
    display(Markdown(" ".join(cross_text)))

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
    reports[spec] = rogue_dimensions.layer_report(
        [X[~is_dev] for X in X_layers], labels[~is_dev],
        [X[is_dev] for X in X_layers], labels[is_dev], seed=seed,
    )
report = pd.concat([r.assign(model=m) for m, r in reports.items()], ignore_index=True)
# depth = layer / number of layers (transformer blocks; the last layer has depth 1)
report["depth"] = report["layer"] / report.groupby("model")["layer"].transform("max")
fig = plots.lines_by_layer(
    report, "variance_share_top1", x="depth",
    title="Share of the variance held by the principal rogue dimension",
    y_title="variance share of top dimension", reference=None,
)
show(fig, "variance-share")

# %% [markdown]
# ## How much sentiment does one dimension carry?
#
# Solid lines: a threshold on the principal rogue dimension; dashed: a logistic head on all
# dimensions; the dotted line is the majority class of SST-2 dev. The x axis is the depth:
# the layer divided by the model's number of layers (transformer blocks), so models with
# different numbers of layers share it.

# %%
long = pd.concat(
    [
        report.assign(classifier="1-D threshold", accuracy=report["threshold_accuracy"]),
        report.assign(classifier="all dimensions", accuracy=report["probe_accuracy"]),
    ],
    ignore_index=True,
)
fig = plots.lines_by_layer(
    long, "accuracy", x="depth", dash="classifier",
    title="SST-2 dev accuracy of pretrained sentence vectors",
    y_title="accuracy", reference=float(report["majority_baseline"].iloc[0]),
    reference_name="majority class",
)
show(fig, "threshold-vs-probe")

# %% [markdown]
# ## Ablation
#
# Seed 003's Figure 6 protocol: one logistic head is fitted on the last layer's *raw* training
# vectors (the seed feeds GPT-2's raw hidden state to its classification head); then the $k$
# dimensions of highest (top) or lowest (bottom) training variance of the SST-2 dev vectors
# are ablated and the same head is scored. Two ablations, one figure each:
#
# * **zero** (the seed's): the raw coordinates are set to 0;
# * **mean**: they are set to their training mean, which removes what the dimensions vary by
#   and keeps the rest of each vector where the head expects it.
#
# The seed ablates a fine-tuned GPT-2; these heads read pretrained vectors.

# %%
ablations = []
for spec in models:
    X = sentence_layers[spec][-1]
    ks = [k for k in ablation_ks if k < X.shape[1]]
    for mode in probes.ABLATION_MODES:
        curve = probes.ablation_curve(X[~is_dev], labels[~is_dev], X[is_dev], labels[is_dev],
                                     ks, mode=mode)
        ablations.append(curve.assign(model=spec))
ablation = pd.concat(ablations, ignore_index=True)
print("every head converged:", bool(ablation["head_converged"].all()))
ablation_titles = {
    "zero": "Zero ablation (seed 003): raw coordinates of k dimensions set to 0",
    "mean": "Mean ablation: k dimensions set to their training mean",
}
for mode, title in ablation_titles.items():
    fig = plots.lines_by_layer(
        ablation[ablation["mode"] == mode], "accuracy", x="k", dash="removed",
        title=f"Last layer, head on raw vectors. {title}",
        y_title="SST-2 dev accuracy", reference=float(report["majority_baseline"].iloc[0]),
        reference_name="majority class",
    )
    fig.update_layout(xaxis_title="k (dimensions ablated, by training variance)")
    show(fig, f"ablation-{mode}")

# %% [markdown]
# ## What this run shows
#
# Seed 003's SST-2 numbers, for reference only (fine-tuned GPT-2 and BERT; not this run):

# %%
display(
    pd.DataFrame(rogue_dimensions.SEED003_SST2).T.rename(
        columns={"threshold": "1-D threshold (%)", "full": "full model (%)"}
    )
)
display(
    Markdown(
        "\n\n".join(
            s
            for spec in models
            for s in rogue_dimensions.findings(
                reports[spec], spec, ablation[ablation["model"] == spec]
            )
        )
        + ("\n\n" + " ".join(cross_text) if cross_text else "")
    )
)

# %%
# NBVAL_CHECK_OUTPUT
print(rogue_dimensions.summary(report).to_string())

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
        "cross_model_cka": None if cross is None else {
            "models": models[:2],
            "words": int(len(idx)),
            "first_words": int(first_word.sum()),
            "matrix": cross,
            "matrix_without_first_words": cross_without_first,
            "per_layer": cross_table,
        },
        "seed003_reference": rogue_dimensions.SEED003_SST2,
    },
)
