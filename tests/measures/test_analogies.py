"""3CosAdd analogies on hand-built embeddings whose answers are known in advance."""

from __future__ import annotations

import pytest
from fixtures.word_cases import analogy_questions, analogy_vectors

from lmgeometry.measures.analogies import evaluate_analogies


def test_analogies_3cosadd_on_exact_offsets():
    out = evaluate_analogies(analogy_vectors(), analogy_questions())
    assert out["n"] == 4
    assert out["total"] == 5
    assert out["coverage"] == pytest.approx(4 / 5)
    assert out["n_correct"] == 3
    assert out["accuracy"] == pytest.approx(3 / 4)
    assert out["by_category"] == {"gender": pytest.approx(2 / 3), "royal": 1.0}
    # candidates: the 7 lower-case keys ("Queen" is unreachable under case="lower")
    assert out["n_candidates"] == 7


def test_analogies_mean_vector_counts_every_question():
    out = evaluate_analogies(analogy_vectors(), analogy_questions(), oov="mean")
    assert (out["n"], out["n_correct"]) == (5, 3)
    assert out["accuracy"] == pytest.approx(3 / 5)


def test_analogies_benchmark_candidates_and_callable():
    vec = analogy_vectors()
    out = evaluate_analogies(vec.get, analogy_questions())
    # candidates: benchmark words with vectors (king queen man woman girl princess)
    assert out["n_candidates"] == 6
    assert out["accuracy"] == pytest.approx(3 / 4)


def test_analogies_raw_dot_matches_on_unit_vectors():
    out = evaluate_analogies(analogy_vectors(), analogy_questions(), normalise=False)
    assert out["accuracy"] == pytest.approx(3 / 4)


def test_analogies_normalisation_matters_for_long_distractors():
    vec = analogy_vectors()
    vec["giant"] = 10 * (vec["woman"] + 0.6 * vec["rock"])  # long, but cos with woman < 1
    q = analogy_questions().iloc[:1]
    assert evaluate_analogies(vec, q)["accuracy"] == 1.0
    assert evaluate_analogies(vec, q, normalise=False)["accuracy"] == 0.0
