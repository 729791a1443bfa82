"""Untrained twins of models: the same architecture and tokenizer, random weights.

A claim about what training does to an embedding space needs a null: the same rule run on a
model that was never trained. ``untrained:<spec>`` (any spec :func:`lmgeometry.load_model`
takes: ``untrained:minilm-l6``, ``untrained:gpt2``, ``untrained:./my-model``) names that model:
the base model's config and tokenizer, with weights drawn by transformers' own initialisation
(``from_config``, the scheme the architecture is pretrained from) under a fixed torch seed.

The weights are written once into the cache (:func:`untrained_folder`), as a model folder with a
marker recording the base model, its fingerprint, the seed, the versions and the sha256 of every
file written; the folder is then an ordinary local model (fingerprinted by its files, so the
activation store keys it by content). The same base files, seed and torch build give the same
bytes. A folder is built in a temporary folder and renamed into place under a lock, so an
interrupted build never leaves a folder that looks complete.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

from lmgeometry.errors import ModelSpecError
from lmgeometry.io import checksums
from lmgeometry.io.built import build_once
from lmgeometry.io.model_facts import model_kind
from lmgeometry.io.paths import cache_dir

__all__ = ["UNTRAINED_PREFIX", "UNTRAINED_SEED", "base_spec", "is_untrained", "untrained_folder"]

#: The prefix that turns a model spec into its untrained twin.
UNTRAINED_PREFIX = "untrained:"

#: The torch seed the untrained weights are drawn with.
UNTRAINED_SEED = 0

_MARKER = "lmgeometry-untrained.json"


def is_untrained(spec: str) -> bool:
    """Whether ``spec`` names an untrained twin (``untrained:<spec>``).

    Examples
    --------
    >>> is_untrained("untrained:minilm-l6"), is_untrained("minilm-l6")
    (True, False)
    """
    return isinstance(spec, str) and spec.startswith(UNTRAINED_PREFIX)


def base_spec(spec: str) -> str:
    """The trained model an ``untrained:<spec>`` twin copies.

    Examples
    --------
    >>> base_spec("untrained:smollm2-135m")
    'smollm2-135m'
    """
    base = spec[len(UNTRAINED_PREFIX):] if is_untrained(spec) else ""
    if not base or is_untrained(base):
        raise ModelSpecError(
            f"{spec!r} is not an untrained twin: write 'untrained:' once, followed by a model "
            "spec (an offline alias, a hub id or a model folder), e.g. 'untrained:minilm-l6'")
    return base


def _slug(spec: str) -> str:
    """A readable folder name for a base spec: its last path part (a folder's name, a hub id's
    name), so that one model saved in two places, the same files, gets one twin: the folder is
    keyed by the base's fingerprint, not its path.

    Examples
    --------
    >>> _slug("/tmp/run 1/gpt2-arch/"), _slug("openai-community/gpt2"), _slug("minilm-l6")
    ('gpt2-arch', 'gpt2', 'minilm-l6')
    """
    last = spec.strip("/").rsplit("/", 1)[-1]
    kept = "".join(c if c.isalnum() or c in "-_." else "-" for c in last)
    return kept[-60:].strip("-.") or "model"


def _complete(folder: Path) -> bool:
    """A built folder whose files are as its marker recorded them."""
    try:
        recorded = json.loads((folder / _MARKER).read_text()).get("outputs")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(recorded, dict) and bool(recorded) and not checksums.changed_files(
        folder, recorded)


def untrained_folder(location: str, options: dict[str, Any], config: Any, base: str,
                     base_fingerprint: str, seed: int = UNTRAINED_SEED) -> Path:
    """The cached folder of ``base``'s untrained twin, built on first use.

    Parameters
    ----------
    location, options, config
        Where ``from_pretrained`` reads the base model's tokenizer, its keyword options, and its
        config (:func:`lmgeometry.io.model_source._open`); the base weights are never read.
    base : str
        The base spec (names the folder and the marker).
    base_fingerprint : str
        The base model's fingerprint: the folder is keyed by it, so a changed base model gets a
        new twin.
    seed : int
        Torch seed of the initialisation.

    Returns
    -------
    Path
        A model folder (``config.json``, ``model.safetensors``, tokenizer files, the marker).
    """
    root = cache_dir("models", "untrained")
    final = root / f"{_slug(base)}-{base_fingerprint[:16]}-seed{seed}"
    if _complete(final):
        return final
    marker = {"base": base, "base_fingerprint": base_fingerprint, "seed": seed,
              "initialisation": "transformers from_config (the architecture's own "
                                "_init_weights) under torch.manual_seed(seed)",
              "torch": metadata.version("torch"),
              "transformers": metadata.version("transformers")}
    build_once(final, lambda tmp: _build(location, options, config, seed, tmp), marker,
               marker_name=_MARKER, complete=_complete, tmp_prefix=f".tmp-{final.name}-")
    return final


def _build(location: str, options: dict[str, Any], config: Any, seed: int, out: Path) -> None:
    """Random weights of ``config``'s architecture and the base tokenizer, saved into ``out``."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    auto = AutoModelForCausalLM if model_kind(config) == "decoder" else AutoModel
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = auto.from_config(config, dtype=torch.float32)
    finally:
        torch.random.set_rng_state(state)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # its "Writing model shards" bar would land in notebooks
    try:
        model.save_pretrained(out)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    AutoTokenizer.from_pretrained(location, **options).save_pretrained(out)
