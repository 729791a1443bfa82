"""Token frequencies for the "Drift and centering" chapter (seed 004): a reference corpus tokenised
with each model's own tokenizer, frequency ranks, unseen and unused tokens, the Zipf curve,
coverage and the single-token ids of benchmark words (Fig. 3 and appendix-B analogues).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "token_counts",
    "word_counts",
    "frequency_ranks",
    "unseen_tokens",
    "unused_token_ids",
    "zipf_curve",
    "coverage",
    "single_token_ids",
]


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
