"""Labels permuted: the null of a statistic that reads labels.

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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["PERMUTATION_STREAM", "permute_within"]

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
