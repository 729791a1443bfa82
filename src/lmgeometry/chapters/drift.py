"""Drift of embedding matrices and hidden states: the "Drift and centering" chapter (seed 004).

Biš, Podkorytov and Liu (2021), *Too Much in Common* (NAACL; seed 004), argue that the rows of a
language model's input embedding matrix W drift along a common direction -- every training step
pushes all non-target embeddings the same way ("common enemies") and rare tokens are pushed
most -- so that W looks like a narrow cone only because it is shifted; centring restores an
almost isotropic shape and improves word similarity. :mod:`lmgeometry.measures.isotropy` and its
neighbours (``centering``, ``mean_cosines``, ``shift``, ``spectra``) have the measures; this
module applies them.

:func:`analyse` is the entry point: the models' W (loaded with their tokenizers, one at a
time, by :func:`embedding_drift`) and the hidden-state stores of a corpus in, every table of
the chapter and seed 004's claims out. Its parts:

* token frequencies of a reference corpus tokenised with each model's own tokenizer
  (:func:`token_counts`, :func:`frequency_ranks`, :func:`unseen_tokens`, :func:`zipf_curve`,
  :func:`coverage`, :func:`word_counts`) for the Fig. 3 and appendix-B analogues;
* :func:`rare_token_table`: rare-token cosines by frequency (or vocabulary-id) bin, with
  intervals from a bootstrap over tokens and a Spearman trend over the bins;
* :func:`word_similarity`: Tables 2-3 on single-token benchmark pairs, with paired bootstrap
  intervals of each post-processing's change;
* :func:`hidden_state_layers`: the same isotropy measures on the hidden states of every layer,
  under each control (a decoder's first word excluded), with intervals over sentences;
* :func:`drift_claims`, :func:`hidden_claims`: seed 004's claims as :class:`Claim` records.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import (
    ChapterResult,
    control_rows,
    controls_for,
    first_token_flags,
    per_layer,
    with_blas_threads,
)
from lmgeometry.io import models
from lmgeometry.io.benchmarks import load_word_similarity
from lmgeometry.measures import centering, isotropy, mean_cosines, reference_tables, similarity
from lmgeometry.measures.shift import shift_cosine, shift_cosine_replicates
from lmgeometry.measures.spectra import norm_distribution, spectral_views, toy_sphere_shift
from lmgeometry.measures.stats import (
    bootstrap_spearman,
    extreme_over_layers,
    percentile_interval,
    spearman_rows,
)
from lmgeometry.measures.word_similarity import paired_correlations
from lmgeometry.report.claims import Claim, claims_frame
from lmgeometry.report.prose import number

__all__ = [
    "analyse",
    "coverage",
    "drift_claims",
    "embedding_drift",
    "frequency_ranks",
    "hidden_claims",
    "hidden_state_layers",
    "norm_histograms",
    "rare_token_table",
    "single_token_ids",
    "THRESHOLDS",
    "token_counts",
    "unseen_tokens",
    "unused_token_ids",
    "variant_rows",
    "VARIANTS",
    "w_tables",
    "word_counts",
    "word_similarity",
    "WORDSIM_BENCHMARKS",
    "zipf_curve",
]


#: Benchmarks of Biš et al. (2021), Table 3, in its column order.
WORDSIM_BENCHMARKS: tuple[str, ...] = tuple(reference_tables.BIS2021_TABLE3_COLUMNS.values())


#: Post-processing variants of W in Tables 2-3 (names as in ``reference_tables.BIS2021_WORDSIM``).
VARIANTS: tuple[str, ...] = ("original", "centered", "centered_scaled", "post_process")


#: The claims' thresholds: effect sizes, each with the reason the chapter states for it.
THRESHOLDS: dict[str, tuple[float, str]] = {
    "common_direction": (0.02, "the mean cosine of unit rows is about (||mu|| / mean row "
                         "norm)^2 (exactly so when norms do not depend on direction); the seed "
                         "counts every model of its Table 1 as drifted, down to RoBERTa-base's "
                         "ratio of 0.16 (a mean cosine of about 0.026): above 0.02. A mean "
                         "cosine of 0.1, the earlier rule, failed RoBERTa-base's own numbers"),
    "near_isotropic": (0.85, "the seed's 'nearly perfect isotropy' after centring, 'the only "
                       "exception' being RoBERTa-large (I(W_c) 0.64): its lowest model called "
                       "nearly isotropic is RoBERTa-base (0.87). The earlier 0.9 failed it"),
    "gap_closed": (0.5, "centring should close at least half the distance from I(W) to 1; the "
                   "seed's Table 1 closes 61% (RoBERTa-large) to 97%"),
    "rare_trend": (0.5, "a strong monotone rise over the bins (Spearman rho 0.5, Cohen's "
                   "'large' correlation), not merely a last bin above the first"),
    "norm_frequency": (-0.1, "at least a small monotone association (|rho| 0.1, Cohen's "
                       "'small'), negative: frequent tokens shorter"),
    "wordsim_gain": (0.0, "the seed reads any positive change as a gain ('consistently "
                     "improves ... except for the most isotropic BERT-cased models', counting "
                     "+0.04 and +0.24): above 0 Pearson r x 100, averaged over the benchmarks. "
                     "The earlier one point failed GPT-2-small's and RoBERTa-base's own "
                     "gains"),
    "shift_agreement": (0.05, "the measured mean cosine within 0.05 of what the mean vector "
                        "alone predicts, small next to the mean cosines a shift would have to "
                        "explain (0.1-0.7 in BERT's layers, 0.6-1.0 in GPT-2's: seed 001's "
                        "released results)"),
}


#: Word-similarity benchmarks need this many single-token pairs to enter the averages.
MIN_PAIRS = 10


def token_counts(
    tokenizer: Any, texts: Sequence[str], n_rows: int | None = None, *, batch_size: int = 2000
) -> np.ndarray:
    """How often each token id occurs when ``texts`` are tokenised (no special tokens added).

    c[t] = number of occurrences of id t in ``tokenizer(text, add_special_tokens=False)`` over
    all texts.

    Parameters
    ----------
    tokenizer
        A Hugging Face tokenizer (called on lists of strings).
    texts : sequence of str
    n_rows : int, optional
        Length of the result (the embedding matrix's rows, which may exceed the tokenizer's
        vocabulary); default ``len(tokenizer)``.
    batch_size : int

    Returns
    -------
    numpy.ndarray of int64, shape (n_rows,)
    """
    n = len(tokenizer) if n_rows is None else int(n_rows)
    counts = np.zeros(n, dtype=np.int64)
    for start in range(0, len(texts), batch_size):
        enc = tokenizer(list(texts[start : start + batch_size]), add_special_tokens=False)
        ids = np.fromiter(
            (i for seq in enc["input_ids"] for i in seq), dtype=np.int64
        )
        if ids.size and ids.max() >= n:
            raise ValueError(f"token id {int(ids.max())} beyond n_rows={n}")
        counts += np.bincount(ids, minlength=n)
    return counts


def word_counts(texts: Iterable[str]) -> np.ndarray:
    """Counts of whitespace-separated words, most frequent first (for the word-level Zipf curve).

    Returns
    -------
    numpy.ndarray of int64
        Sorted descending; one entry per distinct word (case kept).
    """
    counter: Counter[str] = Counter()
    for text in texts:
        counter.update(text.split())
    return np.sort(np.fromiter(counter.values(), dtype=np.int64))[::-1]


def frequency_ranks(counts: npt.ArrayLike, exclude: Iterable[int] = ()) -> np.ndarray:
    """Frequency rank of every token: 0 for the most frequent, -1 for unseen or excluded.

    Tokens with c[t] > 0 that are not in ``exclude`` (e.g. special tokens) are sorted by
    descending count, ties by ascending id; the rest get -1.

    Returns
    -------
    numpy.ndarray of int64, shape (len(counts),)
    """
    c = np.asarray(counts)
    keep = c > 0
    ex = np.fromiter(exclude, dtype=np.int64)
    keep[ex[(ex >= 0) & (ex < c.size)]] = False
    ids = np.flatnonzero(keep)
    order = ids[np.lexsort((ids, -c[ids]))]
    ranks = np.full(c.size, -1, dtype=np.int64)
    ranks[order] = np.arange(order.size)
    return ranks


def unseen_tokens(counts: npt.ArrayLike, exclude: Iterable[int] = ()) -> np.ndarray:
    """Ids of the tokens never counted (c[t] = 0), minus ``exclude`` (e.g. special tokens).

    These stand in for BERT's ``[unused]`` tokens of Biš et al. (2021), Fig. 3: tokens that a
    2.5M-token English corpus never produces are rare in training text too (though, unlike
    ``[unused]``, not necessarily absent from it).

    Returns
    -------
    numpy.ndarray of int64, ascending
    """
    c = np.asarray(counts)
    keep = c == 0
    ex = np.fromiter(exclude, dtype=np.int64)
    keep[ex[(ex >= 0) & (ex < c.size)]] = False
    return np.flatnonzero(keep)


def unused_token_ids(tokenizer: Any) -> np.ndarray:
    """Ids of BERT-style placeholder tokens ``[unusedN]`` (empty when the vocabulary has none).

    BERT's WordPiece vocabularies (and MPNet's, which reuses BERT-uncased's) hold 994 such
    tokens that never occur in pre-training; Biš et al. (2021), Fig. 3, use them as the
    reference set of the rare-token cosines.

    Returns
    -------
    numpy.ndarray of int64, ascending
    """
    vocab = tokenizer.get_vocab()
    pattern = re.compile(r"\[unused\d+\]")
    return np.sort(np.array([i for t, i in vocab.items() if pattern.fullmatch(t)], dtype=np.int64))


def zipf_curve(counts: npt.ArrayLike, n_points: int = 200) -> pd.DataFrame:
    """Rank-frequency points (Zipf plot) at about ``n_points`` log-spaced ranks.

    f(r) = c_(r) / sum c, with c_(1) >= c_(2) >= ... the non-zero counts; Zipf's law is
    f(r) ~ r^-s with s ~ 1 (a straight line of slope -1 on log-log axes).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1-based), ``count``, ``frequency``.
    """
    c = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    c = c[c > 0]
    if c.size == 0:
        raise ValueError("no non-zero counts")
    ranks = np.unique(np.geomspace(1, c.size, n_points).round().astype(np.int64))
    return pd.DataFrame(
        {"rank": ranks, "count": c[ranks - 1], "frequency": c[ranks - 1] / c.sum()}
    )


def coverage(counts: npt.ArrayLike, fractions: Sequence[float] = (0.3, 0.5, 0.98)) -> dict:
    """Number of most frequent tokens needed to cover each fraction of the corpus.

    k(p) = min { k : sum_{r <= k} c_(r) >= p sum c } (Biš et al. 2021, Sec. 3: 13 WordPiece
    tokens cover 30% of CNN News, 85 cover 50%, nearly 15,000 cover 98%).

    Returns
    -------
    dict
        ``{p: k(p)}`` plus ``"seen"`` (tokens with c > 0) and ``"total"`` (sum c).
    """
    c = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    cum = np.cumsum(c)
    total = int(cum[-1]) if cum.size else 0
    if total == 0:
        raise ValueError("no tokens counted")
    out: dict[Any, int] = {
        float(p): int(np.searchsorted(cum, p * total, side="left") + 1) for p in fractions
    }
    out["seen"] = int((c > 0).sum())
    out["total"] = total
    return out


def single_token_ids(tokenizer: Any, words: Iterable[str], prefix: str = "the") -> dict[str, int]:
    """Token id of every word that the tokenizer keeps as one token *after a space*.

    Each word is tokenised in the context ``prefix + " " + word`` with character offsets, and
    the pieces that overlap the word's characters are kept; a word with exactly one such piece
    (which does not also cover part of the prefix, and is not the unknown token) maps to it.
    This follows each tokenizer's leading-space convention without knowing it: byte-level BPE
    gives ``Ġword``, SentencePiece ``▁word``, WordPiece the bare ``word`` (Biš et al. 2021 keep
    the pairs without sub-word units, Sec. 5.2).

    Returns
    -------
    dict
        word -> token id, for the single-token words only.
    """
    words = list(dict.fromkeys(words))
    start = len(prefix) + 1
    enc = tokenizer(
        [f"{prefix} {w}" for w in words], add_special_tokens=False, return_offsets_mapping=True
    )
    unk = getattr(tokenizer, "unk_token_id", None)
    out: dict[str, int] = {}
    for w, ids, offsets in zip(words, enc["input_ids"], enc["offset_mapping"], strict=True):
        pieces = [(i, a, b) for i, (a, b) in zip(ids, offsets, strict=True) if b > start]
        if (
            len(pieces) == 1
            and pieces[0][0] != unk
            and pieces[0][1] >= start - 1
            and pieces[0][2] == start + len(w)
        ):
            out[w] = int(pieces[0][0])
    return out


def variant_rows(W: npt.ArrayLike, rows: npt.ArrayLike, variant: str) -> np.ndarray:
    """Selected rows of W after one of the post-processings of Biš et al. (2021), Tables 2-3.

    ``original`` (W), ``centered`` (:func:`centering.center`), ``centered_scaled``
    (:func:`centering.scaled_center`) or ``post_process`` (:func:`centering.remove_top_pcs` with
    the paper's eq. 11, ceil(d/100) components). The statistics use every row of W.

    Returns
    -------
    numpy.ndarray, shape (len(rows), width), float64
    """
    rows = np.asarray(rows, dtype=np.int64)
    if variant == "original":
        return np.asarray(np.asarray(W)[rows], dtype=np.float64)
    fns = {
        "centered": centering.center,
        "centered_scaled": centering.scaled_center,
        "post_process": centering.remove_top_pcs,
    }
    if variant not in fns:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    return np.asarray(fns[variant](W, rows=rows), dtype=np.float64)


def norm_histograms(norms: Mapping[str, npt.ArrayLike], bins: int = 80) -> pd.DataFrame:
    """Density histograms of several norm samples on one shared grid (Biš et al. Figs. 5-6).

    density_k = #{norms in bin k} / (N * bin width), bins equally spaced from 0 to the largest
    norm of all samples (the paper shows kernel density estimates; a histogram needs no
    bandwidth).

    Parameters
    ----------
    norms : mapping
        label -> 1-D array of norms.
    bins : int

    Returns
    -------
    pandas.DataFrame
        Columns ``label``, ``norm`` (bin centre), ``density``.
    """
    top = max(float(np.max(v)) for v in norms.values())
    edges = np.linspace(0.0, top if top > 0 else 1.0, bins + 1)
    centers = (edges[:-1] + edges[1:]) / 2
    frames = []
    for label, v in norms.items():
        density, _ = np.histogram(np.asarray(v), bins=edges, density=True)
        frames.append(pd.DataFrame({"label": label, "norm": centers, "density": density}))
    return pd.concat(frames, ignore_index=True)



def _frequency_groups(counts: np.ndarray, special: np.ndarray, n_bins: int
                      ) -> tuple[np.ndarray, pd.DataFrame]:
    """Rows grouped for the frequency protocol: bins of seen tokens, then R, then the rest.

    Groups 0..n_bins-1 split the tokens seen in the frequency corpus (special tokens left
    out) by rank into bins of (almost) equal size; group n_bins is R, every token the corpus
    never produces (:func:`unseen_tokens`); group n_bins + 1 holds the special tokens, so that
    the groups together cover every row of W.
    """
    ranks = frequency_ranks(counts, special.tolist())
    groups = np.full(len(counts), n_bins + 1, dtype=np.int64)
    seen = np.flatnonzero(ranks >= 0)
    rows = []
    for k, ids in enumerate(np.array_split(seen[np.argsort(ranks[seen])], n_bins)):
        groups[ids] = k
        if ids.size:
            rows.append({"bin": k, "rank_start": int(ranks[ids[0]]),
                         "rank_end": int(ranks[ids[-1]]), "n_excluded": 0})
    groups[unseen_tokens(counts, special.tolist())] = n_bins
    return groups, pd.DataFrame(rows)


def _index_groups(n_rows: int, unused: np.ndarray, special: np.ndarray, bin_size: int,
                  min_share: float) -> tuple[np.ndarray, int, pd.DataFrame]:
    """Rows grouped for the paper's protocol: bins of ``bin_size`` vocabulary ids, and R.

    R is the ``[unused]`` tokens (group ``n_id_bins``). Unlike the paper, R and the special
    tokens are left out of the bins (a bin holding R would measure R against R), and a range
    that keeps fewer than ``min_share`` of its ids (BERT's ids 0-999, nearly all ``[unused]``)
    is dropped; ``rank_start``/``rank_end`` are the first and last vocabulary id of the range.
    """
    excluded = np.zeros(n_rows, dtype=bool)
    drop = np.concatenate([unused, special])
    excluded[drop[(drop >= 0) & (drop < n_rows)]] = True
    n_bins = math.ceil(n_rows / bin_size)
    groups = np.full(n_rows, -1, dtype=np.int64)
    rows = []
    for k in range(n_bins):
        ids = np.arange(k * bin_size, min((k + 1) * bin_size, n_rows))
        keep = ids[~excluded[ids]]
        if keep.size and keep.size >= min_share * ids.size:
            groups[keep] = k
            rows.append({"bin": k, "rank_start": int(ids[0]), "rank_end": int(ids[-1]),
                         "n_excluded": int(ids.size - keep.size)})
    groups[unused] = n_bins
    return groups, n_bins + 1, pd.DataFrame(rows)


def _bin_cosines(W: np.ndarray, groups: np.ndarray, n_groups: int, reference: int,
                 info: pd.DataFrame, shift: np.ndarray | None, n_boot: int,
                 rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, float], np.ndarray]:
    """Each bin's mean cosine with R and the trend over the bins, with bootstrap intervals.

    Returns the bins table, the trend (Spearman rho of the bin order against the cosines,
    its interval over the same replicates: :func:`stats.spearman_rows`), and the mean cosine
    of all grouped rows as (sample, replicates...).
    """
    sums, counts = mean_cosines.unit_row_sums(W, groups, n_groups, shift=shift, n_boot=n_boot,
                                              rng=rng)
    bins = info["bin"].to_numpy()
    cos = mean_cosines.cross_cosines(sums, counts, reference)[:, bins]
    table = info.assign(n_rare=int(counts[0, reference]), n_tokens=counts[0, bins].astype(int),
                        mean_cosine=cos[0])
    bounds = [percentile_interval(cos[1:, j], cos[0, j]) for j in range(len(bins))]
    table["mean_cosine_lo"] = [b[0] for b in bounds] if n_boot else np.nan
    table["mean_cosine_hi"] = [b[1] for b in bounds] if n_boot else np.nan
    rho = float(spearman_rows(cos[:1])[0]) if len(bins) >= 3 else math.nan
    lo, hi = percentile_interval(spearman_rows(cos[1:]), rho) if n_boot else (math.nan,) * 2
    trend = {"rho": rho, "rho_lo": lo, "rho_hi": hi, "n_bins": len(bins)}
    total = mean_cosines.mean_cosine_of_sums(sums.sum(axis=1), counts.sum(axis=1))
    return table, trend, total


def rare_token_table(
    W: npt.ArrayLike,
    counts: npt.ArrayLike,
    tokenizer: Any,
    n_bins: int = 30,
    *,
    bin_size: int = 1000,
    min_share: float = 0.5,
    n_boot: int = 0,
    rng: np.random.Generator | int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Rare-token cosines by bin (Biš et al. 2021, Fig. 3), raw and centred W, with intervals.

    Protocol ``frequency``: tokens seen in the frequency corpus are ranked by count (special
    tokens left out) and split into ``n_bins`` bins; the reference set R is every token the
    corpus never produces, so R and the bins are disjoint. Protocol ``index`` (vocabularies
    with ``[unusedN]`` tokens, as BERT's): the paper's own setting, R = the ``[unused]``
    tokens and bins of ``bin_size`` consecutive vocabulary ids (:func:`_index_groups`).

    A bin's value is the mean cosine between R and its tokens,
    (sum_R u . sum_B u) / (|R| |B|) (:func:`mean_cosines.cross_cosines`). For the raw W each bin
    gets a 95% interval, and the trend over the bins (Spearman rho of bin order against
    cosine) one too, from a Poisson bootstrap over the tokens of R and of every bin
    (:func:`mean_cosines.unit_row_sums`; the same replicates for every bin); the centred W is
    shown without intervals.

    Returns
    -------
    bins : pandas.DataFrame
        ``protocol``, ``variant`` (``raw``/``centered``), ``bin``, ``rank_start``,
        ``rank_end``, ``n_excluded``, ``n_rare``, ``n_tokens``, ``mean_cosine``,
        ``mean_cosine_lo``, ``mean_cosine_hi``.
    trends : pandas.DataFrame
        ``protocol``, ``variant``, ``rho``, ``rho_lo``, ``rho_hi``, ``n_bins``.
    mean_cosine : ndarray
        The mean cosine between all rows of the raw W, then its ``n_boot`` replicates.
    """
    W = np.asarray(W)
    gen = np.random.default_rng(rng)
    c = np.asarray(counts)
    special = np.asarray(sorted(tokenizer.all_special_ids), dtype=np.int64)
    mu = W.mean(axis=0, dtype=np.float64)
    groups, info = _frequency_groups(c, special, n_bins)
    layouts = [("frequency", groups, n_bins + 2, info, n_bins)]
    unused = unused_token_ids(tokenizer)
    if unused.size:
        groups, n_groups, info = _index_groups(len(c), unused, special, bin_size, min_share)
        layouts.append(("index", groups, n_groups, info, n_groups - 1))
    bins, trends, total = [], [], np.array([np.nan])
    for protocol, groups, n_groups, info, ref in layouts:
        for variant, shift, boot in (("raw", None, n_boot), ("centered", mu, 0)):
            table, trend, tot = _bin_cosines(W, groups, n_groups, ref, info, shift, boot, gen)
            bins.append(table.assign(protocol=protocol, variant=variant))
            trends.append({"protocol": protocol, "variant": variant} | trend)
            if protocol == "frequency" and variant == "raw":
                total = tot
    front = ["protocol", "variant"]
    table = pd.concat(bins, ignore_index=True)
    table = table[front + [k for k in table.columns if k not in front]]
    return table, pd.DataFrame(trends), total


def word_similarity(
    W: npt.ArrayLike,
    tokenizer: Any,
    benchmarks: Sequence[str] = WORDSIM_BENCHMARKS,
    variants: Sequence[str] = VARIANTS,
    frames: Mapping[str, pd.DataFrame] | None = None,
    *,
    n_boot: int = 0,
    rng: np.random.Generator | int | None = None,
    min_pairs: int = MIN_PAIRS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Word similarity of single-token words from rows of W (Biš et al. 2021, Tables 2-3).

    For every benchmark pair whose two (lower-cased) words are single tokens after a space
    (:func:`single_token_ids`), the model score is the cosine or the inner product of the two
    rows of the (post-processed, :func:`variant_rows`) matrix; Pearson's r (x 100, the paper's
    number) and Spearman's rho with the human scores. The pair set is the same for every
    variant, and so is every bootstrap resample of it (:func:`paired_correlations`).

    The change a post-processing makes is the paper's Table 2 number: Pearson r x 100 of the
    variant minus that of W, averaged over the benchmarks with at least ``min_pairs`` pairs;
    its interval comes from resampling each benchmark's pairs (independently per benchmark,
    jointly for the variants).

    Returns
    -------
    per_benchmark : pandas.DataFrame
        One row per (benchmark, variant, score): ``benchmark``, ``variant``, ``score``
        (``cosine``/``dot``), ``pearson_x100``, ``spearman``, ``n_pairs``, ``n_total``,
        ``coverage``.
    change : pandas.DataFrame
        One row per (variant, score), variants other than ``original``: ``pearson_x100`` (the
        average), ``original_pearson_x100``, ``change_x100``, ``change_x100_lo``,
        ``change_x100_hi``, ``n_benchmarks``.
    """
    frames = {b: load_word_similarity(b) for b in benchmarks} if frames is None else frames
    gen = np.random.default_rng(rng)
    words = {str(w).lower() for b in benchmarks for c in ("word1", "word2") for w in frames[b][c]}
    ids = single_token_ids(tokenizer, sorted(words))
    rows = np.array(sorted(set(ids.values())), dtype=np.int64)
    position = {r: i for i, r in enumerate(rows)}
    M = {v: variant_rows(W, rows, v) for v in variants}
    keys = [(v, s) for v in variants for s in ("cosine", "dot")]
    out, reps = [], []
    for b in benchmarks:
        f = frames[b]
        w1, w2 = (f[c].astype(str).str.lower().map(ids) for c in ("word1", "word2"))
        ok = (w1.notna() & w2.notna()).to_numpy()
        i1 = np.array([position[int(r)] for r in w1[ok]], dtype=np.int64)
        i2 = np.array([position[int(r)] for r in w2[ok]], dtype=np.int64)
        human = f["score"].to_numpy(dtype=np.float64)[ok]
        scores = np.array([_pair_scores(M[v][i1], M[v][i2], s) for v, s in keys])
        r = (paired_correlations(human, scores, n_boot, gen) if ok.sum() >= 3
             else np.full((1 + n_boot, len(keys)), np.nan))
        for j, (v, s) in enumerate(keys):
            rho = float(stats.spearmanr(scores[j], human).statistic) if ok.sum() >= 3 \
                else math.nan
            out.append({"benchmark": b, "variant": v, "score": s, "pearson_x100": 100 * r[0, j],
                        "spearman": rho, "n_pairs": int(ok.sum()), "n_total": len(f),
                        "coverage": float(ok.mean()) if len(f) else math.nan})
        if ok.sum() >= min_pairs:
            reps.append(100 * r)
    return pd.DataFrame(out), _wordsim_change(np.array(reps), keys)


def _pair_scores(a: np.ndarray, b: np.ndarray, score: str) -> np.ndarray:
    """Inner products (``dot``) or cosines of matching rows of ``a`` and ``b``."""
    dot = np.einsum("ij,ij->i", a, b)
    if score == "dot":
        return dot
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.divide(dot, denom, out=np.zeros_like(dot), where=denom > 0)


def _wordsim_change(reps: np.ndarray, keys: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Average over benchmarks of each variant's Pearson r x 100 minus the original's."""
    rows = []
    for j, (v, s) in enumerate(keys):
        if v == "original" or reps.size == 0:
            continue
        base = keys.index(("original", s))
        mean_v, mean_o = reps[:, :, j].mean(axis=0), reps[:, :, base].mean(axis=0)
        change = mean_v - mean_o
        lo, hi = percentile_interval(change[1:], change[0]) if len(change) > 1 else (math.nan,) * 2
        rows.append({"variant": v, "score": s, "pearson_x100": mean_v[0],
                     "original_pearson_x100": mean_o[0], "change_x100": change[0],
                     "change_x100_lo": lo, "change_x100_hi": hi, "n_benchmarks": len(reps)})
    return pd.DataFrame(rows)


def embedding_drift(
    spec: str,
    texts: Sequence[str],
    *,
    point_budget: int = 2000,
    n_bins: int = 30,
    n_boot: int = 1000,
    seed: int = 0,
    device: str | None = "cpu",
) -> dict[str, Any]:
    """Load one model and compute every W-level table of the chapter (Biš et al. 2021).

    W = :func:`models.input_embeddings`; token counts of ``texts`` with the model's tokenizer;
    then :func:`w_tables`. The model is dropped before returning.

    Returns
    -------
    dict
        ``facts`` (the model's facts and caveats) and the tables of :func:`w_tables`.
    """
    loaded = models.load_model(spec, device=device)
    W = models.input_embeddings(loaded)
    counts = token_counts(loaded.tokenizer, texts, W.shape[0])
    out = w_tables(W, loaded.tokenizer, counts, point_budget=point_budget, n_bins=n_bins,
                   n_boot=n_boot, seed=seed)
    out["facts"] = loaded.facts() | {"caveats": "; ".join(loaded.caveats) or "none"}
    return out


def w_tables(W: np.ndarray, tokenizer: Any, counts: np.ndarray, *, point_budget: int = 2000,
             n_bins: int = 30, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Every number the chapter shows for one embedding matrix W, with its intervals.

    * ``statistics``: :func:`isotropy.embedding_statistics` (Table 1; intervals for I(W),
      I(W_c) and the gap centring closes), the mean cosine of the rows with its interval,
      and ``norm_count_spearman`` (rank correlation of row norm and corpus count over the
      tokens seen, Schakel & Wilson 2015) with its interval;
    * ``spectra``, ``projection`` (a seeded sample of ``point_budget`` rows on the first two
      singular vectors, before and after centring; Fig. 1), ``norms`` (Figs. 5-6);
    * ``rare``, ``rare_trends`` (:func:`rare_token_table`, Fig. 3);
    * ``wordsim``, ``wordsim_change`` (:func:`word_similarity`, Tables 2-3);
    * ``zipf``, ``coverage`` (appendix B, Sec. 3).

    Every bootstrap draws from one generator seeded with ``seed``.
    """
    gen = np.random.default_rng(seed)
    stats_ = isotropy.embedding_statistics(W, n_boot=n_boot, rng=gen)
    rare, rare_trends, mean_cos = rare_token_table(W, counts, tokenizer, n_bins, n_boot=n_boot,
                                                   rng=gen)
    lo, hi = percentile_interval(mean_cos[1:], mean_cos[0]) if n_boot else (math.nan,) * 2
    stats_.update(mean_cosine=float(mean_cos[0]), mean_cosine_lo=lo, mean_cosine_hi=hi)
    norms = norm_distribution(W)
    seen = counts > 0
    rho, lo, hi = bootstrap_spearman(norms[seen], counts[seen], n_boot, gen)
    stats_.update(norm_count_spearman=rho, norm_count_spearman_lo=lo,
                  norm_count_spearman_hi=hi)
    wordsim, change = word_similarity(W, tokenizer, n_boot=n_boot, rng=gen)
    rows = similarity.subsample(W.shape[0], point_budget, seed)
    views = spectral_views(W, rows=rows)
    k = np.arange(1, W.shape[1] + 1)
    spectra = pd.concat([pd.DataFrame({"variant": v, "component": k, "singular_value": views[key]})
                         for v, key in (("raw", "singular_values"),
                                        ("centered", "singular_values_centered"))],
                        ignore_index=True)
    n_vocab = len(tokenizer)
    tokens = tokenizer.convert_ids_to_tokens([int(i) if i < n_vocab else 0 for i in rows])
    projection = pd.DataFrame({
        "token_id": rows,
        "token": [t if i < n_vocab else "" for t, i in zip(tokens, rows, strict=True)],
        "log10_count": np.log10(counts[rows] + 1),
        "x": views["projection"][:, 0], "y": views["projection"][:, 1],
        "x_centered": views["projection_centered"][:, 0],
        "y_centered": views["projection_centered"][:, 1],
    })
    hist = norm_histograms({"raw": norms, "centered": norm_distribution(W, centered=True)})
    cover = coverage(counts)
    return {
        "statistics": stats_, "spectra": spectra, "projection": projection,
        "norms": hist.rename(columns={"label": "variant"}), "rare": rare,
        "rare_trends": rare_trends, "wordsim": wordsim, "wordsim_change": change,
        "zipf": zipf_curve(counts),
        "coverage": {"tokens_30pct": cover[0.3], "tokens_50pct": cover[0.5],
                     "tokens_98pct": cover[0.98], "seen": cover["seen"], "total": cover["total"]},
    }


def hidden_state_layers(store: Store, n_rows: int | None = 4000, seed: int = 0,
                        n_boot: int = 1000, top_share: float = 0.01) -> dict[str, pd.DataFrame]:
    """The Table 1 measures on the hidden states of every layer, each layer read once.

    A seeded sample of ``n_rows`` word rows (the same in every layer) goes through
    :func:`isotropy.embedding_statistics` (I(X) raw and after subtracting the layer's mean,
    in log space since it underflows for large norms; IsoScore, translation invariant; the
    mean cosine before and after centring; norms) and :func:`shift.shift_cosine` (the mean
    cosine that the layer's mean vector alone predicts, and the gap to the measured one), under
    every control of the store (:func:`controls_for`: a decoder's rows again without each
    sentence's first word). The mean cosine, the prediction and the gap get 95% intervals from
    a bootstrap over sentences (:func:`shift.shift_cosine_replicates`).

    Per layer, whatever the control: ``first_word_norm_ratio`` (median norm of the sampled
    first words over that of the other words: a decoder's attention sink, Xiao et al. 2023;
    Sun et al. 2024) and, among the other words, the one most common among the
    ``top_share`` longest rows (``longest_word``, its ``longest_share`` of them and its median
    norm over the rest, ``longest_norm_ratio``).

    Returns
    -------
    dict
        ``hidden``: one row per (layer, control); ``layers``: one row per layer.
    """
    rows = similarity.subsample(store.n_words, store.n_words if n_rows is None else n_rows, seed)
    words = store.words.iloc[rows]
    first = words["word_index"].to_numpy() == 0
    sentence = words["sentence_id"].to_numpy()
    text = words["text"].to_numpy()
    masks = {c: np.isin(rows, control_rows(store, c)) for c in controls_for(store)}
    gen = np.random.default_rng(seed)
    hidden, layers = [], []
    for layer in range(store.n_layers):
        X = store.layer(layer, rows, dtype=np.float64)
        layers.append({"layer": layer} | _layer_facts(X, first, text, top_share))
        for control, mask in masks.items():
            hidden.append({"layer": layer, "control": control}
                          | _control_statistics(X[mask], sentence[mask], n_boot, gen))
    return {"hidden": pd.DataFrame(hidden), "layers": pd.DataFrame(layers)}


def _layer_facts(X: np.ndarray, first: np.ndarray, text: np.ndarray, top_share: float
                 ) -> dict[str, Any]:
    """First-word norm ratio, and the word that dominates the longest other rows."""
    rest, words = X[~first], text[~first]
    k = max(1, math.ceil(top_share * len(rest)))
    top = np.argsort(-np.linalg.norm(rest, axis=1), kind="stable")[:k]
    word, n_top = Counter(words[top].tolist()).most_common(1)[0]
    return {"first_word_norm_ratio": similarity.norm_ratio(X, first),
            "n_longest": k, "longest_word": str(word), "longest_share": n_top / k,
            "longest_norm_ratio": similarity.norm_ratio(rest, words == word)}


def _control_statistics(X: np.ndarray, sentence: np.ndarray, n_boot: int,
                        gen: np.random.Generator) -> dict[str, float]:
    """The hidden-state measures of one layer under one control, with intervals."""
    st = isotropy.embedding_statistics(X)
    shift = shift_cosine(X)
    reps = shift_cosine_replicates(X, sentence, n_boot, gen)
    out = {"n_rows": len(X), "width": X.shape[1]}
    out |= {k: st[k] for k in ("log_isotropy_raw", "log_isotropy_centered", "isoscore",
                               "mean_cosine_centered", "mean_norm", "mean_vector_norm",
                               "mean_vector_ratio")}
    for key in ("mean_cosine", "shift_prediction", "shift_residual"):
        out[key] = shift[key]
        out[f"{key}_lo"], out[f"{key}_hi"] = percentile_interval(reps[key], shift[key])
    out["shift_share"] = shift["shift_share"]
    return out


#: Seed 004's own numbers or patterns, quoted beside each claim.
PUBLISHED: dict[str, str] = {
    "common_direction": "mean cosine 0.33 for RoBERTa-large; ||mu|| / mean norm 0.16-0.67 "
                        "(Table 1)",
    "near_isotropic": "I(W_c) 0.64-0.98, 0.87-0.98 without RoBERTa-large (Table 1)",
    "gap_closed": "I(W) 0.07-0.59 -> I(W_c) 0.64-0.98: 61%-97% of the gap (Table 1)",
    "rare_frequency": "cosine with BERT's [unused] tokens 0.27 (ids 2000-2999) -> 0.63 "
                      "(ids 28500-29500), rising as frequency falls (Fig. 3)",
    "norm_frequency": "frequent words have shorter vectors (Schakel & Wilson 2015; "
                      "Podkorytov et al. 2020 for BERT; Sec. 5.2)",
    "wordsim": "GPT-2 small, inner product: +6.6 centred, +7.9 scaled, +8.2 post-processed; "
               "cosine +0.2, +1.9, +3.1; BERT-base-cased centred -0.8 / -1.9 (Table 2)",
    "shift": "not studied (the seed looks at W only)",
}

_VARIANT_WORDS = {"centered": "centring", "centered_scaled": "scaled centring",
                  "post_process": "removing the top principal components (eq. 11)"}


def _claim(key: str, model: str, claim: str, statistic: str, value: float, low: float,
           high: float, direction: str, figure: str, evidence: str, *,
           published: str | None = None, control: str = "none") -> Claim:
    threshold, rule = THRESHOLDS[key]
    return Claim(seed="004", claim=claim, model=model, control=control, statistic=statistic,
                 value=value, ci_low=low, ci_high=high, threshold=threshold,
                 direction=direction, rule=rule,  # type: ignore[arg-type]
                 published=PUBLISHED[key] if published is None else published, figure=figure,
                 evidence=evidence)


def drift_claims(model: str, statistics: Mapping[str, Any], rare_trends: pd.DataFrame,
                 wordsim_change: pd.DataFrame) -> list[Claim]:
    """Seed 004's claims about one model's W, from :func:`w_tables` outputs.

    Intervals: a bootstrap over the rows (tokens) of W for the W statistics and the
    rare-token trend, over the seen tokens for the norm-frequency correlation, and over each
    benchmark's pairs for the word-similarity changes.
    """
    s = statistics
    out = [
        _claim("common_direction", model, "W's rows share a common direction",
               "mean cosine between rows of W", s["mean_cosine"], s["mean_cosine_lo"],
               s["mean_cosine_hi"], "above", "isotropy",
               f"after centring {number(s['mean_cosine_centered'], 3)} (0 by construction); "
               f"||mu|| / mean row norm {number(s['mean_vector_ratio'])}; top eigenvector of "
               f"W^T W at |cos| {number(s['top_eigvec_mean_cosine'])} with mu"),
        _claim("near_isotropic", model, "centring makes W nearly isotropic", "I(W_c)",
               s["isotropy_centered"], s["isotropy_centered_lo"], s["isotropy_centered_hi"],
               "above", "isotropy", f"I(W) {number(s['isotropy_raw'])}"),
        _claim("gap_closed", model, "centring closes most of the gap to isotropy",
               "(I(W_c) - I(W)) / (1 - I(W))", s["isotropy_gap_closed"],
               s["isotropy_gap_closed_lo"], s["isotropy_gap_closed_hi"], "above", "isotropy",
               f"I(W) {number(s['isotropy_raw'])} -> I(W_c) {number(s['isotropy_centered'])}"),
        _claim("norm_frequency", model, "frequent tokens have shorter embeddings",
               "Spearman rho of row norm with corpus count (seen tokens)",
               s["norm_count_spearman"], s["norm_count_spearman_lo"],
               s["norm_count_spearman_hi"], "below", "norms", ""),
    ]
    raw = rare_trends[rare_trends["variant"] == "raw"].set_index("protocol")
    for protocol, text in (("frequency", "tokens never seen in the frequency corpus, bins by "
                            "corpus frequency"),
                           ("index", "[unused] tokens, bins of 1000 vocabulary ids (the paper's "
                            "protocol)")):
        if protocol in raw.index:
            t = raw.loc[protocol]
            out.append(_claim(
                "rare_trend", model, "rare tokens drift furthest: cosines with the rarest "
                "tokens rise as frequency falls", f"Spearman rho of bin order with mean cosine "
                f"({text})", t["rho"], t["rho_lo"], t["rho_hi"], "above", f"rare-{protocol}",
                f"{int(t['n_bins'])} bins", published=PUBLISHED["rare_frequency"]))
    for r in wordsim_change.itertuples():
        out.append(_claim(
            "wordsim_gain", model, f"{_VARIANT_WORDS[r.variant]} improves word similarity",
            f"change of Pearson r x 100 ({'inner product' if r.score == 'dot' else 'cosine'}), "
            f"mean over {r.n_benchmarks} benchmarks", r.change_x100, r.change_x100_lo,
            r.change_x100_hi, "above", "wordsim-change",
            f"{number(r.original_pearson_x100, 1)} -> {number(r.pearson_x100, 1)}",
            published=PUBLISHED["wordsim"]))
    return out


def hidden_claims(hidden: pd.DataFrame) -> list[Claim]:
    """Beyond the seed: does a common shift account for the hidden states' mean cosine?

    Per model and control, the statistic is the largest |measured - predicted| mean cosine
    over the layers (:func:`shift.shift_cosine`), with the interval of a claim about every
    layer (:func:`stats.extreme_over_layers`) built from the per-layer intervals of the gap's
    absolute value.
    """
    out = []
    for (model, control), part in hidden.groupby(["model", "control"], sort=False):
        r, lo, hi = (part[f"shift_residual{s}"].to_numpy() for s in ("", "_lo", "_hi"))
        abs_lo = np.where(lo > 0, lo, np.where(hi < 0, -hi, 0.0))
        abs_hi = np.maximum(np.abs(lo), np.abs(hi))
        value, low, high, at = extreme_over_layers(np.abs(r), abs_lo, abs_hi, "max")
        layer = int(part["layer"].iloc[at])
        out.append(_claim(
            "shift_agreement", model, "beyond the paper: a common shift (the mean vector) "
            "accounts for the hidden states' mean cosine in every layer",
            "largest |mean cosine - mean-vector prediction| over layers", value, low, high,
            "below", "hidden-mean-cosine",
            f"largest in layer {layer}: measured {number(part['mean_cosine'].iloc[at])}, "
            f"predicted {number(part['shift_prediction'].iloc[at])}",
            published=PUBLISHED["shift"], control=control))
    return out


#: Shifts of the toy sphere of Fig. 2.
TOY_SHIFTS: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)


def _toy_tables(seed: int) -> dict[str, pd.DataFrame]:
    """Fig. 2: 500 points on a unit sphere in 3-D moved along the diagonal, and their spectra."""
    points, values = [], []
    for s in TOY_SHIFTS:
        P, sv = toy_sphere_shift(500, 3, s, seed=seed)
        points.append(pd.DataFrame({"shift": s, "x": P[:, 0], "y": P[:, 1], "z": P[:, 2]}))
        values += [{"shift": s, "singular_value": f"sigma_{i + 1}", "value": v}
                   for i, v in enumerate(sv)]
    return {"toy_points": pd.concat(points, ignore_index=True),
            "toy_singular_values": pd.DataFrame(values)}


def _w_frames(runs: Mapping[str, Mapping[str, Any]], texts: Sequence[str]
              ) -> dict[str, pd.DataFrame]:
    """The W-level tables of every model, each with a leading ``model`` column."""
    out: dict[str, pd.DataFrame] = {}
    for name in ("spectra", "projection", "norms", "rare", "rare_trends", "wordsim",
                 "wordsim_change", "zipf"):
        out[name] = pd.concat([r[name].assign(model=m) for m, r in runs.items()],
                              ignore_index=True)
        out[name] = out[name][["model"] + [c for c in out[name] if c != "model"]]
    words = zipf_curve(word_counts(texts)).assign(model="words (whitespace)")
    out["zipf"] = pd.concat([out["zipf"], words], ignore_index=True)
    for name, key in (("table1", "statistics"), ("coverage", "coverage"), ("models", "facts")):
        out[name] = pd.DataFrame([{"model": m} | dict(r[key]) for m, r in runs.items()])
    keep = ["model", "name", "kind", "n_layers", "hidden_size", "position_scheme", "caveats"]
    out["models"] = out["models"][[c for c in keep if c in out["models"]]]
    out["table1_reference"] = pd.DataFrame(
        [{"model": v["label"]} | {k: x for k, x in v.items() if k != "label"}
         for v in isotropy.BIS2021_TABLE1.values()])
    return out


def _sentences(tables: Mapping[str, pd.DataFrame], claims: pd.DataFrame) -> list[str]:
    """A few sentences on what this run shows, each read from the tables."""
    t1 = tables["table1"]
    iso = ", ".join(f"{r.model} {number(r.isotropy_raw)} -> {number(r.isotropy_centered)}"
                    for r in t1.itertuples())
    out = [f"I(W) before -> after centring: {iso}."]
    ch = tables["wordsim_change"]
    centred = ch[(ch["variant"] == "centered") & (ch["score"] == "dot")]
    if len(centred):
        parts = ", ".join(
            f"{r.model} {r.change_x100:+.1f} [{r.change_x100_lo:+.1f}, {r.change_x100_hi:+.1f}]"
            for r in centred.itertuples())
        out.append("Centring changes the inner-product word-similarity score (Pearson r x 100, "
                   f"mean over the benchmarks) by {parts} points.")
    shift = claims[claims["claim"].str.startswith("beyond the paper")]
    decoders = shift[shift["control"] != "none"]["model"].unique()
    for m in decoders:
        rows = shift[shift["model"] == m].set_index("control")
        out.append(
            f"In {m} the largest gap between the measured mean cosine and the mean vector's "
            f"prediction is {number(rows.loc['none', 'value'])} over all words and "
            f"{number(rows.loc['first word excluded', 'value'])} without each sentence's first "
            "word.")
    return out


@with_blas_threads
def analyse(
    specs: Sequence[str],
    stores: Mapping[str, Store],
    texts: Sequence[str],
    *,
    seed: int = 0,
    point_budget: int = 2000,
    hidden_rows: int | None = 4000,
    n_bins: int = 30,
    n_boot: int = 1000,
    device: str | None = "cpu",
) -> ChapterResult:
    """Seed 004 on the models' embedding matrices W and, beyond it, on their hidden states.

    Parameters
    ----------
    specs : sequence of str
        Models whose W is analysed (loaded one at a time, :func:`embedding_drift`).
    stores : mapping
        Hidden-state stores of one corpus (e.g. ``mnli_polysemy``), by model.
    texts : sequence of str
        The frequency corpus (:func:`lmgeometry.io.corpus.frequency_texts`).
    seed : int
        Seeds every sample and bootstrap.
    point_budget : int
        Rows of W in the projection figure.
    hidden_rows : int or None
        Word rows sampled per store (the same in every layer; None: all).
    n_bins : int
        Frequency bins of the rare-token figure.
    n_boot : int
        Bootstrap replicates of every interval.
    device : str, optional
        Where the models are loaded.

    Returns
    -------
    ChapterResult
        Tables ``models``, ``table1`` (+ ``table1_reference``), ``coverage``, ``spectra``,
        ``projection``, ``norms``, ``rare``, ``rare_trends``, ``wordsim``,
        ``wordsim_change``, ``zipf``, ``toy_points``, ``toy_singular_values``, ``hidden``
        (model, layer, depth, control, ...), ``hidden_layers`` (model, layer, depth, ...);
        the claims of :func:`drift_claims` and :func:`hidden_claims`; a few sentences.
    """
    runs = {spec: embedding_drift(spec, texts, point_budget=point_budget, n_bins=n_bins,
                                  n_boot=n_boot, seed=seed, device=device) for spec in specs}
    tables = _w_frames(runs, texts) | _toy_tables(seed)
    parts = {id(s): hidden_state_layers(s, hidden_rows, seed, n_boot) for s in stores.values()}
    for name, key in (("hidden", "hidden"), ("hidden_layers", "layers")):
        tables[name] = per_layer(stores.values(), lambda s, k=key: parts[id(s)][k])
    claims = [c for spec, r in runs.items()
              for c in drift_claims(spec, r["statistics"], r["rare_trends"],
                                    r["wordsim_change"])]
    facts = {spec: r["facts"] for spec, r in runs.items()} | calibration.store_facts(
        stores.values())
    frame = calibration.annotate(claims_frame(claims + hidden_claims(tables["hidden"])), facts)
    flip = first_token_flags(frame) & (frame["control"] != "none")
    frame.loc[flip, "evidence"] += "; verdict differs from all words: driven by the first word"
    return ChapterResult(tables=tables, claims=frame, sentences=_sentences(tables, frame))
