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
# # A controlled pair: an encoder and a decoder that differ only in their objective

# %% tags=["parameters"]
tokens: int = 300000
checkpoints: int = 6
n_sentences: int = 600
sts_sentences: int = 1000
n_words: int = 1000
seed: int = 0
n_boot: int = 1000
results_path: str = "10_controlled_pair.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from IPython.display import HTML, Markdown, display

from lmgeometry.chapters import pair
from lmgeometry.chapters.common import checked_parameters
from lmgeometry.chapters.pair import LEARNED_GAIN, LEARNED_RULE
from lmgeometry.io import corpus
from lmgeometry.report import claims, narrative, plots, results
from lmgeometry.report.figures import show, show_table
from lmgeometry.report.prose import glue_values

globals().update(checked_parameters(globals()))
glue_values(tokens=tokens, checkpoints=checkpoints, n_sentences=n_sentences,
            sts_sentences=sts_sentences, n_words=n_words, learned_gain=LEARNED_GAIN)

runs = pair.train_runs(pair.run_settings(tokens, checkpoints, seed))
result = pair.analyse(runs, corpus.mnli_polysemy(n=n_sentences, seed=seed),
                      corpus.sts(n=sts_sentences, seed=seed), seed=seed, n_words=n_words,
                      n_boot=n_boot)
curves, learned = result.tables["curves"], result.tables["learned"]
embeddings, layers = result.tables["embeddings"], result.tables["layers"]
pair_models = [pair.LABELS[n] for n in ("mlm", "causal")]
seed_rows = result.claims[result.claims["source_chapter"] != 10]
drift_rows = result.claims[result.claims["source_chapter"] == 10]
# the caveat: the pair's size and budget, and each run that did not learn, by its own sentence
unlearned = [result.about(model, "learning") for model, ok in result.learned.items() if not ok]
size = runs["causal"].info["log"]["parameters"]
display(HTML(claims.findings_box(
    seed_rows, result.kinds, models=pair_models,
    answer=narrative.plain_answer("10_controlled_pair",
                                  {"claims": result.claims, "learned": learned}, strict=False),
    question="Do the seeds' differences between an encoder and a decoder appear in two models "
    "that differ only in their objective, and does Biš et al.'s (2021) drift come from the tied "
    "output "
    "layer?",
    caveat=" ".join([f"Two models of about {size / 1e6:.1f} million parameters, each trained on "
                     f"{runs['causal'].info['log']['tokens']:,} tokens of WordNet glosses and "
                     "SST-2 snippets (BERT and GPT-2: "
                     "over a hundred million parameters and billions of tokens)."] + unlearned))))
# the drift verdict only: its two further tests are told in their section
display(Markdown("**The intervention:** " + " ".join(result.sentences_about("drift")[:1])))

# %% [markdown]
# The answer to the second question in one figure: the mean cosine between the rows of each
# run's input embeddings W across training. Look at whether the untied run, whose output
# layer is a matrix of its own, follows the tied runs or stays near zero.

# %% tags=["remove-input"]
show(
    plots.lines_by_layer(embeddings, "mean_cosine", x="tokens", x_title="training tokens",
                         y_title="mean cosine between rows of W",
                         reference=0.02, reference_name="Biš et al.'s (2021) common direction",
                         title="W's common drift direction across training"),
    "pair-drift",
    caption="Biš et al.'s (2021) common direction: the mean cosine between the rows of each run's "
    "input "
    "embedding matrix W at every checkpoint (exact; the dotted line is 0.02, the smallest "
    "common direction the seed counts as drift). The untied run's output layer is a matrix of "
    "its own; its W is the input embeddings only.",
)

