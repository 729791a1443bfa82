import numpy as np
import pytest

from lmgeometry.report.plot_ranges import (
    axis_id,
    axis_range,
    cloud_ranges,
    off_scale_text,
    view_layout,
)


def _inside(values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    return (values >= bounds[0]) & (values <= bounds[1])


def test_two_far_points_go_off_scale_and_the_cloud_fills_the_axis() -> None:
    """Chapter 1's SmolLM2 panel in miniature: a dense cloud and two points near 8000."""
    x = np.r_[np.random.default_rng(0).normal(0.0, 20.0, 961), 7874.0, 8088.0]
    low, high = axis_range(x)
    assert _inside(x[:-2], (low, high)).all()
    assert high < 100 and not _inside(x[-2:], (low, high)).any()
    # padded by 4% of the kept span at each end (to the rounding of a short number)
    span = x[:-2].max() - x[:-2].min()
    assert low == pytest.approx(x[:-2].min() - 0.04 * span, abs=1e-3 * span)
    assert high == pytest.approx(x[:-2].max() + 0.04 * span, abs=1e-3 * span)


@pytest.mark.parametrize("share", [0.02, 0.05])
def test_a_far_cluster_of_a_few_percent_stays_on_scale(share: float) -> None:
    """A decoder's first-token cluster (about 5% of the points) is the structure itself."""
    rng = np.random.default_rng(1)
    n_far = int(share * 1000)
    x = np.r_[rng.normal(0.0, 1.0, 1000 - n_far), rng.normal(500.0, 30.0, n_far)]
    low, high = axis_range(x)
    assert _inside(x, (low, high)).all()
    assert low == pytest.approx(x.min() - 0.04 * np.ptp(x), rel=1e-3)


def test_more_than_one_percent_of_the_points_never_go_off_scale_at_one_end() -> None:
    rng = np.random.default_rng(2)
    cloud = rng.normal(size=990)
    ten = np.r_[cloud, np.full(10, 1e4)]  # exactly 1% of 1000: off scale
    eleven = np.r_[cloud[:-1], np.full(11, 1e4)]  # 11 of 1000: on scale
    assert cloud_ranges(ten[:, None])[1] == 10
    assert cloud_ranges(eleven[:, None])[1] == 0
    # and below 100 points nothing goes off scale
    assert cloud_ranges(np.r_[cloud[:98], 1e4][:, None])[1] == 0


@pytest.mark.parametrize("seed", range(5))
def test_gaussian_and_uniform_clouds_keep_every_point(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for points in (rng.normal(size=(2000, 3)), rng.uniform(size=(500, 2))):
        ranges, n_off = cloud_ranges(points)
        assert n_off == 0
        for j, (low, high) in enumerate(ranges):
            assert low < points[:, j].min() and high > points[:, j].max()


def test_a_point_off_scale_on_two_axes_counts_once_and_nan_is_ignored() -> None:
    rng = np.random.default_rng(3)
    points = rng.normal(size=(500, 2))
    points[0] = [1e3, 1e3]  # off scale on both axes
    points[1] = [0.0, -1e3]
    points[2] = [np.nan, 0.0]
    ranges, n_off = cloud_ranges(points)
    assert n_off == 2
    assert all(high < 10 and low > -10 for low, high in ranges)
    assert axis_range(np.full(5, 3.0)) == (2.5, 3.5)
    assert axis_range(np.array([np.nan])) == (-1.0, 1.0)


def test_the_note_and_the_layout_a_view_sets() -> None:
    assert off_scale_text(0) == ""
    assert off_scale_text(1) == "1 point off scale"
    assert off_scale_text(2) == "2 points off scale"
    assert off_scale_text(3, 4000) == "3 of the 4000 points off scale"
    assert off_scale_text(1, 4000) == "1 of the 4000 points off scale"
    points = np.r_[np.random.default_rng(4).normal(size=(300, 2)), [[500.0, 0.0]]]
    layout = view_layout(points, ("xaxis2", "yaxis2"), note=5)
    assert set(layout) == {"xaxis2.range", "yaxis2.range", "annotations[5].text",
                           "annotations[5].visible"}
    assert layout["annotations[5].text"] == "1 point off scale"
    assert layout["annotations[5].visible"] is True
    assert layout["xaxis2.range"][1] < 10
    with pytest.raises(ValueError, match="3 axes for points of 2 coordinates"):
        view_layout(points, ("x", "y", "z"), note=0)
    with pytest.raises(ValueError, match=r"\(n, d\) array"):
        cloud_ranges(np.zeros(4))


def test_axis_ids_name_the_axes_traces_and_annotations_refer_to() -> None:
    assert (axis_id("xaxis"), axis_id("yaxis2"), axis_id("xaxis13")) == ("x", "y2", "x13")
    with pytest.raises(ValueError, match="not a 2-D axis's layout name"):
        axis_id("scene.xaxis")
