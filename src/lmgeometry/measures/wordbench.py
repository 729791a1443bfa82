"""Static-embedding benchmarks: word similarity, analogies, categorisation, SemEval-2012 task 2.

A *static embedding* here is anything that maps a word to one vector: a mapping
``word -> vector`` (a ``dict``, for example the first-principal-component embeddings of
Ethayarajh (2019), or the rows of a model's input embedding matrix keyed by token) or a callable
that returns a vector, or ``None`` for a word it does not cover.

Every scorer is a pure function of the vectors and a benchmark frame (the frames that
:mod:`lmgeometry.io.data` loads); :func:`score_all` is the thin wrapper that loads every benchmark
by name. Two protocols are supported throughout:

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
    counts an undefined correlation as 0. Use it to compare with :data:`ETHAYARAJH2019_TABLE1`.

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

import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats
from threadpoolctl import threadpool_limits

from lmgeometry.measures.clusters import purity
from lmgeometry.measures.similarity import unit_rows

__all__ = [
    "benchmark_task",
    "BIS2021_MODELS",
    "BIS2021_TABLE3_COLUMNS",
    "BIS2021_WORDSIM",
    "Case",
    "ETHAYARAJH2019_COLUMNS",
    "ETHAYARAJH2019_TABLE1",
    "evaluate_analogies",
    "evaluate_categorisation",
    "evaluate_semeval2012",
    "evaluate_similarity",
    "OOV",
    "paired_correlations",
    "PROTOCOLS",
    "reference_frame",
    "score_all",
    "similarity_scores",
    "Vectors",
]


Vectors = Mapping[str, ArrayLike] | Callable[[str], ArrayLike | None]
"""A static embedding: ``word -> vector`` mapping, or a callable returning ``None`` when OOV."""


Case = Literal["lower", "exact"]

OOV = Literal["skip", "mean"]


ETHAYARAJH2019_COLUMNS: dict[str, str] = {
    "SimLex999": "simlex999",
    "MEN": "men",
    "WS353": "ws353",
    "RW": "rw",
    "Google": "google",
    "MSR": "msr",
    "SemEval2012(2)": "semeval2012",
    "BLESS": "bless",
    "AP": "ap",
}
"""Table 1 column headers of Ethayarajh (2019) -> the benchmark names used here."""


_E19_ROWS: dict[str, tuple[float, ...]] = {
    # Transcribed from seed 001 (Ethayarajh 2019, Table 1); the text table is complete (12 rows
    # x 9 columns). The paper marks the best result per column in bold; that is not kept.
    "GloVe": (0.194, 0.216, 0.339, 0.127, 0.189, 0.312, 0.097, 0.390, 0.308),
    "FastText": (0.239, 0.239, 0.432, 0.176, 0.203, 0.289, 0.104, 0.375, 0.291),
    "ELMo, Layer 1": (0.276, 0.167, 0.317, 0.148, 0.170, 0.326, 0.114, 0.410, 0.308),
    "ELMo, Layer 2": (0.215, 0.151, 0.272, 0.133, 0.130, 0.268, 0.132, 0.395, 0.318),
    "BERT, Layer 1": (0.315, 0.200, 0.394, 0.208, 0.236, 0.389, 0.166, 0.365, 0.321),
    "BERT, Layer 2": (0.320, 0.166, 0.383, 0.188, 0.230, 0.385, 0.149, 0.365, 0.321),
    "BERT, Layer 11": (0.221, 0.076, 0.319, 0.135, 0.175, 0.290, 0.149, 0.370, 0.289),
    "BERT, Layer 12": (0.233, 0.082, 0.325, 0.144, 0.184, 0.307, 0.144, 0.360, 0.294),
    "GPT-2, Layer 1": (0.174, 0.012, 0.176, 0.183, 0.052, 0.081, 0.033, 0.220, 0.184),
    "GPT-2, Layer 2": (0.135, 0.036, 0.171, 0.180, 0.045, 0.062, 0.021, 0.245, 0.184),
    "GPT-2, Layer 11": (0.126, 0.034, 0.165, 0.182, 0.031, 0.038, 0.045, 0.270, 0.189),
    "GPT-2, Layer 12": (0.140, -0.009, 0.113, 0.163, 0.020, 0.021, 0.014, 0.225, 0.172),
}


ETHAYARAJH2019_TABLE1: dict[str, dict[str, float]] = {
    row: dict(zip(ETHAYARAJH2019_COLUMNS.values(), values, strict=True))
    for row, values in _E19_ROWS.items()
}
"""Ethayarajh (2019), Table 1: static embeddings on word-vector benchmarks.

