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

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_sentences: int = 600
seed: int = 0
n_words: int = 2000
point_budget: int = 1000
umap_layers: int = 4
n_boot: int = 1000
bos_texts: int = 48
nulls: bool = True  # also run every claim on each model's untrained twin (the null)
results_path: str = "01_geometry.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from IPython.display import HTML, Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import geometry
from lmgeometry.chapters import nulls as null_models
from lmgeometry.chapters.common import checked_parameters, model_kinds
from lmgeometry.io import corpus
from lmgeometry.report import claims, plots, results
from lmgeometry.report.figures import show, show_table
from lmgeometry.report.prose import glue_values

globals().update(checked_parameters(globals()))
glue_values(point_budget=point_budget, umap_layers=umap_layers, n_boot=n_boot)

words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
result = geometry.analyse(stores, seed=seed, n_words=n_words, point_budget=point_budget,
                          umap_layers=umap_layers, n_boot=n_boot,
                          null_stores=null_models.null_stores(models, words_corpus)
                          if nulls else None)
layers = result.tables["layers"]

# %% tags=["remove-cell"]
from lmgeometry.report import narrative  # the written answer and paragraph (report/narrative.py)

# %% tags=["remove-input"]
display(HTML(claims.findings_box(
    result.claims, model_kinds(stores), models=models,
    answer=narrative.plain_answer("01_geometry", {"claims": result.claims},
                                  strict=False),
    question="Do the layers of a decoder split into two well-separated clusters with a position "
    "manifold inside, as Kehlbeck et al. (2021) saw in GPT-2, while an encoder's do not, as in "
    "BERT?",
    caveat="Two sentence encoders and two small 4-bit decoders with rotary positions stand in for "
    "BERT and GPT-2; a decoder's verdicts are also given with each sentence's first word left out, "
    "and a claim is not a fair test on a model that does not run as the seed's did.")))
display(Markdown(f"**This run:** {len(words_corpus.sentences):,} MultiNLI sentences, "
                 f"{len(words_corpus.words):,} words ({n_words:,} sampled), {len(models)} models."))

# %% [markdown]
# The answer in one figure: each model's layer on its first two principal components, under one
# depth slider. Move the slider and compare the panels: does a decoder's layer break into two
# separate clouds where an encoder's stays one?

# %% tags=["remove-input"]
show(
    plots.models_side_by_side(
        {spec: [xyz[:, :2] for xyz in view.coords] for spec, view in result.views.items()},
        {spec: view.words["word_index"].to_numpy() for spec, view in result.views.items()},
        "position",
        hover={spec: geometry.hover_labels(view.words) for spec, view in result.views.items()},
    ),
    "pca-side-by-side",
    caption="The models side by side, as Kehlbeck et al. (2021) set GPT-2 beside BERT: each panel "
    "is one "
    "model's layer projected on that layer's first two principal components, coloured by the "
    "word's position in its sentence (the scale ends at the 95th percentile of positions). "
    "The slider, which opens halfway through the network, moves every model to the same relative "
    "depth (layer / last layer); the panel "
    "titles name the layer shown. The figures further down show every layer of one model at once.",
)

