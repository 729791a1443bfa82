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
# # Conclusion: what the book found
#
# The introduction asked three questions of the four models this book could load, starting
# from five papers: {cite:t}`kehlbeck2021demystifying`, {cite:t}`ethayarajh2019`,
# {cite:t}`thiongo2024bert`, GPTology {cite:p}`gptology` and {cite:t}`bis2021`. The answers
# below are written from this build's results: every number and verdict in them is read from
# the chapters' results files, and the book's tests fail if a re-run no longer supports a
# sentence. The scorecard that follows gives every claim behind them with its evidence.

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
results_path: str = "90_scorecard.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from pathlib import Path

from IPython.display import Markdown, display

from lmgeometry.chapters.common import checked_parameters
from lmgeometry.claims import primary_table, seed_summary
from lmgeometry.report import claims as claim_tables
from lmgeometry.report import narrative, results
from lmgeometry.report.figures import figure_anchor, show, show_table
from lmgeometry.report.findings import SEED_DOCUMENTS
from lmgeometry.report.prose import plural

globals().update(checked_parameters(globals()))

folder = Path(results_path).resolve().parent
introduction = results.load_results(folder / "00_introduction.results.json")
kinds = {f["spec"]: f["kind"] for f in introduction["models"]}
everything = claim_tables.collect_claims(folder, before=Path(results_path).name)
found = everything[everything["model"].isin(models)]
primary = primary_table(found, kinds, models)
summary = seed_summary(primary)
story = {name: results.load_results(folder / f"{name}.results.json")
         for name in narrative.CONCLUSION_CHAPTERS
         if (folder / f"{name}.results.json").is_file()}
# a build on other models, or without some chapters, gets a note instead of the written text
answers = narrative.conclusion(story, summary, strict=False).split("\n\n")
figures = narrative.conclusion_figures(story) if len(answers) > 1 else []
for answer, figure in zip(answers, [*figures, None][:len(answers)], strict=True):
    display(Markdown(answer))
    if figure is not None:
        show(*figure[:2], caption=figure[2])

# %% [markdown]
# ## The scorecard
#
# Every chapter of this book takes claims from the documents it reproduces and tests them on
# this run's models. This page gathers them, first as the answer a reader wants (per seed, how
# many claims were reproduced, contradicted or could not be tested here), then one row per
# claim and kind of model, then every row.
#
# **How a verdict is reached.** Each claim is a statistic with a 95% interval, a threshold and a
# direction: it *holds* when the whole interval lies on the claimed side, *does not hold* when
# it lies wholly on the other side, and is *inconclusive* otherwise. **Every rule is first held
# against the seed's own evidence**: run on the numbers the authors released (Ethayarajh
# 2019), the paper's tables (Biš et al. 2021) and the results it reports (GPTology 2022)
# where the seed gives numbers; where it gives none (most of Kehlbeck et al. 2021 and of
# GPTology's figures), only read against the seed's words. A rule that gives a seed model a
# verdict other than the one the seed reports is not a valid test; the book's tests fail on
# one. A claim the
# seed's own numbers cannot meet under the seed's stated method is marked *not reproducible*.
# A rule run on the seed's numbers is *numeric*; one that only the seed's words support is
# *quoted*, a weaker check: the two tiers are counted apart and never added up.
#
# **What counts.** A row counts as evidence on the seed only when it is a *primary* row (the
# seed's protocol and estimator; controls, other estimators and claims beyond the seed are
# listed apart) and its model is a fair stand-in for the seed's on that claim. The models are
# not the seeds' (GPT-2 and BERT weights cannot be had on the machines that build this book):
# two contrastively trained sentence encoders, which are no test of BERT's anisotropy, and two
# 4-bit decoders with rotary positions, which are no test of GPT-2's position embeddings; the
# introduction lists every caveat.
#
# **Every rule is also run on a null.** A finding about what training does must fail on a model
# that was never trained. Chapters 1, 3 and 4 run each claim a second time on an untrained
# copy of each model (the same architecture and tokenizer, random weights, the same sentences
# and code); chapter 10 uses each run's checkpoint before its first training step. A claim
# whose statistic is a probe's, a classifier's or a label-cluster score (chapters 2, 5, 6
# and 7: part-of-speech probes and cluster purity, 1-NN sense accuracy, silhouettes of the
# senses, WiC, the 1-D threshold and the ablated heads) is run a second time on the same
# vectors with the labels permuted (shuffled within the training and test splits, or within
# each word's occurrences, so that every group keeps its class balance); the claim that words
# seen in more contexts are less self-similar (chapter 5) gets the same regression with the
# words' counts of contexts shuffled. A claim about depth that no untrained copy tests (where
# the best layer lies in chapter 2, the static vectors' trend over layers in chapter 3,
# adjacent blocks more alike than distant ones and where rogue dimensions emerge in chapters 6
# and 7) is run again with the layers in random orders, each layer keeping its values: a
# random order has no depth. A claim about single coordinates (a few rogue *dimensions*
# dominate the last layer, fine-tuning raises the top one's share, the two tasks' fine-tunes
# share their top dimensions: chapters 6 and 7) is run
# again on the same vectors in a random orthonormal basis, which keeps every distance and the
# spread along every direction but privileges no coordinate. A (claim, kind) is
# *reproduced* when every fair stand-in of that kind gets the verdict the seed reports for
# its model of that kind and, where the seed says the claim holds, the claim does not hold on
# any stand-in's null. Where it holds on an untrained copy too, it is *also true of an
# untrained model*: the rule does not show what training did. Where it holds with the labels
# permuted too, it is *also true with labels permuted*: the rule is met by labels the vectors
# cannot know, as a claim that something is absent ("no tight sense clusters", "the threshold
# nearly matches the model") always is. Where it holds with the layers in random orders too,
# it is *also true with the layers shuffled*: the rule is met without any order of depth.
# Where it holds in a random basis too, it is *also true with the basis rotated*: the rule
# sees a few dominant directions, not a few dimensions.
# Where no null was run (chapter 3's static vectors against GloVe, chapter 5's claim that
# more senses do not lower self-similarity,
# chapter 8's claims on the models of its zoo, whose untrained copies run only on
# request), it *held without a null run*. A (claim, kind) is
# *contradicted* when every fair stand-in gets the opposite verdict; the null then tells
# whether the effect goes the *opposite* way (the whole interval beyond the null's value, away
# from the claim) or is only *weaker* than claimed. Anything else is *inconclusive*.
#
# This page is built last, from the results files the other chapters wrote.

