"""How contextual are the vectors? Ethayarajh's (2019) corpus-level context measures of a layer.

Ethayarajh (2019), "How contextual are contextualized word representations?" (EMNLP):
self-similarity (SelfSim, his eq. 1), intra-sentence similarity (IntraSim, eq. 2) and maximum
explainable variance (MEV, eq. 3), adjusted by the anisotropy baselines of section 3.4 (eq. 4),
for every eligible word and sampled sentence of one layer (:func:`word_measures`,
:func:`context_tables`, :func:`lowest_self_similarity`) and averaged with 95% intervals
(:func:`context_measures`), under an estimator preset (:class:`Estimators`, :data:`PRESETS`).

The same measures of one item are in :mod:`lmgeometry.measures.cosines` (SelfSim, IntraSim) and
:mod:`lmgeometry.measures.mev`, the baselines in :mod:`lmgeometry.measures.baselines`, the rows
they all read (normalised once, or streamed) in :mod:`lmgeometry.measures.unit_rows`; his
Table 1's static embeddings are in :mod:`lmgeometry.measures.static`, seed 000's token-level
measures in :mod:`lmgeometry.measures.tokens`.

The paper and the authors' code (github.com/kawine/contextual, ``analyze.py``) differ in ways
that change results. Each difference is an explicit field of :class:`Estimators`, and
:data:`PRESETS` holds two settings of them: ``"ethayarajh2019"`` (what the authors' code does)
and ``"corrected"`` (one consistent estimator throughout). The differences:

====================  =============================================  ===========================
choice                authors' code (``ethayarajh2019``)             ``corrected``
====================  =============================================  ===========================
eligible words        >= 5 *occurrences* (the paper says 5 unique    >= 5 distinct sentences
                      contexts)
SelfSim pairs         at most 1,000 ordered pairs drawn without      all ordered pairs, exactly
                      replacement from all pairs of occurrences;     (closed form), and only
                      two occurrences in the same sentence count     pairs from different
                                                                     sentences
word MEV              ``TruncatedSVD`` ratio (uncentred direction,   centred PCA
                      centred variances: no ``1/(k-1)`` floor), as
                      in the released numbers
MEV baseline          ``TruncatedSVD`` of the 1,000 pooled words     centred, on as many random
                                                                     occurrences as the word has
PC1 static vectors    ``TruncatedSVD`` ``components_[0]``:           centred PCA, signed towards
                      uncentred, signed by scikit-learn's 2019       the word's mean
                      ``svd_flip`` (largest projection positive)
cosine baseline       1,000 sentences, one random word each, then    exact mean over all pairs
                      1,000 pairs drawn *with replacement* from      of occurrences in different
                      that pool (a word can be paired with itself)   sentences
IntraSim baseline     the cosine baseline                            IntraSim of random
                                                                     pseudo-sentences of the
                                                                     same lengths
rounding              every per-word / per-sentence value rounded    none
                      to 3 decimals before averaging
====================  =============================================  ===========================

Conventions (rows normalised in float64, layers read in row chunks, zero rows: see
:mod:`lmgeometry.measures.unit_rows`):

* The word identity is the **lower-cased** ``text`` column (the authors' index was
  case-sensitive; ``Estimators.lowercase`` switches this). Rows with ``is_punct`` are left out of
  the word-level measures, as in the authors' ``index_tokens``. The population ``O`` of the
  baselines is every row given (punctuation included, as in the authors' HDF5 sentences).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.baselines import PoolScheme, _draw_pool, _pool_cosine
from lmgeometry.measures.cosines import sample_ordered_pairs
from lmgeometry.measures.mev import MevMethod, _mev_many, _mev_of
from lmgeometry.measures.similarity import unit_rows
from lmgeometry.measures.static import Orientation
from lmgeometry.measures.stats import RngLike, bootstrap_ci
from lmgeometry.measures.unit_rows import (
    LayerVectors,
    _cross_mean,
    _encode,
    _group_sq_norms,
    _group_sum,
    _mean_or_nan,
    _pairdot,
    _rng,
    _rowdot,
    _rows_by_word,
    _sq_norms_of_sums,
    _unit,
    _UnitReader,
    _Words,
)

#: The random streams of one layer's context measures, by name, in the order they are spawned
#: from the seed (``SeedSequence.spawn``): a new stream goes at the end, so that every other
#: stream, and every number drawn from it, stays the same.
CONTEXT_STREAMS = ("pool", "mev_pool", "selfsim", "mev", "sentences", "pseudo_sentences",
                   "bootstrap")
#: The bootstrap streams of :func:`context_measures`, spawned from the ``"bootstrap"`` stream.
BOOTSTRAP_STREAMS = ("selfsim", "intrasim", "intrasim_adj", "mev", "mev_adj")


def _streams(seed: RngLike, names: Sequence[str]) -> dict[str, np.random.Generator]:
    """One independent generator per name, spawned from ``seed`` in the order of ``names``."""
    return dict(zip(names, _rng(seed).spawn(len(names)), strict=True))


__all__ = [
    "context_measures",
    "context_tables",
    "ContextTables",
    "Estimators",
    "get_preset",
    "lowest_self_similarity",
    "PRESETS",
    "word_measures",
]


@dataclass(frozen=True)
class Estimators:
    """Every estimator choice behind the corpus-level context measures.

    Attributes
    ----------
    name : str
    min_count_unit : {"occurrences", "sentences"}
        What ``min_contexts`` counts. The paper: "we do not consider words that appear in less
        than 5 unique contexts"; the authors' ``index_sentence`` drops words with fewer than 5
        *occurrences* (two in one sentence count twice).
    selfsim_same_sentence : bool
        Whether two occurrences in the same sentence form a SelfSim pair. The authors' code
        enumerates all ordered pairs of occurrences, so yes; the paper's "n unique contexts"
        and the baseline (different sentences) say no.
    selfsim_max_pairs : int or None
        The authors' code averages at most 1,000 ordered pairs, drawn without replacement
        (``random.sample``) when a word has more; None averages all pairs exactly.
    mev_method : {"centered", "uncentered", "truncated_svd"}
        Each word's MEV (:func:`lmgeometry.measures.mev.truncated_svd_variance_ratio` for
        ``"truncated_svd"``). The authors' released numbers come from ``TruncatedSVD``
        (``analyze.py`` as first committed, with the data); from December 2019 their code uses
        ``sklearn.decomposition.PCA`` (centred); eq. 3 as printed: uncentred.
    baseline_scheme : {"sentence", "occurrence"}
        How the baseline pool is drawn (see :func:`anisotropy_baseline`). Authors: sentences
        first, then one word per sentence.
    baseline_n : int or None
        Pool size for the cosine baseline (authors: 1,000); None for the exact mean over all
        cross-sentence pairs.
    baseline_replace : bool
        Authors: pairs drawn with replacement from the pool (self-pairs possible).
    mev_baseline_method : {"centered", "uncentered", "truncated_svd"}
        Estimator of the fixed-pool MEV baseline (authors: ``"truncated_svd"``).
    mev_baseline_n : int
        Pool size of the fixed MEV baseline (authors: the same 1,000-word pool as the cosine
        baseline).
    mev_baseline_matched : bool
        If True, each word's MEV is adjusted by the MEV (the word's ``mev_method``) of as
        many occurrences as the word has, drawn uniformly without replacement from all rows of
        the layer, afresh per word, instead of by the fixed pool. This removes the dependence
        of MEV on the number of rows (``k`` centred rows have MEV >= ``1 / (k - 1)``).
    intra_baseline : {"pairwise", "matched"}
        What IntraSim is adjusted by. ``"pairwise"`` (paper and code): the cosine baseline,
        although IntraSim is a cosine to a *mean*, which is larger than a pairwise cosine even
        for random vectors (about ``1 / sqrt(n)`` for ``n`` isotropic ones). ``"matched"``:
        the IntraSim of a pseudo-sentence of the same length made of random occurrences (a
        random partition of all rows), per sentence.
    round_decimals : int or None
        The authors round every per-word SelfSim, per-word MEV (also capped at 1) and
        per-sentence IntraSim, and each baseline, to 3 decimals before averaging.
    pc1_centered : bool
        PC1 static embeddings (:func:`lmgeometry.measures.static.static_embeddings`): centre
        each word's occurrences first (``PCA``) or not (the authors' ``TruncatedSVD``).
    pc1_orientation : {"svd_flip", "mean"}
        The sign of each PC1 vector: scikit-learn's 2019 ``svd_flip`` (the authors' vectors:
        the largest-magnitude projection of the decomposed rows positive) or towards the
        word's mean.
    lowercase : bool
        Word identity is the lower-cased ``text`` (both presets). The authors' index was
        case-sensitive; the shared corpus defines words by lower-cased text.
    exclude_punct : bool
        Leave ``is_punct`` rows out of SelfSim, MEV and static embeddings (both presets, as the
        authors' ``index_tokens``); they stay in IntraSim and in the baselines.

    Not modelled, documented here: the authors skip layer 0 for MEV, use the same 1,000
    sentences for IntraSim as for the baselines (the paper's Figure 3 says 500 sentences; here
    ``n_intra_sentences`` draws them separately), and index GPT-2 words by spaCy token position
    even where GPT-2 split a word into several pieces.
    """

    name: str
    min_count_unit: Literal["occurrences", "sentences"]
    selfsim_same_sentence: bool
    selfsim_max_pairs: int | None
    mev_method: MevMethod
    baseline_scheme: PoolScheme
    baseline_n: int | None
    baseline_replace: bool
    mev_baseline_method: MevMethod
    mev_baseline_n: int
    mev_baseline_matched: bool
    intra_baseline: Literal["pairwise", "matched"]
    round_decimals: int | None
    pc1_centered: bool = True
    pc1_orientation: Orientation = "mean"
    lowercase: bool = True
    exclude_punct: bool = True



PRESETS: dict[str, Estimators] = {
    "ethayarajh2019": Estimators(
        name="ethayarajh2019",
        min_count_unit="occurrences",
        selfsim_same_sentence=True,
        selfsim_max_pairs=1000,
        mev_method="truncated_svd",
        baseline_scheme="sentence",
        baseline_n=1000,
        baseline_replace=True,
        mev_baseline_method="truncated_svd",
        mev_baseline_n=1000,
        mev_baseline_matched=False,
        intra_baseline="pairwise",
        round_decimals=3,
        pc1_centered=False,
        pc1_orientation="svd_flip",
    ),
    "corrected": Estimators(
        name="corrected",
        min_count_unit="sentences",
        selfsim_same_sentence=False,
        selfsim_max_pairs=None,
        mev_method="centered",
        baseline_scheme="occurrence",
        baseline_n=None,
        baseline_replace=False,
        mev_baseline_method="centered",
        mev_baseline_n=1000,
        mev_baseline_matched=True,
        intra_baseline="matched",
        round_decimals=None,
        pc1_centered=True,
        pc1_orientation="mean",
    ),
}



def get_preset(preset: str | Estimators) -> Estimators:
    """Look up a preset by name (``"ethayarajh2019"`` or ``"corrected"``) or pass one through."""
    if isinstance(preset, Estimators):
        return preset
    try:
        return PRESETS[preset]
    except KeyError:
        raise ValueError(f"unknown preset {preset!r}; choose from {sorted(PRESETS)}") from None



def _round(x: np.ndarray | float, est: Estimators) -> np.ndarray | float:
    if est.round_decimals is None:
        return x
    return np.round(x, est.round_decimals)



def _selfsim_many(
    U: np.ndarray,
    nz: np.ndarray,
    enc: _Words,
    groups: list[np.ndarray],
    eligible: np.ndarray,
    est: Estimators,
    rng: np.random.Generator,
) -> np.ndarray:
    """Per-word SelfSim for the eligible word codes (exact closed form or sampled pairs)."""
    n_words = len(enc.vocab)
    c = np.bincount(enc.word[enc.word >= 0], weights=nz[enc.word >= 0], minlength=n_words)
    s2 = _sq_norms_of_sums(U, enc.word, n_words)
    if est.selfsim_same_sentence:
        num, den = s2 - c, c * c - c
        admissible = enc.n_occ * (enc.n_occ - 1)
    else:
        n_ws = len(enc.ws_word)
        t2 = np.bincount(
            enc.ws_word, weights=_group_sq_norms(U, nz, enc.ws, n_ws), minlength=n_words
        )
        cw = np.bincount(enc.ws[enc.ws >= 0], weights=nz[enc.ws >= 0], minlength=n_ws)
        occ_ws = np.bincount(enc.ws[enc.ws >= 0], minlength=n_ws)
        num = s2 - t2
        den = c * c - np.bincount(enc.ws_word, weights=cw * cw, minlength=n_words)
        admissible = enc.n_occ**2 - np.bincount(
            enc.ws_word, weights=occ_ws.astype(np.float64) ** 2, minlength=n_words
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        exact = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    out = np.full(n_words, np.nan)
    out[eligible] = exact[eligible]
    if est.selfsim_max_pairs is not None:
        for w in np.flatnonzero(eligible & (admissible > est.selfsim_max_pairs)):
            rows = groups[w]
            sid = None if est.selfsim_same_sentence else enc.sent[rows]
            i, j = sample_ordered_pairs(len(rows), est.selfsim_max_pairs, rng, sentence_ids=sid)
            a, b = rows[i], rows[j]
            ok = nz[a] & nz[b]
            out[w] = _mean_or_nan(_pairdot(U, a[ok], b[ok]))
    return out



def _word_measures_from(
    U: np.ndarray,
    norms: np.ndarray,
    enc: _Words,
    est: Estimators,
    min_contexts: int,
    measures: Sequence[str],
    rng_selfsim: np.random.Generator,
    rng_mev: np.random.Generator,
) -> pd.DataFrame:
    counts = enc.n_occ if est.min_count_unit == "occurrences" else enc.n_sent
    if est.min_count_unit not in ("occurrences", "sentences"):
        raise ValueError(f"unknown min_count_unit {est.min_count_unit!r}")
    eligible = counts >= min_contexts
    codes = np.flatnonzero(eligible)
    groups = _rows_by_word(enc.word, len(enc.vocab))
    table = pd.DataFrame(
        {
            "word": enc.vocab[codes],
            "n_occurrences": enc.n_occ[codes],
            "n_sentences": enc.n_sent[codes],
        }
    )
    unknown = set(measures) - {"selfsim", "mev"}
    if unknown:
        raise ValueError(f"unknown measures {sorted(unknown)}")
    if "selfsim" in measures:
        ss = _selfsim_many(U, norms > 0, enc, groups, eligible, est, rng_selfsim)
        table["selfsim"] = _round(ss[codes], est)
    if "mev" in measures:
        sel = [groups[w] for w in codes]
        table["mev"] = _round(_mev_many(U, norms, sel, est.mev_method), est)
        if est.mev_baseline_matched:
            N = len(U)
            rand = [np.sort(rng_mev.choice(N, size=len(g), replace=False)) for g in sel]
            table["mev_baseline"] = _round(_mev_many(U, norms, rand, est.mev_method), est)
    return table



@float_arrays("layer_vectors")
def word_measures(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    preset: str | Estimators = "corrected",
    seed: RngLike = 0,
    *,
    min_contexts: int = 5,
    measures: Sequence[str] = ("selfsim", "mev"),
) -> pd.DataFrame:
    """Per-word SelfSim (eq. 1) and MEV (eq. 3) of one layer, under an estimator preset.

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d), or its :class:`UnitRows`
        One row per row of ``words`` (e.g. ``Store.layer(i)``).
    words : DataFrame
        Columns ``sentence_id``, ``text`` and (optionally) ``is_punct``.
    preset : str or Estimators
        See :data:`PRESETS`.
    seed : int, Generator or None
        Random source for sampled pairs and matched baselines.
    min_contexts : int
        Keep words with at least this many occurrences or distinct sentences (per
        ``preset.min_count_unit``).
    measures : sequence of {"selfsim", "mev"}

    Returns
    -------
    DataFrame
        One row per eligible word: ``word``, ``n_occurrences``, ``n_sentences``, ``selfsim``,
        ``mev`` and, for presets with ``mev_baseline_matched``, ``mev_baseline`` (the MEV of
        as many random occurrences).
    """
    est = get_preset(preset)
    U, norms = _unit(layer_vectors)
    enc = _encode(words, len(U), est.lowercase, est.exclude_punct)
    r = _streams(seed, ("selfsim", "mev"))
    return _word_measures_from(U, norms, enc, est, min_contexts, measures, r["selfsim"],
                               r["mev"])



def _intra_many(
    U: np.ndarray, norms: np.ndarray, members: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """IntraSim (eq. 2) of every group of rows ``members`` labelled ``group`` (0..n_groups-1).

    The members are read at once from an in-memory layer, ``chunk_rows`` at a time (twice)
    from a streamed one.
    """
    nm = norms[members]
    top = np.zeros(n_groups)
    np.maximum.at(top, group, nm)
    w = np.divide(nm, top[group], out=np.zeros_like(nm), where=top[group] > 0)
    streamed = isinstance(U, _UnitReader)
    Um = None if streamed else U[members]
    step = U.chunk_rows if streamed else max(len(members), 1)
    parts = [slice(start, start + step) for start in range(0, len(members), step)]

    def read(part: slice) -> np.ndarray:
        return U[members[part]] if Um is None else Um[part]

    M = np.zeros((n_groups, U.shape[1]))  # direction of each raw sum
    for p in parts:
        present, local = np.unique(group[p], return_inverse=True)
        M[present] += _group_sum(read(p), local, len(present), weights=w[p])
    Mu, mn = unit_rows(M)
    cos = np.concatenate([_rowdot(read(p), Mu, group[p]) for p in parts] or [np.zeros(0)])
    ok = nm > 0
    s = np.bincount(group[ok], weights=cos[ok], minlength=n_groups)
    c = np.bincount(group[ok], minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((c > 0) & (mn > 0), s / np.maximum(c, 1), np.nan)



def _sentence_table_from(
    U: np.ndarray,
    norms: np.ndarray,
    sent: np.ndarray,
    est: Estimators,
    n_sentences: int | None,
    rng_pick: np.random.Generator,
    rng_matched: np.random.Generator,
) -> pd.DataFrame:
    counts = np.bincount(sent)
    candidates = np.flatnonzero(counts >= 2)
    if n_sentences is not None and n_sentences < len(candidates):
        candidates = np.sort(rng_pick.choice(candidates, size=n_sentences, replace=False))
    remap = np.full(len(counts), -1)
    remap[candidates] = np.arange(len(candidates))
    members = np.flatnonzero(remap[sent] >= 0)
    group = remap[sent[members]]
    table = pd.DataFrame({"sentence": candidates, "n_words": counts[candidates]})
    table["intrasim"] = _round(_intra_many(U, norms, members, group, len(candidates)), est)
    if est.intra_baseline == "matched":
        lengths = counts[candidates]
        perm = rng_matched.permutation(len(U))[: int(lengths.sum())]
        pseudo = np.repeat(np.arange(len(candidates)), lengths)
        table["intra_baseline"] = _round(_intra_many(U, norms, perm, pseudo, len(candidates)), est)
    elif est.intra_baseline != "pairwise":
        raise ValueError(f"unknown intra_baseline {est.intra_baseline!r}")
    return table



@float_arrays("layer_vectors")
def context_measures(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    preset: str | Estimators = "corrected",
    seed: RngLike = 0,
    *,
    min_contexts: int = 5,
    n_intra_sentences: int | None = 500,
    n_boot: int = 1000,
    standardise: bool = False,
) -> dict[str, float | int | str]:
    """Ethayarajh's (2019) corpus-level context measures of one layer, raw and adjusted.

    * ``baseline_cosine``: the cosine anisotropy baseline (eq. 4; :func:`anisotropy_baseline`).
    * ``mev_baseline``: MEV of a fixed pool of ``mev_baseline_n`` random occurrences
      (:func:`mev_baseline`).
    * ``selfsim``: mean over eligible words (``min_contexts``) of SelfSim (eq. 1);
      ``selfsim_adj = selfsim - baseline_cosine``.
    * ``intrasim``: mean over ``n_intra_sentences`` random sentences with at least two words
      (None: all) of IntraSim (eq. 2); ``intrasim_adj = intrasim - intrasim_baseline`` where
      ``intrasim_baseline`` is the cosine baseline (``"pairwise"``) or the mean IntraSim of
      length-matched random pseudo-sentences (``"matched"``, adjusted per sentence).
    * ``mev``: mean over eligible words of MEV (eq. 3); ``mev_adj = mev - mev_baseline_used``,
      where the baseline is the fixed pool or, per word, a size-matched random draw.

    Each mean comes with a 95% percentile bootstrap interval (``*_lo``, ``*_hi``) over words or
    sentences (:func:`bootstrap_ci`). Where a single baseline is subtracted, the adjusted interval
    is the raw one shifted (the baseline's own sampling error is not included; in the
    ``corrected`` preset the cosine baseline is exact). Where a baseline is matched per item,
    the per-item differences are bootstrapped.

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d), or its :class:`UnitRows`
        One layer, one row per row of ``words``.
    words : DataFrame
        Columns ``sentence_id``, ``text``, optionally ``is_punct`` (see the module docstring
        for word identity).
    preset : str or Estimators
        ``"ethayarajh2019"``, ``"corrected"`` or a custom :class:`Estimators`.
    seed : int, Generator or None
        Independent child streams are spawned for each random component.
    min_contexts : int
        Eligibility threshold for SelfSim and MEV (the paper: 5).
    n_intra_sentences : int or None
        Sentences for IntraSim (the paper: 500; the authors' code: 1,000).
    n_boot : int
        Bootstrap replicates.
    standardise : bool
        Every measure on standardised dimensions: each dimension z-scored over the layer's
        rows, ``(x_k - mu_k) / sigma_k``, before the rows are normalised (Timkey & van
        Schijndel 2021; :func:`lmgeometry.measures.unit_rows.dimension_moments`). Needs the
        raw rows (or ``UnitRows.of(X, standardise=True)``).

    Returns
    -------
    dict
        ``preset``, ``n_words``, ``n_sentences``, the baselines, and for each of ``selfsim``,
        ``intrasim``, ``mev`` the raw and ``_adj`` means with ``_lo`` / ``_hi`` bounds.
    """
    est = get_preset(preset)
    t = context_tables(layer_vectors, words, est, seed, min_contexts=min_contexts,
                       n_intra_sentences=n_intra_sentences, standardise=standardise)
    boots = _streams(_streams(seed, CONTEXT_STREAMS)["bootstrap"], BOOTSTRAP_STREAMS)
    out: dict[str, float | int | str] = {
        "preset": est.name,
        "n_words": len(t.words),
        "n_sentences": len(t.sentences),
        "baseline_cosine": t.baseline_cosine,
        "mev_baseline": t.mev_baseline,
    }
    _add_context_intervals(out, t.words, t.sentences, est, t.baseline_cosine, t.mev_baseline,
                           n_boot, boots)
    return out



@dataclass(frozen=True)
class ContextTables:
    """The per-word and per-sentence values behind :func:`context_measures` (one layer).

    Attributes
    ----------
    preset : str
        The estimator preset's name.
    baseline_cosine : float
        The cosine anisotropy baseline under the preset's estimator (eq. 4).
    mev_baseline : float
        MEV of the preset's fixed pool of random occurrences.
    intrasim_baseline : float
        What IntraSim is adjusted by: the cosine baseline (``"pairwise"``) or the mean IntraSim
        of the length-matched random pseudo-sentences (``"matched"``).
    words : DataFrame
        One row per eligible word (:func:`word_measures`: ``word``, ``n_occurrences``,
        ``n_sentences``, ``selfsim``, ``mev`` and, for matched presets, ``mev_baseline``) plus
        ``selfsim_adj`` (SelfSim minus the cosine baseline) and ``mev_adj`` (MEV minus the
        word's matched baseline, or minus the fixed pool's).
    sentences : DataFrame
        One row per sampled sentence: ``sentence`` (its code), ``n_words``, ``intrasim``,
        ``intra_baseline`` (matched presets) and ``intrasim_adj``.
    """

    preset: str
    baseline_cosine: float
    mev_baseline: float
    intrasim_baseline: float
    words: pd.DataFrame
    sentences: pd.DataFrame



@float_arrays("layer_vectors")
def context_tables(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    preset: str | Estimators = "corrected",
    seed: RngLike = 0,
    *,
    min_contexts: int = 5,
    n_intra_sentences: int | None = 500,
    standardise: bool = False,
) -> ContextTables:
    """The per-word and per-sentence context measures of one layer, raw and adjusted.

    What :func:`context_measures` averages, kept item by item so that a caller can bootstrap
    the items jointly over layers (a trend over depth, an extreme over layers). Same arguments
    and the same random streams as :func:`context_measures`, so the numbers agree with it.

    Returns
    -------
    ContextTables
    """
    est = get_preset(preset)
    r = _streams(seed, CONTEXT_STREAMS)
    U, norms = _unit(layer_vectors, standardise)
    enc = _encode(words, len(U), est.lowercase, est.exclude_punct)
    base, mev_base = _context_baselines(U, norms, enc.sent, est, r["pool"], r["mev_pool"])
    wt = _word_measures_from(U, norms, enc, est, min_contexts, ("selfsim", "mev"),
                             r["selfsim"], r["mev"])
    st = _sentence_table_from(U, norms, enc.sent, est, n_intra_sentences, r["sentences"],
                              r["pseudo_sentences"])
    wt["selfsim_adj"] = wt["selfsim"] - base
    wt["mev_adj"] = wt["mev"] - (wt["mev_baseline"] if est.mev_baseline_matched else mev_base)
    if est.intra_baseline == "matched":
        st["intrasim_adj"] = st["intrasim"] - st["intra_baseline"]
        intra_base = _mean_or_nan(st["intra_baseline"].dropna().to_numpy())
    else:
        st["intrasim_adj"] = st["intrasim"] - base
        intra_base = base
    return ContextTables(est.name, base, mev_base, intra_base, wt, st)



def _context_baselines(
    U: np.ndarray,
    norms: np.ndarray,
    sent: np.ndarray,
    est: Estimators,
    r_pool: np.random.Generator,
    r_mevpool: np.random.Generator,
) -> tuple[float, float]:
    """The cosine anisotropy baseline and the pooled MEV baseline of :func:`context_measures`."""
    nz = norms > 0
    pool = None
    if est.baseline_n is None:
        base = _cross_mean(U, nz, sent)
    else:
        pool = _draw_pool(sent, est.baseline_n, est.baseline_scheme, r_pool)
        base = _pool_cosine(U, nz, sent, pool, est.baseline_replace, None, r_pool)
    base = float(_round(base, est))
    if pool is None or est.mev_baseline_n != est.baseline_n:
        pool = _draw_pool(sent, est.mev_baseline_n, est.baseline_scheme, r_mevpool)
    pool = np.sort(pool)
    mev_base = float(_round(_mev_of(U[pool] * norms[pool, None], est.mev_baseline_method), est))
    return base, mev_base



def _add_context_intervals(
    out: dict[str, float | int | str],
    wt: pd.DataFrame,
    st: pd.DataFrame,
    est: Estimators,
    base: float,
    mev_base: float,
    n_boot: int,
    boots: dict[str, np.random.Generator],
) -> None:
    """Add the raw and adjusted means with bootstrap bounds of :func:`context_measures` to out."""

    def put(name: str, values: np.ndarray, g: np.random.Generator) -> None:
        mean, lo, hi = bootstrap_ci(values, n_boot, g)
        out[name], out[name + "_lo"], out[name + "_hi"] = mean, lo, hi

    def shifted(name: str, by: float) -> None:
        for suffix in ("", "_lo", "_hi"):
            out[name + "_adj" + suffix] = float(out[name + suffix]) - by

    put("selfsim", wt["selfsim"].to_numpy(), boots["selfsim"])
    shifted("selfsim", base)

    put("intrasim", st["intrasim"].to_numpy(), boots["intrasim"])
    if est.intra_baseline == "matched":
        out["intrasim_baseline"] = _mean_or_nan(st["intra_baseline"].dropna().to_numpy())
        put("intrasim_adj", (st["intrasim"] - st["intra_baseline"]).to_numpy(),
            boots["intrasim_adj"])
    else:
        out["intrasim_baseline"] = base
        shifted("intrasim", base)

    put("mev", wt["mev"].to_numpy(), boots["mev"])
    if est.mev_baseline_matched:
        out["mev_baseline_used"] = _mean_or_nan(wt["mev_baseline"].dropna().to_numpy())
        put("mev_adj", (wt["mev"] - wt["mev_baseline"]).to_numpy(), boots["mev_adj"])
    else:
        out["mev_baseline_used"] = mev_base
        shifted("mev", mev_base)



def lowest_self_similarity(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    n: int = 10,
    *,
    preset: str | Estimators = "corrected",
    seed: RngLike = 0,
    min_contexts: int = 5,
) -> pd.DataFrame:
    """The ``n`` eligible words with the lowest SelfSim in one layer (Ethayarajh 2019, 4.2).

    The paper finds stopwords ("and", "of", "the", "to") among the least self-similar words.

    Returns
    -------
    DataFrame
        ``word``, ``n_occurrences``, ``n_sentences``, ``selfsim``, sorted ascending by SelfSim
        (ties by word).
    """
    table = word_measures(
        layer_vectors, words, preset, seed, min_contexts=min_contexts, measures=("selfsim",)
    )
    table = table.dropna(subset=["selfsim"]).sort_values(["selfsim", "word"], kind="stable")
    return table.head(n).reset_index(drop=True)