# %% [markdown]
# **The question.** What is the global shape of a language model's word vectors, layer by
# layer, and which property of a word decides where it lies?
#
# **What Kehlbeck et al. (2021) found.** The article projected
# every layer of
# GPT-2 and BERT, for the words of MultiNLI sentences that contain polysemous words, onto its
# first principal components, and described what it saw. **GPT-2 forms two very separate
# clusters**; "for the lower layers, the embedding space stays mostly the same", and it "makes
# some big changes in the last layer, where the separation decreases". Projecting the clusters
# one at a time, it found in the larger one a manifold "similar to the Swiss roll" along which
# the absolute position of the token runs: for GPT-2, position is "the globally most important
# feature". The seed's text does not say in words which tokens make the smaller cluster; it
# later refers to GPT-2 emphasising "this initial token" (position 0), whose representations
# differ from all others. **BERT** showed no such split: small clouds in the lower layers that
# merge into a few larger clusters and a "wing-like shape" in the last layer, with position
# encoded only locally.
#
# **How this chapter tests it.** For every layer of the models of this build (two sentence
# encoders standing in for BERT, two decoders standing in for GPT-2; see the introduction for
# their caveats), on the same sample of words in every layer:
#
# * **Clusters.** k-means (k = 2 to 4) on the top 50 principal components; a layer *splits*
#   when the best split's mean silhouette {cite:p}`rousseeuw1987` reaches 0.5, the bound of
#   {cite:t}`kaufman1990` for a reasonable cluster structure. The *separation* of a split is
#   the distance between the two largest clusters' centroids over their mean RMS radius.
# * **The first word.** A decoder run without a beginning-of-sequence token makes the first
#   token of every sentence its *attention sink* {cite:p}`xiao2024`, whose hidden state carries
#   *massive activations* {cite:p}`sun2024`. The chapter measures the share of first words among
#   the words outside the largest cluster, and every decoder claim is computed twice: as the
#   seed measured (all words) and with each sentence's first word left out; a verdict that differs
# between the two is driven by the first token. Chapter
#   [Why decoders split](09_attention_sink.ipynb) goes past this correlation: it removes the
#   massive activations, the attention to the first position or the sink token, one at a time.
# * **What decides the position of a word.** Omega-squared (ω² of {cite:t}`hays1963`,
#   generalised to vectors) is the share of a layer's variance that lies between the groups of
#   an attribute, less what chance would put there: about 0 for an unrelated attribute, 1 when
#   words sharing the attribute share a vector; being chance-corrected it can fall below 0. The
#   attributes are position (binned 0, 1, 2-3, 4-7, 8-15, 16-31, 32+), first word or not, part
#   of speech (UPOS) and word identity (lower-cased).
# * **A position manifold.** A Swiss roll is monotone in no principal component, so a
#   correlation would miss it. Among the larger cluster's words, projected on their own top 3
#   principal components, a 10-nearest-neighbour regression predicts each word's position, with
#   5-fold cross-validation that holds out whole sentences; the statistic is its R² minus the
#   R² of the same regression on shuffled positions (mean of 5 shuffles, about -0.1).
# * **The special tokens.** The store keeps the tokens the template adds around the words
#   ([CLS] and [SEP], MPNet's `<s>` and `</s>`, a decoder's beginning-of-sequence token) apart
#   from the words. Each token's *token intra-sentence similarity*, Kehlbeck et al.'s (2021) mean
# cosine to
#   the other tokens of its sentence, is compared with the words': the closing token with every
#   part of speech, the first token with the later input positions; its norm with the words'.
#
# **Intervals.** 95% intervals resample sentences: a bootstrap ({glue:md}`n_boot` draws, the same
# draws for every layer and measure of a model, so means over layers keep their correlation) with
# the fitted clusters and regressions held fixed; for ω², whose many small word-identity groups a
# bootstrap would turn into groups of identical rows, a delete-a-group jackknife over 20 blocks of
# sentences. A claim about "the layers" is about layers 1 to L - 1: layer 0 is the embedding output,
# before any attention, and the seed describes the last layer apart.
#
# **How this differs from the seed.** The seed judged projections by eye, for one model of each
# kind (GPT-2, BERT-base) and about 190,000 tokens; this chapter measures a sample of words
# (word vectors are the mean of their pieces, where the seed's points were word pieces) from
# four substitute models, two contrastively fine-tuned sentence encoders and two 4-bit
# quantised decoders with rotary positions (GPT-2 and BERT learn absolute positions). The
# special tokens are kept out of the projections, the clusters and ω² (the seed's BERT points
# included [CLS] and [SEP]) and measured in a section of their own, against words rather than
# word pieces. GPT-2 adds no beginning-of-sequence token, so its position 0 is a word; a
# decoder whose template prepends one has that token at position 0, and the first-token claim
# is tested on it. For a decoder the
# last layer is the hidden state after the final normalisation (GPT-2's final layer norm, the final
# RMSNorm of Llama-style models), as the transformers library returns it, so its jump is partly that
# normalisation; the seed does not say which convention it used.

# %% [markdown]
# ## Running a decoder as GPT-2 was run
#
# GPT-2's tokenizer prepends nothing, so its first word is the sequence's first token, the one
# every later token attends to. A decoder whose tokenizer prepends a beginning-of-sequence
# token gives that role to the BOS token, which the store keeps apart from the words. Could such
# a decoder be run without it, as GPT-2 was? Its language-model loss on held-out sentences (STS,
# the tokens after each sentence's first), with and without the token, says whether it still
# works:

