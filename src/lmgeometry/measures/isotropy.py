"""Isotropy of embedding matrices: Biš et al. (2021), "Too Much in Common".

Biš, Podkorytov and Liu (2021), *Too Much in Common: Shifting of Embeddings in Transformer
Language Models and its Implications* (NAACL 2021; code ``danielbis/tooMuchInCommon``) argue
that the token embeddings of BERT, GPT-2 and RoBERTa do not occupy a narrow cone: they are
shifted along a common direction, and removing the mean restores an almost isotropic shape.
This module computes their isotropy on a ``(vocab, width)`` embedding matrix ``W``:

* :func:`isotropy_partition` -- the partition-function isotropy I(W) (their eqs. 7-8, after
  Arora et al. 2016 and Mu & Viswanath 2018), evaluated in log space so it never overflows;
  :func:`log_partition_function`, log Z(c) for any directions;
* :func:`embedding_statistics` -- the numbers of their Table 1 (:data:`BIS2021_TABLE1`): I(W)
  raw, centred and with the top PCs removed, norms, mean cosines, IsoScore, with
  Poisson-bootstrap intervals over the rows (tokens) when asked.

The post-processing transforms are in :mod:`lmgeometry.measures.centering`, IsoScore in
:mod:`lmgeometry.measures.isoscore`, mean cosines from sums of unit rows (Fig. 3) in
:mod:`lmgeometry.measures.mean_cosines`, :func:`~lmgeometry.measures.shift.shift_cosine` in
:mod:`lmgeometry.measures.shift`, and the spectra and projections of the figures in
:mod:`lmgeometry.measures.spectra`.

``W`` comes from :func:`lmgeometry.io.models.input_embeddings`. Every pass over its rows
streams over row chunks in float64 (the moments of :mod:`lmgeometry.measures.spectra`), with no
full-size copy (``benchmarks/isotropy.py`` times a Gemma-sized matrix).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from lmgeometry.measures.arrays import float_arrays
from lmgeometry.measures.centering import n_top_pcs
from lmgeometry.measures.isoscore import _isoscore_from_variances, isoscore
from lmgeometry.measures.similarity import CHUNK_ROWS
from lmgeometry.measures.spectra import _as_matrix, _chunks, _eigh_desc, _Moments
from lmgeometry.measures.stats import RngLike, percentile_interval, poisson_weights

__all__ = [
    "BIS2021_TABLE1",
    "CHUNK_ROWS",
    "embedding_statistics",
    "isotropy_partition",
    "log_partition_function",
    "Signs",
]


Signs = Literal["larger", "both"]


#: Table 1 of Biš et al. (2021), copied from the paper: isotropy I(W) of the raw input
#: embedding matrix, of the centred matrix W_c and of W_r (ceil(d/100) top principal
#: components removed with their eq. 9-11); the average row L2 norm, the L2 norm of the mean
#: vector, and their ratio. Keys are Hugging Face model ids; the value keys match those of
#: :func:`embedding_statistics`. Their I(W) used one (solver-chosen) sign per eigenvector,
#: which ``signs="larger"`` reproduces in the usual one-dominant-shift case (see
#: :func:`isotropy_partition`).
BIS2021_TABLE1: dict[str, dict[str, Any]] = {
    "bert-base-uncased": {
        "label": "BERT-base-uncased",
        "isotropy_raw": 0.39,
        "isotropy_centered": 0.98,
        "isotropy_top_pcs_removed": 0.998,
        "mean_norm": 1.40,
        "mean_vector_norm": 0.94,
        "mean_vector_ratio": 0.67,
    },
    "bert-base-cased": {
        "label": "BERT-base-cased",
        "isotropy_raw": 0.59,
        "isotropy_centered": 0.98,
        "isotropy_top_pcs_removed": 0.996,
        "mean_norm": 1.29,
        "mean_vector_norm": 0.50,
        "mean_vector_ratio": 0.39,
    },
    "bert-large-uncased": {
        "label": "BERT-large-uncased",
        "isotropy_raw": 0.44,
        "isotropy_centered": 0.97,
        "isotropy_top_pcs_removed": 0.997,
        "mean_norm": 1.45,
        "mean_vector_norm": 0.80,
        "mean_vector_ratio": 0.55,
    },
    "bert-large-cased": {
        "label": "BERT-large-cased",
        "isotropy_raw": 0.52,
        "isotropy_centered": 0.96,
        "isotropy_top_pcs_removed": 0.995,
        "mean_norm": 1.53,
        "mean_vector_norm": 0.65,
        "mean_vector_ratio": 0.42,
    },
    "roberta-base": {
        "label": "RoBERTa-base",
        "isotropy_raw": 0.50,
        "isotropy_centered": 0.87,
        "isotropy_top_pcs_removed": 0.959,
        "mean_norm": 3.65,
        "mean_vector_norm": 0.57,
        "mean_vector_ratio": 0.16,
    },
    "roberta-large": {
        "label": "RoBERTa-large",
        "isotropy_raw": 0.07,
        "isotropy_centered": 0.64,
        "isotropy_top_pcs_removed": 0.956,
        "mean_norm": 4.36,
        "mean_vector_norm": 2.53,
        "mean_vector_ratio": 0.58,
    },
    "gpt2": {
        "label": "GPT-2 (12 layers)",
        "isotropy_raw": 0.12,
        "isotropy_centered": 0.91,
        "isotropy_top_pcs_removed": 0.969,
        "mean_norm": 3.96,
        "mean_vector_norm": 2.05,
        "mean_vector_ratio": 0.52,
    },
    "gpt2-medium": {
        "label": "GPT-2 (24 layers)",
        "isotropy_raw": 0.52,
        "isotropy_centered": 0.95,
        "isotropy_top_pcs_removed": 0.981,
        "mean_norm": 3.68,
        "mean_vector_norm": 2.04,
        "mean_vector_ratio": 0.55,
    },
}


def _lse_update(P: np.ndarray, run_max: np.ndarray, run_sum: np.ndarray, tmp: np.ndarray) -> None:
    """One step of a column-wise streaming log-sum-exp.

    The running state ``(m, s)`` represents log Z = m + log s. A new block of values P merges as
    M = max(m, max_rows P), s <- s exp(m - M) + sum_rows exp(P - M), m <- M; every exponent is
    <= 0, so nothing overflows.
    """
    new_max = np.maximum(run_max, P.max(axis=0))
    with np.errstate(invalid="ignore"):  # -inf - -inf on the first block, where s is 0 anyway
        scale = np.exp(run_max - new_max)
    scale[~np.isfinite(scale)] = 0.0
    run_sum *= scale
    np.subtract(P, new_max, out=tmp)
    np.exp(tmp, out=tmp)
    run_sum += tmp.sum(axis=0)
    run_max[:] = new_max


def _log_partitions(
    W: np.ndarray,
    directions: np.ndarray,
    offsets: np.ndarray | None = None,
    *,
    chunk_rows: int = CHUNK_ROWS,
    centered_mean: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, int] | None]:
    """log Z(+c) and log Z(-c) for the columns c of ``directions``, in one pass over ``W``.

    Computes log sum_i exp(s (w_i . c_j + b_j)) for s = +1 and s = -1, where b = ``offsets``
    (the projections of an affine transform W A + 1 b^T of W reduce to this form). If
    ``centered_mean`` is given, the same pass also returns the sum of the unit-normalised
    non-zero rows of W - 1 centered_mean^T and their number (for the exact mean cosine of the
    centred matrix).
    """
    n = W.shape[0]
    C = np.ascontiguousarray(directions, dtype=np.float64)
    m = C.shape[1]
    b = np.zeros(m) if offsets is None else np.asarray(offsets, dtype=np.float64)
    pos_max, neg_max = np.full(m, -np.inf), np.full(m, -np.inf)
    pos_sum, neg_sum = np.zeros(m), np.zeros(m)
    rows = min(chunk_rows, n)
    P_buf, tmp_buf = np.empty((rows, m)), np.empty((rows, m))
    unit_sum = None if centered_mean is None else np.zeros(W.shape[1])
    n_unit = 0
    for start in _chunks(n, chunk_rows):
        blk = np.asarray(W[start : start + chunk_rows], dtype=np.float64)
        k = blk.shape[0]
        P, tmp = P_buf[:k], tmp_buf[:k]
        np.matmul(blk, C, out=P)
        P += b
        _lse_update(P, pos_max, pos_sum, tmp)
        np.negative(P, out=P)
        _lse_update(P, neg_max, neg_sum, tmp)
        if unit_sum is not None:
            blk = blk - centered_mean  # a new array: blk may be a view of W
            norms = np.sqrt(np.einsum("ij,ij->i", blk, blk))
            nz = norms > 0
            n_unit += int(nz.sum())
            unit_sum += (blk[nz] / norms[nz, None]).sum(axis=0)
    extra = None if unit_sum is None else (unit_sum, n_unit)
    with np.errstate(divide="ignore"):
        return pos_max + np.log(pos_sum), neg_max + np.log(neg_sum), extra


def _log_isotropy(log_z_pos: np.ndarray, log_z_neg: np.ndarray, signs: Signs) -> float:
    """log I from log Z(+u_j), log Z(-u_j); see :func:`isotropy_partition` for ``signs``."""
    if signs == "larger":
        per_axis = np.maximum(log_z_pos, log_z_neg)
        return float(per_axis.min() - per_axis.max())
    if signs == "both":
        both = np.concatenate([log_z_pos, log_z_neg])
        return float(both.min() - both.max())
    raise ValueError(f"signs must be 'larger' or 'both', not {signs!r}")


def log_partition_function(
    W: npt.ArrayLike, directions: npt.ArrayLike, *, chunk_rows: int = CHUNK_ROWS
) -> np.ndarray:
    """Log of the partition function Z(c) for each column c of ``directions``.

    Z(c) = sum_w exp(c^T e(w)) (Biš et al. 2021, eq. 7; Arora et al. 2016), evaluated as a
    streaming log-sum-exp over row chunks in float64:
    log Z(c) = m + log sum_w exp(c^T e(w) - m) with m = max_w c^T e(w), so it is finite for any
    finite ``W`` (the direct ``exp`` overflows float64 once c^T e(w) > 709).

    Parameters
    ----------
    W : array_like, shape (n, d)
        Embedding matrix, one row per token.
    directions : array_like, shape (d,) or (d, m)
        Directions c (the formula does not normalise them; Biš et al. use unit vectors).
    chunk_rows : int
        Rows per chunk.

    Returns
    -------
    numpy.ndarray, shape (m,) or scalar array
        log Z(c) per direction.
    """
    W = _as_matrix(W)
    C = np.asarray(directions, dtype=np.float64)
    single = C.ndim == 1
    C = C[:, None] if single else C
    if C.shape[0] != W.shape[1]:
        raise ValueError(f"directions have length {C.shape[0]}, W has width {W.shape[1]}")
    log_pos, _, _ = _log_partitions(W, C, chunk_rows=chunk_rows)
    return log_pos[0] if single else log_pos


@float_arrays("W")
def isotropy_partition(
    W: npt.ArrayLike,
    *,
    signs: Signs = "larger",
    log: bool = False,
    chunk_rows: int = CHUNK_ROWS,
) -> float:
    """Partition-function isotropy I(W) of Biš et al. (2021), computed in log space.

    I(W) = min_{c in X} Z(c) / max_{c in X} Z(c), Z(c) = sum_w exp(c^T e(w))   (eqs. 7-8)

    with X the unit eigenvectors u_1..u_d of W^T W (Mu & Viswanath 2018, whose approximation
    Biš et al. follow; the matrix is *not* centred first, so for a shifted matrix u_1 is close to
    the mean direction). I(W) lies in (0, 1], and is 1 when Z is the same in every direction,
    as it is approximately for isotropic vectors (Arora et al. 2016, Lemma 2.1).

    Differences from the reference code (``danielbis/tooMuchInCommon`` ``isotropy.py``, which
    takes ``np.exp(W @ u)`` in float32 after ``np.linalg.eig`` of W^T W):

    * log Z(c) is a streaming log-sum-exp in float64 (see :func:`log_partition_function`), so
      there is no overflow for any W, and log I = min log Z - max log Z is exact even when I
      itself underflows to 0.0 (use ``log=True`` to get it);
    * W^T W is accumulated over row chunks in float64 and decomposed with ``eigh``; the
      projections W u_j are also computed chunk by chunk, so no full-size copy of W is made;
    * the eigenvectors' signs, which the paper leaves to the eigensolver, are made explicit.
      ``signs="larger"`` (default) uses one vector per eigen-axis, oriented so that
      Z(u_j) >= Z(-u_j); it is independent of the solver and, like the paper's version, gives
      about exp(-|u_1^T mu|) for a matrix whose only structure is a shift mu.
      ``signs="both"`` uses X = {+u_j, -u_j} (both are eigenvectors), which can only be lower:
      about exp(-2 |u_1^T mu|) for the same shift.

    Parameters
    ----------
    W : array_like, shape (n, d)
        Embedding matrix (rows are tokens); float16/32/64 or a memmap.
    signs : {"larger", "both"}
        Which eigenvector orientations make up X (see above).
    log : bool
        Return the natural log of I(W) instead (finite whenever W is).
    chunk_rows : int
        Rows per chunk in the streaming passes.

    Returns
    -------
    float
        I(W) in [0, 1] (or log I(W) <= 0).

    References
    ----------
    Biš, Podkorytov, Liu (2021), Too Much in Common, NAACL, Sec. 5.1, eqs. 7-8.
    Mu, Viswanath (2018), All-but-the-Top, ICLR. Arora et al. (2016), TACL 4.
    """
    W = _as_matrix(W)
    moments = _Moments(W, chunk_rows)
    _, V = _eigh_desc(moments.gram)
    log_pos, log_neg, _ = _log_partitions(W, V, chunk_rows=chunk_rows)
    value = _log_isotropy(log_pos, log_neg, signs)
    return value if log else math.exp(value)


_VARIANTS = ("raw", "centered", "top_pcs_removed", "top_pcs_removed_original")


@float_arrays("W")
def embedding_statistics(
    W: npt.ArrayLike,
    *,
    n_components: int | None = None,
    isoscore_rows: int | None = None,
    seed: int = 0,
    chunk_rows: int = CHUNK_ROWS,
    n_boot: int = 0,
    rng: RngLike = None,
    n_axes: int = 16,
) -> dict[str, Any]:
    """The statistics of Biš et al. (2021) Table 1 (and a few more) for one embedding matrix.

    Keys (the first six match :data:`BIS2021_TABLE1`):

    * ``mean_norm`` = avg_w ||e(w)||_2; ``mean_vector_norm`` = ||mu||_2, mu = avg_w e(w);
      ``mean_vector_ratio`` = their ratio;
    * ``isotropy_<v>`` = I(W_v) with ``signs="larger"`` (:func:`isotropy_partition`), for
      v = ``raw`` (W), ``centered`` (:func:`center`), ``top_pcs_removed`` (Biš et al.'s eq. 9-11,
      :func:`remove_top_pcs` with ``centered_projection=True``; their W_r) and
      ``top_pcs_removed_original`` (Mu & Viswanath's projection of the raw rows);
      ``isotropy_<v>_both_signs`` with ``signs="both"``; ``log_isotropy_<v>`` = ln I (finite
      when I underflows);
    * ``n_pcs_removed`` (D, default ceil(width/100)); ``isoscore`` (:func:`isoscore`, "ours",
      on all rows, or on ``isoscore_rows`` rows sampled with ``seed``);
      ``mean_cosine`` / ``mean_cosine_centered`` (exact, :func:`mean_cosine`);
      ``top_eigvec_mean_cosine`` = |cos(u_1, mu)| for u_1 the top eigenvector of W^T W (0.99 for
      RoBERTa-large in the paper, Sec. 5.3); ``n_rows``, ``width``, ``n_zero_rows``;
    * ``isotropy_gap_closed`` = (I(W_c) - I(W)) / (1 - I(W)), the share of the distance to
      perfect isotropy that centring closes (0.61-0.96 in the paper's Table 1);
    * with ``n_boot > 0``: ``<key>_lo`` / ``<key>_hi`` for ``isotropy_raw``, ``_centered``,
      ``_gap_closed`` and ``top_eigvec_mean_cosine``: a 95% Poisson bootstrap over the rows
      (:func:`_isotropy_replicates`, ``n_axes`` axes at each end; ``rng`` seeds it).

    The computation makes two streaming passes over W and no full-size copy. Pass 1 accumulates
    W^T W, the row sum, the row norms and the unit-row sum in float64. The post-processed
    matrices are affine in W, so their Gram matrices and projections follow from pass 1:
    with G_c = W^T W - n mu mu^T, its eigenvectors v_j (descending) and U = v_1..v_D,
    W_c v = W v - mu.v; the Biš W_r has the eigenvectors v_{D+1..d} (same projections as W_c)
    plus a D-dimensional null space U where Z = n; the Mu-Viswanath W_r equals the Biš W_r
    minus the constant vector P mu (P = U U^T), so it has the same v_{D+1..d} projections,
    the eigenvector P mu/||P mu|| with Z(+-c) = n exp(-+||P mu||), and a (D-1)-dimensional null
    space where Z = n. Pass 2 therefore needs only the projections on the eigenvectors of W^T W
    and of G_c (2 x width columns), accumulated as streaming log-sum-exps.

    Parameters
    ----------
    W : array_like, shape (n, width)
        Embedding matrix, e.g. from :func:`input_embeddings`.
    n_components : int, optional
        D for the top-PC removal; default ceil(width / 100).
    isoscore_rows : int, optional
        Compute IsoScore on this many rows sampled without replacement (seeded); default all.
    seed : int
    chunk_rows : int
    n_boot, rng, n_axes
        The bootstrap (above).

    Returns
    -------
    dict
        JSON-serialisable numbers (Python floats and ints).
    """
    W = _as_matrix(W)
    n, width = W.shape
    D = n_top_pcs(width) if n_components is None else int(n_components)
    if not 0 <= D < width:
        raise ValueError(f"n_components must be in [0, {width}), got {D}")
    moments = _Moments(W, chunk_rows)
    mu = moments.mean
    lam_raw, V_raw = _eigh_desc(moments.gram)
    lam_c, V_c = _eigh_desc(moments.centered_gram)
    C = np.concatenate([V_raw, V_c], axis=1)
    offsets = np.concatenate([np.zeros(width), -(mu @ V_c)])
    pos, neg, centered_units = _log_partitions(W, C, offsets, chunk_rows=chunk_rows,
                                               centered_mean=mu)
    axes = _variant_axes(pos, neg, V_c, mu, n, D)
    mean_norm = moments.norm_sum / n
    mean_vector_norm = float(np.linalg.norm(mu))
    out: dict[str, Any] = {
        "n_rows": int(n), "width": int(width), "n_zero_rows": int(n - moments.n_nonzero),
        "mean_norm": float(mean_norm), "mean_vector_norm": mean_vector_norm,
        "mean_vector_ratio": float(mean_vector_norm / mean_norm) if mean_norm > 0 else math.nan,
        "n_pcs_removed": int(D)}
    out.update(_isotropy_entries(axes))
    out.update(_isoscore_entries(W, lam_c, isoscore_rows, seed, chunk_rows))
    # rows equal to the mean vector have no direction after centring; the pass skipped them
    assert centered_units is not None
    out["mean_cosine"] = _mean_cosine_from_sum(moments.unit_sum, moments.n_nonzero)
    out["mean_cosine_centered"] = _mean_cosine_from_sum(*centered_units)
    out["top_eigvec_mean_cosine"] = (float(abs(V_raw[:, 0] @ mu) / mean_vector_norm)
                                     if mean_vector_norm > 0 else math.nan)
    out["isotropy_gap_closed"] = _gap_closed(out["log_isotropy_raw"],
                                             out["log_isotropy_centered"])
    if n_boot > 0:
        reps = _isotropy_replicates(W, (V_raw, V_c), (pos, neg), mu, n_boot,
                                    np.random.default_rng(rng), n_axes, chunk_rows,
                                    eigenvalues=lam_raw)
        out.update(_interval_entries(out, reps))
    return out


def _interval_entries(point: dict[str, Any], reps: dict[str, np.ndarray]) -> dict[str, float]:
    """``<key>_lo`` / ``_hi`` for the raw and centred I, the gap centring closes and, when
    replicated, the top eigenvector's cosine with the mean."""
    named = {"isotropy_raw": np.exp(reps["raw"]), "isotropy_centered": np.exp(reps["centered"]),
             "isotropy_gap_closed": _gap_closed(reps["raw"], reps["centered"])}
    if "top_eigvec_mean_cosine" in reps:
        named["top_eigvec_mean_cosine"] = reps["top_eigvec_mean_cosine"]
    out = {}
    for name, rep in named.items():
        out[f"{name}_lo"], out[f"{name}_hi"] = percentile_interval(rep, point[name])
    return out


def _gap_closed(log_raw: Any, log_centered: Any) -> Any:
    """(I_c - I) / (1 - I) from log I values (arrays or floats); NaN where I = 1."""
    raw, cen = np.exp(log_raw), np.exp(log_centered)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(raw < 1, (cen - raw) / (1 - raw), np.nan)
    return float(gap) if np.ndim(gap) == 0 else gap


def _isotropy_replicates(
    W: np.ndarray, bases: tuple[np.ndarray, np.ndarray], log_z: tuple[np.ndarray, np.ndarray],
    mu: np.ndarray, n_boot: int, gen: np.random.Generator, n_axes: int, chunk_rows: int,
    *, eigenvalues: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Poisson-bootstrap replicates of log I(W) and log I(W_c) over the rows of W (and, given
    the ``eigenvalues`` of W^T W that go with ``bases[0]``, of |cos(u_1, mu)|: same draws,
    :func:`_top_eigvec_replicates`).

    Replicate b keeps row i k_i ~ Poisson(1) times (:func:`stats.poisson_weights`), so
    Z*(c) = sum_i k_i exp(c . w_i) and, centred, the mean is mu* = sum_i k_i w_i / sum_i k_i:
    log Z*_c(+-c) = log sum_i k_i exp(+-(w_i - mu) . c) -+ (mu* - mu) . c. The directions stay
    the eigenvectors of the whole W (the set X of eq. 8), and only the ``n_axes`` axes with the
    smallest and the ``n_axes`` with the largest log Z of each variant are followed, as they
    hold the minimum and the maximum; the sample's log Z per axis keeps every exponent <= 0.
    """
    width = W.shape[1]
    pos, neg = log_z
    picked, shift_c, ref = [], [], []
    for k, V in enumerate(bases):
        per_axis = np.maximum(pos[k * width:(k + 1) * width], neg[k * width:(k + 1) * width])
        order = np.argsort(per_axis)
        sel = np.unique(np.concatenate([order[:n_axes], order[-n_axes:]]))
        picked.append(V[:, sel])
        # the sample's log Z(+-c) (centred: with the sample mean) keeps exp() in range
        ref.append((pos[k * width + sel], neg[k * width + sel]))
        shift_c.append(np.zeros(sel.size) if k == 0 else mu @ V[:, sel])
    C = np.concatenate(picked, axis=1)
    offsets = np.concatenate(shift_c)
    L = np.concatenate([np.concatenate([p for p, _ in ref]), np.concatenate([q for _, q in ref])])
    m = C.shape[1]
    Z = np.zeros((n_boot, 2 * m))
    proj = np.zeros((n_boot, m))
    total = np.zeros(n_boot)
    top = None if eigenvalues is None else np.zeros((n_boot, 2 * width))
    for start in _chunks(W.shape[0], chunk_rows):
        rows = W[start : start + chunk_rows]
        P = np.asarray(rows, dtype=np.float64) @ C - offsets
        K = poisson_weights(n_boot, P.shape[0], gen, dtype=np.float64)
        Z += K @ np.exp(np.concatenate([P, -P], axis=1) - L)
        proj += K @ P
        total += K.sum(axis=1)
        if top is not None:
            top += _top_eigvec_moments(rows, bases[0][:, 0], K)
    log_z_boot = np.log(Z) + L
    delta = proj / total[:, None]  # (mu* - mu) . c
    out = {}
    n_raw = picked[0].shape[1]
    for key, cols in (("raw", slice(0, n_raw)), ("centered", slice(n_raw, m))):
        d = delta[:, cols] if key == "centered" else 0.0
        plus = log_z_boot[:, :m][:, cols] - d
        minus = log_z_boot[:, m:][:, cols] + d
        per_axis = np.maximum(plus, minus)
        out[key] = per_axis.min(axis=1) - per_axis.max(axis=1)
    if top is not None:
        assert eigenvalues is not None
        out["top_eigvec_mean_cosine"] = _top_eigvec_replicates(
            top, total, eigenvalues, bases[0], mu, W.shape[0])
    return out


def _top_eigvec_moments(rows: np.ndarray, u1: np.ndarray, K: np.ndarray) -> np.ndarray:
    """One chunk's ``[sum_i (k_i - 1) w_i, sum_i (k_i - 1) (w_i . u_1) w_i]`` per replicate.

    The weights enter as k_i - 1 (small integers, exact in float32), so the sums are the
    resample's departures from the whole sample's and keep their precision in float32 (the
    product costs two rows-by-width matrix products per replicate).
    """
    X = np.asarray(rows, dtype=np.float32)
    a = X @ u1.astype(np.float32)
    D = (K - 1.0).astype(np.float32)
    return (D @ np.concatenate([X, a[:, None] * X], axis=1)).astype(np.float64)


def _top_eigvec_replicates(moments: np.ndarray, total: np.ndarray, lam: np.ndarray,
                           V: np.ndarray, mu: np.ndarray, n: int) -> np.ndarray:
    """|cos(u_1*, mu*)| per replicate, u_1* to first order in the resampling (delta method).

    With G = W^T W = V diag(lam) V^T and a resample's G* = sum_i k_i w_i w_i^T scaled by
    n / sum_i k_i, first-order perturbation theory gives u_1* = u_1 + sum_{j>1} v_j
    (v_j^T (G* - G) u_1) / (lam_1 - lam_j) (normalised), and mu* = sum_i k_i w_i / sum_i k_i.
    Exact to first order when lam_1 stands apart from lam_2, the case where the top eigenvector
    is the mean's direction (Biš et al. 2021, Sec. 5.3); when it does not, u_1 itself is
    ill-determined and the replicates spread over directions, as exact ones do.
    """
    width = V.shape[0]
    d_sum, d_g = moments[:, :width], moments[:, width:]  # sum (k - 1) w, (G* - G) u_1 unscaled
    scale = (n / total)[:, None]
    mu_star = (n * mu + d_sum) / total[:, None]
    gap = lam[0] - lam[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = scale * (d_g @ V[:, 1:]) / gap  # the v_1 part of (G* - G) u_1 does not rotate it
        along = (mu_star @ V[:, 0] + np.einsum("bj,bj->b", coef, mu_star @ V[:, 1:]))
        norm = np.sqrt(1.0 + (coef**2).sum(axis=1)) * np.linalg.norm(mu_star, axis=1)
        return np.abs(along) / norm


def _variant_axes(
    pos: np.ndarray, neg: np.ndarray, V_c: np.ndarray, mu: np.ndarray, n: int, D: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """log Z(+-c) over the eigen-axes of each post-processed variant (see embedding_statistics)."""
    width = V_c.shape[0]
    log_n = math.log(n)
    Pmu = V_c[:, :D] @ (V_c[:, :D].T @ mu)
    pmu_norm = float(np.linalg.norm(Pmu))
    axes: dict[str, tuple[np.ndarray, np.ndarray]] = {
        "raw": (pos[:width], neg[:width]),
        "centered": (pos[width:], neg[width:]),
        "top_pcs_removed": (
            np.concatenate([pos[width + D :], np.full(D, log_n)]),
            np.concatenate([neg[width + D :], np.full(D, log_n)]),
        ),
    }
    if D == 0:
        axes["top_pcs_removed_original"] = axes["top_pcs_removed"]
    else:
        axes["top_pcs_removed_original"] = (
            np.concatenate([pos[width + D :], [log_n - pmu_norm], np.full(D - 1, log_n)]),
            np.concatenate([neg[width + D :], [log_n + pmu_norm], np.full(D - 1, log_n)]),
        )
    return axes


def _isotropy_entries(axes: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """``isotropy_<v>``, ``isotropy_<v>_both_signs`` and ``log_isotropy_<v>`` for every variant."""
    out: dict[str, float] = {}
    for v in _VARIANTS:
        log_i = _log_isotropy(*axes[v], "larger")
        out[f"isotropy_{v}"] = math.exp(log_i)
        out[f"isotropy_{v}_both_signs"] = math.exp(_log_isotropy(*axes[v], "both"))
        out[f"log_isotropy_{v}"] = log_i
    return out


def _isoscore_entries(
    W: np.ndarray, lam_c: np.ndarray, isoscore_rows: int | None, seed: int, chunk_rows: int
) -> dict[str, Any]:
    """``isoscore`` (from the centred spectrum, or on sampled rows) and ``isoscore_rows``."""
    n = W.shape[0]
    out: dict[str, Any] = {}
    if isoscore_rows is None or isoscore_rows >= n:
        out["isoscore"] = _isoscore_from_variances(lam_c / (n - 1))
    else:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=isoscore_rows, replace=False))
        out["isoscore"] = isoscore(np.asarray(W[rows]), "ours", chunk_rows=chunk_rows)
    out["isoscore_rows"] = int(n if isoscore_rows is None else min(isoscore_rows, n))
    return out


def _mean_cosine_from_sum(unit_sum: np.ndarray, N: int) -> float:
    """Exact mean pairwise cosine of N unit rows from their sum (NaN for fewer than two)."""
    return float((unit_sum @ unit_sum - N) / (N * (N - 1))) if N > 1 else math.nan
