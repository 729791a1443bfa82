"""Chapter 6 (rogue dimensions, CKA, 1-D threshold, ablation) against known answers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import array_store
from scipy.stats import ortho_group

from lmgeometry.chapters.rogue_dimensions import analysis as rogue_dimensions
from lmgeometry.measures import probes, similarity
from lmgeometry.measures.cosines import mean_pairwise_cosine


def test_cka_identity_and_invariances() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 20))
    Q = ortho_group.rvs(20, random_state=1)
    assert similarity.linear_cka(X, X) == pytest.approx(1.0)
    # orthogonal transform, isotropic scaling and translation leave CKA at 1
    assert similarity.linear_cka(X, 3.0 * X @ Q + 5.0) == pytest.approx(1.0)
    # widths may differ: a zero-padded copy is the same representation
    assert similarity.linear_cka(X, np.hstack([X, np.zeros((200, 7))])) == pytest.approx(1.0)


def test_cka_of_independent_representations_is_small() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(3000, 5)), rng.normal(size=(3000, 5))
    assert similarity.linear_cka(X, Y) < 0.01


def test_cka_matrix_matches_pairwise() -> None:
    rng = np.random.default_rng(1)
    A = [rng.normal(size=(50, 8)) for _ in range(3)]
    B = [rng.normal(size=(50, 4)) for _ in range(2)]
    M = similarity.cka_matrix(A)
    assert np.allclose(np.diag(M), 1.0)
    assert np.allclose(M, M.T)
    C = similarity.cka_matrix(A, B)
    expected = [[similarity.linear_cka(a, b) for b in B] for a in A]
    assert np.allclose(C, expected, atol=1e-12)
    with pytest.raises(ValueError, match="same items"):
        similarity.cka_matrix(A, [rng.normal(size=(49, 4))])


def test_cosine_contributions_sum_to_mean_cosine() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 10)) + np.array([4.0] + [0.0] * 9)
    cc = similarity.cosine_contributions(X)
    assert cc.sum() == pytest.approx(mean_pairwise_cosine(X), abs=1e-9)
    assert int(np.argmax(cc)) == 0
    # every row along e_3: all cosine comes from dimension 3
    E = np.zeros((5, 4))
    E[:, 3] = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert np.allclose(similarity.cosine_contributions(E), [0, 0, 0, 1])


def test_top_dimensions_and_variance_share() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20000, 50))
    assert similarity.variance_share(X, 5) == pytest.approx(5 / 50, abs=0.01)
    X[:, 17] *= 30
    assert similarity.top_dimensions(X, 1).tolist() == [17]
    assert similarity.variance_share(X, 1) > 0.9
    with pytest.raises(ValueError):
        similarity.top_dimensions(X, 1, by="norm")


def test_threshold_classifier_separable_and_direction() -> None:
    x = np.array([0.1, 0.4, 0.2, 2.0, 3.0, 2.5])
    y = np.array([0, 0, 0, 1, 1, 1])
    clf = probes.ThresholdClassifier().fit(x, y)
    assert clf.train_accuracy == 1.0 and clf.sign == 1
    assert 0.4 < clf.threshold < 2.0
    flipped = probes.ThresholdClassifier().fit(x, 1 - y)
    assert flipped.sign == -1 and flipped.score(x, 1 - y) == 1.0


def test_threshold_classifier_is_optimal_against_brute_force() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=60).round(1)  # ties included
    y = (x + rng.normal(scale=1.0, size=60) > 0).astype(int)
    clf = probes.ThresholdClassifier().fit(x, y)
    candidates = np.concatenate([[x.min() - 1], np.unique(x) + 1e-9])
    best = max(max(((x > t) == y).mean(), ((x <= t) == y).mean()) for t in candidates)
    assert clf.train_accuracy == pytest.approx(best)
    assert clf.score(x, y) == pytest.approx(best)


def _large_mean_label_data(n: int = 2000, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Label carried entirely by dimension 0, which has a large mean (a rogue dimension)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 10))
    X[:, 0] = 100.0 + 10 * (2 * y - 1) + rng.normal(size=n)
    X[:, 9] *= 0.01  # lowest variance, irrelevant
    return X, y


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_ablation_of_the_label_dimension_drops_to_chance(mode: str) -> None:
    X, y = _large_mean_label_data()
    curve = probes.ablation_curve(X[:1000], y[:1000], X[1000:], y[1000:], ks=[0, 1, 5],
                                 mode=mode)
    assert set(curve["mode"]) == {mode} and curve["head_converged"].all()
    acc = curve.set_index(["removed", "k"])["accuracy"]
    majority = max(y[1000:].mean(), 1 - y[1000:].mean())
    assert acc[("top", 0)] == 1.0
    # zero: every logit moves by -w_0 * 100, one class for all; mean: no signal left
    assert acc[("top", 1)] <= majority + 0.03
    # ablating irrelevant (lowest-variance) dimensions changes nothing
    assert acc[("bottom", 1)] == 1.0 and acc[("bottom", 5)] == 1.0


def test_zero_and_mean_ablation_differ_on_a_large_mean_dimension() -> None:
    rng = np.random.default_rng(7)
    n = 2000
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 3)) * 0.1
    X[:, 0] = 50.0 + 3 * (2 * y - 1) + rng.normal(scale=3.0, size=n)  # top variance, big mean
    X[:, 1] = 2 * (2 * y - 1) + rng.normal(scale=0.5, size=n)          # the label, mean 0
    train, test = slice(0, 1000), slice(1000, None)
    fitted = probes.fit_logistic(X[train], y[train], standardise=False, solver="newton-cholesky")
    head = fitted.model
    assert fitted.converged and head.coef_[0, 0] > 0
    acc = {m: probes.ablation_curve(X[train], y[train], X[test], y[test], ks=[1], mode=m)
           .set_index(["removed", "k"]).loc[("top", 1), "accuracy"] for m in ("zero", "mean")}
    majority = max(y[test].mean(), 1 - y[test].mean())
    # mean ablation removes dimension 0's variation; dimension 1 still carries the label
    assert acc["mean"] > 0.95
    # zeroing moves every logit by -w_0 * x_0 (about -w_0 * 50): one class for all
    Z = probes.ablate(X[test], [0], "zero")
    shift = head.decision_function(Z) - head.decision_function(X[test])
    assert np.allclose(shift, -head.coef_[0, 0] * X[test, 0])
    assert acc["zero"] == pytest.approx(float((head.predict(Z) == y[test]).mean()))
    assert acc["zero"] <= majority + 0.01


def test_ablate_values_and_errors() -> None:
    X = np.arange(6, dtype=float).reshape(2, 3)
    assert probes.ablate(X, [1], "zero").tolist() == [[0, 0, 2], [3, 0, 5]]
    assert probes.ablate(X, [0, 2], "mean", X.mean(axis=0)).tolist() == [[1.5, 1, 3.5],
                                                                         [1.5, 4, 3.5]]
    assert X[0, 1] == 1  # not modified in place
    with pytest.raises(ValueError, match="mode"):
        probes.ablate(X, [0], "standardised")
    with pytest.raises(ValueError, match="mean"):
        probes.ablate(X, [0], "mean")


def test_fit_head_converges_on_badly_scaled_raw_features() -> None:
    X, y = _large_mean_label_data(seed=8)
    X[:, 3] *= 1000.0  # a coordinate a thousand times larger than the others
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        head = probes.fit_logistic(X, y, standardise=False, solver="newton-cholesky")
    assert head.converged and head.accuracy(X, y) == 1.0


def test_norm_ratio_and_first_word_rows_dominate_cka() -> None:
    rng = np.random.default_rng(9)
    n = 400
    X, Y = rng.normal(size=(n, 6)), rng.normal(size=(n, 5))
    Y[:, :3] += X[:, :3]  # shared signal between the two representations
    first = np.zeros(n, dtype=bool)
    first[::20] = True
    assert similarity.norm_ratio(X, first) == pytest.approx(1.0, abs=0.35)
    base = similarity.linear_cka(X, Y)
    # one model puts huge, unrelated vectors on the first rows (a massive activation)
    Y_sink = Y.copy()
    Y_sink[first] = rng.normal(size=(first.sum(), 5)) * 100.0
    assert similarity.norm_ratio(Y_sink, first) > 50
    assert similarity.linear_cka(X, Y_sink) < 0.2 < base
    # leaving those rows out restores the value computed on the same rows
    assert similarity.linear_cka(X[~first], Y_sink[~first]) == pytest.approx(
        similarity.linear_cka(X[~first], Y[~first]))
    assert np.isnan(similarity.norm_ratio(X, np.ones(n, dtype=bool)))  # one group is empty
    with pytest.raises(ValueError):
        similarity.norm_ratio(X, first[:-1])  # the mask must cover every row


def test_cross_model_cka_table_on_a_planted_sink() -> None:
    rng = np.random.default_rng(10)
    n = 600
    first = np.zeros(n, dtype=bool)
    first[::15] = True
    base = rng.normal(size=(n, 6))
    A = [base, base @ ortho_group.rvs(6, random_state=2)]
    clean = np.hstack([base, rng.normal(size=(n, 2)) * 0.1])
    sink = clean.copy()
    sink[first] = rng.normal(size=(first.sum(), 8)) * 300.0  # unrelated huge first rows
    all_rows, without, table = similarity.cross_model_cka(A, [clean, sink], first)
    assert all_rows.shape == without.shape == (2, 2)
    assert table["best_cka_all"][0] == pytest.approx(table["best_cka_without_first"][0],
                                                     abs=0.02)
    assert table["best_cka_all"][1] < 0.2 and table["best_cka_without_first"][1] > 0.95
    assert table["first_word_norm_ratio"][1] > 100 > table["first_word_norm_ratio"][0]
    assert table["best_cka_without_first_and_top_dim"].between(0, 1).all()


def test_best_match_takes_the_column_maximum() -> None:
    M = np.array([[0.1, 0.9, np.nan], [0.5, 0.2, 0.3]])
    assert similarity.best_match(M).tolist() == [0.5, 0.9, 0.3]


def test_sentence_vectors_last_and_mean() -> None:
    words = pd.DataFrame({"sentence_id": [0, 0, 1, 1, 1]})
    layer = np.arange(10, dtype=np.float32).reshape(5, 2)
    last, ids = rogue_dimensions.sentence_vectors(words, layer, "last")
    assert ids.tolist() == [0, 1] and last.tolist() == [[2, 3], [8, 9]]
    mean, _ = rogue_dimensions.sentence_vectors(words, layer, "mean")
    assert mean.tolist() == [[1, 2], [6, 7]]


def test_gram_cka_equals_linear_cka_and_resamples_exactly() -> None:
    rng = np.random.default_rng(11)
    X = rng.normal(size=(120, 9))
    Y = X[:, :4] @ rng.normal(size=(4, 6)) + rng.normal(size=(120, 6))
    Z = rng.normal(size=(120, 3)) + 50.0  # a large mean changes nothing
    matrix, reps = similarity.gram_cka([X, Y, Z], [(0, 1), (1, 2)], n_boot=3, rng=4)
    assert np.allclose(matrix, similarity.cka_matrix([X, Y, Z]), atol=1e-10)
    k = np.random.default_rng(4).multinomial(120, np.full(120, 1 / 120), size=3)
    for b in range(3):
        rows = np.repeat(np.arange(120), k[b])
        assert reps[b, 0] == pytest.approx(similarity.linear_cka(X[rows], Y[rows]), rel=1e-8)
        assert reps[b, 1] == pytest.approx(similarity.linear_cka(Y[rows], Z[rows]), rel=1e-8)
    # replicates given as counts (a sentence bootstrap): the same CKA of the repeated rows
    groups = np.repeat(np.arange(30), 4)
    draws = np.random.default_rng(5).multinomial(30, np.full(30, 1 / 30), size=2)
    _, by_group = similarity.gram_cka([X, Y], [(0, 1)], counts=draws[:, groups])
    for b in range(2):
        rows = np.repeat(np.arange(120), draws[b, groups])
        assert by_group[b, 0] == pytest.approx(similarity.linear_cka(X[rows], Y[rows]),
                                               rel=1e-8)
    # 0/1 counts (a jackknife replicate): the CKA of the rows kept
    keep = (groups % 5 != 2).astype(float)[None, :]
    _, subset = similarity.gram_cka([X, Y], [(0, 1)], counts=keep)
    rows = np.flatnonzero(keep[0])
    assert subset[0, 0] == pytest.approx(similarity.linear_cka(X[rows], Y[rows]), rel=1e-8)


def test_variance_share_replicates_reselect_the_top_dimensions() -> None:
    rng = np.random.default_rng(12)
    X = rng.normal(size=(200, 10))
    X[:, 4] *= 10.0
    counts = np.vstack([np.ones(200), rng.multinomial(200, np.full(200, 1 / 200), size=2)])
    reps = similarity.variance_share_replicates(X, counts, (1, 3))
    assert reps[0] == pytest.approx([similarity.variance_share(X, 1),
                                     similarity.variance_share(X, 3)])
    rows = np.repeat(np.arange(200), counts[1].astype(int))
    assert reps[1, 1] == pytest.approx(similarity.variance_share(X[rows], 3))


def test_debiased_cka_of_identical_representations_is_one() -> None:
    rng = np.random.default_rng(13)
    X = rng.normal(size=(60, 30))
    Q = ortho_group.rvs(30, random_state=2)
    assert similarity.linear_cka(X, X, debiased=True) == pytest.approx(1.0)
    assert similarity.linear_cka(X, 2.0 * X @ Q - 7.0, debiased=True) == pytest.approx(1.0)
    matrix, reps = similarity.gram_cka([X, X @ Q], debiased=True)
    assert np.allclose(matrix, 1.0) and reps.shape == (0, 0)
    with pytest.raises(ValueError, match="no bootstrap"):
        similarity.gram_cka([X, X], [(0, 1)], n_boot=5, debiased=True)
    with pytest.raises(ValueError, match="at least 4"):
        similarity.linear_cka(X[:3], X[:3], debiased=True)


def test_debiased_cka_removes_the_bias_of_few_items() -> None:
    """Independent isotropic Gaussians, n = 200 points in d = 400 dimensions: plain CKA is
    about d / (n + d) = 2/3, the debiased estimate about 0."""
    rng = np.random.default_rng(14)
    X, Y = rng.normal(size=(200, 400)), rng.normal(size=(200, 400))
    assert similarity.linear_cka(X, Y) == pytest.approx(400 / 600, abs=0.02)
    assert abs(similarity.linear_cka(X, Y, debiased=True)) < 0.02


def test_debiased_cka_matches_the_feature_space_formula() -> None:
    """Kornblith et al.'s feature-space form of the unbiased HSIC (their CKA notebook)."""
    rng = np.random.default_rng(15)
    X = rng.normal(size=(40, 12))
    Y = X[:, :5] @ rng.normal(size=(5, 7)) + rng.normal(size=(40, 7))

    def debiased(x: np.ndarray, y: np.ndarray) -> float:
        x, y = x - x.mean(0), y - y.mean(0)
        n = len(x)

        def unbiased(xty, sx, sy):
            return xty - n / (n - 2) * sx @ sy + sx.sum() * sy.sum() / ((n - 1) * (n - 2))

        sx, sy = (x * x).sum(1), (y * y).sum(1)
        num = unbiased(np.linalg.norm(x.T @ y) ** 2, sx, sy)
        return num / np.sqrt(unbiased(np.linalg.norm(x.T @ x) ** 2, sx, sx)
                             * unbiased(np.linalg.norm(y.T @ y) ** 2, sy, sy))

    assert similarity.linear_cka(X, Y, debiased=True) == pytest.approx(debiased(X, Y),
                                                                       rel=1e-10)


