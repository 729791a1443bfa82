"""Known-answer tests for lmgeometry.measures.baselines: anisotropy baselines and replicates.

Every expected value is derived by hand or by a brute-force loop straight from the
definition (``tests/fixtures/references.py``), never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures.references import brute_mean_pairwise, cos, equiangular, random_layer

from lmgeometry.measures import baselines


def test_mev_estimators_on_equiangular_pool():
    # m unit vectors with pairwise cosine c. Gram = (1-c) I + c 11^T:
    #   uncentred: sigma_1^2 / sum = (1 + (m-1)c) / m
    #   centred: a regular simplex, m-1 equal singular values -> 1/(m-1)
    #   TruncatedSVD: v_1 along the mean, every projection equal -> no variance -> 0
    m, c = 6, 0.3
    V = equiangular(m, c, 10)
    sid = np.arange(m)
    assert baselines.mev_baseline(V, sid, n=m, method="uncentered") == pytest.approx(
        (1 + (m - 1) * c) / m, abs=1e-12
    )
    assert baselines.mev_baseline(V, sid, n=m, method="centered") == pytest.approx(
        1 / (m - 1), abs=1e-12
    )
    assert baselines.mev_baseline(V, sid, n=m, method="truncated_svd") == pytest.approx(
        0.0, abs=1e-12
    )



def test_baseline_with_replacement_pairs_words_with_themselves():
    # m sentences, one orthonormal word each: distinct pairs have cosine 0, self-pairs 1.
    m = 4
    V = np.eye(m, 6)
    sid = np.arange(m)
    with_repl = baselines.anisotropy_baseline(
        V, sid, n=m, rng=0, replace=True, scheme="sentence", n_pairs=200_000
    )
    assert with_repl == pytest.approx(1 / m, abs=0.01)  # P(same pool member) = 1/m
    assert baselines.anisotropy_baseline(V, sid, n=m, rng=0, replace=False) == pytest.approx(0.0)
    assert baselines.anisotropy_baseline(V, sid, n=None) == pytest.approx(0.0, abs=1e-15)
    # a pool of one word: every pair drawn with replacement is that word with itself
    assert baselines.anisotropy_baseline(V, sid, n=1, rng=3, replace=True, scheme="sentence") == 1.0
    assert math.isnan(baselines.anisotropy_baseline(V, sid, n=1, rng=3, replace=False))



def test_baseline_exact_excludes_same_sentence_pairs():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((15, 4)) + 0.7
    sid = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4, 5, 5, 6, 6])
    expected = brute_mean_pairwise(X, sentence_ids=sid)
    assert baselines.anisotropy_baseline(X, sid, n=None) == pytest.approx(expected, abs=1e-6)
    # a pool as large as the corpus, without replacement, is the same population
    assert baselines.anisotropy_baseline(X, sid, n=1000, rng=0) == pytest.approx(expected, abs=1e-6)



def test_isotropic_gaussian_baseline_is_near_zero():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((3000, 64))
    sid = np.repeat(np.arange(300), 10)
    assert abs(baselines.anisotropy_baseline(X, sid, n=None)) < 0.005
    for scheme in ("sentence", "occurrence"):
        b = baselines.anisotropy_baseline(X, sid, n=1000, rng=1, scheme=scheme, replace=False)
        assert abs(b) < 0.01
    b = baselines.anisotropy_baseline(X, sid, n=1000, rng=1, scheme="sentence", replace=True)
    assert abs(b) < 0.03  # 1,000 pairs, sd ~ 0.125 / sqrt(1000), plus ~1/1000 from self-pairs



def test_cross_sentence_replicates_weight_sentences_by_their_counts():
    X, words = random_layer(2)
    sid = words["sentence_id"].to_numpy()
    n_s = len(np.unique(sid))
    counts = np.ones((1, n_s))
    exact = baselines.cross_sentence_replicates(X, sid, counts)[0]
    assert exact == pytest.approx(brute_mean_pairwise(X, sid))
    # taking sentence 0 twice and dropping sentence 1: copies are one sentence, so the
    # pairs inside them are left out and each pair with another sentence counts twice
    m = np.ones(n_s)
    m[0], m[1] = 2, 0
    keep = sid != 1
    Y = np.vstack([X[keep], X[sid == 0]])
    ids = np.r_[sid[keep], sid[sid == 0]]
    vals = []
    for i in range(len(Y)):
        for j in range(len(Y)):
            if i != j and ids[i] != ids[j]:
                vals.append(cos(Y[i], Y[j]))
    assert baselines.cross_sentence_replicates(X, sid, m[None])[0] == pytest.approx(np.mean(vals))
    with pytest.raises(ValueError):
        baselines.cross_sentence_replicates(X, sid, np.ones((2, n_s + 1)))
