"""Static embeddings from contextual ones (Ethayarajh 2019, section 4.3, Table 1).

* :func:`static_embeddings`: each word's first principal component over its occurrences in one
  layer, solved for all words of equal frequency at once: centred and signed towards the
  word's mean (the ``corrected`` preset of :mod:`lmgeometry.measures.contextual`), or
  uncentred and signed as scikit-learn's 2019 ``TruncatedSVD`` signed it (the authors' vectors:
  ``TruncatedSVD(n_components=100).fit(X).components_[0]``; ``docs/SEED001_ESTIMATORS.md``);
* :func:`mean_embeddings`: each word's unit mean vector, the static baseline a model's own
  input layer gives;
* :func:`context_ranks` and :func:`budget_embeddings`: both from ``k`` contexts per word
  drawn without replacement (the same contexts for both), for a curve over the budget ``k``.

Words are the lower-cased ``text`` with at least ``min_contexts`` distinct sentences,
punctuation left out (:mod:`lmgeometry.measures.unit_rows`).

Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.mev import (
    _BATCH_ELEMENTS,
    _DENSE_EIG_MAX,
    _center,
    _gram_top,
    _streamed_gram,
    _top_eig,
)
from lmgeometry.measures.similarity import unit_rows
from lmgeometry.measures.stats import RngLike
from lmgeometry.measures.unit_rows import (
    LayerVectors,
    _encode,
    _group_sum,
    _rows_by_word,
    _unit,
    _UnitReader,
)

__all__ = ["budget_embeddings", "context_ranks", "mean_embeddings", "Orientation",
           "static_embeddings"]

#: The sign of a PC1 vector: towards the word's mean (``"mean"``), or scikit-learn's
#: ``svd_flip`` as its 2019 ``TruncatedSVD`` and ``PCA`` applied it (``"svd_flip"``: the
#: largest-magnitude entry of the left singular vector, i.e. of the decomposed rows'
#: projections ``Z v_1``, positive).
Orientation = Literal["mean", "svd_flip"]


def _pc1_many(
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], centered: bool,
    orientation: Orientation = "mean",
) -> np.ndarray:
    """PC1 of every index group (see ``_pc1_many_impl``) with single-threaded BLAS."""
    if orientation not in ("mean", "svd_flip"):
        raise ValueError(f"unknown PC1 orientation {orientation!r}; choose 'mean' or 'svd_flip'")
    with threadpool_limits(limits=1, user_api="blas"):
        return _pc1_many_impl(U, norms, groups, centered, orientation)



def _orient(V: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Flip each unit row of ``V`` so that ``v . mean > 0`` (ties: largest-|entry| positive)."""
    dots = np.einsum("kd,kd->k", V, means)
    big = V[np.arange(len(V)), np.argmax(np.abs(V), axis=1)]
    flip = (dots < 0) | ((dots == 0) & (big < 0))
    V[flip] *= -1
    return V



