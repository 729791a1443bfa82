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
# # Why decoders split: the attention sink, tested by intervention

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
n_sentences: int = 80
seed: int = 0
n_boot: int = 1000
results_path: str = "09_attention_sink.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
import numpy as np
from IPython.display import HTML, Markdown, display

from lmgeometry.chapters import sink
from lmgeometry.chapters.common import checked_parameters
from lmgeometry.io import corpus
from lmgeometry.measures.massive import MASSIVE_RATIO
from lmgeometry.report import claims, plots, results
from lmgeometry.report.figures import show, show_table

globals().update(checked_parameters(globals()))

texts = sink.sample_sentences(corpus.mnli_polysemy(n=600, seed=seed).sentences, n_sentences,
                              seed=seed)
result = sink.analyse(models, texts, seed=seed, n_boot=n_boot)
layers, loss = result.tables["layers"], result.tables["loss"]
decoders = [m for m in models if result.kinds[m] == "decoder"]
layers["condition_name"] = layers["condition"].map(sink.LABELS)
context = layers[layers["model"].isin(decoders) & (layers["layer"] > 0)
                 & layers["condition"].isin(["intact", "isolated"])].assign(
    condition_name=lambda d: d["condition"].map(
        {"intact": "with its context", "isolated": "cut off from its context"}))
layers = layers[layers["condition"] != "isolated"]  # the control has its own section

# %% tags=["remove-input"]
from lmgeometry.report import narrative  # the plain answer and paragraph (report/narrative.py)
from lmgeometry.report.findings import with_answer

display(HTML(with_answer(sink.findings(result), narrative.plain_answer(
    "09_attention_sink", {"claims": result.claims}, strict=False))))

# %% [markdown]
# The answer in one figure: how well each decoder's first tokens form a cluster of their own,
# layer by layer, intact and under each intervention. Look at which intervention brings the
# lines below the dotted "reasonable cluster" line.

# %% tags=["remove-input"]
split = layers[layers["model"].isin(decoders) & (layers["layer"] > 0)]
show(
    plots.facet_lines(split, "first_silhouette", "model", color="condition_name",
                      lower="first_silhouette_lo", upper="first_silhouette_hi",
                      reference=0.5, reference_name="a reasonable cluster",
                      y_title="first tokens' silhouette",
                      title="The first tokens' silhouette against all other tokens"),
    "sink-split",
    caption="The first-token cluster under each intervention: the mean silhouette of the "
    "first tokens in the partition {first tokens, the rest} (top 50 principal components), "
    "per layer, with 95% intervals over sentences. 0.5 and above: the first tokens form a "
    "cluster of their own. Where two runs give the same values their lines coincide and the "
    "one drawn last hides the other (in a causal model, cutting the attention to position 0 "
    "cannot change position 0 itself).",
)

