"""A decoder's language-model loss on texts, with and without a beginning-of-sequence token.

Running a decoder as the seeds ran GPT-2 (no BOS token; :func:`lmgeometry.io.models.seed_protocol`)
changes what it sees. Whether that hurts the model is measured here: the mean negative
log-likelihood of the same target tokens, each text's tokens after its first (the first token
has no context without a BOS token), under either framing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lmgeometry.errors import UsageError
from lmgeometry.io import models

__all__ = ["LossResult", "lm_loss"]


@dataclass(frozen=True)
class LossResult:
    """Per-text sums of the negative log-likelihood (nats) and the tokens they cover.

    Attributes
    ----------
    nll : ndarray of shape (texts,)
        Summed over each text's target tokens (every token after its first).
    tokens : ndarray of shape (texts,)
        The number of target tokens of each text.
    """

    nll: np.ndarray
    tokens: np.ndarray

    @property
    def mean(self) -> float:
        """Mean loss per target token (nats)."""
        return float(self.nll.sum() / max(int(self.tokens.sum()), 1))


def lm_loss(spec: str, texts: Sequence[str], *, prepend_bos: bool,
            batch_size: int = 16) -> LossResult:
    """Negative log-likelihood of each text's tokens after its first, under a decoder's LM head.

    Parameters
    ----------
    spec : str
        A decoder (:func:`lmgeometry.io.models.load_model`'s specs).
    texts : sequence of str
    prepend_bos : bool
        Put the tokenizer's BOS token before each text, or nothing.
    batch_size : int
        Texts per forward pass.

    Returns
    -------
    LossResult

    Raises
    ------
    UsageError
        An encoder, a BOS asked of a tokenizer without one, or no text of two tokens or more.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    location, options, kind = models.pretrained_source(spec)
    if kind != "decoder":
        raise UsageError(f"{spec} is an {kind}: a language-model loss needs a decoder")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tok = AutoTokenizer.from_pretrained(location, **options)
    lm = AutoModelForCausalLM.from_pretrained(location, dtype=torch.float32, **options).eval()
    bos = tok.bos_token_id
    if prepend_bos and bos is None:
        raise UsageError(f"the tokenizer of {spec} has no BOS token to prepend")
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    encoded = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    keep = [i for i, ids in enumerate(encoded) if len(ids) >= 2]
    if not keep:
        raise UsageError("lm_loss needs at least one text of two tokens or more")
    nll, count = np.zeros(len(texts)), np.zeros(len(texts), dtype=np.int64)
    lead = [bos] if prepend_bos else []
    with torch.inference_mode():
        for start in range(0, len(keep), batch_size):
            rows = keep[start:start + batch_size]
            seqs = [lead + encoded[i] for i in rows]
            width = max(map(len, seqs))
            ids = torch.full((len(seqs), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for r, s in enumerate(seqs):
                ids[r, :len(s)], mask[r, :len(s)] = torch.tensor(s), 1
            logp = torch.log_softmax(lm(input_ids=ids, attention_mask=mask).logits.float(), -1)
            for r, (i, s) in enumerate(zip(rows, seqs, strict=True)):
                first = len(lead) + 1  # the text's second token is the first target
                target = torch.tensor(s[first:])
                picked = logp[r, first - 1:len(s) - 1].gather(1, target[:, None])
                nll[i], count[i] = float(-picked.sum()), len(target)
    return LossResult(nll=nll, tokens=count)
