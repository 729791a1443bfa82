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
# # Scorecard: the seeds' claims, tested
#
# Every chapter of this book takes claims from the documents it reproduces and tests them on
# this run's models. This page gathers them. Each claim is a **statistic with a 95%
# interval**, a **threshold** (an effect size the claim needs, with its reason stated in the
# chapter) and a **direction**; the verdict follows from the interval alone:
#
# * **holds**: the whole interval lies on the claimed side of the threshold;
# * **does not hold**: the whole interval lies on the other side;
# * **inconclusive**: the interval contains the threshold.
#
# A claim is said to hold *for encoders* or *for decoders* only when it holds for every model
# of that kind in this run. Decoders run without a beginning-of-sequence token turn their
# first token into an attention sink (see the introduction), so a decoder claim that rests on
# the hidden states of every word is computed twice: under the seed's protocol (control "none")
# and with each sentence's first word left out; a verdict that changes between the two is
# marked as driven by the first token. The claims of chapters 6 and 7 read one vector per
# sentence, a decoder's last word, never its first, and have no such control (those chapters
# say why).
#
# The models are not the seeds' (GPT-2 and BERT weights cannot be had on the machines that
# build this book): two contrastively fine-tuned sentence encoders and two 4-bit quantised
# decoders, one of them instruction-tuned. The introduction lists their caveats; read every
# verdict below as a statement about these models, not about GPT-2 or BERT. The seeds'
# published numbers are in the `published` column for comparison.
#
# This page is built last, from the results files the other chapters wrote.

# %% tags=["parameters"]
models = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
results_path = "90_scorecard.results.json"

# %% tags=["remove-input"]
from pathlib import Path

from IPython.display import Markdown, display

from lmgeometry.report import claims as claim_tables
from lmgeometry.report import results
from lmgeometry.report.figures import show_table
from lmgeometry.report.prose import plural

folder = Path(results_path).resolve().parent
introduction = results.load_results(folder / "00_introduction.results.json")
kinds = {f["spec"]: f["kind"] for f in introduction["models"]}
found = claim_tables.collect_claims(folder, before=Path(results_path).name)
found = found[found["model"].isin(models)]
chapters_with_claims = sorted(found["chapter"].unique())
display(Markdown(
    f"{plural(len(found), 'claim row')} from {plural(len(chapters_with_claims), 'chapter')} "
    f"({', '.join(chapters_with_claims) or 'none yet'}), over "
    f"{plural(found['model'].nunique(), 'model')}."
))

# %% [markdown]
# ## Verdicts per model
#
# How many of the claims tested hold, are inconclusive or do not hold, per model and control:

# %% tags=["remove-input"]
counts = (found.groupby(["model", "control", "verdict"]).size().unstack(fill_value=0)
          .reindex(columns=["holds", "inconclusive", "does not hold"], fill_value=0))
show_table(counts, "Verdicts per model and control: how many of the claims tested hold, are "
                   "inconclusive or do not hold.")

# %% [markdown]
# ## For encoders, for decoders
#
# A kind's verdict is the models' common verdict, or "mixed" when the models of that kind
# disagree:

# %% tags=["remove-input"]
by_kind = claim_tables.kind_verdicts(found, kinds)
show_table(by_kind, "Verdicts per kind of model: the models' common verdict, or <i>mixed</i> "
                    "when the models of a kind disagree.")

# %% [markdown]
# ## Every claim
#
# One row per claim, control and statistic; each cell reads "verdict: value [95% interval]".
# The chapters explain each statistic and threshold.

# %% tags=["remove-input"]
for seed_doc, part in found.groupby("seed", sort=True):
    display(Markdown(f"### Seed {seed_doc}"))
    show_table(claim_tables.scorecard(part, models=models),
               f"Seed {seed_doc}'s claims: each cell reads <i>verdict: statistic [95% "
               "interval]</i>.")

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
print(counts.to_string())

# %% tags=["remove-cell"]
results.save_results(
    results_path,
    {"models": models, "kinds": kinds, "counts": counts.reset_index(), "by_kind": by_kind,
     "all_claims": found, "chapters": chapters_with_claims},
)
