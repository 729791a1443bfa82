"""Every data file and loader under one name: the public names of the data modules.

``from lmgeometry.io import data`` keeps working for the chapters, notebooks and the training
code, whose digests key cached models; each name lives in the module of its idea:

- :mod:`~lmgeometry.io.datafiles`: the hashed manifest, :func:`fetch` from a mirror or the
  original URL, checksum checks remembered per file, :func:`verify_all`, the data errors;
- :mod:`~lmgeometry.io.datasets`: sentence-level task tables (MNLI, STS, STS-B, SST-2, QNLI, WiC);
- :mod:`~lmgeometry.io.benchmarks`: word benchmarks (similarity, analogy, categorisation,
  SemEval-2012) by name;
- :mod:`~lmgeometry.io.lexical`: SemCor, WordNet (``n_senses``, ``sense_labels``), Brown;
- :mod:`~lmgeometry.io.vectors`: GloVe 6B-50d vectors and ``wordfreq`` frequencies;
- :mod:`~lmgeometry.io.tokenizer`: GPT-2's released tokenizer;
- :mod:`~lmgeometry.io.released`: Ethayarajh (2019)'s released per-layer numbers.

New code imports from those modules.
"""

from __future__ import annotations

from lmgeometry.io.benchmarks import (
    ANALOGY_BENCHMARKS,
    BENCHMARKS,
    CATEGORISATION_BENCHMARKS,
    SIMILARITY_BENCHMARKS,
    SIMILARITY_SCALES,
    load_analogies,
    load_benchmark,
    load_benchmarks,
    load_categorisation,
    load_semeval2012,
    load_word_similarity,
)
from lmgeometry.io.datafiles import (
    MANIFEST_PATH,
    ChecksumMismatch,
    DataError,
    DataFileMissing,
    DataUnavailable,
    fetch,
    manifest,
    verify_all,
)
from lmgeometry.io.datasets import (
    load_mnli,
    load_qnli,
    load_sst2,
    load_sts,
    load_stsb,
    load_wic,
)
from lmgeometry.io.lexical import (
    brown_sentences,
    brown_words,
    load_semcor,
    n_senses,
    semcor_sense_counts,
    sense_labels,
    wordnet,
)
from lmgeometry.io.released import (
    ETHAYARAJH2019_MODELS,
    load_ethayarajh2019,
)
from lmgeometry.io.tokenizer import (
    GPT2_HELLO_WORLD,
    GPT2_VOCAB_SIZE,
    gpt2_tokenizer,
)
from lmgeometry.io.vectors import (
    GLOVE_PACKAGE,
    glove_vectors,
    word_frequency,
)

__all__ = [
    "ANALOGY_BENCHMARKS",
    "BENCHMARKS",
    "brown_sentences",
    "brown_words",
    "CATEGORISATION_BENCHMARKS",
    "ChecksumMismatch",
    "DataError",
    "DataFileMissing",
    "DataUnavailable",
    "ETHAYARAJH2019_MODELS",
    "fetch",
    "GLOVE_PACKAGE",
    "glove_vectors",
    "GPT2_HELLO_WORLD",
    "GPT2_VOCAB_SIZE",
    "gpt2_tokenizer",
    "load_analogies",
    "load_benchmark",
    "load_benchmarks",
    "load_categorisation",
    "load_ethayarajh2019",
    "load_mnli",
    "load_qnli",
    "load_semcor",
    "semcor_sense_counts",
    "load_semeval2012",
    "load_sst2",
    "load_sts",
    "load_stsb",
    "load_wic",
    "load_word_similarity",
    "manifest",
    "MANIFEST_PATH",
    "n_senses",
    "sense_labels",
    "SIMILARITY_BENCHMARKS",
    "SIMILARITY_SCALES",
    "verify_all",
    "word_frequency",
    "wordnet",
]
