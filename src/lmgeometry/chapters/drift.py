"""Drift of embedding matrices and hidden states: the tables of the "Drift and centering" chapter.

Biš, Podkorytov and Liu (2021), *Too Much in Common* (NAACL; seed 004), argue that the rows of a
language model's input embedding matrix W drift along a common direction -- every training step
pushes all non-target embeddings the same way ("common enemies") and rare tokens are pushed
most -- so that W looks like a narrow cone only because it is shifted; centring restores an
almost isotropic shape. :mod:`lmgeometry.measures.isotropy` has the measures; this module produces
the per-model tables of the chapter:

* token frequencies of a reference corpus tokenised with the model's own tokenizer
  (:func:`frequency_texts`, :func:`token_counts`, :func:`frequency_ranks`, :func:`zipf_curve`,
  :func:`coverage`, :func:`word_counts`) for the Fig. 3 and appendix-B analogues;
* single-token word lookups and the word-similarity table of Tables 2-3
  (:func:`single_token_ids`, :func:`word_similarity`);
* the same isotropy measures on the contextual hidden states of every layer
  (:func:`hidden_state_isotropy`);
* histograms for Figs. 5-6 (:func:`norm_histograms`) and :func:`findings`, the chapter's
  sentences generated from the numbers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from lmgeometry.io import data, models
from lmgeometry.measures import isotropy, similarity, wordbench
from lmgeometry.measures.isotropy import shift_cosine
from lmgeometry.report.prose import layer_ranges, number, span

__all__ = [
    "embedding_matrix_drift",
    "bin_trend",
    "coverage",
    "findings",
    "first_word_mask",
    "frequency_ranks",
    "hidden_state_isotropy",
    "longest_words",
    "ModelDrift",
    "norm_count_spearman",
    "norm_histograms",
    "rare_token_table",
    "single_token_ids",
    "SUBSETS",
    "token_counts",
    "unseen_tokens",
    "unused_token_ids",
    "variant_rows",
    "VARIANTS",
    "word_counts",
    "word_similarity",
    "WORDSIM_BENCHMARKS",
    "zipf_curve",
]


#: Benchmarks of Biš et al. (2021), Table 3, in its column order.
WORDSIM_BENCHMARKS: tuple[str, ...] = tuple(wordbench.BIS2021_TABLE3_COLUMNS.values())


#: Post-processing variants of W in Tables 2-3 (names as in ``wordbench.BIS2021_WORDSIM``).
VARIANTS: tuple[str, ...] = ("original", "centered", "centered_scaled", "post_process")


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


def _index_bins(
    M: np.ndarray, rare: np.ndarray, exclude: np.ndarray, bin_size: int, min_share: float
) -> pd.DataFrame:
    """Rare-token cosines for bins of ``bin_size`` consecutive vocabulary ids, ``exclude`` left out.

    Each id range [k b, (k + 1) b) keeps its ids that are not in ``exclude``; a range where fewer
    than ``min_share`` of the ids remain is skipped. The value of a bin is
    :func:`isotropy.rare_token_cosines` with R = ``rare`` and the kept ids as one bin.
    """
    V = M.shape[0]
    excluded = np.zeros(V, dtype=bool)
    excluded[exclude[(exclude >= 0) & (exclude < V)]] = True
    rows = []
    for k, start in enumerate(range(0, V, bin_size)):
        ids = np.arange(start, min(start + bin_size, V))
        keep = ids[~excluded[ids]]
        if keep.size == 0 or keep.size < min_share * ids.size:
            continue
        ranks = np.full(V, -1, dtype=np.int64)
        ranks[keep] = keep
        t = isotropy.rare_token_cosines(M, ranks, 1, rare=rare).iloc[0]
        rows.append(
            {
                "bin": k,
                "rank_start": int(ids[0]),
                "rank_end": int(ids[-1]),
                "n_tokens": int(t["n_tokens"]),
                "n_excluded": int(ids.size - keep.size),
                "mean_cosine": float(t["mean_cosine"]),
            }
        )
    return pd.DataFrame(rows)


def rare_token_table(
    W: npt.ArrayLike,
    counts: npt.ArrayLike,
    tokenizer: Any,
    n_bins: int = 30,
    *,
    bin_size: int = 1000,
    min_share: float = 0.5,
) -> pd.DataFrame:
    """Rare-token cosines by frequency bin (Biš et al. 2021, Fig. 3), raw and centred W.

    Protocol ``frequency``: tokens seen in the frequency corpus are ranked by count
    (:func:`frequency_ranks`, special tokens left out) and split into ``n_bins`` bins; the
    reference set R is every token the corpus never produces (:func:`unseen_tokens`), so R and
    the bins are disjoint. ``rank_start``/``rank_end`` are frequency ranks (0 = most frequent).
    Protocol ``index`` (only for vocabularies with ``[unusedN]`` tokens, as BERT's): the paper's
    own setting, R = the ``[unused]`` tokens and bins of ``bin_size`` consecutive vocabulary
    ids; ``rank_start``/``rank_end`` are then the first and last *vocabulary id* of the range.
    Unlike the paper, the tokens of R and the special tokens are left out of the bins (a bin
    holding R itself would measure R against R), and a range where fewer than ``min_share`` of
    the ids remain (in BERT's vocabulary, ids 0-999, nearly all ``[unused]``) is dropped;
    ``n_excluded`` counts the ids left out of each bin. Each bin's value is the mean cosine
    between R and the bin's tokens (:func:`isotropy.rare_token_cosines`), for W and for
    :func:`isotropy.center` (W).

    Returns
    -------
    pandas.DataFrame
        Columns ``protocol``, ``variant`` (``raw``/``centered``), ``n_rare``, ``bin``,
        ``rank_start``, ``rank_end``, ``n_tokens``, ``n_excluded`` (0 for ``frequency``),
        ``mean_cosine``.
    """
    W = np.asarray(W)
    special = np.asarray(list(tokenizer.all_special_ids), dtype=np.int64)
    unused = unused_token_ids(tokenizer)
    rare_freq = unseen_tokens(counts, special.tolist())
    ranks = frequency_ranks(counts, special.tolist())
    frames = []
    for variant, M in (("raw", W), ("centered", isotropy.center(W))):
        tables = []
        if rare_freq.size:
            t = isotropy.rare_token_cosines(M, ranks, n_bins, rare=rare_freq)
            t.insert(4, "n_excluded", 0)
            tables.append(("frequency", int(rare_freq.size), t))
        if unused.size:
            t = _index_bins(M, unused, np.concatenate([unused, special]), bin_size, min_share)
            tables.append(("index", int(unused.size), t))
        for protocol, n_rare, t in tables:
            t.insert(0, "n_rare", n_rare)
            t.insert(0, "variant", variant)
            t.insert(0, "protocol", protocol)
            frames.append(t)
    return pd.concat(frames, ignore_index=True)


def bin_trend(table: pd.DataFrame, x: str = "bin", y: str = "mean_cosine") -> dict[str, Any]:
    """Monotone trend of a binned curve: Spearman's rho of bin order against value.

    rho = Pearson correlation of the ranks of ``x`` and ``y`` over all bins (Spearman 1904;
    ``scipy.stats.spearmanr``), with its two-sided p-value. The chapter calls the curve rising
    (falling) when rho > 0 (< 0) and p < 0.05, and without a monotone trend otherwise, rather
    than comparing the first bin with the last.

    Returns
    -------
    dict
        ``rho``, ``p``, ``n_bins``, ``direction`` (``"rising"``, ``"falling"`` or
        ``"no monotone trend"``).
    """
    t = table.dropna(subset=[y])
    if len(t) < 3:
        return {"rho": math.nan, "p": math.nan, "n_bins": len(t), "direction": "too few bins"}
    r = stats.spearmanr(t[x].to_numpy(), t[y].to_numpy())
    rho, p = float(r.statistic), float(r.pvalue)
    direction = "no monotone trend"
    if p < 0.05 and rho > 0:
        direction = "rising"
    elif p < 0.05 and rho < 0:
        direction = "falling"
    return {"rho": rho, "p": p, "n_bins": len(t), "direction": direction}


def norm_count_spearman(norms: npt.ArrayLike, counts: npt.ArrayLike) -> float:
    """Spearman correlation between a token's embedding norm and its corpus count (seen tokens).

    Schakel & Wilson (2015) and Podkorytov et al. (2020), cited by Biš et al. (2021, Sec. 5.2),
    found that frequent words have shorter vectors: a negative value here.
    """
    c = np.asarray(counts)
    seen = c > 0
    return float(stats.spearmanr(np.asarray(norms)[seen], c[seen]).statistic)


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

    ``original`` (W), ``centered`` (:func:`isotropy.center`), ``centered_scaled``
    (:func:`isotropy.scaled_center`) or ``post_process`` (:func:`isotropy.remove_top_pcs` with
    the paper's eq. 11, ceil(d/100) components). The statistics use every row of W.

    Returns
    -------
    numpy.ndarray, shape (len(rows), width), float64
    """
    rows = np.asarray(rows, dtype=np.int64)
    if variant == "original":
        return np.asarray(np.asarray(W)[rows], dtype=np.float64)
    fns = {
        "centered": isotropy.center,
        "centered_scaled": isotropy.scaled_center,
        "post_process": isotropy.remove_top_pcs,
    }
    if variant not in fns:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    return np.asarray(fns[variant](W, rows=rows), dtype=np.float64)


def word_similarity(
    W: npt.ArrayLike,
    tokenizer: Any,
    benchmarks: Sequence[str] = WORDSIM_BENCHMARKS,
    variants: Sequence[str] = VARIANTS,
    frames: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Word similarity of single-token words from rows of W (Biš et al. 2021, Tables 2-3).

    For every benchmark pair whose two (lower-cased) words are single tokens after a space
    (:func:`single_token_ids`), the model score is the cosine or the inner product of the two
    rows of the (post-processed, :func:`variant_rows`) matrix; Pearson's r (x 100, the paper's
    number) and Spearman's rho with the human scores come from
    :func:`wordbench.evaluate_similarity`. The pair set is the same for every variant.

    Parameters
    ----------
    W : array_like, shape (vocab, width)
    tokenizer
    benchmarks : sequence of str
        Names for :func:`data.load_word_similarity`.
    variants : sequence of str
    frames : mapping, optional
        Benchmark frames by name (default: loaded).

    Returns
    -------
    pandas.DataFrame
        One row per (benchmark, variant, score): ``benchmark``, ``variant``, ``score``
        (``cosine``/``dot``), ``pearson_x100``, ``spearman``, ``n_pairs``, ``n_total``,
        ``coverage``.
    """
    frames = {b: data.load_word_similarity(b) for b in benchmarks} if frames is None else frames
    words = [str(w).lower() for b in benchmarks for w in (*frames[b]["word1"], *frames[b]["word2"])]
    ids = single_token_ids(tokenizer, words)
    keys = list(ids)
    rows = np.array([ids[k] for k in keys], dtype=np.int64)
    out = []
    for variant in variants:
        M = variant_rows(W, rows, variant)
        vectors = dict(zip(keys, M, strict=True))
        for b in benchmarks:
            for score in ("cosine", "dot"):
                r = wordbench.evaluate_similarity(vectors, frames[b], score, case="lower")
                out.append(
                    {
                        "benchmark": b,
                        "variant": variant,
                        "score": score,
                        "pearson_x100": 100 * r["pearson"],
                        "spearman": r["spearman"],
                        "n_pairs": r["n_pairs"],
                        "n_total": r["n_total"],
                        "coverage": r["coverage"],
                    }
                )
    return pd.DataFrame(out)


_HIDDEN_KEYS = (
    "isotropy_raw",
    "isotropy_centered",
    "isotropy_top_pcs_removed",
    "log_isotropy_raw",
    "log_isotropy_centered",
    "isoscore",
    "mean_cosine",
    "mean_cosine_centered",
    "mean_norm",
    "mean_vector_norm",
    "mean_vector_ratio",
)


#: Word subsets of :func:`hidden_state_isotropy`.
SUBSETS: tuple[str, ...] = ("all words", "first word excluded")


def first_word_mask(words: pd.DataFrame) -> np.ndarray:
    """True for the first word of every sentence (``word_index == 0``) of a store's word table.

    In a decoder that prepends no BOS token (SmolLM2 here, GPT-2 in the seeds) this word holds
    input position 0 (``first_piece == 0``), the position that becomes an "attention sink"
    (Xiao et al. 2023, *Efficient Streaming Language Models with Attention Sinks*) and carries
    "massive activations" (Sun et al. 2024, *Massive Activations in Large Language Models*):
    a hidden-state norm far above every other token's.

    Returns
    -------
    numpy.ndarray of bool, shape (len(words),)
    """
    return words["word_index"].to_numpy() == 0


def _sample_rows(n: int, n_rows: int | None, seed: int) -> np.ndarray:
    """All row indices, or ``n_rows`` of them drawn without replacement (seeded), sorted."""
    if n_rows is None or n_rows >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=n_rows, replace=False))


def hidden_state_isotropy(
    store: Any,
    n_rows: int | None = None,
    seed: int = 0,
    subsets: Sequence[str] = SUBSETS,
) -> pd.DataFrame:
    """The Table 1 measures on the contextual hidden states of every layer of a store.

    Each layer's word vectors X (one row per word occurrence, float32 -> float64) go through
    :func:`isotropy.embedding_statistics`: I(X) raw, after subtracting the layer's mean
    ("per-layer centring") and with the top ceil(d/100) PCs removed; IsoScore (translation
    invariant, so the same before and after centring); the exact mean cosine between distinct
    rows before and after centring; the mean norm and the norm of the mean vector. I(X) depends
    on the scale of X (Z(c) = sum exp(c . x)), so layers with large norms have I near 0 however
    round their cloud is; ``log_isotropy_*`` keeps the value when I underflows. :func:`shift_cosine`
    adds the mean cosine that the mean vector alone predicts.

    Every measure is computed for each subset of the sampled words: ``"all words"`` and
    ``"first word excluded"`` (the rows of :func:`first_word_mask` dropped), because a
    decoder's first token can have a norm a hundred times the others' and then dominates the
    mean, the covariance and so every measure above.

    Parameters
    ----------
    store : lmgeometry.activations.store.Store
        Needs ``n_layers``, ``layer(i)`` and ``words`` (with ``word_index``).
    n_rows : int, optional
        Use this many word rows, the same seeded sample in every layer and subset (default all);
        the excluded subset is this sample without its first words.
    seed : int
    subsets : sequence of str
        Any of :data:`SUBSETS`.

    Returns
    -------
    pandas.DataFrame
        One row per (subset, layer): ``subset``, ``layer``, ``depth`` (layer / last layer),
        ``n_rows``, ``width``, the keys listed above, ``shift_share``, ``shift_prediction``,
        ``shift_residual`` and ``first_word_norm_ratio`` (median norm of the sample's first
        words / median norm of its other words; the same in both subsets).
    """
    unknown = set(subsets) - set(SUBSETS)
    if unknown:
        raise ValueError(f"unknown subsets {sorted(unknown)}; choose from {SUBSETS}")
    rows = _sample_rows(store.n_words, n_rows, seed)
    first = first_word_mask(store.words)[rows]
    masks = {"all words": np.ones(rows.size, dtype=bool), "first word excluded": ~first}
    out = []
    last = max(store.n_layers - 1, 1)
    for layer in range(store.n_layers):
        X_all = store.layer(layer, rows, dtype=np.float64)
        ratio = similarity.norm_ratio(X_all, first)
        for subset in subsets:
            X = X_all[masks[subset]]
            stats_ = isotropy.embedding_statistics(X)
            shift = shift_cosine(X)
            out.append(
                {
                    "subset": subset,
                    "layer": layer,
                    "depth": layer / last,
                    "n_rows": int(X.shape[0]),
                    "width": int(X.shape[1]),
                }
                | {k: stats_[k] for k in _HIDDEN_KEYS}
                | {k: shift[k] for k in ("shift_share", "shift_prediction", "shift_residual")}
                | {"first_word_norm_ratio": ratio}
            )
    return pd.DataFrame(out)


def longest_words(
    store: Any,
    layers: Iterable[int],
    n_rows: int | None = None,
    seed: int = 0,
    top_share: float = 0.01,
) -> pd.DataFrame:
    """Which word dominates the longest hidden states of a layer, first words of sentences left out.

    On the same seeded sample of rows as :func:`hidden_state_isotropy` without the rows of
    :func:`first_word_mask`, the k = ceil(``top_share`` N) rows of largest L2 norm are taken;
    ``word`` is the most common word text (case kept) among them, ``share`` the fraction of
    the k rows that are this word, and ``norm_ratio`` = median norm of all sampled occurrences
    of the word / median norm of the other sampled rows. A descriptive check for the rows that
    still dominate mu and mean ||x||^2 once the first words are gone (:func:`shift_cosine`).

    Returns
    -------
    pandas.DataFrame
        One row per layer: ``layer``, ``n_longest`` (k), ``word``, ``share``,
        ``n_occurrences`` (of the word in the sample), ``norm_ratio``.
    """
    rows = _sample_rows(store.n_words, n_rows, seed)
    rows = rows[~first_word_mask(store.words)[rows]]
    text = store.words["text"].to_numpy()[rows]
    k = max(1, math.ceil(top_share * rows.size))
    out = []
    for layer in layers:
        X = store.layer(int(layer), rows, dtype=np.float64)
        norms = np.linalg.norm(X, axis=1)
        top = np.argsort(-norms, kind="stable")[:k]
        word, n_top = Counter(text[top].tolist()).most_common(1)[0]
        is_word = text == word
        ratio = similarity.norm_ratio(X, is_word)
        out.append(
            {
                "layer": int(layer),
                "n_longest": int(k),
                "word": str(word),
                "share": n_top / k,
                "n_occurrences": int(is_word.sum()),
                "norm_ratio": ratio,
            }
        )
    return pd.DataFrame(out)


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


@dataclass
class ModelDrift:
    """Everything the chapter shows for one model's input embedding matrix W.

    Every frame has a leading ``model`` column (the spec as given).
    """

    model: str
    facts: dict[str, Any]
    caveats: list[str]
    statistics: dict[str, Any]
    coverage: dict[Any, int]
    zipf: pd.DataFrame
    spectra: pd.DataFrame
    projection: pd.DataFrame
    norms: pd.DataFrame
    rare: pd.DataFrame
    wordsim: pd.DataFrame


def embedding_matrix_drift(
    spec: str,
    texts: Sequence[str],
    *,
    point_budget: int = 3000,
    n_bins: int = 30,
    seed: int = 0,
    device: str | None = "cpu",
) -> ModelDrift:
    """Load a model and compute every W-level number of the chapter (Biš et al. 2021).

    Steps: W = :func:`models.input_embeddings`; token counts of ``texts`` with the model's
    tokenizer (:func:`token_counts`); Table 1 statistics (:func:`isotropy.embedding_statistics`,
    plus the Spearman correlation of row norm with count, :func:`norm_count_spearman`);
    singular values and a seeded sample of ``point_budget`` rows projected on the first two
    singular vectors before and after centring (:func:`isotropy.spectral_views`); row-norm
    histograms of W and W_c (:func:`norm_histograms`); rare-token cosines
    (:func:`rare_token_table`); word similarity (:func:`word_similarity`). Streaming, no
    full-size copies except one centred W for the rare-token cosines.

    Parameters
    ----------
    spec : str
        Model alias, hub id or folder for :func:`lmgeometry.io.models.load_model`.
    texts : sequence of str
        Frequency corpus (:func:`frequency_texts`).
    point_budget : int
        Rows in the projection sample.
    n_bins : int
        Frequency bins of the rare-token figure.
    seed : int
    device : str, optional

    Returns
    -------
    ModelDrift
    """

    loaded = models.load_model(spec, device=device)
    W = models.input_embeddings(loaded)
    tok = loaded.tokenizer
    counts = token_counts(tok, texts, W.shape[0])
    stats_ = isotropy.embedding_statistics(W)
    norms = isotropy.norm_distribution(W)
    stats_["norm_count_spearman"] = norm_count_spearman(norms, counts)
    rows = np.sort(
        np.random.default_rng(seed).choice(W.shape[0], min(point_budget, W.shape[0]), False)
    )
    views = isotropy.spectral_views(W, rows=rows)
    k = np.arange(1, W.shape[1] + 1)
    spectra = pd.concat(
        [
            pd.DataFrame({"variant": v, "component": k, "singular_value": views[key]})
            for v, key in (("raw", "singular_values"), ("centered", "singular_values_centered"))
        ],
        ignore_index=True,
    )
    tokens = tok.convert_ids_to_tokens([int(i) if i < len(tok) else 0 for i in rows])
    projection = pd.DataFrame(
        {
            "token_id": rows,
            "token": [t if i < len(tok) else "" for t, i in zip(tokens, rows, strict=True)],
            "log10_count": np.log10(counts[rows] + 1),
            "x": views["projection"][:, 0],
            "y": views["projection"][:, 1],
            "x_centered": views["projection_centered"][:, 0],
            "y_centered": views["projection_centered"][:, 1],
        }
    )
    hist = norm_histograms({"raw": norms, "centered": isotropy.norm_distribution(W, centered=True)})
    hist = hist.rename(columns={"label": "variant"})
    zipf = zipf_curve(counts)
    out = ModelDrift(
        model=spec,
        facts=loaded.facts(),
        caveats=list(loaded.caveats),
        statistics=stats_,
        coverage=coverage(counts),
        zipf=zipf,
        spectra=spectra,
        projection=projection,
        norms=hist,
        rare=rare_token_table(W, counts, tok, n_bins),
        wordsim=word_similarity(W, tok),
    )
    for name in ("zipf", "spectra", "projection", "norms", "rare", "wordsim"):
        getattr(out, name).insert(0, "model", spec)
    return out




def _trend_words(trend: Mapping[str, Any]) -> str:
    words = {
        "rising": "rising as frequency falls",
        "falling": "falling as frequency falls",
    }.get(trend["direction"], str(trend["direction"]))
    return f"{words} (Spearman rho {number(trend['rho'])} over {trend['n_bins']} bins)"






def _subset_summary(part: pd.DataFrame, agreement: float) -> dict[str, Any]:
    part = part.reset_index(drop=True)
    i_mc = int(part["mean_cosine"].idxmax())
    i_res = int(part["shift_residual"].abs().idxmax())
    i_c = int(part["mean_cosine_centered"].abs().idxmax())
    width = int(part["width"].iloc[0]) if "width" in part else 0
    agree = part["shift_residual"].abs() <= agreement
    return {
        "mc": part.loc[i_mc, "mean_cosine"],
        "mc_layer": int(part.loc[i_mc, "layer"]),
        "pred_at_mc": part.loc[i_mc, "shift_prediction"],
        "n_agree": int(agree.sum()),
        "n_layers": len(part),
        "disagree_layers": part.loc[~agree, "layer"].tolist(),
        "res": part.loc[i_res, "shift_residual"],
        "res_layer": int(part.loc[i_res, "layer"]),
        "cen": part.loc[i_c, "mean_cosine_centered"],
        "cen_layer": int(part.loc[i_c, "layer"]),
        "iso_lo": part["isoscore"].min(),
        "iso_hi": part["isoscore"].max(),
        "width": width,
    }


def _subset_words(v: Mapping[str, Any], agreement: float) -> str:
    text = (
        f"raw mean cosine up to {number(v['mc'])} (layer {v['mc_layer']}), where the mean "
        f"vector predicts {number(v['pred_at_mc'])}; prediction within {agreement} of the "
        f"measured value in {v['n_agree']} of {v['n_layers']} layers"
    )
    if v["disagree_layers"]:
        text += (
            f" (not in layers {layer_ranges(v['disagree_layers'])}; largest gap, measured "
            f"minus predicted, {number(v['res'])} in layer {v['res_layer']})"
        )
    text += (
        f"; centred mean cosine up to {number(abs(v['cen']))} in absolute value (layer "
        f"{v['cen_layer']}); IsoScore from {number(v['iso_lo'])} to {number(v['iso_hi'])}"
    )
    if v["width"] > 1:
        k_lo = 1 + v["iso_lo"] * (v["width"] - 1)
        k_hi = 1 + v["iso_hi"] * (v["width"] - 1)
        text += (
            f" (as if the variance were spread evenly over {k_lo:.0f} to {k_hi:.0f} of the "
            f"{v['width']} directions)"
        )
    return text


def _hidden_sentence(
    m: str, part: pd.DataFrame, longest: pd.DataFrame | None, agreement: float
) -> str:
    """One model's hidden-state finding, all words and (when present) first words excluded."""
    subset = part["subset"] if "subset" in part else pd.Series(SUBSETS[0], index=part.index)
    full = _subset_summary(part[subset == SUBSETS[0]], agreement)
    text = f"**{m}**, all words: {_subset_words(full, agreement)}."
    excl_part = part[subset == SUBSETS[1]]
    if excl_part.empty:
        return text
    excl = _subset_summary(excl_part, agreement)
    ratio = excl_part.set_index("layer")["first_word_norm_ratio"]
    text += (
        f" The first word of each sentence has a median norm up to "
        f"{number(float(ratio.max()), 1)} times that of the other words (layer "
        f"{int(ratio.idxmax())}). Without the first words: {_subset_words(excl, agreement)}."
    )
    cen_layer = full["cen_layer"]
    cen_excl = float(excl_part.set_index("layer").loc[cen_layer, "mean_cosine_centered"])
    big = abs(full["cen"]) > agreement
    by_layer = part.assign(subset=subset).set_index(["subset", "layer"])
    mu_ratio = float(
        by_layer.loc[(SUBSETS[0], cen_layer), "mean_vector_norm"]
        / by_layer.loc[(SUBSETS[1], cen_layer), "mean_vector_norm"]
    )
    if big and abs(cen_excl) <= agreement:
        text += (
            f" The centred cosine of {number(full['cen'])} in layer {cen_layer} is "
            f"{number(cen_excl, 3)} without the first words, so it is made by them: with them "
            f"the layer's mean vector is {number(mu_ratio, 1)} times as long as without, and "
            "subtracting it gives every other word nearly the same large offset."
        )
    elif big:
        text += (
            f" In layer {cen_layer} the centred cosine is {number(full['cen'])} with and "
            f"{number(cen_excl)} without the first words."
        )
    else:
        d_mc = float(
            (
                part[subset == SUBSETS[0]].set_index("layer")["mean_cosine"]
                - excl_part.set_index("layer")["mean_cosine"]
            )
            .abs()
            .max()
        )
        text += f" Leaving them out changes the raw mean cosine by at most {number(d_mc, 3)}."
    if excl["disagree_layers"] and longest is not None and not longest.empty:
        lw = longest[
            (longest["model"] == m) & longest["layer"].isin(excl["disagree_layers"])
        ]
        if not lw.empty:
            words = lw["word"].value_counts()
            top = words.index[0]
            w = lw[lw["word"] == top]
            share = span(100 * w["share"].min(), 100 * w["share"].max(),
                         lambda x: number(x, 0), sep="-")
            norm = span(w["norm_ratio"].min(), w["norm_ratio"].max(),
                        lambda x: number(x, 1), sep="-")
            text += (
                f" In layers {layer_ranges(lw['layer'].tolist())}, where the prediction still "
                f"misses, the most common word among the {int(lw['n_longest'].iloc[0])} "
                f"longest rows is \"{top}\" in {len(w)} of the {len(lw)} layers ({share}% of "
                f"those rows; its median norm is {norm} times the other words')."
            )
    return text


def findings(
    table1: pd.DataFrame,
    wordsim: pd.DataFrame,
    hidden: pd.DataFrame,
    rare: pd.DataFrame,
    longest: pd.DataFrame | None = None,
    agreement: float = 0.05,
) -> list[str]:
    """Sentences stating what this run shows, each beside what seed 004 found.

    Rules: a rare-token curve is "rising"/"falling" by :func:`bin_trend` (Spearman's rho of bin
    order against cosine over all bins, p < 0.05); a hidden layer's mean cosine "agrees" with
    the mean-vector prediction of :func:`shift_cosine` when they differ by at most
    ``agreement``.

    Parameters
    ----------
    table1 : pandas.DataFrame
        One row per model (``model`` plus :func:`isotropy.embedding_statistics` keys).
    wordsim : pandas.DataFrame
        :func:`word_similarity` rows with a ``model`` column.
    hidden : pandas.DataFrame
        :func:`hidden_state_isotropy` rows with a ``model`` column.
    rare : pandas.DataFrame
        :func:`rare_token_table` rows with a ``model`` column.
    longest : pandas.DataFrame, optional
        :func:`longest_words` rows with a ``model`` column, for the layers where the
        prediction still disagrees once the first words are left out.
    agreement : float

    Returns
    -------
    list of str
        Markdown sentences, one paragraph each.
    """
    out = []
    for _, row in table1.iterrows():
        m = row["model"]
        gain = row["isotropy_centered"] - row["isotropy_raw"]
        out.append(
            f"**{m}** (I(W) of its {row['n_rows']:,} x {row['width']} input embedding matrix): "
            f"raw {number(row['isotropy_raw'])}, centred {number(row['isotropy_centered'])}, "
            f"top {row['n_pcs_removed']} PC(s) removed {number(row['isotropy_top_pcs_removed'])} "
            f"(Mu & Viswanath's projection {number(row['isotropy_top_pcs_removed_original'])}). "
            f"Centring {'raises' if gain > 0 else 'does not raise'} I(W) by {number(abs(gain))}; "
            f"the mean vector's norm is {number(row['mean_vector_ratio'])} of the average row "
            f"norm, and the top eigenvector of W^T W has |cosine| "
            f"{number(row['top_eigvec_mean_cosine'])} with the mean vector. Seed 004 found I(W) "
            "between 0.07 and 0.59 raw and 0.64-0.98 centred for BERT, RoBERTa and GPT-2, with "
            "mean-vector ratios 0.16-0.67."
        )
    if not rare.empty:
        parts = []
        freq = rare[rare["protocol"] == "frequency"]
        for m, part in freq[freq["variant"] == "raw"].groupby("model", sort=False):
            first, last = part.iloc[0]["mean_cosine"], part.iloc[-1]["mean_cosine"]
            trend = bin_trend(part)
            cen = freq[(freq["model"] == m) & (freq["variant"] == "centered")]
            trend_c = bin_trend(cen)
            parts.append(
                f"{m} ({part.iloc[0]['n_rare']:,} unseen tokens): {number(first)} with the most "
                f"frequent bin, {number(last)} with the rarest, {_trend_words(trend)}; after "
                f"centring {number(float(cen['mean_cosine'].min()))} to "
                f"{number(float(cen['mean_cosine'].max()))}, {_trend_words(trend_c)}"
            )
        sentence = (
            "Rare tokens: seed 004 found the cosine between BERT's [unused] tokens and bins of "
            "1000 vocabulary ids rising from 0.27 (ids 2000-2999, frequent tokens) to 0.63 "
            "(ids 28500-29500). With tokens never seen in the frequency corpus as reference "
            "and bins by corpus frequency, this run shows " + "; ".join(parts) + "."
        )
        index = rare[(rare["protocol"] == "index") & (rare["variant"] == "raw")]
        for m, part in index.groupby("model", sort=False):
            width = int((part["rank_end"] - part["rank_start"]).max()) + 1
            dropped = sorted(set(range(int(part["bin"].max()) + 1)) - set(part["bin"]))
            dropped_text = ", ".join(f"{k * width}-{(k + 1) * width - 1}" for k in dropped)
            after = part[part["rank_start"] >= 2000]
            at = after.iloc[0] if len(after) else part.iloc[-1]
            sentence += (
                f" With the paper's own protocol ({m}'s vocabulary has BERT's "
                f"{part.iloc[0]['n_rare']:,} [unused] tokens; they and the special tokens are "
                "left out of the bins"
                + (f", and the ids {dropped_text}, mostly [unused], are dropped" if dropped else "")
                + f"): {number(at['mean_cosine'])} for ids {at['rank_start']}-{at['rank_end']} "
                f"and {number(part.iloc[-1]['mean_cosine'])} for the last bin, "
                f"{_trend_words(bin_trend(part))}."
            )
        out.append(sentence)
    if not wordsim.empty:
        avg = (
            wordsim.groupby(["model", "variant", "score"], sort=False)["pearson_x100"]
            .mean()
            .unstack("score")
        )
        parts = []
        for m in pd.unique(wordsim["model"]):
            a = avg.loc[m]
            best = a["dot"].idxmax()
            parts.append(
                f"{m}: inner product {number(a.loc['original', 'dot'], 1)} raw -> "
                f"{number(a.loc['centered', 'dot'], 1)} centred (cosine "
                f"{number(a.loc['original', 'cosine'], 1)} -> "
                f"{number(a.loc['centered', 'cosine'], 1)}"
                f"), best inner-product variant {best.replace('_', '-')}"
            )
        out.append(
            "Word similarity (Pearson r x 100 averaged over the five benchmarks, single-token "
            "pairs): seed 004 found that centring and post-processing help most with the inner "
            "product, e.g. GPT-2 small 59.5 -> 66.0 (cosine 64.7 -> 65.0). This run: "
            + "; ".join(parts)
            + "."
        )
    if not hidden.empty:
        parts = [
            _hidden_sentence(m, part, longest, agreement)
            for m, part in hidden.groupby("model", sort=False)
        ]
        out.append(
            "Hidden states (beyond the paper). The mean cosine after per-layer centring is near "
            "0 by construction whenever the rows have similar norms (centred rows sum to zero), "
            "so it cannot show that a common shift explains the raw cosines; it is kept only as "
            "a diagnostic, since a large value means that a few rows of very large norm "
            "dominate the mean. Two checks that are not true by construction: (1) the mean "
            "cosine that the layer's mean vector alone predicts for rows of equal norm, "
            "(N s - 1)/(N - 1) with s = ||mu||^2 / mean ||x||^2, against the measured one "
            f"(agreement: within {agreement}); where they agree, a common offset of the "
            "measured size accounts for the raw cosines; (2) IsoScore of the spread, which is "
            "blind to any offset. This run: " + " ".join(parts)
        )
    return out
