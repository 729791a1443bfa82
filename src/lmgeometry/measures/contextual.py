"""How contextual are the vectors? Ethayarajh (2019) context measures and token-level measures.

Two families of measures over the hidden states of one layer:

* **Corpus-level context measures** of Ethayarajh (2019), "How contextual are contextualized
  word representations?" (EMNLP): self-similarity (SelfSim, his eq. 1), intra-sentence
  similarity (IntraSim, eq. 2), maximum explainable variance (MEV, eq. 3), the anisotropy
  baselines of section 3.4 (eq. 4), and the first-principal-component "static embeddings" of
  his Table 1.
* **Token-level measures** of seed 000 (the GPT-2 vs. BERT embedding-space essay): each token's
  similarity to the other tokens of its sentence, to the other occurrences of its word, and to
  its k = 10 nearest neighbours.

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
word MEV              centred PCA (``sklearn.decomposition.PCA``)    centred
MEV baseline          ``TruncatedSVD`` (uncentred directions,        centred, on as many random
                      centred variances) of the 1,000 pooled words   occurrences as the word has
cosine baseline       1,000 sentences, one random word each, then    exact mean over all pairs
                      1,000 pairs drawn *with replacement* from      of occurrences in different
                      that pool (a word can be paired with itself)   sentences
IntraSim baseline     the cosine baseline                            IntraSim of random
                                                                     pseudo-sentences of the
                                                                     same lengths
rounding              every per-word / per-sentence value rounded    none
                      to 3 decimals before averaging
====================  =============================================  ===========================

Conventions used throughout:

* Rows are normalised in float64 (float64 input is first divided row-wise by its largest
  absolute entry), so the large norms of decoder hidden states (GPT-2's first token reaches
  norms in the thousands) cannot overflow or lose precision; MEV and PCA rescale each matrix by
  one positive factor, which leaves them unchanged. Non-finite rows raise ``ValueError``.
* Many small eigenproblems (per-word MEV, PC1) run with single-threaded BLAS
  (``threadpoolctl``): they gain nothing from threads, and oversubscribed OpenBLAS threads slow
  them down by orders of magnitude on shared cores.
* A layer larger than memory (a memory map, a sharded store's ``LayerView``) is passed as
  :meth:`UnitRows.stream`: every corpus-level measure here then reads it in row chunks, or
  only the rows of one word or of a sampled pool, and gives the in-memory values; the
  nearest-neighbour measures need the layer in memory.
* A zero row has no direction: every pair that involves one is left out of a cosine mean (the
  authors' ``np.nanmean`` over ``scipy`` cosines does the same), and per-row results for it are
  NaN. Means over an empty set are NaN.
* The word identity is the **lower-cased** ``text`` column (the authors' index was
  case-sensitive; ``Estimators.lowercase`` switches this). Rows with ``is_punct`` are left out of
  the word-level measures, as in the authors' ``index_tokens``. The population ``O`` of the
  baselines is every row given (punctuation included, as in the authors' HDF5 sentences).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from lmgeometry.measures.similarity import CHUNK_ROWS, as_rows, row_norms, unit_rows
from lmgeometry.measures.stats import RngLike, bootstrap_ci

__all__ = [
    "anisotropy_baseline",
    "context_measures",
    "context_tables",
    "ContextTables",
    "cross_sentence_replicates",
    "Estimators",
    "get_preset",
    "intra_sentence_similarity",
    "LayerVectors",
    "lowest_self_similarity",
    "max_explainable_variance",
    "mean_embeddings",
    "mean_pairwise_cosine",
    "mev_baseline",
    "MevMethod",
    "nearest_neighbours",
    "neighbour_measures",
    "PoolScheme",
    "PRESETS",
    "sample_ordered_pairs",
    "self_similarity",
    "static_embeddings",
    "summarise_tokens",
    "token_intra_similarity",
    "token_measures",
    "truncated_svd_variance_ratio",
    "UnitRows",
    "word_measures",
]



MevMethod = Literal["centered", "uncentered", "truncated_svd"]

PoolScheme = Literal["sentence", "occurrence"]


_BATCH_ELEMENTS = 1 << 22  # float64 elements per batched-eigenproblem stack (32 MiB)


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

    @classmethod
    def of(cls, X: np.ndarray | UnitRows) -> UnitRows:
        """The unit rows of ``X`` (``X`` itself when it already is a :class:`UnitRows`)."""
        if isinstance(X, UnitRows):
            return X
        return cls(*unit_rows(X))

    @classmethod
    def stream(cls, X: np.ndarray, chunk_rows: int = CHUNK_ROWS) -> UnitRows:
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
        """
        reader = _UnitReader(X, chunk_rows)
        return cls(reader, reader.norms)  # type: ignore[arg-type]

    def take(self, rows: np.ndarray | slice) -> UnitRows:
        """Only these rows, in this order (in memory)."""
        return UnitRows(self.U[rows], self.norms[rows])

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


def _unit(layer_vectors: LayerVectors) -> tuple[np.ndarray, np.ndarray]:
    """``(U, norms)`` of raw rows or of a :class:`UnitRows`."""
    if isinstance(layer_vectors, UnitRows):
        return layer_vectors.U, layer_vectors.norms
    return unit_rows(layer_vectors)


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


