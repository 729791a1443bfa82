"""Every public measure takes float16, bfloat16 and float32 arrays, numpy or torch, and gives
the known answer on each (issue 49: a bfloat16 tensor raised ``TypeError: Got unsupported
ScalarType BFloat16``).

Each case is a measure with inputs whose answer is known by hand and exactly representable in
bfloat16 (small integers, 0.5, 1/3 of a sum of ones), so one known answer serves every type.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pandas as pd
import pytest
import torch

import lmgeometry
from lmgeometry import measures
from lmgeometry.measures.arrays import as_numpy, float_arrays

# --- the converter -------------------------------------------------------------------------


def test_usable_numpy_arrays_pass_through_as_the_same_object(tmp_path):
    for dtype in (np.float16, np.float32, np.float64, np.int64, bool):
        x = np.ones((3, 2), dtype=dtype)
        assert as_numpy(x) is x
    mm = np.lib.format.open_memmap(tmp_path / "m.npy", mode="w+", dtype=np.float16,
                                   shape=(4, 2))
    assert as_numpy(mm) is mm  # a store layer's memory map is still read in chunks
    frame = pd.DataFrame({"a": [1]})
    assert as_numpy(frame) is frame and as_numpy([1.0, 2.0]) == [1.0, 2.0]


@pytest.mark.parametrize("dtype, expected", [
    (torch.bfloat16, np.float32), (torch.float16, np.float32), (torch.float32, np.float32),
    (torch.float64, np.float64), (torch.int64, np.int64), (torch.bool, np.bool_)])
def test_torch_tensors_become_cpu_numpy_sixteen_bit_floats_float32(dtype, expected):
    x = torch.arange(6).reshape(3, 2).to(dtype)
    out = as_numpy(x)
    assert isinstance(out, np.ndarray) and out.dtype == expected
    np.testing.assert_array_equal(out, np.arange(6).reshape(3, 2).astype(expected))


def test_grad_tensors_views_and_lists_are_converted():
    w = torch.ones(2, 3, requires_grad=True)
    assert as_numpy(w * 2).tolist() == [[2.0] * 3] * 2  # np.asarray refuses: requires grad
    assert as_numpy(torch.ones(2, 2).T.conj()).shape == (2, 2)
    pair = as_numpy([torch.zeros(2, 2, dtype=torch.bfloat16), np.ones((2, 2), np.float32)])
    assert [p.dtype for p in pair] == [np.float32, np.float32] and isinstance(pair, list)
    assert as_numpy(np.ones(2, dtype=ml_dtypes.bfloat16)).dtype == np.float32
    assert as_numpy(np.ones(2, dtype=ml_dtypes.float8_e4m3fn)).dtype == np.float32
    with pytest.raises(TypeError, match="real-valued tensor, got torch.complex64"):
        as_numpy(torch.ones(2, dtype=torch.complex64))


def test_float_arrays_converts_named_arguments_by_position_and_keyword():
    @float_arrays("X", "Y")
    def f(X, k=1, *, Y=None):
        return X.dtype, None if Y is None else Y.dtype, k

    b = torch.ones(2, dtype=torch.bfloat16)
    assert f(b) == (np.float32, None, 1)
    assert f(X=b, Y=b, k=3) == (np.float32, np.float32, 3)
    with pytest.raises(TypeError, match="has no parameter Z"):
        float_arrays("Z")(lambda X: X)


# --- every public measure, on every type ----------------------------------------------------

#: The types a caller may hand a measure: numpy float32/float16/bfloat16, torch
#: float32/float16/bfloat16.
TYPES = {
    "numpy float32": lambda a: np.asarray(a, dtype=np.float32),
    "numpy float16": lambda a: np.asarray(a, dtype=np.float16),
    "numpy bfloat16": lambda a: np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16),
    "torch float32": lambda a: torch.tensor(np.asarray(a, dtype=np.float32)),
    "torch float16": lambda a: torch.tensor(np.asarray(a, dtype=np.float32)).half(),
    "torch bfloat16": lambda a: torch.tensor(np.asarray(a, dtype=np.float32)).bfloat16(),
}

# Three rows: two along e1 and one along e2. Cosines of the ordered pairs: 1, 0, 0 (twice
# each), so their mean is 1/3.
THREE = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
# Two groups far apart along e1, each spread along e2: k-means finds them, the groups explain
# nearly all the variance, a probe separates them.
GROUPS_X = [[10.0, 0.0], [10.0, 1.0], [10.0, -1.0], [10.0, 0.5],
            [-10.0, 0.0], [-10.0, 1.0], [-10.0, -1.0], [-10.0, 0.5]] * 3
GROUPS = np.array([0, 0, 0, 0, 1, 1, 1, 1] * 3)
# Rows +e1, -e1, +e2, -e2: centred, isotropic, every partition sum alike.
AXES = [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]
# Word occurrences: "bank" twice (same vector, two sentences), "river" twice (orthogonal
# vectors, two sentences).
WORDS = pd.DataFrame({"sentence_id": [0, 0, 1, 1], "word_index": [0, 1, 0, 1],
                      "text": ["bank", "river", "bank", "river"], "is_punct": False})
WORD_X = [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0], [2.0, 2.0, 0.0], [0.0, 3.0, 0.0]]


def _separability(T):
    frame = pd.DataFrame({"lemma": ["bank"] * 4, "sense_key": ["money", "money", "river",
                                                               "river"]})
    X = T([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [0.0, 3.0]])
    return measures.sense_separability(X, frame).iloc[0]["accuracy_1nn"]


def _word_measures(T):
    out = measures.word_measures(T(WORD_X), WORDS, min_contexts=2).set_index("word")["selfsim"]
    return (out["bank"], out["river"])


def _static(T):
    vectors = measures.static_embeddings(T(WORD_X), WORDS, min_contexts=2, centered=False)
    return tuple(np.round(vectors["bank"], 4))


def _tokens(T):
    table = measures.token_measures(T(WORD_X), WORDS, min_contexts=2)
    return tuple(table["token_self"].round(4))


def _context(T):
    tables = measures.context_tables(T(WORD_X), WORDS, preset="ethayarajh2019", min_contexts=2,
                                     n_intra_sentences=None)
    return round(float(tables.words.set_index("word").loc["bank", "selfsim"]), 4)


# name -> (call on the converted arrays, known answer)
CASES = {
    "self_similarity": (lambda T: lmgeometry.self_similarity(T(THREE)), 1 / 3),
    "mean_pairwise_cosine": (lambda T: lmgeometry.mean_pairwise_cosine(T(THREE)), 1 / 3),
    # rows e1 and e2: their mean is (1, 1) / 2, at cosine 1/sqrt(2) to each
    "intra_sentence_similarity": (lambda T: lmgeometry.intra_sentence_similarity(
        T([[1.0, 0.0], [0.0, 1.0]])), 1 / math.sqrt(2)),
    # rank one: the first singular value carries all the variance
    "max_explainable_variance": (lambda T: lmgeometry.max_explainable_variance(
        T([[1.0, 2.0], [2.0, 4.0], [-1.0, -2.0]])), 1.0),
    # sentences [0, 0, 1]: the pairs across sentences are (0, 2) and (1, 2), both cosine 0
    "anisotropy_baseline": (lambda T: lmgeometry.anisotropy_baseline(
        T(THREE), np.array([0, 0, 1]), n=None), 0.0),
    # +-e1, +-e2: every direction's partition sum is the same, so I(W) = 1
    "isotropy_partition": (lambda T: lmgeometry.isotropy_partition(T(AXES)), 1.0),
    "isoscore": (lambda T: lmgeometry.isoscore(T(AXES)), 1.0),
    "mean_cosine": (lambda T: lmgeometry.mean_cosine(T(THREE)), 1 / 3),
    "center": (lambda T: lmgeometry.center(T([[1.0, 1.0], [3.0, 1.0]])).tolist(),
               [[-1.0, 0.0], [1.0, 0.0]]),
    # the top PC of rows (+-2, 0) is e1; removing it leaves the e2 part, here zero after
    # centring
    "remove_top_pcs": (lambda T: np.abs(lmgeometry.remove_top_pcs(
        T([[2.0, 0.0], [-2.0, 0.0]]), d=1)).tolist(), [[0.0, 0.0], [0.0, 0.0]]),
    "linear_cka": (lambda T: lmgeometry.linear_cka(T(GROUPS_X), T(np.multiply(GROUPS_X, 2))),
                   1.0),
    "cka_matrix": (lambda T: lmgeometry.cka_matrix([T(GROUPS_X), T(np.multiply(GROUPS_X, 4))]
                                                   ).round(4).tolist(), [[1.0, 1.0], [1.0, 1.0]]),
    # norms 2 (selected) against 1 (the others)
    "norm_ratio": (lambda T: lmgeometry.norm_ratio(T([[2.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
                                                   np.array([True, False, False])), 2.0),
    # only dimension 1 varies
    "top_dimensions": (lambda T: lmgeometry.top_dimensions(
        T([[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]), k=1).tolist(), [1]),
    "variance_share": (lambda T: lmgeometry.variance_share(
        T([[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]), k=1), 1.0),
    # the largest magnitude (8) over the median magnitude (1)
    "magnitude_ratio": (lambda T: lmgeometry.magnitude_ratio(
        T([[8.0, 1.0], [1.0, 1.0], [1.0, 1.0]])), 8.0),
    "massive_dimensions": (lambda T: lmgeometry.massive_dimensions(
        T([[256.0, 1.0], [1.0, 1.0], [256.0, 1.0], [1.0, 1.0]]),
        np.array([True, False, True, False]), ratio=100.0).tolist(), [0]),
    # equal norms: the mean vector predicts the mean cosine exactly
    "shift_cosine": (lambda T: round(measures.shift_cosine(T(THREE))["shift_residual"], 6),
                     0.0),
    "singular_values": (lambda T: measures.singular_values(
        T([[3.0, 0.0], [0.0, 2.0]])).tolist(), [3.0, 2.0]),
    "detect_clusters": (lambda T: measures.detect_clusters(T(GROUPS_X), n_pca=2).k, 2),
    # no variance within the groups: they explain all of it (omega^2 = 1)
    "variance_explained_by": (lambda T: measures.variance_explained_by(
        T([[10.0, 0.0]] * 4 + [[-10.0, 0.0]] * 4), GROUPS[:8]), 1.0),
    "linear_probe": (lambda T: measures.linear_probe(
        T(GROUPS_X), GROUPS, np.arange(len(GROUPS)) // 2, seed=0).accuracy, 1.0),
    # two senses in orthogonal directions: the nearest other occurrence has the same sense
    "sense_separability": (_separability, 1.0),
    "evaluate_wic": (lambda T: measures.evaluate_wic(
        T([0.9, 0.8, 0.1, 0.2]), [1, 1, 0, 0], T([0.9, 0.1]), [1, 0])["dev_accuracy"], 1.0),
    "embedding_statistics": (lambda T: round(measures.embedding_statistics(T(AXES))
                                             ["isotropy_raw"], 6), 1.0),
    # bank: parallel occurrences (SelfSim 1); river: orthogonal ones (0)
    "word_measures": (_word_measures, (1.0, 0.0)),
    "context_tables": (_context, 1.0),
    # the mean SelfSim over the two words, (1 + 0) / 2
    "context_measures": (lambda T: measures.context_measures(
        T(WORD_X), WORDS, preset="ethayarajh2019", min_contexts=2, n_intra_sentences=None,
        n_boot=10)["selfsim"], 0.5),
    "static_embeddings": (_static, (round(1 / math.sqrt(2), 4), round(1 / math.sqrt(2), 4),
                                    0.0)),
    # each token's cosine to its word's occurrence in the other sentence
    "token_measures": (_tokens, (1.0, 0.0, 1.0, 0.0)),
    "bootstrap_ci": (lambda T: measures.bootstrap_ci(T([2.0, 2.0, 2.0]))[0], 2.0),
}


def test_every_public_measure_taking_arrays_has_a_case():
    """A new public measure must be added here (or to the list of those taking no arrays)."""
    no_arrays = {"Estimators", "PRESETS", "GroupBootstrap", "UnitRows", "verdict",
                 "polysemy_regression", "score_all",
                 "permute_within"}  # shuffles labels, reads no vectors
    public = set(measures.__all__) | {n for n in lmgeometry.__all__
                                      if n in measures.__all__ or n == "isoscore"}
    assert public - no_arrays == set(CASES)


@pytest.mark.parametrize("kind", list(TYPES))
@pytest.mark.parametrize("name", list(CASES))
def test_measure_gives_the_known_answer_on_every_type(name, kind):
    call, expected = CASES[name]
    got = call(TYPES[kind])
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                               atol=2e-3, err_msg=f"{name} on {kind}")


# --- activations of other libraries into the measures (layer_states) ----------------------


class ActivationCacheLike:
    """What TransformerLens's ``ActivationCache`` offers a reader: keys and item access (not a
    dict subclass), tensors of (batch, pos, d_model) in the model's dtype."""

    def __init__(self, tensors):
        self._t = dict(tensors)

    def keys(self):
        return self._t.keys()

    def __getitem__(self, key):
        return self._t[key]


