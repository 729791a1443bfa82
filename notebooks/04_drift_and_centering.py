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
# # Drift and centering: a common shift, undone by subtracting the mean
#
# Seed 004 (Biš, Podkorytov and Liu 2021, *Too Much in Common*) looked at the **input
# embedding matrix W** (one row per vocabulary token) of BERT, RoBERTa and GPT-2. Projected on
# its first two singular vectors W looks like a narrow cone, which earlier work (Gao et al.
# 2019, "representation degeneration") read as the embeddings filling only a thin slice of the
# space. Seed 004 argued instead that the rows are **shifted along one common direction**:
# with weight tying, every training step pushes all non-target embeddings the same way (the
# "common enemies effect": the output softmax pushes every token that is *not* the target
# away from the context), rare tokens most. Subtracting the mean row ("centring") then gives
# a nearly isotropic matrix: their isotropy score I(W) (defined below; 1 when no direction is
# preferred, near 0 when one dominates) rose from 0.07-0.59 to 0.64-0.98 (Table 1), cosines
# between the never-trained `[unused]` tokens and other tokens rose as frequency fell
# (Fig. 3), and centring, "scaled centring" or removing the top principal components improved
# word similarity, most with the inner product (Tables 2-3).
#
# This chapter repeats these measurements on the models of this build, and asks one question
# the paper did not: does the drift explanation carry over from W to the **contextual hidden
# states** of every layer?
#
# **Measures** (in `lmgeometry.measures.isotropy` and `lmgeometry.chapters.drift`, formulas and
# sources in the docstrings). W has n rows (tokens) of width d; mu is its mean row.
#
# * **I(W)**, the partition-function isotropy of Mu & Viswanath (2018) that seed 004 uses:
#   for a unit direction c, Z(c) = sum_w exp(c . w) is the partition function, and
#   I(W) = min_c Z(c) / max_c Z(c) over the eigenvectors c of W^T W. It is 1 when every
#   direction gives the same Z and near 0 when one direction dominates; it is computed in log
#   space (the paper's direct `exp` overflows for large norms). It depends on the scale of W,
#   not only on its shape: rows of large norm drive it towards 0 however round the cloud is.
# * **W_c** = W - 1 mu^T, the centred matrix ("centring"); the **mean-vector ratio** is
#   ||mu|| / (average row norm).
# * **W_r**, the "post-processed" W: W_c with its top D = ceil(d/100) principal components
#   (PCs: the leading eigenvectors of the covariance of the rows) projected out, as in the
#   paper's eq. 11 (the centred rows are projected) and, for comparison, as in Mu &
#   Viswanath's "all-but-the-top" original (the raw rows are projected).
# * **IsoScore** (Rudman et al. 2022): computed from the variances of the cloud along its
#   principal axes; 1 when the variance is the same in every direction, 0 when it lies in a
#   single one, and (k - 1)/(d - 1) when it is spread evenly over k of the d directions. It
#   ignores any common offset (it is translation invariant), so it is the same before and
#   after centring.
# * the exact **mean cosine** between distinct rows, (||sum_i u_i||^2 - n)/(n (n - 1)) for
#   the unit rows u_i = w_i / ||w_i|| (Biš et al. 2021, appendix A).

# %% tags=["parameters"]
models = ["mpnet-base", "smollm2-135m"]
n_sentences = 600
seed = 0
point_budget = 2000
hidden_rows = 4000
n_bins = 30
agreement = 0.05  # |mean cosine - mean-vector prediction| counted as agreement
results_path = "04_drift_and_centering.results.json"

# %%
import pandas as pd
from IPython.display import Markdown, display

from lmgeometry.activations import store
from lmgeometry.chapters import drift
from lmgeometry.io import corpus
from lmgeometry.measures import isotropy, wordbench
from lmgeometry.report import plots, results
from lmgeometry.report.figures import show

texts = corpus.frequency_texts()
runs = [
    drift.embedding_matrix_drift(spec, texts, point_budget=point_budget, n_bins=n_bins, seed=seed)
    for spec in models
]
for run in runs:
    f = run.facts
    caveats = "; ".join(run.caveats) or "none"
    print(
        f"{run.model}: {f['name']} ({f['kind']}, {f['n_layers']} layers x {f['hidden_size']}), "
        f"W = {run.statistics['n_rows']:,} x {run.statistics['width']}; caveats: {caveats}"
    )

