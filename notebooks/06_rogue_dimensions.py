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

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_train: int = 2000
n_qnli_train: int = 1000
n_qnli_test: int = 500
seed: int = 0
pooling: str = "auto"
n_boot: int = 1000
ablation_ks: list[int] = [0, 1, 3, 10, 30, 100, 300]
ablation_k: int = 3
cka_words: int = 3000
n_mnli_sentences: int = 600
results_path: str = "06_rogue_dimensions.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
import pandas as pd
from IPython.display import HTML, Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import rogue_dimensions
from lmgeometry.chapters.common import checked_parameters, claims_per_model, model_kinds
from lmgeometry.io import corpus
from lmgeometry.io.models import pair_separator
from lmgeometry.report import plots, results
from lmgeometry.report.claims import findings_box, show_every_claim, show_verdict_grid
from lmgeometry.report.figures import show, show_table
from lmgeometry.report.prose import glue_values

globals().update(checked_parameters(globals()))
glue_values(n_train=n_train, n_qnli_train=n_qnli_train,
            n_qnli_test=n_qnli_test, ablation_k=ablation_k)

sst2, sst2_labels, sst2_dev = corpus.sst2_corpus(n_train=n_train, seed=seed)
qnli = {spec: corpus.qnli_corpus(n_qnli_train, n_qnli_test, seed, pair_separator(spec))
        for spec in models}
qnli_labels, qnli_test = next(iter(qnli.values()))[1:]
tasks = [
    rogue_dimensions.Task("SST-2", {spec: store.activations(spec, sst2) for spec in models},
                          sst2_labels, sst2_dev),
    rogue_dimensions.Task("QNLI", {spec: store.activations(spec, c) for spec, (c, _, _)
                                   in qnli.items()}, qnli_labels, qnli_test),
]
mnli = corpus.mnli_polysemy(n=n_mnli_sentences, seed=seed)
cross = {spec: store.activations(spec, mnli) for spec in models}
result = rogue_dimensions.analyse(tasks, cross, seed=seed, n_boot=n_boot, pooling=pooling,
                                  ablation_ks=ablation_ks, ablation_k=ablation_k,
                                  cka_words=cka_words)
t = result.tables

# %% tags=["remove-cell"]
from lmgeometry.report import narrative  # the written answer and paragraph (report/narrative.py)

# %% tags=["remove-input"]
display(HTML(findings_box(
    result.claims, model_kinds(cross), models=models,
    answer=narrative.plain_answer("06_rogue_dimensions", {"claims": result.claims},
                                  strict=False),
    question="Do pretrained models already show GPTology's (2022) block-structured layer "
    "similarity and "
    "rogue dimensions, and does one dimension carry the task?",
    caveat="No fine-tuning here (the next chapter does it): these are pretrained models with a "
    "logistic head on frozen sentence vectors, while the seed's numbers are from fine-tuned "
    "GPT-2 and BERT.")))

# %% [markdown]
# The answer in one figure: the share of the variance that each layer's top dimension holds,
# per task. Look at whether the share climbs in the last layers, where GPTology (2022) saw a few
# rogue
# dimensions dominate.

# %% tags=["remove-input"]
show(
    plots.facet_lines(t["layers"], "variance_share_top1", "task", x="depth",
                      lower="variance_share_top1_lo", upper="variance_share_top1_hi",
                      title="Share of the variance held by the principal rogue dimension",
                      y_title="variance share of the top dimension"),
    "variance-share",
)

