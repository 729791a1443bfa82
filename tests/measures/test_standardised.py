"""Known-answer tests for standardised dimensions (Timkey & van Schijndel 2021) in the cosine
measures: ``standardise=True`` z-scores each dimension over the layer's rows before the rows
are normalised.

Expected values come from the definition (rows z-scored by hand with numpy, then cosines by a
brute-force loop in ``tests/fixtures/references.py``) or from invariances, never from the
function under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.references import brute_mean_pairwise, corpus, random_layer

from lmgeometry.measures import baselines, contextual
from lmgeometry.measures.unit_rows import UnitRows, dimension_moments


def _rogue_gaussian(seed: int = 0, n_sent: int = 300, per: int = 8, d: int = 40):
    """Isotropic Gaussian rows offset by 2, one dimension with 100 times the spread and a mean
    of 500 (a rogue dimension, as in Gemma's first block)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_sent * per, d)) + 2.0
    X[:, 0] = 100.0 * X[:, 0] + 300.0
    return X, np.repeat(np.arange(n_sent), per)


def _z(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0)


def test_rogue_dimension_and_offset_vanish_when_standardised():
    X, sid = _rogue_gaussian()
    # raw: every row points close to +e_0, so two random rows have a cosine near 1
    assert baselines.anisotropy_baseline(X, sid, n=None) > 0.5
    # standardised: independent isotropic rows, mean cosine 0 up to the centring's -1/N
    assert baselines.anisotropy_baseline(X, sid, n=None, standardise=True) == pytest.approx(
        0.0, abs=0.005)


def test_standardised_baseline_is_the_cosine_of_z_scored_rows():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((18, 5)) * [1, 10, 0.1, 3, 50] + [0, 4, -2, 100, 7]
    sid = np.repeat(np.arange(6), 3)
    expected = brute_mean_pairwise(_z(X), sentence_ids=sid)
    assert baselines.anisotropy_baseline(X, sid, n=None, standardise=True) == pytest.approx(
        expected, abs=1e-12)


def test_standardised_cosines_ignore_per_dimension_scale_and_shift():
    X, sid = _rogue_gaussian(seed=1, n_sent=40, per=5, d=12)
    rng = np.random.default_rng(2)
    Y = X * rng.uniform(1e-3, 1e3, size=X.shape[1]) + rng.uniform(-50, 50, size=X.shape[1])
    counts = rng.multinomial(40, np.full(40, 1 / 40), size=25).astype(float)
    for a, b in zip(baselines.baseline_and_replicates(X, sid, counts, standardise=True),
                    baselines.baseline_and_replicates(Y, sid, counts, standardise=True),
                    strict=True):
        np.testing.assert_allclose(a, b, atol=1e-10)
    X_layer, c = random_layer(seed=4, n_sent=30)
    Y_layer = X_layer * rng.uniform(0.1, 10, size=X_layer.shape[1]) + 3.0
    a = contextual.context_measures(X_layer, c, "corrected", 0, min_contexts=2,
                                    n_boot=0, standardise=True)
    b = contextual.context_measures(Y_layer, c, "corrected", 0, min_contexts=2,
                                    n_boot=0, standardise=True)
    for key in ("baseline_cosine", "selfsim", "intrasim", "selfsim_adj", "intrasim_adj"):
        assert a[key] == pytest.approx(b[key], abs=1e-10), key


def test_standard_data_give_the_raw_numbers():
    X, sid = _rogue_gaussian(seed=5, n_sent=30, per=4, d=10)
    Z = _z(X)  # already mean 0, standard deviation 1 in every dimension
    counts = np.random.default_rng(0).multinomial(30, np.full(30, 1 / 30), size=10).astype(float)
    raw = baselines.baseline_and_replicates(Z, sid, counts)
    std = baselines.baseline_and_replicates(Z, sid, counts, standardise=True)
    assert std[0] == pytest.approx(raw[0], abs=1e-12)
    np.testing.assert_allclose(std[1], raw[1], atol=1e-12)


def test_dimension_moments_streamed_match_numpy_and_constant_dimensions_centre_to_zero():
    rng = np.random.default_rng(6)
    X = (rng.standard_normal((53, 4)) * [1, 1e-3, 1e3, 0] + [1e4, 0, -3, 2]).astype(np.float32)
    mean, std = dimension_moments(X, chunk_rows=7)
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(mean, X64.mean(axis=0), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(std, X64.std(axis=0), rtol=1e-9, atol=1e-12)
    assert std[3] == 0.0
    units = UnitRows.of(X, standardise=True)
    assert units.standardised and np.all(units.U[:, 3] == 0.0)


def test_streamed_standardised_rows_match_in_memory():
    X, sid = _rogue_gaussian(seed=7, n_sent=25, per=6, d=9)
    counts = np.random.default_rng(1).multinomial(25, np.full(25, 1 / 25), size=8).astype(float)
    memory = baselines.baseline_and_replicates(X, sid, counts, standardise=True)
    streamed = baselines.baseline_and_replicates(UnitRows.stream(X, 11, standardise=True), sid,
                                                 counts, standardise=True)
    assert streamed[0] == pytest.approx(memory[0], abs=1e-12)
    np.testing.assert_allclose(streamed[1], memory[1], atol=1e-12)


def test_standardising_unit_rows_of_raw_dimensions_is_refused():
    X, sid = _rogue_gaussian(seed=8, n_sent=5, per=3, d=4)
    with pytest.raises(ValueError, match="raw rows"):
        baselines.anisotropy_baseline(UnitRows.of(X), sid, n=None, standardise=True)
    with pytest.raises(ValueError, match="at least one row"):
        dimension_moments(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="finite"):
        dimension_moments(np.array([[1.0, np.nan]]))


def test_standardising_leaves_the_input_unchanged():
    X, sid = _rogue_gaussian(seed=9, n_sent=6, per=3, d=5)
    before = X.copy()
    baselines.anisotropy_baseline(X, sid, n=None, standardise=True)
    np.testing.assert_array_equal(X, before)


def _rogue_word_offset(scale: float, n_words: int = 40, n_sent: int = 8, d: int = 30):
    """Isotropic rows, every word once in every sentence, whose dimension 0 carries a per-word
    offset (size 1 to 2, either sign, plus occurrence noise of 0.3) times ``scale``."""
    rng = np.random.default_rng(7)
    sentences = [[f"w{i}" for i in range(n_words)] for _ in range(n_sent)]
    X = rng.standard_normal((n_words * n_sent, d))
    offset = np.tile(rng.choice([-1.0, 1.0], n_words) * rng.uniform(1, 2, n_words), n_sent)
    X[:, 0] = scale * (offset + 0.3 * rng.standard_normal(len(X)))
    return X, corpus(sentences, X)


def test_a_rogue_dimension_drives_raw_selfsim_but_not_standardised_selfsim():
    # two layers that differ only in the rogue dimension's scale (1 and 100 times the others)
    (X1, words), (X100, _) = _rogue_word_offset(1.0), _rogue_word_offset(100.0)

    def selfsim(X, standardise):
        return contextual.context_tables(X, words, "corrected", 0, min_contexts=2,
                                         standardise=standardise).words["selfsim"].mean()

    # raw: at scale 1 a word's offset is about 2 of the 31 units of a row's squared norm
    # (SelfSim near 0.07); at 100 it outweighs the rest, so two occurrences of a word point
    # almost the same way (SelfSim near 1)
    assert selfsim(X1, False) < 0.15 and selfsim(X100, False) > 0.95
    # standardised: z-scoring divides the scale out, so the two layers give the same SelfSim,
    # that of the raw layer whose dimension 0 has the others' (unit) spread
    assert selfsim(X100, True) == pytest.approx(selfsim(X1, True), abs=1e-10)
    unit, _ = _rogue_word_offset(1.0 / X1[:, 0].std())
    assert selfsim(X100, True) == pytest.approx(selfsim(unit, False), abs=0.01)
