"""GPT-2's released tokenizer (OpenAI's ``encoder.json`` and ``vocab.bpe``), built and
checked against its known ids."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

from lmgeometry.errors import DataError
from lmgeometry.io.datafiles import fetch

__all__ = [
    "GPT2_HELLO_WORLD",
    "GPT2_VOCAB_SIZE",
    "gpt2_tokenizer",
]

#: Entries of GPT-2's vocabulary: 50,000 merges on 256 byte symbols, plus ``<|endoftext|>``.
GPT2_VOCAB_SIZE = 50_257

#: GPT-2's ids of "Hello world" (the check of OpenAI's and Hugging Face's documentation).
GPT2_HELLO_WORLD = (15496, 995)


def gpt2_tokenizer() -> PreTrainedTokenizerFast:
    """GPT-2's real tokenizer, built from OpenAI's released ``encoder.json`` and ``vocab.bpe``.

    The byte-level BPE of Radford et al. (2019): text is mapped to bytes, bytes to 256
    printable symbols (a space becomes ``Ġ``), and the 50,000 merges of ``vocab.bpe`` are
    applied in rank order within GPT-2's pre-tokenisation (contractions, letter runs, digit
    runs, other runs, each with its leading space). ``<|endoftext|>`` (id 50256) is the
    beginning, end and unknown token, and GPT-2's tokenizer adds no special token to a text.

    transformers 5 builds it with ``GPT2TokenizerFast(vocab=dict, merges=pairs)``; its
    ``vocab_file=`` / ``merges_file=`` form silently gives a one-token vocabulary that turns
    every text into no ids, so the result is checked: 50,257 entries and "Hello world" ->
    [15496, 995].

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        With ``model_max_length`` 1024 (GPT-2's positions). ``save_pretrained(folder)`` writes
        the files a model folder needs (``tokenizer.json`` included).

    Raises
    ------
    DataError
        The files do not give GPT-2's vocabulary (a transformers version whose constructor
        ignores the vocabulary, or damaged files).
    """
    from transformers import GPT2TokenizerFast

    vocab = json.loads(fetch("gpt2_encoder").read_text(encoding="utf-8"))
    lines = fetch("gpt2_merges").read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("#version"):
        raise DataError(f"{fetch('gpt2_merges')}: expected a '#version' header line")
    merges = [tuple(line.split()) for line in lines[1:] if line.strip()]
    tokenizer = GPT2TokenizerFast(vocab=vocab, merges=merges, model_max_length=1024)
    ids = tuple(tokenizer("Hello world")["input_ids"])
    if len(tokenizer) != GPT2_VOCAB_SIZE or ids != GPT2_HELLO_WORLD:
        raise DataError(
            f"GPT-2's tokenizer built from encoder.json and vocab.bpe has {len(tokenizer):,} "
            f"entries (expected {GPT2_VOCAB_SIZE:,}) and encodes 'Hello world' as {list(ids)} "
            f"(expected {list(GPT2_HELLO_WORLD)}): this transformers version "
            f"({_transformers_version()}) does not build it from GPT2TokenizerFast(vocab=..., "
            "merges=...); build it with the constructor form that version documents."
        )
    return tokenizer


def _transformers_version() -> str:
    from importlib.metadata import version

    return version("transformers")
