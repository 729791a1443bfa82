"""The loaded model record, the checks every loaded model passes, and its input embeddings.

:class:`LoadedModel` (model, tokenizer, fingerprint and reported facts), the shape facts and
vocabulary and hidden-state checks shared by :func:`lmgeometry.io.models.load_model` and
:func:`lmgeometry.io.memory_model.from_memory`, and :func:`input_embeddings`. Moved from
:mod:`lmgeometry.io.models` (issue 31).
"""

from __future__ import annotations

import importlib.metadata as metadata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedConfig, PreTrainedTokenizerFast

from lmgeometry.errors import ModelLoadError, ModelSpecError
from lmgeometry.io.model_facts import (
    _position_scheme,
    max_positions,
    normalisation,
    tied_embeddings,
)

__all__ = [
    "input_embeddings",
    "LoadedModel",
]


def _shape_facts(config: PreTrainedConfig, model: torch.nn.Module, tokenizer: Any,
                 hidden: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    """The :class:`LoadedModel` fields read from the model, its tokenizer and one forward
    pass's ``hidden`` states: layers, width, positions, special tokens, BOS template."""
    bos = tokenizer.bos_token_id
    first = tokenizer("x")["input_ids"]
    return {
        "n_layers": len(hidden) - 1,
        "hidden_size": int(hidden[0].shape[-1]),
        "position_scheme": _position_scheme(config, model),
        "max_positions": max_positions(config, model, tokenizer),
        "special_tokens": {k: v for k, v in tokenizer.special_tokens_map.items()
                           if isinstance(v, str)},
        "prepends_bos": bool(bos is not None and first and first[0] == bos),
    }


def _check_vocabulary(spec: str, tokenizer: Any, model: torch.nn.Module) -> None:
    """Refuse a tokenizer whose ids do not fit the model's input embedding table.

    A tokenizer larger than the table produces ids past its end (an ``IndexError`` deep in
    torch); one far smaller (under half the rows) is another model's tokenizer, or the
    placeholder transformers builds for a folder without tokenizer files, which turns almost
    every word into the unknown token: silently wrong vectors.
    """
    try:
        rows = getattr(model.get_input_embeddings(), "num_embeddings", None)
    except (AttributeError, NotImplementedError):
        rows = None
    if rows is None:
        return
    size = len(tokenizer)
    fix = ("Save the model's own tokenizer next to it (tokenizer.save_pretrained(folder)) or "
           "load the folder that holds both.")
    if size > rows:
        raise ModelSpecError(
            f"{spec!r}: the tokenizer has {size:,} tokens but the model's embedding table only "
            f"{rows:,} rows, so token ids from {rows:,} up have no embedding: the tokenizer "
            f"belongs to another model. {fix}"
        )
    if size < rows // 2:
        raise ModelSpecError(
            f"{spec!r}: the tokenizer has only {size:,} tokens for an embedding table of "
            f"{rows:,} rows, so most words would become unknown tokens: the tokenizer files are "
            f"missing or belong to another model. {fix}"
        )


def _probe_hidden_states(spec: str, model: torch.nn.Module, tokenizer: Any,
                         target: torch.device) -> tuple[torch.Tensor, ...]:
    """The hidden states of one short input; refuses a model that returns none."""
    import torch

    probe = tokenizer("Hello world", return_tensors="pt").to(target)
    try:
        with torch.inference_mode():
            output = model(input_ids=probe["input_ids"], attention_mask=probe["attention_mask"],
                           output_hidden_states=True)
    except (TypeError, ValueError, RuntimeError, IndexError) as exc:
        raise ModelLoadError(
            f"{spec!r} ({type(model).__name__}) failed a forward pass with "
            f"output_hidden_states=True: {exc}"
        ) from exc
    hidden = getattr(output, "hidden_states", None)
    if not hidden:
        raise ModelLoadError(
            f"{spec!r} ({type(model).__name__}) returns no hidden_states; lmgeometry needs "
            "models that return the hidden states of every layer."
        )
    return hidden


@dataclass
class LoadedModel:
    """A model ready for hidden-state extraction, with the facts a chapter reports about it.

    Attributes
    ----------
    spec : str
        What the caller asked for (``"smollm2-135m"``, ``"gpt2"``, a folder).
    name : str
        Human-readable resolved name.
    kind : str
        ``"encoder"`` or ``"decoder"``.
    n_layers : int
        Transformer blocks; ``hidden_states`` has ``n_layers + 1`` entries (0 = embeddings).
    hidden_size : int
        Width of the hidden states.
    position_scheme : str
        How positions enter: ``"learned absolute"``, ``"rotary"``, ``"learned absolute +
        relative bias"`` (MPNet), ...
    max_positions : int
        Longest input (tokens) the positions cover.
    special_tokens : dict[str, str]
        The tokenizer's special tokens by role.
    prepends_bos : bool
        Whether ``tokenizer("x")`` starts with the BOS token.
    tokenizer : PreTrainedTokenizerFast
        Fast tokenizer (offset mappings available).
    model : torch.nn.Module
        Eval mode, float32, on ``device``.
    device : torch.device
    fingerprint : str
        sha256 over the resolved config, weight and tokenizer files.
    caveats : list[str]
        What a reader must know when results from this model are reported.
    objective : str
        How the checkpoint was trained: the offline aliases' documented objectives, else
        :func:`training_objective` of the architecture (fine-tuning, if any, unknown).
    """

    spec: str
    name: str
    kind: str
    n_layers: int
    hidden_size: int
    position_scheme: str
    max_positions: int
    special_tokens: dict[str, str]
    prepends_bos: bool
    tokenizer: PreTrainedTokenizerFast
    model: torch.nn.Module
    device: torch.device
    fingerprint: str
    caveats: list[str]
    objective: str = ""

    def facts(self) -> dict[str, Any]:
        """JSON-serialisable facts about the model (no tokenizer or model objects).

        Returns
        -------
        dict
            The dataclass fields except ``tokenizer`` and ``model``, with ``device`` as a string,
            plus ``model_type``, ``architecture``, ``vocab_size``, ``n_parameters``, ``dtype``,
            the ``transformers`` version, ``objective``, ``normalisation``
            (:func:`normalisation`) and ``tied_embeddings`` (:func:`tied_embeddings`).
        """
        config = getattr(self.model, "config", None)
        return {
            "spec": self.spec,
            "name": self.name,
            "kind": self.kind,
            "n_layers": self.n_layers,
            "hidden_size": self.hidden_size,
            "position_scheme": self.position_scheme,
            "max_positions": self.max_positions,
            "special_tokens": dict(self.special_tokens),
            "prepends_bos": self.prepends_bos,
            "device": str(self.device),
            "fingerprint": self.fingerprint,
            "caveats": list(self.caveats),
            "model_type": getattr(config, "model_type", None),
            "architecture": type(self.model).__name__,
            "vocab_size": len(self.tokenizer),
            "n_parameters": int(sum(p.numel() for p in self.model.parameters())),
            "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
            "transformers": metadata.version("transformers"),
            "objective": self.objective,
            "normalisation": normalisation(self.model),
            "tied_embeddings": tied_embeddings(self.model),
        }


def input_embeddings(loaded: LoadedModel) -> np.ndarray:
    """The input embedding matrix W (vocab x width) of a loaded model, as float32 numpy.

    Reads ``loaded.model.get_input_embeddings().weight`` (the matrix Biš et al. analyse; their
    code uses ``model.get_input_embeddings().weight``). Notes:

    * W is the raw parameter. Some models rescale it in the forward pass -- Gemma multiplies
      the looked-up rows by sqrt(width) (``embed_scale``), T5-style and others do not -- so the
      layer-0 hidden states can differ from W by a constant factor. Norms scale with it; I(W)
      does not stay the same under scaling (Z(c) depends on the scale), while cosines and
      IsoScore do.
    * With tied weights (GPT-2, BERT, Gemma, SmolLM2, ...) W is also the output (softmax)
      matrix, the setting of the paper's "common enemies" argument; untied models have a
      separate ``get_output_embeddings()``.
    * The number of rows can exceed the tokenizer's vocabulary (padding to a multiple of 64/128);
      such never-used rows are included, as in the paper.
    * If the weight is already float32 on the CPU the result is a read-only view of the
      parameter (no copy: 671 MB for Gemma's 262,144 x 640); otherwise a converted copy.

    Parameters
    ----------
    loaded : LoadedModel
        From :func:`lmgeometry.io.models.load_model` (only ``loaded.model`` is used).

    Returns
    -------
    numpy.ndarray, shape (vocab, width), float32
    """
    import torch

    weight = loaded.model.get_input_embeddings().weight.detach()
    if weight.device.type != "cpu" or weight.dtype != torch.float32:
        return weight.to(device="cpu", dtype=torch.float32).numpy()
    arr = weight.numpy()
    arr.flags.writeable = False
    return arr
