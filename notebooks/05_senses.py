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

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_semcor_words: int = 30
wic_train_pairs: int = 400
wic_test_pairs: int = 400
n_sts_sentences: int = 1000
n_mnli_sentences: int = 600
n_umap_words: int = 8
max_view_layers: int = 13
point_budget: int = 1500
n_boot: int = 1000
n_draws: int = 5
fit_rows: int = 2000
seed: int = 0
results_path: str = "05_senses.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
import warnings

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import senses
from lmgeometry.chapters.common import checked_parameters, model_kinds
from lmgeometry.io import corpus, data
from lmgeometry.measures import clusters, similarity
from lmgeometry.report import claims, plots, results
from lmgeometry.report.figures import show, show_table
from lmgeometry.report.prose import glue_values

globals().update(checked_parameters(globals()))
glue_values(n_boot=n_boot)

warnings.filterwarnings("ignore", message="n_jobs value")  # UMAP: seeded, so single-threaded

semcor = corpus.semcor_targets(n_words=n_semcor_words, seed=seed)
wic, wic_pairs = corpus.wic_corpus(wic_train_pairs, wic_test_pairs, seed)
sts = corpus.sts(n=n_sts_sentences, seed=seed)
semcor_stores = {spec: store.activations(spec, semcor) for spec in models}
result = senses.analyse(
    semcor_stores, {spec: store.activations(spec, wic) for spec in models},
    {spec: store.activations(spec, sts) for spec in models}, wic_pairs=wic_pairs,
    sense_weights=data.semcor_sense_counts(), sentences=semcor.sentences, seed=seed,
    n_boot=n_boot, n_draws=n_draws, fit_rows=fit_rows, view_layers=max_view_layers,
    umap_words=n_umap_words)
t = result.tables

# %% tags=["remove-cell"]
from lmgeometry.report import narrative  # the written answer and paragraph (report/narrative.py)

# %% tags=["remove-input"]
display(HTML(claims.findings_box(
    result.claims, model_kinds(semcor_stores), models=models,
    answer=narrative.plain_answer("05_senses", {"claims": result.claims},
                                  strict=False),
    question="Do the vectors of one word fall into groups that match its senses, and is it a "
    "word's senses or the variety of its contexts that makes its vectors differ?",
    caveat="Sentence encoders and small decoders stand in for BERT and GPT-2, and SemCor's "
    "annotated senses and WiC's labelled pairs replace the seed's unlabelled MultiNLI views.")))

# %% [markdown]
# The answer in one figure: how much more often a word's nearest other occurrence shares its
# sense than guessing its most frequent sense is right, per layer. Look at how far each line
# stays above the dotted line (a clear gain) and at which depth it peaks.

# %% tags=["remove-input"]
sep = t["separability"]
raw = sep[sep["transform"] == "raw"]
show(
    plots.facet_lines(raw, "cohen_h", "protocol", x="depth", dash="control",
                      lower="cohen_h_lo", upper="cohen_h_hi",
                      title="SemCor: leave-one-out 1-NN sense accuracy over the MFS baseline",
                      y_title="Cohen's h (1-NN vs MFS)"),
    "sense-1nn",
    caption="Cohen's h of the leave-one-out 1-NN sense accuracy over the MFS baseline per layer, "
            "with its 95% interval, in natural samples (left) and over the occurrences as sampled "
            "(right), for the raw vectors; above 0.2 (dotted) a word's nearest other occurrence "
            "is of its sense clearly more often than its most frequent sense is right.",
)

# %% tags=["remove-input"]
tagged = semcor.words.dropna(subset=["sense_key"])
display(Markdown(
    f"SemCor: {len(semcor.sentences)} sentences, {len(tagged)} sense-tagged occurrences of "
    f"{tagged['target'].nunique()} targets; WiC pairs: "
    + ", ".join(f"{k} {v}" for k, v in wic_pairs["split"].value_counts().sort_index().items())
    + f"; STS: {len(sts.sentences)} sentences. Models: "
    + "; ".join(f"**{spec}** ({acts.meta['model']['name']}, {acts.n_layers - 1} layers)"
                for spec, acts in semcor_stores.items())))