# %% [markdown]
# **Models.** The paper's models (BERT, RoBERTa, GPT-2) cannot be downloaded where this book
# is built; the default models are a contrastively fine-tuned sentence encoder (MPNet, whose
# vocabulary is BERT-uncased's, `[unused]` tokens included) and a small instruction-tuned
# decoder (SmolLM2-135M, 4-bit weights dequantized: quantisation adds noise to every row of
# W). Both tie their input and output embeddings, the setting of the common-enemies argument,
# but a sentence encoder's W was last trained without any token-prediction loss. Other models
# (e.g. `gemma3-270m`, whose 262,144 x 640 W the W-level analysis handles in about a minute on
# two CPU cores, or hub ids such as `gpt2` and `bert-base-cased` where the hub is reachable) can
# be given with `lmgeometry book -p models ...`; Gemma is left out of the default build because
# its hidden states would first have to be extracted, which would exceed the chapter's time
# budget.
#
# ## Table 1: isotropy before and after centring
#
# One row per model; the paper's values are printed below as reference (`mean_norm` is the
# average row L2 norm, `mean_vector_norm` the L2 norm of the mean row mu and
# `mean_vector_ratio` their ratio). `isotropy_top_pcs_removed` follows the paper's eq. 11;
# `..._original` is Mu & Viswanath's projection of the raw rows, which leaves a constant
# offset along the removed directions and therefore stays far from 1. `top_eigvec_mean_cosine`
# is |cos(u_1, mu)| for the top eigenvector u_1 of W^T W (the paper reports 0.99 for
# RoBERTa-large): near 1 means the leading singular direction is the shift.

# %%
table1 = pd.DataFrame([{"model": run.model} | run.statistics for run in runs])
table1_columns = [
    "isotropy_raw",
    "isotropy_centered",
    "isotropy_top_pcs_removed",
    "isotropy_top_pcs_removed_original",
    "mean_norm",
    "mean_vector_norm",
    "mean_vector_ratio",
]
display(
    table1[
        ["model", "n_rows", "width", *table1_columns, "isoscore", "mean_cosine",
         "mean_cosine_centered", "top_eigvec_mean_cosine", "norm_count_spearman"]
    ].round(3)
)
reference = pd.DataFrame(
    [{"model": v["label"]} | {k: v[k] for k in table1_columns if k in v}
     for v in isotropy.BIS2021_TABLE1.values()]
)
display(Markdown("*Biš et al. (2021), Table 1 (reference):*"))
display(reference)

# %% [markdown]
# `norm_count_spearman` is the rank correlation between a token's row norm and its count in
# the frequency corpus (below): negative when frequent tokens have shorter vectors, as seed
# 004 cites for BERT.
#
# ## The cone is a shift: W on its first two singular vectors, before and after centring
#
# Each point is one of a seeded sample of vocabulary tokens, coloured by log10 of (1 + its
# count in the frequency corpus). Left: the uncentred matrix on the top two eigenvectors of
# W^T W (the paper's Fig. 1a-b view, where a shifted cloud looks like a cone). Right: the
# centred matrix on its first two principal components.

# %%
for run in runs:
    p = run.projection
    show(
        plots.side_by_side(
            [p[["x", "y"]].to_numpy(), p[["x_centered", "y_centered"]].to_numpy()],
            ["W (uncentred)", "W - mean (centred)"],
            [p["log10_count"].to_numpy()] * 2,
            "log10 count",
            title=f"{run.model}: input embeddings on their first two singular vectors",
        ),
        f"projection-{run.model}",
    )

# %% [markdown]
# ## Singular values before and after centring
#
# A shift adds one large singular value (roughly sqrt(n) ||mu||) on top of the spectrum of
# the centred cloud; centring removes it and leaves the rest almost unchanged.

# %%
spectra = pd.concat([run.spectra for run in runs], ignore_index=True)
fig = plots.lines_by_layer(
    spectra,
    "singular_value",
    x="component",
    dash="variant",
    title="Singular values of W and of the centred W",
    y_title="singular value",
)
fig.update_yaxes(type="log")
fig.update_xaxes(type="log")
show(fig, "spectra")
spectra_gap = spectra[spectra["component"] <= 2].pivot_table(
    index=["model", "variant"], columns="component", values="singular_value"
)
spectra_gap["sigma1_over_sigma2"] = spectra_gap[1] / spectra_gap[2]
display(spectra_gap.round(2))

