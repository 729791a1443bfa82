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
# # How language models lay out their embedding spaces

# %% tags=["parameters"]
models: list[str] = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
results_path: str = "00_introduction.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from pathlib import Path

import pandas as pd
from IPython.display import HTML, Markdown, display

from lmgeometry.chapters.common import checked_parameters
from lmgeometry.io import data
from lmgeometry.io.models import load_model
from lmgeometry.report import results
from lmgeometry.report.figures import show_table
from lmgeometry.report.findings import book_findings

globals().update(checked_parameters(globals()))

facts = [load_model(spec).facts() for spec in models]
display(HTML(book_findings(Path(results_path).resolve().parent,
                           {f["spec"]: f["kind"] for f in facts}, models,
                           own=Path(results_path).name)))

# %% [markdown]
# A language model turns every token of a text into a vector at every layer. This report
# measures how those vectors are laid out: whether they fill their space or crowd into a few
# directions, how much of a word's vector depends on its context, whether the senses of a
# word and its part of speech can be read off the geometry, and how much of the structure is
# simply the token's position in the sentence. Each chapter is a notebook that loads the
# models, extracts hidden states for a corpus, computes the measures with the `lmgeometry`
# package and plots them; every number in the text is computed in the same run, and the
# numbers behind each figure are saved beside the chapter as a JSON file.
#
# The report starts from five published analyses of GPT-2 {cite:p}`radford2019` and BERT
# {cite:p}`devlin2019`, and repeats their measurements on the models this build could load.
# The chapters call them by their seed numbers, always with the paper's name:
#
# - **Seed 000**: {cite:t}`kehlbeck2021demystifying`, *Demystifying the Embedding Space of
#   Language Models*, an interactive article: GPT-2's and BERT's layers seen in two and three
#   dimensions; GPT-2's split into two clusters, BERT's do not.
# - **Seed 001**: {cite:t}`ethayarajh2019`, *How Contextual are Contextualized Word
#   Representations?*: how alike a word's vectors are across its contexts, and how
#   anisotropic the spaces are.
# - **Seed 002**: {cite:t}`thiongo2024bert`, *Why BERT is Not GPT*, a blog article: the
#   background on encoders and decoders, masked and causal language modelling.
# - **Seed 003**: GPTology {cite:p}`gptology`, *The Impact of Fine-Tuning on the Geometry of
#   GPT-2*, an anonymous submission: fine-tuning, block structure and "rogue dimensions".
# - **Seed 004**: {cite:t}`bis2021`, *Too Much in Common*: why embeddings drift in a common
#   direction, and how centring undoes it.
#
# ## Three questions
#
# The book asks three questions of every model, and [the conclusion](90_scorecard.ipynb)
# answers them:
#
# 1. **Are contextual vectors contextual?** Does a word's vector change with its sentence, more
#    so in deeper layers, or is it mostly one fixed vector per word (Ethayarajh 2019)?
# 2. **Why do they all point the same way?** The vectors of unrelated words have a high cosine
#    in many models. Is that a common drift that centring removes (Biš et al. 2021), or
#    something else?
# 3. **Why do decoders split off their first token?** GPT-2's layers break into two clusters,
#    one of them the sentences' first words (Kehlbeck et al. 2021). What sets the first token
#    apart?
#
# ## The pages, in reading order
#
# 1. [**Geometry**](01_geometry.ipynb): every layer in two and three dimensions; the clusters
#    Kehlbeck et al. saw in GPT-2 and the position manifold, measured.
# 2. [**Part of speech**](02_part_of_speech.ipynb): the layers coloured by part of speech, and a
#    linear probe that measures what Kehlbeck et al. judged by eye.
# 3. [**Context measures**](03_context_measures.ipynb): Ethayarajh's self-similarity,
#    intra-sentence similarity and explainable variance, raw and adjusted for anisotropy; static
#    embeddings from contextual ones.
# 4. [**Drift and centring**](04_drift_and_centering.ipynb): the common drift of the input
#    embedding matrix, its isotropy, centring and its variants (Biš et al.).
# 5. [**Senses**](05_senses.ipynb): whether the senses of a word can be read off its vectors.
# 6. [**Rogue dimensions**](06_rogue_dimensions.ipynb): GPTology's block structure and rogue
#    dimensions, asked of the pretrained models.
# 7. [**Fine-tuning**](07_finetuning.ipynb): GPTology's central experiment run here, an encoder
#    and a decoder fine-tuned on two tasks.
# 8. [**Model zoo**](08_model_zoo.ipynb): every model on the same words, side by side.
# 9. [**Why decoders split**](09_attention_sink.ipynb): the first token's attention sink and
#    massive activations, switched off to see what they cause.
# 10. [**A controlled pair**](10_controlled_pair.ipynb): a masked and a causal language model
#     trained here, differing only in their objective.
#
# Then [**the conclusion**](90_scorecard.ipynb) answers the three questions and tallies every
# claim in a scorecard; [the Python API](../pages/api.md) and [About this build](99_about.ipynb)
# close the book. The rest of this page says what the models are and what differs between
# them, because nearly every finding later depends on it.