def test_top_overlap_and_its_replicates() -> None:
    rng = np.random.default_rng(16)
    X, Y = rng.normal(size=(300, 40)), rng.normal(size=(200, 40))
    X[:, :10] *= np.arange(20, 10, -1)
    Y[:, 5:15] *= np.arange(20, 10, -1)  # shares dimensions 5-9 with X's top 10
    assert similarity.top_overlap(X, Y, 10) == 5
    assert similarity.top_overlap(X, X, 10) == 10
    cx = np.vstack([np.ones(300), rng.multinomial(300, np.full(300, 1 / 300), size=50)])
    cy = np.vstack([np.ones(200), rng.multinomial(200, np.full(200, 1 / 200), size=50)])
    reps = similarity.top_overlap_replicates(X, Y, cx, cy, 10)
    assert reps[0] == 5 and reps.min() >= 4 and reps.max() <= 6
    rows = np.repeat(np.arange(300), cx[1].astype(int))
    rows_y = np.repeat(np.arange(200), cy[1].astype(int))
    assert reps[1] == similarity.top_overlap(X[rows], Y[rows_y], 10)
    with pytest.raises(ValueError, match="same width"):
        similarity.top_overlap(X, Y[:, :30])


def test_tsne_separates_two_planted_clusters() -> None:
    from lmgeometry.measures.clusters import tsne_project

    rng = np.random.default_rng(17)
    y = np.arange(120) % 2
    X = rng.normal(size=(120, 20)) + 8.0 * y[:, None]
    xy = tsne_project(X, seed=0)
    assert xy.shape == (120, 2)
    assert np.array_equal(xy, tsne_project(X, seed=0))  # deterministic for a seed
    centre = [xy[y == k].mean(axis=0) for k in (0, 1)]
    nearest = np.argmin([[np.linalg.norm(p - c) for c in centre] for p in xy], axis=1)
    assert (nearest == y).all()


