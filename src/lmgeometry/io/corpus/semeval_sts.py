"""SemEval STS 2012-2016 sentences (:func:`sts`, the input data of Ethayarajh, 2019, seed 001)
and the index of the words with enough distinct contexts (:func:`word_contexts`).

Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from lmgeometry.io import datasets
from lmgeometry.io.corpus.base import DEFAULT_SIZES, Corpus, _check_n, _too_few
from lmgeometry.io.corpus.table import word_table

__all__ = [
    "sts",
    "sts_pool",
    "word_contexts",
]


def _sts_pool(years: list[int] | None) -> tuple[list[str], int]:
    """Unique STS sentences (both of every pair, stripped, empty dropped, first occurrence
    kept, file order) and the number of pairs read."""
    frame = datasets.load_sts(years)
    both = np.column_stack([frame["sentence1"].to_numpy(), frame["sentence2"].to_numpy()])
    return [s for s in dict.fromkeys(x.strip() for x in both.ravel().tolist()) if s], len(frame)


def sts_pool(years: Iterable[int] | None = None) -> list[str]:
    """Every unique STS sentence :func:`sts` samples from (years 2012-2016 by default)."""
    return _sts_pool(None if years is None else sorted({int(y) for y in years}))[0]


def sts(n: int | None = None, seed: int = 0, years: Iterable[int] | None = None) -> Corpus:
    """SemEval STS 2012-2016 sentences, the input data of Ethayarajh (2019).

    Both sentences of every pair are taken, surrounding whitespace stripped, empty ones
    dropped and exact duplicates removed (first occurrence kept; sentences differing only in
    case or inner spacing stay distinct), then ``n`` are drawn uniformly without replacement
    (seeded) and kept in file order.

    Parameters
    ----------
    n : int, optional
        Number of sentences; default ``DEFAULT_SIZES["sts"]`` (1,000).
    seed : int
        Sampling seed.
    years : iterable of int, optional
        STS years (2012-2016); default all.

    Returns
    -------
    Corpus
        Name ``"sts"``, ``is_target`` all False; ``info["unique_sentences"]`` is the pool size.

    Raises
    ------
    ValueError
        ``n`` is not positive or larger than the number of unique sentences.
    """
    where = "sts"
    n = _check_n(DEFAULT_SIZES[where] if n is None else n, where)
    chosen_years = None if years is None else sorted({int(y) for y in years})
    pool, n_pairs = _sts_pool(chosen_years)
    if n > len(pool):
        raise _too_few(where, n, len(pool), "unique STS sentences exist for years "
                       f"{chosen_years or 'all'}")
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(pool), size=n, replace=False))
    texts = [pool[i] for i in idx]
    words = word_table(texts)
    words["target"] = pd.Series([None] * len(words), dtype=object)
    return Corpus(name=where, sentences=texts, words=words,
                  params={"n": n, "seed": int(seed), "years": chosen_years},
                  info={"unique_sentences": len(pool), "pairs": n_pairs})


def word_contexts(words: pd.DataFrame, min_contexts: int = 5, *,
                  include_punct: bool = False) -> pd.DataFrame:
    """Words that occur in at least ``min_contexts`` distinct sentences, with their rows.

    Ethayarajh (2019) maps each word to the sentences it occurs in and ignores words with
    fewer than 5 unique contexts. A word here is the lowercase ``text`` of a row.

    Parameters
    ----------
    words : pandas.DataFrame
        A word table (``Corpus.words`` or ``Store.words``): needs ``sentence_id``, ``text``
        and, unless ``include_punct``, ``is_punct``.
    min_contexts : int
        Minimum number of distinct sentences.
    include_punct : bool
        Keep punctuation tokens (default False: ".", "," are not words whose context matters).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``word`` (sorted), columns ``n_contexts`` (distinct sentences),
        ``n_occurrences``, ``rows`` (list of positional row indices into ``words``, all
        occurrences in table order) and ``first_rows`` (the first occurrence in each distinct
        sentence: one vector per context).
    """
    if min_contexts < 1:
        raise ValueError(f"min_contexts must be >= 1, got {min_contexts}")
    needed = {"sentence_id", "text"} | (set() if include_punct else {"is_punct"})
    if missing := needed - set(words.columns):
        raise ValueError(f"word_contexts: the word table lacks columns {sorted(missing)}")
    frame = pd.DataFrame({
        "word": words["text"].str.lower().to_numpy(),
        "sentence_id": words["sentence_id"].to_numpy(),
        "row": np.arange(len(words)),
    })
    if not include_punct:
        frame = frame[~words["is_punct"].to_numpy(dtype=bool)]
    n_ctx = frame.groupby("word")["sentence_id"].nunique()
    keep = n_ctx.index[n_ctx >= min_contexts]
    frame = frame[frame["word"].isin(keep)]
    grouped = frame.groupby("word", sort=True)
    first = frame.drop_duplicates(["word", "sentence_id"]).groupby("word", sort=True)["row"]
    out = pd.DataFrame({
        "n_contexts": n_ctx.loc[keep].sort_index().astype("int32"),
        "n_occurrences": grouped.size().astype("int32"),
        "rows": grouped["row"].agg(list),
        "first_rows": first.agg(list),
    })
    out.index.name = "word"
    return out
