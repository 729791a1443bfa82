"""Chapter 3's parameters (chapters/context_params.py): defaults, checks, frozen."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from lmgeometry.chapters.context import analysis as cm
from lmgeometry.chapters.context.params import ContextParams, budget_size
from lmgeometry.errors import UsageError


def test_defaults_are_analyse_s_defaults():
    """The dataclass and the public entry cannot drift apart: same names, same defaults."""
    entry = inspect.signature(cm.analyse).parameters
    for f in dataclasses.fields(ContextParams):
        if f.name != "static_budget":
            assert entry[f.name].default == f.default, f.name
    assert entry["static_budget"].default is None
    assert ContextParams().static_budget == ContextParams().min_contexts == 5


def test_a_list_of_layers_becomes_a_tuple_and_the_budget_a_whole_number():
    p = ContextParams(static_web_layers=[3, np.int64(1)], min_contexts=4, static_budget=6.0)
    assert p.static_web_layers == (3, 1) and p.static_budget == 6
    assert isinstance(p.static_budget, int)
    assert ContextParams(min_contexts=7).static_budget == 7
    assert budget_size(None, 3) == 3 and budget_size(2, 9) == 2


def test_the_value_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ContextParams().seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(("name", "value"), [
    ("seed", -1), ("n_boot", -5), ("n_boot", 2.5), ("min_contexts", 1), ("k", 0),
    ("neighbour_queries", True), ("n_lowest", 0), ("max_position", 0), ("min_count", "20"),
    ("n_intra_sentences", 0),
])
def test_bad_values_name_the_parameter_and_the_fix(name, value):
    with pytest.raises(UsageError, match=rf"{name}={value!r}: pass a whole number of"):
        ContextParams(**{name: value})


def test_bad_static_choices_name_the_fix():
    with pytest.raises(UsageError, match="pass 'paper'"):
        ContextParams(static_web_layers="all")
    with pytest.raises(UsageError, match="a layer of static_web_layers=-1"):
        ContextParams(static_web_layers=[1, -1])
    with pytest.raises(UsageError, match="at least 2 contexts"):
        ContextParams(static_budget=1)


def test_zero_replicates_and_every_sentence_are_allowed():
    p = ContextParams(n_boot=0, n_intra_sentences=None, seed=0)
    assert (p.n_boot, p.n_intra_sentences) == (0, None)


def test_analyse_checks_its_parameters_before_reading_a_store():
    with pytest.raises(UsageError, match="k=0"):
        cm.analyse({}, k=0, authors=False)