# %% [markdown]
# **The question.** Kehlbeck et al. (2021) saw GPT-2's hidden states fall into "two very separate
# clusters", the smaller one made of each sentence's first token; Ethayarajh (2019) found GPT-2's
# upper layers highly anisotropic. Today both are explained by the *attention sink*: a few
# hidden dimensions take values thousands of times their layer's median at the first token
# (*massive activations*, {cite:alp}`sun2024`), every later query puts much of its attention
# on that token {cite:p}`xiao2024`, and its vector is pushed far from the rest
# {cite:p}`gu2025`.
# Earlier chapters only showed this by correlation (leaving the first word out). This chapter
# removes each ingredient, one at a time, and measures again.
#
# **How this chapter tests it.** The same sentences (a seeded sample of the MNLI sentences of
# the other chapters) run through every model token by token, over the sequence as the model
# sees it: position 0 is the sequence's first token, Gemma's `<bos>` or SmolLM2's first word.
# The encoders run intact, as a contrast. Each decoder also runs under five interventions,
# each alone, made with forward hooks and attention masks. Three act on the dimensions that
# carry massive activations at the first position (from the layer where they appear; median
# over sentences at least 100 times the layer's median magnitude), at that position only:
#
# * **massive activations removed**: each such dimension is set to its mean over the
#   sentence's other positions, so nothing massive is left;
# * **massive activations zeroed**: set to zero, the first of {cite:t}`sun2024`'s two tests;
# * **massive activations at their mean**: set to their mean value *at the first position*
#   over all the chapter's sentences, the second of their tests. The values stay massive but
#   become the same in every sentence: if the model keeps working, the massive activations
#   act as fixed biases, whose presence matters and not their values.
#
# The other two act on the sink itself:
#
# * **no attention to the first position**: every query after the first gets none (an
#   attention mask; softmax renormalises over the other keys);
# * **sink token toggled**: a decoder whose tokenizer prepends a BOS token runs without it,
#   one that prepends none runs with its BOS token prepended.
#
# In a decoder with rotary positions whose tokenizer prepends a BOS token (Gemma 3), these two
# are one computation: no word attends to the BOS token in the first, and there is none in
# the second, while rotary positions see only distances. Where the chapter finds the two runs'
# word vectors equal, it judges the claims once, under the sink token toggled. A control, the
# last run, cuts a later token off from its context (its own section below).
#
# Each run is measured again with chapter 1's and chapter 3's statistics on tokens: the first
# tokens' *silhouette* against all other tokens (do they form a cluster of their own? 0.5 or
# more is a reasonable cluster, {cite:alp}`kaufman1990`) beside the best k-means split, the
# *anisotropy baseline* (mean cosine of tokens from different sentences,
# {cite:alp}`ethayarajh2019`),
# the first token's *norm ratio*, *IntraSim* and *SelfSim*, and the **language-model loss** on
# the same sentences: an intervention that doubles the loss (the upper end of its interval
# at 2 or more) may have broken the model, and its effect on the geometry supports no causal
# verdict. Where the first position holds the same token in every sentence (Gemma's `<bos>`)
# and an intervention sets the same values in each (zeroed, or at their mean), the first
# tokens' vectors are identical, a cluster by construction: such cluster verdicts are not
# judged. Intervals are a bootstrap over sentences, the same draws for every model, layer and
# condition.
#
# **How this differs from the seeds and the papers.** The seeds studied GPT-2 and BERT; here
# two 4-bit quantised decoders with rotary positions (one instruction-tuned) and two
# contrastively trained sentence encoders stand in (see the introduction). The mechanism
# papers measured larger models over long texts; these sentences are short (about 25 tokens).
# The encoders here are more isotropic than BERT (contrastive training spreads a space), so
# "as isotropic as the encoders" compares with them, not with BERT.

# %% [markdown]
# ## The ingredients: massive activations and attention to the first position

# %% tags=["remove-input"]
intact = layers[layers["condition"] == "intact"]
show(
    plots.lines_by_layer(intact, "magnitude_ratio", x="depth", reference=MASSIVE_RATIO,
                         reference_name=f"{MASSIVE_RATIO:g} times the median",
                         y_title="largest |activation| / median |activation|",
                         title="The largest activation of each layer against its median"
                         ).update_yaxes(type="log", range=[0, 0.3 + np.log10(
                             intact["magnitude_ratio"].max())]),
    "sink-massive",
    caption="Massive activations across depth: each layer's largest activation magnitude "
    "over the median magnitude of the layer (all tokens, all dimensions; logarithmic axis), "
    "intact models. The dotted line is the multiple this chapter calls massive.",
)
show_table(sink.massive_table(result),
           "Where each model's largest activation lies: the layer where the ratio peaks, the "
           "dimension, the position in the sequence and the token that carries it there, and "
           "the layers whose first position carries massive dimensions and how many "
           "dimensions (those the three interventions on them replace).", digits=0)

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(intact[intact["layer"] > 0], "attention_first", x="depth",
                         lower="attention_first_lo", upper="attention_first_hi",
                         y_title="attention to position 0",
                         title="Attention that later queries put on the first position"),
    "sink-attention",
    caption="The attention sink: the mean attention weight that the queries after the first "
    "put on position 0, over heads and queries, per layer (intact models, 95% intervals "
    "over sentences).",
)

# %% [markdown]
# For scale (not drawn, since it depends on each sentence's length): attention spread evenly
# over the keys a query sees would give position 0 a share of $1/(q + 1)$ at query position
# $q$ in a decoder (a half at $q = 1$, a twentieth at $q = 19$), and $1/n$ in an encoder
# reading $n$ tokens.

# %% [markdown]
# ## Does the first-token cluster survive each intervention?
#
# The first figure, at the top of the page, gives the first tokens' silhouette under each
# intervention; the best k-means split below asks the same of whatever clusters a layer has.