def _flip_by_projection(V: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Flip each row ``v`` of ``V`` whose projections ``P`` (the decomposed rows times ``v``,
    shape (k, n)) have their largest-magnitude entry negative: scikit-learn's ``svd_flip``
    with ``u_based_decision=True``, as ``randomized_svd`` (hence 2019's ``TruncatedSVD``) and
    2019's ``PCA`` applied it (first entry on ties, as ``argmax``)."""
    top = P[np.arange(len(P)), np.argmax(np.abs(P), axis=1)]
    V[top < 0] *= -1
    return V



def _streamed_flip(U: _UnitReader, norms: np.ndarray, rows: np.ndarray, v: np.ndarray,
                   mean: np.ndarray, centered: bool) -> np.ndarray:
    """:func:`_flip_by_projection` of one group too large to hold, its projections read in
    chunks (the rows scaled as :func:`lmgeometry.measures.mev._streamed_gram` scales them)."""
    nr = norms[rows]
    scale = nr / nr.max() if len(nr) and nr.max() > 0 else np.zeros_like(nr)
    P = np.concatenate([(U[rows[p]] * scale[p, None] - (mean if centered else 0.0)) @ v
                        for p in (slice(s, s + U.chunk_rows)
                                  for s in range(0, len(rows), U.chunk_rows))])
    return _flip_by_projection(v[None, :].copy(), P[None, :])[0]



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
    U: np.ndarray, norms: np.ndarray, groups: list[np.ndarray], centered: bool,
    orientation: Orientation,
) -> np.ndarray:
    """Unit PC1 of the raw rows ``norms[g] * U[g]`` of every group, signed by ``orientation``.

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
                if orientation == "svd_flip" and np.any(G):
                    out[w] = _streamed_flip(U, norms, groups[w], out[w], mean, centered)
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
            V = _orient(V, means)
            if orientation == "svd_flip":
                V[~flat] = _flip_by_projection(V[~flat], np.einsum("knd,kd->kn", Z, V)[~flat])
            out[ws] = V
    return out



@float_arrays("layer_vectors")
def static_embeddings(
    layer_vectors: LayerVectors,
    words: pd.DataFrame,
    min_contexts: int = 5,
    *,
    centered: bool = True,
    orientation: Orientation = "mean",
    lowercase: bool = True,
    exclude_punct: bool = True,
) -> dict[str, np.ndarray]:
    """PC1 "static embeddings" of Ethayarajh (2019, section 4.3, Table 1).

    For each word with at least ``min_contexts`` distinct sentences, the first principal
    component of its occurrence matrix ``X`` (n x d): the top right singular vector ``v_1`` of
    ``Z = X - mean(X)`` (``centered=True``, ``sklearn.decomposition.PCA``) or of ``Z = X``
    itself (``centered=False``: what the authors' vectors are,
    ``TruncatedSVD(n_components=100).fit(X).components_[0]`` in every version of their
    ``analyze.py`` but one, ``docs/SEED001_ESTIMATORS.md``).

    A singular vector has no sign. ``orientation="mean"`` signs it so that
    ``v_1 . mean(X) > 0`` (ties: largest-magnitude entry positive). ``"svd_flip"`` signs it as
    the authors' scikit-learn did (``randomized_svd``'s ``svd_flip`` on the left singular
    vector): the largest-magnitude entry of the projections ``Z v_1`` positive. Uncentred, the
    two agree whenever every occurrence projects on ``v_1`` with the same sign (by
    Perron-Frobenius, whenever every pair of occurrences has a positive dot product), so the
    authors' vectors point at the word's mean in an anisotropic layer; centred, ``"svd_flip"``
    is a sign unrelated to the word's meaning. Centred PC1 is the main direction of
    *variation* between a word's contexts, not its average direction; uncentred PC1 is close to
    the mean direction when the occurrences are anisotropic. If every occurrence is the same
    vector, the centred matrix is zero and the (unit) mean is returned.

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d), or its :class:`UnitRows`
    words : DataFrame
        Columns ``sentence_id``, ``text``, optionally ``is_punct``.
    min_contexts : int
        Minimum number of distinct sentences.
    centered : bool
    orientation : {"mean", "svd_flip"}
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
    V = _pc1_many(U, norms, [groups[w] for w in codes], centered, orientation)
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



def context_ranks(
    words: pd.DataFrame,
    rng: RngLike | list[int] = None,
    *,
    lowercase: bool = True,
    exclude_punct: bool = True,
) -> np.ndarray:
    """Each row's place in a random order of its word's contexts: a budget's draw.

    Every word's distinct sentences are put in a uniformly random order (one permutation per
    word, from ``rng``); a row gets the rank (0, 1, ...) of its sentence in its word's order, or
    -1 when it has no word (punctuation, with ``exclude_punct``). The rows of rank below ``k``
    are then ``k`` contexts per word drawn without replacement (all of a word's contexts when
    it has fewer), and the draw for ``k`` holds the draw for every smaller budget.

    Parameters
    ----------
    words : DataFrame
        Columns ``sentence_id``, ``text``, optionally ``is_punct``.
    rng : seed, seed list or Generator
    lowercase, exclude_punct : bool
        Word identity, as :func:`static_embeddings` has it.

    Returns
    -------
    ndarray of int64, shape (len(words),)
    """
    enc = _encode(words, len(words), lowercase, exclude_punct)
    keys = np.random.default_rng(rng).random(len(enc.ws_word))
    order = np.lexsort((keys, enc.ws_word))  # (word, sentence) pairs, by word, then at random
    start = np.searchsorted(enc.ws_word[order], enc.ws_word[order])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - start
    return np.where(enc.ws >= 0, rank[np.maximum(enc.ws, 0)], -1)



