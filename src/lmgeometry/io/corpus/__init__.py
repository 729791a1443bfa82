"""Sentences -> :class:`Corpus`: the spaCy word table that every measure indexes.

A corpus is a list of sentences plus a *word table*: one row per spaCy token that is not
whitespace-only, with its character offsets into the sentence, lemma, POS tags, stop/punct
flags, the number of WordNet 3.0 senses of its lemma and a target flag. Activations
(``store.activations``) hold one vector per row of this table, so every measure that groups
vectors (by word, sentence, POS, sense) groups rows of it.

Builders
--------
:func:`mnli_polysemy`
    MultiNLI dev-matched sentences that contain a curated polysemous target word (the
    visualisation corpus of seed 000); targets are listed with their selection rule in
    ``polysemy_targets.txt`` in the ``io`` folder.
:func:`sts`
    SemEval STS 2012-2016 sentences (Ethayarajh, 2019, seed 001); :func:`word_contexts` indexes
    the words that occur in at least 5 distinct sentences.
:func:`semcor_targets`
    SemCor 3.0 sentences whose target nouns and verbs carry WordNet 3.0 sense keys.
:func:`wic_pairs`, :func:`wic_corpus`
    Word-in-Context sentence pairs and the word-table rows of each pair's target.
:func:`sst2_corpus`
    SST-2 sentences with their sentiment labels (the GPTology probe data, seed 003).
:func:`qnli_corpus`
    QNLI question-sentence pairs, each joined into one input, with their labels (seed 003).
:func:`benchmark_contexts`
    Short windows of Brown and STS sentences that give each word of the word benchmarks up to
    ``k`` contexts (static embeddings, seed 001's Table 1); :func:`context_pool` is the pool.
:func:`frequency_texts`
    The reference texts whose token counts rank a vocabulary by frequency (seed 004).
:func:`sentences`
    Any list of your own sentences.
:func:`build`
    ``build(name, n, seed)`` dispatches on the builder name (used by the CLI and chapters).

Modules
-------
The code lives in modules of one idea each; this package re-exports their public names, so
``from lmgeometry.io.corpus import X`` reaches every one.

:mod:`~lmgeometry.io.corpus.table`
    The spaCy word table (:func:`word_table`): text handling, parsing and its cache.
:mod:`~lmgeometry.io.corpus.base`
    :class:`Corpus`, :func:`sentences` and :data:`DEFAULT_SIZES`.
:mod:`~lmgeometry.io.corpus.targets`
    The curated polysemous targets and the flagging of target rows.
:mod:`~lmgeometry.io.corpus.spans`
    Data-set token spans mapped onto word-table rows (SemCor, WiC).
:mod:`~lmgeometry.io.corpus.mnli`, :mod:`~lmgeometry.io.corpus.semeval_sts`,
:mod:`~lmgeometry.io.corpus.semcor`, :mod:`~lmgeometry.io.corpus.wic`,
:mod:`~lmgeometry.io.corpus.glue` (SST-2, QNLI), :mod:`~lmgeometry.io.corpus.benchmarks`,
:mod:`~lmgeometry.io.corpus.frequency`
    The data-set builders.
:mod:`~lmgeometry.io.corpus.registry`
    :func:`build` and :func:`check_name` over :data:`CORPUS_NAMES`.

References
----------
Williams, A., Nangia, N., Bowman, S. (2018). A broad-coverage challenge corpus for sentence
understanding through inference. NAACL.
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Miller, G. A., Leacock, C., Tengi, R., Bunker, R. T. (1993). A semantic concordance. HLT.
Pilehvar, M. T., Camacho-Collados, J. (2019). WiC: the Word-in-Context dataset. NAACL.
"""

from __future__ import annotations

from lmgeometry.io.corpus.base import (
    DEFAULT_SIZES,
    Corpus,
    invisible_words_dropped,
    sentences,
)
from lmgeometry.io.corpus.benchmarks import (
    BENCHMARK_WORD_COLUMNS,
    CONTEXT_BENCHMARKS,
    benchmark_contexts,
    context_pool,
    detokenize,
)
from lmgeometry.io.corpus.frequency import (
    frequency_texts,
)
from lmgeometry.io.corpus.glue import (
    pair_text,
    qnli_corpus,
    qnli_pairs,
    sst2_corpus,
    sst2_train_sample,
)
from lmgeometry.io.corpus.mnli import (
    mnli_polysemy,
    mnli_target_counts,
)
from lmgeometry.io.corpus.registry import (
    CORPUS_NAMES,
    build,
    check_name,
    sentences_file,
)
from lmgeometry.io.corpus.semcor import (
    SEMCOR_EXCLUDED_LEMMAS,
    semcor_targets,
)
from lmgeometry.io.corpus.semeval_sts import (
    sts,
    sts_pool,
    word_contexts,
)
from lmgeometry.io.corpus.table import (
    BATCH_SIZE,
    EXCLUDED_COMPONENTS,
    INVISIBLE_CATEGORIES,
    SPACY_MODEL,
    WORD_COLUMNS,
    WORD_TABLE_CODE_VERSION,
    light_word_table,
    word_table,
    word_table_version,
)
from lmgeometry.io.corpus.targets import (
    TARGETS_PATH,
    polysemy_target_table,
    polysemy_targets,
)
from lmgeometry.io.corpus.wic import (
    wic_corpus,
    wic_pairs,
)

__all__ = [
    "BATCH_SIZE",
    "benchmark_contexts",
    "BENCHMARK_WORD_COLUMNS",
    "build",
    "check_name",
    "CONTEXT_BENCHMARKS",
    "context_pool",
    "Corpus",
    "CORPUS_NAMES",
    "DEFAULT_SIZES",
    "detokenize",
    "EXCLUDED_COMPONENTS",
    "frequency_texts",
    "INVISIBLE_CATEGORIES",
    "invisible_words_dropped",
    "light_word_table",
    "mnli_polysemy",
    "mnli_target_counts",
    "pair_text",
    "polysemy_target_table",
    "polysemy_targets",
    "qnli_corpus",
    "qnli_pairs",
    "SEMCOR_EXCLUDED_LEMMAS",
    "semcor_targets",
    "sentences",
    "sentences_file",
    "SPACY_MODEL",
    "sst2_corpus",
    "sst2_train_sample",
    "sts",
    "sts_pool",
    "TARGETS_PATH",
    "wic_corpus",
    "wic_pairs",
    "WORD_COLUMNS",
    "word_contexts",
    "word_table",
    "WORD_TABLE_CODE_VERSION",
    "word_table_version",
]