# %% [markdown]
# ## Encoders and decoders
#
# The transformer of {cite:t}`vaswani2017` had two halves, and most language models keep only
# one of them.
#
# An **encoder** such as BERT reads the whole sentence at once: in every layer each token
# attends to all tokens, on both sides. It is trained by **masked language modelling**: some
# tokens of the input are hidden (replaced by a `[MASK]` token, a random token or left
# unchanged) and the model predicts them from the rest of the sentence. A token's vector can
# therefore depend on everything around it, and the training objective rewards vectors that
# describe the token *in its sentence*.
#
# A **decoder** such as GPT-2 is trained by **causal language modelling**: predict the next
# token from the ones before it. An attention mask stops each token from seeing anything to
# its right, so the vector of the *i*-th token depends on tokens 1 to *i* only. Two
# consequences matter for geometry. The first token of a text sees nothing but itself, so its
# vector is the same whatever follows it; and every vector in the last layers is shaped to
# predict the *next* token rather than to describe the current one.
#
# Some encoders are trained further with another objective. The **sentence encoders** of the
# sentence-transformers project start from a masked-LM encoder and are fine-tuned
# *contrastively* on pairs of related sentences, so that the average of a sentence's token
# vectors lands close to the averages of its paraphrases. They ship without the masked-LM
# head: they cannot fill in masked words, and their upper layers answer to the contrastive
# objective, not to masked language modelling.
#
# ## Layers, and what layer 0 is
#
# A model with *L* transformer blocks gives *L* + 1 hidden states per token. **Layer 0** is
# the output of the embedding layer, before any attention: a lookup of the token's vector in
# the embedding matrix, to which models with *learned absolute positions* (BERT, GPT-2) add a
# vector for the token's position (BERT also adds a segment vector and normalises the sum).
# Layer 0 therefore does not depend on the context at all: the same token at the same
# position always gets the same vector. Layer *l* is the output of block *l*, with one
# exception: for decoders the **last** layer is taken after the model's final normalisation
# (GPT-2's final layer norm, the final RMSNorm of SmolLM2 and Gemma), because that is
# what the transformers library returns as the last hidden state and what the
# language-model head reads. It rescales every vector, so norms and norm-dominated
# statistics jump at the last layer of a decoder; read such a jump as the normalisation, not
# as the last block's doing. Chapters that report "per layer" results count this way, so
# layer 0 is always the context-free baseline.
#
# **A decoder's first token.** Run without a beginning-of-sequence token, as the seeds ran
# GPT-2 and as this book runs its decoders by default (each tokenizer keeps its own
# template), the first token of every sentence becomes an *attention sink*:
# later tokens attend to it heavily, and in the middle layers its hidden state takes a norm
# many times that of the other tokens (chapter [Geometry](01_geometry.ipynb) shows by how
# much; see {cite:t}`xiao2024` on attention sinks and {cite:t}`sun2024` on these "massive
# activations"). The first word of each sentence is then a small set
# of extreme points that dominates any statistic not normalised per vector (variance, PCA,
# MEV baselines, CKA, centring). The chapters say where this drives a result, and chapter
# [Why decoders split](09_attention_sink.ipynb) tests the mechanism by intervention.
#
# ## Positions: learned or rotary
#
# How a model knows where a token is differs between the models of this report.
# **Learned absolute** position embeddings (GPT-2, BERT, the MiniLM and MPNet sentence
# encoders) are vectors added to the input, so position is written into the hidden state from
# layer 0 on and travels up the residual stream; MPNet also adds a learned bias for the
# relative distance between tokens inside attention. **Rotary** position embeddings (SmolLM2,
# Gemma 3) rotate the queries and keys inside every attention layer by an angle that depends
# on the position; nothing is added to the hidden state, so layer 0 holds no position at all
# and whatever position signal the later layers carry, the network has computed. Seed analyses
# found position to be the dominant direction of GPT-2's space; for the rotary models that
# finding cannot be expected to carry over unchanged, and the chapters test it.
#
# ## The models of this build