def budget_embeddings(
    layer_vectors: np.ndarray,
    words: pd.DataFrame,
    budgets: list[int] | tuple[int, ...] | range,
    rng: RngLike | list[int] = None,
    *,
    centered: bool = True,
    orientation: Orientation = "mean",
    lowercase: bool = True,
    exclude_punct: bool = True,
) -> dict[int, dict[str, dict[str, np.ndarray]]]:
    """PC1 and mean static embeddings from ``k`` contexts per word, for each budget ``k``.

    Ethayarajh (2019, section 4.3, Table 1) made a word's PC1 static embedding from all its
    occurrences in STS. Here a word ``w`` with distinct contexts :math:`S_w` keeps, at budget
    ``k``, the first ``k`` of one random order of :math:`S_w` (:func:`context_ranks`):
    :math:`T_k(w) \\subset T_{k+1}(w)`, drawn without replacement, the same rows for both
    embeddings, so that their scores are paired. With :math:`X_k` the occurrence rows of
    :math:`T_k(w)` and :math:`\\bar x_k` their mean,

    .. math:: \\mathrm{PC1}_k(w) = v_1(X_k - \\mathbf{1}\\bar x_k^\\top), \\qquad
              \\mathrm{mean}_k(w) = \\bar x_k / \\lVert \\bar x_k \\rVert,

    :math:`v_1` the top right singular vector (of :math:`X_k` itself when not ``centered``),
    signed so that :math:`v_1 \\cdot \\bar x_k > 0` (``orientation="mean"``)
    (:func:`static_embeddings`, :func:`mean_embeddings` on those rows with ``min_contexts=k``:
    a word with fewer than ``k`` contexts has no vector at budget ``k``). PC1 needs two
    contexts: at ``k = 1`` the centred matrix is zero, and only the mean is given.

    What to expect when a word's occurrences are :math:`x_j = t_w + \\varepsilon_j` with
    isotropic noise: the centred rows :math:`\\varepsilon_j - \\bar\\varepsilon` do not
    contain :math:`t_w`, so :math:`\\mathrm{PC1}_k(w)` is a random direction of the noise,
    tied to :math:`t_w` only by its sign, at every ``k``; :math:`\\bar x_k = t_w +
    \\bar\\varepsilon_k` with :math:`E\\lVert\\bar\\varepsilon_k\\rVert^2 =
    E\\lVert\\varepsilon\\rVert^2 / k`, so the mean vector tends to :math:`t_w` as ``k`` grows.

    Parameters
    ----------
    layer_vectors : ndarray of shape (N, d)
    words : DataFrame
        Columns ``sentence_id``, ``text``, optionally ``is_punct``.
    budgets : sequence of int
        Contexts per word, each at least 1.
    rng : seed, seed list or Generator
        The order of each word's contexts (one draw for every budget).
    centered, lowercase, exclude_punct : bool
    orientation : {"mean", "svd_flip"}
        As in :func:`static_embeddings`.

    Returns
    -------
    dict
        ``k -> {"PC1": word -> unit vector, "mean": word -> unit vector}`` (no ``"PC1"`` at
        ``k = 1``).
    """
    bad = [k for k in budgets if int(k) != k or k < 1]
    if bad:
        raise ValueError(f"budgets must be whole numbers of contexts, at least 1; got {bad}: "
                         "pass e.g. range(1, 6)")
    X = np.asarray(layer_vectors)
    rank = context_ranks(words, rng, lowercase=lowercase, exclude_punct=exclude_punct)
    out: dict[int, dict[str, dict[str, np.ndarray]]] = {}
    for k in budgets:
        keep = (rank >= 0) & (rank < k)
        sub, w = X[keep], words.iloc[np.flatnonzero(keep)].reset_index(drop=True)
        case = {"lowercase": lowercase, "exclude_punct": exclude_punct}
        out[int(k)] = {"mean": mean_embeddings(sub, w, int(k), **case)}
        if k >= 2:
            out[int(k)]["PC1"] = static_embeddings(sub, w, int(k), centered=centered,
                                                  orientation=orientation, **case)
    return out