# %% [markdown]
# ## A toy version: points on a sphere, moved away from the origin (seed 004, Fig. 2)
#
# 500 points on the unit sphere in 3-D whose centre is moved a distance s along the diagonal.
# The slider moves the sphere; the second figure shows the singular values of the uncentred
# point matrix: the shift alone opens a gap between the first and the others, exactly the
# pattern of the embedding matrices above, with no "cone" in the data.

# %%
toy_shifts = [0.0, 0.5, 1.0, 2.0, 4.0]
toy = [isotropy.toy_sphere_shift(500, 3, s, seed=seed) for s in toy_shifts]
show(
    plots.layer_slider_3d(
        [points for points, _ in toy],
        [f"shift {s}" for s in toy_shifts],
        toy[0][0][:, 2],
        "z before the shift",
        title="Points on a sphere moved away from the origin (slider: shift)",
        slider_prefix="",
    ),
    "toy-sphere",
)
toy_sv = pd.DataFrame(
    [
        {"shift": s, "singular value": f"sigma_{i + 1}", "value": v}
        for s, (_, sv) in zip(toy_shifts, toy, strict=True)
        for i, v in enumerate(sv)
    ]
)
show(
    plots.lines_by_layer(
        toy_sv,
        "value",
        color="singular value",
        x="shift",
        title="Singular values of the shifted sphere's point matrix",
    ),
    "toy-singular-values",
)

# %% [markdown]
# ## Rare tokens drift furthest (seed 004, Fig. 3)
#
# The paper averaged the cosine between BERT's 994 `[unused]` tokens (never seen in
# pre-training, so only ever pushed away) and the tokens of each bin of 1000 vocabulary ids.
# For vocabularies without such tokens we need a frequency order, so **token frequencies are
# counted here in Brown, MultiNLI (dev-matched) and STS 2012-2016 together, tokenised with each
# model's own tokenizer** (about 2.5M tokens; the paper used CNN/DailyMail, which this project
# does not ship). The reference set is every token that this corpus never produces, and the
# seen tokens are split into equal-size bins from most to least frequent (the reference set
# and the bins are disjoint). Solid: W; dashed: centred W. For MPNet, whose vocabulary is
# BERT's, the second figure also repeats the paper's own protocol: the `[unused]` tokens
# against bins of 1000 consecutive vocabulary ids. Unlike the paper, the `[unused]` tokens
# themselves and the special tokens are left out of the bins they are compared with, and a
# bin that keeps fewer than half of its ids is dropped. In BERT's vocabularies (MPNet's is a
# copy of BERT-uncased's) the `[unused]` tokens fill almost all of the first thousand ids, so
# the bin of ids 0-999 is dropped; the next bin, ids 1000-1999, holds single characters of
# many scripts (rare in English text, but not reference tokens). A
# WordPiece vocabulary is only roughly in frequency order, so the x axis of that figure is the
# first vocabulary id of each bin, not a frequency rank.
#
# Whether a curve rises as frequency falls is decided from all bins, not from the first and
# the last: the findings report Spearman's rank correlation rho between the bin order
# (frequency rank, or vocabulary id) and the mean cosine, and call a curve rising (falling)
# when rho > 0 (< 0) with p < 0.05 (`drift.bin_trend`).

# %%
rare = pd.concat([run.rare for run in runs], ignore_index=True)
show(
    plots.lines_by_layer(
        rare[rare["protocol"] == "frequency"],
        "mean_cosine",
        x="bin",
        dash="variant",
        title="Mean cosine between unseen tokens and frequency bins (bin 0: most frequent)",
        y_title="mean cosine",
    ),
    "rare-frequency",
)
if (rare["protocol"] == "index").any():
    fig = plots.lines_by_layer(
        rare[rare["protocol"] == "index"],
        "mean_cosine",
        x="rank_start",
        dash="variant",
        title="Mean cosine between [unused] tokens and bins of 1000 vocabulary ids "
        "([unused] and special tokens left out of the bins)",
        y_title="mean cosine",
    )
    fig.update_xaxes(title="first vocabulary id of the bin (bins of 1000 ids)")
    show(fig, "rare-index")
