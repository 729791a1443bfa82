"""The hyperparameters of a fine-tuning run (:mod:`lmgeometry.training.finetune`).

Kept apart, with no heavy imports, so that the command line can show the defaults cheaply.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from lmgeometry.errors import UsageError

__all__ = ["PRECISIONS", "Settings"]

#: ``bfloat16``: mixed precision (the forward and backward passes' matrix products in bfloat16
#: under ``torch.autocast``; weights, optimiser state, loss and gradients' updates in float32);
#: ``float32``: everything in float32.
PRECISIONS: tuple[str, ...] = ("bfloat16", "float32")


@dataclass(frozen=True)
class Settings:
    """Every hyperparameter of a fine-tuning run (all of them are part of the cache key).

    Attributes
    ----------
    train_size : int
        Training examples, a seeded sample of the task's training data.
    epochs : int
        Passes over them.
    lr : float
        Peak learning rate of AdamW.
    batch_size : int
        Examples per optimiser step.
    max_length : int
        Tokens per example (longer inputs are truncated at the end).
    seed : int
        Training sample, head initialisation, dropout and batch order.
    warmup : float
        Share of the steps over which the learning rate rises linearly from 0.
    weight_decay : float
        AdamW's decoupled weight decay (not on biases and normalisation weights).
    max_grad_norm : float
        Gradients are clipped to this global L2 norm.
    precision : {"float32", "bfloat16"}
        ``float32``, the default: every operation in float32, fast and the same on any CPU.
        ``bfloat16``: mixed precision, the matrix products of the forward and backward passes
        in bfloat16 under ``torch.autocast`` (the weights, AdamW's state and the loss stay in
        float32, and the checkpoint is saved in float32), as ``transformers.Trainer`` does with
        ``bf16=True``; 1.6x faster than float32 for SmolLM2-135M on a CPU with AVX-512 BF16
        (``benchmarks/finetune.py``), but about 20 times slower on one without it (AVX2 only,
        where bfloat16 is emulated): measured 2.1 s against 0.09 s for one 2,048 x 384 x 1,536
        product and its backward pass.
    """

    train_size: int = 2000
    epochs: int = 2
    lr: float = 5e-5
    batch_size: int = 16
    max_length: int = 128
    seed: int = 0
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    precision: str = "float32"

    def check(self) -> Settings:
        """Raise :class:`UsageError` for a setting that cannot work; return ``self``."""
        positive = {"train_size": self.train_size, "epochs": self.epochs,
                    "batch_size": self.batch_size, "max_length": self.max_length}
        for name, value in positive.items():
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise UsageError(f"{name} (--{name.replace('_', '-')}) must be a positive "
                                 f"integer, not {value!r}")
        if self.max_length < 8:
            raise UsageError(f"max_length (--max-length) must be at least 8 tokens, not "
                             f"{self.max_length}")
        if not (math.isfinite(self.lr) and 0 < self.lr < 1):
            raise UsageError(f"lr (--lr) must be a learning rate in (0, 1), not {self.lr!r}")
        if not 0 <= self.warmup < 1:
            raise UsageError(f"warmup (--warmup) must be a share of the steps in [0, 1), not "
                             f"{self.warmup!r}")
        if not (self.weight_decay >= 0 and self.max_grad_norm > 0):
            raise UsageError("weight_decay must be >= 0 and max_grad_norm > 0, not "
                             f"{self.weight_decay!r} and {self.max_grad_norm!r}")
        if self.precision not in PRECISIONS:
            raise UsageError(f"precision (--precision) must be one of {PRECISIONS}, not "
                             f"{self.precision!r}")
        if not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise UsageError(f"seed (--seed) must be a non-negative integer, not {self.seed!r}")
        return self
