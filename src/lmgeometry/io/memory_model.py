"""A model already in memory as a :class:`~lmgeometry.io.loaded_model.LoadedModel`.

:func:`from_memory` checks and wraps a model and tokenizer; :func:`memory_fingerprint` hashes
their tensors, config and tokenizer as a folder's files are hashed. Moved from
:mod:`lmgeometry.io.models` (issue 31).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

from lmgeometry.errors import UsageError
from lmgeometry.io.loaded_model import (
    LoadedModel,
    _check_vocabulary,
    _probe_hidden_states,
    _shape_facts,
)
from lmgeometry.io.model_facts import model_kind, training_objective

__all__ = [
    "from_memory",
    "memory_fingerprint",
    "MEMORY_FINGERPRINT_VERSION",
]


#: Bumped when :func:`memory_fingerprint` changes what it hashes (the cache keys change).
MEMORY_FINGERPRINT_VERSION = 1


#: Config keys that say where a model came from, not what it computes.
_PROVENANCE_KEYS = ("_name_or_path", "name_or_path", "transformers_version", "_commit_hash")


def memory_fingerprint(model: torch.nn.Module, tokenizer: Any) -> str:
    """sha256 over an in-memory model's tensors, config and tokenizer, like a folder's files.

    Hashed, in this order: :data:`MEMORY_FINGERPRINT_VERSION`, the model's class name, its
    config as sorted JSON without the keys that only record provenance (:data:`_PROVENANCE_KEYS`),
    every entry of ``state_dict()`` in name order (name, dtype, shape, bytes: parameters and
    buffers), and the fast tokenizer's own JSON (vocabulary, normaliser, pre-tokeniser, template;
    without the padding and truncation state a call leaves behind) with its special tokens.
    Two models with the same weights, config and tokenizer get the same fingerprint in any
    process, on any device; changing one weight changes it. Reads every tensor once (about a
    second per 100 M parameters).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The model (any device, any dtype).
    tokenizer : PreTrainedTokenizerFast
        Its fast tokenizer.

    Returns
    -------
    str
        64 hex digits.
    """
    import torch

    total = hashlib.sha256(f"lmgeometry in-memory model v{MEMORY_FINGERPRINT_VERSION}\n"
                           f"{type(model).__name__}\n".encode())
    config = {k: v for k, v in model.config.to_dict().items() if k not in _PROVENANCE_KEYS}
    total.update(json.dumps(config, sort_keys=True, default=str).encode())
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        total.update(f"\n{name}\0{flat.dtype}\0{tuple(tensor.shape)}\0".encode())
        total.update(flat.view(torch.uint8).numpy().tobytes())
    backend = json.loads(tokenizer.backend_tokenizer.to_str())
    backend.pop("padding", None)
    backend.pop("truncation", None)
    special = {"map": tokenizer.special_tokens_map, "ids": tokenizer.all_special_ids,
               "padding_side": tokenizer.padding_side}
    total.update(json.dumps([backend, special], sort_keys=True, default=str).encode())
    return total.hexdigest()


def from_memory(model: Any, tokenizer: Any, *, name: str | None = None) -> LoadedModel:
    """A :class:`LoadedModel` of a transformers model held in memory, fingerprinted for the cache.

    The model is used as it is, not copied, moved or converted: on its own device, in eval
    mode and float32 (what :func:`load_model` returns). Its fingerprint is
    :func:`memory_fingerprint` (weights, config and tokenizer), so the activation store caches
    its hidden states like a folder's: the same model gives the same entry in a later process,
    and a changed weight gives a new one.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        An encoder or decoder (``BertModel``, ``GPT2LMHeadModel``, ...), in eval mode
        (``model.eval()``) and float32 (``model.float()``).
    tokenizer : PreTrainedTokenizerFast
        Its fast tokenizer (character offsets are needed to find the words' pieces). A
        tokenizer without a padding token gets its EOS token as one, on a copy.
    name : str, optional
        How tables and the store name the model; default ``"<Class> <fingerprint[:12]>"``.

    Returns
    -------
    LoadedModel

    Raises
    ------
    UsageError
        Not a transformers model, a model in training mode or not in float32, or a missing or
        slow tokenizer (the message names the fix).
    ModelSpecError
        A tokenizer whose vocabulary does not fit the model's embedding table.
    ModelLoadError
        An encoder-decoder model, or one that returns no hidden states.
    """
    from transformers import PreTrainedModel

    if not isinstance(model, PreTrainedModel):
        raise UsageError(f"expected a transformers PreTrainedModel, not {type(model).__name__}; "
                         "pass a model name, a saved folder, or (model, tokenizer) with a "
                         "transformers model")
    what = type(model).__name__
    if tokenizer is None or not getattr(tokenizer, "is_fast", False):
        got = "no tokenizer" if tokenizer is None else f"a slow {type(tokenizer).__name__}"
        raise UsageError(f"{what} needs its fast tokenizer (character offsets), got {got}: "
                         "pass AutoTokenizer.from_pretrained(..., use_fast=True) with it")
    if model.training:
        raise UsageError(f"{what} is in training mode, so dropout would make its hidden states "
                         "random: call model.eval() first")
    dtypes = sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters()})
    if dtypes != ["float32"]:
        raise UsageError(f"{what} holds {'/'.join(dtypes)} weights; hidden states are computed "
                         "in float32 (as load_model loads every model): pass model.float()")
    config = model.config
    kind = model_kind(config)
    label = name or what
    _check_vocabulary(label, tokenizer, model)
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer = copy.deepcopy(tokenizer)
        tokenizer.pad_token = tokenizer.eos_token
    device = next(model.parameters()).device
    hidden = _probe_hidden_states(label, model, tokenizer, device)
    fingerprint = memory_fingerprint(model, tokenizer)
    label = name or f"{what} {fingerprint[:12]}"
    return LoadedModel(
        spec=label, name=label, kind=kind, **_shape_facts(config, model, tokenizer, hidden),
        tokenizer=tokenizer, model=model, device=device, fingerprint=fingerprint,
        caveats=[], objective=training_objective(config, kind),
    )