def _tl_cache(n_layers=3, batch=2, pos=4, width=5, dtype=torch.bfloat16):
    torch.manual_seed(0)
    tensors = {"hook_embed": torch.randn(batch, pos, width, dtype=dtype)}
    for i in range(n_layers):
        for hook in ("resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out"):
            tensors[f"blocks.{i}.hook_{hook}"] = torch.randn(batch, pos, width, dtype=dtype)
        tensors[f"blocks.{i}.attn.hook_pattern"] = torch.softmax(
            torch.randn(batch, 2, pos, pos), -1).to(dtype)
        tensors[f"blocks.{i}.ln1.hook_scale"] = torch.ones(batch, pos, 1, dtype=dtype)
    return ActivationCacheLike(tensors)


def test_layer_states_reads_a_transformerlens_cache_by_hook_name():
    cache = _tl_cache()
    states = lmgeometry.layer_states(cache)  # hook="resid_post"
    assert states.shape == (3, 8, 5) and states.dtype == np.float32
    for i in range(3):  # rows: batch then position
        want = cache[f"blocks.{i}.hook_resid_post"].float().reshape(8, 5).numpy()
        np.testing.assert_array_equal(states[i], want)
    np.testing.assert_array_equal(lmgeometry.layer_states(cache, "hook_mlp_out")[2],
                                  cache["blocks.2.hook_mlp_out"].float().reshape(8, 5).numpy())
    pattern = lmgeometry.layer_states(cache, "pattern", flatten=False)
    assert pattern.shape == (3, 2, 2, 4, 4)
    np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-2)  # bfloat16 rows of weights


