import numpy as np
import pytest

from lmgeometry.geometry import (
    detect_clusters,
    pca_project,
    position_bins,
    separation_ratio,
    subsample,
    variance_explained_by,
)


def two_blobs(n=400, d=20, gap=20.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[: n // 4, 0] += gap  # a small cluster far along one axis
    labels = np.zeros(n, dtype=int)
    labels[: n // 4] = 1
    return X, labels


def test_subsample_is_seeded_and_bounded():
    a, b = subsample(1000, 100, seed=3), subsample(1000, 100, seed=3)
    assert np.array_equal(a, b) and len(a) == 100 and len(np.unique(a)) == 100
    assert np.array_equal(subsample(50, 100), np.arange(50))


def test_pca_on_rank_one_data_explains_everything():
    rng = np.random.default_rng(0)
    X = np.outer(rng.normal(size=200), rng.normal(size=10))
    _, explained = pca_project(X, n_components=2)
    assert explained[0] == pytest.approx(1.0, abs=1e-6)


def test_detect_clusters_finds_two_separated_blobs_with_largest_first():
    X, truth = two_blobs()
    result = detect_clusters(X, max_k=4)
    assert result.k == 2
    assert result.silhouette > 0.5
    assert result.separation > 3
    # cluster 0 is the larger one (the 75% without the shift)
    agreement = (result.labels == (truth == 1).astype(int)).mean()
    assert agreement == 1.0


def test_detect_clusters_calls_a_gaussian_one_cloud():
    X = np.random.default_rng(1).normal(size=(400, 20))
    result = detect_clusters(X, max_k=4)
    assert result.k == 1 and np.all(result.labels == 0)


def test_separation_ratio_is_scale_and_shift_invariant():
    X, labels = two_blobs()
    r = separation_ratio(X, labels)
    assert separation_ratio(5.0 * X + 3.0, labels) == pytest.approx(r)
    # centroid gap 20 along one axis, radius sqrt(20) in each blob
    assert r == pytest.approx(20 / np.sqrt(20), rel=0.1)


def test_variance_explained_by_known_cases():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(10), 50)
    means = rng.normal(size=(10, 5)) * 10
    exact = means[groups]
    assert variance_explained_by(
        exact + 1e-9 * rng.normal(size=exact.shape), groups
    ) == pytest.approx(1.0, abs=1e-6)
    noise = rng.normal(size=(500, 5))
    assert abs(variance_explained_by(noise, groups)) < 0.02  # unrelated grouping: about 0
    assert variance_explained_by(noise, groups, adjusted=False) > variance_explained_by(
        noise, groups
    )
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    X = exact + noise
    assert variance_explained_by(X @ Q * 7 + 1, groups) == pytest.approx(
        variance_explained_by(X, groups)
    )


def test_position_bins():
    assert list(position_bins(np.array([0, 1, 2, 3, 4, 7, 8, 40]))) == [0, 1, 2, 2, 3, 3, 4, 6]


def test_layer_geometry_attributes_a_position0_cluster():
    import pandas as pd

    from lmgeometry.geometry import cluster_profile, layer_geometry

    rng = np.random.default_rng(0)
    n_sent, length = 60, 8
    words = pd.DataFrame(
        {
            "word_index": np.tile(np.arange(length), n_sent),
            "text": rng.choice(["bank", "the", "light", "run"], size=n_sent * length),
            "upos": rng.choice(["NOUN", "DET"], size=n_sent * length),
        }
    )
    X = rng.normal(size=(len(words), 16))
    X[words["word_index"].to_numpy() == 0, 0] += 40.0  # the attention-sink pattern
    row, clusters = layer_geometry(X, words)
    assert row["k"] == 2
    assert row["minor_position0_share"] == 1.0
    assert row["var_position"] > 0.5 > abs(row["var_upos"])
    profile = cluster_profile(words, clusters.labels)
    assert profile.loc[1, "position0_share"] == 1.0


def test_geometry_findings_report_no_split():
    import pandas as pd

    from lmgeometry.geometry import findings

    summary = pd.DataFrame(
        {
            "layer": [0, 1],
            "k": [1, 1],
            "silhouette": [0.2, 0.3],
            "separation": [1.0, 1.2],
            "var_position": [0.1, 0.4],
            "var_upos": [0.2, 0.1],
            "var_word": [0.5, 0.2],
            "minor_share": [0.0, 0.0],
            "minor_position0_share": [None, None],
            "position0_in_minor": [0.0, 0.0],
            "minor_other_top": [None, None],
            "minor_other_top_share": [None, None],
            "position0_share": [0.1, 0.1],
        }
    )
    text = " ".join(findings(summary, "m", "encoder"))
    assert "no layer splits" in text and "0.30 at layer 1" in text
    assert "word identity in 1 layer" in text and "position in 1 layer" in text
    assert "as BERT did in the seed, no layer splits" in text


def test_geometry_findings_state_the_position0_split_and_compare_with_gpt2():
    import pandas as pd

    from lmgeometry.geometry import findings

    summary = pd.DataFrame(
        {
            "layer": [0, 1, 2, 3],
            "k": [1, 2, 2, 3],
            "silhouette": [0.2, 0.8, 0.9, 0.7],
            "separation": [1.0, 5.0, 9.5, 4.0],
            "var_position": [0.1, 0.9, 0.95, 0.3],
            "var_position_later": [0.05, 0.2, 0.3, 0.1],
            "position_rho": [0.2, 0.75, 0.8, 0.3],
            "var_upos": [0.2, 0.1, 0.1, 0.1],
            "var_word": [0.5, 0.0, -0.2, 0.4],
            "minor_share": [0.0, 0.05, 0.04, 0.2],
            "minor_position0_share": [None, 0.8, 1.0, 0.2],
            "position0_in_minor": [None, 0.9, 1.0, 0.5],
            "minor_other_top": [None, "the", None, "a"],
            "minor_other_top_share": [None, 0.7, None, 0.1],
            "position0_share": [0.04] * 4,
        }
    )
    text = " ".join(findings(summary, "dec", "decoder"))
    assert "3 of 4 layers split" in text and "layers 1-3" in text
    assert "widest gap is at layer 2 (k = 2, silhouette 0.90" in text
    assert "of which 100% are the first word" in text
    assert "In 2 of the 3 split layers the smaller clusters hold at least 90% of the first " \
           "words (layers 1-2); in layers 2 at least 90% of their words are first words; in " \
           "layers 1 first words are 80% to 80% of them, and the other words are most often " \
           '"the" (70% to 70% of those).' in text
    assert "at most 95% of the variance (layer 2)" in text
    assert "after the first it explains at most 30% (layer 2)" in text
    assert "|rho| up to 0.80 (layer 2); |rho| >= 0.7 in layers 1-2" in text
    assert "split off from the rest, but in 2 of 4 layers, not in every layer; a component " \
           "of the largest cluster follows position closely (|rho| >= 0.7) in layers 1-2, " \
           "which fits the seed's position manifold." in text


def test_layer_ranges_and_widest_split():
    import pandas as pd

    from lmgeometry.geometry import layer_ranges, widest_split

    assert layer_ranges([9, 2, 3, 4, 7, 10]) == "2-4, 7, 9-10"
    assert layer_ranges([5]) == "5"
    frame = pd.DataFrame({"layer": [0, 1, 2], "k": [1, 2, 2], "separation": [50.0, 3.0, 4.0]})
    assert widest_split(frame) == 2  # layer 0's separation does not count: it does not split
    assert widest_split(frame.assign(k=1)) is None


def test_position_rho_finds_a_position_manifold():
    import pandas as pd

    from lmgeometry.geometry import layer_geometry

    rng = np.random.default_rng(2)
    n_sent, length = 50, 10
    position = np.tile(np.arange(length), n_sent)
    words = pd.DataFrame(
        {"word_index": position, "text": rng.choice(list("abcdefgh"), size=len(position)),
         "upos": rng.choice(["NOUN", "DET"], size=len(position))}
    )
    X = rng.normal(size=(len(position), 12))
    row, _ = layer_geometry(X, words)
    assert row["position_rho"] < 0.3
    X[:, 3] += 2.0 * position  # the words move along one direction with their position
    row, _ = layer_geometry(X, words)
    assert row["position_rho"] > 0.9
    assert row["var_position_later"] > 0.5