# %% tags=["remove-input"]
show(
    plots.facet_lines(split, "silhouette", "model", color="condition_name",
                      lower="silhouette_lo", upper="silhouette_hi", reference=0.5,
                      y_title="best k-means silhouette",
                      title="The best k-means split (k = 2-4), whatever its clusters hold"),
    "sink-kmeans",
    caption="Chapter 1's statistic on tokens: the silhouette of the best k-means split "
    "(k = 2 to 4) of every layer, under each intervention, whatever the clusters hold: "
    "the last section says how many of the smaller clusters' tokens are first tokens where "
    "a split survives the removal of the massive activations.",
)

# %% [markdown]
# A cut-off says only whether a cluster is left. How much of it each intervention takes away
# is an effect size: the largest first-token silhouette over the inner layers, intervened
# against intact, and the share of it removed.

# %% tags=["remove-input"]
effect = result.tables["cluster_effect"]
show_table(
    effect.assign(condition=effect["condition"].map(sink.LABELS),
                  removed=100 * effect["removed"], removed_lo=100 * effect["removed_lo"],
                  removed_hi=100 * effect["removed_hi"])
    .rename(columns={"intact": "largest silhouette, intact",
                     "intervened": "largest silhouette, intervened",
                     "removed": "share removed (%)", "removed_lo": "95% low",
                     "removed_hi": "95% high", "reading": "how much"}),
    "How much of the first-token cluster each intervention removes: the largest silhouette "
    "of the first tokens over layers 1 to L - 1, intact and intervened, and the share "
    "removed (0%: untouched; 100%: no trace of a cluster), with a 95% interval over "
    "sentences (the same draws for both runs), read in words from the whole interval: most "
    "(half or more), part, or none (under a tenth), both words where it straddles a bound.",
    digits=2,
)

# %% [markdown]
# ## Is a first token set apart because it sees no context?
#
# In a causal model the first token is the only one that attends to nothing but itself. If
# that is what sets it apart, a later token given the same treatment should join it. The
# control run cuts each sentence's fifth token off from its context: in every layer its query
# attends only to itself (the tokens after it still read it). In a model with rotary
# positions and no start token (SmolLM2), such a token is computed exactly as the same token
# would be at the start of a sentence, whatever its neighbours; with a start token (Gemma 3)
# the first position is the start token, and the question becomes whether a word without
# context joins it. In a model that adds position embeddings to its vectors (GPT-2, not run
# here) the two would still differ by position. The statistic is each fifth token's
# silhouette counted with the first tokens against all other tokens (near 1: it lies with
# them; near 0 or below: with the rest), with the same tokens in the intact run as the null.

# %% tags=["remove-input"]
show(
    plots.facet_lines(context, "context_silhouette", "model", color="condition_name",
                      lower="context_silhouette_lo", upper="context_silhouette_hi",
                      reference=0.5, reference_name="a reasonable cluster",
                      y_title="fifth token's silhouette with the first tokens",
                      title="Does a token without context join the first tokens?"),
    "sink-context",
    caption="The context control: each sentence's fifth token scored as a member of the "
    "first tokens' group against all other tokens (its silhouette, top 50 principal "
    "components), per layer, cut off from its context and, as the null, with it, with 95% "
    "intervals over sentences. 0.5 and above: it lies with the first tokens.",
)

# %% [markdown]
# ## Anisotropy, norms and the similarity measures under each intervention

# %% tags=["remove-input"]
inner = layers[layers["layer"] > 0]
show(
    plots.facet_lines(inner, "anisotropy", "model", color="condition_name",
                      lower="anisotropy_lo", upper="anisotropy_hi",
                      y_title="anisotropy baseline",
                      title="Mean cosine of tokens from different sentences"),
    "sink-anisotropy",
    caption="The anisotropy baseline (Ethayarajh 2019, eq. 4, on tokens) per layer: the "
    "encoders intact, each decoder intact and under each intervention (95% intervals over "
    "sentences).",
)
show(
    plots.facet_lines(split, "norm_ratio", "model", color="condition_name",
                      lower="norm_ratio_lo", upper="norm_ratio_hi", log_y=True,
                      y_title="first token's norm / others'",
                      title="How much longer the first token's vector is"),
    "sink-norms",
    caption="The first token's mean norm over the other tokens' (logarithmic axis), per "
    "layer, for each decoder under each intervention.",
)
show(
    plots.facet_lines(inner, "intrasim", "model", color="condition_name",
                      lower="intrasim_lo", upper="intrasim_hi", y_title="IntraSim",
                      title="IntraSim: tokens against their sentence's mean"),
    "sink-intrasim",
    caption="Intra-sentence similarity (Ethayarajh 2019, eq. 2, on tokens) per layer. The "
    "sentence's mean is dominated by a first token with a huge norm, so IntraSim moves with "
    "the first token's norm.",
)
show(
    plots.facet_lines(inner, "selfsim", "model", color="condition_name", y_title="SelfSim",
                      title="SelfSim of the frequent token types"),
    "sink-selfsim",
    caption=f"Self-similarity (Ethayarajh 2019, eq. 1) of the token types that occur after "
    f"position 0 in at least {sink.SELFSIM_MIN_SENTENCES} sentences, averaged over types "
    "(point values: no interval is drawn).",
)