rare_trends = pd.DataFrame(
    [
        {"model": m, "protocol": pr, "variant": v} | drift.bin_trend(part)
        for (m, pr, v), part in rare.groupby(["model", "protocol", "variant"], sort=False)
    ]
)
display(rare_trends.round(3))

# %% [markdown]
# ## Token frequencies are Zipfian (seed 004, appendix B)
#
# Rank-frequency curves of the tokens of each tokenizer on the same corpus, with the
# whitespace-separated words beside them. The table gives how many of the most frequent tokens
# cover 30%, 50% and 98% of the corpus (the paper: 13, 85 and nearly 15,000 WordPiece tokens
# on CNN News).

# %%
words_zipf = drift.zipf_curve(drift.word_counts(texts))
words_zipf.insert(0, "model", "words (whitespace)")
zipf = pd.concat([run.zipf for run in runs] + [words_zipf], ignore_index=True)
fig = plots.lines_by_layer(
    zipf, "count", x="rank", title="Rank-frequency (Zipf) plot", y_title="count"
)
fig.update_xaxes(type="log")
fig.update_yaxes(type="log")
show(fig, "zipf")
coverage_table = pd.DataFrame(
    [{"model": run.model} | {str(k): v for k, v in run.coverage.items()} for run in runs]
)
display(coverage_table)

# %% [markdown]
# ## Norms, and what centring does to them (seed 004, Figs. 5-6)
#
# Histograms of the row L2 norms of W (solid) and of the centred W (dashed). Where the mean
# vector is long compared with the rows, centring moves the whole distribution towards the
# origin.

# %%
norms = pd.concat([run.norms for run in runs], ignore_index=True)
show(
    plots.lines_by_layer(
        norms,
        "density",
        x="norm",
        dash="variant",
        title="Distribution of row L2 norms, before and after centring",
        y_title="density",
    ),
    "norms",
)

# %% [markdown]
# ## Word similarity from W (seed 004, Tables 2-3)
#
# For SimLex-999, MEN, WordSim-353 (similarity and relatedness subsets) and Stanford Rare
# Words, the pairs whose two words (lower-cased) are **single tokens after a space** with the
# model's tokenizer (`Ġword` for byte-level BPE, `▁word` for SentencePiece, the bare word for
# WordPiece) are scored with the cosine or the inner product of their rows in W, the centred W,
# the scaled-centred W (e(w) - ||e(w)|| mu_hat, mu_hat the mean unit row) and the post-processed
# W (eq. 11). Numbers are Pearson r x 100 as in the paper, with Spearman's rho beside. The pair
# sets differ between tokenizers, so models are not directly comparable (the paper says the
# same).

# %%
wordsim = pd.concat([run.wordsim for run in runs], ignore_index=True)
display(
    wordsim.pivot_table(
        index=["model", "benchmark"], columns=["score", "variant"], values="pearson_x100",
        sort=False,
    ).round(1)
)
display(Markdown("*Spearman's rho x 100:*"))
display(
    (100 * wordsim.pivot_table(
        index=["model", "benchmark"], columns=["score", "variant"], values="spearman", sort=False
    )).round(1)
)
display(Markdown("*Coverage: pairs with two single-token words.*"))
display(
    wordsim[(wordsim["variant"] == "original") & (wordsim["score"] == "cosine")][
        ["model", "benchmark", "n_pairs", "n_total", "coverage"]
    ].round(3)
)

# %% [markdown]
# The Table 2 analogue averages Pearson r x 100 over the five benchmarks; the paper's averages
# are printed below it.

# %%
table2 = wordsim.pivot_table(
    index=["model", "variant"], columns="score", values="pearson_x100", aggfunc="mean",
    sort=False,
).round(2)
display(table2)
display(Markdown("*Biš et al. (2021), Table 2 (reference):*"))
display(
    wordbench.reference_frame("bis2021_table2").pivot_table(
        index=["model", "variant"], columns="score", values="value", sort=False
    )
)