# %% [markdown]
# GPTology {cite:p}`gptology` fine-tuned GPT-2 and BERT on SST-2
# {cite:p}`socher2013` and QNLI {cite:p}`rajpurkar2016,wang2019glue` and looked inside. It
# reported that layer-by-layer **CKA** (centred kernel alignment, {cite:alp}`kornblith2019`) of
# the pretrained GPT-2 has a block structure (early, middle and last blocks), which
# fine-tuning turns into a "bow tie"; that the last blocks of GPT-2 are dominated by a few
# **rogue dimensions** {cite:p}`timkey2021`, coordinates whose variance dwarfs the
# rest; and that after fine-tuning a **threshold on the single highest-variance dimension**
# classifies SST-2 with 91.3% accuracy against 92.8% for the whole model (QNLI: 86.6% against
# 88.2%), while for BERT the same threshold gets 76.0% against 92.2% (QNLI: 81.9% against
# 89.7%). Zeroing the highest-variance dimensions hurt the trained classifier; zeroing the
# lowest-variance ones barely did.
#
# **What this chapter does not do.** Fine-tuning, the core of GPTology (2022), is the subject of the
# next chapter, "Fine-tuning and rogue dimensions", which fine-tunes an encoder and a decoder
# on both tasks. This chapter asks the seed's questions of the *pretrained* models, on both
# of the seed's tasks and for all four models: how similar their layers are, whether they have
# rogue dimensions, and how much of each task a single such dimension carries before any task
# training. The sentence vector is the last word's vector for a decoder (the only position a
# decoder lets see the whole input; GPTology's (2022) GPT-2 representation) and the mean of the
# words
# for an encoder (how the sentence-transformers encoders pool). Special tokens are not used in
# this chapter, so BERT's `[CLS]` vector has no counterpart here (chapter
# [Fine-tuning](07_finetuning.ipynb) reads MiniLM's `[CLS]`).
#
# The measures, each implemented once in the package (the Python API page gives each):
#
# * linear CKA of two representations $X, Y$ of the same $n$ items, column-centred:
#   $\mathrm{CKA} = \lVert Y^\top X\rVert_F^2 / (\lVert X^\top X\rVert_F \lVert Y^\top Y\rVert_F)$;
# * the contribution of dimension $k$ to the mean cosine of the rows,
#   $CC_k = \frac{1}{n(n-1)}\sum_{i\ne j}\hat x_{ik}\hat x_{jk}$, which sums over $k$ to the
#   mean cosine (the anisotropy of chapter "Context measures");
# * the principal rogue dimension: the coordinate of highest variance over the training
#   sentences; a threshold on it chosen on the training sentences (the best cut under 0-1
#   loss) and scored on held-out sentences; the "full representation": a logistic-regression
#   head on all standardised dimensions, fitted on the same training sentences; the majority
#   baseline: always answering the training set's more frequent label;
# * ablation (GPTology's (2022) Figure 6): the same head, scored after the $k$ top- or
#   bottom-variance coordinates of the held-out vectors are replaced by $c_j$, with $c_j = 0$
#   (the seed's zeroing) or $c_j = \bar x_j$, the training mean (mean ablation). The head's
#   logit moves by $\sum_j w_j (c_j - x_{ij})$: zeroing also removes each dimension's mean
#   contribution $w_j \bar x_j$, which for a rogue dimension with a large mean is a large
#   shift; mean ablation removes only the dimension's variation.

# %% [markdown]
# **Data.** SST-2: a seeded sample of {glue:md}`n_train` training sentences of at least four words,
# and the whole dev split (872 sentences) held out, as the seed evaluates on it. QNLI: the
# mirror holds only GLUE's dev split (5,463 pairs), so one seeded permutation of it gives
# {glue:md}`n_qnli_train` training pairs and the next {glue:md}`n_qnli_test` held-out pairs; no
# pair is on both
# sides. Each pair is one input, question then sentence, joined the way each model kind
# expects: an encoder's own separator token(s) between them (MiniLM's `[SEP]`, MPNet's
# `</s></s>`: the same token ids as the tokenizer's pair template, with segment ids left at
# 0), a decoder's plain running text (as GPT-2's tokenizer joins a pair). The separator is in
# the input but pooled into no word.

# %% tags=["remove-input"]
show_table(t["tasks"],
           'The tasks of this chapter: sentences and labels read from SST-2 and QNLI.')