# %% [markdown]
# **The question.** The seeds compare BERT with GPT-2 and read their geometric differences as
# differences between a masked and a causal language model, but the two also differ in data,
# tokenizer, size and more; the stand-ins of the other chapters differ even further. This
# chapter trains the experiment none of them could run: a BERT-architecture masked LM and a
# GPT-2-architecture causal LM, alike in depth, width, heads, vocabulary, learned absolute
# positions, tokenizer, training text, token budget and seed, with checkpoints across
# training. It tests the seeds' encoder-versus-decoder claims on the final pair, follows when
# each signature appears during training, and puts Biš et al.'s (2021) account of drift to a test
# with
# a third run that changes one thing: the causal model's output layer untied from its input
# embeddings.
#
# **How this chapter tests it.** The package's pretraining (README, "Pretraining from scratch")
# trains each model from scratch on the same text (WordNet glosses and SST-2's training rows,
# never a sentence a chapter analyses), {glue:md}`tokens` tokens each, with {glue:md}`checkpoints`
# log-spaced checkpoints after the initialisation; the runs are cached and sha256-verified, so
# the chapter trains them once. Each checkpoint is a plain model folder, read into the
# activation store like any other model, on chapter 1's corpus ({glue:md}`n_sentences` MultiNLI
# sentences, {glue:md}`n_words` words sampled) and, for the final pair, chapter 3's
# ({glue:md}`sts_sentences` STS sentences). Every number below comes from the book's existing
# measures: chapter 1's clusters and position manifold, chapter 3's anisotropy, SelfSim and
# IntraSim, chapter 4's I(W) and common direction, under each chapter's own claims and
# thresholds.
#
# **How this differs from the seeds.** The pair is tiny (4 layers, 128 wide, about 1.9
# million parameters) and trained on a few hundred thousand tokens, not GPT-2's or BERT's
# billions; its text is short glosses and film-review snippets. Both models attend within each
# text only, their positions count from each text's [CLS], each optimiser step sees one
# 256-token sequence, and the masked LM predicts half of the tokens (BERT: 15%), choices that
# let the masked LM learn at this budget (README, "Pretraining from scratch"). What it
# controls, the seeds could not: everything but the objective (and what BERT's and GPT-2's
# architectures fix: post-norm blocks and an MLM head in one, pre-norm blocks and a final norm
# in the other). Its positions are learned and absolute, like GPT-2's and BERT's, so the
# position claims the rotary stand-ins cannot take apply here; but the training texts are
# short (99% at most 48 tokens), so positions past about 66 are seldom trained and those past
# 140 never, which a long MultiNLI sentence reaches: the position claims speak mostly for the
# first few dozen positions. The causal model, like GPT-2 in training, reads a first token
# ([CLS], its BOS) before each text's words.

# %% [markdown]
# ## Did both models learn?
#
# A model that learned little beyond word frequencies says little about its objective. Each
# run's held-out loss is compared with a unigram model fitted on the training tokens: the
# causal model's next-token perplexity, the masked LM's perplexity and accuracy on a fixed 15%
# of the held-out tokens. A run *learned* when its last checkpoint is at least
# {glue:md}`learned_gain` nats per token below its baseline; the claims of a run that did not
# are shown below as *not a fair test*, so that no verdict rests on it.

# %% tags=["remove-input"]
curve = curves.assign(**{"unigram baseline": curves["baseline_perplexity"]})
show(
    plots.column_lines(curve, {"perplexity": "model", "unigram baseline": "unigram baseline"},
                       x="tokens", x_title="training tokens", y_title="held-out perplexity",
                       title="Held-out perplexity across training, against the unigram "
                       "baseline").update_yaxes(type="log"),
    "pair-curves",
    caption="Learning curves: each run's held-out perplexity at every checkpoint (solid) and "
    "its unigram baseline's (dashed; logarithmic axis). The masked LM is scored on masked "
    "positions, the causal models on every next token, so the two objectives' perplexities are "
    "not comparable with each other, only with their own baselines.",
)
show_table(
    learned[[c for c in ("model", "tokens", "perplexity", "baseline_perplexity", "accuracy",
                         "baseline_accuracy", "gain", "learned") if c in learned]]
    .rename(columns={"baseline_perplexity": "unigram perplexity",
                     "baseline_accuracy": "unigram accuracy",
                     "gain": "gain (nats per token)", "learned": "learned (past the bar)"}),
    "Each run's last checkpoint on the held-out text: perplexity and (masked LM) accuracy "
    "against its unigram baseline, the gain in nats per predicted token and whether it "
    "reaches the rule.", digits=3)