# %% [markdown]
# ## Beyond the paper: the hidden states of every layer
#
# The same measures on the contextual vectors of the words of 600 MultiNLI sentences (the
# corpus of the Geometry and Part-of-speech chapters; a seeded sample of words, the same in
# every layer), before and after subtracting each layer's own mean. Two things shape how they
# are read.
#
# **The centred mean cosine proves nothing by itself.** Centred rows sum to zero, so for any
# cloud whose rows have similar norms their mean pairwise cosine is about 0, whatever the
# cloud's shape: "the cosines vanish after centring" is true by construction. The chapter
# uses two checks that are not (`drift.shift_cosine`). First, the mean cosine that the
# layer's mean vector alone predicts for rows of equal norm,
# c_mu = (N s - 1)/(N - 1) with s = ||mu||^2 / mean_i ||x_i||^2 the share of the second
# moment carried by the mean (N rows): exactly the mean inner product of distinct rows in
# units of the mean squared norm, so it equals the measured mean cosine when all norms are
# equal. Where the two agree, a common offset of the measured size accounts for the raw
# cosines, and centring removes exactly that offset; where the measured cosine is far above
# c_mu, a few long rows dominate mu and the norms, and centring does not remove what the other
# rows share. Second, IsoScore, which ignores the offset and says how anisotropic the spread
# itself is.
#
# **A decoder's first word.** Without a beginning-of-sequence token (SmolLM2 here, like the
# seeds' GPT-2 runs), the first token of every sentence becomes an *attention sink*: later
# tokens attend to it heavily (Xiao et al. 2023, "Efficient streaming language models with
# attention sinks"), and its hidden state carries *massive activations*, a few coordinates
# far larger than anywhere else (Sun et al. 2024, "Massive activations in large language
# models"); chapter [Geometry](01_geometry.ipynb) shows the norms. If a few per cent of the
# rows are a hundred times longer than the rest, the layer's mean is essentially a share of
# their vector, and subtracting it gives every other word nearly the same large offset:
# centring then *creates* a common direction instead of removing one. Every hidden-state
# measure is therefore computed twice: over all words, and with the first word of each
# sentence (`word_index` 0, which for SmolLM2 is input position 0) left out. MPNet starts
# every sentence with its `<s>` token, so there the first word is an ordinary word and the
# second view is a control.

# %%
words_corpus = corpus.mnli_polysemy(n=n_sentences, seed=seed)
stores = {spec: store.activations(spec, words_corpus) for spec in models}
hidden = pd.concat(
    [
        drift.hidden_state_isotropy(stores[spec], n_rows=hidden_rows, seed=seed).assign(model=spec)
        for spec in models
    ],
    ignore_index=True,
)


cos_long = hidden.melt(
    id_vars=["model", "subset", "depth", "layer"],
    value_vars=["mean_cosine", "shift_prediction", "mean_cosine_centered"],
    var_name="measure",
)
show(
    plots.facet_lines(
        cos_long, "value", "subset", x="depth", dash="measure",
        title="Mean cosine between words (raw), what the mean vector predicts, and after "
        "centring; left: all words, right: first word of each sentence left out",
        y_title="mean cosine",
    ),
    "hidden-mean-cosine",
)
ratio = hidden[hidden["subset"] == drift.SUBSETS[0]]
show(
    plots.lines_by_layer(
        ratio, "first_word_norm_ratio", x="depth",
        title="Median norm of the first word of each sentence / median norm of the other words "
        "(log scale)",
        y_title="norm ratio",
    ).update_yaxes(type="log"),
    "hidden-first-word-norm",
)
show(
    plots.lines_by_layer(
        hidden, "isoscore", x="depth", dash="subset",
        title="IsoScore per layer (the same before and after centring): all words (solid), "
        "first word left out (dashed)",
        y_title="IsoScore",
    ),
    "hidden-isoscore",
)
show(
    plots.lines_by_layer(
        hidden, "mean_vector_ratio", x="depth", dash="subset",
        title="Norm of the layer's mean vector / mean norm: all words (solid), first word left "
        "out (dashed)",
        y_title="mean-vector ratio",
    ),
    "hidden-mean_vector_ratio",
)

# %% [markdown]
# I(X) depends on the scale of X, so layers with large norms have I near 0 however round the
# cloud is; its natural logarithm is plotted, **one panel per model with its own y axis**,
# because its range differs by orders of magnitude between models (a few very long rows
# alone can push it down by thousands), and on a shared axis the model with the smaller
# range would be a flat line. The range of each panel is printed under the figure.

