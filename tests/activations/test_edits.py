"""Interventions on a forward pass (lmgeometry.activations.edits) through hidden_states, on a
tiny real decoder with random weights: each edit lands exactly where asked and nowhere else."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import STORE_TEXTS

import lmgeometry
from lmgeometry.activations.edits import Edit, key_mask
from lmgeometry.errors import UsageError

TEXTS = STORE_TEXTS[:4]


@pytest.fixture(scope="module")
def intact(tiny_llama):
    return lmgeometry.hidden_states(tiny_llama, TEXTS)


def _positions(states) -> np.ndarray:
    """Each token's position in its sequence (0 = the first token the model reads)."""
    return states.tokens["position"].to_numpy()


def test_zero_and_values_land_at_the_positions_and_layer_asked(tiny_llama, intact) -> None:
    pos = _positions(intact)
    edited = lmgeometry.hidden_states(tiny_llama, TEXTS, edits=[
        Edit(layer=1, dims=[3, 5], positions=[0, 2], value="zero"),
        Edit(layer=1, dims=[7], positions=[1], value=[4.5])])
    S1, I1 = edited.layer(1), intact.layer(1)
    at = np.isin(pos, [0, 2])
    np.testing.assert_array_equal(S1[at][:, [3, 5]], 0.0)
    np.testing.assert_array_equal(S1[pos == 1, 7], 4.5)
    untouched = np.ones_like(S1, dtype=bool)
    untouched[np.ix_(at, [3, 5])] = False
    untouched[pos == 1, 7] = False
    np.testing.assert_array_equal(S1[untouched], I1[untouched])  # nothing else in layer 1
    np.testing.assert_array_equal(edited.layer(0), intact.layer(0))  # nor before it
    assert not np.allclose(edited.layer(2), intact.layer(2))  # the next block reads the edit


def test_others_mean_is_the_mean_of_the_sequence_s_other_positions(tiny_llama, intact) -> None:
    pos = _positions(intact)
    sentence = intact.tokens["sentence_id"].to_numpy()
    edited = lmgeometry.hidden_states(tiny_llama, TEXTS, edits=[
        {"layer": 1, "dims": [2, 9], "positions": [0], "value": "others_mean"}])
    S1, I1 = edited.layer(1), intact.layer(1)
    for s in np.unique(sentence):
        rows = sentence == s
        first, rest = rows & (pos == 0), rows & (pos > 0)
        np.testing.assert_allclose(S1[first][0, [2, 9]], I1[rest][:, [2, 9]].mean(0),
                                   rtol=1e-5, atol=1e-6)
    # a causal model reads position 0: later positions of the next layer change
    assert not np.allclose(edited.layer(2)[pos > 0], intact.layer(2)[pos > 0])


def test_masking_a_key_cuts_attention_to_it_and_leaves_it_alone(tiny_llama, intact) -> None:
    pos = _positions(intact)
    cut = lmgeometry.hidden_states(tiny_llama, TEXTS, mask_keys=[0], attention=True)
    for i in range(len(TEXTS)):
        weights = cut.attention(i)  # (layers, heads, query, key)
        np.testing.assert_allclose(np.asarray(weights)[:, :, 1:, 0], 0.0, atol=1e-7)
    # position 0 attends only to itself in a causal model: its states cannot change
    np.testing.assert_allclose(cut.layer(2)[pos == 0], intact.layer(2)[pos == 0], rtol=1e-4,
                               atol=1e-5)
    assert not np.allclose(cut.layer(2)[pos > 0], intact.layer(2)[pos > 0])


def test_key_mask_is_padding_causality_and_the_keys() -> None:
    mask = key_mask(torch.tensor([3, 2]), 3, [0], causal=True)[:, 0] == 0  # allowed
    expected = np.array([[[1, 0, 0], [0, 1, 0], [0, 1, 1]],
                         [[1, 0, 0], [0, 1, 0], [0, 1, 1]]], dtype=bool)  # 3rd: padding
    np.testing.assert_array_equal(mask.numpy(), expected)
    both = key_mask(torch.tensor([3]), 3, [1], causal=False)[0, 0] == 0
    np.testing.assert_array_equal(both.numpy(), [[1, 0, 1], [1, 1, 1], [1, 0, 1]])
    alone = key_mask(torch.tensor([3]), 3, [], causal=False, isolated=[1])[0, 0] == 0
    np.testing.assert_array_equal(alone.numpy(), [[1, 1, 1], [0, 1, 0], [1, 1, 1]])


def test_bad_edits_name_the_problem(tiny_llama) -> None:
    with pytest.raises(UsageError, match="layer is 1"):
        Edit(layer=0, dims=[1])
    with pytest.raises(UsageError, match="each once"):
        Edit(layer=1, dims=[1, 1])
    with pytest.raises(UsageError, match="one per dimension"):
        Edit(layer=1, dims=[1, 2], value=[1.0])
    with pytest.raises(UsageError, match="finite"):
        Edit(layer=1, dims=[1], value=float("nan"))
    with pytest.raises(UsageError, match="one of zero, others_mean"):
        Edit(layer=1, dims=[1], value="mean")
    with pytest.raises(UsageError, match="has 2 blocks"):
        lmgeometry.hidden_states(tiny_llama, TEXTS, edits=[Edit(layer=3, dims=[1])])
    with pytest.raises(UsageError, match="32 dimensions"):
        lmgeometry.hidden_states(tiny_llama, TEXTS, edits=[Edit(layer=1, dims=[40])])
    with pytest.raises(UsageError, match="only with cache=False"):
        lmgeometry.hidden_states(tiny_llama, TEXTS, cache=True, edits=[Edit(layer=1, dims=[1])])


def test_the_module_example_runs() -> None:
    import doctest

    from lmgeometry.activations import edits

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for test in finder.find(edits, "edits"):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 3 and result.failed == 0
