"""Token-level measures of seed 000 (the GPT-2 vs. BERT embedding-space essay).

Each token's similarity to the other tokens of its sentence (:func:`token_intra_similarity`
for one sentence, :func:`token_measures` for a layer), to the other occurrences of its word in
other sentences (:func:`token_measures`), and to its k = 10 nearest neighbours
(:func:`nearest_neighbours`, in blocks of queries, each query's top k picked from a few
candidates; :func:`neighbour_measures`: the share of neighbours with the same word and their
mean cosine); :func:`summarise_tokens` averages a per-token column by group. Every row is
kept (punctuation too). The nearest-neighbour measures need the layer in memory
(:meth:`lmgeometry.measures.unit_rows.UnitRows.of`, not ``stream``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.similarity import unit_rows
from lmgeometry.measures.stats import RngLike
from lmgeometry.measures.unit_rows import (
    LayerVectors,
    _encode,
    _group_sum,
    _rng,
    _rowdot,
    _step,
    _unit,
    _UnitReader,
)

__all__ = [
    "nearest_neighbours",
    "neighbour_measures",
    "summarise_tokens",
    "token_intra_similarity",
    "token_measures",
]


def token_intra_similarity(S: np.ndarray) -> np.ndarray:
    """Token-based intra-sentence similarity (seed 000): each token's mean cosine to the others.

    .. math:: t_i = \\frac{1}{n - 1} \\sum_{j \\ne i} \\cos(x_i, x_j)
              = \\frac{\\hat x_i \\cdot \\sum_j \\hat x_j - 1}{n - 1}

    Parameters
    ----------
    S : ndarray of shape (n, d)
        The token vectors of one sentence.

    Returns
    -------
    ndarray of shape (n,)
        NaN for zero rows, and for every row when fewer than two rows are non-zero (``n``
        counts non-zero rows).
    """
    U, norms = unit_rows(S)
    nz = norms > 0
    c = int(nz.sum())
    out = np.full(len(U), np.nan)
    if c >= 2:
        out[nz] = (U[nz] @ U.sum(axis=0) - 1.0) / (c - 1)
    return out



@float_arrays("layer_vectors")
def token_measures(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    *,
    lowercase: bool = True,
    min_contexts: int = 2,
) -> pd.DataFrame:
    """Token-based intra-sentence similarity and self-similarity of every token (seed 000).

    * ``token_intra``: the token's mean cosine to the *other* tokens of its sentence,
      :func:`token_intra_similarity`, computed for all sentences at once from sentence sums.
    * ``token_self``: the token's mean cosine to the occurrences of the same word (lower-cased
      text) in *other* sentences,

      .. math:: \\frac{\\hat x_i \\cdot (S_w - S_{w,s})}{c_w - c_{w,s}}

      with ``S_w`` the sum of unit vectors of word ``w``, ``S_{w,s}`` its sum within sentence
      ``s`` and ``c`` the matching counts of non-zero rows. NaN if the word occurs in fewer than
      ``min_contexts`` distinct sentences (at least 2 are needed).

    All rows are kept (punctuation too; seed 000 reports punctuation and special tokens).

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    words : DataFrame
        Columns ``sentence_id``, ``text``; ``word_index``, ``upos``, ``is_stop``, ``is_punct`` are
        copied when present.
    lowercase : bool
    min_contexts : int

    Returns
    -------
    DataFrame
        One row per token, in the order of ``words``: the copied columns, ``word``,
        ``n_sentences`` (of the word), ``token_intra``, ``token_self``.
    """
    U, norms = _unit(layer_vectors)
    nz = norms > 0
    enc = _encode(words, len(U), lowercase, exclude_punct=False)
    n_s = int(enc.sent.max()) + 1 if len(U) else 0
    T = _group_sum(U, enc.sent, n_s)
    cs = np.bincount(enc.sent, weights=nz.astype(np.float64), minlength=n_s)
    dot_s = _rowdot(U, T, enc.sent)
    with np.errstate(invalid="ignore", divide="ignore"):
        intra = np.where(nz & (cs[enc.sent] >= 2), (dot_s - 1.0) / (cs[enc.sent] - 1), np.nan)

    n_w, n_ws = len(enc.vocab), len(enc.ws_word)
    Sw = _group_sum(U, enc.word, n_w)
    cw = np.bincount(enc.word, weights=nz.astype(np.float64), minlength=n_w)
    cws = np.bincount(enc.ws, weights=nz.astype(np.float64), minlength=n_ws)
    # u_i . S_{w,s}: 1 (or 0 for a zero row) when the word occurs once in the sentence
    own = nz.astype(np.float64)
    multi = np.flatnonzero(np.bincount(enc.ws, minlength=n_ws)[enc.ws] >= 2)
    if len(multi):
        groups, local = np.unique(enc.ws[multi], return_inverse=True)
        sub = np.full(len(U), -1, dtype=np.int64)
        sub[multi] = local
        Sws = _group_sum(U, sub, len(groups))
        step = _step(U) if isinstance(U, _UnitReader) else max(len(multi), 1)
        for start in range(0, len(multi), step):
            part = slice(start, start + step)
            own[multi[part]] = _rowdot(U[multi[part]], Sws, local[part])
    num = _rowdot(U, Sw, enc.word) - own
    den = cw[enc.word] - cws[enc.ws]
    ok = nz & (den > 0) & (enc.n_sent[enc.word] >= max(min_contexts, 2))
    token_self = np.full(len(U), np.nan)
    token_self[ok] = num[ok] / den[ok]

    keep = [c for c in ("sentence_id", "word_index", "upos", "is_stop", "is_punct") if c in words]
    table = words[keep].reset_index(drop=True).copy()
    table["word"] = enc.vocab[enc.word]
    table["n_sentences"] = enc.n_sent[enc.word]
    table["token_intra"] = intra
    table["token_self"] = token_self
    return table



def summarise_tokens(
    table: pd.DataFrame, value: str, by: str | Sequence[str], *, min_count: int = 1
) -> pd.DataFrame:
    """Mean of a per-token column by group (e.g. by ``word_index`` or by ``upos``).

    Parameters
    ----------
    table : DataFrame
        Output of :func:`token_measures` or :func:`neighbour_measures`.
    value : str
        Column to average (NaN rows are dropped).
    by : str or list of str
        Grouping column(s).
    min_count : int
        Drop groups with fewer tokens.

    Returns
    -------
    DataFrame
        Indexed by group: ``mean``, ``std``, ``n`` and a normal-approximation 95% interval
        ``lo``/``hi`` = mean -/+ 1.96 std / sqrt(n).
    """
    g = table.dropna(subset=[value]).groupby(by, observed=True)[value]
    out = g.agg(["mean", "std", "count"]).rename(columns={"count": "n"})
    out = out[out["n"] >= min_count]
    half = 1.96 * out["std"].fillna(0.0) / np.sqrt(out["n"])
    out["lo"], out["hi"] = out["mean"] - half, out["mean"] + half
    return out



def nearest_neighbours(
    vectors: LayerVectors,
    k: int = 10,
    *,
    block_size: int = 256,
    queries: np.ndarray | Sequence[int] | None = None,
    dtype: type[np.floating] = np.float32,
    candidates: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest neighbours by cosine of each query row among all rows, in blocks.

    Rows are normalised in float64 (:func:`unit_rows`) and stored in ``dtype``; each block of
    ``block_size`` queries is multiplied against all rows (a ``block_size x N`` Gram block),
    with the query itself, zero rows and rows outside ``candidates`` excluded. The result is
    that of ``np.argpartition`` of each query's whole masked row (entries ``-inf``) at its
    ``k``-th largest entry, the ``k`` above sorted by decreasing cosine, ties by index; a tie
    across the ``k``-th place is broken as ``np.argpartition`` breaks it. It is reached
    without partitioning most rows: each row's entries at or above a lower bound of its
    ``2k``-th largest (read from the maxima of 512 interleaved column chunks) are the only
    ones that can be among its top ``k``; they are sorted, and a row is partitioned whole only
    if they hold fewer than ``k`` candidates or a tie straddles the ``k``-th place (a few
    per cent of rows on real layers, every row of a context-free layer with repeated words).
    Peak extra memory is about ``N * d * itemsize`` for the unit rows plus
    ``block_size * N * itemsize`` bytes for one Gram block, and up to
    ``block_size * N * (itemsize + 8)`` more for the rows partitioned whole.
    Cost ``O(m N d)`` for ``m`` queries (the Gram products; the selection is ``O(m N)``).

    Parameters
    ----------
    vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    k : int
    block_size : int
        Queries per block (bounds memory).
    queries : array of int, optional
        Row indices to find neighbours for; default all rows.
    dtype : numpy float type
        Precision of the Gram blocks (float32: cosines good to about 1e-6).
    candidates : boolean array of shape (N,), optional
        Rows that may be neighbours (default all); a query outside it gets no neighbours.

    Returns
    -------
    indices : int64 array of shape (m, k)
        Neighbour rows, most similar first; -1 for zero query rows (and queries outside
        ``candidates``).
    cosines : float64 array of shape (m, k)
        Their cosines; NaN where ``indices`` is -1.

    Raises
    ------
    ValueError
        If fewer than ``k + 1`` candidate rows are non-zero, or ``block_size < 1``.
    """
    return _neighbours(vectors, k, block_size, queries, dtype, [candidates])[0]