# %% [markdown]
# **The question.** Do the vectors of one word fall into groups that match its senses, and is
# it a word's senses or the variety of its contexts that makes its vectors differ?
#
# **What the seeds found.** {cite:t}`kehlbeck2021demystifying` projected the
# occurrences of polysemous words of MultiNLI sentences with PCA and UMAP and concluded, by
# eye, that from the principal components it "can come to no direct conclusion of whether or
# not senses are encoded", that individual tokens "show clustering in UMAP" for both GPT-2 and
# BERT, and that the model "must be able to distinguish between senses in the high-dimensional
# space". {cite:t}`ethayarajh2019` found stopwords, which are not polysemous,
# among
# the least self-similar words and concluded that "the variety of contexts a word appears in,
# rather than its inherent polysemy" drives the variation of its vectors, so the models do not
# assign each word "one of a finite number of word-sense representations".
#
# **How this chapter tests it**, with sense-annotated text:
#
# * **SemCor** ({cite:alp}`miller1993`; WordNet 3.0 sense keys, {cite:alp}`miller1995`): 30
#   polysemous target nouns and verbs, each with at least two senses that occur 10 or more times
#   Per word and layer, **leave-one-out 1-nearest-
#   neighbour sense accuracy** (is a word's most similar other occurrence, by cosine, of the
#   same sense?) against the **most-frequent-sense (MFS) baseline** under the same
#   leave-one-out protocol, averaged over the words. The corpus samples each word's
#   occurrences round-robin over its senses, so that every sense is seen; that sample has a
#   smaller most-frequent-sense share than running text. The claims therefore score
#   **natural samples**: per word, 5 random subsamples whose senses keep their frequencies in
#   the whole of SemCor (the largest such sample the labelled occurrences allow). A 1-NN rule
#   that ignores the senses scores the sum of the squared sense shares, below MFS, so beating
#   MFS takes sense information. The effect size is **Cohen's h** {cite:p}`cohen1988` of the
#   two accuracies (h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2)); 0.2 is Cohen's small effect, about
#   10 points above a 50% baseline).
# * The **silhouette** {cite:p}`rousseeuw1987` of each word's sense partition (cosine): near 1
#   if every sense were one point (Ethayarajh's (2019) "finite number of word-sense
# representations"),
#   near 0 if senses overlap.
# * The same 1-NN accuracy **inside 2-D views**: the PCA of all words of the layer (the seed's
#   projection), a PCA of one word's occurrences and a UMAP {cite:p}`mcinnes2018` of one word's
#   occurrences.
# * **WiC** {cite:p}`pilehvar2019`: pairs of sentences sharing a target word,
#   labelled same sense or not. The cosine of the two occurrences is thresholded; the
#   threshold is fitted on 400 training pairs, the layer is chosen on the 638 dev pairs, and
#   the test accuracy (400 pairs, chance 50%) is the claim's statistic, with a Wilson interval
#   {cite:p}`wilson1927`.
# * **Polysemy or context?** Per layer, a regression of a word's self-similarity (the
#   corrected estimators of chapter "Context measures") on log(WordNet senses) and
#   log(distinct contexts), over the STS words in at least 5 sentences; both coefficients are
#   standardised (in standard deviations of self-similarity per standard deviation of the
#   predictor; 0.1 is Cohen's small effect).
# * The same measures after **removing the top principal components** or **standardising
#   every dimension**, fitted on 2,000 sampled words of each layer.
#
# **Intervals and the best layer.** 95% intervals resample the target words ({glue:md}`n_boot`
# draws, the same for every layer of a model), the STS words (polysemy) or, for WiC, are Wilson
# intervals over the test pairs. A claim about "the best layer" takes the maximum over layers 1 to L
# in every bootstrap replicate, so the choice of the layer is part of its interval; the figures show
# which layers are on the plateau whose intervals overlap the best. For decoders every claim is
# computed over all words (the seeds' protocol) and with each sentence's first word left out (the
# attention sink; see chapter "Geometry"), from the occurrences and from the samples the transforms
# are fitted on.

# %% [markdown]
# ```{admonition} How this differs from the seed
# * **Models.** The seeds used GPT-2 and BERT (Ethayarajh (2019) also ELMo); this book uses two
#   contrastively fine-tuned sentence encoders (MiniLM-L6, MPNet) and two 4-bit quantised
#   decoders (SmolLM2-135M-Instruct, Gemma-3-270m), see the introduction. A word's vector is
#   the mean of its pieces.
# * **Data.** Kehlbeck et al. (2021) looked at polysemous words of MultiNLI sentences without
# sense labels;
#   this chapter scores SemCor's annotated senses and WiC's labelled pairs, and still shows
#   the seed's MultiNLI view at the end of the first section.
# * **Views.** The seed projected all tokens at once and looked at one token's points; here
#   the PCA of all words is that projection, while the per-word PCA and UMAP are fitted on one
#   word's occurrences (UMAP on the 8 most frequent targets, in at most 13 layers per model).
#   What the seed judged by eye is measured as 1-NN accuracy inside the 2-D view.
# * **The MFS baseline.** SemCor occurrences are sampled round-robin over each word's senses,
#   which lowers the most-frequent-sense share (see the first sentence under "What this run
#   shows"); the claims use natural samples, in which each word's senses keep their SemCor
#   frequencies, and the tables give both.
# * **Polysemy.** WordNet lists nouns, verbs, adjectives and adverbs only, so closed-class
#   words (the stopwords of Ethayarajh's (2019) argument) have no sense count; the regression the
#   claims use leaves them out, and says how many (second sentence below); the tables add a
#   fit that counts them as one sense. Words are lower-cased, as in chapter "Context
#   measures".
# * **WiC** is not in the seeds; it tests Kehlbeck et al.'s (2021) statement that senses can be
# told apart
#   in the high-dimensional space, with the threshold baseline of {cite:t}`pilehvar2019`.
# ```
#
# ## The seed's views
#
# The occurrences of one target word in SemCor, projected on one layer's first two principal
# components (computed on that word's occurrences only) and coloured by their annotated sense:
# pick the word in the list above the figure (typing its first letters finds it) and the
# layer with the slider. Hover a point to read its sentence;
# click a sense in the legend to hide it. The second figure of each model uses UMAP (cosine,
# 15 neighbours) instead of PCA for the most frequent targets.

