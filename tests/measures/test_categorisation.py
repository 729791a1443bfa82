"""Word categorisation on hand-built clusters whose purity is known in advance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fixtures.word_cases import category_groups

from lmgeometry.measures.categorisation import evaluate_categorisation
from lmgeometry.measures.clusters import purity


def test_purity_hand_computed():
    # cluster 0 holds a a b -> 2; cluster 1 holds b c -> 1; purity 3/5
    assert purity(["a", "a", "b", "b", "c"], [0, 0, 0, 1, 1]) == pytest.approx(3 / 5)
    assert purity(["a", "b"], [5, 7]) == 1.0


@pytest.mark.parametrize("method", ["agglomerative", "kmeans", "best"])
def test_categorisation_separated_clusters_purity_one(method):
    rng = np.random.default_rng(0)
    vectors, items = category_groups([["x"] * 4, ["y"] * 3, ["z"] * 5], rng)
    items = pd.concat(
        [items, pd.DataFrame({"word": ["missing"], "category": ["z"]})], ignore_index=True
    )
    out = evaluate_categorisation(vectors, items, method, seed=0)
    assert out["purity"] == 1.0
    assert (out["n"], out["total"], out["n_clusters"]) == (12, 13, 3)
    assert out["coverage"] == pytest.approx(12 / 13)


@pytest.mark.parametrize("method", ["agglomerative", "kmeans"])
def test_categorisation_hand_computed_purity(method):
    # three tight, far-apart groups (so any sensible 3-clustering recovers them) whose gold
    # labels disagree: majorities 2 + 3 + 2 of 9
    rng = np.random.default_rng(1)
    vectors, items = category_groups([["x", "x", "y"], ["y", "y", "y"], ["z", "z", "x"]], rng)
    out = evaluate_categorisation(vectors, items, method, seed=0)
    assert out["purity"] == pytest.approx(7 / 9)


def test_categorisation_cosine_average_linkage():
    rng = np.random.default_rng(2)
    vectors, items = category_groups([["x"] * 3, ["y"] * 3], rng)
    out = evaluate_categorisation(vectors, items, linkage="average", metric="cosine")
    assert out["purity"] == 1.0
    with pytest.raises(ValueError):
        evaluate_categorisation(vectors, items, linkage="ward", metric="cosine")
