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

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_sentences: int = 600
seed: int = 0
point_budget: int = 1000
probe_words: int = 6000
n_boot: int = 1000
nulls: bool = False  # True: also run every claim on each model's untrained twin (the null;
# about two more minutes of chapter time, off by default to keep the cold book in budget).
# Without it each probe and cluster claim's null is the same statistic with the tags permuted
# (seconds); with it the twins fill every row's null instead.
results_path: str = "02_part_of_speech.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from IPython.display import HTML, Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import geometry, part_of_speech
from lmgeometry.chapters import nulls as null_models
from lmgeometry.chapters.common import checked_parameters, model_kinds
from lmgeometry.io import corpus
from lmgeometry.report import claims, plots, results
from lmgeometry.report.figures import show, show_table
from lmgeometry.report.prose import glue_values

globals().update(checked_parameters(globals()))
glue_values(n_boot=n_boot)

words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
result = part_of_speech.analyse(stores, seed=seed, probe_words=probe_words,
                                point_budget=point_budget, n_boot=n_boot,
                                null_stores=null_models.null_stores(models, words_corpus)
                                if nulls else None)
layers = result.tables["layers"]
upos_counts = words_corpus.words["upos"].value_counts()

# %% tags=["remove-cell"]
from lmgeometry.report import narrative  # the written answer and paragraph (report/narrative.py)

# %% tags=["remove-input"]
display(HTML(claims.findings_box(
    result.claims, model_kinds(stores), models=models,
    answer=narrative.plain_answer("02_part_of_speech", {"claims": result.claims},
                                  strict=False),
    question="Does a word's part of speech decide where its vector lies, and is it clearest in the "
    "middle layers, as Kehlbeck et al. (2021) saw in BERT?",
    caveat="The seed judged its projections by eye; here a linear probe and k-means purity measure "
    "them, on sentence encoders and small decoders that stand in for BERT and GPT-2.")))

# %% [markdown]
# The answer in one figure: a linear probe's held-out part-of-speech accuracy per layer (solid)
# against guessing each word's most frequent tag (dashed). Look at how far the solid line stays
# above the dashed one, and at which depth it peaks.

# %% tags=["remove-input"]
probe = layers.melt(
    id_vars=["model", "depth", "control"], value_vars=["probe_accuracy", "word_baseline"],
    var_name="measure", value_name="accuracy")
show(
    plots.facet_lines(probe, "accuracy", "control", x="depth", dash="measure",
                      title="UPOS probe accuracy and the most-frequent-tag-per-word baseline",
                      y_title="held-out accuracy"),
    "probe-lines",
    caption="Held-out probe accuracy per layer with its 95% interval (shaded), one panel per "
            "control, against the word baseline (dashed; the majority baseline is in the per-layer "
            "table further down). The x axis is the depth, layer / last layer.",
)

# %% [markdown]
# **The question.** Does a word's part of speech decide where its vector lies, and in which
# layers most clearly?
#
# **What Kehlbeck et al. (2021) found.** The article coloured its
# projections
# by the part-of-speech tags spaCy assigns and concluded, by eye, that **BERT's clusters
# represent POS tags**, "especially in the middle layers of the model", consistent with earlier
# probing work; in **GPT-2** the tags lie along the position manifold, because position is
# encoded more strongly than the tag. It measured neither claim.
#
# **How this chapter tests it.** For every layer of each model, on the same sampled words and
# the same split of sentences (three quarters train, a quarter held out, no sentence on both
# sides):
#
# * a **linear probe** {cite:p}`alain2017`, a multinomial logistic regression on standardised
#   vectors, predicts the universal POS tag (UPOS); its held-out accuracy is compared with the
#   *majority baseline* (every word gets the most frequent training tag) and with the classic
#   *word baseline* of POS tagging (each word gets its own most frequent training tag, unseen
#   words the majority tag; about 90% on English newswire {cite:p}`charniak1993`, lower here
#   because a few thousand training words leave many test words unseen). A probe that beats the
#   word baseline reads the tag from more than the word's identity;
# * **cluster purity**: k-means with as many clusters as tags on unit-normalised vectors, each
#   cluster credited with its most frequent tag. Purity depends on the number and sizes of the
#   clusters, so it is set against *chance*, the purity of the same clusters with the tags
#   shuffled (mean of 5 shuffles), as the share of the way from chance to 1.
#
# **The best layer is a plateau.** The best of 7 to 31 noisy layers is not known exactly, so the
# chapter reports the *plateau*: the layers whose 95% interval overlaps the best layer's. "The
# middle layers" is the middle third of the depth (layer / last layer from 1/3 to 2/3, edges
# included); the claim that POS is best represented there holds when the whole plateau lies in it,
# and does not hold when none of it does. Intervals are a bootstrap over sentences
# ({glue:md}`n_boot` draws, the same for every layer of a model), with the fitted probe and clusters
# held fixed: they leave out the variation of the k-means restarts, which moves the purity of
# neighbouring layers by a few points, so the purity plateau is narrower than it should be. For
# decoders every claim is also computed with each sentence's first word left out (the attention
# sink; see the Geometry chapter).
#
# **How this differs from the seed.** The seed looked at coloured projections of GPT-2 and
# BERT; this chapter fits probes and clusterings to four substitute models (two contrastively
# fine-tuned sentence encoders, two 4-bit quantised decoders; see the introduction). Word
# vectors are the mean of their pieces; the tags are spaCy's, as in the seed. The seed's claim
# about middle layers is BERT's; the decoders' rows say whether the same pattern holds for
# them, not what the seed said of GPT-2.

