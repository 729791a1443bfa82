"""Null models for a chapter's claims: each stand-in's untrained twin, run through the same code.

A seed's claim about a trained model is reproduced only if the rule that tests it fails where
the claim should not hold. The null here is the stand-in's untrained twin (``untrained:<spec>``,
:mod:`lmgeometry.io.untrained`): the same architecture and tokenizer with random weights, on
the same corpus, analysed by the same chapter function with the same parameters. A chapter
builds the twins' stores with :func:`null_stores`, runs its analysis on them, and puts each
claim row beside its twin's with :func:`with_nulls`
(:func:`lmgeometry.claims.attach_nulls`); the scorecard then counts a claim that also
holds on the twin as "also true of an untrained model", not as reproduced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from lmgeometry.activations.store import Store, activations
from lmgeometry.claims import attach_nulls
from lmgeometry.io.untrained import UNTRAINED_PREFIX, base_spec, is_untrained

__all__ = ["null_spec", "null_stores", "with_nulls"]


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
