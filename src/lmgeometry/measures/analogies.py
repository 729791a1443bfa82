"""Word analogies ``a : b :: c : ?`` solved by 3CosAdd, scored by accuracy.

3CosAdd (Mikolov, Yih and Zweig 2013; named by Levy and Goldberg 2014) on unit vectors, or on
raw vectors as the Word Embeddings Benchmarks package computes it for an unnormalised
embedding (the Google and MSR columns of Ethayarajh 2019, Table 1), as batched matrix products.

References
----------
Mikolov, T., Yih, W., Zweig, G. (2013). Linguistic regularities in continuous space word
representations. NAACL.
Levy, O., Goldberg, Y. (2014). Linguistic regularities in sparse and explicit word
representations. CoNLL.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import pandas as pd

from lmgeometry.measures.similarity import unit_rows
from lmgeometry.measures.word_lookup import OOV, Case, Vectors, _Lookup

__all__ = ["evaluate_analogies"]


def evaluate_analogies(
    vectors: Vectors,
    questions: pd.DataFrame,
    *,
    case: Case = "lower",
    oov: OOV = "skip",
    candidates: Literal["vocabulary", "benchmark"] | Iterable[str] | None = None,
    normalise: bool = True,
    batch_size: int = 256,
) -> dict[str, Any]:
    """Solve ``a : b :: c : ?`` by 3CosAdd and report accuracy.

    3CosAdd (Mikolov, Yih & Zweig 2013; named by Levy & Goldberg 2014) answers

    ``d* = argmax_{d' in V \\ {a, b, c}} cos(d', b - a + c)``

    computed on unit-normalised vectors, where it equals ``argmax d' . (b^ - a^ + c^)`` over unit
    candidates ``d'``, as batched matrix products. The question is right when ``d* == d``.
    Ties go to the candidate listed first (``numpy.argmax``).

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    questions
        Frame with columns ``a, b, c, d`` and optionally ``category``
        (as ``data.load_analogies`` returns).
    case
        ``"lower"`` (default) or ``"exact"`` lookup; predictions are compared after the same
        normalisation.
    oov
        ``"skip"`` (default): evaluate only questions whose four words all have vectors, i.e.
        within the evaluated vocabulary. ``"mean"``: replace a missing a, b or c by the mean
        vector and count every question (a missing d can never be predicted: it counts as
        wrong), as the Word Embeddings Benchmarks package does; needs a mapping.
    candidates
        The search space V. ``"vocabulary"``: every key of the mapping reachable under ``case``
        (the default for a mapping, and what the WEB package does); ``"benchmark"``: the
        benchmark's words that have vectors (the default for a callable, which cannot be
        enumerated); or an explicit iterable of words (those without vectors are dropped).
    normalise
        True (default): 3CosAdd on unit vectors. False: ``argmax d' . (b - a + c)`` on the raw
        vectors, which is what the WEB package computes when the embedding is not normalised.
    batch_size
        Questions per matrix product (memory is ``batch_size x |V|`` floats).

    Returns
    -------
    dict
        ``accuracy`` (correct / n), ``n`` (questions evaluated), ``n_correct``, ``total``
        (questions in the benchmark), ``coverage`` (fraction of questions whose four words all
        have vectors), ``n_candidates`` and ``by_category`` (category -> accuracy among evaluated
        questions; empty without a ``category`` column).
    """
    lk = _Lookup(vectors, case, oov)
    cols = [lk.keys(questions[c]) for c in ("a", "b", "c", "d")]
    total = len(questions)
    cand = _analogy_candidates(lk, cols, candidates)

    has = [lk.has(col) for col in cols]
    covered = has[0] & has[1] & has[2] & has[3]
    keep = covered if oov == "skip" else np.ones(total, dtype=bool)
    rows = np.flatnonzero(keep)
    n = len(rows)
    correct = _solve_3cosadd(lk, cols, rows, cand, normalise, batch_size)

    by_category: dict[str, float] = {}
    if "category" in questions.columns and n:
        cats = questions["category"].to_numpy()[rows]
        for cat in pd.unique(cats):
            sel = cats == cat
            by_category[str(cat)] = float(correct[sel].mean())
    return {
        "accuracy": float(correct.mean()) if n else math.nan,
        "n": int(n),
        "n_correct": int(correct.sum()),
        "total": int(total),
        "coverage": float(covered.mean()) if total else math.nan,
        "n_candidates": len(cand),
        "by_category": by_category,
    }


def _analogy_candidates(
    lk: _Lookup,
    cols: list[np.ndarray],
    candidates: Literal["vocabulary", "benchmark"] | Iterable[str] | None,
) -> list[str]:
    """The search space of :func:`evaluate_analogies`: candidate keys that have vectors."""
    if candidates is None:
        candidates = "vocabulary" if lk.mapping is not None else "benchmark"
    if isinstance(candidates, str) and candidates == "vocabulary":
        cand = lk.vocabulary()
    elif isinstance(candidates, str) and candidates == "benchmark":
        cand = list(dict.fromkeys(np.concatenate(cols).tolist()))
    elif isinstance(candidates, str):
        raise ValueError(
            f"candidates must be 'vocabulary', 'benchmark' or words, not {candidates!r}"
        )
    else:
        cand = list(dict.fromkeys(lk.key(w) for w in candidates))
    return [w for w in cand if lk.get(w) is not None]


def _solve_3cosadd(
    lk: _Lookup,
    cols: list[np.ndarray],
    rows: np.ndarray,
    cand: list[str],
    normalise: bool,
    batch_size: int,
) -> np.ndarray:
    """Whether 3CosAdd over ``cand`` answers each question ``rows`` of ``cols`` correctly.

    A question whose answer is not a candidate is wrong whatever the search finds, so only
    the others are searched (the result is the same, at a fraction of the cost when most
    answers lack a vector).
    """
    index = {w: i for i, w in enumerate(cand)}
    correct = np.zeros(len(rows), dtype=bool)
    answerable = pd.Index(cols[3][rows]).isin(cand)
    sub = np.flatnonzero(answerable)
    if len(sub) and cand:
        correct[sub] = _solve_3cosadd_rows(lk, cols, rows[sub], cand, index, normalise,
                                           batch_size)
    return correct


def _solve_3cosadd_rows(
    lk: _Lookup,
    cols: list[np.ndarray],
    rows: np.ndarray,
    cand: list[str],
    index: dict[str, int],
    normalise: bool,
    batch_size: int,
) -> np.ndarray:
    """3CosAdd over ``cand`` for the questions ``rows``: whether each is answered right."""
    n = len(rows)
    correct = np.zeros(n, dtype=bool)
    if n:
        M = np.vstack([lk.get(w) for w in cand])  # type: ignore[misc]
        if normalise:
            M = unit_rows(M)[0]
        MT = np.ascontiguousarray(M.T)
        abc = [
            np.vstack([lk.fill(w) for w in col[rows]])  # type: ignore[misc]
            for col in cols[:3]
        ]
        if normalise:
            abc = [unit_rows(X)[0] for X in abc]
        Q = abc[1] - abc[0] + abc[2]
        excl = np.array(
            [[index.get(w, -1) for w in col[rows]] for col in cols[:3]], dtype=np.int64
        ).T  # (n, 3)
        cand_arr = np.array(cand, dtype=object)
        gold = cols[3][rows]
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            S = Q[start:stop] @ MT
            ex = excl[start:stop]
            r_idx, c_pos = np.nonzero(ex >= 0)
            S[r_idx, ex[r_idx, c_pos]] = -np.inf
            pred = cand_arr[np.argmax(S, axis=1)]
            correct[start:stop] = pred == gold[start:stop]
    return correct