# %% [markdown]
# ## Projections coloured by part of speech
#
# The first two principal components of every layer, for a seeded sample of words (the same in
# every layer; how many is a parameter of the chapter, its point budget; each small panel of
# the grids draws 500 of them). In the side-by-side view and
# the 3-D views, click a tag in the legend to show its words in colour over all the others in
# gray, and click it again for every colour; in the grids a click hides a tag and a
# double-click shows it alone, over all words drawn in gray. The 3-D view has a layer slider
# and, at the top left, a menu for the number of words drawn.

# %% tags=["remove-input"]
show_table(upos_counts.rename("words").to_frame().T,
           'Words of the sample per part of speech (Universal POS tags).')

# %% tags=["remove-input"]
show(
    plots.models_side_by_side(
        {spec: [xyz[:, :2] for xyz in coords] for spec, (_, coords) in result.views.items()},
        {spec: words["upos"].to_numpy() for spec, (words, _) in result.views.items()},
        "UPOS", categorical=True,
        hover={spec: geometry.hover_labels(words) for spec, (words, _) in result.views.items()},
    ),
    "pos-side-by-side",
    caption="The models side by side under one slider: each panel is one model's layer on "
    "its first two principal components, coloured by part of speech (Universal POS tags; "
    "click a tag in the legend to show it in colour in every panel over the other words in "
    "gray). The "
    "slider moves every model to the same relative depth (layer / last layer); the panel "
    "titles name the layer shown.",
)

# %% tags=["remove-input"]
for spec, (words, coords) in result.views.items():
    upos = words["upos"].to_numpy()
    hover = geometry.hover_labels(words)
    show(
        plots.layer_grid(
            [xyz[:, :2] for xyz in coords], [f"layer {i}" for i in range(len(coords))], upos,
            "UPOS", categorical=True, hover=hover, shadow=True,
            title=f"{spec}: first two principal components of every layer, coloured by UPOS"),
        f"pos-grid-{spec}",
    )
    show(
        plots.layer_slider_3d(
            coords, [str(i) for i in range(len(coords))], upos, "UPOS", hover=hover,
            categorical=True, title=f"{spec}: 3-D PCA per layer, coloured by UPOS", seed=seed),
        f"pos3d-{spec}",
    )

# %% [markdown]
# ## The probe, layer by layer
#
# The probe's held-out accuracy per layer is the first figure, at the top of the page.

# %% [markdown]
# **The control task.** A probe can score well by memorising which tag each word type takes.
# Hewitt & Liang {cite:p}`hewitt2019` give each word type a random tag, drawn once from
# the training words' tag distribution and carried by every occurrence of the type; the same
# probe (features, regularisation, split) trained on those tags can only memorise. The
# *selectivity*, POS accuracy minus control-task accuracy, is what word identity cannot buy; it
# is fitted at layer 0 (the word's input vector), the probe's best layer and the last.

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(
        result.tables["selectivity"], "selectivity", x="depth", lower="selectivity_lo",
        upper="selectivity_hi", dash="control",
        title="Selectivity: POS probe accuracy minus the same probe's control-task accuracy",
        y_title="selectivity (accuracy difference)"),
    "selectivity-lines",
    caption="Selectivity of the POS probe with its 95% interval (bootstrap over held-out "
            "sentences) at layer 0, the probe's best layer and the last layer, per model and "
            "control. The probe's claim checked with the control task holds when the best "
            "layer's selectivity is above layer 0's (paired interval of the difference above 0).",
)

# %% [markdown]
# ## Clusters, layer by layer

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(
        layers, "purity_adjusted", x="depth", lower="purity_adjusted_lo",
        upper="purity_adjusted_hi", dash="control",
        title="Cluster purity above chance, as a share of the way to 1",
        y_title="(purity - chance) / (1 - chance)",
        reference=part_of_speech.PURITY_ADJUSTED, reference_name="half-way"),
    "purity-lines",
    caption="K-means purity as a share of the way from chance (shuffled tags) to 1, with its 95% "
            "interval, per control; the dotted line is the claim's threshold, half-way.",
)
show_table(layers[["model", "layer", "control", "probe_accuracy", "majority_baseline",
                   "word_baseline", "probe_gain", "probe_gain_lo", "probe_gain_hi",
                   "cluster_purity", "purity_chance", "purity_adjusted", "n_train",
                   "n_test"]].round(3),
           "Per model, layer and control: the part-of-speech probe's held-out accuracy against "
           'the majority and word-identity baselines, its gain with 95% interval, and the '
           'purity of k-means clusters against chance.')

# %% [markdown]
# ## The verdicts
#
# Per model and control, the probe's and the clusters' claims. For the "middle layers" rows
# the statistic is the distance of the best layer's depth from 0.5 and its interval spans the
# plateau; the threshold 1/6 is the edge of the middle third.

# %% tags=["remove-input"]
claims.show_verdict_grid(result.claims, models)

# %% [markdown]
# ## What this run shows

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("02_part_of_speech", {"claims": result.claims},
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
for row in part_of_speech.probe_check(layers).itertuples():
    print(row.model, "layers:", row.layers, "probe above the majority baseline in every layer:",
          row.above)

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"models": models, "n_sentences": n_sentences, "seed": seed,
                       "point_budget": point_budget, "probe_words": probe_words,
                       "n_boot": n_boot},
        "upos_counts": upos_counts,
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
