"""Chapter 9 (lmgeometry.chapters.sink.analysis): the check cell's table (the model runs
are tested in tests/activations/test_interventions.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import save_bert

from lmgeometry.chapters.sink import analysis as sink
from lmgeometry.chapters.sink.analysis import condition_layers
from lmgeometry.errors import UsageError


def test_condition_layers_is_the_notebook_s_old_loop():
    layers = pd.DataFrame({"model": ["z", "z", "z", "a", "z"],
                           "condition": ["intact", "intact", "sink", "intact", "sink"]})
    old = [(spec, condition, len(part))
           for (spec, condition), part in layers.groupby(["model", "condition"], sort=False)]
    got = condition_layers(layers)
    assert [(r.model, r.condition, r.layers) for r in got.itertuples()] == old
    assert old == [("z", "intact", 2), ("z", "sink", 2), ("a", "intact", 1)]


def test_only_encoders_is_refused_before_any_model_runs(monkeypatch, tmp_path):
    """The issue: chapter 9 with encoders only failed late with KeyError: 'model'. Aliases and
    local folders are known to be encoders from their records and configs, so the chapter
    stops in one line before a model is loaded."""
    def no_run(*args, **kwargs):
        raise AssertionError("a model ran before the check")

    monkeypatch.setattr(sink, "run_tokens", no_run)
    folder = save_bert(tmp_path / "bert")
    assert sink._known_kind("minilm-l6") == "encoder"
    assert sink._known_kind("smollm2-135m") == "decoder"
    assert sink._known_kind(str(folder)) == "encoder"
    for models in (["minilm-l6", "mpnet-base"], [str(folder)]):
        with pytest.raises(UsageError, match="are all encoders, and this chapter's "
                                             "interventions act on decoders") as info:
            sink.analyse(models, ["A short one."], n_boot=10)
        assert "\n" not in str(info.value) and info.value.exit_code == 2


def test_a_decoder_or_an_unknown_kind_passes_the_check():
    sink._require_decoder(["minilm-l6", "smollm2-135m"], {"minilm-l6": "encoder",
                                                          "smollm2-135m": "decoder"})
    sink._require_decoder(["org/not-downloaded"], {"org/not-downloaded": None})


def test_an_effect_is_read_in_words_from_its_whole_interval():
    from lmgeometry.chapters.sink.analysis import effect_reading

    assert effect_reading(0.6, 0.9) == "most" and effect_reading(0.5, 0.5) == "most"
    assert effect_reading(0.1, 0.49) == "part"
    assert effect_reading(-0.3, 0.099) == "none"
    assert effect_reading(0.05, 0.2) == "none or part"
    assert effect_reading(0.3, 0.7) == "part or most"
    assert effect_reading(0.0, 0.8) == "none or most"