# %%
iso_long = hidden.melt(
    id_vars=["model", "subset", "depth", "layer"],
    value_vars=["log_isotropy_raw", "log_isotropy_centered"],
    var_name="measure",
)
show(
    plots.facet_lines(
        iso_long, "value", "model", x="depth", color="measure", dash="subset", shared_y=False,
        title="ln I(X) per layer, before/after centring (one panel per model, separate y "
        "axes); solid: all words, dashed: first word left out",
        y_title="ln I(X)",
    ),
    "hidden-log_isotropy_raw",
)
for (spec, subset), part in hidden.groupby(["model", "subset"], sort=False):
    print(
        f"{spec}, {subset}: ln I(X) raw {part['log_isotropy_raw'].min():,.1f} to "
        f"{part['log_isotropy_raw'].max():,.1f}, centred {part['log_isotropy_centered'].min():,.1f}"
        f" to {part['log_isotropy_centered'].max():,.1f}"
    )
display(
    hidden[
        ["model", "subset", "layer", "n_rows", "log_isotropy_raw", "isoscore", "mean_cosine",
         "shift_prediction", "mean_cosine_centered", "mean_norm", "mean_vector_ratio",
         "first_word_norm_ratio"]
    ].round(3)
)

# %% [markdown]
# Where the mean-vector prediction still misses once the first words are left out, something
# else must dominate the mean and the norms. The table below names, for those layers, the
# word most common among the 1% longest remaining rows (`drift.longest_words`), with the
# median norm of its occurrences over that of the other words.

# %%
excluded = hidden[hidden["subset"] == drift.SUBSETS[1]]
missing = excluded[excluded["shift_residual"].abs() > agreement]
longest = pd.concat(
    [
        drift.longest_words(
            stores[spec], part["layer"].tolist(), n_rows=hidden_rows, seed=seed
        ).assign(model=spec)
        for spec, part in missing.groupby("model", sort=False)
    ]
    or [pd.DataFrame(columns=["model", "layer", "n_longest", "word", "share", "norm_ratio"])],
    ignore_index=True,
)
display(longest.round(3))

# %% [markdown]
# ## What this run shows
#
# The paragraphs below are generated from the numbers above.

# %%
display(Markdown("\n\n".join(drift.findings(table1, wordsim, hidden, rare, longest, agreement))))

# %%
# NBVAL_CHECK_OUTPUT
for _, row in table1.iterrows():
    print(
        row["model"],
        "I(W) raw/centred/W_r:",
        round(row["isotropy_raw"], 1),
        round(row["isotropy_centered"], 1),
        round(row["isotropy_top_pcs_removed"], 1),
        "| mean-vector ratio:",
        round(row["mean_vector_ratio"], 1),
        "| centring raises I:",
        bool(row["isotropy_centered"] > row["isotropy_raw"]),
    )
for (spec, subset), part in hidden.groupby(["model", "subset"], sort=False):
    print(
        spec,
        subset,
        "| hidden: max mean cosine",
        round(float(part["mean_cosine"].max()), 1),
        "| first word > 10x the others' norm somewhere:",
        bool(part["first_word_norm_ratio"].max() > 10),
        "| centred mean cosine above 0.5 somewhere:",
        bool(part["mean_cosine_centered"].abs().max() > 0.5),
    )

# %%
results.save_results(
    results_path,
    {
        "parameters": {
            "models": models,
            "n_sentences": n_sentences,
            "seed": seed,
            "point_budget": point_budget,
            "hidden_rows": hidden_rows,
            "n_bins": n_bins,
            "agreement": agreement,
        },
        "frequency_corpus": "Brown + MultiNLI dev-matched + STS 2012-2016",
        "models": {run.model: run.facts | {"caveats": run.caveats} for run in runs},
        "table1": table1,
        "coverage": coverage_table,
        "spectra": spectra,
        "toy_singular_values": toy_sv,
        "rare_token_cosines": rare,
        "zipf": zipf,
        "norm_histograms": norms,
        "wordsim": wordsim,
        "wordsim_table2": table2.reset_index(),
        "rare_token_trends": rare_trends,
        "hidden_states": hidden,
        "hidden_longest_words": longest,
    },
)