# %% tags=["remove-input"]
bos = geometry.bos_dependence(models, corpus.sts(n=bos_texts, seed=seed).sentences,
                              n_boot=n_boot, seed=seed)
display(Markdown(" ".join(geometry.bos_sentences(bos))
                 or "No model of this build prepends a BOS token."))

# %% [markdown]
# ## Every layer in two dimensions
#
# The first figure, at the top of the page, sets the models side by side under one layer
# slider, as Kehlbeck et al. (2021) set GPT-2 beside BERT; the figures below show every layer of
# one model at
# once, one panel per layer (layer 0 is the embedding output). Every panel projects a layer on
# its first two principal components; colour is the word's position in its sentence. The
# side-by-side figure and the 3-D views draw {glue:md}`point_budget` of the sampled words, the
# same in every layer; each small panel of the grids draws 500 of them.

# %% tags=["remove-input"]
for spec, view in result.views.items():
    show(
        plots.layer_grid(
            [xyz[:, :2] for xyz in view.coords],
            [f"layer {i}" for i in range(len(view.coords))],
            view.words["word_index"].to_numpy(),
            "position",
            hover=geometry.hover_labels(view.words),
            title=f"{spec}: first two principal components of every layer, coloured by position",
        ),
        f"pca-grid-{spec}",
    )

# %% [markdown]
# ## Do the layers split into clusters?

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(
        layers, "silhouette", x="depth", lower="silhouette_lo", upper="silhouette_hi",
        dash="control", title="Best k-means silhouette per layer (above 0.5: the layer splits)",
        y_title="mean silhouette (-1 to 1)", reference=geometry.SILHOUETTE,
        reference_name="0.5"),
    "silhouette",
    caption="The best k-means silhouette per layer, with its 95% interval (shaded), for all words "
            "and, for decoders, without the first words; the dotted line is the 0.5 bound. The x "
            "axis is the depth, layer / last layer, so models of different depths share it.",
)
split = layers[(layers["control"] == "none") & layers["split"]]
show(
    plots.column_lines(
        split, {"first_share": "first words among the smaller clusters' words",
                "first_recall": "share of the first words in the smaller clusters"},
        legend="share", title="First words and the smaller clusters (layers that split)",
        y_title="share", reference=geometry.FIRST_SHARE, reference_name="0.5"),
    "first-word-share",
    caption="In the layers that split, the share of first words among the words outside the "
            "largest cluster (solid) and the share of all first words that lie there (dashed).",
)
show(
    plots.column_lines(
        layers[layers["control"] == "none"],
        {"separation": "this layer's split", "separation_carried": "previous layer's split"},
        legend="clusters", title="Separation: centroid distance over mean radius (log scale)",
        y_title="separation (centroid distance / RMS radius)").update_layout(yaxis_type="log"),
    "separation",
    caption="The separation of each layer's split (solid) and, from layer 1 on, that of the "
            "previous layer's clusters measured in this layer (dashed): at the last layer the "
            "dashed value over the previous layer's solid one is the \"separation decreases\" "
            "statistic.",
)
show(
    plots.lines_by_layer(
        layers[layers["control"] == "none"], "norm_ratio_first", x="depth",
        title="Mean norm of the first words' vectors over the other words' (log scale)",
        y_title="norm ratio, first words / other words", reference=1.0,
        reference_name="1").update_layout(yaxis_type="log"),
    "first-word-norm",
)

# %% [markdown]
# ## What decides where a word lies?

# %% tags=["remove-input"]
omega = {"var_position": "position", "var_first": "first word or not",
         "var_upos": "part of speech", "var_word": "word identity"}
