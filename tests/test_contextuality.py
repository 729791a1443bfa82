"""Seed 001's claims and the per-layer tables, on constructed inputs with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry import contextuality


def _per_layer(baseline, selfsim_adj, intrasim_adj, mev_adj) -> pd.DataFrame:
    n = len(baseline)
    return pd.DataFrame({
        "layer": np.arange(n), "depth": np.arange(n) / (n - 1), "preset": "corrected",
        "baseline_cosine": baseline, "selfsim_adj": selfsim_adj,
        "intrasim_adj": intrasim_adj, "mev_adj": mev_adj, "model": "toy",
    })


def _lowest(stop_share_by_layer) -> pd.DataFrame:
    rows = []
    for layer, share in enumerate(stop_share_by_layer):
        n_stop = round(5 * share)
        rows += [{"layer": layer, "word": f"w{layer}{i}", "is_stop": i < n_stop} for i in range(5)]
    return pd.DataFrame(rows)


def test_claims_hold_for_a_model_that_behaves_as_the_paper_says() -> None:
    # layer 0 is context-free and must be ignored: give it values that contradict every trend
    d = _per_layer(baseline=[0.9, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.0, 0.9, 0.8, 0.5, 0.3],
                   intrasim_adj=[0.9, 0.01, 0.02, 0.05, 0.08],
                   mev_adj=[0.9, 0.04, 0.03, 0.02, 0.01])
    table = contextuality.claims(d, _lowest([0, 1, 1, 0.6, 0.8])).set_index("claim")["holds"]
    assert table.all(), table


def test_claims_fail_for_the_opposite_model() -> None:
    d = _per_layer(baseline=[0.1, 0.5, 0.4, 0.3, 0.2], selfsim_adj=[0.9, 0.2, 0.3, 0.5, 0.6],
                   intrasim_adj=[0.0, 0.2, 0.1, 0.0, -0.1], mev_adj=[0.0, 0.2, 0.01, 0.01, 0.01])
    table = contextuality.claims(d, _lowest([1, 0, 0.2, 0.4, 0])).set_index("claim")["holds"]
    assert not table.any(), table
    evidence = contextuality.claims(d, _lowest([1, 0, 0.2, 0.4, 0]))["evidence"].tolist()
    assert "max adjusted MEV 0.200 (layer 1)" in evidence


def test_halves_split_layers_one_to_l() -> None:
    d = _per_layer(baseline=[100.0, 1, 2, 3, 4], selfsim_adj=[0] * 5, intrasim_adj=[0] * 5,
                   mev_adj=[0] * 5)
    assert contextuality._halves(d, "baseline_cosine") == (1.5, 3.5)


def test_summary_and_findings_are_generated_from_the_numbers() -> None:
    d = _per_layer(baseline=[0.05, 0.1, 0.2, 0.3, 0.4], selfsim_adj=[0.9, 0.8, 0.6, 0.5, 0.3],
                   intrasim_adj=[0.0, 0.01, 0.02, 0.05, 0.08],
                   mev_adj=[0.5, 0.04, 0.03, 0.02, 0.01])
    s = contextuality.summary(d).loc[("toy", "corrected")]
    assert s["layers"] == 5 and s["baseline rises"] and s["last-layer baseline > 0.2"]
    assert s["adjusted MEV < 0.05 everywhere"]
    text = " ".join(contextuality.findings(d, "toy"))
    assert "0.10 in layer 1 and 0.40 in the last layer" in text
    assert "least self-similar in layer 4" in text