def _planted_task(folder, kind: str = "decoder", n_sent: int = 600, seed: int = 0,
                  sink: bool = True):
    """Sentences of 5 words and 7 layers: blocks 1-3 share one representation of the last
    word and blocks 4-6 an independent one, where dimension 5 carries the label with a
    variance that dwarfs the rest (a rogue dimension)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n_sent)
    early, late = rng.normal(size=(n_sent, 8)), rng.normal(size=(n_sent, 8))
    late[:, 5] = 20 * (2 * y - 1) + rng.normal(size=n_sent)
    n = 5 * n_sent
    last = np.arange(n) % 5 == 4
    layers = []
    for layer in range(7):
        X = rng.normal(size=(n, 8))
        if layer:
            X[last] = (early if layer <= 3 else late) + 0.05 * rng.normal(size=(n_sent, 8))
        layers.append(X)
    if sink:  # a first-word sink in layer 0, which the last word never is
        layers[0][np.arange(n) % 5 == 0] *= 100.0
    words = {"sentence_id": np.repeat(np.arange(n_sent), 5), "word_index": np.arange(n) % 5,
             "text": ["w"] * n}
    store = array_store(folder, layers, words, name=f"{kind}-model", kind=kind)
    return store, y, np.arange(n_sent) >= 400


def test_task_tables_and_claims_on_planted_blocks_and_a_rogue_dimension(tmp_path) -> None:
    store, y, test = _planted_task(tmp_path)
    out = rogue_dimensions.task_tables(store, y, test, n_boot=200, ablation_ks=[0, 1, 3])
    layers = out["layers"]
    assert (layers["pooling"] == "last").all() and layers["rogue_dim"].iloc[-1] == 5
    last = layers.iloc[-1]
    assert last["threshold_accuracy"] == 1.0 and last["head_accuracy"] == 1.0
    assert last["majority_accuracy"] == pytest.approx(max(y[test].mean(), 1 - y[test].mean()),
                                                      abs=0.05)
    assert last["threshold_accuracy_lo"] <= 1.0 <= last["threshold_accuracy_hi"]
    zero = out["ablation"].set_index(["mode", "removed", "k"])["accuracy"]
    assert zero[("zero", "top", 0)] == last["head_accuracy"]  # one head, one number
    claims = {c.claim + " " + c.statistic: c.verdict
              for c in rogue_dimensions.task_claims("toy", "m", out["summary"])}
    assert all(v == "holds" for v in claims.values()), claims
    assert len(claims) == 7
    assert out["summary"]["cka_block"][0] > 0.7  # 4 of 5 adjacent pairs share a block


def test_task_tables_on_noise_give_no_rogue_dimension(tmp_path) -> None:
    rng = np.random.default_rng(3)
    n_sent = 400
    layers = [rng.normal(size=(2 * n_sent, 16)) for _ in range(5)]
    words = {"sentence_id": np.repeat(np.arange(n_sent), 2), "word_index": np.arange(800) % 2}
    store = array_store(tmp_path, layers, words, kind="encoder")
    y = rng.integers(0, 2, size=n_sent)
    out = rogue_dimensions.task_tables(store, y, np.arange(n_sent) >= 250, n_boot=200,
                                       ablation_ks=[0, 1])
    assert (out["layers"]["pooling"] == "mean").all()
    verdicts = {c.claim: c.verdict
                for c in rogue_dimensions.task_claims("toy", "m", out["summary"])}
    assert verdicts["a few rogue dimensions dominate the last layer"] == "does not hold"
    assert verdicts["layer-by-layer CKA has a block structure"] == "does not hold"
    assert verdicts["beyond the paper: before fine-tuning, a threshold on the principal rogue "
                    "dimension beats the majority class"] != "holds"


def test_classifier_claims_get_their_null_with_the_labels_permuted(tmp_path) -> None:
    store, y, test = _planted_task(tmp_path)
    task = rogue_dimensions.Task("toy", {"dec": store}, y, test)
    claims = rogue_dimensions.analyse([task], n_boot=200, ablation_ks=[0, 1]).claims
    labelled = claims["statistic"].str.contains("accuracy")
    assert labelled.sum() == 4  # threshold - majority, head - threshold, two ablations
    # CKA's block structure and the rogue dimensions' emergence are about depth: their null
    # is the blocks in random orders; the last layer's dominance by a few coordinates is
    # about coordinates: its null is the same vectors in a random basis
    block = claims["claim"].isin(["layer-by-layer CKA has a block structure",
                                  "beyond the paper: before fine-tuning, rogue dimensions "
                                  "emerge in the later blocks"])
    assert (claims.loc[block, "null_model"] == "layers shuffled: decoder-model").all()
    assert block.sum() == 2 and claims.loc[block, "evidence"].notna().all()
    dominance = claims["claim"] == "a few rogue dimensions dominate the last layer"
    assert (claims.loc[dominance, "null_model"] == "basis rotated: decoder-model").all()
    assert (claims.loc[~labelled & ~block & ~dominance, "null_model"] == "").all()
    rows = claims[labelled]
    assert (rows["null_model"] == "labels permuted: decoder-model").all()
    # the planted label dimension beats the majority class; with the labels permuted the
    # threshold sits at the majority class, its interval covering it
    beats = rows[rows["statistic"].str.startswith("1-D threshold accuracy minus")].iloc[0]
    assert beats["verdict"] == "holds" and beats["null_verdict"] == "does not hold"
    assert beats["null_ci_low"] <= 0 <= beats["null_ci_high"] and beats["discriminates"]
    # ablating the label dimension costs the head everything, with the labels permuted nothing
    ablations = rows[rows["statistic"].str.contains("dimensions zeroed|training mean")]
    assert len(ablations) == 2
    for _, row in ablations.iterrows():
        assert row["null_ci_low"] <= 0 <= row["null_ci_high"] and row["null_verdict"] != "holds"


def test_a_rogue_coordinate_fails_its_rotated_null_and_a_few_directions_do_not(tmp_path
                                                                               ) -> None:
    """A claim about dimensions: one coordinate with 20 times the others' spread dominates,
    and in a random basis of 64 coordinates its variance spreads over all of them (the rule
    fails there: it discriminates); three directions that dominate as strongly but are not
    coordinates fail the claim and hold no better in a random basis."""
    rng = np.random.default_rng(5)
    n_sent, width = 500, 64
    y = rng.integers(0, 2, size=n_sent)
    test = np.arange(n_sent) >= 350
    words = {"sentence_id": np.arange(n_sent), "word_index": np.zeros(n_sent, int)}
    rogue = rng.normal(size=(n_sent, width))
    rogue[:, 7] *= 20.0
    Q = similarity.random_rotation(width, seed=99)
    spread = rng.normal(size=(n_sent, width)) @ np.diag([20.0] * 3 + [1.0] * (width - 3)) @ Q
    verdicts = {}
    for name, X in (("rogue", rogue), ("spread", spread)):
        store = array_store(tmp_path / name, [X, X], words, kind="encoder", name=name)
        out = rogue_dimensions.task_tables(store, y, test, n_boot=200, ablation_ks=[0])
        real = next(c for c in rogue_dimensions.task_claims("toy", name, out["summary"])
                    if c.claim == "a few rogue dimensions dominate the last layer")
        null = rogue_dimensions.rotated_claims("toy", name, out["summary"])[0]
        assert null.model == f"basis rotated: {name}"
        verdicts[name] = (real.verdict, null.verdict, null.value)
    assert verdicts["rogue"][:2] == ("holds", "does not hold")
    assert verdicts["spread"][0] != "holds" and verdicts["spread"][1] != "holds"
    assert verdicts["rogue"][2] < 0.5


def test_permuted_summary_is_fixed_by_its_seed_and_keeps_the_majority() -> None:
    rng = np.random.default_rng(1)
    y = (rng.random(500) < 0.7).astype(int)  # 70% of one class
    X = rng.normal(size=(500, 4))
    X[:, 2] += 10 * y  # dimension 2 separates the classes perfectly
    args = (X[:350], y[:350], X[350:], y[350:], 2)
    first = rogue_dimensions.permuted_summary(*args, n_boot=200, seed=0, ablation_k=1)
    assert first == rogue_dimensions.permuted_summary(*args, n_boot=200, seed=0, ablation_k=1)
    assert first != rogue_dimensions.permuted_summary(*args, n_boot=200, seed=1, ablation_k=1)
    value, low, high = first["beats_majority"]
    assert low <= 0 <= high and abs(value) < 0.08  # the majority rate, not 30 points above it


def test_analyse_tables_claims_and_the_sink_sentence(tmp_path) -> None:
    dec, y, test = _planted_task(tmp_path / "dec", "decoder")
    enc, _, _ = _planted_task(tmp_path / "enc", "encoder", sink=False)  # the same rows
    task = rogue_dimensions.Task("toy", {"dec": dec, "enc": enc}, y, test)
    result = rogue_dimensions.analyse([task], {"enc": enc, "dec": dec}, n_boot=50,
                                      ablation_ks=[0, 1], cka_words=1000)
    t = result.tables
    assert list(t["layers"].columns[:4]) == ["model", "layer", "depth", "task"]
    assert set(t["cka"]["model"]) == {"decoder-model", "encoder-model"}
    assert len(result.claims) == 14 and result.claims["seed"].eq("003").all()
    assert list(t["ablation"].columns[:4]) == ["model", "layer", "depth", "task"]
    assert t["cross_cka"]["reference"].eq("encoder-model").all()
    sink = [s for s in result.sentences if s.startswith("In decoder-model")]
    assert sink == [(
        "In decoder-model layer 0 the first word's median norm is 107 times the other words'; "
        "there the best-matching encoder-model layer reaches a CKA of 0.26 on all words and "
        "1.00 without the first words.")]


def test_notebook_views_are_the_old_notebook_expressions():
    """Chapter 6's hidden cells, moved into named calls: the old expressions are the
    reference, on planted frames."""
    from lmgeometry.chapters.rogue_dimensions.analysis import (
        accuracy_long,
        cka_matrices,
        cross_best_long,
        last_layers,
        task_profiles,
    )

    cka = pd.DataFrame([{"task": task, "model": spec, "layer": i, "other_layer": j,
                         "cka": 10 * i + j + (0.5 if task == "QNLI" else 0)}
                        for task in ("QNLI", "SST-2") for spec in ("z", "a")
                        for i in range(3) for j in range(3)])
    old = {}
    for (task, spec), part in cka.groupby(["task", "model"], sort=False):
        if task != "SST-2":
            continue
        n = int(part["layer"].max()) + 1
        old[spec] = (n, part.pivot(index="layer", columns="other_layer", values="cka").to_numpy())
    got = cka_matrices(cka, "SST-2")
    assert list(got) == list(old) == ["z", "a"]
    for spec, matrix in got.items():
        assert len(matrix) == old[spec][0] and np.array_equal(matrix, old[spec][1])
    assert got["a"][2, 1] == 21.0

    profile = pd.DataFrame({"model": ["z"] * 4 + ["a"] * 2,
                            "task": ["SST-2", "SST-2", "QNLI", "QNLI", "QNLI", "QNLI"],
                            "std": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    got = task_profiles(profile)
    for spec, part in profile.groupby("model", sort=False):
        stds, names = got[spec]
        old_stds = [g["std"].to_numpy() for _, g in part.groupby("task", sort=False)]
        assert [s.tolist() for s in stds] == [s.tolist() for s in old_stds]
        assert names == list(pd.unique(part["task"]))
    assert list(got) == ["z", "a"] and got["z"][1] == ["SST-2", "QNLI"]

    layers = pd.DataFrame({"model": ["z", "z", "a"], "layer": [0, 1, 0]} | {
        f"{k}_accuracy{end}": [0.1, 0.2, 0.3] for k in ("threshold", "head", "majority")
        for end in ("", "_lo", "_hi")})
    old = pd.concat(
        [layers.assign(classifier=label, accuracy=layers[f"{key}_accuracy"],
                       lo=layers[f"{key}_accuracy_lo"], hi=layers[f"{key}_accuracy_hi"])
         for key, label in (("threshold", "1-D threshold"), ("head", "all dimensions"),
                            ("majority", "majority baseline"))],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(accuracy_long(layers), old)
    old = layers[layers["layer"] == layers.groupby("model")["layer"].transform("max")]
    pd.testing.assert_frame_equal(last_layers(layers), old)
    assert old.index.tolist() == [1, 2]

    cross_table = pd.DataFrame({"layer": [0, 1], "best_cka_all": [0.9, 0.8],
                                "best_cka_without_first": [0.7, 0.6],
                                "best_cka_without_first_and_top_dim": [0.5, 0.4]})
    old = pd.concat(
        [cross_table.assign(rows=label, value=cross_table[key]) for key, label in (
            ("best_cka_all", "all words"), ("best_cka_without_first", "first words left out"),
            ("best_cka_without_first_and_top_dim", "first words and top dimension left out"))],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(cross_best_long(cross_table), old)
    assert old["value"].tolist() == [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
