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
# # Model zoo: every model on the same words

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_sentences: int = 600
seed: int = 0
n_words: int = 2000
point_budget: int = 1000
n_boot: int = 1000
w_boot: int = 200
nulls: bool = False  # True: also run every claim on each model's untrained twin (the null;
# about two more minutes of chapter time, off by default to keep the cold book in budget)
results_path: str = "08_model_zoo.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from IPython.display import HTML, Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import nulls as null_models
from lmgeometry.chapters import zoo
from lmgeometry.chapters.common import checked_parameters, model_kinds
from lmgeometry.io import corpus
from lmgeometry.report import claims, plots, results
from lmgeometry.report.figures import show, show_table

globals().update(checked_parameters(globals()))

words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
result = zoo.analyse(stores, seed=seed, n_words=n_words, point_budget=point_budget,
                           n_boot=n_boot, w_boot=w_boot,
                           null_stores=null_models.null_stores(models, words_corpus)
                           if nulls else None)
layers = result.tables["layers"]

# %% tags=["remove-cell"]
from lmgeometry.report import narrative  # the written answer and paragraph (report/narrative.py)

# %% tags=["remove-input"]
display(HTML(claims.findings_box(
    result.claims, model_kinds(stores), models=models,
    answer=narrative.plain_answer("08_model_zoo", {"claims": result.claims},
                                  strict=False),
    question="Do language models lay out the same words in the same way, or are their embedding "
    "spaces \u201cvastly different\u201d, as Kehlbeck et al. (2021) concluded?",
    caveat="The zoo is this build's models, not the seed's selection of state-of-the-art models; "
    "a claim is not a fair test on a model that does not run as the seed's did.")))
display(Markdown(f"**This run:** {len(words_corpus.sentences):,} MultiNLI sentences, "
                 f"{len(words_corpus.words):,} words, {len(models)} models."))

# %% [markdown]
# The answer in one figure: how alike two models lay out the same words, by linear CKA (1: the
# same structure), at layer 0 and at the first block. Look at which pairs fall below the dotted
# line, the claim's threshold for "vastly different".

# %% tags=["remove-input"]
cka = result.tables["cka"]
show(
    plots.interval_points(
        cka.assign(pair=cka["model_a"] + " / " + cka["model_b"],
                   compared=cka["layer"].map({0: "layer 0", 1: "first block"}) + ", "
                   + cka["control"]),
        "cka", "cka_lo", "cka_hi", x="pair", color="compared",
        title="Linear CKA between models, same words", x_title="models compared",
        y_title="linear CKA (1: same structure)", reference=zoo.CKA_DIFFERENT,
        reference_name=f"{zoo.CKA_DIFFERENT}"),
    "zoo-cka",
    caption="Linear CKA between every pair of models on the same words, at layer 0 and at the "
            "first block, with its 95% interval; the dotted line is the claim's 0.5. A decoder's "
            "first word is left out in the second panel (the same words for both models of the "
            "pair).",
)

