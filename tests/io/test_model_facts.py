"""Tests for lmgeometry.io.model_facts: a model's kind from its config (known configs' answers)."""

from __future__ import annotations

import pytest
from transformers import (
    BartConfig,
    BertConfig,
    Gemma3TextConfig,
    GPT2Config,
    LlamaConfig,
    MPNetConfig,
    T5Config,
)

from lmgeometry.errors import ModelLoadError
from lmgeometry.io import model_facts


@pytest.mark.parametrize(
    ("config", "kind"),
    [
        (GPT2Config(), "decoder"),
        (LlamaConfig(), "decoder"),
        (Gemma3TextConfig(), "decoder"),
        (BertConfig(), "encoder"),
        (MPNetConfig(), "encoder"),
        (BertConfig(is_decoder=True), "decoder"),
    ],
)
def test_model_kind(config, kind):
    assert model_facts.model_kind(config) == kind


@pytest.mark.parametrize("config", [T5Config(), BartConfig()])
def test_model_kind_rejects_encoder_decoder(config):
    with pytest.raises(ModelLoadError, match="encoder-decoder"):
        model_facts.model_kind(config)
