"""Labels permuted, and layers shuffled: the nulls of statistics that read labels or depth.

A statistic computed from vectors and labels (a probe's or a threshold's held-out accuracy,
k-means purity against tags, 1-NN sense accuracy, the silhouette of a labelled partition)
asks whether the vectors carry the labels. Its null is the same statistic computed with the
labels permuted (Good 2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*;
Ojala & Garriga 2010, "Permutation tests for studying classifier performance", JMLR 11):

.. math:: \\tilde y = (y_{\\pi(1)}, \\dots, y_{\\pi(n)}), \\qquad
          \\pi(i) \\in G(i) \\ \\text{for every } i,

a uniformly random permutation :math:`\\pi` that moves each label only among the rows of its
own group :math:`G(i)` (a train or test split, one word's occurrences). Every group keeps its
class counts, so the majority baseline and any chance level stay exactly what they were, while
any link between a row's vector and its label is broken: a rule that a claim applies to the
statistic should fail on :math:`\\tilde y`. A chapter computes its statistic once more on
:func:`permute_within`'s labels, with the same code, split and interval
(:mod:`lmgeometry.chapters.nulls`).

A statistic of a depth trend (a rank correlation with the layer index, "best in the middle
layers", "adjacent layers are more alike than distant ones") asks whether the layers' *order*
matters. Its null (:func:`layer_order_null`) is the same statistic over random orders of the
layers, each layer keeping its own values: its distribution under

.. math:: \\ell \\mapsto \\sigma(\\ell), \\qquad \\sigma \\ \\text{uniform over the}\\ L!
          \\ \\text{orders},

exact over every order when there are few layers, else over a seeded sample of orders (the
permutation test of a trend, Good 2005, ch. 3). A rule that a depth claim applies should fail
on it: a random order has no depth.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["PERMUTATION_STREAM", "layer_order_null", "permute_within"]

#: Mixed into every permutation's seed, so that a chapter's permutation is not the first draw
#: of another generator seeded with the same number (a chapter's chance shuffles, say).
PERMUTATION_STREAM = 0x7065726D  # "perm"


def permute_within(labels: npt.ArrayLike, groups: npt.ArrayLike | None = None,
                   seed: int | Sequence[int] = 0) -> np.ndarray:
    """The labels shuffled among the rows of each group, reproducibly.

    Parameters
    ----------
    labels : array of shape (n,)
        One label per row, of any dtype.
    groups : array of shape (n,), optional
        The group of each row (e.g. ``is_test``, a word, a split name); a label moves only
        among the rows of its group. Default: one group of every row.
    seed : int or sequence of int
        The permutation's seed (with :data:`PERMUTATION_STREAM`); a sequence gives one
        independent permutation per key (``(seed, word, draw)``).

    Returns
    -------
    numpy.ndarray
        A new array of the labels' dtype: within each group the same labels, as many of each,
        in a uniformly random order.

    Examples
    --------
    >>> permute_within([0, 0, 1, 1], groups=["a", "a", "b", "b"]).tolist()  # constant groups
    [0, 0, 1, 1]
    >>> sorted(permute_within([3, 1, 2], seed=5).tolist())
    [1, 2, 3]
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D (one per row), not of shape {labels.shape}")
    n = len(labels)
    codes = (np.zeros(n, dtype=np.int64) if groups is None
             else np.unique(np.asarray(groups), return_inverse=True)[1].ravel())
    if len(codes) != n:
        raise ValueError(f"groups has {len(codes)} entries for {n} labels: pass one group a row")
    keys = [int(s) for s in (np.atleast_1d(seed))]
    rng = np.random.default_rng([*keys, PERMUTATION_STREAM])
    draw = rng.random(n)
    home = np.lexsort((np.arange(n), codes))  # each group's rows, in order
    moved = np.lexsort((draw, codes))  # the same rows, shuffled within each group
    out = labels.copy()
    out[home] = labels[moved]
    return out


def layer_order_null(statistic: Callable[[np.ndarray], float], n_layers: int, *,
                     n_orders: int = 2000, seed: int = 0, level: float = 0.95
                     ) -> tuple[float, float, float]:
    """A depth statistic over random orders of the layers: its median and central interval.

    Parameters
    ----------
    statistic : callable
        ``statistic(order)``: the statistic computed with layer ``order[i]``'s values in the
        place of layer ``i`` (``order`` a permutation of ``range(n_layers)``); the identity
        order gives the observed statistic.
    n_layers : int
        The layers the statistic orders (at least 2).
    n_orders : int
        Every order when ``n_layers! <= n_orders`` (exact); else this many uniformly random
        orders (seeded with ``seed`` and :data:`PERMUTATION_STREAM`).
    level : float
        The interval's coverage: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles.

    Returns
    -------
    tuple of float
        ``(median, low, high)`` of the statistic over the orders (NaN values left out).

    Examples
    --------
    A trend's rank correlation: over every order of 5 layers it is symmetric about 0.

    >>> from scipy.stats import spearmanr
    >>> values = np.array([0.9, 0.7, 0.6, 0.4, 0.1])
    >>> rho = lambda order: spearmanr(values[order], np.arange(5))[0]
    >>> rho(np.arange(5))
    np.float64(-0.9999999999999999)
    >>> [round(float(v), 2) for v in layer_order_null(rho, 5)]
    [0.0, -0.9, 0.9]
    """
    if n_layers < 2:
        raise ValueError(f"a layer order needs at least 2 layers, not {n_layers}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level}")
    if math.factorial(n_layers) <= n_orders:
        orders = np.array(list(itertools.permutations(range(n_layers))))
    else:
        rng = np.random.default_rng([int(seed), PERMUTATION_STREAM])
        orders = np.argsort(rng.random((n_orders, n_layers)), axis=1)
    values = np.array([statistic(order) for order in orders], dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan, math.nan
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(np.median(values)), float(low), float(high)
