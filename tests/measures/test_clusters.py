"""Cluster measures with known answers: measures/clusters.py (the planar share here; the
clustering itself is tested on planted layers in tests/chapters/test_geometry.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import special_ortho_group

from lmgeometry.measures.clusters import planar_share_replicates
from lmgeometry.measures.stats import GroupBootstrap


def _cloud(scales, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, len(scales))) * np.asarray(scales)


def test_a_plane_is_flat_and_an_isotropic_cloud_is_two_thirds_flat():
    boot = GroupBootstrap(np.arange(3000) // 10, n_boot=200, rng=0)
    everyone = np.ones(3000, bool)
    flat, flat_reps = planar_share_replicates(_cloud((3, 1, 0)), everyone, boot)
    assert flat == pytest.approx(1.0) and np.allclose(flat_reps, 1.0)
    round_, reps = planar_share_replicates(_cloud((1, 1, 1)), everyone, boot)
    # a sample's top eigenvalues are biased up: a little above 2/3 at n = 3,000
    assert 2 / 3 <= round_ < 2 / 3 + 0.02
    lo, hi = np.percentile(reps, [2.5, 97.5])
    assert lo < round_ < hi and hi - lo < 0.05


def test_the_share_is_that_of_the_masked_rows_and_ignores_rotation_and_shift():
    Z = _cloud((2, 1, 0.3), seed=1)
    mask = np.arange(3000) % 3 != 0
    boot = GroupBootstrap(np.arange(3000) // 7, n_boot=50, rng=1)
    value, reps = planar_share_replicates(Z, mask, boot)
    direct = np.linalg.eigvalsh(np.cov(Z[mask].T, bias=True))[::-1]
    assert value == pytest.approx(direct[:2].sum() / direct.sum())
    rotated = Z @ special_ortho_group.rvs(3, random_state=2) + 5.0
    again, again_reps = planar_share_replicates(rotated, mask, boot)
    assert again == pytest.approx(value) and np.allclose(again_reps, reps)
    # the unmasked rows can be anything
    Z2 = Z.copy()
    Z2[~mask] = 1e3
    assert planar_share_replicates(Z2, mask, boot)[0] == pytest.approx(value)


def test_too_few_rows_give_nan():
    boot = GroupBootstrap(np.arange(10), n_boot=5, rng=0)
    value, reps = planar_share_replicates(np.ones((10, 3)), np.arange(10) < 3, boot)
    assert np.isnan(value) and np.isnan(reps).all()


def test_label_silhouette_is_high_for_separated_labels_and_zero_for_mixed_ones():
    from lmgeometry.measures.clusters import label_silhouette_by_layer

    rng = np.random.default_rng(0)
    y = np.arange(400) % 2
    mixed = rng.standard_normal((400, 8))
    apart = mixed + 20.0 * y[:, None] * np.eye(8)[0]
    counts = rng.multinomial(400, np.full(400, 1 / 400), size=100).astype(float)
    means, reps = label_silhouette_by_layer(np.stack([mixed, apart]), y, counts)
    assert abs(means[0]) < 0.02 and means[1] > 0.8
    assert reps.shape == (100, 2) and np.allclose(reps.mean(axis=0), means, atol=0.01)
    # every row counted once: the replicate is the plain mean
    same, once = label_silhouette_by_layer(np.stack([apart]), y, np.ones((1, 400)))
    assert once[0, 0] == pytest.approx(same[0])
