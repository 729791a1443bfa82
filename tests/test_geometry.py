import numpy as np
import pytest

from lmgeometry.measures.clusters import (
    detect_clusters,
    pca_project,
    position_bins,
    separation_ratio,
    variance_explained_by,
)
from lmgeometry.measures.similarity import subsample


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

    from lmgeometry.chapters.geometry import cluster_profile, layer_geometry

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
    # the first words alone carry position's share; without them position explains ~nothing
    assert row["var_first"] == pytest.approx(row["var_position"], abs=0.05)
    assert abs(row["var_position_later"]) < 0.05
    assert row["norm_ratio_first"] > 5
    assert abs(row["position_knn_r2"]) < 0.2 and row["position_knn_shuffled"] < 0.1
    profile = cluster_profile(words, clusters.labels)
    assert profile.loc[1, "position0_share"] == 1.0


def test_geometry_findings_report_no_split():
    import pandas as pd

    from lmgeometry.chapters.geometry import findings

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

    from lmgeometry.chapters.geometry import findings

    summary = pd.DataFrame(
        {
            "layer": [0, 1, 2, 3],
            "k": [1, 2, 2, 1],
            "silhouette": [0.2, 0.8, 0.9, 0.3],
            "separation": [1.0, 5.0, 9.5, 4.0],
            "var_position": [0.1, 0.9, 0.95, 0.3],
            "var_first": [0.01, 0.88, 0.94, 0.1],
            "var_position_later": [0.05, 0.02, 0.03, 0.1],
            "var_upos": [0.2, 0.1, 0.1, 0.1],
            "var_word": [0.5, 0.0, -0.2, 0.4],
            "var_upos_later": [0.2, 0.2, 0.1, 0.1],
            "var_word_later": [0.5, 0.4, 0.3, 0.45],
            "norm_ratio_first": [1.0, 50.0, 120.0, 1.1],
            "position_knn_r2": [0.0, 0.3, 0.42, -0.05],
            "position_knn_shuffled": [0.01, -0.1, -0.08, -0.02],
            "mean_norm": [3.0, 500.0, 1000.0, 40.0],
            "minor_share": [0.0, 0.05, 0.04, 0.0],
            "minor_position0_share": [None, 0.8, 1.0, None],
            "position0_in_minor": [None, 0.9, 1.0, None],
            "minor_other_top": [None, "the", None, None],
            "minor_other_top_share": [None, 0.7, None, None],
            "position0_share": [0.04] * 4,
        }
    )
    text = " ".join(findings(summary, "dec", "decoder"))
    assert "2 of 4 layers split" in text and "layers 1-2" in text
    assert "widest gap is at layer 2 (k = 2, silhouette 0.90" in text
    assert "of which 100% are the first word" in text
    assert "In 2 of the 2 split layers the smaller clusters hold at least 90% of the first " \
           "words (layers 1-2); in layers 2 at least 90% of their words are first words; in " \
           "layers 1 first words are 80% to 80% of them, and the other words are most often " \
           '"the" (70% to 70% of those).' in text
    assert "norm is 1.0 to 120.0 times that of the other words (largest at layer 2); at " \
           "least 10 times in layers 1-2." in text
    # layers 1-2 are led by the first-word split, 0 and 3 by word identity
    assert "is word identity in 2 layers, whether the word is its sentence's first in 2 " \
           "layers. Position explains at most 95% of the variance (layer 2), and whether a " \
           "word is the first of its sentence alone explains at most 94% (layer 2)." in text
    assert "Without the first words, position explains at most 10% (layer 3), and the " \
           "attribute that explains most is word identity in 4 layers." in text
    assert "Word identity's ω² over all words is below 0 in layers 2 (down to -0.20)" in text
    assert "Without the first words it is 0.30 to 0.30 in those layers, so it is the first " \
           "words that push it below 0." in text
    assert "R² up to 0.42 (layer 2); with shuffled positions it reaches at most 0.01, and " \
           "the real positions score above their shuffled baseline in 2 of 4 layers. R² >= " \
           "0.8 (position close to a function of where a word lies: the rule for a position " \
           "manifold) holds in no layer." in text
    assert "The last layer (3) is the hidden state after the model's final normalisation" in text
    assert "mean norm goes from 1000.0 to 40.0, the first words' norm ratio from 120.0 to " \
           "1.1 and the best silhouette from 0.90 to 0.30 (the split disappears)." in text
    assert "the first words form a separate cluster in 2 of 4 layers (layers 1-2); as in the " \
           "seed, the separation decreases at the last layer; no layer shows the seed's " \
           "position manifold (k-NN R² of position at most 0.42, below 0.8), although " \
           "position is predicted above its shuffled baseline in 2 of 4 layers." in text
    assert "in every layer" not in text


