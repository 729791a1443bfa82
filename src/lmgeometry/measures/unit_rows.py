"""One layer's rows as the measures of one layer read them: normalised once, streamed, grouped.

What the context measures (:mod:`lmgeometry.measures.contextual`, ``cosines``, ``baselines``,
``mev``, ``static``, ``tokens``) share:

* :class:`UnitRows`, a layer's rows divided by their norms once, to share between measures, or
  (:meth:`UnitRows.stream`) normalised as they are read in row chunks; ``LayerVectors``, what a
  measure of one layer takes (the raw rows or their ``UnitRows``);
* sums of unit rows by group (sentence, word, word within a sentence) as sparse indicator
  products, chunk by chunk on a streamed layer, and the mean cosine over ordered pairs in
  different groups in closed form, with no Gram matrix (``_cross_mean``);
* a words table as integer codes (``_encode``): each row's sentence, word (its lower-cased
  ``text`` unless asked otherwise; -1 for left-out punctuation) and (word, sentence) group;
* standardised dimensions (``standardise=True``; :func:`dimension_moments`): each dimension
  z-scored over the layer's rows before the rows are normalised, so that a few rogue
  dimensions cannot dominate every cosine (Timkey & van Schijndel 2021).

Conventions used throughout:

* Rows are normalised in float64 (float64 input is first divided row-wise by its largest
  absolute entry), so the large norms of decoder hidden states (GPT-2's first token reaches
  norms in the thousands) cannot overflow or lose precision; MEV and PCA rescale each matrix by
  one positive factor, which leaves them unchanged. Non-finite rows raise ``ValueError``.
* A layer larger than memory (a memory map, a sharded store's ``LayerView``) is passed as
  :meth:`UnitRows.stream`: every corpus-level measure then reads it in row chunks, or
  only the rows of one word or of a sampled pool, and gives the in-memory values; the
  nearest-neighbour measures need the layer in memory.
* A zero row has no direction: every pair that involves one is left out of a cosine mean (the
  authors' ``np.nanmean`` over ``scipy`` cosines does the same), and per-row results for it are
  NaN. Means over an empty set are NaN.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from lmgeometry.measures.similarity import CHUNK_ROWS, as_rows, row_norms, unit_rows
from lmgeometry.measures.stats import RngLike

__all__ = ["LayerVectors", "UnitRows", "dimension_moments"]


@dataclass(frozen=True)
class UnitRows:
    """One layer's rows normalised once (:func:`unit_rows`), to share between measures.

    Normalising a layer costs as much as the cheaper measures themselves; a chapter that runs
    several measures on the same rows normalises them once with :meth:`of` and passes the
    result wherever a measure takes ``layer_vectors``. The measures treat it exactly like the
    array it came from.

    Attributes
    ----------
    U : ndarray of shape (n, d), float64
        ``x_i / ||x_i||`` (zero rows stay zero).
    norms : ndarray of shape (n,), float64
        ``||x_i||``.
    """

    U: np.ndarray
    norms: np.ndarray
    standardised: bool = False

    @classmethod
    def of(cls, X: np.ndarray | UnitRows, *, standardise: bool = False) -> UnitRows:
        """The unit rows of ``X`` (``X`` itself when it already is a :class:`UnitRows`).

        ``standardise=True``: the unit rows of the standardised rows ``(x_i - mu) / sigma``
        (:func:`dimension_moments` of ``X``; see :func:`_unit`), normalised after
        standardising. ``norms`` are then the standardised rows' norms.
        """
        if isinstance(X, UnitRows):
            return _checked(X, standardise)
        if standardise:
            return cls(*_ZScored(X).unit_rows(), standardised=True)
        return cls(*unit_rows(X))

    @classmethod
    def stream(cls, X: np.ndarray, chunk_rows: int = CHUNK_ROWS, *,
               standardise: bool = False) -> UnitRows:
        """The unit rows of a layer too large for memory, normalised as they are read.

        ``X`` is a memory map or a lazy view of a layer (``Store.layer(i, dtype=None)``, a
        sharded entry's ``LayerView``). Only the norms (8 bytes a row) are kept; ``U`` is a
        reader that normalises the rows a measure indexes, and the measures that need every
        row (sums over words or sentences, the exact cosine baseline) read it in chunks of
        ``chunk_rows``. Every corpus-level measure here gives the in-memory values (up to
        floating-point summation order). What stays in memory besides one chunk:

        * SelfSim and the exact baselines: one partial sum per word (per sentence only while
          the sentence is being read);
        * MEV and PC1 of a word: that word's rows (batches of words of equal frequency up to
          32 MiB of float64); the pooled baselines: the pool's rows;
        * IntraSim: one vector per sampled sentence (500 by default);
        * :func:`mean_embeddings`, :func:`token_measures`: one vector per word and per
          sentence, as their outputs need.

        With ``standardise=True`` the dimensions' means and standard deviations are read
        first (one more pass over the rows, :func:`dimension_moments`) and every row read is
        standardised before it is normalised.
        """
        reader = _UnitReader(_ZScored(X, chunk_rows) if standardise else X, chunk_rows)
        return cls(reader, reader.norms, standardised=standardise)  # type: ignore[arg-type]

    def take(self, rows: np.ndarray | slice) -> UnitRows:
        """Only these rows, in this order (in memory; standardised by the moments of all
        the rows, if standardised)."""
        return UnitRows(self.U[rows], self.norms[rows], self.standardised)

    def __len__(self) -> int:
        return len(self.U)



class _UnitReader:
    """``U`` of :meth:`UnitRows.stream`: indexing reads and normalises only those rows."""

    def __init__(self, X: np.ndarray, chunk_rows: int) -> None:
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be positive")
        self.X, self.chunk_rows = X, chunk_rows
        self.norms = row_norms(X, chunk_rows)
        self.shape: tuple[int, int] = (len(self.norms), int(X.shape[1]))
        self.ndim = 2

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray | slice) -> np.ndarray:
        if isinstance(rows, slice):
            return unit_rows(self.X[rows])[0]
        index = np.asarray(rows)
        if index.dtype == bool:
            if index.shape != (self.shape[0],):
                raise IndexError(f"a boolean row mask needs {self.shape[0]} entries, "
                                 f"not shape {index.shape}")
            index = np.flatnonzero(index)
        wanted, inverse = np.unique(index.ravel(), return_inverse=True)
        U = unit_rows(self.X[wanted])[0] if len(wanted) else np.zeros((0, self.shape[1]))
        return U[inverse].reshape(*index.shape, self.shape[1])

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(first row, unit rows)`` of each chunk, in order."""
        for start in range(0, self.shape[0], self.chunk_rows):
            yield start, self[start : start + self.chunk_rows]



