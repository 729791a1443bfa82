"""Tests of GPT-2's released tokenizer against its known ids."""

from __future__ import annotations

import pytest

from lmgeometry.io import tokenizer


@pytest.mark.data
@pytest.mark.data
def test_gpt2_tokenizer_is_gpt2s():
    tok = tokenizer.gpt2_tokenizer()
    assert len(tok) == tokenizer.GPT2_VOCAB_SIZE == 50_257
    assert tok.is_fast and tok.model_max_length == 1024
    assert tok.bos_token == tok.eos_token == tok.unk_token == "<|endoftext|>"
    assert tok.convert_tokens_to_ids("<|endoftext|>") == 50256
    # known ids of the released vocabulary; GPT-2 adds no special token to a text
    assert tok("Hello world")["input_ids"] == [15496, 995]
    assert tok("The cat, the end.")["input_ids"][:1] == [464]
    assert tok(" the")["input_ids"] == [262] and tok(",")["input_ids"] == [11]
    # a leading space is part of the next piece (Ġ); non-ASCII letters are byte pieces
    pieces = tok.convert_ids_to_tokens(tok("Hello naïve world")["input_ids"])
    assert pieces[0] == "Hello" and pieces[-1] == "Ġworld"
    assert "".join(pieces[1:-1]).startswith("Ġna")
    assert tok.decode(tok("Hello naïve world")["input_ids"]) == "Hello naïve world"
