"""Word benchmarks on hand-built embeddings whose answers are known in advance."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lmgeometry.measures.clusters import purity
from lmgeometry.measures.wordbench import (
    BIS2021_WORDSIM,
    ETHAYARAJH2019_COLUMNS,
    ETHAYARAJH2019_TABLE1,
    evaluate_analogies,
    evaluate_categorisation,
    evaluate_semeval2012,
    evaluate_similarity,
    reference_frame,
    score_all,
)

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def _angle(deg: float) -> np.ndarray:
    t = math.radians(deg)
    return np.array([math.cos(t), math.sin(t)])


# --- similarity -------------------------------------------------------------------------------


def _similarity_case() -> tuple[dict[str, np.ndarray], pd.DataFrame, np.ndarray]:
    """cos(anchor, w_i) = score_i / 10 exactly; two more pairs have an OOV word."""
    scores = np.array([1.0, 3.0, 5.0, 7.0, 9.5])
    vectors = {"anchor": np.array([1.0, 0.0])}
    rows = []
    for i, s in enumerate(scores):
        c = s / 10
        vectors[f"w{i}"] = np.array([c, math.sqrt(1 - c * c)]) * (i + 1)  # norm is irrelevant
        rows.append(("Anchor", f"W{i}", s))  # upper case: found through lower-casing
    rows += [("anchor", "unseen", 4.0), ("ghost", "w1", 2.0)]
    return vectors, pd.DataFrame(rows, columns=["word1", "word2", "score"]), scores


def test_similarity_cosine_linear_in_score_gives_correlations_one():
    vectors, pairs, _ = _similarity_case()
    out = evaluate_similarity(vectors, pairs)
    assert out["spearman"] == pytest.approx(1.0)
    assert out["pearson"] == pytest.approx(1.0)
    assert out["n_pairs"] == 5
    assert out["n_total"] == 7
    assert out["coverage"] == pytest.approx(5 / 7)


def test_similarity_monotone_nonlinear_gives_spearman_one():
    scores = np.array([1.0, 2.0, 4.0, 6.0, 9.0])
    cosines = (scores / 10) ** 2
    vectors = {"a": np.array([1.0, 0.0])}
    for i, c in enumerate(cosines):
        vectors[f"b{i}"] = np.array([c, math.sqrt(1 - c * c)])
    pairs = pd.DataFrame({"word1": ["a"] * 5, "word2": [f"b{i}" for i in range(5)],
                          "score": scores})
    out = evaluate_similarity(vectors, pairs)
    assert out["spearman"] == pytest.approx(1.0)
    assert out["pearson"] == pytest.approx(np.corrcoef(scores, cosines)[0, 1])
    assert out["pearson"] < 0.999


def test_similarity_exact_case_misses_upper_case_words():
    vectors, pairs, _ = _similarity_case()
    out = evaluate_similarity(vectors, pairs, case="exact")
    # "Anchor"/"W0".. are not keys as written, and the last two pairs have an OOV word
    assert (out["n_pairs"], out["coverage"]) == (0, 0.0)
    assert math.isnan(out["spearman"]) and math.isnan(out["pearson"])


def test_similarity_dot_product():
    # anchor . w_i = score_i exactly; cos is a different (monotone) function of the score
    scores = np.array([1.0, 2.0, 3.5, 8.0])
    vectors = {"x": np.array([1.0, 0.0])}
    vectors.update({f"y{i}": np.array([s, 5.0]) for i, s in enumerate(scores)})
    pairs = pd.DataFrame({"word1": ["x"] * 4, "word2": [f"y{i}" for i in range(4)],
                          "score": scores})
    dot = evaluate_similarity(vectors, pairs, "dot")
    assert dot["pearson"] == pytest.approx(1.0)
    cos = evaluate_similarity(vectors, pairs, "cosine")
    assert cos["spearman"] == pytest.approx(1.0)
    assert cos["pearson"] == pytest.approx(np.corrcoef(scores, scores / np.hypot(scores, 5))[0, 1])


def test_similarity_mean_vector_for_oov_pairs():
    # four covered pairs with cosines increasing in the score, and one pair of two unknown
    # words with the lowest human score: under oov="mean" both get the mean vector, cosine 1,
    # the highest model score. Ranks: model (1,2,3,4,5), human (2,3,4,5,1):
    # sum d^2 = 4 * 1 + 16 = 20, rho = 1 - 6 * 20 / (5 * 24) = 0.
    vectors = {"a": _angle(0)}
    for i, deg in enumerate([80, 60, 40, 20]):
        vectors[f"b{i}"] = _angle(deg)
    pairs = pd.DataFrame(
        {"word1": ["a"] * 4 + ["nope"], "word2": ["b0", "b1", "b2", "b3", "nada"],
         "score": [2.0, 3.0, 4.0, 5.0, 1.0]}
    )
    skip = evaluate_similarity(vectors, pairs)
    assert skip["spearman"] == pytest.approx(1.0) and skip["n_pairs"] == 4
    mean = evaluate_similarity(vectors, pairs, oov="mean")
    assert mean["n_pairs"] == 5 and mean["coverage"] == pytest.approx(4 / 5)
    assert mean["spearman"] == pytest.approx(0.0, abs=1e-12)


def test_similarity_accepts_a_callable():
    vectors, pairs, _ = _similarity_case()
    out = evaluate_similarity(vectors.get, pairs)
    assert out["spearman"] == pytest.approx(1.0) and out["n_pairs"] == 5
    with pytest.raises(ValueError):
        evaluate_similarity(vectors.get, pairs, oov="mean")


# --- analogies --------------------------------------------------------------------------------


def _analogy_vectors() -> dict[str, np.ndarray]:
    """Unit vectors on orthonormal axes royal, male, female, person, young, other."""
    e = np.eye(6)
    royal, male, female, person, young, other = e
    r2, r3 = math.sqrt(2), math.sqrt(3)
    return {
        "king": (royal + male) / r2,
        "queen": (royal + female) / r2,
        "man": (person + male) / r2,
        "woman": (person + female) / r2,
        "princess": (royal + female + young) / r3,
        "girl": (person + female + young) / r3,
        "rock": other,
        "Queen": -(royal + female) / r2,  # not reachable under lower-casing
    }


def _analogy_questions() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # queen - king + man = woman exactly
            ("King", "queen", "man", "woman", "gender"),
            # woman - man + king = queen exactly
            ("man", "woman", "king", "queen", "gender"),
            # the answer is woman (cos 1), but the gold says girl -> wrong
            ("king", "queen", "man", "girl", "gender"),
            # d has no vector -> not evaluated under oov="skip"
            ("king", "queen", "man", "unicorn", "gender"),
            # query = queen; queen and king are excluded, the nearest remaining is princess
            # (cos 2/sqrt(6) = 0.816 against woman's 1/2 and girl's 1/sqrt(6))
            ("king", "queen", "king", "princess", "royal"),
        ],
        columns=["a", "b", "c", "d", "category"],
    )


def test_analogies_3cosadd_on_exact_offsets():
    out = evaluate_analogies(_analogy_vectors(), _analogy_questions())
    assert out["n"] == 4
    assert out["total"] == 5
    assert out["coverage"] == pytest.approx(4 / 5)
    assert out["n_correct"] == 3
    assert out["accuracy"] == pytest.approx(3 / 4)
    assert out["by_category"] == {"gender": pytest.approx(2 / 3), "royal": 1.0}
    # candidates: the 7 lower-case keys ("Queen" is unreachable under case="lower")
    assert out["n_candidates"] == 7


def test_analogies_mean_vector_counts_every_question():
    out = evaluate_analogies(_analogy_vectors(), _analogy_questions(), oov="mean")
    assert (out["n"], out["n_correct"]) == (5, 3)
    assert out["accuracy"] == pytest.approx(3 / 5)


def test_analogies_benchmark_candidates_and_callable():
    vec = _analogy_vectors()
    out = evaluate_analogies(vec.get, _analogy_questions())
    # candidates: benchmark words with vectors (king queen man woman girl princess)
    assert out["n_candidates"] == 6
    assert out["accuracy"] == pytest.approx(3 / 4)


def test_analogies_raw_dot_matches_on_unit_vectors():
    out = evaluate_analogies(_analogy_vectors(), _analogy_questions(), normalise=False)
    assert out["accuracy"] == pytest.approx(3 / 4)


def test_analogies_normalisation_matters_for_long_distractors():
    vec = _analogy_vectors()
    vec["giant"] = 10 * (vec["woman"] + 0.6 * vec["rock"])  # long, but cos with woman < 1
    q = _analogy_questions().iloc[:1]
    assert evaluate_analogies(vec, q)["accuracy"] == 1.0
    assert evaluate_analogies(vec, q, normalise=False)["accuracy"] == 0.0


# --- categorisation ---------------------------------------------------------------------------


def test_purity_hand_computed():
    # cluster 0 holds a a b -> 2; cluster 1 holds b c -> 1; purity 3/5
    assert purity(["a", "a", "b", "b", "c"], [0, 0, 0, 1, 1]) == pytest.approx(3 / 5)
    assert purity(["a", "b"], [5, 7]) == 1.0


def _groups(labels: list[list[str]], rng: np.random.Generator):
    centers = 10 * np.eye(len(labels), 5)
    vectors, rows = {}, []
    for g, labs in enumerate(labels):
        for j, lab in enumerate(labs):
            word = f"g{g}w{j}"
            vectors[word] = centers[g] + rng.normal(scale=0.01, size=5)
            rows.append((word, lab))
    return vectors, pd.DataFrame(rows, columns=["word", "category"])


@pytest.mark.parametrize("method", ["agglomerative", "kmeans", "best"])
def test_categorisation_separated_clusters_purity_one(method):
    rng = np.random.default_rng(0)
    vectors, items = _groups([["x"] * 4, ["y"] * 3, ["z"] * 5], rng)
    items = pd.concat(
        [items, pd.DataFrame({"word": ["missing"], "category": ["z"]})], ignore_index=True
    )
    out = evaluate_categorisation(vectors, items, method, seed=0)
    assert out["purity"] == 1.0
    assert (out["n"], out["total"], out["n_clusters"]) == (12, 13, 3)
    assert out["coverage"] == pytest.approx(12 / 13)


@pytest.mark.parametrize("method", ["agglomerative", "kmeans"])
def test_categorisation_hand_computed_purity(method):
    # three tight, far-apart groups (so any sensible 3-clustering recovers them) whose gold
    # labels disagree: majorities 2 + 3 + 2 of 9
    rng = np.random.default_rng(1)
    vectors, items = _groups([["x", "x", "y"], ["y", "y", "y"], ["z", "z", "x"]], rng)
    out = evaluate_categorisation(vectors, items, method, seed=0)
    assert out["purity"] == pytest.approx(7 / 9)


def test_categorisation_cosine_average_linkage():
    rng = np.random.default_rng(2)
    vectors, items = _groups([["x"] * 3, ["y"] * 3], rng)
    out = evaluate_categorisation(vectors, items, linkage="average", metric="cosine")
    assert out["purity"] == 1.0
    with pytest.raises(ValueError):
        evaluate_categorisation(vectors, items, linkage="ward", metric="cosine")


# --- SemEval-2012 -----------------------------------------------------------------------------


def _semeval_case():
    """Category 1a: paradigm offsets e1 and 10 e2; question offsets at 0, 20, 45, 80 degrees.

    mean cosine = (cos t + sin t) / 2 = 0.5, 0.641, 0.707, 0.579 -> ranks 1, 3, 4, 2;
    the web score (0.5 cos t + 5 sin t) increases with t -> ranks 1, 2, 3, 4.
    Gold ratings rank like the mean cosine. Category 1b: the same questions with reversed gold.
    Category 2c: only two questions -> undefined correlation.
    """
    vectors: dict[str, np.ndarray] = {}
    rows = []

    def pair(cat: str, role: str, name: str, offset: np.ndarray, score: float) -> None:
        base = np.zeros(3)
        base[2] = len(vectors) + 1.0  # distinct base point per pair
        vectors[f"{name}_x"] = base
        vectors[f"{name}_y"] = base + offset
        rows.append((cat, role, f"{name}_x", f"{name}_y", score))

    gold = {"1a": [1.0, 3.0, 4.0, 2.0], "1b": [4.0, 2.0, 1.0, 3.0]}
    for cat, g in gold.items():
        pair(cat, "paradigm", f"{cat}p1", np.array([1.0, 0.0, 0.0]), math.nan)
        pair(cat, "paradigm", f"{cat}p2", np.array([0.0, 10.0, 0.0]), math.nan)
        for i, deg in enumerate([0, 20, 45, 80]):
            pair(cat, "rated", f"{cat}q{i}", np.append(_angle(deg), 0.0), g[i])
    rows.append(("1a", "rated", "nothing", "nowhere", 50.0))  # OOV question
    pair("2c", "paradigm", "2cp", np.array([1.0, 0.0, 0.0]), math.nan)
    pair("2c", "rated", "2cq0", np.array([1.0, 1.0, 0.0]), 10.0)
    pair("2c", "rated", "2cq1", np.array([1.0, 2.0, 0.0]), 20.0)
    frame = pd.DataFrame(rows, columns=["category", "role", "word1", "word2", "score"])
    return vectors, frame


def test_semeval_mean_cosine():
    vectors, frame = _semeval_case()
    out = evaluate_semeval2012(vectors, frame)
    assert out["by_category"]["1a"] == pytest.approx(1.0)
    assert out["by_category"]["1b"] == pytest.approx(-1.0)
    assert math.isnan(out["by_category"]["2c"])
    assert out["spearman"] == pytest.approx(0.0)
    assert (out["n_categories"], out["n_scored_categories"]) == (3, 2)
    assert out["total"] == 11
    assert out["coverage"] == pytest.approx(10 / 11)
    assert out["paradigm_coverage"] == 1.0


def test_semeval_web_score():
    vectors, frame = _semeval_case()
    out = evaluate_semeval2012(vectors, frame, method="web", oov="skip")
    # ranks (1,2,3,4) vs gold ranks (1,3,4,2): sum d^2 = 0+1+1+4 = 6, rho = 1 - 36/60 = 0.4
    assert out["by_category"]["1a"] == pytest.approx(0.4)
    # reversed gold (4,2,1,3): d = -3, 0, 2, 1 -> 14, rho = 1 - 84/60 = -0.4
    assert out["by_category"]["1b"] == pytest.approx(-0.4)
    # NaN counts as 0 under the web rule: (0.4 - 0.4 + 0) / 3
    assert out["spearman"] == pytest.approx(0.0)
    only_1a = evaluate_semeval2012(vectors, frame[frame["category"] != "1b"], method="web")
    assert only_1a["spearman"] == pytest.approx(0.4 / 2)
    strict_1a = evaluate_semeval2012(
        vectors, frame[frame["category"] != "1b"], method="web", nan_as_zero=False
    )
    assert strict_1a["spearman"] == pytest.approx(0.4)


# --- score_all --------------------------------------------------------------------------------


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
    sim_vectors, sim_pairs, _ = _similarity_case()
    rng = np.random.default_rng(0)
    cat_vectors, items = _groups([["x"] * 3, ["y"] * 3], rng)
    sem_vectors, sem_frame = _semeval_case()
    vectors = {
        **_in_block(_analogy_vectors(), 0),
        **_in_block(sim_vectors, 6),
        **_in_block(cat_vectors, 8),
        **_in_block(sem_vectors, 13),
    }
    frames = {
        "simlex999": sim_pairs,
        "google": _analogy_questions(),
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


# --- reference numbers ------------------------------------------------------------------------


def test_ethayarajh_table_shape_and_spot_values():
    assert len(ETHAYARAJH2019_TABLE1) == 12
    assert all(len(row) == 9 for row in ETHAYARAJH2019_TABLE1.values())
    assert ETHAYARAJH2019_TABLE1["BERT, Layer 1"]["simlex999"] == 0.315
    assert ETHAYARAJH2019_TABLE1["GPT-2, Layer 12"]["men"] == -0.009
    assert ETHAYARAJH2019_TABLE1["GloVe"]["ap"] == 0.308
    frame = reference_frame("ethayarajh2019_table1")
    assert len(frame) == 12 * 9


def test_bis_table2_averages_equal_table3_means():
    """The transcription is self-consistent: each Table 2 cell is the mean of five Table 3 cells."""
    t2, t3 = BIS2021_WORDSIM["table2"], BIS2021_WORDSIM["table3"]
    checked = 0
    for model, variants in t3.items():
        for variant, benches in variants.items():
            assert len(benches) == 5
            for score in ("cosine", "dot"):
                mean = np.mean([cells[score] for cells in benches.values()])
                assert t2[model][variant][score] == pytest.approx(mean, abs=0.006)
                checked += 1
    assert checked == 6 * 3 * 2
    assert len(reference_frame("bis2021_table2")) == 6 * 4 * 2
    assert len(reference_frame("bis2021_table3")) == 6 * 3 * 5 * 2


def _seed(prefix: str) -> str:
    files = sorted(SEEDS.glob(f"{prefix}_*.txt"))
    if not files:
        pytest.skip("seed texts not available")
    return files[0].read_text(encoding="utf-8")


def test_ethayarajh_table_matches_seed_text():
    lines = _seed("001").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Static Embedding\t"))
    columns = lines[header].split("\t")[1:]
    assert [ETHAYARAJH2019_COLUMNS[c] for c in columns] == list(ETHAYARAJH2019_COLUMNS.values())
    parsed = {}
    for line in lines[header + 1:]:
        if not line.strip():
            break
        name, *values = line.split("\t")
        parsed[name] = dict(zip(ETHAYARAJH2019_COLUMNS.values(), map(float, values), strict=True))
    assert parsed == ETHAYARAJH2019_TABLE1


def test_bis_table3_matches_seed_text():
    lines = _seed("004").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Bert-base-cased\t"))
    model = None
    seen = 0
    for line in lines[start:]:
        if not line.strip():
            break
        name, *cells = line.split("\t")
        if not name.startswith("+"):
            model = name.replace("Bert-", "BERT-")
            variant = "original"
        else:
            variant = name[2:].lower().replace("-", "_")
        expected = BIS2021_WORDSIM["table3"][model][variant]
        for bench, cell in zip(expected, cells, strict=True):
            dot, cos = (float(x) for x in cell.split(" / "))
            assert expected[bench] == {"dot": dot, "cosine": cos}
            seen += 1
    assert seen == 6 * 3 * 5


def test_bis_table2_matches_seed_text():
    text = _seed("004")
    lines = text.splitlines()
    start = 1 + next(i for i, line in enumerate(lines) if line.startswith("Model\tCosSim\t"))
    seen = 0
    models = [None, None]
    for line in lines[start:]:
        if not line.strip():
            break
        fields = line.split("\t")
        for half in (0, 1):
            name, cos, dot = fields[3 * half: 3 * half + 3]
            if not name.startswith("+"):
                models[half] = name
                variant = "original"
            else:
                variant = name[2:].lower().replace("-", "_")
            number = [float(re.sub(r"</?u>", "", x).split()[0]) for x in (cos, dot)]
            assert BIS2021_WORDSIM["table2"][models[half]][variant] == {
                "cosine": number[0], "dot": number[1]
            }
            seen += 1
    assert seen == 24


def test_spearman_helper_agrees_with_scipy_on_ties():
    # human scores with ties: the similarity evaluation must use tie-aware (average) ranks
    scores = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
    cosines = np.array([0.1, 0.3, 0.2, 0.5, 0.4])
    vectors = {"a": np.array([1.0, 0.0])}
    for i, c in enumerate(cosines):
        vectors[f"b{i}"] = np.array([c, math.sqrt(1 - c * c)])
    pairs = pd.DataFrame({"word1": ["a"] * 5, "word2": [f"b{i}" for i in range(5)],
                          "score": scores})
    # hand: ranks human (1, 2.5, 2.5, 4, 5), model (1, 3, 2, 5, 4)
    rh = np.array([1, 2.5, 2.5, 4, 5])
    rm = np.array([1, 3, 2, 5, 4])
    expected = np.corrcoef(rh, rm)[0, 1]
    assert evaluate_similarity(vectors, pairs)["spearman"] == pytest.approx(expected)
    assert expected == pytest.approx(stats.spearmanr(scores, cosines).statistic)


def test_paired_correlations_share_one_resample():
    from lmgeometry.measures.wordbench import paired_correlations

    rng = np.random.default_rng(0)
    human = rng.normal(size=100)
    scores = np.vstack([human + rng.normal(size=100), human + 0.1 * rng.normal(size=100)])
    r = paired_correlations(human, scores, n_boot=50, rng=3)
    assert r.shape == (51, 2)
    assert r[0, 0] == pytest.approx(stats.pearsonr(human, scores[0]).statistic)
    idx = np.random.default_rng(3).integers(0, 100, size=(50, 100))[7]
    assert r[8, 1] == pytest.approx(stats.pearsonr(human[idx], scores[1, idx]).statistic)
    rho = paired_correlations(human, scores, n_boot=0, method="spearman")
    assert rho[0, 0] == pytest.approx(stats.spearmanr(human, scores[0]).statistic)
