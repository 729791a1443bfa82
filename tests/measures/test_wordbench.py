"""score_all: every word benchmark on one hand-built embedding, under both protocols."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.word_cases import (
    analogy_questions,
    analogy_vectors,
    category_groups,
    semeval_case,
    similarity_case,
)

from lmgeometry.measures.wordbench import score_all


def _in_block(vectors: dict[str, np.ndarray], start: int, dim: int = 16):
    """Place each vector in coordinates start.. of a dim-dimensional space (blocks orthogonal)."""
    out = {}
    for word, v in vectors.items():
        w = np.zeros(dim)
        w[start:start + len(v)] = v
        out[word] = w
    return out


def test_score_all_with_given_frames():
    # each benchmark's words live in their own orthogonal block, so they cannot interfere
    sim_vectors, sim_pairs, _ = similarity_case()
    rng = np.random.default_rng(0)
    cat_vectors, items = category_groups([["x"] * 3, ["y"] * 3], rng)
    sem_vectors, sem_frame = semeval_case()
    vectors = {
        **_in_block(analogy_vectors(), 0),
        **_in_block(sim_vectors, 6),
        **_in_block(cat_vectors, 8),
        **_in_block(sem_vectors, 13),
    }
    frames = {
        "simlex999": sim_pairs,
        "google": analogy_questions(),
        "semeval2012": sem_frame,
        "bless": items,
    }
    out = score_all(vectors, benchmarks=list(frames), frames=frames)
    assert list(out.columns) == [
        "benchmark", "task", "metric", "value", "n", "total", "coverage", "protocol"
    ]
    got = out.set_index("benchmark")
    assert got.loc["simlex999", "value"] == pytest.approx(1.0)
    assert got.loc["simlex999", "coverage"] == pytest.approx(5 / 7)
    assert got.loc["google", "value"] == pytest.approx(3 / 4)
    assert got.loc["google", "metric"] == "accuracy"
    assert got.loc["semeval2012", "value"] == pytest.approx(0.0)
    assert got.loc["bless", "value"] == 1.0
    assert (got.loc["bless", "n"], got.loc["bless", "total"]) == (6, 6)
    web = score_all(vectors, protocol="web", benchmarks=["google"], frames=frames)
    assert web.loc[0, "value"] == pytest.approx(3 / 5)
    with pytest.raises(ValueError):
        score_all(vectors, benchmarks=["nonsense"], frames=frames)