def mean_pairwise_cosine(X: np.ndarray) -> float:
    """Mean cosine similarity over all ordered pairs ``i != j`` of the rows of ``X``.

    .. math:: \\frac{1}{n^2 - n} \\sum_i \\sum_{j \\ne i} \\cos(x_i, x_j)
              = \\frac{\\lVert \\sum_i \\hat x_i \\rVert^2 - n}{n^2 - n},
              \\quad \\hat x_i = x_i / \\lVert x_i \\rVert

    This is Ethayarajh's (2019) self-similarity, eq. 1, when the rows are the occurrences of one
    word. Zero rows are left out (``n`` counts non-zero rows); fewer than two non-zero rows give
    NaN. Invariant to positive scaling of each row.

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    float
    """
    U, norms = unit_rows(X)
    return _cross_mean(U, norms > 0, None)


def sample_ordered_pairs(
    n: int,
    n_pairs: int | None,
    rng: RngLike = None,
    *,
    sentence_ids: np.ndarray | Sequence | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Ordered index pairs ``(i, j)``, ``i != j``, as the authors' self-similarity draws them.

    The admissible pairs are all ordered pairs of distinct indices in ``range(n)`` (and, when
    ``sentence_ids`` is given, only those from different sentences). If there are at most
    ``n_pairs`` of them (or ``n_pairs`` is None) all are returned, in row-major order;
    otherwise a uniformly random subset of exactly ``n_pairs`` of them, drawn **without
    replacement**, in random order. This is what ``random.sample(index_pairs, 1000)`` does in
    the authors' ``calculate_word_similarity_across_sentences``.

    Parameters
    ----------
    n : int
        Number of rows.
    n_pairs : int or None
        Largest number of pairs to return.
    rng : int, Generator or None
        Random source (only used when sampling).
    sentence_ids : array of shape (n,), optional
        Sentence of each row; pairs within one sentence are then inadmissible.

    Returns
    -------
    i, j : int64 arrays of equal length
    """
    codes = None if sentence_ids is None else _as_codes(sentence_ids)
    if codes is not None and len(codes) != n:
        raise ValueError("sentence_ids must have length n")
    total = n * (n - 1)
    if codes is None:
        admissible = total
    else:
        counts = np.bincount(codes) if n else np.zeros(0, dtype=np.int64)
        admissible = n * n - int(counts @ counts)
    if n_pairs is None or admissible <= n_pairs:
        mask = ~np.eye(n, dtype=bool)
        if codes is not None:
            mask &= codes[:, None] != codes[None, :]
        i, j = np.nonzero(mask)
        return i.astype(np.int64), j.astype(np.int64)
    gen = _rng(rng)
    # Oversample from all ordered pairs and keep the first admissible ones: a uniformly random
    # ordered sample, filtered, is a uniformly random sample of the admissible pairs.
    draw = min(total, int(np.ceil(1.2 * n_pairs * total / admissible)) + 32)
    while True:
        flat = gen.choice(total, size=draw, replace=False)
        i = flat // (n - 1)
        r = flat % (n - 1)
        j = r + (r >= i)
        if codes is not None:
            ok = codes[i] != codes[j]
            i, j = i[ok], j[ok]
        if len(i) >= n_pairs:
            return i[:n_pairs].astype(np.int64), j[:n_pairs].astype(np.int64)
        draw = min(total, 2 * draw)


def self_similarity(
    X: np.ndarray,
    n_pairs: int | None = None,
    rng: RngLike = None,
    *,
    sentence_ids: np.ndarray | Sequence | None = None,
) -> float:
    """Self-similarity of one word from its occurrence matrix (Ethayarajh 2019, eq. 1).

    .. math:: \\mathrm{SelfSim}(w) = \\frac{1}{n^2 - n} \\sum_j \\sum_{k \\ne j}
              \\cos(f(s_j, i_j), f(s_k, i_k))

    Parameters
    ----------
    X : ndarray of shape (n, d)
        One row per occurrence of the word.
    n_pairs : int or None
        None: every admissible ordered pair, computed exactly in closed form (then, without
        ``sentence_ids``, equal to :func:`mean_pairwise_cosine`). An int: the authors'
        estimator, the mean over at most ``n_pairs`` ordered pairs drawn without replacement
        (:func:`sample_ordered_pairs`); their code uses 1,000.
    rng : int, Generator or None
        Random source for the pair sample.
    sentence_ids : array of shape (n,), optional
        Sentence of each occurrence. If given, pairs of occurrences in the same sentence are
        left out (the paper's "n unique contexts"); the authors' code keeps them.

    Returns
    -------
    float
        Mean cosine over the pairs whose rows are both non-zero; NaN if there are none.
    """
    U, norms = unit_rows(X)
    nz = norms > 0
    if n_pairs is None:
        codes = None if sentence_ids is None else _as_codes(sentence_ids)
        if codes is not None and len(codes) != len(U):
            raise ValueError("sentence_ids must have one entry per row")
        return _cross_mean(U, nz, codes)
    i, j = sample_ordered_pairs(len(U), n_pairs, rng, sentence_ids=sentence_ids)
    ok = nz[i] & nz[j]
    return _mean_or_nan(_pairdot(U, i[ok], j[ok]))


def intra_sentence_similarity(S: np.ndarray) -> float:
    """Intra-sentence similarity of one sentence (Ethayarajh 2019, eq. 2).

    .. math:: \\mathrm{IntraSim}(s) = \\frac{1}{n} \\sum_i \\cos(\\vec s, f(s, i)),
              \\qquad \\vec s = \\frac{1}{n} \\sum_i f(s, i)

    The sentence vector is the mean of the *raw* word vectors (so a word with a very large norm,
    such as a decoder's first token, dominates its direction). The mean over ``i`` runs over
    the non-zero rows; NaN if the sentence vector is zero.

    Parameters
    ----------
    S : ndarray of shape (n, d)
        The word vectors of one sentence.

    Returns
    -------
    float
    """
    U, norms = unit_rows(S)
    nz = norms > 0
    if not nz.any():
        return float("nan")
    m = (norms / norms.max()) @ U  # direction of sum_i x_i, without overflow
    mu, mnorm = unit_rows(m[None, :])
    if mnorm[0] == 0:
        return float("nan")
    return float((U[nz] @ mu[0]).mean())


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


_DENSE_EIG_MAX = 64  # below this size a dense eigensolver beats Lanczos


def _top_eig(X: np.ndarray, vector: bool = False) -> tuple[float, np.ndarray | None]:
    """Largest eigenvalue of ``X^T X`` (= ``sigma_1^2`` of ``X``) and, if asked, its unit
    eigenvector (the top right singular vector of ``X``).

    Uses the smaller of the two Gram matrices; above ``_DENSE_EIG_MAX`` rows and columns it
    runs Lanczos on it (``scipy.sparse.linalg.eigsh``, relative tolerance 1e-9, fixed start
    vector), which avoids an ``O(m^3)`` dense eigensolve.
    """
    n, d = X.shape
    if min(n, d) == 0:
        return 0.0, (np.zeros(d) if vector else None)
    G = X @ X.T if n <= d else X.T @ X  # one GEMM beats many memory-bound GEMVs
    lam, top = _gram_top(G, vector)
    if not vector:
        return lam, None
    v = X.T @ top if n <= d else top
    nv = np.linalg.norm(v)
    return lam, (v / nv if nv > 0 else v)


def _gram_top(G: np.ndarray, vector: bool = False) -> tuple[float, np.ndarray]:
    """Largest eigenvalue of a symmetric PSD matrix and its eigenvector (zeros if ``G`` is
    zero, or if not asked): dense up to ``_DENSE_EIG_MAX``, else Lanczos as in :func:`_top_eig`."""
    m = len(G)
    if m <= _DENSE_EIG_MAX:
        if not vector:
            return float(np.linalg.eigvalsh(G)[-1]), np.zeros(m)
        vals, vecs = np.linalg.eigh(G)
        return float(vals[-1]), vecs[:, -1]
    if not np.any(G):  # a zero matrix (e.g. identical rows, centred): ARPACK would fail
        return 0.0, np.zeros(m)
    v0 = np.random.default_rng(0).standard_normal(m)
    vals, vecs = spla.eigsh(G, k=1, which="LA", tol=1e-9, v0=v0)
    return float(vals[0]), vecs[:, 0]


def _streamed_gram(U: _UnitReader, norms: np.ndarray, rows: np.ndarray, centered: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``Z^T Z`` (d x d) and the mean row of a group too large to hold, read in chunks.

    ``Z`` holds the raw rows ``norms[g] * U[g]`` divided by their largest norm (one positive
    factor: MEV and PC1 do not change), centred if asked; rows that are all equal up to
    rounding give a zero matrix, by :func:`_center`'s rule. Two passes over the rows (the
    mean, then the centred products); memory O(d^2 + chunk_rows d).
    """
    nr = norms[rows]
    top = nr.max() if len(nr) else 0.0
    scale = nr / top if top > 0 else np.zeros_like(nr)
    parts = [slice(start, start + U.chunk_rows) for start in range(0, len(rows), U.chunk_rows)]
    d = U.shape[1]
    total, largest = np.zeros(d), 0.0
    for p in parts:
        Z = U[rows[p]] * scale[p, None]
        total += Z.sum(axis=0)
        largest = max(largest, float(np.abs(Z).max()))
    mean = total / len(rows)
    G, spread = np.zeros((d, d)), 0.0
    for p in parts:
        Z = U[rows[p]] * scale[p, None]
        if centered:
            Z -= mean
            spread = max(spread, float(np.abs(Z).max()))
        G += Z.T @ Z
    if centered and spread <= 4 * len(rows) * np.finfo(np.float64).eps * largest:
        G[:] = 0.0
    return G, mean


def _top_share(X: np.ndarray) -> float:
    """``sigma_1^2 / sum_i sigma_i^2`` of a float64 matrix (NaN if it is all zero)."""
    total = float(np.einsum("ij,ij->", X, X))
    if total == 0.0:
        return float("nan")
    return float(np.clip(_top_eig(X)[0] / total, 0.0, 1.0))


def _center(X: np.ndarray) -> np.ndarray:
    """Subtract the mean row of each matrix in a (..., n, d) stack, in place.

    A matrix whose residual is at rounding level (``max |x - mean| <= 4 n eps max |x|``, i.e.
    all rows equal up to float error) is set exactly to zero, so that "no variance" is
    recognised instead of measuring the directions of rounding noise.
    """
    n = X.shape[-2]
    top = np.abs(X).max(axis=(-2, -1), keepdims=True)
    X -= X.mean(axis=-2, keepdims=True)
    flat = np.abs(X).max(axis=(-2, -1), keepdims=True) <= 4 * n * np.finfo(np.float64).eps * top
    X *= ~flat
    return X


def _scaled(X: np.ndarray, centered: bool) -> np.ndarray:
    X = np.array(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("rows must be finite (found NaN or infinity)")
    scale = np.abs(X).max() if X.size else 0.0
    if scale > 0:
        X /= scale  # every ratio below is invariant to one global positive scale
    if centered:
        _center(X)
    return X


def max_explainable_variance(X: np.ndarray, centered: bool = False) -> float:
    """Maximum explainable variance (Ethayarajh 2019, eq. 3).

    .. math:: \\mathrm{MEV}(w) = \\frac{\\sigma_1^2}{\\sum_i \\sigma_i^2}

    with ``sigma_i`` the singular values of the occurrence matrix ``X`` (of ``X - mean(X)``
    if ``centered``). The paper's eq. 3 is stated on ``X`` itself but read as "the proportion
    of variance explained by the first principal component", and the authors' code computes it
    with ``sklearn.decomposition.PCA`` (``explained_variance_ratio_[0]``, i.e. centred), then
    reports ``min(1, round(MEV, 3))``. NaN for an all-zero matrix, and so, when centred, for
    rows that are all equal (up to rounding). Invariant to one global positive scale, not to
    per-row scaling.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    centered : bool
        Subtract the column means first.

    Returns
    -------
    float in [0, 1]
    """
    return _top_share(_scaled(X, centered))


def truncated_svd_variance_ratio(X: np.ndarray) -> float:
    """First ``explained_variance_ratio_`` of ``sklearn.decomposition.TruncatedSVD`` (exact).

    The authors' MEV baseline (``explore_embedding_space``) is
    ``TruncatedSVD(n_components=100).fit(word_vectors).explained_variance_ratio_[0]``. Truncated
    SVD does not centre, so its first direction ``v_1`` is the top right singular vector of the
    *uncentred* ``X``; but scikit-learn reports the *centred* variance along it over the total
    centred variance:

    .. math:: \\frac{\\operatorname{Var}(X v_1)}{\\sum_k \\operatorname{Var}(X_{:,k})}

    This is neither the paper's definition nor an uncentred ``sigma_1^2 / sum sigma_i^2``. For
    a cloud far from the origin ``v_1`` points at the mean and the ratio is the share of
    variance along the mean direction. NaN if ``X`` has no variance.

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    float in [0, 1]
    """
    X = _scaled(X, centered=False)
    Z = _center(X.copy())
    total = float(np.einsum("ij,ij->", Z, Z))
    if total == 0.0:
        return float("nan")
    _, v = _top_eig(X, vector=True)  # direction from the uncentred matrix
    proj = Z @ v  # centred projections: n Var(X v_1)
    return float(np.clip(proj @ proj / total, 0.0, 1.0))


def _mev_of(X: np.ndarray, method: MevMethod) -> float:
    if method == "truncated_svd":
        return truncated_svd_variance_ratio(X)
    if method not in ("centered", "uncentered"):
        raise ValueError(f"unknown MEV method {method!r}")
    return max_explainable_variance(X, centered=method == "centered")


def _draw_pool(
    sent_codes: np.ndarray, n: int, scheme: PoolScheme, rng: np.random.Generator
) -> np.ndarray:
    """Row indices of a random pool of ``min(n, available)`` word occurrences."""
    N = len(sent_codes)
    if scheme == "occurrence":
        return np.sort(rng.choice(N, size=min(n, N), replace=False))
    if scheme != "sentence":
        raise ValueError(f"unknown pool scheme {scheme!r}")
    order = np.argsort(sent_codes, kind="stable")
    counts = np.bincount(sent_codes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    present = np.flatnonzero(counts)
    chosen = rng.choice(present, size=min(n, len(present)), replace=False)
    offsets = rng.integers(0, counts[chosen])
    return order[starts[chosen] + offsets]


def _pool_cosine(
    U: np.ndarray,
    nz: np.ndarray,
    sent_codes: np.ndarray,
    pool: np.ndarray,
    replace: bool,
    n_pairs: int | None,
    rng: np.random.Generator,
) -> float:
    if len(pool) == 0:
        return float("nan")
    if replace:
        m = len(pool) if n_pairs is None else n_pairs
        a = pool[rng.integers(0, len(pool), size=m)]
        b = pool[rng.integers(0, len(pool), size=m)]
        ok = nz[a] & nz[b]
        return _mean_or_nan(_pairdot(U, a[ok], b[ok]))
    if n_pairs is None:
        return _cross_mean(U[pool], nz[pool], sent_codes[pool])
    i, j = sample_ordered_pairs(len(pool), n_pairs, rng, sentence_ids=sent_codes[pool])
    a, b = pool[i], pool[j]
    ok = nz[a] & nz[b]
    return _mean_or_nan(_pairdot(U, a[ok], b[ok]))


def anisotropy_baseline(
    vectors: LayerVectors,
    sentence_ids: np.ndarray | Sequence,
    n: int | None = 1000,
    rng: RngLike = None,
    *,
    replace: bool = False,
    scheme: PoolScheme = "occurrence",
    n_pairs: int | None = None,
) -> float:
    """Cosine anisotropy baseline (Ethayarajh 2019, section 3.4, eq. 4).

    .. math:: \\mathrm{Baseline}(f_\\ell) = \\mathbb{E}_{x, y \\sim U(\\mathcal O)}
              [\\cos(f_\\ell(x), f_\\ell(y))]

    over word occurrences ``x, y`` from *different* sentences ("uniformly randomly sampled words
    from different contexts").

    Estimators:

    * ``n=None``: the exact mean over all ordered pairs of occurrences in different sentences,
      in closed form (``||S||^2 - sum_s ||S_s||^2`` over ``c^2 - sum_s c_s^2``). No sampling.
    * otherwise a pool of ``min(n, available)`` occurrences is drawn: ``scheme="sentence"``
      takes that many distinct sentences uniformly and one word uniformly from each (the
      authors' code; note this favours words of short sentences), ``scheme="occurrence"`` takes
      occurrences uniformly without replacement. Then

      - ``replace=True`` (the authors' code): ``n_pairs`` (default: the pool size) pairs, each
        member drawn independently with replacement from the pool. A word can be paired with
        itself (cosine 1), which biases the estimate up by about ``(1 - b) / n``.
      - ``replace=False``: every ordered pair of distinct pool members from different sentences
        (or ``n_pairs`` of them drawn without replacement).

    Parameters
    ----------
    vectors : ndarray of shape (N, d), or its :class:`UnitRows`
        All word occurrences of one layer.
    sentence_ids : array of shape (N,)
    n : int or None
        Pool size; None for the exact population mean.
    rng : int, Generator or None
    replace, scheme, n_pairs
        See above.

    Returns
    -------
    float
        NaN if no admissible pair has two non-zero rows.
    """
    U, norms = _unit(vectors)
    codes = _as_codes(sentence_ids)
    if len(codes) != len(U):
        raise ValueError("sentence_ids must have one entry per row")
    nz = norms > 0
    if n is None:
        return _cross_mean(U, nz, codes)
    gen = _rng(rng)
    pool = _draw_pool(codes, n, scheme, gen)
    return _pool_cosine(U, nz, codes, pool, replace, n_pairs, gen)


def cross_sentence_replicates(
    vectors: LayerVectors,
    sentence_ids: np.ndarray | Sequence,
    counts: np.ndarray,
) -> np.ndarray:
    """The exact cosine baseline (eq. 4) of resampled sets of sentences: a sentence bootstrap.

    With ``T_s = sum_{i in s} u_i`` the sum of sentence ``s``'s unit rows and ``c_s`` its
    number of non-zero rows, a resample that takes sentence ``s`` ``m_s`` times has the mean
    cosine over pairs of occurrences in different sentences

    .. math:: b(m) = \\frac{\\lVert \\sum_s m_s T_s \\rVert^2 - \\sum_s m_s^2
              \\lVert T_s \\rVert^2}{(\\sum_s m_s c_s)^2 - \\sum_s m_s^2 c_s^2}

    (pairs within one sentence, and between two copies of it, are left out, as the baseline
    leaves out pairs from the same sentence). ``m = 1`` gives the exact baseline,
    :func:`anisotropy_baseline` with ``n=None``. Drawing ``counts`` once and using it for
    every layer resamples the same sentences in every layer, so a statistic over layers (the
    smallest baseline, a trend) gets a joint interval. Cost ``O(B S d)`` for ``B`` resamples of
    ``S`` sentences, with no pairwise Gram matrix.

    Parameters
    ----------
    vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    sentence_ids : array of shape (N,)
    counts : array of shape (B, S)
        How often each resample takes each sentence; columns follow the sorted distinct
        ``sentence_ids`` (e.g. rows of ``numpy.random.Generator.multinomial(S, [1 / S] * S)``).

    Returns
    -------
    ndarray of shape (B,)
        NaN for a resample with no admissible pair.
    """
    U, norms = _unit(vectors)
    _, codes = np.unique(np.asarray(sentence_ids), return_inverse=True)
    if len(codes) != len(U):
        raise ValueError("sentence_ids must have one entry per row")
    n_s = int(codes.max()) + 1 if len(codes) else 0
    M = np.asarray(counts, dtype=np.float64)
    if M.ndim != 2 or M.shape[1] != n_s:
        raise ValueError(f"counts must have one column per sentence ({n_s}), not {M.shape}")
    c = np.bincount(codes, weights=(norms > 0).astype(np.float64), minlength=n_s)
    if isinstance(U, _UnitReader):  # P = M T is linear in T: add each chunk's share of T
        P = np.zeros((len(M), U.shape[1]))
        for groups, sums in _block_group_sums(U, codes):
            P += M[:, groups] @ sums
        TT = _sq_norms_of_sums(U, codes, n_s)
    else:
        T = _group_sum(U, codes, n_s)
        P, TT = M @ T, np.einsum("sd,sd->s", T, T)
    M2 = M * M
    num = np.einsum("bd,bd->b", P, P) - M2 @ TT
    den = (M @ c) ** 2 - M2 @ (c * c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def mev_baseline(
    vectors: np.ndarray,
    sentence_ids: np.ndarray | Sequence,
    n: int = 1000,
    rng: RngLike = None,
    *,
    method: MevMethod = "centered",
    scheme: PoolScheme = "occurrence",
) -> float:
    """MEV anisotropy baseline (Ethayarajh 2019, section 3.4).

    "The proportion of variance in uniformly randomly sampled word representations that is
    explained by their first principal component": the MEV of a pool of ``min(n, available)``
    random occurrences, drawn as in :func:`anisotropy_baseline`.

    ``method``:

    * ``"centered"``: :func:`max_explainable_variance` with centring (the paper's reading, and
      what the authors' code uses for each word's own MEV).
    * ``"uncentered"``: ``sigma_1^2 / sum sigma_i^2`` of the raw pool.
    * ``"truncated_svd"``: what the authors' code does for the baseline,
      :func:`truncated_svd_variance_ratio` (uncentred direction, centred variances), while
      each word's MEV is a centred PCA. In the authors' published statistics
      (``gpt2/embedding_space_stats.json``) this baseline is 0.97-0.998 for GPT-2 layers 2-11,
      against a raw word MEV the paper puts near 0.3, so the adjusted MEV of those layers is
      negative (the paper's Figure 4 shows it positive).

    Note that MEV depends strongly on the number of rows (``k`` centred random rows have MEV
    of at least ``1 / (k - 1)``), so a 1,000-row baseline is not comparable with a 5-row word;
    :class:`Estimators` ``mev_baseline_matched`` draws a size-matched baseline per word instead.

    Parameters
    ----------
    vectors : ndarray of shape (N, d)
        Or a memory map or lazy layer view: only the pool's rows are read.
    sentence_ids : array of shape (N,)
    n : int
    rng : int, Generator or None
    method : {"centered", "uncentered", "truncated_svd"}
    scheme : {"sentence", "occurrence"}

    Returns
    -------
    float in [0, 1]
    """
    codes = _as_codes(sentence_ids)
    X = as_rows(vectors)  # memory maps and lazy views stay lazy
    if len(codes) != len(X):
        raise ValueError("sentence_ids must have one entry per row")
    pool = _draw_pool(codes, n, scheme, _rng(rng))
    return _mev_of(np.asarray(X[np.sort(pool)], dtype=np.float64), method)


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
    mev_centered : bool
        Centre each word's occurrence matrix before its MEV (the authors' code: yes, via
        ``sklearn.decomposition.PCA``; eq. 3 as printed: no).
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
        If True, each word's MEV is adjusted by the MEV (same centring as the word's) of as
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
    mev_centered: bool
    baseline_scheme: PoolScheme
    baseline_n: int | None
    baseline_replace: bool
    mev_baseline_method: MevMethod
    mev_baseline_n: int
    mev_baseline_matched: bool
    intra_baseline: Literal["pairwise", "matched"]
    round_decimals: int | None
    lowercase: bool = True
    exclude_punct: bool = True


PRESETS: dict[str, Estimators] = {
    "ethayarajh2019": Estimators(
        name="ethayarajh2019",
        min_count_unit="occurrences",
        selfsim_same_sentence=True,
        selfsim_max_pairs=1000,
        mev_centered=True,
        baseline_scheme="sentence",
        baseline_n=1000,
        baseline_replace=True,
        mev_baseline_method="truncated_svd",
        mev_baseline_n=1000,
        mev_baseline_matched=False,
        intra_baseline="pairwise",
        round_decimals=3,
    ),
    "corrected": Estimators(
        name="corrected",
        min_count_unit="sentences",
        selfsim_same_sentence=False,
        selfsim_max_pairs=None,
        mev_centered=True,
        baseline_scheme="occurrence",
        baseline_n=None,
        baseline_replace=False,
        mev_baseline_method="centered",
        mev_baseline_n=1000,
        mev_baseline_matched=True,
        intra_baseline="matched",
        round_decimals=None,
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


def _mev_many_impl(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], centered: bool
) -> np.ndarray:
    """MEV of the raw rows ``norms[g] * U[g]`` of every index group, batched by group size."""
    out = np.full(len(groups), np.nan)
    d = U.shape[1]
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    for n in np.unique(sizes):
        which = np.flatnonzero(sizes == n)
        if n == 0:
            continue
        if isinstance(U, _UnitReader) and n > U.chunk_rows:  # a group larger than a chunk
            for w in which:
                G, _ = _streamed_gram(U, norms, groups[w], centered)
                total = float(np.trace(G))
                out[w] = np.clip(_gram_top(G)[0] / total, 0.0, 1.0) if total > 0 else np.nan
            continue
        if n > _DENSE_EIG_MAX:
            for w in which:
                X = U[groups[w]] * norms[groups[w], None]
                out[w] = max_explainable_variance(X, centered=centered)
            continue
        per = max(1, _BATCH_ELEMENTS // int(n * d))
        for start in range(0, len(which), per):
            ws = which[start : start + per]
            idx = np.stack([groups[w] for w in ws])  # (k, n)
            nr = norms[idx]
            top = nr.max(axis=1, keepdims=True)
            scale = np.divide(nr, top, out=np.zeros_like(nr), where=top > 0)
            X = U[idx] * scale[..., None]  # (k, n, d), rows of norm <= 1
            if centered:
                _center(X)
            total = np.einsum("kij,kij->k", X, X)
            lam = np.linalg.eigvalsh(X @ X.transpose(0, 2, 1))[:, -1]
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(total > 0, lam / total, np.nan)
            out[ws] = np.clip(share, 0.0, 1.0)
    return out


def _mev_many(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], centered: bool
) -> np.ndarray:
    """MEV of every index group (see ``_mev_many_impl``) with single-threaded BLAS.

    Thousands of small Gram/eigen problems gain nothing from BLAS threads, and on shared,
    oversubscribed cores OpenBLAS threads spin-waiting make them up to 100x slower.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _mev_many_impl(U, norms, groups, centered)


def _pc1_many(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], centered: bool
) -> np.ndarray:
    """PC1 of every index group (see ``_pc1_many_impl``) with single-threaded BLAS."""
    with threadpool_limits(limits=1, user_api="blas"):
        return _pc1_many_impl(U, norms, groups, centered)


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
        table["mev"] = _round(_mev_many(U, norms, sel, est.mev_centered), est)
        if est.mev_baseline_matched:
            N = len(U)
            rand = [np.sort(rng_mev.choice(N, size=len(g), replace=False)) for g in sel]
            table["mev_baseline"] = _round(_mev_many(U, norms, rand, est.mev_centered), est)
    return table


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
    r_self, r_mev = _rng(seed).spawn(2)
    return _word_measures_from(U, norms, enc, est, min_contexts, measures, r_self, r_mev)


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


def context_measures(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    preset: str | Estimators = "corrected",
    seed: RngLike = 0,
    *,
    min_contexts: int = 5,
    n_intra_sentences: int | None = 500,
    n_boot: int = 1000,
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

    Returns
    -------
    dict
        ``preset``, ``n_words``, ``n_sentences``, the baselines, and for each of ``selfsim``,
        ``intrasim``, ``mev`` the raw and ``_adj`` means with ``_lo`` / ``_hi`` bounds.
    """
    est = get_preset(preset)
    t = context_tables(layer_vectors, words, est, seed, min_contexts=min_contexts,
                       n_intra_sentences=n_intra_sentences)
    boots = _rng(seed).spawn(7)[-1].spawn(6)
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


def context_tables(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    preset: str | Estimators = "corrected",
    seed: RngLike = 0,
    *,
    min_contexts: int = 5,
    n_intra_sentences: int | None = 500,
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
    r_pool, r_mevpool, r_self, r_mev, r_sent, r_pseudo, _ = _rng(seed).spawn(7)
    U, norms = _unit(layer_vectors)
    enc = _encode(words, len(U), est.lowercase, est.exclude_punct)
    base, mev_base = _context_baselines(U, norms, enc.sent, est, r_pool, r_mevpool)
    wt = _word_measures_from(U, norms, enc, est, min_contexts, ("selfsim", "mev"), r_self, r_mev)
    st = _sentence_table_from(U, norms, enc.sent, est, n_intra_sentences, r_sent, r_pseudo)
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
    boots: list[np.random.Generator],
) -> None:
    """Add the raw and adjusted means with bootstrap bounds of :func:`context_measures` to out."""

    def put(name: str, values: np.ndarray, g: np.random.Generator) -> None:
        mean, lo, hi = bootstrap_ci(values, n_boot, g)
        out[name], out[name + "_lo"], out[name + "_hi"] = mean, lo, hi

    def shifted(name: str, by: float) -> None:
        for suffix in ("", "_lo", "_hi"):
            out[name + "_adj" + suffix] = float(out[name + suffix]) - by

    put("selfsim", wt["selfsim"].to_numpy(), boots[0])
    shifted("selfsim", base)

    put("intrasim", st["intrasim"].to_numpy(), boots[1])
    if est.intra_baseline == "matched":
        out["intrasim_baseline"] = _mean_or_nan(st["intra_baseline"].dropna().to_numpy())
        put("intrasim_adj", (st["intrasim"] - st["intra_baseline"]).to_numpy(), boots[2])
    else:
        out["intrasim_baseline"] = base
        shifted("intrasim", base)

    put("mev", wt["mev"].to_numpy(), boots[3])
    if est.mev_baseline_matched:
        out["mev_baseline_used"] = _mean_or_nan(wt["mev_baseline"].dropna().to_numpy())
        put("mev_adj", (wt["mev"] - wt["mev_baseline"]).to_numpy(), boots[4])
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


def _orient(V: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Flip each unit row of ``V`` so that ``v . mean > 0`` (ties: largest-|entry| positive)."""
    dots = np.einsum("kd,kd->k", V, means)
    big = V[np.arange(len(V)), np.argmax(np.abs(V), axis=1)]
    flip = (dots < 0) | ((dots == 0) & (big < 0))
    V[flip] *= -1
    return V


def _unit_pc1(v: np.ndarray, mean: np.ndarray, G: np.ndarray) -> np.ndarray:
    """One group's PC1 as :func:`_pc1_many_impl` gives it, from its Gram matrix ``G``'s top
    eigenvector ``v``: unit, oriented to the mean; the unit mean when the group has no
    variance (``G`` zero); NaN for an all-zero group."""
    u = v if np.any(G) else mean
    nu = np.linalg.norm(u)
    if nu == 0:
        return np.full(len(v), np.nan)
    return _orient((u / nu)[None, :], mean[None, :])[0]


def _pc1_many_impl(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], centered: bool
) -> np.ndarray:
    """Unit PC1 of the raw rows ``norms[g] * U[g]`` of every group, oriented to the mean row.

    Groups of equal size up to ``_DENSE_EIG_MAX`` rows are solved as one batched ``eigh`` of
    their Gram matrices; larger groups one by one with :func:`_top_eig`. A group without
    variance gets its (unit) mean; an all-zero group gets NaN.
    """
    d = U.shape[1]
    out = np.full((len(groups), d), np.nan)
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    for n in np.unique(sizes):
        which = np.flatnonzero(sizes == n)
        if n == 0:
            continue
        if isinstance(U, _UnitReader) and n > U.chunk_rows:  # a group larger than a chunk
            for w in which:
                G, mean = _streamed_gram(U, norms, groups[w], centered)
                out[w] = _unit_pc1(_gram_top(G, vector=True)[1], mean, G)
            continue
        per = max(1, _BATCH_ELEMENTS // int(n * d)) if n <= _DENSE_EIG_MAX else 1
        for start in range(0, len(which), per):
            ws = which[start : start + per]
            idx = np.stack([groups[w] for w in ws])  # (k, n)
            nr = norms[idx]
            top = nr.max(axis=1, keepdims=True)
            scale = np.divide(nr, top, out=np.zeros_like(nr), where=top > 0)
            X = U[idx] * scale[..., None]  # (k, n, d)
            means = X.mean(axis=1)
            Z = _center(X.copy()) if centered else X
            if n <= _DENSE_EIG_MAX:
                _, vecs = np.linalg.eigh(Z @ Z.transpose(0, 2, 1))
                V = np.einsum("kn,knd->kd", vecs[:, :, -1], Z)
            else:
                V = _top_eig(Z[0], vector=True)[1][None, :]
            nv = np.linalg.norm(V, axis=1)
            flat = ~(np.abs(Z).max(axis=(1, 2)) > 0) | (nv == 0)
            V[flat] = means[flat]
            nv[flat] = np.linalg.norm(means[flat], axis=1)
            ok = nv > 0
            V[ok] /= nv[ok, None]
            V[~ok] = np.nan
            out[ws] = _orient(V, means)
    return out


def static_embeddings(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    min_contexts: int = 5,
    *,
    centered: bool = True,
    lowercase: bool = True,
    exclude_punct: bool = True,
) -> dict[str, np.ndarray]:
    """PC1 "static embeddings" of Ethayarajh (2019, section 4.3, Table 1).

    For each word with at least ``min_contexts`` distinct sentences, the first principal
    component of its occurrence matrix ``X`` (n x d): the top right singular vector ``v_1`` of
    ``X - mean(X)`` (``centered=True``, what the authors' code does with
    ``sklearn.decomposition.PCA(n_components=1).components_[0]``) or of ``X`` itself.

    A singular vector has no sign; here it is oriented so that ``v_1 . mean(X) > 0`` (ties:
    largest-magnitude entry positive). scikit-learn instead fixes signs by its ``svd_flip``
    convention, which makes the sign of the authors' vectors arbitrary with respect to the
    word's meaning. Centred PC1 is the main direction of *variation* between a word's contexts,
    not its average direction; uncentred PC1 is close to the mean direction when the
    occurrences are anisotropic. If every occurrence is the same vector, the centred matrix is
    zero and the (unit) mean is returned.

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    words : DataFrame
        Columns ``sentence_id``, ``text``, optionally ``is_punct``.
    min_contexts : int
        Minimum number of distinct sentences.
    centered : bool
    lowercase : bool
        Word identity is the lower-cased text.
    exclude_punct : bool

    Returns
    -------
    dict
        Word -> unit vector (float64, shape (d,)).
    """
    U, norms = _unit(layer_vectors)
    enc = _encode(words, len(U), lowercase, exclude_punct)
    groups = _rows_by_word(enc.word, len(enc.vocab))
    codes = np.flatnonzero(enc.n_sent >= min_contexts)
    V = _pc1_many(U, norms, [groups[w] for w in codes], centered)
    return {str(enc.vocab[w]): V[i] for i, w in enumerate(codes)}


def mean_embeddings(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    min_contexts: int = 5,
    *,
    lowercase: bool = True,
    exclude_punct: bool = True,
) -> dict[str, np.ndarray]:
    """A word's mean vector over its occurrences, for the words :func:`static_embeddings` keeps.

    .. math:: \\bar x_w = \\frac{1}{n} \\sum_{j=1}^{n} f(s_j, i_j)

    normalised to unit length. On layer 0 of a model without position embeddings (rotary
    decoders) every occurrence of a word has the same vector, so this is the word's input
    embedding (the mean of its pieces' embedding rows); with learned positions (BERT-like
    encoders) it is the input embedding plus the mean position and type embedding, after the
    layer norm. Seed 001's Table 1 compares PC1 vectors with static embeddings; a model's own
    input vectors are the static baseline it has.

    Returns
    -------
    dict
        Word -> unit vector (float64, shape (d,)), for words with at least ``min_contexts``
        distinct sentences; a word whose mean is zero is left out.
    """
    U, norms = _unit(layer_vectors)
    enc = _encode(words, len(U), lowercase, exclude_punct)
    top = float(norms.max()) if len(norms) else 0.0
    M = _group_sum(U, enc.word, len(enc.vocab), weights=norms / top if top > 0 else norms)
    Mu, mn = unit_rows(M)
    keep = np.flatnonzero((enc.n_sent >= min_contexts) & (mn > 0))
    return {str(enc.vocab[w]): Mu[w] for w in keep}


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
    ``block_size`` queries is multiplied against all rows (a ``block_size x N`` Gram block), the
    query itself, zero rows and rows outside ``candidates`` are masked with ``-inf``, and
    ``np.argpartition`` picks the top ``k`` per row, which are then sorted by decreasing cosine
    (ties by index). Peak extra memory is about ``N * d * itemsize`` for the unit rows plus
    ``block_size * N * (itemsize + 8)`` bytes for one Gram block and its partition indices.
    Cost ``O(m N d)`` for ``m`` queries.

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


def _neighbours(
    vectors: LayerVectors,
    k: int,
    block_size: int,
    queries: np.ndarray | Sequence[int] | None,
    dtype: type[np.floating],
    masks: Sequence[np.ndarray | None],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`nearest_neighbours` under several candidate masks from one Gram block each."""
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
        for j, a in enumerate(allowed):
            Gm = G if j == len(allowed) - 1 else G.copy()
            if not a.all():
                Gm[:, ~a] = -np.inf
            top = np.argpartition(Gm, N - k, axis=1)[:, N - k :]
            vals = np.take_along_axis(Gm, top, axis=1)
            order = np.lexsort((top, -vals), axis=1)
            live = a[qb]
            idx, cos = out[j]
            idx[start : start + len(qb)][live] = np.take_along_axis(top, order, axis=1)[live]
            cos[start : start + len(qb)][live] = np.take_along_axis(vals, order, axis=1)[live]
    return out


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
