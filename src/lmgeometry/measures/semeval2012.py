"""SemEval-2012 task 2: how well word pairs illustrate a relation, from pair offsets.

Each question pair's offset is scored against the relation's paradigm offsets (mean cosine, or
the Word Embeddings Benchmarks package's inner product with the mean paradigm offset) and
correlated with the gold ratings within each subcategory (Spearman), averaged over the
subcategories.

References
----------
Jurgens, D., Mohammad, S., Turney, P., Holyoak, K. (2012). SemEval-2012 task 2: measuring
degrees of relational similarity. *SEM.
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd

from lmgeometry.measures.similarity import unit_rows
from lmgeometry.measures.word_lookup import OOV, Case, Vectors, _Lookup
from lmgeometry.measures.word_similarity import _correlations

__all__ = ["evaluate_semeval2012"]


def _offsets(lk: _Lookup, w1: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets ``v(w2) - v(w1)`` of the usable pairs and the mask of covered pairs."""
    covered = np.array(
        [lk.get(a) is not None and lk.get(b) is not None for a, b in zip(w1, w2, strict=True)],
        dtype=bool,
    )
    use = covered if lk.oov == "skip" else np.ones(len(w1), dtype=bool)
    if not use.any():
        return np.zeros((0, 0)), covered
    off = np.vstack([lk.fill(b) - lk.fill(a) for a, b in zip(w1[use], w2[use], strict=True)])  # type: ignore[operator]
    return off, covered


def evaluate_semeval2012(
    vectors: Vectors,
    frame: pd.DataFrame,
    *,
    method: Literal["mean_cosine", "web"] = "mean_cosine",
    case: Case = "lower",
    oov: OOV = "skip",
    nan_as_zero: bool | None = None,
) -> dict[str, Any]:
    """SemEval-2012 task 2 (Jurgens et al. 2012): how well word pairs illustrate a relation.

    Each relation subcategory ``c`` comes with a few *paradigm* pairs ``(p1, p2)`` (the examples
    shown to annotators in phase 1) and the *question* pairs ``(x, y)`` whose gold rating says how
    prototypical of ``c`` they are (MaxDiff: % most illustrative - % least illustrative).
    Each question pair gets a score from pair offsets ``y - x``:

    ``method="mean_cosine"`` (default)
        ``s(x, y) = mean_p cos(y - x, p2 - p1)``: the mean cosine between the pair's offset and
        each paradigm offset (a zero offset has cosine 0). Scale-free, so vectors of different
        norms weigh alike.
    ``method="web"``
        ``s(x, y) = (mean_p p2 - mean_p p1) . (y - x)``: the inner product with the mean
        paradigm offset, what the Word Embeddings Benchmarks package's
        ``evaluate_on_semeval_2012_2`` computes and hence the SemEval column of Ethayarajh
        (2019, Table 1).

    The benchmark value is Spearman's rho between ``s`` and the gold ratings, computed within
    each subcategory and averaged over subcategories, as the WEB package's ``"all"`` does (the
    official task scored the test subcategories the same way, by per-subcategory Spearman
    correlation with the gold ratings). Correlations are NaN for a subcategory with fewer
    than three scored questions, no scored paradigm or constant scores; with
    ``nan_as_zero=True`` (the default for ``method="web"``, as in WEB) such a subcategory counts
    as 0 in the average, otherwise it is left out.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    frame
        One row per pair, as ``data.load_semeval2012`` returns: ``category`` (subcategory
        id such as ``"1a"``), ``role`` (``"paradigm"``; any other value, e.g. ``"rated"``,
        marks a question pair), ``word1``, ``word2`` and the gold ``score`` (NaN for
        paradigms). Every category present is used (WEB uses all 79: 10 training + 69
        testing); filter the frame (e.g. on its ``split`` column) to restrict.
    method
        ``"mean_cosine"`` or ``"web"``.
    case
        ``"lower"`` (default) or ``"exact"`` lookup.
    oov
        ``"skip"`` (default): drop pairs with a word lacking a vector. ``"mean"``: use the mean
        vector for it (WEB); needs a mapping.
    nan_as_zero
        Count an undefined subcategory correlation as 0 (default: True for ``"web"`` only).

    Returns
    -------
    dict
        ``spearman`` (the average), ``n_categories``, ``n_scored_categories``, ``n`` (question
        pairs scored), ``total`` (question pairs), ``coverage`` (fraction of question pairs with
        both vectors), ``paradigm_coverage`` and ``by_category`` (subcategory -> rho).
    """
    if method not in ("mean_cosine", "web"):
        raise ValueError(f"unknown method {method!r}")
    if nan_as_zero is None:
        nan_as_zero = method == "web"
    lk = _Lookup(vectors, case, oov)
    by_category, n_scored_pairs, q_total, q_cov, p_total, p_cov = _semeval_by_category(
        lk, frame, method, oov
    )
    values = np.array(list(by_category.values()), dtype=np.float64)
    defined = ~np.isnan(values)
    if nan_as_zero:
        avg = float(np.where(defined, values, 0.0).mean()) if len(values) else math.nan
    else:
        avg = float(values[defined].mean()) if defined.any() else math.nan
    return {
        "spearman": avg,
        "n_categories": len(by_category),
        "n_scored_categories": int(defined.sum()),
        "n": int(n_scored_pairs),
        "total": q_total,
        "coverage": q_cov / q_total if q_total else math.nan,
        "paradigm_coverage": p_cov / p_total if p_total else math.nan,
        "by_category": by_category,
    }


def _semeval_by_category(
    lk: _Lookup, frame: pd.DataFrame, method: str, oov: str
) -> tuple[dict[str, float], int, int, int, int, int]:
    """Per-subcategory rho, question pairs scored, and question / paradigm totals and coverage."""
    cat = frame["category"].astype(str).to_numpy()
    w1 = frame["word1"].astype(str).to_numpy()
    w2 = frame["word2"].astype(str).to_numpy()
    gold = frame["score"].to_numpy(dtype=np.float64)
    is_par = (frame["role"].astype(str) == "paradigm").to_numpy()
    is_q = ~is_par

    by_category: dict[str, float] = {}
    n_scored_pairs = 0
    q_total = int(is_q.sum())
    q_cov = 0
    p_total = int(is_par.sum())
    p_cov = 0
    for c in pd.unique(cat):
        pm = is_par & (cat == c)
        qm = is_q & (cat == c)
        P, p_covered = _offsets(lk, w1[pm], w2[pm])
        Q, q_covered = _offsets(lk, w1[qm], w2[qm])
        p_cov += int(p_covered.sum())
        q_cov += int(q_covered.sum())
        g = gold[qm][q_covered] if oov == "skip" else gold[qm]
        rho = math.nan
        if len(P) and len(Q):
            if method == "mean_cosine":
                s = (unit_rows(Q)[0] @ unit_rows(P)[0].T).mean(axis=1)
            else:
                s = Q @ P.mean(axis=0)
            n_scored_pairs += len(s)
            rho = _correlations(s, g)[0]
        by_category[str(c)] = rho
    return by_category, n_scored_pairs, q_total, q_cov, p_total, p_cov