# %% [markdown]
# ```{admonition} How this differs from the seed
# * **No fine-tuning**: every number is from pretrained (and, for MiniLM and MPNet,
#   contrastively fine-tuned sentence-embedding) models; the seed's accuracies are from models
#   fine-tuned on each task. The "full representation" is a logistic head on frozen sentence
#   vectors, not the fine-tuned network.
# * **Models**: no GPT-2 or BERT; two sentence encoders (mean of the words) and two 4-bit
#   decoders (last word). Special tokens are not used here, so there is no `[CLS]` vector.
# * **QNLI** comes from its dev split only, split once into training and held-out pairs; the
#   seed trained on the train split and scored the dev split.
# * **The 1-D threshold** is the best cut on the training sentences under 0-1 loss; the seed
#   fitted a 1-D SVM. Both are scored on held-out sentences only, and compared with the
#   majority baseline explicitly.
# * **One head per layer**: the accuracy of "all dimensions" in the layer table and the
#   unablated point of the ablation curves are the same head's, so there is one number for it.
# * **Intervals**, absent from the seed: bootstrap over the held-out sentences (accuracy
#   differences, CKA), over the training sentences (variance shares), Wilson intervals for
#   single accuracies.
# * **First word**: a decoder's sentence vector is its last word's, never a sentence's first
#   word (SST-2 sentences have at least four words, QNLI inputs more), so the "first word
#   excluded" control of the other chapters would leave every number unchanged and is not
#   repeated. The attention sink can still shape the last word through attention; only a run
#   with BOS prepended would control that (not done here). The cross-model comparison below,
#   which uses every word, is computed with and without first words.
# ```
#
# ## Layer-by-layer similarity (CKA)
#
# Each heatmap compares every layer of one model with every other, on the held-out SST-2
# sentence vectors (GPTology's (2022) Figure 1 for the pretrained GPT-2). The claim "CKA has a block
# structure" is read as: adjacent blocks are more similar than blocks at least half the
# network apart, mean CKA at lag 1 minus mean CKA at lag >= L/2 over blocks 1..L (the
# embedding layer 0 left out, as the seed looks at decoder blocks), above **0.1**, a tenth of
# CKA's range. Its interval comes from resampling the held-out sentences; CKA of a resample
# with repeated sentences is biased upwards, most for dissimilar layers, so the interval is
# conservative on the side of the claim.

# %% tags=["remove-input"]
for spec, matrix in rogue_dimensions.cka_matrices(t["cka"], "SST-2").items():
    n = len(matrix)
    show(plots.heatmap(matrix, range(n), range(n),
                       title=f"{spec}: linear CKA between layers (SST-2 held-out sentences)",
                       x_title="layer", y_title="layer", colorbar_title="CKA"),
         f"cka-{spec}")

# %% [markdown]
# ## Rogue dimensions
#
# GPTology's (2022) Figures 3-4 plot, for each block, the value of every dimension: rogue dimensions
# stand out as spikes. Here each point is a dimension's standard deviation over the training
# sentence vectors of the last layer, for each task. Two notions of "rogue" are in use: seed
# 003 takes the dimension of highest *variance*; {cite:t}`timkey2021` rank dimensions
# by their *contribution to the mean cosine*, which a dimension with a large shared mean and
# little variance can dominate. The layer table reports both.

# %% tags=["remove-input"]
for spec, (stds, task_names) in rogue_dimensions.task_profiles(t["profile"]).items():
    show(plots.dimension_profile(
        stds, title=f"{spec}: standard deviation of each dimension, last layer (slider: task)",
        y_title="standard deviation", layer_labels=task_names),
        f"profile-{spec}")