# %% [markdown]
# **The question.** Do language models lay out the same words in the same way? If not, how do
# their spaces differ, layer by layer, and which differences follow from the architecture?
#
# **What Kehlbeck et al. (2021) found.** The article closes with
# the first
# layer of "some selected state-of-the-art language models", projected with PCA, and concludes:
# "the embedding spaces are vastly different! If embeddings of these models are interchangeably
# used, without caring for what is actually represented in the embedding space, unwanted
# artifacts might arise." It advises to "consider which similarity measure is suitable for the
# model, or choose a model that is suitable for classical measures such as cosine similarity",
# having cited {cite:t}`ethayarajh2019` for "BERT and GPT-2 are extremely anisotropic". Thiongo
# (2024)
# {cite:p}`thiongo2024bert` contrasts the two families
# the book compares: BERT, a bidirectional encoder trained to fill in masked words, and GPT, a
# unidirectional decoder trained to predict the next word.
#
# **How this chapter tests it.** Every model of this build reads the same sentences (seed
# 000's MultiNLI sentences with polysemous words, the corpus of chapters 1, 2 and 4, so the
# hidden states are shared with them). For each model:
#
# * **the gallery**: layer 0 (the embedding output, before any attention) and the first block
#   (layer 1), each projected on its own first two principal components, for the same words;
# * **the facts** that differ between architectures: size, positions, normalisation, tied
#   input and output embeddings, vocabulary, training objective, and the caveats of the
#   substitute models;
# * **a fingerprint per layer**, on a shared depth axis (layer / last layer): the anisotropy
#   baseline (the mean cosine of words from different sentences, {cite:alp}`ethayarajh2019`),
#   the variance
#   share of the top dimension (GPTology's (2022) rogue dimension), the first word's median norm
# over
#   the other words' (a decoder's attention sink), the best k-means split (silhouette, chapter
#   1's rule: a layer splits at 0.5), and the anisotropy-adjusted SelfSim and IntraSim (chapter
#   3's measures, corrected estimators); and I(W), the partition-function isotropy of the input
#   embedding matrix ({cite:alp}`bis2021`, chapter 4).
#
# Two of the seed's claims become verdicts. **"Vastly different"**: for each model, the largest
# linear CKA {cite:p}`kornblith2019` between its layer 0 (and its first block) and any other
# model's, on the same words; the claim holds when even the closest model shares less than half
# of the words' centred similarity structure (CKA below 0.5; it is 1 for two spaces equal up
# to rotation and scale). CKA compares what PCA shows: both are built from the centred words'
# covariance, and CKA is unchanged by rotations and scaling, which make two pictures look
# different without changing what they encode. **"Extremely anisotropic"**: the
# mean over layers 1 to L of the anisotropy baseline, above 0.1. The seed cites
# {cite:t}`ethayarajh2019`, whose criterion is a mean cosine of random words well above the
# isotropic 0 (his rule in chapter 3 is 0.1); his released baselines, averaged over layers
# 1-12, are BERT 0.40 and GPT-2 0.65, so a level of 0.5 (one direction holding more of a unit
# vector than all others together) would fail BERT, which the seed calls extremely anisotropic.
# Contrastively trained encoders are no test of this claim (contrastive training spreads a
# space towards isotropy: {cite:alp}`gao2021simcse,wang2020alignment`). The claim is also
# tested on standardised dimensions (the control `standardised dimensions`: each dimension
# z-scored over the layer's words before the cosine), which removes what a few rogue
# dimensions add to every cosine {cite:p}`timkey2021`; the fingerprint shows both baselines.
#
# **Intervals.** 95% intervals resample sentences (a cluster bootstrap, the same draws for
# every layer and measure of a model, so a mean over layers gets a joint interval). CKA's come
# from a delete-a-group jackknife over 20 blocks of sentences, as chapter 1's ω²: a bootstrap
# draws some sentences twice, and a duplicated word is identical in both models' spaces, which
# inflates CKA. I(W)'s intervals resample the rows of W. A
# claim "for every other model" takes the largest CKA with the interval [largest lower bound,
# largest upper bound], so it holds only when every pair's interval is below 0.5. Decoders are
# measured as the seed did (all words) and without each sentence's first word: a verdict that
# changes between the two is the first token's.
#
# **How this differs from the seed.** The seed's gallery showed other models than this build's
# (it does not name them) and judged the pictures by eye; here the models are this build's
# (by default two contrastively fine-tuned sentence encoders and two 4-bit quantised decoders
# with rotary positions; see the facts table and the introduction), and "vastly different" is
# measured with CKA. Word vectors are the mean of their pieces and special tokens are left
# out, as in every chapter but [Geometry](01_geometry.ipynb), which measures them. The seed
# does not say whether its "first layer" is the embedding output or the first block, so both
# are shown and tested. On models built from a config with random weights (the package's tests
# run every chapter on such GPT-2- and BERT-shaped models), every number here describes the
# initialisation, not a trained model.

# %% [markdown]
# ## The models
#
# What each model is. *Parameters* counts the weights loaded (an encoder without its
# language-model head, a decoder with its output layer, shared when the embeddings are tied);
# `tied embeddings` says whether the output (softmax) matrix is the input embedding matrix,
# which makes the input embeddings a target of every prediction (the setting of chapter 4's
# drift argument); *Normalisation* says where the blocks normalise: after each sublayer
# (post-norm, BERT) or before it with a final norm after the last block (pre-norm, GPT-2 and
# most decoders), so a decoder's last hidden state is normalised. The objective is the one
# the model's authors describe; for a hub id or a folder it is the family's pretraining
# objective, and fine-tuning, if any, is not known.

# %% tags=["remove-input"]
show_table(result.tables["models"].set_index("model").T,
           "The zoo's models: architecture facts as read from their configurations.")