# %% tags=["remove-input"]
for spec, methods in result.views.items():
    for method, view in methods.items():
        show(
            plots.choice_layer_slider(
                view["coords"], [str(i) for i in view["layers"]], view["color"], "senses",
                hover=view["hover"], background=view["background"], choice_title="target word",
                title=f"{spec}: SemCor occurrences by sense ({method.upper()} per word and "
                      f"layer)"),
            f"{method}-{spec}",
        )

# %% [markdown]
# How visible are the senses in these pictures?

# %% tags=["remove-input"]
views = t["views"]
show(
    plots.facet_lines(views, "cohen_h", "method", x="depth", dash="control",
                      lower="cohen_h_lo", upper="cohen_h_hi",
                      title="1-NN sense accuracy inside 2-D views over the MFS baseline",
                      y_title="Cohen's h (view accuracy vs MFS)"),
    "view-accuracy",
    caption="Cohen's h of the 1-NN sense accuracy inside each 2-D view over the MFS baseline "
            "(natural samples), with its 95% interval; above 0.2 (dotted) the view shows the "
            "senses better than guessing each word's most frequent sense. The table below it "
            "gives the accuracies behind it, inside the view and in the full space, for the same "
            "words.",
)
show_table(senses.view_accuracy_table(views).round(3),
           'Sense separation in the projections: the best 1-nearest-neighbour sense accuracy '
           'in the 2-D view and in the full space, against the most-frequent-sense baseline, '
           'per model and projection method.')

# %% [markdown]
# And the seed's own view: the polysemous target words of the MultiNLI sentences (chapter
# "Geometry"), coloured by word over a gray shadow of all the other words.

# %% tags=["remove-input"]
mnli = corpus.mnli_polysemy(n=n_mnli_sentences, seed=seed)
for spec in models:
    acts = store.activations(spec, mnli)
    idx = similarity.subsample(acts.n_words, point_budget, seed)
    targets = acts.words["target"].to_numpy()[idx]
    layers = senses.spread_layers(acts.n_layers, 3)
    vectors = [acts.layer(i, idx) for i in layers]
    panels = ([clusters.pca_project(X, n_components=2, seed=seed)[0] for X in vectors]
              + [clusters.umap_project(X, n_components=2, seed=seed) for X in vectors])
    show(
        plots.layer_grid(
            panels, [f"{m} layer {i}" for m in ("PCA", "UMAP") for i in layers],
            np.where(pd.notna(targets), targets, "(other words)").astype(str), "target word",
            categorical=True, hover=acts.words["text"].to_numpy()[idx], cols=len(layers),
            shadow=True, background="(other words)",
            title=f"{spec}: MNLI target words over all words (PCA, then UMAP, per layer)"),
        f"mnli-targets-{spec}",
    )

# %% [markdown]
# ## Sense separability per layer
#
# The first figure, at the top of the page, gives the nearest-neighbour sense accuracy per layer;
# the silhouette asks whether the occurrences form tight sense clusters.

# %% tags=["remove-input"]
sampled = raw[raw["protocol"] == "as sampled"]
show(
    plots.lines_by_layer(sampled, "silhouette", x="depth", lower="silhouette_lo",
                         upper="silhouette_hi", dash="control",
                         title="SemCor: silhouette of each word's senses (cosine)",
                         y_title="mean silhouette", reference=senses.SILHOUETTE,
                         reference_name="0.5"),
    "sense-silhouette",
    caption="The silhouette of the senses (cosine), near 1 for one point per sense. The table "
            "gives the accuracies and baselines at each model's best layer, for the three "
            "versions of the vectors.",
)
best = senses.best_rows(sep, ["model", "control", "transform", "protocol"], "cohen_h")
show_table(best[["model", "control", "transform", "protocol", "layer", "accuracy_1nn",
                 "mfs_baseline", "gain", "cohen_h", "cohen_h_lo", "cohen_h_hi", "n_words",
                 "n_occurrences"]].round(3),
           'The best layer per model, control, transform and protocol for nearest-neighbour '
           'sense classification on SemCor: accuracy, most-frequent-sense baseline, gain and '
           "Cohen's h with 95% interval.")