# %% [markdown]
# The first figure, at the top of the page, gives the share of the variance held by the top
# dimension, per layer, with a band from resampling the training sentences. Two claims read it:
# **a few rogue dimensions dominate the last layer** (the top three dimensions hold more than half
# the variance; an isotropic cloud gives them 3/d, under 1%), and, beyond the seed (which shows
# the blocks of a *fine-tuned* GPT-2 only; chapter 7 tests it there), **rogue dimensions emerge in
# the later blocks** (Spearman's rho of the top-1 share with the block index above 0.5, a "large"
# correlation, with the interval of the same resampling). Each claim is also run where it
# should fail. Rogue dimensions are *coordinates*: the same vectors in a random orthonormal
# basis keep every distance and the spread along every direction, but no coordinate stands
# out, so the top three should then hold little of the variance. The emergence is a claim
# about depth: with the blocks in random orders, the trend should vanish.

# %% [markdown]
# ## How much of the task does one dimension carry?
#
# One line style per classifier: a threshold on the principal rogue dimension, the logistic
# head on all dimensions, and the majority baseline, all scored on held-out sentences, with
# Wilson bands. The x axis is the depth, layer / last layer. GPTology (2022) makes these claims of
# fine-tuned models only (chapter 7 tests them there); on pretrained models they are this
# book's, beyond the seed: the threshold **beats the majority class** by more than five
# points, and it **nearly matches a linear head** when the head is less than five points
# ahead. Both are paired differences on the same held-out sentences, with intervals from
# resampling them. A layer whose threshold scores *below* the majority baseline has a cut
# that fits noise in the training sentences; a threshold *equal* to it has found no cut
# better than answering one class for every sentence (*threshold answers one class* in the layer
# table). The layer table
# gives the difference from the majority baseline with its interval for every layer.

# %% tags=["remove-input"]
layers = t["layers"]
show(
    plots.facet_lines(rogue_dimensions.accuracy_long(layers), "accuracy", "task", x="depth",
                      dash="classifier", lower="lo", upper="hi",
                      title="Held-out accuracy of pretrained sentence vectors", y_title="accuracy"),
    "threshold-vs-head",
)
show_table(layers[["model", "layer", "task", "rogue_dim", "variance_share_top1",
                   "cosine_dim", "cosine_share_cosine_dim", "threshold_accuracy",
                   "head_accuracy", "majority_accuracy", "threshold_one_class",
                   "threshold_minus_majority",
                   "threshold_minus_majority_lo", "threshold_minus_majority_hi"]].round(3),
           'Per model, layer and task: the rogue dimension (largest variance share), the '
           'dimension that contributes most to the mean cosine, and the 1-D threshold '
           "classifier's accuracy against the model's own head and the majority class.")

# %% [markdown]
# ## Ablation
#
# GPTology's (2022) Figure 6 protocol: the last layer's head (the same head as above); the $k$
# dimensions of highest (top) or lowest (bottom) training variance of the held-out vectors
# are ablated and the same head is scored. Two ablations, one figure each: **zero** (the
# seed's: the raw coordinates set to 0) and **mean** (set to their training mean, which
# removes what the dimensions vary by and keeps the rest of each vector where the head
# expects it). The claim compares top and bottom at k = {glue:md}`ablation_k`: ablating the top
# dimensions must cost at least two points more than ablating the bottom ones.

# %% tags=["remove-input"]
ablation = t["ablation"]
for mode, title in (("zero", "Zero ablation (GPTology, 2022): raw coordinates of k dimensions set "
                     "to 0"), ("mean", "Mean ablation: k dimensions set to their training "
                               "mean")):
    part = ablation[ablation["mode"] == mode].assign(
        curve=lambda f: f["task"] + ", " + f["removed"])
    fig = plots.lines_by_layer(part, "accuracy", x="k", dash="curve",
                               title=f"Last layer, one head per model. {title}",
                               x_title="k (dimensions ablated, by training variance)",
                               y_title="held-out accuracy")
    show(fig.update_xaxes(type="log"), f"ablation-{mode}")
converged = t["layers"]["head_converged"]
display(Markdown("Every logistic head above converged." if converged.all() else
                 f"{int((~converged).sum())} of {len(converged)} logistic heads did not converge "
                 "within their iteration limit."))

