"""Chapter 3, "Context measures" (seeds 001 and 000): self-similarity, intra-sentence similarity,
maximum explainable variance, static embeddings and token measures.

The page is ``notebooks/03_context_measures.py``; it uses the names exported here
(``analyse`` runs the chapter). The modules, by idea:

* ``params`` -- the chapter's parameters: one frozen, typed value, checked once
* ``layers`` -- the layer pass and its per-layer tables
* ``claims`` -- the seeds' claims and their statistics
* ``static`` -- PC1 static embeddings scored on word benchmarks (seed 001, Table 1)
* ``analysis`` -- ``analyse``: the passes over every model (and its untrained twin) joined
* ``sentences`` -- the sentences the page generates from the tables
* ``views`` -- the frames the page's tables and heatmaps show
"""

from lmgeometry.chapters.calibration import table1_wins
from lmgeometry.chapters.context.analysis import analyse
from lmgeometry.chapters.context.claims import CLAIMS, corrected_claims
from lmgeometry.chapters.context.params import ContextParams
from lmgeometry.chapters.context.sentences import (
    budget_sentences,
    fasttext_sentence,
    run_sentence,
    standardised_table,
    static_corpus_sentence,
    summary,
)
from lmgeometry.chapters.context.static import static_curves, table1_beside
from lmgeometry.chapters.context.views import (
    baseline_range,
    best_static,
    lowest_words,
    position_claims,
    static_matrix,
    token_matrix,
)

__all__ = [
    "analyse",
    "baseline_range",
    "best_static",
    "budget_sentences",
    "CLAIMS",
    "ContextParams",
    "corrected_claims",
    "fasttext_sentence",
    "lowest_words",
    "position_claims",
    "run_sentence",
    "standardised_table",
    "static_corpus_sentence",
    "static_curves",
    "static_matrix",
    "summary",
    "table1_beside",
    "table1_wins",
    "token_matrix",
]
