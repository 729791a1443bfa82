"""The settings of a pretraining run (:mod:`lmgeometry.training.pretrain`).

Kept apart, with no heavy imports, so that the command line can show the defaults cheaply
(and apart from :mod:`lmgeometry.training.settings`, whose code keys the fine-tuned
checkpoints).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace

from lmgeometry.errors import UsageError

__all__ = ["OBJECTIVES", "PretrainSettings"]


#: The objectives :class:`PretrainSettings` trains with.
OBJECTIVES = ("mlm", "causal")


@dataclass(frozen=True)
class PretrainSettings:
    """Every setting of a pretraining run (:mod:`lmgeometry.training.pretrain`; all of them
    are part of the cache key).

    The defaults are sized for two CPU cores: both objectives together train in about a
    quarter of an hour. ``--scale`` multiplies ``tokens`` for a machine with a GPU.

    Attributes
    ----------
    objective : {"mlm", "causal"}
        A BERT-architecture masked LM, or a GPT-2-architecture causal LM.
    layers, width, heads : int
        Transformer blocks, hidden size and attention heads (feed-forward: 4 x width).
    vocab_size : int
        Word pieces of the tokenizer trained on the training text.
    block : int
        Tokens per training sequence, and the learned positions of the model: 256 cover every
        sentence a chapter analyses (the longest MultiNLI dev sentence is 240 tokens).
    tokens : int
        Training tokens (padding excluded), the budget of both objectives alike.
    batch_size : int
        Sequences per optimiser step. One 256-token sequence (about 15 texts) per step: a
        budget this small buys few steps, and a masked LM learns to read its context only
        after some hundreds of them (issue 33: at 300k tokens, 8 sequences per step left it
        at its unigram baseline, one per step 0.13 nats per token below it).
    lr, warmup, weight_decay, max_grad_norm : float
        AdamW's peak learning rate, the share of steps it rises over, its decoupled weight
        decay (matrices only) and the gradient-norm clip.
    mask_rate : float
        Share of a sequence's tokens a masked LM predicts (80% replaced by [MASK], 10% by a
        random piece, 10% kept, as BERT); Wettig et al. (2023) found rates of 0.3-0.4 learn
        faster than BERT's 0.15, and at this budget 0.5 learns faster still (issue 33).
        Unused by the causal objective.
    tie_embeddings : bool
        Output layer shares the input embedding matrix (BERT and GPT-2 both do).
    checkpoints : int
        Log-spaced checkpoints saved after the first step (step 0, the initialisation, is
        saved too).
    seed : int
        Initialisation, data order and masks.
    """

    objective: str = "causal"
    layers: int = 4
    width: int = 128
    heads: int = 4
    vocab_size: int = 8192
    block: int = 256
    tokens: int = 1_000_000
    batch_size: int = 1
    lr: float = 1e-3
    warmup: float = 0.05
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    mask_rate: float = 0.5
    tie_embeddings: bool = True
    checkpoints: int = 8
    seed: int = 0

    def check(self) -> PretrainSettings:
        """Raise :class:`UsageError` for a setting that cannot work; return ``self``."""
        if self.objective not in OBJECTIVES:
            raise UsageError(f"objective (--objective) must be one of {', '.join(OBJECTIVES)}, "
                             f"not {self.objective!r}")
        counts = {"layers": self.layers, "width": self.width, "heads": self.heads,
                  "vocab_size": self.vocab_size, "block": self.block, "tokens": self.tokens,
                  "batch_size": self.batch_size, "checkpoints": self.checkpoints}
        for name, value in counts.items():
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise UsageError(f"{name} (--{name.replace('_', '-')}) must be a positive "
                                 f"integer, not {value!r}")
        if self.width % self.heads:
            raise UsageError(f"width {self.width} must be a multiple of heads {self.heads}")
        if self.block < 8 or self.vocab_size < 300:
            raise UsageError(f"block must be at least 8 tokens and vocab_size at least 300 "
                             f"pieces, not {self.block} and {self.vocab_size}")
        if self.tokens < self.batch_size * self.block:
            raise UsageError(f"tokens (--tokens) {self.tokens} is less than one batch "
                             f"({self.batch_size} x {self.block} tokens)")
        if not (math.isfinite(self.lr) and 0 < self.lr < 1):
            raise UsageError(f"lr (--lr) must be a learning rate in (0, 1), not {self.lr!r}")
        if not 0 <= self.warmup < 1 or not 0 < self.mask_rate < 1:
            raise UsageError(f"warmup must be in [0, 1) and mask_rate in (0, 1), not "
                             f"{self.warmup!r} and {self.mask_rate!r}")
        if not (self.weight_decay >= 0 and self.max_grad_norm > 0):
            raise UsageError("weight_decay must be >= 0 and max_grad_norm > 0, not "
                             f"{self.weight_decay!r} and {self.max_grad_norm!r}")
        if not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise UsageError(f"seed (--seed) must be a non-negative integer, not {self.seed!r}")
        return self

    def scaled(self, factor: float) -> PretrainSettings:
        """The same run with ``factor`` times the training tokens (``--scale``)."""
        if not (math.isfinite(factor) and factor > 0):
            raise UsageError(f"--scale must be a positive number, not {factor!r}")
        return replace(self, tokens=max(1, round(self.tokens * factor)))
