"""The transforms of a layer's vectors: their defining properties."""

from __future__ import annotations

import numpy as np
import pytest


def test_transforms_have_their_defining_properties() -> None:
    from lmgeometry.measures import transforms

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 200)) * np.linspace(1, 50, 200) + 7.0
    np.testing.assert_array_equal(transforms.transform(X, "raw"), X)
    Z = transforms.transform(X, "standardised")
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(Z.std(axis=0), 1, atol=1e-9)
    R = transforms.transform(X, "top PCs removed")  # ceil(200 / 100) = 2 directions removed
    Xc = X - X.mean(axis=0)
    top = np.linalg.svd(Xc, full_matrices=False)[2][:2]
    np.testing.assert_allclose(R @ top.T, 0, atol=1e-6)
    with pytest.raises(ValueError, match="how must be"):
        transforms.transform(X, "whitened")


def test_layer_fit_applies_statistics_of_another_sample() -> None:
    from lmgeometry.measures.transforms import LayerFit, transform

    rng = np.random.default_rng(4)
    F = rng.normal(size=(400, 150)) * np.linspace(1, 30, 150) + 3.0
    X = rng.normal(size=(20, 150))
    fit = LayerFit.of(F)
    Fc = F - F.mean(axis=0)
    top = np.linalg.svd(Fc, full_matrices=False)[2][:2]
    R = fit.apply(X, "top PCs removed")
    np.testing.assert_allclose(R @ top.T, 0, atol=1e-8)  # F's top directions, not X's
    np.testing.assert_allclose(transform(X, "top PCs removed", fit=F), R)
    np.testing.assert_allclose(fit.apply(X, "standardised"), (X - F.mean(0)) / F.std(0))
    coords = fit.project(X)
    np.testing.assert_allclose(np.abs(coords), np.abs((X - F.mean(0)) @ top.T), atol=1e-8)