display(Markdown("\n\n".join(result.sentences_about("learning"))))
display(Markdown(f"*The rule:* {LEARNED_RULE}."))

# %% [markdown]
# ## The seeds' claims on the final pair
#
# Chapters 1 and 3 test Kehlbeck et al.'s (2021) and Ethayarajh's (2019) claims on the stand-ins;
# here the same code
# tests them on the last checkpoint of each model of the pair. The claims' statistics,
# thresholds and calibrations are those chapters'; the figures they link to are there.

# %% tags=["remove-input"]
display(Markdown("\n\n".join(result.sentences_about("claims"))))
claims.show_verdict_grid(
    seed_rows, pair_models,
    "The seeds' claims on the final pair (<i>verdict: statistic [95% interval]</i>; <i>not a "
    "fair test</i> where the claim does not apply). The statistic, threshold and figure of "
    "each row are chapter 1's or chapter 3's; the results file holds every field.")

# %% [markdown]
# ## When the signatures appear during training
#
# Each checkpoint, from the random initialisation on, measured with the same code. The
# seeds describe finished models; these figures show when, during training, each of their
# signatures appears. The sentences below the figures describe each run; one about a run that
# did not learn clearly says so, and no conclusion is drawn from it.

# %% tags=["remove-input"]
inner = layers[layers["layer"] > 0].assign(layer_name="layer " + layers["layer"].astype(str))
show(
    plots.facet_lines(inner, "mean_cosine", "model", x="tokens", color="layer_name",
                      lower="mean_cosine_lo", upper="mean_cosine_hi",
                      x_title="training tokens", y_title="mean cosine between words",
                      title="Anisotropy across training"),
    "pair-anisotropy",
    caption="Anisotropy across training: the mean cosine between the word vectors of each layer "
    "(chapter 4's hidden-state measure, all word pairs, 95% intervals over sentences), at "
    "every checkpoint of each run.",
)
show(
    plots.facet_lines(inner, "silhouette", "model", x="tokens", color="layer_name",
                      lower="silhouette_lo", upper="silhouette_hi", reference=0.5,
                      reference_name="a reasonable cluster", x_title="training tokens",
                      y_title="best k-means silhouette",
                      title="Do the words split into clusters during training?"),
    "pair-split",
    caption="Chapter 1's split statistic: the silhouette of the best k-means split (k = 2 to 4) "
    "of each layer's words (95% intervals over sentences), at every checkpoint; 0.5 and above "
    "is a reasonable cluster. Kehlbeck et al. (2021) saw GPT-2's words fall into two very separate "
    "clusters, the smaller one the sentences' first tokens.",
)
show(
    plots.facet_lines(inner, "norm_ratio_first", "model", x="tokens", color="layer_name",
                      log_y=True, reference=1.0, x_title="training tokens",
                      y_title="first word's norm / others'",
                      title="The first word across training"),
    "pair-first",
    caption="The first-token signature: the mean norm of each sentence's first word over the "
    "other words' (chapter 1's measure; logarithmic axis), per layer, at every checkpoint. "
    "The causal model reads its [CLS] (its BOS, kept apart from the words) before the first "
    "word, as it did in training; the results file also holds the first words' share of the "
    "smaller cluster where a layer splits.",
)
show(
    plots.facet_lines(inner, "knn_gain", "model", x="tokens", color="layer_name",
                      lower="knn_gain_lo", upper="knn_gain_hi", x_title="training tokens",
                      y_title="k-NN R² of position, gain over shuffled",
                      title="The position manifold across training"),
    "pair-position",
    caption="Chapter 1's position-manifold statistic: how much better a word's position is "
    "predicted from its 10 nearest neighbours in the top 3 principal components than for "
    "shuffled positions (k-NN R² gain, 95% intervals over sentences), at every checkpoint.",
)
show(
    plots.lines_by_layer(embeddings, "isotropy_raw", x="tokens", lower="isotropy_raw_lo",
                         upper="isotropy_raw_hi", x_title="training tokens",
                         y_title="I(W)", title="The fall of I(W) across training"),
    "pair-isotropy",
    caption="Biš et al.'s (2021) partition-function isotropy I(W) of each run's input embeddings "
    "at "
    "every checkpoint (1 is perfectly isotropic; 95% intervals from a bootstrap over tokens).",
)
display(Markdown("\n\n".join(result.sentences_about("training"))))