# %% [markdown]
# ## What each intervention costs the model

# %% tags=["remove-input"]
costs = loss[loss["condition"] != "intact"].assign(
    condition_name=lambda d: d["condition"].map(sink.LABELS))
show(
    plots.interval_points(costs, "ratio", "ratio_lo", "ratio_hi", x="condition_name",
                          reference=sink.BROKEN_LOSS_RATIO,
                          reference_name=f"{sink.BROKEN_LOSS_RATIO:g} times: may be broken",
                          y_title="loss per token / intact",
                          title="What each intervention costs the model"
                          ).update_yaxes(type="log"),
    "sink-loss",
    caption="The language-model loss per token under each intervention over the intact "
    "model's (logarithmic axis), with 95% intervals over sentences. Sun et al. (2024) found "
    "that massive activations set to their mean leave the loss as it was, and zeroed break "
    f"the model; this chapter's rules: at most {sink.KEPT_LOSS_RATIO:g} times is kept, "
    f"{sink.BROKEN_LOSS_RATIO:g} times or more may be broken.",
)
show_table(
    loss.assign(condition=loss["condition"].map(sink.LABELS))
    [["model", "condition", "loss", "ratio", "ratio_lo", "ratio_hi", "usable"]]
    .rename(columns={"loss": "loss (nats per token)", "ratio": "loss / intact",
                     "ratio_lo": "95% low", "ratio_hi": "95% high",
                     "usable": f"below {sink.BROKEN_LOSS_RATIO:g} times"}),
    "The language-model loss per token (each sentence's text tokens after its first) under "
    "each intervention, against the intact model's, with 95% intervals over sentences. An "
    "intervention whose interval reaches twice the intact loss may have broken the model; "
    "its rows below are shown, not judged.",
    digits=2,
)

# %% [markdown]
# ## What this run shows
#
# The mechanism papers predict that removing the massive activations, or cutting the
# attention to the first position, dissolves the first-token cluster, and that the decoders'
# anisotropy comes with it; and that the massive activations set to their mean value leave
# the model working, while zeroed they break it (Sun et al. 2024). These claims go beyond
# the seeds (they test the mechanism the literature gives for the clusters Kehlbeck et al.
# (2021) saw and the anisotropy Ethayarajh (2019) measured): the scorecard lists them apart
# from the seeds' own claims.

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("09_attention_sink", {"claims": result.claims},
                                     strict=False)))

# %% tags=["remove-input"]
claims.show_verdict_grid(
    result.claims, decoders,
    "The verdicts: each claim under each intervention, per decoder (<i>verdict: statistic "
    "[95% interval]</i>; <i>not a fair test</i> where the intervention may have broken the "
    "model or there is no cluster to remove). Each claim links to its figure; the results file "
    "holds every field of the claims.",
    control_name="intervention")

# %% [markdown]
# ## Appendix: every claim, in sentences
#
# The sentences generated from the claims table, per decoder. Folded: open it to check a
# number.

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show every claim"}
display(Markdown("\n\n".join(result.sentences)))

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
for row in result.claims.itertuples():
    print(row.model, "|", row.control, "|", row.claim, "|", row.verdict, "|", row.applies)
for row in sink.condition_layers(layers).itertuples():
    print(row.model, "|", row.condition, "| layers:", row.layers)

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"models": models, "n_sentences": n_sentences, "seed": seed,
                       "n_boot": n_boot},
        "texts": texts,
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
