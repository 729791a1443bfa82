"""Word benchmarks of a static embedding, run together under one protocol (strict or web).

A static embedding is a mapping or a callable ``word -> vector``
(:data:`~lmgeometry.measures.word_lookup.Vectors`).

Every scorer is a pure function of the vectors and a benchmark frame (the frames that
:mod:`lmgeometry.io.benchmarks` loads), one module per task:
:mod:`~lmgeometry.measures.word_similarity`, :mod:`~lmgeometry.measures.analogies`,
:mod:`~lmgeometry.measures.categorisation` and :mod:`~lmgeometry.measures.semeval2012`, reading
vectors through :mod:`~lmgeometry.measures.word_lookup`; the seeds' published numbers are in
:mod:`~lmgeometry.measures.reference_tables`. :func:`score_all` is the thin wrapper that runs
every benchmark under one protocol. Two protocols are supported throughout:

``strict`` (the default)
    Only items whose words all have vectors are scored; ``coverage`` says what fraction that is.
    Similarities are cosines, analogies are solved with 3CosAdd on unit vectors.
``web``
    What the Word Embeddings Benchmarks package (Jastrzebski et al. 2017,
    ``kudkudak/word-embeddings-benchmarks``, ``web/evaluate.py``) does, which is the package
    Ethayarajh (2019) used for Table 1: a word without a vector is replaced by the mean of all
    the embedding's vectors and every item is scored; similarity is the raw inner product;
    analogies take the argmax of raw inner products; categorisation reports the best purity over
    several clusterings; SemEval-2012 uses the inner product with the mean prototype offset and
    counts an undefined correlation as 0. Use it to compare with
    :data:`~lmgeometry.measures.reference_tables.ETHAYARAJH2019_TABLE1`.

References
----------
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Biš, D., Podkorytov, M., Liu, X. (2021). Too much in common: shifting of embeddings in
transformer language models and its implications. NAACL.
Mikolov, T., Yih, W., Zweig, G. (2013). Linguistic regularities in continuous space word
representations. NAACL.
Levy, O., Goldberg, Y. (2014). Linguistic regularities in sparse and explicit word
representations. CoNLL.
Jurgens, D., Mohammad, S., Turney, P., Holyoak, K. (2012). SemEval-2012 task 2: measuring
degrees of relational similarity. *SEM.
Baroni, M., Dinu, G., Kruszewski, G. (2014). Don't count, predict! ACL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import pandas as pd

from lmgeometry.measures.analogies import evaluate_analogies
from lmgeometry.measures.categorisation import evaluate_categorisation
from lmgeometry.measures.semeval2012 import evaluate_semeval2012
from lmgeometry.measures.word_lookup import Case, Vectors
from lmgeometry.measures.word_similarity import evaluate_similarity

__all__ = ["benchmark_task", "PROTOCOLS", "score_all"]


PROTOCOLS: dict[str, dict[str, Any]] = {
    "strict": {
        "oov": "skip",
        "similarity_score": "cosine",
        "analogy_normalise": True,
        "categorisation_method": "agglomerative",
        "semeval_method": "mean_cosine",
    },
    "web": {
        "oov": "mean",
        "similarity_score": "dot",
        "analogy_normalise": False,
        "categorisation_method": "best",
        "semeval_method": "web",
    },
}
"""Settings of the two protocols of :func:`score_all` (see the module docstring)."""


def benchmark_task(frame: pd.DataFrame) -> str:
    """The task a word benchmark's frame poses, read from its columns.

    ``"analogy"`` (columns ``a, b, c, d``), ``"relational similarity"`` (SemEval-2012 task 2:
    ``word1, word2, role``), ``"similarity"`` (``word1, word2, score``) or
    ``"categorisation"`` (``word, category``); the loaders of :mod:`lmgeometry.io.benchmarks`
    give these columns.
    """
    cols = set(frame.columns)
    if {"a", "b", "c", "d"} <= cols:
        return "analogy"
    if {"word1", "word2", "role"} <= cols:
        return "relational similarity"
    if {"word1", "word2", "score"} <= cols:
        return "similarity"
    if {"word", "category"} <= cols:
        return "categorisation"
    raise ValueError(f"not a word-benchmark frame: columns {sorted(cols)}")


def score_all(
    vectors: Vectors,
    *,
    frames: Mapping[str, pd.DataFrame],
    protocol: Literal["strict", "web"] = "strict",
    benchmarks: Iterable[str] | None = None,
    similarity_metric: Literal["spearman", "pearson"] = "spearman",
    case: Case = "lower",
    seed: int = 0,
) -> pd.DataFrame:
    """Run every word benchmark on one static embedding.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None (``protocol="web"``
        needs a mapping).
    protocol
        ``"strict"`` or ``"web"``; see :data:`PROTOCOLS` and the module docstring.
    frames
        Benchmark frames by name (:func:`lmgeometry.io.benchmarks.load_benchmarks`); the task of
        each is read from its columns (:func:`benchmark_task`).
    benchmarks
        Which of ``frames`` to score, in this order (default: all, in the mapping's order).
    similarity_metric
        Which correlation the similarity rows report: ``"spearman"`` (Ethayarajh 2019) or
        ``"pearson"`` (Biš et al. 2021).
    case
        ``"lower"`` (default) or ``"exact"`` lookup.
    seed
        k-means random state for categorisation.

    Returns
    -------
    pandas.DataFrame
        One row per benchmark: ``benchmark, task, metric, value, n, total, coverage,
        protocol``. Similarity: the chosen correlation over word pairs; analogies: 3CosAdd
        accuracy; ``semeval2012``: mean per-subcategory Spearman; categorisation: purity.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {list(PROTOCOLS)}, not {protocol!r}")
    if similarity_metric not in ("spearman", "pearson"):
        raise ValueError("similarity_metric must be 'spearman' or 'pearson'")
    cfg = PROTOCOLS[protocol]
    rows: list[dict[str, Any]] = []
    for name in list(benchmarks) if benchmarks is not None else list(frames):
        if name not in frames:
            raise ValueError(f"no frame for benchmark {name!r}; frames given: {sorted(frames)}")
        frame = frames[name]
        kind = benchmark_task(frame)
        if kind == "similarity":
            r = evaluate_similarity(
                vectors, frame, cfg["similarity_score"], case=case, oov=cfg["oov"]
            )
            task, metric, value, n, total = (
                "similarity", similarity_metric, r[similarity_metric], r["n_pairs"], r["n_total"]
            )
        elif kind == "analogy":
            r = evaluate_analogies(
                vectors, frame, case=case, oov=cfg["oov"], normalise=cfg["analogy_normalise"]
            )
            task, metric, value, n, total = "analogy", "accuracy", r["accuracy"], r["n"], r["total"]
        elif kind == "categorisation":
            r = evaluate_categorisation(
                vectors, frame, cfg["categorisation_method"], seed, case=case, oov=cfg["oov"]
            )
            task, metric, value, n, total = (
                "categorisation", "purity", r["purity"], r["n"], r["total"]
            )
        else:
            r = evaluate_semeval2012(
                vectors, frame, method=cfg["semeval_method"], case=case, oov=cfg["oov"]
            )
            task, metric, value, n, total = (
                "relational similarity", "spearman", r["spearman"], r["n"], r["total"]
            )
        rows.append({
            "benchmark": name,
            "task": task,
            "metric": metric,
            "value": value,
            "n": n,
            "total": total,
            "coverage": r["coverage"],
            "protocol": protocol,
        })
    return pd.DataFrame(rows)