Rows are GloVe, FastText and the *PC static embeddings* of ELMo, BERT and GPT-2 (the first
principal component of a word's contextualised representations in one layer; layers 3-10 were
left out of the paper's table). Columns (see :data:`ETHAYARAJH2019_COLUMNS`): Spearman
correlation for SimLex-999, MEN, WS353, RW; 3CosAdd accuracy for Google and MSR analogies;
the SemEval-2012 task 2 score of the Word Embeddings Benchmarks package; cluster purity for
BLESS and AP. Evaluated with the Word Embeddings Benchmarks package (paper's footnote 2), i.e.
the ``web`` protocol here.
"""


BIS2021_MODELS: tuple[str, ...] = (
    "BERT-base-cased",
    "BERT-large-cased",
    "RoBERTa-base",
    "RoBERTa-large",
    "GPT-2-small",
    "GPT-2-medium",
)


_BIS_T2: dict[str, dict[str, tuple[float, float]]] = {
    # Seed 004 (Biš et al. 2021), Table 2: (cosine, inner product); Pearson r x 100 averaged
    # over the five Table 3 benchmarks (the caption lists four data sets, but the averages
    # equal the mean of all five Table 3 columns, WordSim-Sim and WordSim-Rel counted apart).
    "BERT-base-cased": {
        "original": (62.29, 60.91),
        "centered": (60.44, 60.08),
        "centered_scaled": (62.32, 62.41),
        "post_process": (65.57, 66.10),
    },
    "BERT-large-cased": {
        "original": (61.90, 59.42),
        "centered": (58.66, 57.99),
        "centered_scaled": (61.18, 61.05),
        "post_process": (65.72, 65.89),
    },
    "RoBERTa-base": {
        "original": (66.81, 66.01),
        "centered": (66.85, 67.03),
        "centered_scaled": (67.02, 66.95),
        "post_process": (66.87, 67.15),
    },
    "RoBERTa-large": {
        "original": (61.29, 44.79),
        "centered": (64.09, 63.78),
        "centered_scaled": (65.49, 64.16),
        "post_process": (64.38, 65.17),
    },
    "GPT-2-small": {
        "original": (64.71, 59.45),
        "centered": (64.95, 66.04),
        "centered_scaled": (66.57, 67.32),
        "post_process": (67.85, 67.67),
    },
    "GPT-2-medium": {
        "original": (65.53, 59.20),
        "centered": (66.83, 67.90),
        "centered_scaled": (67.95, 68.22),
        "post_process": (68.05, 67.81),
    },
}


BIS2021_TABLE3_COLUMNS: dict[str, str] = {
    "MEN": "men",
    "RW": "rw",
    "Simlex-999": "simlex999",
    "WordSim-Sim": "ws353_sim",
    "WordSim-Rel": "ws353_rel",
}
"""Table 3 column headers of Biš et al. (2021) -> the benchmark names used here."""


_BIS_T3: dict[str, dict[str, tuple[tuple[float, float], ...]]] = {
    # Seed 004, Table 3 (appendix C): per benchmark (inner product, cosine) -- the table's
    # header is "<.,.> / cos". The paper spells the BERT rows "Bert-"; the model names are
    # normalised to Table 2's. Table 3 has no "Centered" rows.
    "BERT-base-cased": {
        "original": (
            (65.53, 67.07), (61.22, 63.72), (52.52, 52.37), (75.03, 75.57), (50.27, 52.70),
        ),
        "centered_scaled": (
            (69.32, 68.36), (63.57, 63.94), (47.34, 47.96), (78.58, 77.36), (53.23, 53.96),
        ),
        "post_process": (
            (72.20, 70.91), (67.71, 68.20), (53.60, 52.53), (79.38, 78.15), (57.63, 58.04),
        ),
    },
    "BERT-large-cased": {
        "original": (
            (64.64, 67.20), (58.94, 61.89), (52.68, 52.91), (73.44, 76.32), (47.40, 51.16),
        ),
        "centered_scaled": (
            (68.63, 67.69), (61.67, 62.19), (48.66, 48.53), (77.47, 77.45), (48.81, 50.02),
        ),
        "post_process": (
            (72.12, 71.07), (67.22, 68.07), (55.41, 53.77), (78.80, 78.88), (55.90, 56.79),
        ),
    },
    "GPT-2-small": {
        "original": (
            (65.55, 71.16), (58.08, 63.99), (50.43, 51.45), (72.98, 78.32), (50.19, 58.63),
        ),
        "centered_scaled": (
            (75.55, 74.10), (64.05, 64.94), (51.60, 50.36), (81.41, 80.61), (63.98, 62.86),
        ),
        "post_process": (
            (76.00, 75.34), (65.30, 66.56), (53.74, 53.15), (80.70, 80.79), (62.62, 63.40),
        ),
    },
    "GPT-2-medium": {
        "original": (
            (65.01, 71.55), (58.55, 65.22), (51.13, 52.51), (72.67, 78.48), (48.65, 59.90),
        ),
        "centered_scaled": (
            (76.10, 75.02), (64.14, 65.34), (54.22, 53.30), (80.85, 80.56), (65.79, 65.51),
        ),
        "post_process": (
            (75.92, 75.25), (64.80, 66.11), (54.65, 54.19), (79.99, 80.25), (63.71, 64.43),
        ),
    },
    "RoBERTa-base": {
        "original": (
            (72.83, 72.70), (64.72, 66.61), (55.17, 54.84), (78.00, 78.62), (59.31, 61.27),
        ),
        "centered_scaled": (
            (74.18, 73.33), (65.38, 66.35), (54.16, 53.77), (79.35, 79.10), (61.66, 62.53),
        ),
        "post_process": (
            (74.22, 73.13), (65.45, 66.11), (53.87, 53.35), (79.64, 79.08), (62.58, 62.70),
        ),
    },
    "RoBERTa-large": {
        "original": (
            (42.92, 63.44), (49.72, 64.31), (45.75, 54.54), (58.09, 73.46), (27.47, 50.69),
        ),
        "centered_scaled": (
            (70.55, 70.95), (63.09, 65.63), (55.24, 54.18), (75.72, 77.34), (56.19, 59.35),
        ),
        "post_process": (
            (72.01, 70.55), (63.11, 63.64), (52.48, 50.93), (77.87, 77.09), (60.36, 59.71),
        ),
    },
}


BIS2021_WORDSIM: dict[str, Any] = {
    "table2": {
        model: {
            variant: {"cosine": cos, "dot": dot} for variant, (cos, dot) in variants.items()
        }
        for model, variants in _BIS_T2.items()
    },
    "table3": {
        model: {
            variant: {
                bench: {"dot": dot, "cosine": cos}
                for bench, (dot, cos) in zip(BIS2021_TABLE3_COLUMNS.values(), cells, strict=True)
            }
            for variant, cells in variants.items()
        }
        for model, variants in _BIS_T3.items()
    },
}
"""Biš et al. (2021), Tables 2 and 3: word similarity on a model's input embedding matrix.

Values are Pearson's r x 100 between the human score and the cosine (``"cosine"``) or inner
product (``"dot"``) of two words' embedding rows, pairs containing sub-word units filtered out
(so the pair sets differ between models). ``table2[model][variant]`` is the average over the
five benchmarks; ``table3[model][variant][benchmark]`` the per-benchmark value (benchmarks
``men``, ``rw``, ``simlex999``, ``ws353_sim``, ``ws353_rel``). Variants: ``original``,
``centered`` (mean subtracted; Table 2 only), ``centered_scaled`` (``e(w) - ||e(w)|| mu_hat``
with ``mu_hat`` the mean of the unit-normalised rows) and ``post_process`` (their eq. 11:
centre, then remove the top ``ceil(d/100)`` principal components).
"""


def reference_frame(
    name: Literal["ethayarajh2019_table1", "bis2021_table2", "bis2021_table3"],
) -> pd.DataFrame:
    """The reference numbers of one seed table as a long frame.

    Parameters
    ----------
    name
        ``"ethayarajh2019_table1"`` (columns ``embedding, benchmark, value``; see
        :data:`ETHAYARAJH2019_TABLE1`), ``"bis2021_table2"`` (``model, variant, score, value``)
        or ``"bis2021_table3"`` (``model, variant, benchmark, score, value``; see
        :data:`BIS2021_WORDSIM`).

    Returns
    -------
    pandas.DataFrame
        One row per printed number, in the paper's row order.
    """
    rows: list[dict[str, Any]] = []
    if name == "ethayarajh2019_table1":
        for emb, cells in ETHAYARAJH2019_TABLE1.items():
            rows += [{"embedding": emb, "benchmark": b, "value": v} for b, v in cells.items()]
    elif name == "bis2021_table2":
        for model, variants in BIS2021_WORDSIM["table2"].items():
            for variant, cells in variants.items():
                rows += [
                    {"model": model, "variant": variant, "score": s, "value": v}
                    for s, v in cells.items()
                ]
    elif name == "bis2021_table3":
        for model, variants in BIS2021_WORDSIM["table3"].items():
            for variant, benches in variants.items():
                for bench, cells in benches.items():
                    rows += [
                        {"model": model, "variant": variant, "benchmark": bench, "score": s,
                         "value": v}
                        for s, v in cells.items()
                    ]
    else:
        raise ValueError(f"unknown reference table {name!r}")
    return pd.DataFrame(rows)


class _Lookup:
    """Resolve benchmark words to vectors under one case rule and one OOV rule."""

    def __init__(self, vectors: Vectors, case: str, oov: str) -> None:
        if case not in ("lower", "exact"):
            raise ValueError(f"case must be 'lower' or 'exact', not {case!r}")
        if oov not in ("skip", "mean"):
            raise ValueError(f"oov must be 'skip' or 'mean', not {oov!r}")
        self.mapping: Mapping[str, ArrayLike] | None = (
            vectors if isinstance(vectors, Mapping) else None
        )
        if self.mapping is None and not callable(vectors):
            raise TypeError("vectors must be a mapping word -> vector or a callable")
        if oov == "mean" and self.mapping is None:
            raise ValueError("oov='mean' needs the whole vocabulary: pass a mapping")
        self.fn = None if self.mapping is not None else vectors
        self.case = case
        self.oov = oov
        self._cache: dict[str, np.ndarray | None] = {}
        self._mean: np.ndarray | None = None

    def key(self, word: Any) -> str:
        word = str(word)
        return word.lower() if self.case == "lower" else word

    def keys(self, words: pd.Series) -> np.ndarray:
        """:meth:`key` of every word of a column (vectorised)."""
        text = words.astype(str)
        return (text.str.lower() if self.case == "lower" else text).to_numpy(dtype=object)

    def has(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key has a vector (vectorised for a mapping)."""
        if self.mapping is not None:
            known = [k for k, v in self.mapping.items() if v is not None]
            return pd.Index(keys).isin(known)
        return np.array([self.get(k) is not None for k in keys], dtype=bool)

    def get(self, word: Any) -> np.ndarray | None:
        """The word's vector (float64, 1-D), or None when it has none."""
        k = self.key(word)
        if k in self._cache:
            return self._cache[k]
        if self.mapping is not None:
            v = self.mapping.get(k)
        else:
            v = self.fn(k)  # type: ignore[misc]
        out = None if v is None else np.asarray(v, dtype=np.float64).ravel()
        self._cache[k] = out
        return out

    def fill(self, word: Any) -> np.ndarray | None:
        """:meth:`get`, or the mean vector for a missing word when ``oov == 'mean'``."""
        v = self.get(word)
        if v is None and self.oov == "mean":
            return self.mean()
        return v

    def mean(self) -> np.ndarray:
        """Mean of every vector in the mapping (the WEB package's OOV replacement)."""
        if self._mean is None:
            assert self.mapping is not None
            total: np.ndarray | None = None
            n = 0
            for v in self.mapping.values():
                a = np.asarray(v, dtype=np.float64).ravel()
                total = a.copy() if total is None else total + a
                n += 1
            if total is None:
                raise ValueError("the embedding is empty")
            self._mean = total / n
        return self._mean

    def vocabulary(self) -> list[str]:
        """Mapping keys reachable under the case rule (all keys, or the lower-case ones)."""
        if self.mapping is None:
            raise ValueError("a callable embedding has no vocabulary to enumerate")
        return [k for k in self.mapping if self.key(k) == k]


def _correlations(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """(Spearman rho, Pearson r); NaN with fewer than 3 points or a constant input."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = float(stats.spearmanr(x, y).statistic)
        r = float(stats.pearsonr(x, y).statistic)
    return rho, r


def evaluate_similarity(
    vectors: Vectors,
    pairs: pd.DataFrame,
    score: Literal["cosine", "dot"] = "cosine",
    *,
    case: Case = "lower",
    oov: OOV = "skip",
) -> dict[str, float | int]:
    """Correlate the similarity of two words' vectors with human similarity ratings.

    For every pair (w1, w2) with human score h, the model score is
    ``cos(v1, v2) = v1 . v2 / (||v1|| ||v2||)`` (``score="cosine"``; 0 when a vector is zero) or
    ``v1 . v2`` (``score="dot"``, the inner product Biš et al. 2021 also report). The result is
    Spearman's rho (the metric of Ethayarajh 2019, Table 1) and Pearson's r (the metric of Biš et
    al. 2021, Tables 2-3, there x 100) between model and human scores, from ``scipy.stats``.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    pairs
        Frame with columns ``word1, word2, score`` (as ``data.load_word_similarity`` returns).
    score
        ``"cosine"`` or ``"dot"``.
    case
        ``"lower"`` looks up ``word.lower()`` (default); ``"exact"`` the word as written.
    oov
        ``"skip"``: score only pairs whose two words have vectors. ``"mean"``: replace a missing
        vector by the mean of all the embedding's vectors and score every pair (the Word
        Embeddings Benchmarks package; needs a mapping).

    Returns
    -------
    dict
        ``spearman``, ``pearson`` (NaN with fewer than 3 scored pairs or constant scores),
        ``n_pairs`` (pairs entering the correlations), ``n_total`` (pairs in the benchmark) and
        ``coverage`` (fraction of the benchmark's pairs whose two words both have vectors).
    """
    if score not in ("cosine", "dot"):
        raise ValueError(f"score must be 'cosine' or 'dot', not {score!r}")
    lk = _Lookup(vectors, case, oov)
    model_scores: list[float] = []
    human: list[float] = []
    covered = 0
    for w1, w2, h in zip(pairs["word1"], pairs["word2"], pairs["score"], strict=True):
        v1, v2 = lk.get(w1), lk.get(w2)
        if v1 is not None and v2 is not None:
            covered += 1
        elif oov == "skip":
            continue
        else:
            v1, v2 = lk.fill(w1), lk.fill(w2)
        assert v1 is not None and v2 is not None
        dot = float(v1 @ v2)
        if score == "cosine":
            denom = float(np.linalg.norm(v1) * np.linalg.norm(v2))
            dot = dot / denom if denom > 0 else 0.0
        model_scores.append(dot)
        human.append(float(h))
    rho, r = _correlations(model_scores, human)
    n_total = len(pairs)
    return {
        "spearman": rho,
        "pearson": r,
        "n_pairs": len(model_scores),
        "n_total": n_total,
        "coverage": covered / n_total if n_total else math.nan,
    }


def similarity_scores(vectors: Vectors, pairs: pd.DataFrame, *, case: Case = "lower"
                      ) -> np.ndarray:
    """The cosine of the two words' vectors of every pair; NaN where a word has no vector.

    The per-item model scores behind :func:`evaluate_similarity` (``score="cosine"``,
    ``oov="skip"``): ``cos(v1, v2)``, 0 when a vector is zero.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    pairs
        Frame with columns ``word1, word2``.
    case
        ``"lower"`` (default) or ``"exact"`` lookup.

    Returns
    -------
    ndarray of shape (len(pairs),)
    """
    lk = _Lookup(vectors, case, "skip")
    out = np.full(len(pairs), np.nan)
    for i, (w1, w2) in enumerate(zip(pairs["word1"], pairs["word2"], strict=True)):
        v1, v2 = lk.get(w1), lk.get(w2)
        if v1 is not None and v2 is not None:
            denom = float(np.linalg.norm(v1) * np.linalg.norm(v2))
            out[i] = float(v1 @ v2) / denom if denom > 0 else 0.0
    return out


def paired_correlations(
    human: ArrayLike,
    scores: ArrayLike,
    n_boot: int = 1000,
    rng: np.random.Generator | int | Any = None,
    method: Literal["pearson", "spearman"] = "pearson",
) -> np.ndarray:
    """Correlations of several model scores with one set of human ratings, and replicates.

    ``scores[j]`` scores the same items as ``human`` (the pairs of one benchmark under the
    embedding ``j``: PC1 vectors of each layer and the layer-0 vectors, as in Ethayarajh 2019,
    Table 1; or the rows of W after each post-processing of Biš et al. 2021). Row 0 holds each
    score's correlation with the human ratings on all items; rows 1 to ``n_boot`` the same on
    bootstrap resamples of the items (drawn with replacement in one call,
    ``rng.integers(0, n, size=(n_boot, n))``), one resample shared by every score, so that a
    difference between two scores gets a paired interval (the items' difficulty cancels).

    Pearson's r is :math:`\\sum_i (x_i - \\bar x)(h_i - \\bar h) / \\sqrt{\\sum_i (x_i - \\bar x)^2
    \\sum_i (h_i - \\bar h)^2}`; Spearman's rho is Pearson's r of the average ranks
    (``scipy.stats.rankdata``), recomputed within each resample, so ties are handled as
    ``scipy.stats.spearmanr`` does; the ranks of a resample come from its draw counts and one
    sort per column (:func:`_resampled_ranks`), so a resample costs O(n) per column. A
    constant column (or constant ratings) in a resample gives NaN. The computation runs in
    chunks of resamples, so memory stays bounded.

    Parameters
    ----------
    human : array_like, shape (n,)
    scores : array_like, shape (k, n)
        No NaN: drop the items an embedding does not cover first.
    n_boot : int
    rng : seed or Generator
    method : {"pearson", "spearman"}
        Pearson's r (Biš et al.'s metric) or Spearman's rho (Ethayarajh's).

    Returns
    -------
    ndarray, shape (1 + n_boot, k)
    """
    h = np.asarray(human, dtype=np.float64)
    S = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if S.ndim != 2 or S.shape[1] != h.size or h.size < 3:
        raise ValueError(f"scores must be (k, {h.size}) with at least 3 items, not {S.shape}")
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', not {method!r}")
    gen = np.random.default_rng(rng)
    idx = np.vstack([np.arange(h.size), gen.integers(0, h.size, size=(max(n_boot, 0), h.size))])
    if method == "spearman":
        return _resampled_spearman(h, S, idx)
    out = np.empty((len(idx), S.shape[0]))
    per_chunk = max(1, (1 << 21) // (h.size * (S.shape[0] + 1)))
    for start in range(0, len(idx), per_chunk):
        rows = idx[start:start + per_chunk]
        hh, ss = h[rows], S[:, rows]  # (b, n), (k, b, n)
        hh = hh - hh.mean(axis=-1, keepdims=True)
        ss = ss - ss.mean(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (ss * hh).sum(-1) / np.sqrt((ss * ss).sum(-1) * (hh * hh).sum(-1))
        out[start:start + len(rows)] = r.T
    return out


def _resampled_ranks(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Average rank of each item of ``x`` within every resample, from the resample's counts.

    An item drawn ``c_j`` times into a resample takes, in each copy, the average rank
    ``#{values below x_j} + (#{values equal to x_j} + 1) / 2`` counted over the resample, which
    is what ``scipy.stats.rankdata`` gives the resampled array; here it comes from one sort of
    ``x`` and cumulative sums of the counts (ties share their group's total).
    """
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    cs = counts[:, order]
    group = np.add.reduceat(cs, starts, axis=1)  # (B, groups): copies of each tied value
    below = np.cumsum(group, axis=1) - group
    ranks_sorted = np.repeat(below + (group + 1) / 2.0, np.diff(np.r_[starts, len(xs)]), axis=1)
    out = np.empty_like(ranks_sorted)
    out[:, order] = ranks_sorted
    return out


def _resampled_spearman(h: np.ndarray, S: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Spearman rho of each row of ``S`` with ``h`` on every resample ``idx`` (rows of item
    indices): the Pearson correlation of average ranks, weighted by how often each item was
    drawn, without materialising the resampled arrays."""
    n = h.size
    out = np.empty((len(idx), S.shape[0]))
    per_chunk = max(1, (1 << 22) // n)
    for start in range(0, len(idx), per_chunk):
        rows = idx[start:start + per_chunk]
        b = len(rows)
        counts = np.bincount((rows + n * np.arange(b)[:, None]).ravel(),
                             minlength=b * n).reshape(b, n).astype(np.float64)
        centre = (n + 1) / 2.0  # the mean rank of n values, ties or not
        rh = _resampled_ranks(h, counts) - centre
        vh = (counts * rh * rh).sum(axis=1)
        for e in range(S.shape[0]):
            rs = _resampled_ranks(S[e], counts) - centre
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + b, e] = ((counts * rs * rh).sum(axis=1)
                                           / np.sqrt((counts * rs * rs).sum(axis=1) * vh))
    return out


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


_WEB_AGGLOMERATIVE: tuple[tuple[str, str], ...] = (
    ("ward", "euclidean"),
    ("average", "cosine"),
    ("complete", "cosine"),
    ("average", "euclidean"),
    ("complete", "euclidean"),
)


def _cluster(
    X: np.ndarray, k: int, method: str, seed: int, linkage: str, metric: str
) -> np.ndarray:
    """Cluster labels of the rows of ``X``, single-threaded.

    A few hundred words gain nothing from BLAS or OpenMP threads, and on shared, busy cores
    their spin-waiting makes k-means' distance products many times slower.
    """
    from sklearn.cluster import AgglomerativeClustering, KMeans

    if linkage == "ward" and metric != "euclidean" and method != "kmeans":
        raise ValueError("ward linkage needs the euclidean metric")
    with threadpool_limits(limits=1):
        if method == "kmeans":
            return KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(X)
        return AgglomerativeClustering(n_clusters=k, linkage=linkage,
                                       metric=metric).fit_predict(X)


def evaluate_categorisation(
    vectors: Vectors,
    items: pd.DataFrame,
    method: Literal["agglomerative", "kmeans", "best"] = "agglomerative",
    seed: int = 0,
    *,
    linkage: Literal["ward", "average", "complete", "single"] = "ward",
    metric: Literal["euclidean", "cosine"] = "euclidean",
    case: Case = "lower",
    oov: OOV = "skip",
) -> dict[str, Any]:
    """Cluster words into as many clusters as there are categories; report cluster purity.

    Concept categorisation as in Baroni, Dinu & Kruszewski (2014) and Ethayarajh (2019): the
    words' vectors are clustered into ``k`` clusters, ``k`` the number of gold categories
    (among the evaluated words), with scikit-learn, and scored by :func:`purity`.

    Parameters
    ----------
    vectors
        Mapping word -> vector, or a callable returning a vector or None.
    items
        Frame with columns ``word, category`` (as ``data.load_categorisation`` returns).
    method
        ``"agglomerative"`` (``AgglomerativeClustering`` with ``linkage`` and ``metric``;
        deterministic), ``"kmeans"`` (``KMeans(n_init=10, random_state=seed)``), or ``"best"``:
        the maximum purity over Ward, average/complete linkage under cosine and euclidean
        distance and k-means -- the Word Embeddings Benchmarks package's ``method="all"``
        (used for Ethayarajh 2019, Table 1). ``"best"`` picks the clustering with the gold
        labels, so it is optimistic.
    seed
        Random state of k-means.
    linkage, metric
        Agglomerative settings (``"ward"`` needs ``"euclidean"``).
    case
        ``"lower"`` (default) or ``"exact"`` lookup.
    oov
        ``"skip"`` (default): cluster only words with vectors. ``"mean"``: give missing words
        the mean vector (WEB package); needs a mapping.

    Returns
    -------
    dict
        ``purity``, ``n`` (words clustered), ``total`` (words in the benchmark), ``coverage``
        (fraction with vectors), ``n_clusters``, ``method``. Purity is NaN when fewer words
        than clusters remain.
    """
    if method not in ("agglomerative", "kmeans", "best"):
        raise ValueError(f"unknown method {method!r}")
    lk = _Lookup(vectors, case, oov)
    words = items["word"].tolist()
    labels = items["category"].to_numpy()
    total = len(words)
    vecs = [lk.get(w) for w in words]
    has = np.array([v is not None for v in vecs], dtype=bool)
    keep = has if oov == "skip" else np.ones(total, dtype=bool)
    rows = np.flatnonzero(keep)
    y = labels[rows]
    k = len(pd.unique(y))
    out: dict[str, Any] = {
        "purity": math.nan,
        "n": int(len(rows)),
        "total": int(total),
        "coverage": float(has.mean()) if total else math.nan,
        "n_clusters": int(k),
        "method": method,
    }
    if len(rows) < max(k, 2) or k < 1:
        return out
    X = np.vstack([lk.fill(words[i]) for i in rows])  # type: ignore[misc]
    if method == "best":
        scores = [purity(y, _cluster(X, k, "agglomerative", seed, lk_, m)) for lk_, m in
                  _WEB_AGGLOMERATIVE]
        scores.append(purity(y, _cluster(X, k, "kmeans", seed, linkage, metric)))
        out["purity"] = max(scores)
    else:
        out["purity"] = purity(y, _cluster(X, k, method, seed, linkage, metric))
    return out


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
    ``"categorisation"`` (``word, category``); the loaders of :mod:`lmgeometry.io.data` give
    these columns.
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
        Benchmark frames by name (:func:`lmgeometry.io.data.load_benchmarks`); the task of
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