# %% [markdown]
# ## Does the drift depend on the tied output layer?
#
# {cite:t}`bis2021` explains the common drift by "common enemies": at every step the softmax
# gradient
# pushes the output embedding of every token that is not the target the same way, and rare
# tokens, seldom targets, are pushed furthest; with tied weights the output embeddings are the
# input embeddings W. If that is the mechanism, a causal model whose output layer is a matrix
# of its own, trained on the same tokens in the same order, should keep a W without the common
# direction. The third run changes only that. The verdict is the difference between the two
# runs' mean cosine between rows of W at the last checkpoint, with a 95% interval from a paired
# bootstrap over the vocabulary's rows, against Biš et al.'s (2021) own effect size for a common
# direction (0.02). The chapter's first figure shows the three runs' W across training.
#
# Two more tests say where the drift goes and what it is. If common enemies act on the output
# embeddings, the untied run's *output* matrix should keep the common direction its input
# matrix lost (its mean cosine between rows, against the same 0.02). And a common direction
# need not be common enemies at all: an output layer without a bias can score each token's
# frequency along one direction, which would also make every row lean one way. The two
# accounts disagree on which tokens lie furthest along the direction: the rarest (seldom the
# target, so pushed most) for common enemies, the most frequent for a frequency direction. The
# statistic is the rank correlation between each token's position along the mean row direction
# and its log frequency in the training text (special tokens left out), with a 95% interval
# over tokens; the claim needs at least a small negative one (-0.1, Cohen 1988), in the tied
# run's W and in the untied run's output matrix.

# %% tags=["remove-input"]
display(Markdown("\n\n".join(result.sentences_about("drift"))))
claims.show_verdict_grid(
    drift_rows, [pair.LABELS["causal"]],
    "The intervention's verdicts (<i>verdict: statistic [95% interval]</i>): tied minus "
    "untied mean cosine between rows of W; the untied output matrix's own mean cosine; the rank "
    "correlation of each token's position along the common direction with its log frequency, "
    "in the tied W and the untied output matrix (all at the last checkpoint).",
    control_name="intervention", anchor="pair-drift-verdict")

# %% [markdown]
# ## What this run shows

# %% tags=["remove-input"]
display(Markdown(narrative.run_shows("10_controlled_pair",
                                     {"claims": result.claims, "learned": learned},
                                     strict=False)))

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
for row in result.claims.itertuples():
    print(row.model, "|", row.control, "|", row.claim, "|", row.verdict, "|", row.applies)
print(learned[["model", "learned"]].to_string())

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {
        "parameters": {"tokens": tokens, "checkpoints": checkpoints,
                       "n_sentences": n_sentences, "sts_sentences": sts_sentences,
                       "n_words": n_words, "seed": seed, "n_boot": n_boot},
        "runs": {n: {"folder": r.folder.name, "settings": r.info["settings"],
                     "log": {k: v for k, v in r.info["log"].items() if k != "loss"}}
                 for n, r in runs.items()},
        "kinds": result.kinds,
        "learned": result.learned,
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
