"""Chapter 7's page views cut from :func:`lmgeometry.chapters.finetuning.analysis.analyse`'s
tables: the arrays and long tables its figures draw and its results file holds; no new numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry.chapters.finetuning.analysis import STATES
from lmgeometry.chapters.rogue_dimensions.analysis import last_layers

__all__ = [
    "CKA_COMPARISONS",
    "CKA_ESTIMATORS",
    "cka_arrays",
    "cka_diagonal",
    "cka_grids",
    "last_layers",
    "profile_arrays",
    "state_profiles",
    "threshold_long",
    "tsne_panels",
]

#: The CKA maps' columns (comparisons) and rows (estimators), in the figure's order.
CKA_COMPARISONS = ("pretrained", "fine-tuned", "pretrained vs fine-tuned")
CKA_ESTIMATORS = ("linear", "debiased")


def _matrix(part: pd.DataFrame) -> np.ndarray:
    """A CKA table of one map as a matrix (rows ``layer``, columns ``other_layer``)."""
    return part.pivot(index="layer", columns="other_layer", values="cka").to_numpy()


def cka_grids(cka: pd.DataFrame) -> dict[tuple[str, str], list[list[np.ndarray]]]:
    """Per (model, task), in their order in ``cka``: the CKA maps, a row per estimator
    (:data:`CKA_ESTIMATORS`) and a column per comparison (:data:`CKA_COMPARISONS`)."""
    return {key: [[_matrix(part[(part["estimator"] == est) & (part["comparison"] == comp)])
                   for comp in CKA_COMPARISONS] for est in CKA_ESTIMATORS]
            for key, part in cka.groupby(["model", "task"], sort=False)}


def cka_diagonal(cka: pd.DataFrame) -> pd.DataFrame:
    """CKA of each layer with itself before and after fine-tuning, with ``depth`` (layer over
    the model's last layer)."""
    diagonal = cka[(cka["comparison"] == "pretrained vs fine-tuned")
                   & (cka["layer"] == cka["other_layer"])].copy()
    diagonal["depth"] = diagonal["layer"] / diagonal.groupby("model")["layer"].transform("max")
    return diagonal


def state_profiles(profile: pd.DataFrame) -> dict[tuple[str, str], list[np.ndarray]]:
    """Per (model, task): each state's (:data:`STATES`) standard deviation of every dimension
    in the last layer."""
    return {key: [part.loc[part["state"] == state, "std"].to_numpy() for state in STATES]
            for key, part in profile.groupby(["model", "task"], sort=False)}


def threshold_long(layers: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per fine-tuned layer, three classifiers (``classifier``): the 1-D threshold, the
    fine-tuned model (its accuracy, the same in every layer) and the majority baseline (no
    interval), with ``accuracy``, ``lo`` and ``hi``."""
    tuned = layers[layers["state"] == "fine-tuned"]
    acc = runs.set_index(["model", "task"])
    keys = list(zip(tuned["model"], tuned["task"], strict=True))
    reference = tuned[["model", "task", "layer", "depth"]].assign(
        accuracy=[acc.loc[key, "accuracy"] for key in keys],
        lo=[acc.loc[key, "accuracy_lo"] for key in keys],
        hi=[acc.loc[key, "accuracy_hi"] for key in keys])
    majority = reference.assign(accuracy=[acc.loc[key, "majority"] for key in keys],
                                lo=np.nan, hi=np.nan)
    return pd.concat([
        tuned.assign(classifier="1-D threshold", accuracy=tuned["threshold_accuracy"],
                     lo=tuned["threshold_accuracy_lo"], hi=tuned["threshold_accuracy_hi"]),
        reference.assign(classifier="fine-tuned model"),
        majority.assign(classifier="majority baseline")], ignore_index=True)


def tsne_panels(tsne: pd.DataFrame) -> dict[tuple[str, str], list[pd.DataFrame]]:
    """Per (model, task): the t-SNE points of each state (:data:`STATES`)."""
    return {key: [part[part["state"] == state] for state in STATES]
            for key, part in tsne.groupby(["model", "task"], sort=False)}


def cka_arrays(cka: pd.DataFrame) -> list[dict]:
    """The results file's CKA maps: per (model, task, comparison, estimator), the matrix
    rounded to 4 decimals (one array, not one record per number)."""
    return [{"model": m, "task": k, "comparison": c, "estimator": e,
             "cka": np.round(_matrix(g), 4)}
            for (m, k, c, e), g in cka.groupby(["model", "task", "comparison", "estimator"],
                                               sort=False)]


def profile_arrays(profile: pd.DataFrame) -> list[dict]:
    """The results file's dimension profiles: per (model, task, state), the layer and every
    dimension's standard deviation (5 decimals) and cosine contribution (6 decimals)."""
    return [{"model": m, "task": k, "state": s, "layer": int(g["layer"].iloc[0]),
             "std": np.round(g["std"].to_numpy(), 5),
             "cosine_contribution": np.round(g["cosine_contribution"].to_numpy(), 6)}
            for (m, k, s), g in profile.groupby(["model", "task", "state"], sort=False)]
