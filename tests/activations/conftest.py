"""Fixtures of the activation tests: a tiny decoder with a real tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory, smollm2_tokenizer) -> str:
    """A 2-block Llama (random weights, seed 0) with SmolLM2's tokenizer (no BOS prepended)."""
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(smollm2_tokenizer), hidden_size=32,
                         intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                         num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=smollm2_tokenizer.bos_token_id,
                         eos_token_id=smollm2_tokenizer.eos_token_id)
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).eval().save_pretrained(folder)
    smollm2_tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def tiny_llama_bos(tmp_path_factory, tiny_llama) -> str:
    """:func:`tiny_llama` (the same weights) with a tokenizer that prepends its BOS token, as
    Gemma's does."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("tiny-llama-bos")
    for file in Path(tiny_llama).iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    AutoTokenizer.from_pretrained(tiny_llama, add_bos_token=True).save_pretrained(folder)
    return str(folder)
