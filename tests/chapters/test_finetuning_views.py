"""Chapter 7's page views (chapters/finetuning_views.py): each equals the notebook expression
it replaced (written out here as the reference), on planted tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lmgeometry.chapters.finetuning import views as views
from lmgeometry.chapters.finetuning.analysis import STATES
from lmgeometry.io.files import to_jsonable


def _cka() -> pd.DataFrame:
    """Two (model, task) pairs, 3 layers, every comparison and estimator; known values."""
    rows = []
    for mi, (model, task) in enumerate((("z", "SST-2"), ("a", "QNLI"))):
        for ci, comp in enumerate(("pretrained", "fine-tuned", "pretrained vs fine-tuned")):
            for ei, est in enumerate(("linear", "debiased")):
                rows += [{"model": model, "task": task, "comparison": comp, "estimator": est,
                          "layer": i, "other_layer": j,
                          "cka": 1000 * mi + 100 * ci + 10 * ei + 3 * i + j + 0.123456}
                         for i in range(3) for j in range(3)]
    return pd.DataFrame(rows)


def test_cka_views_are_the_old_expressions():
    cka = _cka()
    got = views.cka_grids(cka)
    assert list(got) == [("z", "SST-2"), ("a", "QNLI")]
    for (spec, task), part in cka.groupby(["model", "task"], sort=False):
        old = [[part[(part["estimator"] == est) & (part["comparison"] == comp)]
                .pivot(index="layer", columns="other_layer", values="cka").to_numpy()
                for comp in ("pretrained", "fine-tuned", "pretrained vs fine-tuned")]
               for est in ("linear", "debiased")]
        assert np.array_equal(np.array(got[spec, task]), np.array(old))
    assert got["a", "QNLI"][1][2][2, 1] == 1000 + 200 + 10 + 7 + 0.123456

    diagonal = cka[(cka["comparison"] == "pretrained vs fine-tuned")
                   & (cka["layer"] == cka["other_layer"])].copy()
    diagonal["depth"] = diagonal["layer"] / diagonal.groupby("model")["layer"].transform("max")
    pd.testing.assert_frame_equal(views.cka_diagonal(cka), diagonal)
    assert sorted(set(diagonal["depth"])) == [0.0, 0.5, 1.0]

    old = [{"model": m, "task": k, "comparison": c, "estimator": e,
            "cka": np.round(g.pivot(index="layer", columns="other_layer",
                                    values="cka").to_numpy(), 4)}
           for (m, k, c, e), g in cka.groupby(["model", "task", "comparison",
                                               "estimator"], sort=False)]
    assert json.dumps(to_jsonable(views.cka_arrays(cka))) == json.dumps(to_jsonable(old))
    assert len(old) == 12


def test_profile_tsne_and_last_layer_views_are_the_old_expressions():
    profile = pd.DataFrame([{"model": m, "task": k, "state": s, "layer": 2, "std": v + d / 3,
                             "cosine_contribution": v * d / 7}
                            for m, k in (("z", "SST-2"), ("z", "QNLI"))
                            for v, s in enumerate(STATES) for d in range(4)])
    got = views.state_profiles(profile)
    for (spec, task), part in profile.groupby(["model", "task"], sort=False):
        old = [part.loc[part["state"] == state, "std"].to_numpy() for state in STATES]
        assert [a.tolist() for a in got[spec, task]] == [a.tolist() for a in old]
    old = [{"model": m, "task": k, "state": s, "layer": int(g["layer"].iloc[0]),
            "std": np.round(g["std"].to_numpy(), 5),
            "cosine_contribution": np.round(g["cosine_contribution"].to_numpy(), 6)}
           for (m, k, s), g in profile.groupby(["model", "task", "state"], sort=False)]
    assert json.dumps(to_jsonable(views.profile_arrays(profile))) == json.dumps(to_jsonable(old))

    tsne = profile.rename(columns={"std": "x", "cosine_contribution": "y"})
    got = views.tsne_panels(tsne)
    for (spec, task), part in tsne.groupby(["model", "task"], sort=False):
        old = [part[part["state"] == state] for state in STATES]
        for a, b in zip(got[spec, task], old, strict=True):
            pd.testing.assert_frame_equal(a, b)

    layers = pd.DataFrame({"model": ["z", "z", "a", "a"], "layer": [0, 1, 0, 1],
                           "state": ["fine-tuned"] * 4})
    old = layers[layers["layer"] == layers.groupby("model")["layer"].transform("max")]
    pd.testing.assert_frame_equal(views.last_layers(layers), old)


def test_threshold_long_is_the_old_expression():
    layers = pd.DataFrame({"model": ["z", "z", "z", "a"], "task": ["SST-2", "SST-2", "QNLI",
                                                                    "SST-2"],
                           "layer": [0, 1, 0, 0], "depth": [0.0, 1.0, 0.0, 0.0],
                           "state": ["fine-tuned", "fine-tuned", "fine-tuned", "pretrained"],
                           "threshold_accuracy": [0.6, 0.7, 0.8, 0.9],
                           "threshold_accuracy_lo": [0.5, 0.6, 0.7, 0.8],
                           "threshold_accuracy_hi": [0.7, 0.8, 0.9, 1.0]})
    runs = pd.DataFrame({"model": ["z", "z", "a"], "task": ["SST-2", "QNLI", "SST-2"],
                         "accuracy": [0.9, 0.8, 0.7], "accuracy_lo": [0.85, 0.75, 0.65],
                         "accuracy_hi": [0.95, 0.85, 0.75], "majority": [0.5, 0.51, 0.52]})
    tuned = layers[layers["state"] == "fine-tuned"]
    acc = runs.set_index(["model", "task"])
    pairs = list(zip(tuned["model"], tuned["task"], strict=True))
    reference = tuned[["model", "task", "layer", "depth"]].assign(
        accuracy=[acc.loc[(m, k), "accuracy"] for m, k in pairs],
        lo=[acc.loc[(m, k), "accuracy_lo"] for m, k in pairs],
        hi=[acc.loc[(m, k), "accuracy_hi"] for m, k in pairs])
    majority = reference.assign(accuracy=[acc.loc[(m, k), "majority"] for m, k in pairs],
                                lo=np.nan, hi=np.nan)
    old = pd.concat([
        tuned.assign(classifier="1-D threshold", accuracy=tuned["threshold_accuracy"],
                     lo=tuned["threshold_accuracy_lo"], hi=tuned["threshold_accuracy_hi"]),
        reference.assign(classifier="fine-tuned model"),
        majority.assign(classifier="majority baseline")], ignore_index=True)
    got = views.threshold_long(layers, runs)
    pd.testing.assert_frame_equal(got, old)
    assert got["accuracy"].tolist() == [0.6, 0.7, 0.8, 0.9, 0.9, 0.8, 0.5, 0.5, 0.51]
