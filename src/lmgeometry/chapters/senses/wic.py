"""Chapter "Senses", its WiC pass: a cosine threshold per layer on the Word-in-Context pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters.common import controls_for
from lmgeometry.measures.permutation import permute_within
from lmgeometry.measures.similarity import subsample, unit_rows
from lmgeometry.measures.stats import wilson_interval
from lmgeometry.measures.transforms import TRANSFORMS, LayerFit
from lmgeometry.measures.wic import evaluate_wic

__all__ = [
    "wic_pass",
]


def _wic_row(sim: np.ndarray, pairs: pd.DataFrame) -> dict[str, float]:
    split = pairs["split"].to_numpy()
    y = pairs["label"].to_numpy(dtype=bool)
    parts = {k: (sim[split == k], y[split == k]) for k in ("train", "dev", "test")}
    r = evaluate_wic(*parts["train"], *parts["dev"],
                     *(parts["test"] if len(parts["test"][0]) else (None, None)))
    for name in ("dev", "test"):
        lo, hi = wilson_interval(float(r[f"{name}_accuracy"]), int(r[f"n_{name}"]))
        r.update({f"{name}_accuracy_lo": lo, f"{name}_accuracy_hi": hi})
    return r


def wic_pass(store: Store, pairs: pd.DataFrame, *, seed: int = 0, fit_rows: int = 2000,
             transforms: Sequence[str] = TRANSFORMS) -> pd.DataFrame:
    """WiC accuracy of a cosine threshold per layer, control and transform, each layer read
    once.

    ``pairs`` (``corpus.wic_corpus``) give the store rows of the two targets (``row1``,
    ``row2``), the ``split`` and the ``label``. The threshold is fitted on the training pairs
    (:func:`lmgeometry.measures.wic.evaluate_wic`); dev and test accuracies get Wilson
    intervals. The transforms are fitted on ``fit_rows`` sampled words of the layer. Under
    the control "first word excluded" the pairs whose target is a sentence's first word are
    left out, and so are first words from the fit.

    The claim's null (raw vectors only) is the same threshold fitted and scored on the
    labels permuted within each split (:func:`permute_within`: every split keeps its balance).

    Returns
    -------
    pandas.DataFrame
        ``model, layer, depth, control, transform`` and :func:`evaluate_wic`'s columns, with
        ``dev_accuracy_lo/hi`` and ``test_accuracy_lo/hi``; on the raw rows also
        ``permuted_dev_accuracy`` and ``permuted_test_accuracy`` with theirs (the null).
    """
    first = store.words["word_index"].to_numpy() == 0
    r1, r2 = pairs["row1"].to_numpy(), pairs["row2"].to_numpy()
    sample = subsample(store.n_words, fit_rows, seed)
    rows = np.unique(np.concatenate([r1, r2, sample]))
    p1, p2, s_pos = (np.searchsorted(rows, r) for r in (r1, r2, sample))
    plans = {}
    for control in controls_for(store):
        keep = ~(first[r1] | first[r2]) if control != "none" else np.ones(len(pairs), bool)
        fit = s_pos if control == "none" else s_pos[~first[sample]]
        kept = pairs[keep]
        permuted = kept.assign(label=permute_within(kept["label"].to_numpy(),
                                                    kept["split"].to_numpy(), seed=seed))
        plans[control] = (keep, fit, permuted)
    out = []
    for layer in range(store.n_layers):
        X = store.layer(layer, rows)
        for control, (keep, fit, permuted) in plans.items():
            layer_fit = LayerFit.of(X[fit])
            for how in transforms:
                U = unit_rows(layer_fit.apply(X, how))[0]
                sim = (U[p1[keep]] * U[p2[keep]]).sum(axis=1)
                null = _wic_row(sim, permuted) if how == "raw" else {}
                out.append({"model": store.label, "layer": layer, "depth": store.depth(layer),
                            "control": control, "transform": how,
                            **_wic_row(sim, pairs[keep]),
                            **{f"permuted_{k}": v for k, v in null.items()
                               if k.startswith(("dev_accuracy", "test_accuracy"))}})
    return pd.DataFrame(out)