# %% [markdown]
# ## The gallery: layer 0 and the first block

# %% tags=["remove-input"]
panels, titles = [], []
for spec, pair in result.gallery.coords.items():
    for layer, (xy, ratio) in enumerate(zip(pair, result.gallery.explained[spec], strict=True)):
        panels.append(xy)
        titles.append(f"{spec}, layer {layer} ({ratio.sum():.0%} of variance)")
show(
    plots.layer_grid(
        panels, titles, result.gallery.words["word_index"].to_numpy(), "position",
        hover=(result.gallery.words["text"] + " (pos "
               + result.gallery.words["word_index"].astype(str) + ")").to_numpy(),
        cols=2, title="Layer 0 and the first block of every model, same words"),
    "zoo-gallery",
    caption="Each row is one model; left, layer 0 (the embedding output: token embeddings, plus "
            "learned position embeddings where the model has them); right, the first block's "
            "output. Both are projected on their own first two principal components, for the same "
            f"{point_budget:,} words in every panel, coloured by the word's position in its "
            "sentence. The panel titles give the share of the variance the two components hold.",
)

# %% [markdown]
# ## Are the first layers vastly different?
#
# The first figure, at the top of the page, gives the linear CKA of every pair of models on the
# same words, at layer 0 and at the first block, against the claim's threshold.


# %% [markdown]
# ## Fingerprints over depth
#
# The x axis of the fingerprints is the depth, layer / last layer, so models of different
# depths share it; shaded bands are 95% intervals; dashed lines are the decoders without their
# first words. The table gives the fingerprint in a few numbers.

# %% tags=["remove-input"]
fingerprint_captions = {
    "geometry": "The anisotropy baseline on raw and on standardised dimensions (each "
                "dimension z-scored over the layer's words before the cosine), the variance "
                "share of the top dimension and the first word's norm ratio per layer, each "
                "panel on its own linear y axis.",
    "context": "The best k-means silhouette and the anisotropy-adjusted SelfSim and IntraSim "
               "per layer.",
}
for name, keys in (("geometry", ["baseline_cosine", "baseline_cosine_standardised",
                                  "top_dim_share", "first_word_norm_ratio"]),
                   ("context", ["silhouette", "selfsim_adj", "intrasim_adj"])):
    show(
        plots.facet_lines(
            zoo.fingerprint_long(layers, keys), "value", "measure", x="depth",
            lower="lo", upper="hi", dash="control", shared_y=False,
            title=f"Fingerprint per layer: {name}", y_title="value"),
        f"zoo-fingerprint-{name}",
        caption=fingerprint_captions[name],
    )
show(
    plots.interval_points(
        result.tables["embeddings"], "isotropy", "isotropy_lo", "isotropy_hi", x="model",
        title="I(W) of the input embedding matrix (1: isotropic)", x_title="model",
        y_title="I(W)"),
    "zoo-isotropy",
    caption="I(W) of each model's input embedding matrix (1 for perfect isotropy, Biš et al. "
            "2021) with its 95% interval.",
)
show_table(result.tables["summary"].round(3),
           'Per model: the summary measures of layer 0 and the first block.')

# %% [markdown]
# ## The verdicts
#
# Each row is one of Kehlbeck et al.'s (2021) claims about other models, tested on one model under
# one
# control.

# %% tags=["remove-input"]
claims.show_verdict_grid(result.claims, models)

# %% [markdown]
# ## What this run shows

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("08_model_zoo", {"claims": result.claims},
                                     strict=False)))

# %% [markdown]
# ## Appendix: every claim
#
# The sentences generated from the claims, and the full claims table: each claim's statistic,
# 95% interval, threshold and the reason for it, and the paper's own finding. Folded: open it
# to check a number.

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show every claim"}
claims.show_every_claim(result.claims, result.sentences, first_token=True)

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
for row in result.claims.itertuples():
    print(row.model, "|", row.control, "|", row.claim, "|", row.verdict)
for row in result.tables["summary"].to_dict("records"):
    print(row["model"], "|", row["control"], "| layers that split:", row["layers that split"])

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"models": models, "n_sentences": n_sentences, "seed": seed,
                       "n_words": n_words, "point_budget": point_budget, "n_boot": n_boot,
                       "w_boot": w_boot},
        "corpus": {"sentences": len(words_corpus.sentences), "words": len(words_corpus.words)},
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
