"""What the fine-tuning and pretraining loops share: AdamW's parameter groups, the learning-rate
schedule, transformers kept quiet while a model loads or saves.

Kept in a module of its own so that each loop's cache key (the digest of its module's import
closure, :func:`lmgeometry.sources.key_files`) covers this code and not the other loop's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

__all__ = ["linear_schedule", "param_groups", "quiet"]


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW groups: weight decay on matrices only (not biases, norms' weights)."""
    params = [p for p in model.parameters() if p.requires_grad]
    return [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]


def linear_schedule(warmup_steps: int, total_steps: int) -> Callable[[int], float]:
    """Learning-rate factor at a step: linear from 0 to 1 over the warm-up, then down to 0.

    ``step / warmup_steps`` before ``warmup_steps``, then ``(total - step) / (total -
    warmup)``: the schedule of ``transformers.get_linear_schedule_with_warmup``.
    """
    def factor(step: int) -> float:
        if step < warmup_steps:
            return step / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return factor


@contextmanager
def quiet() -> Iterator[None]:
    """transformers without its loading reports and progress bars (ours is enough)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