# %% tags=["remove-input"]
table = pd.DataFrame(
    {
        "model": [f["name"] for f in facts],
        "asked for": [f["spec"] for f in facts],
        "kind": [f["kind"] for f in facts],
        "blocks": [f["n_layers"] for f in facts],
        "hidden states": [f["n_layers"] + 1 for f in facts],
        "width": [f["hidden_size"] for f in facts],
        "positions": [f["position_scheme"] for f in facts],
        "max positions": [f["max_positions"] for f in facts],
        "prepends BOS": ["yes" if f["prepends_bos"] else "no" for f in facts],
    }
)
results.save_results(results_path, {"models": facts})
show_table(table,
           'The models of this build: kind, size, position scheme, context window and whether '
           'the template prepends a beginning-of-sequence token.')

# %% [markdown]
# What each model is, and what to keep in mind when reading its results:

# %% tags=["remove-input"]
lines = []
for f in facts:
    if f["kind"] == "decoder":
        nature = ("a decoder, trained to predict the next token; a token sees only the tokens "
                  "before it")
        bos = f["special_tokens"].get("bos_token")
        start = (
            f"its tokenizer prepends `{bos}`, so a sentence's first word is never at position 0"
            if f["prepends_bos"]
            else "its tokenizer prepends no start token, so a sentence's first token is the "
            "first thing the model sees and has no context at all"
        )
    else:
        nature = "an encoder: every token attends to the whole sentence"
        start = ""
    positions = f"{f['position_scheme']} positions"
    if "rotary" in f["position_scheme"]:
        positions += " (nothing is added at the input, so layer 0 carries no position)"
    parts = [nature, f"{f['n_layers']} blocks of width {f['hidden_size']}, so "
             f"{f['n_layers'] + 1} hidden states per token", positions] + ([start] if start else [])
    caveats = "".join(f"\n  - caveat: {c}" for c in f["caveats"])
    lines.append(f"- **{f['name']}**: " + "; ".join(parts) + "." + caveats)
display(Markdown("\n".join(lines)))

# %% tags=["remove-cell"]
# NBVAL_CHECK_OUTPUT
for f in facts:
    print(f"{f['spec']}: {f['kind']}, {f['n_layers']} x {f['hidden_size']}, "
          f"{f['position_scheme']}")

# %% [markdown]
# The seed analyses studied GPT-2 and BERT. Where the Hugging Face hub is out of reach, as on
# the machines that build the default copy of this report, neither can be downloaded and no
# package ships their weights; the default models are then real pretrained models that do
# ship inside Python packages, and the caveats listed above say where they differ from the
# seed models: 4-bit quantized weights approximate the original checkpoints, an
# instruction-tuned decoder is not a base model, a contrastive sentence encoder is not a
# masked-LM encoder, and rotary positions are not GPT-2's learned ones. The findings in the
# chapters are those of the models listed above, not of GPT-2 or BERT.
#
# :::{dropdown} Re-running the book on GPT-2 and BERT
# Every chapter takes the list of models as its `models` parameter (default: the
# `book_params.yml` file of the repository). On a machine that reaches the Hugging Face hub,
# the whole report can be rebuilt for the seed models into a separate folder, leaving this
# copy untouched:
#
# ```bash
# make book ARGS="-p models '[gpt2, bert-base-cased]' --out /tmp/hub-book"
# # or, in the project's environment:
# lmgeometry book -p models '["gpt2", "bert-base-cased"]' --out /tmp/hub-book
# ```
#
# The new book is in `/tmp/hub-book/_build/html/index.html`, its executed notebooks and
# results files in `/tmp/hub-book/book/`. Any hub id or local model folder can be named the
# same way; `lmgeometry models` lists the offline aliases.
# :::
#
# ## Data
#
# The corpora and benchmarks come from public releases. Every file is listed with its
# original address and sha256 in the package's data manifest (`lmgeometry data verify` checks
# them); the licences below are as the sources state them.

# %% tags=["remove-input"]
files = data.manifest()
sources = (
    files.groupby("dataset", sort=True)
    .agg(files=("name", "size"), MB=("size", "sum"), licence=("licence", "first"),
         source=("source", "first"), citation=("citation", "first"))
    .reset_index()
)
sources["MB"] = (sources["MB"] / 1e6).round(1)
show_table(sources,
           'The datasets this book reads: number of files, size, licence, source and citation.')

# %% [markdown]
# ## References
#
# The works this page cites; [About this build](99_about.ipynb) lists every work
# the book cites.
#
# ```{bibliography}
# :filter: docname in docnames
# ```