# %% tags=["remove-input"]
pair_file = folder / "10_controlled_pair.results.json"
pair_kinds = results.load_results(pair_file).get("kinds", {}) if pair_file.is_file() else {}
pair_found = everything[everything["model"].isin(list(pair_kinds))]
pair_primary = primary_table(pair_found, pair_kinds, list(pair_kinds))
chapters_with_claims = sorted(found["chapter"].unique())
display(Markdown(
    f"{plural(len(found), 'claim row')} from {plural(len(chapters_with_claims), 'chapter')} "
    f"({', '.join(str(int(c[:2])) for c in chapters_with_claims) or 'none yet'}), over "
    f"{plural(found['model'].nunique(), 'model')}; "
    f"{plural(len(primary), 'primary (claim, kind) row')}."
))

# %% [markdown]
# ## Per seed
#
# For each seed, the claims and kinds of model this book tests, by outcome:

# %% tags=["remove-input"]
show_table(summary.assign(seed=[f"{s}: {SEED_DOCUMENTS.get(s, '').split(',')[0]}"
                               for s in summary["seed"]]).set_index(["seed", "calibration"]),
           "Per seed: how many (claim, model kind) rows were reproduced, also true of an "
           "untrained model, also true with labels permuted, also true with the layers "
           "shuffled, also true with the basis rotated, held without a null run, "
           "contradicted (of which the opposite way, "
           "or only weaker), inconclusive or not testable here, and where the seed says "
           "nothing of a kind.")

# %% [markdown]
# ## One row per claim and kind
#
# Each row: what the seed reports for its model of that kind, the calibration (the rule on the
# seed's own evidence, per seed model), each model's verdict (*verdict: value [95% interval]*,
# or *not a fair test*), the outcome, and why a row cannot be tested here.

# %% tags=["remove-input"]
for seed_doc, part in primary.groupby("seed", sort=True):
    display(Markdown(f"### Seed {seed_doc}: {SEED_DOCUMENTS.get(seed_doc, '')}"))
    shown = part.drop(columns=["seed", "chapter", "figure"]).set_index(["claim", "task", "kind"])
    show_table(shown, f"Seed {seed_doc} ({SEED_DOCUMENTS.get(seed_doc, '').split(',')[0]}): "
               "one row per claim and kind of model; each claim links "
               "to the figure that shows its evidence.", anchor=f"seed-{seed_doc}",
               links={"claim": [f"{c}.html#{figure_anchor(f)}" if f else None
                                for c, f in zip(part["chapter"], part["figure"],
                                                strict=True)]})

# %% [markdown]
# ## Controls, other estimators and beyond the seeds
#
# The same claims under the controls (each sentence's first word left out, frequency-matched
# words, standardised dimensions), under the other estimator preset, and the claims this book
# adds beyond the seeds: listed for reference, never counted above.

# %% tags=["remove-input"]
rest = found[found["role"] != "primary"]
if rest.empty:
    display(Markdown("No such rows in this build."))
for role, part in rest.groupby("role", sort=False):
    show_table(claim_tables.scorecard(part, models=models),
               f"Rows of role <i>{role}</i>: each cell reads <i>verdict: statistic [95% "
               "interval]</i>.")

# %% [markdown]
# ## The controlled pair
#
# [A controlled pair](10_controlled_pair.ipynb) trains a masked LM and a causal LM here that
# differ only in their objective, and tests the same claims on them. Those rows stand apart
# from the stand-ins' tally above (they are never counted there): one row per claim and kind,
# as above, then the pair's summary per seed.

# %% tags=["remove-input"]
if pair_primary.empty:
    display(Markdown("The controlled pair's chapter did not run in this build."))
else:
    show_table(seed_summary(pair_primary).set_index(["seed", "calibration"]),
               "The controlled pair, per seed and calibration tier: how many (claim, model "
               "kind) rows were reproduced (failing on the run's untrained first checkpoint), "
               "contradicted, inconclusive or not testable on the pair (its own tally, apart "
               "from the stand-ins').")
    show_table(pair_primary.drop(columns=["chapter", "figure"]).set_index(
                   ["seed", "claim", "task", "kind"]),
               "The controlled pair: one row per claim and kind of model, as tested in its "
               "chapter on the pair's last checkpoints.", anchor="controlled-pair")
    beyond = pair_found[pair_found["role"] == "beyond"]
    if not beyond.empty:
        show_table(claim_tables.scorecard(beyond, models=list(pair_kinds)),
                   "The controlled pair, beyond the seeds: Biš et al.'s (2021) drift tested by the "
                   "third run (the causal model with its output layer untied); each cell reads "
                   "<i>verdict: statistic [95% interval]</i>.")

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
print(summary.to_string())
print(seed_summary(pair_primary).to_string())

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {"models": models, "kinds": kinds, "summary": summary, "primary": primary,
     "all_claims": found, "chapters": chapters_with_claims,
     "pair": {"kinds": pair_kinds, "primary": pair_primary,
              "summary": seed_summary(pair_primary)}},
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
