"""Known-answer tests for lmgeometry.measures.static: PC1 and mean static embeddings.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fixtures.references import corpus, random_layer
from sklearn.decomposition import PCA

from lmgeometry.measures import static


def test_static_embeddings_pc1_orientation_and_centring():
    rng = np.random.default_rng(19)
    d = 20
    mean = np.zeros(d)
    mean[0] = 10.0
    direction = np.zeros(d)
    direction[1] = 1.0
    # 8 occurrences: mean + large spread along `direction` + small noise
    a = np.array([-3.0, -2, -1, 0, 1, 2, 3, 4])
    X = mean + a[:, None] * direction + 0.01 * rng.standard_normal((8, d))
    words = corpus([["tok"] for _ in range(8)], X)
    centered = static.static_embeddings(X, words, min_contexts=5)["tok"]
    raw = static.static_embeddings(X, words, min_contexts=5, centered=False)["tok"]
    assert abs(centered @ direction) > 0.999  # centred PC1: the direction of variation
    assert raw @ mean / np.linalg.norm(mean) > 0.95  # uncentred PC1: near the mean direction
    assert raw @ X.mean(axis=0) > 0 and centered @ X.mean(axis=0) >= 0
    pca = PCA(n_components=1, svd_solver="full").fit(X).components_[0]
    assert abs(centered @ pca) == pytest.approx(1.0, abs=1e-9)  # same axis as the authors'
    # identical occurrences: no variance, the static embedding is the (unit) vector itself
    Y = np.tile(mean + direction, (6, 1))
    same = static.static_embeddings(Y, corpus([["a"]] * 6, Y), min_contexts=5)["a"]
    np.testing.assert_allclose(same, (mean + direction) / np.linalg.norm(mean + direction))
    # too few sentences: left out
    assert static.static_embeddings(X[:4], corpus([["tok"]] * 4, X[:4]), min_contexts=5) == {}



def test_static_embedding_of_identical_occurrences_beyond_the_dense_size() -> None:
    """More identical occurrences than the dense eigensolver handles: the centred matrix is
    zero, so the unit mean is returned (no ARPACK failure on a zero matrix)."""

    from lmgeometry.measures.static import static_embeddings

    n = 100  # > _DENSE_EIG_MAX rows
    v = np.arange(1.0, 9.0)
    X = np.tile(v, (n, 1))
    words = pd.DataFrame({"sentence_id": np.arange(n), "text": ["w"] * n})
    out = static_embeddings(X, words, min_contexts=5)
    np.testing.assert_allclose(out["w"], v / np.linalg.norm(v))



def test_mean_embeddings_are_the_unit_mean_of_the_occurrences():
    X, words = random_layer(4, n_sent=20)
    means = static.mean_embeddings(X, words, min_contexts=3)
    pc1 = static.static_embeddings(X, words, min_contexts=3)
    assert set(means) == set(pc1) and "," not in means
    key = words["text"].str.lower()
    for w, v in means.items():
        ref = X[(key == w).to_numpy()].mean(axis=0)
        assert v == pytest.approx(ref / np.linalg.norm(ref))