LayerVectors = np.ndarray | UnitRows
"""What the measures of one layer take: the raw rows, or their :class:`UnitRows`."""



def dimension_moments(X: np.ndarray, chunk_rows: int = CHUNK_ROWS
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Each dimension's mean and (population) standard deviation over the rows of ``X``.

    .. math:: \\mu_k = \\frac{1}{n} \\sum_i x_{ik}, \\qquad
              \\sigma_k = \\sqrt{\\frac{1}{n} \\sum_i (x_{ik} - \\mu_k)^2}

    What standardising a layer's dimensions needs: Timkey & van Schijndel (2021) subtract each
    dimension's mean and divide by its standard deviation, both estimated over a sample of the
    layer's token vectors, before computing cosines. Read ``chunk_rows`` rows at a
    time in float64 and combined chunk by chunk (Chan, Golub & LeVeque 1983), so a memory map
    or a lazy layer view is never loaded whole and no sum of squares loses the variance to
    cancellation.

    Returns
    -------
    mean, std : ndarrays of shape (d,), float64

    Raises
    ------
    ValueError
        If ``X`` has no rows or holds NaN or infinity.
    """
    X = as_rows(X)
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    if X.shape[0] == 0:
        raise ValueError("standardising dimensions needs at least one row; got none")
    n, mean, m2 = 0, np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for start in range(0, X.shape[0], chunk_rows):
        block = np.array(X[start : start + chunk_rows], dtype=np.float64)  # a copy: centred below
        if not np.isfinite(block).all():
            raise ValueError("rows must be finite (found NaN or infinity)")
        k, b_mean = len(block), block.mean(axis=0)
        delta = b_mean - mean
        block -= b_mean
        m2 += np.einsum("ij,ij->j", block, block) + delta**2 * n * k / (n + k)
        mean += delta * k / (n + k)
        n += k
    return mean, np.sqrt(m2 / n)



class _ZScored:
    """A layer read with each dimension standardised: ``(x - mu) / sigma`` in float64.

    A constant dimension (``sigma = 0``) is centred to zeros (it carries no information
    about any pair). Indexing reads only those rows, so a memory map stays lazy.
    """

    def __init__(self, X: np.ndarray, chunk_rows: int = CHUNK_ROWS) -> None:
        self.X = as_rows(X)
        self.mean, std = dimension_moments(self.X, chunk_rows)
        self.scale = np.where(std > 0, std, 1.0)
        self.shape, self.ndim, self.dtype = self.X.shape, 2, np.dtype(np.float64)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray | slice) -> np.ndarray:
        block = np.array(self.X[rows], dtype=np.float64)
        block -= self.mean
        block /= self.scale
        return block

    def unit_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """``(U, norms)`` of every standardised row, as :func:`unit_rows` gives them (the
        rows are finite z-scores, at most ``sqrt(n)`` in size, so no rescaling is needed)."""
        n = self.shape[0]
        U, norms = np.empty(self.shape), np.zeros(n)
        for start in range(0, n, CHUNK_ROWS):
            block = self[start : start + CHUNK_ROWS]
            r = np.sqrt(np.einsum("ij,ij->i", block, block))
            np.divide(block, r[:, None], out=block, where=r[:, None] > 0)
            U[start : start + len(block)], norms[start : start + len(block)] = block, r
        return U, norms



def _checked(units: UnitRows, standardise: bool) -> UnitRows:
    """``units`` when they were formed as asked; standardising needs the raw rows."""
    if standardise and not units.standardised:
        raise ValueError("standardise=True needs the layer's raw rows (or "
                         "UnitRows.of(X, standardise=True)), not unit rows of raw dimensions: "
                         "pass the array itself")
    return units



def _unit(layer_vectors: LayerVectors, standardise: bool = False
          ) -> tuple[np.ndarray, np.ndarray]:
    """``(U, norms)`` of raw rows or of a :class:`UnitRows`.

    ``standardise=True``: the unit rows of the rows with standardised dimensions,

    .. math:: z_{ik} = \\frac{x_{ik} - \\mu_k}{\\sigma_k}, \\qquad
              u_i = z_i / \\lVert z_i \\rVert

    (:func:`dimension_moments` over the same rows), so every cosine computed from them is
    invariant to shifting and rescaling each dimension and no rogue dimension dominates it
    (Timkey & van Schijndel 2021).

    Timkey, W. & van Schijndel, M. (2021). All Bark and No Bite: Rogue Dimensions in
    Transformer Language Models Obscure Representational Quality. EMNLP.
    """
    if isinstance(layer_vectors, UnitRows):
        units = _checked(layer_vectors, standardise)
        return units.U, units.norms
    return _ZScored(layer_vectors).unit_rows() if standardise else unit_rows(layer_vectors)



def _rng(rng: RngLike) -> np.random.Generator:
    return np.random.default_rng(rng)



def _mean_or_nan(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")



def _step(U: np.ndarray | _UnitReader) -> int:
    """Rows per chunk of a row-wise loop over ``U``: a streamed layer's own chunk size."""
    return min(CHUNK_ROWS, U.chunk_rows) if isinstance(U, _UnitReader) else CHUNK_ROWS



def _rowdot(A: np.ndarray, B: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """``out[i] = A[i] . B[rows_b[i]]`` in chunks (never materialises ``B[rows_b]`` whole)."""
    out = np.empty(len(A), dtype=np.float64)
    step = _step(A)
    for start in range(0, len(A), step):
        stop = start + step
        out[start:stop] = np.einsum("ij,ij->i", A[start:stop], B[rows_b[start:stop]])
    return out



def _pairdot(U: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``out[p] = U[i[p]] . U[j[p]]`` in chunks."""
    out = np.empty(len(i), dtype=np.float64)
    step = _step(U)
    for start in range(0, len(i), step):
        stop = start + step
        out[start:stop] = np.einsum("ij,ij->i", U[i[start:stop]], U[j[start:stop]])
    return out



def _group_sum(
    U: np.ndarray, codes: np.ndarray, n_groups: int, weights: np.ndarray | None = None
) -> np.ndarray:
    """``out[g] = sum_{i: codes[i] = g} weights[i] * U[i]`` (rows with code < 0 are skipped).

    A sparse indicator matrix times ``U``: no gathered copy of ``U`` is made.
    """
    if isinstance(U, _UnitReader):
        out = np.zeros((n_groups, U.shape[1]))
        for groups, sums in _block_group_sums(U, codes, weights):
            out[groups] += sums
        return out
    keep = codes >= 0
    rows = np.flatnonzero(keep)
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=np.float64)[rows]
    M = sp.csr_matrix((w, (codes[rows], rows)), shape=(n_groups, len(U)))
    return np.asarray(M @ U)



def _block_group_sums(
    U: _UnitReader, codes: np.ndarray, weights: np.ndarray | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per chunk of a streamed layer: the groups present in it and their partial sums there."""
    for start, block in U.blocks():
        part = slice(start, start + len(block))
        groups, local = np.unique(codes[part], return_inverse=True)
        skipped = int(np.searchsorted(groups, 0))  # distinct negative codes, sorted first
        local = np.where(codes[part] >= 0, local - skipped, -1)
        groups = groups[skipped:]
        w = None if weights is None else np.asarray(weights, dtype=np.float64)[part]
        yield groups, _group_sum(block, local, len(groups), w)



def _column_sum(U: np.ndarray | _UnitReader) -> np.ndarray:
    """``sum_i u_i``, chunk by chunk for a streamed layer."""
    if isinstance(U, _UnitReader):
        return sum((block.sum(axis=0) for _, block in U.blocks()), np.zeros(U.shape[1]))
    return U.sum(axis=0)



def _sq_norms_of_sums(U: np.ndarray | _UnitReader, codes: np.ndarray, n_groups: int
                      ) -> np.ndarray:
    """``||sum_{i: codes[i] = g} u_i||^2`` per group (rows with code < 0 are skipped).

    On a streamed layer a group's partial sum is kept only from its first chunk to its last,
    so groups of consecutive rows (sentences) cost one vector at a time, and scattered ones
    (words) at most one vector per group.
    """
    if not isinstance(U, _UnitReader):
        G = _group_sum(U, codes, n_groups)
        return np.einsum("ij,ij->i", G, G)
    last = np.full(n_groups, -1)
    rows = np.flatnonzero(codes >= 0)
    np.maximum.at(last, codes[rows], rows)
    out = np.zeros(n_groups)
    open_sums: dict[int, np.ndarray] = {}
    is_open = np.zeros(n_groups, dtype=bool)
    end = 0
    for groups, sums in _block_group_sums(U, codes):
        end += U.chunk_rows
        for k in np.flatnonzero(is_open[groups]):
            sums[k] += open_sums.pop(int(groups[k]))
        closing = last[groups] < end
        out[groups[closing]] = np.einsum("ij,ij->i", sums[closing], sums[closing])
        is_open[groups] = ~closing
        open_sums.update(zip(groups[~closing].tolist(), sums[~closing], strict=True))
    return out



def _group_sq_norms(U: np.ndarray, nz: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """``||sum_{i in g} u_i||^2`` per group of unit rows; singleton groups cost nothing."""
    valid = codes >= 0
    size = np.bincount(codes[valid], minlength=n_groups)
    out = np.bincount(codes[valid], weights=nz[valid].astype(np.float64), minlength=n_groups)
    multi = valid.copy()
    multi[valid] = size[codes[valid]] >= 2
    rows = np.flatnonzero(multi)
    if len(rows):
        groups, local = np.unique(codes[rows], return_inverse=True)
        sub = np.full(len(codes), -1, dtype=np.int64)
        sub[rows] = local
        out[groups] = _sq_norms_of_sums(U, sub, len(groups))
    return out



def _as_codes(labels: np.ndarray | Sequence) -> np.ndarray:
    codes, _ = pd.factorize(pd.Series(np.asarray(labels)), sort=False)
    return codes.astype(np.int64)



def _cross_mean(U: np.ndarray, nz: np.ndarray, codes: np.ndarray | None) -> float:
    """Exact mean cosine over ordered pairs (i != j) of non-zero unit rows, optionally only
    over pairs whose ``codes`` differ.

    With ``S = sum_i u_i`` and group sums ``S_g``, the sum of ``u_i . u_j`` over ordered pairs in
    different groups is ``||S||^2 - sum_g ||S_g||^2`` and their number is
    ``c^2 - sum_g c_g^2`` (``c``: non-zero rows), so no Gram matrix is needed.
    """
    c = float(nz.sum())
    S = _column_sum(U)
    if codes is None:
        num, den = S @ S - c, c * c - c
    else:
        n_groups = int(codes.max()) + 1 if len(codes) else 0
        g2 = _group_sq_norms(U, nz, codes, n_groups)
        cg = np.bincount(codes, weights=nz.astype(np.float64), minlength=n_groups)
        num, den = S @ S - float(g2.sum()), c * c - float(cg @ cg)
    return float(num / den) if den > 0 else float("nan")



@dataclass
class _Words:
    """Integer codes of one words table."""

    sent: np.ndarray  # (N,) sentence code
    word: np.ndarray  # (N,) word code, -1 for excluded rows
    vocab: np.ndarray  # word strings by code
    n_occ: np.ndarray  # occurrences per word code
    n_sent: np.ndarray  # distinct sentences per word code
    ws: np.ndarray  # (N,) (word, sentence) group code, -1 for excluded rows
    ws_word: np.ndarray  # word code of each (word, sentence) group



def _word_key(words: pd.DataFrame, lowercase: bool) -> pd.Series:
    text = words["text"].astype(str)
    return text.str.lower() if lowercase else text



def _encode(words: pd.DataFrame, n_rows: int, lowercase: bool, exclude_punct: bool) -> _Words:
    if len(words) != n_rows:
        raise ValueError(f"words has {len(words)} rows but the layer has {n_rows}")
    for col in ("sentence_id", "text"):
        if col not in words.columns:
            raise ValueError(f"words needs a {col!r} column")
    sent = _as_codes(words["sentence_id"].to_numpy())
    key = _word_key(words, lowercase)
    keep = np.ones(n_rows, dtype=bool)
    if exclude_punct and "is_punct" in words.columns:
        keep &= ~words["is_punct"].fillna(False).to_numpy(dtype=bool)
    word = np.full(n_rows, -1, dtype=np.int64)
    codes, vocab = pd.factorize(key[keep], sort=False)
    word[keep] = codes
    n_words = len(vocab)
    n_occ = np.bincount(word[keep], minlength=n_words)
    ws = np.full(n_rows, -1, dtype=np.int64)
    n_s = int(sent.max()) + 1 if n_rows else 1
    ws_codes, ws_uniques = pd.factorize(word[keep] * n_s + sent[keep], sort=False)
    ws[keep] = ws_codes
    ws_word = np.asarray(ws_uniques, dtype=np.int64) // n_s
    n_sent = np.bincount(ws_word, minlength=n_words)
    return _Words(sent, word, np.asarray(vocab, dtype=object), n_occ, n_sent, ws, ws_word)



def _rows_by_word(word: np.ndarray, n_words: int) -> list[np.ndarray]:
    order = np.argsort(word, kind="stable")
    order = order[word[order] >= 0]
    bounds = np.searchsorted(word[order], np.arange(n_words + 1))
    return [order[bounds[w] : bounds[w + 1]] for w in range(n_words)]
