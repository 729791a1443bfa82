"""Chapter 9 (lmgeometry.chapters.sink): the check cell's table (the model runs are tested in
tests/activations/test_interventions.py)."""

from __future__ import annotations

import pandas as pd

from lmgeometry.chapters.sink import condition_layers


def test_condition_layers_is_the_notebook_s_old_loop():
    layers = pd.DataFrame({"model": ["z", "z", "z", "a", "z"],
                           "condition": ["intact", "intact", "sink", "intact", "sink"]})
    old = [(spec, condition, len(part))
           for (spec, condition), part in layers.groupby(["model", "condition"], sort=False)]
    got = condition_layers(layers)
    assert [(r.model, r.condition, r.layers) for r in got.itertuples()] == old
    assert old == [("z", "intact", 2), ("z", "sink", 2), ("a", "intact", 1)]