show(
    plots.facet_lines(
        layers.melt(id_vars=["model", "depth", "control"], value_vars=list(omega),
                    var_name="attribute", value_name="omega2")
        .assign(attribute=lambda f: f["attribute"].map(omega)).dropna(subset=["omega2"]),
        "omega2", "control", x="depth", dash="attribute",
        title="Variance explained (ω²) by each attribute",
        y_title="ω² (chance-corrected share of variance)", reference=0.0, reference_name="0"),
    "variance-explained",
    caption="ω² of each attribute per layer, over all words (left) and without the first words "
            "(right, decoders only).",
)
show(
    plots.lines_by_layer(
        layers, "position_lead", x="depth", lower="position_lead_lo",
        upper="position_lead_hi", dash="control",
        title="ω² of position minus the larger of part of speech's and word identity's",
        y_title="ω² difference (above 0: position leads)", reference=0.0, reference_name="0"),
    "position-lead",
    caption="Position's ω² minus the larger of part of speech's and word identity's, with its "
            "jackknife interval; above 0, position explains more of the layer's variance than "
            "either.",
)

# %% [markdown]
# ## Does position run along a manifold?

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(
        layers, "knn_gain", x="depth", lower="knn_gain_lo", upper="knn_gain_hi",
        dash="control",
        title="Position predicted from the top 3 PCs by 10-NN regression, above chance",
        y_title="R² minus R² for shuffled positions", reference=geometry.MANIFOLD_GAIN,
        reference_name=f"manifold: {geometry.MANIFOLD_GAIN}"),
    "position-knn",
    caption="The 10-NN R² of position within the larger cluster (top 3 principal components) "
            "minus its value for shuffled positions, with its interval. A clean Swiss roll gives "
            "about 1; the claim's threshold is 0.5.",
)

# %% [markdown]
# Kehlbeck et al. (2021) also remark that, projected together with the first words' cluster,
# the larger cluster looks "almost two-dimensional": the first principal component is spent on
# the gap between the clusters. The next figure measures that flatness in every layer that
# splits.

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(
        layers[layers["control"] == "none"], "larger_planar", x="depth",
        lower="larger_planar_lo", upper="larger_planar_hi",
        title="How flat the larger cluster lies in its layer's 3-D projection",
        y_title="share of its variance in its best plane", reference=geometry.PLANAR_SHARE,
        reference_name=f"almost flat: {geometry.PLANAR_SHARE}"),
    "planar-share",
    caption="For each layer that splits, the share of the larger cluster's variance on the "
            "layer's first three principal components that lies along its own two main "
            "directions, with its 95% interval (sentences resampled). A flat cloud gives 1, a "
            "round one about 0.67; the claim's threshold is 0.9. Layers that do not split have "
            "no value.",
)

# %% [markdown]
# ## The clusters, one at a time
#
# Kehlbeck et al. (2021) separated GPT-2's two clusters and projected each on its own, which
# revealed the
# position manifold inside the larger one. Here, for each model whose layers split, the layer
# with the widest split is separated the same way; the table describes its clusters.

# %% tags=["remove-input"]
for spec, view in result.views.items():
    if view.split_layer is None:
        display(Markdown(f"*{spec}: no layer splits into well-separated clusters.*"))
        continue
    labels = view.labels[view.split_layer]
    position = view.words["word_index"].to_numpy()
    show(
        plots.side_by_side(
            view.split_coords,
            [f"cluster {c} ({(labels == c).sum()} words)" for c in range(labels.max() + 1)],
            [position[labels == c] for c in range(labels.max() + 1)],
            "position",
            title=f"{spec}, layer {view.split_layer}: each cluster on its own principal "
                  f"components",
        ),
        f"clusters-{spec}",
    )
show_table(result.tables["clusters"].round(3),
           'The best k-means split (k = 2 to 4) of every layer: silhouette, cluster sizes, '
           'separation of the two largest clusters and the share of first words outside the '
           'largest one.')

# %% [markdown]
# ## Interactive 3-D views
#
# Drag to rotate, scroll to zoom; the slider picks the layer and the menu at the top left how
# many of the drawn words are shown. The PCA view keeps the global structure; the UMAP view
# (initialised from PCA, cosine metric) keeps local neighbourhoods and is computed for
# {glue:md}`umap_layers` evenly spaced layers only.

# %% tags=["remove-input"]
for spec, view in result.views.items():
    position = view.words["word_index"].to_numpy()
    hover = geometry.hover_labels(view.words)
    show(
        plots.layer_slider_3d(view.coords, [str(i) for i in range(len(view.coords))],
                              position, "position", hover=hover,
                              title=f"{spec}: 3-D PCA per layer, coloured by position",
                              seed=seed),
        f"pca3d-{spec}",
    )
    if view.umap_layers:
        show(
            plots.layer_slider_3d(view.umap_coords, [str(i) for i in view.umap_layers],
                                  position, "position", hover=hover,
                                  title=f"{spec}: 3-D UMAP of selected layers", seed=seed),
            f"umap3d-{spec}",
        )

