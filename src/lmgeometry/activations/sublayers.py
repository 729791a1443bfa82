"""Sub-layer outputs of every transformer block, read by forward hooks.

A block adds two things to the residual stream: its attention's output and its MLP's. What
TransformerLens calls ``hook_attn_out``, ``hook_mlp_out``, ``hook_resid_mid`` and
``hook_resid_post`` are read here from a transformers model by forward hooks on the modules
that compute them (:data:`SUBLAYERS`); nothing in the model is changed, and the hooks are
removed when the forward pass ends (:func:`capture_sublayers`).

Where each one is, by block layout (:func:`block_layout`, found from the block's modules):

===================  ===================================  ==================================
layout (models)      ``attn_out``, ``mlp_out``            ``resid_mid``
===================  ===================================  ==================================
pre-norm, GPT-2      ``attn`` (first output), ``mlp``     input of ``ln_2``
pre-norm, Llama      ``self_attn`` (first output),        input of ``post_attention_layernorm``
(SmolLM2, Qwen,      ``mlp``
Mistral)
sandwich norm,       ``post_attention_layernorm``,        input of ``pre_feedforward_layernorm``
Gemma 2/3            ``post_feedforward_layernorm``
post-norm, BERT      ``attention.output.dense``,          ``attention`` (first output: after
(MiniLM, RoBERTa)    ``output.dense``                     the LayerNorm)
post-norm, MPNet     ``attention.attn`` (first output),   ``attention`` (first output)
                     ``output.dense``
===================  ===================================  ==================================

``resid_post`` is the block's own output (its first output), which for the last block is the
stream before the model's final norm (``hidden_states[-1]`` is after it for GPT-2, Llama,
Gemma). For the pre-norm and sandwich layouts ``resid_mid = resid_pre + attn_out`` and
``resid_post = resid_mid + mlp_out`` exactly; for the post-norm ones each sum is followed by
its LayerNorm (``tests/activations/test_token_states.py`` checks both on every layout).
Dropout is not applied: the model runs in eval mode.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lmgeometry.errors import UsageError

__all__ = ["block_layout", "blocks", "capture_sublayers", "Layout", "LAYOUTS", "SUBLAYERS"]

#: The sub-layer outputs captured per block.
SUBLAYERS = ("attn_out", "mlp_out", "resid_mid", "resid_post")


@dataclass(frozen=True)
class Layout:
    """Where a block's sub-layer outputs are: module paths inside the block.

    ``attn`` and ``mlp``'s outputs (their first element when a tuple) are ``attn_out`` and
    ``mlp_out``; ``mid`` is read from its input (``mid_input=True``) or output.
    """

    name: str
    attn: str
    mlp: str
    mid: str
    mid_input: bool


#: Block layouts, tried in this order (the first whose modules all exist is used).
LAYOUTS = (
    Layout("sandwich norm (Gemma 2/3)", "post_attention_layernorm",
           "post_feedforward_layernorm", "pre_feedforward_layernorm", True),
    Layout("pre-norm (Llama)", "self_attn", "mlp", "post_attention_layernorm", True),
    Layout("pre-norm (GPT-2)", "attn", "mlp", "ln_2", True),
    Layout("post-norm (BERT)", "attention.output.dense", "output.dense", "attention", False),
    Layout("post-norm (MPNet)", "attention.attn", "output.dense", "attention", False),
)


def blocks(net: Any) -> Any:
    """The model's list of transformer blocks: the ``ModuleList`` with as many entries as
    the config's ``num_hidden_layers``."""
    import torch

    config = net.config.get_text_config() if hasattr(net.config, "get_text_config") else (
        net.config)
    n = int(getattr(config, "num_hidden_layers", 0) or 0)
    for module in net.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n and n:
            return module
    raise UsageError(f"{type(net).__name__}: no list of {n} transformer blocks found, so its "
                     "sub-layer outputs cannot be read; leave sublayers=False")


def _module(block: Any, path: str) -> Any:
    try:
        return block.get_submodule(path)
    except AttributeError:
        return None


def block_layout(block: Any) -> Layout:
    """The :class:`Layout` of one block (raises :class:`UsageError` naming the ones known)."""
    for layout in LAYOUTS:
        if all(_module(block, p) is not None for p in (layout.attn, layout.mlp, layout.mid)):
            return layout
    raise UsageError(f"sub-layer outputs of a {type(block).__name__} block are not known to "
                     f"lmgeometry (it reads these layouts: "
                     f"{'; '.join(x.name for x in LAYOUTS)}); leave sublayers=False, or read "
                     "the modules with your own forward hooks")


def _first(x: Any) -> Any:
    return x[0] if isinstance(x, tuple | list) else x


@contextlib.contextmanager
def capture_sublayers(net: Any, enabled: bool = True) -> Iterator[dict[str, list[Any]]]:
    """Hooks on every block while the body runs one forward pass of ``net``.

    Yields a dict, ``SUBLAYERS`` -> per block the ``(batch, tokens, width)`` tensor, filled
    by the forward pass (empty when ``enabled`` is False). The hooks are removed on exit.
    """
    captured: dict[str, list[Any]] = {}
    if not enabled:
        yield captured
        return
    found = blocks(net)
    layout = block_layout(found[0])
    for name in SUBLAYERS:
        captured[name] = [None] * len(found)
    handles = []

    def keep(name: str, i: int, use_input: bool = False) -> Any:
        def hook(module: Any, args: Any, output: Any = None) -> None:
            captured[name][i] = _first(args) if use_input else _first(output)
        return hook

    try:
        for i, block in enumerate(found):
            handles.append(block.get_submodule(layout.attn).register_forward_hook(
                keep("attn_out", i)))
            handles.append(block.get_submodule(layout.mlp).register_forward_hook(
                keep("mlp_out", i)))
            mid = block.get_submodule(layout.mid)
            handles.append(mid.register_forward_pre_hook(keep("resid_mid", i, True))
                           if layout.mid_input else mid.register_forward_hook(
                               keep("resid_mid", i)))
            handles.append(block.register_forward_hook(keep("resid_post", i)))
        yield captured
    finally:
        for h in handles:
            h.remove()
    missing = [n for n, v in captured.items() if any(t is None for t in v)]
    if missing:
        raise UsageError(f"{type(found[0]).__name__}: the forward pass did not reach "
                         f"{', '.join(missing)} in every block; leave sublayers=False")