def test_layer_states_mask_leaves_out_padding():
    cache = _tl_cache()
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    states = lmgeometry.layer_states(cache, mask=mask)
    assert states.shape == (3, 6, 5)
    np.testing.assert_array_equal(states[1][4:], cache["blocks.1.hook_resid_post"][1, :2]
                                  .float().numpy())
    with pytest.raises(ValueError, match=r"mask has shape \(2, 3\)"):
        lmgeometry.layer_states(cache, mask=np.ones((2, 3)))


def test_layer_states_reads_nnsight_saved_outputs_by_module_path():
    """nnsight saves what a module returns: a block's output is a tuple (hidden, ...)."""
    torch.manual_seed(1)
    saved = {f"model.layers.{i}": (torch.randn(1, 3, 4), None) for i in (2, 0, 1)}
    states = lmgeometry.layer_states(saved, hook=None)
    assert states.shape == (3, 3, 4)
    np.testing.assert_array_equal(states[2], saved["model.layers.2"][0][0].numpy())
    mlp = {f"transformer.h.{i}.mlp": torch.randn(3, 4) for i in range(2)}  # (pos, width)
    assert lmgeometry.layer_states(mlp, hook="mlp").shape == (2, 3, 4)


def test_layer_states_feeds_the_measures_the_same_numbers_as_hidden_states():
    """A run's states given as a TransformerLens-style cache give the measure the value the
    same states give as an array."""
    rng = np.random.default_rng(3)
    layers = rng.standard_normal((4, 6, 8)).astype(np.float32)
    cache = {f"blocks.{i}.hook_resid_post": torch.from_numpy(layers[i])[None] for i in range(4)}
    for i in range(4):
        assert lmgeometry.mean_cosine(lmgeometry.layer_states(cache)[i]) == pytest.approx(
            lmgeometry.mean_cosine(layers[i]))


def test_layer_states_refuses_what_it_cannot_read():
    cache = _tl_cache()
    with pytest.raises(ValueError, match="no key of the mapping names a layer and 'resid'"):
        lmgeometry.layer_states(cache, "resid")
    with pytest.raises(ValueError, match="layer 0 has .* keys .*pass hook="):
        lmgeometry.layer_states(cache, None)
    with pytest.raises(ValueError, match="pass flatten=False"):
        lmgeometry.layer_states(cache, "pattern")
    with pytest.raises(ValueError, match="differ in shape"):
        lmgeometry.layer_states({"h.0.x": np.zeros((2, 3)), "h.1.x": np.zeros((3, 3))}, "x")
