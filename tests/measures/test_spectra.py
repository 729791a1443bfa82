"""Tests for lmgeometry.measures.spectra against numpy's SVD and analytic values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmgeometry.measures import spectra


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_singular_values_and_projection_match_svd():
    rng = _rng(15)
    W = rng.standard_normal((200, 6)) * np.array([4, 3, 2, 1, 0.5, 0.2]) + 1.5
    np.testing.assert_allclose(
        spectra.singular_values(W, chunk_rows=50), np.linalg.svd(W, compute_uv=False), rtol=1e-10
    )
    Wc = W - W.mean(axis=0)
    sv_c = np.linalg.svd(Wc, compute_uv=False)
    np.testing.assert_allclose(spectra.singular_values(W, 3, centered=True), sv_c[:3], rtol=1e-10)
    for centered, M in ((False, W), (True, Wc)):
        U, S, _ = np.linalg.svd(M, full_matrices=False)
        coords = spectra.project_2d(W, centered=centered)
        np.testing.assert_allclose(np.abs(coords), np.abs(U[:, :2] * S[:2]), atol=1e-9)
    np.testing.assert_allclose(spectra.project_2d(W, centered=True).mean(axis=0), 0, atol=1e-12)


def test_norm_distribution():
    W = _rng(16).standard_normal((50, 4)) + 2
    np.testing.assert_allclose(spectra.norm_distribution(W), np.linalg.norm(W, axis=1), rtol=1e-12)
    np.testing.assert_allclose(
        spectra.norm_distribution(W, centered=True),
        np.linalg.norm(W - W.mean(axis=0), axis=1),
        rtol=1e-12,
    )


def test_toy_sphere_shift_singular_values():
    n, d = 20_000, 3
    first = []
    for shift in (0.0, 0.5, 1.0, 2.0, 4.0):
        points, sv = spectra.toy_sphere_shift(n, d, shift, seed=0)
        u = np.ones(d) / math.sqrt(d)
        np.testing.assert_allclose(np.linalg.norm(points - shift * u, axis=1), 1.0, rtol=1e-12)
        # E[x x^T] = I/d + shift^2 u u^T
        assert sv[0] == pytest.approx(math.sqrt(n * (1 / d + shift**2)), rel=0.03)
        np.testing.assert_allclose(sv[1:], math.sqrt(n / d), rtol=0.03)
        first.append(sv[0])
    assert np.all(np.diff(first) > 0)


def test_spectral_views_match_svd():
    W = _rng(4).standard_normal((200, 6)) * np.arange(1, 7) + 1.5
    views = spectra.spectral_views(W, rows=np.arange(10), chunk_rows=32)
    assert np.allclose(views["singular_values"], np.linalg.svd(W, compute_uv=False))
    Wc = W - W.mean(0)
    assert np.allclose(views["singular_values_centered"], np.linalg.svd(Wc, compute_uv=False))
    _, _, Vt = np.linalg.svd(Wc)
    assert np.allclose(np.abs(views["projection_centered"]), np.abs(Wc[:10] @ Vt[:2].T))
