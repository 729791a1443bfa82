"""Interventions on a forward pass: replace hidden dimensions, cut attention to chosen keys.

Two operations, the ones the mechanism literature uses on the attention sink and massive
activations (Sun et al. 2024; Xiao et al. 2024; Gu et al. 2025):

* :class:`Edit`: at the output of one block (hidden state ``layer``, 1 = the first block's
  output), at chosen positions of every sequence, set chosen dimensions to zero, to a number,
  to one number per dimension (e.g. their mean value there over many sequences: Sun et al.'s
  "set to mean"), or to their mean over the sequence's other positions (which removes what is
  special about those positions). The block's output is changed in place, so the hidden state
  transformers returns for that layer, and everything after it, sees the change.
* ``mask_keys``: no query attends to these key positions except the key itself (a 4-D additive
  attention mask; softmax renormalises over the keys left), on top of padding and, for a
  decoder, causality (:func:`key_mask`). The same mask can also cut chosen *queries* off from
  every key but themselves (``isolated``): a token that sees no context, as the first token of
  a causal model sees none.

Use them through :func:`lmgeometry.hidden_states` (``edits=``, ``mask_keys=``), which returns
the edited states in memory, or chapter 9's cached runs
(:func:`lmgeometry.activations.interventions.run_tokens`), which use the same hooks.

They are plain PyTorch forward hooks, not nnsight: an edit is a few lines on a block's output,
the chapter also needs transformers' own eager attention weights and a 4-D mask, which nnsight
would pass through unchanged, and benchmarks/backends.py measured nnsight reading the same
states no faster than the hooks (docs/LIBRARIES.md).

Examples
--------
>>> import lmgeometry
>>> zeroed = lmgeometry.hidden_states(
...     "smollm2-135m", ["The cat sat on the mat."],
...     edits=[lmgeometry.Edit(layer=3, dims=[0, 1], positions=[0], value="zero")])
>>> float(abs(zeroed.layer(3)[0, :2]).max())
0.0
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from lmgeometry.errors import UsageError

__all__ = ["Edit", "edit_hooks", "key_mask", "VALUES"]

#: The named values an :class:`Edit` sets (besides a number or one number per dimension).
VALUES = ("zero", "others_mean")


@dataclass(frozen=True)
class Edit:
    """Replace ``dims`` at ``positions`` of hidden state ``layer``.

    Parameters
    ----------
    layer : int
        The hidden state edited: 1 is the first block's output, ``n_blocks`` the last (the
        input embeddings, state 0, are not a block's output). Most decoders return their last
        hidden state after the final layer norm, so an edit of the last block shows there
        normalised.
    dims : sequence of int
        Hidden dimensions (distinct, at least one).
    positions : sequence of int
        Token positions in each sequence, 0 being its first token (as the model reads it: a
        prepended BOS token is position 0). A sequence shorter than a position is left as it is.
    value : "zero", "others_mean", float or sequence of float
        What the dimensions become: 0; their mean over the sequence's other positions (not in
        ``positions``, padding excluded); one number for all; or one number per dimension, in
        the order of ``dims``.
    """

    layer: int
    dims: Sequence[int]
    positions: Sequence[int] = (0,)
    value: str | float | Sequence[float] = "zero"

    def __post_init__(self) -> None:
        dims = tuple(int(d) for d in self.dims)
        positions = tuple(int(p) for p in self.positions)
        if int(self.layer) < 1:
            raise UsageError(f"Edit layer {self.layer}: edits act on a block's output, so the "
                             "layer is 1 (the first block) or more")
        if not dims or len(set(dims)) != len(dims) or min(dims) < 0:
            raise UsageError(f"Edit dims {list(self.dims)}: give at least one dimension, each "
                             "once, none negative")
        if not positions or min(positions) < 0:
            raise UsageError(f"Edit positions {list(self.positions)}: give at least one "
                             "position, none negative (0 is the sequence's first token)")
        value = self.value
        if isinstance(value, str):
            if value not in VALUES:
                raise UsageError(f"Edit value {value!r}: one of {', '.join(VALUES)}, a number, "
                                 "or one number per dimension")
        elif isinstance(value, int | float):
            value = float(value)
            _finite([value])
        else:
            value = tuple(float(v) for v in value)
            if len(value) != len(dims):
                raise UsageError(f"Edit value: {len(value)} numbers for {len(dims)} dimensions; "
                                 "give one per dimension, in the order of dims")
            _finite(value)
        object.__setattr__(self, "layer", int(self.layer))
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "positions", positions)
        object.__setattr__(self, "value", value)


def _finite(values: Sequence[float]) -> None:
    if not all(math.isfinite(v) for v in values):
        raise UsageError("Edit value: every number must be finite")


def _hook(edit: Edit, lengths: Any) -> Any:
    """The forward hook that applies ``edit`` to a block's output (``lengths``: the real
    tokens of each sequence of the batch)."""
    import torch

    dims = torch.as_tensor(edit.dims)

    def hook(module: Any, args: Any, output: Any) -> None:
        h = output[0] if isinstance(output, tuple) else output
        if max(edit.dims) >= h.shape[-1]:
            raise UsageError(f"Edit dims reach {max(edit.dims)}, but layer {edit.layer} has "
                             f"{h.shape[-1]} dimensions")
        n = h.shape[1]
        inside = (torch.arange(n, device=h.device)[None, :]
                  < lengths.to(h.device)[:, None])  # (batch, positions)
        chosen = torch.zeros(n, dtype=torch.bool, device=h.device)
        chosen[[p for p in edit.positions if p < n]] = True
        index = dims.to(h.device)
        if edit.value == "others_mean":
            others = (inside & ~chosen[None, :]).to(h.dtype)
            value = ((h[:, :, index] * others[:, :, None]).sum(1)
                     / others.sum(1).clamp(min=1)[:, None])  # (batch, dims)
        elif edit.value == "zero":
            value = h.new_zeros((h.shape[0], len(edit.dims)))
        else:
            value = torch.as_tensor(edit.value, dtype=h.dtype, device=h.device).expand(
                h.shape[0], len(edit.dims))
        for p in (p for p in edit.positions if p < n):
            rows = inside[:, p].nonzero().squeeze(1)
            h[rows[:, None], p, index[None, :]] = value[rows].to(h.dtype)

    return hook


@contextlib.contextmanager
def edit_hooks(blocks: Sequence[Any], edits: Sequence[Edit], lengths: Any) -> Iterator[None]:
    """``edits`` hooked on ``blocks`` (the model's transformer blocks, in order) for the
    forward passes run inside; removed on exit.

    Raises
    ------
    UsageError
        An edit's layer beyond the model's blocks.
    """
    handles = []
    try:
        for edit in edits:
            if edit.layer > len(blocks):
                raise UsageError(f"Edit layer {edit.layer}: the model has {len(blocks)} blocks "
                                 f"(layers 1 to {len(blocks)})")
            handles.append(blocks[edit.layer - 1].register_forward_hook(_hook(edit, lengths)))
        yield
    finally:
        for handle in handles:
            handle.remove()


def key_mask(lengths: Any, width: int, keys: Sequence[int], causal: bool,
             isolated: Sequence[int] = ()) -> Any:
    """A 4-D additive attention mask ``(batch, 1, query, key)``: padding, causality when
    ``causal``, no attention to ``keys`` from any query but the key itself, and none from the
    queries at positions ``isolated`` to any key but themselves.

    A masked entry is the dtype's lowest float32 value, an allowed one 0 (what transformers
    adds to the attention scores); no row is ever left empty.

    Examples
    --------
    >>> import torch
    >>> mask = key_mask(torch.tensor([3]), 3, keys=[], causal=True, isolated=[2])
    >>> (mask[0, 0] == 0).int().tolist()  # 1: may attend; query 2 sees only itself
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    import torch

    span = torch.arange(width)
    allowed = (span[None, :] < lengths[:, None])[:, None, :].expand(-1, width, -1).clone()
    if causal:
        allowed &= torch.tril(torch.ones(width, width, dtype=torch.bool))[None]
    for k in (k for k in keys if 0 <= k < width):
        allowed[:, span != k, k] = False
    for q in (q for q in isolated if 0 <= q < width):
        allowed[:, q, span != q] = False
    allowed[:, span, span] = True  # every query keeps itself: never an empty row
    out = torch.zeros(allowed.shape, dtype=torch.float32)
    out[~allowed] = torch.finfo(torch.float32).min
    return out[:, None]
