"""The embedding matrix W under each post-processing for the "Drift and centering" chapter:
variant rows, norm histograms and rare-token cosines by frequency (or vocabulary-id) bin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lmgeometry.chapters.drift.tokens import frequency_ranks, unseen_tokens, unused_token_ids
from lmgeometry.measures import centering, mean_cosines
from lmgeometry.measures.stats import percentile_interval, spearman_rows

__all__ = [
    "VARIANTS",
    "variant_rows",
    "norm_histograms",
    "rare_token_table",
]


#: Post-processing variants of W in Tables 2-3 (names as in ``reference_tables.BIS2021_WORDSIM``).
VARIANTS: tuple[str, ...] = ("original", "centered", "centered_scaled", "post_process")


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