def test_leading_attribute_names_the_first_word_split():
    import pandas as pd

    from lmgeometry.chapters.geometry import leading_attribute

    summary = pd.DataFrame(
        {
            "var_position": [0.9, 0.6, 0.1],
            "var_first": [0.89, 0.1, 0.0],
            "var_upos": [0.1, 0.2, 0.3],
            "var_word": [-0.3, 0.1, 0.2],
            "var_position_later": [0.01, 0.5, 0.0],
            "var_upos_later": [0.2, 0.1, 0.1],
            "var_word_later": [0.6, 0.2, 0.3],
        }
    )
    assert leading_attribute(summary).tolist() == [
        "whether the word is its sentence's first", "position", "part of speech"]
    assert leading_attribute(summary, later=True).tolist() == [
        "word identity", "position", "word identity"]


def test_layer_ranges_and_widest_split():
    import pandas as pd

    from lmgeometry.chapters.geometry import widest_split
    from lmgeometry.report.prose import layer_ranges

    assert layer_ranges([9, 2, 3, 4, 7, 10]) == "2-4, 7, 9-10"
    assert layer_ranges([5]) == "5"
    frame = pd.DataFrame({"layer": [0, 1, 2], "k": [1, 2, 2], "separation": [50.0, 3.0, 4.0]})
    assert widest_split(frame) == 2  # layer 0's separation does not count: it does not split
    assert widest_split(frame.assign(k=1)) is None


def test_first_word_norm_ratio_known_answer():
    from lmgeometry.measures.clusters import first_word_norm_ratio

    X = np.zeros((5, 3))
    X[:, 0] = [100.0, 1.0, -1.0, 1.0, 1.0]  # first row 100 times as long as the others
    first = np.array([True, False, False, False, False])
    assert first_word_norm_ratio(X, first) == pytest.approx(100.0)
    assert np.isnan(first_word_norm_ratio(X, np.zeros(5, dtype=bool)))


def test_knn_r2_is_about_one_on_a_swiss_roll_and_about_zero_for_random_values():
    from sklearn.datasets import make_swiss_roll

    from lmgeometry.measures.clusters import knn_r2, pca_project, position_knn_r2

    X, t = make_swiss_roll(n_samples=1500, noise=0.05, random_state=0)
    # t (the position along the roll) is monotone in no single coordinate or component ...
    coords, _ = pca_project(X, 3)
    assert max(abs(np.corrcoef(coords[:, j], t)[0, 1]) for j in range(3)) < 0.8
    # ... but a smooth function of where a point lies
    assert knn_r2(coords, t) > 0.98
    r2, shuffled = position_knn_r2(coords, t)
    assert r2 > 0.98 and shuffled < 0.05
    # values unrelated to the coordinates: about 0, no better than the shuffled baseline
    rng = np.random.default_rng(0)
    random_pos = rng.integers(1, 30, size=len(t))
    r2, shuffled = position_knn_r2(coords, random_pos, seed=1)
    assert r2 < 0.05 and r2 <= shuffled + 0.05
    # grouped folds (all rows of a group held out together) give the same answer on the roll
    groups = np.arange(len(t)) // 10
    assert knn_r2(coords, t, groups=groups) > 0.98


def test_layer_geometry_finds_a_position_manifold_among_later_words():
    import pandas as pd

    from lmgeometry.chapters.geometry import layer_geometry

    rng = np.random.default_rng(2)
    n_sent, length = 80, 12
    position = np.tile(np.arange(length), n_sent)
    words = pd.DataFrame(
        {"word_index": position, "sentence_id": np.repeat(np.arange(n_sent), length),
         "text": rng.choice(list("abcdefgh"), size=len(position)),
         "upos": rng.choice(["NOUN", "DET"], size=len(position))}
    )
    X = 0.1 * rng.normal(size=(len(position), 12))
    row, _ = layer_geometry(X, words)
    assert row["position_knn_r2"] < 0.05
    # the words lie on a rolled-up curve (a Swiss roll) with their position as arc parameter
    t = 1.5 * np.pi * (1 + 2 * position / length) + 0.05 * rng.normal(size=len(position))
    X[:, 0] += t * np.cos(t)
    X[:, 1] += 10 * rng.random(len(position))
    X[:, 2] += t * np.sin(t)
    Q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    row, _ = layer_geometry(X @ Q, words)
    assert row["position_knn_r2"] > 0.9 > 0.1 > row["position_knn_shuffled"]