# %% [markdown]
# ## WiC per layer

# %% tags=["remove-input"]
wic_table = t["wic"]
wic_raw = wic_table[wic_table["transform"] == "raw"]
show(
    plots.lines_by_layer(wic_raw, "test_accuracy", x="depth", lower="test_accuracy_lo",
                         upper="test_accuracy_hi", dash="control",
                         title="WiC test accuracy of a cosine threshold (raw vectors)",
                         y_title="accuracy", reference=senses.WIC_ACCURACY,
                         reference_name="threshold 55%"),
    "wic",
    caption="WiC test accuracy of the cosine threshold fitted on the training pairs, per layer, "
            "with its Wilson interval (raw vectors); the claim reads it at the layer chosen on "
            "the dev pairs, which the table gives with the dev accuracies of the three versions "
            "of the vectors.",
)
chosen = senses.best_rows(wic_table, ["model", "control", "transform"], "dev_accuracy")
show_table(chosen[["model", "control", "transform", "layer", "train_accuracy", "dev_accuracy",
                   "test_accuracy", "test_accuracy_lo", "test_accuracy_hi"]].round(3),
           'Word-in-Context (WiC): the chosen layer and transform per model and control, with '
           'train, dev and test accuracy (95% interval on test).')

# %% [markdown]
# ## Polysemy or context?

# %% tags=["remove-input"]
poly = t["polysemy"]
coefficients = senses.coefficients_long(poly)
shown = coefficients[(coefficients["sample"] == "WordNet words")
                     & (coefficients["control"] == "none")]
show(
    plots.lines_by_layer(shown, "beta", x="depth", dash="predictor", lower="lo", upper="hi",
                         title="Self-similarity regressed on sense count and context count",
                         y_title="standardised coefficient", reference=-senses.BETA,
                         reference_name="-0.1"),
    "polysemy",
    caption="Per layer, the standardised coefficients of log(WordNet senses) and log(distinct "
            "contexts) in the regression of a word's self-similarity on both, with 95% intervals "
            "(a bootstrap over words), over the words with a WordNet entry. A negative "
            "coefficient means that more senses (or more contexts) go with less self-similar "
            "vectors; the dotted line is -0.1, Cohen's small effect. The figures after it show "
            "the raw picture: mean self-similarity per layer of the words grouped by their number "
            "of senses, then by their number of contexts.",
)
for grouping, frame in t["selfsim_bins"].groupby("grouping", sort=False):
    show(
        plots.lines_by_layer(frame.assign(group=grouping + " " + frame["bin"]), "mean_selfsim",
                             color="group", x="depth", dash="model",
                             title=f"Mean self-similarity by number of {grouping}",
                             y_title="mean self-similarity"),
        f"selfsim-by-{grouping.split()[-1]}",
    )
show_table(senses.polysemy_means(poly).round(3),
           'Self-similarity against the number of senses and contexts of a word: the '
           "regression's coefficients and R², mean over layers, per model, control and sample.")

# %% [markdown]
# ## The verdicts
#
# Each row is one of the seeds' claims as a statistic with its 95% interval, tested on each
# model. The thresholds are effect sizes, each with its reason in the claims table at the end of
# the chapter; a decoder's claims are stated twice, over all words and with each sentence's
# first word left out.

# %% tags=["remove-input"]
claims.show_verdict_grid(result.claims, models)

# %% [markdown]
# ## What this run shows

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("05_senses", {"claims": result.claims},
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
print("targets:", tagged["target"].nunique(), "WiC test pairs:",
      int((wic_pairs["split"] == "test").sum()))

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"models": models, "n_semcor_words": n_semcor_words,
                       "wic_train_pairs": wic_train_pairs, "wic_test_pairs": wic_test_pairs,
                       "n_sts_sentences": n_sts_sentences, "n_mnli_sentences": n_mnli_sentences,
                       "n_umap_words": n_umap_words, "max_view_layers": max_view_layers,
                       "point_budget": point_budget, "n_boot": n_boot, "n_draws": n_draws,
                       "fit_rows": fit_rows, "seed": seed},
        "semcor_targets": sorted(tagged["target"].unique()),
        "wic_pairs": wic_pairs["split"].value_counts().to_dict(),
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