# %% [markdown]
# ## The special tokens
#
# Kehlbeck et al. (2021) measured, for every token, its *token intra-sentence similarity*: the
# mean cosine
# to the other tokens of its sentence. It reported that in BERT "the [SEP] and punctuation
# marks have the lowest token-based-intra-sentence-similarity in the upper layers", and that
# in GPT-2, "throughout all layers", the tokens at position 0 have the lowest similarity to the
# remaining tokens of their sentence. Here every stored token of every sentence (its words and
# its special tokens) gets that similarity in every layer. A closing token ([SEP], `</s>`) is
# set against the lowest mean of a part of speech, punctuation left out since the seed named it
# beside [SEP]; a first token ([CLS], `<s>`, a decoder's beginning-of-sequence token, or the
# first word of a decoder that prepends none) against the lowest mean of the later input
# positions (grouped 1, 2-3, 4-7, 8-15, 16-31, 32+). The punctuation marks (the words spaCy
# tags PUNCT) are set against the other parts of speech the same way, as the claim's second
# half; as for [SEP], the seed says it of BERT, so the encoders are tested. Intervals are a
# bootstrap over sentences.

# %% tags=["remove-input"]
special = result.tables["special"]
show(
    plots.facet_lines(
        special, "difference", "role", x="depth", color="model", dash="token",
        lower="difference_lo", upper="difference_hi",
        title="Token intra-sentence similarity of the special tokens and punctuation marks "
        "minus the lowest group's",
        y_title="difference in mean cosine (below 0: the least similar)",
    ).add_hline(y=0.0, line={"color": "gray", "dash": "dot"}),
    "special-intra",
    caption="The special token's mean token intra-sentence similarity minus the lowest mean of "
            "its reference groups, per layer, with its 95% interval; below the dotted 0 line the "
            "token is the least similar to its sentence.",
)
show(
    plots.facet_lines(
        special, "norm_ratio", "role", x="depth", color="model", dash="token",
        lower="norm_ratio_lo", upper="norm_ratio_hi", log_y=True,
        title="Mean norm of the special tokens and punctuation marks over the words' mean "
        "norm (log scale)",
        y_title="norm ratio, token / words",
    ).add_hline(y=1.0, line={"color": "gray", "dash": "dot"}),
    "special-norm",
    caption="The token's mean norm over the words' mean norm (over the other words for a "
            "decoder's first word and for the punctuation marks; log scale); a first token far "
            "above 1 carries the "
            "<i>massive activations</i> of an attention sink (Sun et al. 2024).",
)

# %% [markdown]
# What the tables say, token by token (generated from the per-layer table; "less similar"
# means the whole 95% interval of the difference lies below 0):

# %% tags=["remove-input"]
display(Markdown("\n\n".join(f"* {line}"
                               for line in geometry.special_sentences(special))))

# %% [markdown]
# ## The verdicts
#
# Each row is one of Kehlbeck et al.'s (2021) claims, tested on one model (GPT-2's claims on the
# decoders,
# BERT's on the encoders) under one control; a verdict that changes when the first word is left
# out is the first token's (the attention sink's).

# %% tags=["remove-input"]
claims.show_verdict_grid(result.claims, models)

# %% [markdown]
# ## What this run shows

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("01_geometry", {"claims": result.claims, "layers": layers},
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
for row in geometry.split_check(layers).itertuples():
    print(row.model, "layers:", row.layers, "split:", row.split)
for row in geometry.special_check(special).itertuples():
    print(row.model, "|", row.token, "| layers:", row.layers)

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"models": models, "n_sentences": n_sentences, "seed": seed,
                       "n_words": n_words, "point_budget": point_budget,
                       "umap_layers": umap_layers, "n_boot": n_boot, "bos_texts": bos_texts},
        "corpus": {"sentences": len(words_corpus.sentences), "words": len(words_corpus.words)},
        "bos_loss": bos,
        "models": {spec: acts.meta.get("model", {}) for spec, acts in stores.items()},
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
