"""Null models for a chapter's claims: each stand-in's untrained twin, the labels permuted, the
layers shuffled, or the basis rotated.

A seed's claim about a trained model is reproduced only if the rule that tests it fails where
the claim should not hold. Each claim row has at most one null
(:data:`lmgeometry.claims.NULL_COLUMNS`), of one of four kinds:

* **The untrained twin** (``untrained:<spec>``, :mod:`lmgeometry.io.untrained`): the same
  architecture and tokenizer with random weights, on the same corpus, analysed by the same
  chapter function with the same parameters. A chapter builds the twins' stores with
  :func:`null_stores`, runs its analysis on them, and puts each claim row beside its twin's
  with :func:`with_nulls`; the scorecard counts a claim that also holds on the twin as "also
  true of an untrained model". Chapters 1, 3 and 4 run them by default, chapters 2 and 8 on
  request (``null_stores=``); chapter 10 uses each run's step-0 checkpoint.
* **The labels permuted** (:func:`lmgeometry.measures.permutation.permute_within`), for a
  claim whose statistic is a classifier's, probe's or label-cluster score: the same
  statistic on the same vectors, split and interval, with the labels shuffled within the
  groups the statistic uses (train and test splits, a word's occurrences), so that each group
  keeps its class balance. It costs one more fit, not one more model. The chapter computes
  the statistic's value and interval on the permuted labels, :func:`permuted_claim` makes the
  null row and :func:`with_permuted` puts each row beside it; the scorecard counts a claim
  that also holds on it as "also true with labels permuted". Chapters 2 (probes and cluster
  purity), 5 (1-NN sense accuracy, the senses' silhouette, WiC), 6 and 7 (the 1-D threshold,
  the linear or fine-tuned head's ablations) give one to every such row; their other claims
  (CKA, variance shares, trends over layers, regressions, the best layer's depth) read no
  labels and keep no null. Where chapter 2 also runs the twins, the twins fill the columns.
* **The layers shuffled** (:func:`lmgeometry.measures.permutation.layer_order_null`), for a
  claim about depth (a trend with the layer index, "best in the middle layers", adjacent
  layers more alike than distant ones) on a chapter that runs no twin for it: the same
  statistic over random orders of the same layers, each keeping its values; the null's value
  is the median over the orders and its interval their central 95%. :func:`shuffled_claim`
  makes the null row and :func:`with_shuffled` puts each row beside it; the scorecard counts
  a claim that also holds on it as "also true with the layers shuffled". Chapters 2 (the
  middle layers), 3 (the static vectors' trend), 6 (CKA's block structure, the rogue
  dimensions' emergence) and 7 (its depth claims) give one.
* **The basis rotated** (:func:`lmgeometry.measures.similarity.random_rotation`), for a claim
  about single coordinates (a few rogue *dimensions* hold most of the variance): the same
  statistic on the same vectors in a random orthonormal basis, which keeps every distance and
  the covariance spectrum but privileges no coordinate. :func:`rotated_claim` makes the null
  row and :func:`with_rotated` puts each row beside it; the scorecard counts a claim that also
  holds on it as "also true with the basis rotated" (the rule sees a few directions, not a few
  dimensions). Chapters 6 and 7 give one to their variance-share claims.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store, activations
from lmgeometry.claims.record import (
    Claim,
    attach_nulls,
    claims_frame,
    is_permuted,
    permuted_model,
    rotated_model,
    shuffled_model,
)
from lmgeometry.io.untrained import UNTRAINED_PREFIX, base_spec, is_untrained
from lmgeometry.measures.permutation import layer_order_null

__all__ = ["null_sentences", "null_spec", "null_stores", "permuted_claim", "rotated_claim",
           "shuffled_claim", "with_nulls", "with_permuted", "with_rotated", "with_shuffled"]


def null_spec(spec: str) -> str:
    """The untrained twin of a model spec.

    Examples
    --------
    >>> null_spec("minilm-l6")
    'untrained:minilm-l6'
    """
    return f"{UNTRAINED_PREFIX}{spec}"


def null_stores(models: Sequence[str], corpus: Any, **options: Any) -> dict[str, Store]:
    """The activation stores of each model's untrained twin on ``corpus`` (keyed by twin spec).

    ``options`` go to :func:`lmgeometry.activations.store.activations` as for the models' own
    stores (``too_long=...``), so the twins see exactly the text the models saw.
    """
    specs = [null_spec(m) for m in models if not is_untrained(m)]
    return {spec: activations(spec, corpus, **options) for spec in specs}


def with_nulls(claims: pd.DataFrame, nulls: pd.DataFrame) -> pd.DataFrame:
    """``claims`` with each row beside its model's twin's row of ``nulls`` (the same chapter's
    claims table computed on :func:`null_stores`)."""
    twins = dict.fromkeys(str(m) for m in nulls.get("model", pd.Series(dtype=str)))
    return attach_nulls(claims, nulls, {base_spec(m): m for m in twins if is_untrained(m)})


def permuted_claim(claim: Claim, interval: Sequence[float]) -> Claim:
    """``claim``'s null row: its rule on ``interval`` (value, low, high), the same statistic
    computed with the labels permuted, under the null name
    :func:`lmgeometry.claims.permuted_model` of the claim's model.

    Examples
    --------
    >>> real = Claim(seed="003", claim="c", model="m", statistic="accuracy minus majority",
    ...              value=0.2, ci_low=0.15, ci_high=0.25, threshold=0.05, direction="above",
    ...              rule="r")
    >>> null = permuted_claim(real, (0.01, -0.02, 0.04))
    >>> null.model, null.verdict
    ('labels permuted: m', 'does not hold')
    """
    return _null_row(claim, interval, permuted_model, "labels permuted")


def with_permuted(claims: pd.DataFrame, nulls: Sequence[Claim]) -> pd.DataFrame:
    """``claims`` with each row beside its labels-permuted null (:func:`permuted_claim`), where
    ``nulls`` has one with the same seed, claim, control, preset, task and statistic; the other
    rows keep the null they had (:func:`lmgeometry.claims.attach_nulls`)."""
    return _beside(claims, nulls, permuted_model)


def _beside(claims: pd.DataFrame, nulls: Sequence[Claim], named: Callable[[str], str]
            ) -> pd.DataFrame:
    """``claims`` with each row beside the row of ``nulls`` whose model is ``named(model)``."""
    models = dict.fromkeys(str(m) for m in claims.get("model", pd.Series(dtype=str)))
    return attach_nulls(claims, claims_frame(nulls), {m: named(m) for m in models})


def shuffled_claim(claim: Claim, statistic: Callable[[np.ndarray], float], n_layers: int,
                   seed: int = 0) -> Claim:
    """``claim``'s null row: its rule on its depth statistic over random orders of its
    ``n_layers`` layers (:func:`lmgeometry.measures.permutation.layer_order_null`: the median
    and central 95% over every order, or over 2,000 seeded ones), under the null name
    :func:`lmgeometry.claims.record.shuffled_model` of the claim's model.

    ``statistic(order)`` computes the claim's statistic with layer ``order[i]``'s values in
    the place of layer ``i``.

    Examples
    --------
    >>> values = np.array([0.9, 0.7, 0.6, 0.5, 0.3, 0.1])
    >>> real = Claim(seed="001", claim="c", model="m", statistic="rho with the layer index",
    ...              value=-1.0, ci_low=-1.0, ci_high=-0.9, threshold=-0.5, direction="below",
    ...              rule="r")
    >>> from lmgeometry.measures.stats import spearman_rows
    >>> null = shuffled_claim(real, lambda order: spearman_rows(values[order][None])[0], 6)
    >>> null.model, null.verdict, null.evidence, round(null.ci_high, 2)
    ('layers shuffled: m', 'inconclusive', 'the 6 layers in each of their 720 orders', 0.83)
    """
    n_orders = 2000
    interval = layer_order_null(statistic, n_layers, n_orders=n_orders, seed=seed)
    orders = (f"each of their {math.factorial(n_layers)} orders"
              if math.factorial(n_layers) <= n_orders else f"{n_orders:,} random orders")
    return _null_row(claim, interval, shuffled_model, f"the {n_layers} layers in {orders}")


def _null_row(claim: Claim, interval: Sequence[float], named: Callable[[str], str],
              evidence: str) -> Claim:
    """``claim`` with the null's value and interval (value, low, high), under the null's name
    ``named(model)`` and with ``evidence`` saying what the null is."""
    value, low, high = (float(x) for x in interval[:3])
    return dataclasses.replace(claim, model=named(claim.model), value=value, ci_low=low,
                               ci_high=high, evidence=evidence)


def with_shuffled(claims: pd.DataFrame, nulls: Sequence[Claim]) -> pd.DataFrame:
    """``claims`` with each row beside its layers-shuffled null (:func:`shuffled_claim`) where
    ``nulls`` has one with the same seed, claim, control, preset, task and statistic; the
    other rows keep the null they had."""
    return _beside(claims, nulls, shuffled_model)


def rotated_claim(claim: Claim, interval: Sequence[float]) -> Claim:
    """``claim``'s null row: its rule on ``interval`` (value, low, high), the same statistic of
    single coordinates computed on the same vectors in a random orthonormal basis
    (:func:`lmgeometry.measures.similarity.random_rotation`), under the null name
    :func:`lmgeometry.claims.record.rotated_model` of the claim's model.

    Examples
    --------
    >>> real = Claim(seed="003", claim="c", model="m", statistic="top-3 variance share",
    ...              value=0.7, ci_low=0.6, ci_high=0.8, threshold=0.5, direction="above",
    ...              rule="r")
    >>> null = rotated_claim(real, (0.02, 0.01, 0.03))
    >>> null.model, null.verdict
    ('basis rotated: m', 'does not hold')
    """
    return _null_row(claim, interval, rotated_model,
                     "the same vectors in a random orthonormal basis")


def with_rotated(claims: pd.DataFrame, nulls: Sequence[Claim]) -> pd.DataFrame:
    """``claims`` with each row beside its rotated-basis null (:func:`rotated_claim`) where
    ``nulls`` has one with the same seed, claim, control, preset, task and statistic; the
    other rows keep the null they had."""
    return _beside(claims, nulls, rotated_model)


def null_sentences(claims: pd.DataFrame) -> list[str]:
    """What the labels-permuted nulls of a claims table say, in sentences: how many of the
    rows that hold fail their rule on the null, then one sentence per claim (and control and
    task) whose rule also holds on the null for some model whose row holds; none without
    such nulls.

    Examples
    --------
    >>> kw = dict(seed="003", claim="a threshold nearly matches the head", statistic="gap",
    ...           threshold=0.05, direction="below", rule="r")
    >>> real = claims_frame([Claim(model="m", value=0.01, ci_low=0.0, ci_high=0.02, **kw)])
    >>> null = permuted_claim(Claim(model="m", value=0.0, ci_low=0.0, ci_high=0.0, **kw),
    ...                       (0.0, -0.01, 0.01))
    >>> first, second = null_sentences(with_permuted(real, [null]))
    >>> first.endswith("0 of the 1 rows that hold fail their rule.")
    True
    >>> second
    'A threshold nearly matches the head: its rule holds with the labels permuted too for m \
(0.00): it is met by labels the vectors cannot know.'
    """
    rows = claims[claims["null_model"].map(is_permuted)] if len(claims) else claims
    held = rows[rows["verdict"] == "holds"] if len(rows) else rows
    if held.empty:
        return []
    failing = int((held["discriminates"] == True).sum())  # noqa: E712 (an object column)
    out = ["With the labels permuted (the null: the same statistic, split and interval, the "
           "labels shuffled within the groups it uses), "
           f"{failing} of the {len(held)} rows that hold fail their rule."]
    also = held[held["null_verdict"] == "holds"]
    for (claim, control, task), part in also.groupby(["claim", "control", "task"], sort=False):
        where = "".join(f" ({x})" for x in (task, "" if control == "none" else control) if x)
        models = ", ".join(f"{m} ({v:.2f})" for m, v in zip(part["model"], part["null_value"],
                                                              strict=True))
        out.append(f"{claim[0].upper()}{claim[1:]}{where}: its rule holds with the labels "
                   f"permuted too for {models}: it is met by labels the vectors cannot know.")
    return out