# %% [markdown]
# ## Beyond the seed: layers of two models compared on the same words
#
# Because the activation store aligns every model to the same *words*, two models with
# different tokenizers can be compared layer by layer: the first encoder against each decoder,
# on a seeded subset of the words of the MNLI sentences of chapter "Geometry", at every
# position of the sentence. Linear CKA sums inner products over pairs of rows, so a few rows
# with very large norms dominate it: a decoder run without a BOS token puts a huge hidden
# state on its first position ({cite:alp}`xiao2024,sun2024`), Gemma puts it on its
# `<bos>` token instead. For each decoder layer the figure gives the CKA of the best-matching
# encoder layer on all sampled words, without the first words, and without the first words
# *and* the decoder's highest-variance dimension.

# %% tags=["remove-input"]
cross_table = t["cross_cka"]
show(plots.lines_by_layer(rogue_dimensions.cross_best_long(cross_table), "value", x="depth",
                          dash="rows",
                          title=f"Best CKA of a {cross_table['reference'].iloc[0]} layer for "
                          "each decoder layer", y_title="CKA of the best-matching layer"),
     "cka-cross-best")
show(plots.lines_by_layer(cross_table, "first_word_norm_ratio", x="depth",
                          title="Median norm of first words / median norm of the other words",
                          y_title="norm ratio (log scale)", reference=1.0,
                          reference_name="equal norms").update_yaxes(type="log"),
     "first-word-norm-ratio")

# %% [markdown]
# ## The verdicts
#
# Each row is one of GPTology's (2022) claims as a statistic with its 95% interval, for each task
# and model. The seed's own numbers are from fine-tuned models; these are pretrained ones, so a
# claim that fails here says what fine-tuning would have to create.

# %% tags=["remove-input"]
show_verdict_grid(result.claims, models)

# %% [markdown]
# ## What this run shows

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("06_rogue_dimensions", {"claims": result.claims},
                                     strict=False)))

# %% [markdown]
# ## Appendix: every claim
#
# The sentences generated from the claims, and the full claims table: each claim's statistic,
# 95% interval, threshold and the reason for it, and the paper's own finding. Folded: open it
# to check a number.

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show every claim"}
show_table(pd.DataFrame([{"task": task, "model": m, "1-D threshold (%)": v["threshold"],
                          "full model (%)": v["full"]}
                         for task, rows in rogue_dimensions.SEED003.items()
                         for m, v in rows.items()]),
           "GPTology's (2022) reported accuracies (%) of the 1-D threshold classifier and the full "
           'fine-tuned model, for reference.')
show_every_claim(result.claims, result.sentences, columns=[
    "claim", "model", "statistic", "value", "ci_low", "ci_high", "threshold", "direction",
    "verdict", "published", "rule", "evidence"])

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
for row in rogue_dimensions.last_layers(layers).itertuples():
    print(row.task, row.model, "| layers:", row.layer + 1, "| head accuracy:",
          round(row.head_accuracy, 1), "| top dimension > half the variance:",
          bool(row.variance_share_top1 > 0.5))
print("claims per model:", claims_per_model(result.claims))

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"models": models, "n_train": n_train, "n_qnli_train": n_qnli_train,
                       "n_qnli_test": n_qnli_test, "seed": seed, "pooling": pooling,
                       "n_boot": n_boot, "ablation_ks": ablation_ks,
                       "ablation_k": ablation_k, "cka_words": cka_words,
                       "n_mnli_sentences": n_mnli_sentences},
        "qnli_separators": {spec: c.params["separator"] for spec, (c, _, _) in qnli.items()},
        "seed003_reference": rogue_dimensions.SEED003,
        "sentences": result.sentences,
        **result.results(),
    },
)

# %% [markdown]
# ## References
#
# The works this page cites; [About this build](99_about.ipynb) lists every work
# the book cites.
#
# ```{bibliography}
# :filter: docname in docnames
# ```
