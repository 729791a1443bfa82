"""Massive activations (lmgeometry.measures.massive): known answers."""

from __future__ import annotations

import numpy as np
import pytest

from lmgeometry.measures import massive


def test_magnitude_ratio_is_the_largest_over_the_median_and_scale_free() -> None:
    H = np.ones((10, 4))
    H[3, 1] = -250.0
    assert massive.magnitude_ratio(H) == pytest.approx(250.0)
    assert massive.magnitude_ratio(7.5 * H) == pytest.approx(250.0)
    assert np.isnan(massive.magnitude_ratio(np.zeros((3, 3))))


def test_top_activations_name_row_dimension_and_signed_value() -> None:
    H = np.zeros((5, 6))
    H[2, 4], H[0, 1], H[4, 5] = -9.0, 5.0, 1.0
    assert massive.top_activations(H, 2) == [(2, 4, -9.0), (0, 1, 5.0)]


def test_massive_dimensions_are_those_of_the_first_positions_in_most_sequences() -> None:
    rng = np.random.default_rng(0)
    H = rng.normal(size=(200, 16))
    first = np.zeros(200, dtype=bool)
    first[::20] = True  # ten sequences
    H[first, 7] = 1000.0
    H[np.flatnonzero(first)[:3], 2] = 1000.0  # in 3 of 10 sequences only: not the median
    H[5, 9] = 5000.0  # huge, but not at a first position
    assert massive.massive_dimensions(H, first).tolist() == [7]
    assert massive.massive_dimensions(H, np.zeros(200, dtype=bool)).size == 0
    with pytest.raises(ValueError, match="one flag per row"):
        massive.massive_dimensions(H, first[:10])


def test_first_token_silhouette_is_near_one_apart_and_near_zero_mixed() -> None:
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(300, 5))
    first = np.zeros(300, dtype=bool)
    first[::15] = True
    apart = Z.copy()
    apart[first] += 50.0
    assert massive.first_token_silhouette(apart, first).mean() > 0.9
    assert abs(massive.first_token_silhouette(Z, first).mean()) < 0.1
    assert massive.first_token_silhouette(Z, np.zeros(300, dtype=bool)).size == 0


def test_joining_silhouette_is_near_one_with_the_group_and_below_zero_with_the_rest() -> None:
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(300, 5))
    group = np.zeros(300, dtype=bool)
    group[::15] = True
    Z[group] += 50.0
    rows = np.zeros(300, dtype=bool)
    rows[1::15] = True
    joined = Z.copy()
    joined[rows] += 50.0  # placed where the group is
    assert massive.joining_silhouette(joined, rows, group).mean() > 0.9
    assert massive.joining_silhouette(Z, rows, group).mean() < -0.9  # among the rest
    # a distance ratio: the same under rotation, translation and scaling
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    np.testing.assert_allclose(massive.joining_silhouette(3 * joined @ Q + 7, rows, group),
                               massive.joining_silhouette(joined, rows, group), rtol=1e-9)
    # a row exactly halfway between two points, one in each set, scores 0
    line = np.array([[0.0], [2.0], [1.0]])
    assert massive.joining_silhouette(line, np.array([0, 0, 1], bool),
                                      np.array([1, 0, 0], bool)).tolist() == [0.0]
    assert massive.joining_silhouette(Z, np.zeros(300, dtype=bool), group).size == 0
    with pytest.raises(ValueError, match="disjoint"):
        massive.joining_silhouette(Z, group, group)
    with pytest.raises(ValueError, match="one flag per row"):
        massive.joining_silhouette(Z, rows[:10], group)