#: Each row of a Gram block is cut into this many interleaved column chunks (columns ``j``,
#: ``j + c``, ``j + 2c``, ...); their maxima give a lower bound of the row's k-th largest value.
_CHUNKS = 512



def _neighbours(
    vectors: LayerVectors,
    k: int,
    block_size: int,
    queries: np.ndarray | Sequence[int] | None,
    dtype: type[np.floating],
    masks: Sequence[np.ndarray | None],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`nearest_neighbours` under several candidate masks from one Gram block each.

    Each block's candidates (:func:`_candidates`) are found once and serve every mask
    (:func:`_top_k`); the result is that of a full ``np.argpartition`` of each masked row.
    """
    if block_size < 1:
        raise ValueError("block_size must be positive")
    U, norms = _unit(vectors)
    if isinstance(U, _UnitReader):
        raise ValueError("nearest neighbours compare every row with every other: pass the layer "
                         "in memory (UnitRows.of(X)), not UnitRows.stream(X)")
    U = U.astype(dtype, copy=False)
    N = len(U)
    nz = norms > 0
    allowed = [nz if m is None else nz & np.asarray(m, dtype=bool) for m in masks]
    for a in allowed:
        if int(a.sum()) < k + 1:
            raise ValueError(f"need at least k + 1 = {k + 1} non-zero rows, got {int(a.sum())}")
    q = np.arange(N) if queries is None else np.asarray(queries, dtype=np.int64)
    out = [(np.full((len(q), k), -1, dtype=np.int64), np.full((len(q), k), np.nan))
           for _ in allowed]
    for start in range(0, len(q), block_size):
        qb = q[start : start + block_size]
        G = U[qb] @ U.T
        G[np.arange(len(qb)), qb] = -np.inf
        if not nz.all():
            G[:, ~nz] = -np.inf
        cand = _candidates(G, 2 * k)
        for (idx, cos), a in zip(out, allowed, strict=True):
            live = np.flatnonzero(a[qb])
            idx[start + live], cos[start + live] = _top_k(G, live, cand, a, k)
    return out



def _candidates(G: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries of each row of ``G`` at or above a lower bound of its ``m``-th largest value.

    The bound is the ``m``-th largest of the row's :data:`_CHUNKS` interleaved chunk maxima:
    ``m`` distinct entries reach it, so at least ``m`` entries are returned per row, and every
    entry at least as large as the row's ``m``-th largest value is among them. Only the
    chunks whose maximum reaches the bound are read again. With fewer chunks than ``m``
    (fewer than ``m`` columns, or ``m`` above :data:`_CHUNKS`) every entry is returned.
    Returns ``(row, column, value)``, sorted by row, then decreasing value, then column.
    """
    b, n = G.shape
    c = min(_CHUNKS, n)
    if c < m:
        r, col = np.divmod(np.arange(b * n), n)
        v = G.ravel()
    else:
        width = n // c
        M = G[:, : c * width].reshape(b, width, c).max(axis=1)
        t = np.partition(M, c - m, axis=1)[:, c - m]
        hit, chunk = np.nonzero(M >= t[:, None])  # only these chunks reach the bound
        cols = chunk[:, None] + c * np.arange(width)
        vals = G.ravel()[hit[:, None] * n + cols]
        reach = vals >= t[hit, None]
        tail_r, tail_c = np.nonzero(G[:, c * width :] >= t[:, None])
        tail_c += c * width
        r = np.concatenate([np.broadcast_to(hit[:, None], cols.shape)[reach], tail_r])
        col = np.concatenate([cols[reach], tail_c])
        v = np.concatenate([vals[reach], G[tail_r, tail_c]])
    order = np.lexsort((col, -v, r))
    return r[order], col[order], v[order]



def _top_k(G: np.ndarray, rows: np.ndarray, cand: tuple[np.ndarray, np.ndarray, np.ndarray],
           allowed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest entries of ``G[rows]`` among the ``allowed`` columns, from ``cand``.

    A row whose candidates include at least ``k`` allowed ones, the ``k``-th strictly above the
    next, has one top-``k`` set, and ``cand`` holds it in order (decreasing value, ties by
    column). Any other row (the candidates' bound fell below fewer than ``k`` allowed
    entries, or a tie straddles the ``k``-th place, which ``np.argpartition`` breaks its own
    way) goes through :func:`_partition_rows`, the full-row search, so that every row gets
    exactly what that search gives.
    """
    r, col, v = cand
    keep = allowed[col]
    r, col, v = r[keep], col[keep], v[keep]
    counts = np.bincount(r, minlength=len(G))
    first = np.cumsum(counts) - counts
    n, f = counts[rows], first[rows]
    ok = n >= k
    tied = ok & (n > k)
    tied[tied] = v[f[tied] + k] == v[f[tied] + k - 1]
    ok &= ~tied
    at = f[ok, None] + np.arange(k)
    top = np.empty((len(rows), k), dtype=np.int64)
    vals = np.empty((len(rows), k), dtype=G.dtype)
    top[ok], vals[ok] = col[at], v[at]
    if not ok.all():
        top[~ok], vals[~ok] = _partition_rows(G[rows[~ok]], allowed, k)
    return top, vals



def _partition_rows(G: np.ndarray, allowed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest entries of each row of ``G`` (modified) among the ``allowed`` columns,
    by ``np.argpartition`` of the whole row, sorted by decreasing value, ties by column."""
    if not allowed.all():
        G[:, ~allowed] = -np.inf
    top = np.argpartition(G, G.shape[1] - k, axis=1)[:, G.shape[1] - k :]
    vals = np.take_along_axis(G, top, axis=1)
    order = np.lexsort((top, -vals), axis=1)
    return np.take_along_axis(top, order, axis=1), np.take_along_axis(vals, order, axis=1)



def neighbour_measures(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    k: int = 10,
    *,
    block_size: int = 256,
    queries: int | np.ndarray | Sequence[int] | None = None,
    seed: RngLike = 0,
    lowercase: bool = True,
    subsets: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Nearest-neighbour measures of seed 000 for tokens of one layer.

    For each query token, its ``k`` nearest neighbours by cosine among all tokens of the layer
    (:func:`nearest_neighbours`, self excluded): ``same_word_share``, the share of neighbours
    with the same word (lower-cased text), and ``mean_neighbour_cosine``. A high share means
    occurrences of a word stay together (little contextualisation); a mean neighbour cosine
    near 1 reflects anisotropy.

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    words : DataFrame
        Columns ``sentence_id``, ``text``; ``word_index``, ``upos``, ``is_stop``, ``is_punct``
        copied when present.
    k : int
    block_size : int
    queries : int, array of int or None
        None: every token (``O(N^2 d)``); an int: that many tokens drawn uniformly without
        replacement (with ``seed``); an array: those row indices.
    seed : int, Generator or None
    lowercase : bool
    subsets : mapping of str to boolean array of shape (N,), optional
        Several populations at the cost of one: for each named subset of rows, the queries in
        it get their neighbours among its rows only (e.g. every token, and every token but
        each sentence's first). The Gram products are shared.

    Returns
    -------
    DataFrame
        One row per query (per subset and query in it, with a first column ``subset``, when
        ``subsets`` is given): ``row`` and the copied columns, ``word``, ``same_word_share``,
        ``mean_neighbour_cosine``.
    """
    enc = _encode(words, len(layer_vectors), lowercase, exclude_punct=False)
    n = len(layer_vectors)
    if queries is None:
        q = np.arange(n)
    elif np.isscalar(queries):
        q = np.sort(_rng(seed).choice(n, size=min(int(queries), n), replace=False))
    else:
        q = np.asarray(queries, dtype=np.int64)
    masks = [None] if subsets is None else list(subsets.values())
    found = _neighbours(layer_vectors, k, block_size, q, np.float32, masks)
    keep = [c for c in ("sentence_id", "word_index", "upos", "is_stop", "is_punct") if c in words]
    frames = []
    for name, (idx, cos) in zip([None] if subsets is None else subsets, found, strict=True):
        live = idx[:, 0] >= 0
        same = np.full(len(q), np.nan)
        same[live] = (enc.word[idx[live]] == enc.word[q[live], None]).mean(axis=1)
        sel = q if name is None else q[live]
        table = words[keep].iloc[sel].reset_index(drop=True)
        table.insert(0, "row", sel)
        table["word"] = enc.vocab[enc.word[sel]]
        table["same_word_share"] = same if name is None else same[live]
        table["mean_neighbour_cosine"] = cos.mean(axis=1) if name is None else cos[live].mean(1)
        if name is not None:
            table.insert(0, "subset", name)
        frames.append(table)
    return frames[0] if subsets is None else pd.concat(frames, ignore_index=True)
