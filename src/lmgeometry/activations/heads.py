"""Hidden states at the token a classification head reads, in every layer, cached.

A sequence-classification model reads one position of its last layer: an encoder's first
token (``[CLS]``, ``<s>``) and a decoder's last token
(:func:`lmgeometry.io.models.head_token`). Seed 003 studies exactly these vectors (GPT-2's
last token, BERT's ``[CLS]``), in every layer. The word store (:mod:`.store`) holds words, not
special tokens, and pools a word's pieces, so it cannot give them; :func:`head_states` does,
for one list of texts, with any model :func:`lmgeometry.io.models.load_model` accepts
(pretrained, or a fine-tuned folder of :mod:`lmgeometry.training.finetune`, whose base model it
loads).

Each text is tokenised with the model's own template and truncated at ``max_length`` tokens
(the fine-tuning run's, so that the last layer gives what the head read in training), the
texts are batched by length with padding on the right (:func:`.extract.plan_batches`), and
the model runs in float32 under ``torch.inference_mode``, without a language-model head.

Cache: one folder per (model fingerprint, texts, ``max_length``) under
``paths.cache_dir("heads")``, holding ``states.npy`` (layers x texts x width, float32) and
``meta.json``; written into a temporary sibling and renamed into place when complete
(:func:`lmgeometry.io.paths.building`), so a rerun reads it back without loading the model.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lmgeometry import sources
from lmgeometry.activations.extract import (
    _base_module,
    _forward_hidden,
    default_batch_tokens,
    plan_batches,
    releasing_memory,
)
from lmgeometry.errors import StoreError, UsageError
from lmgeometry.io import models, paths
from lmgeometry.io.files import to_jsonable

if TYPE_CHECKING:
    from lmgeometry.io.models import LoadedModel

__all__ = ["FORMAT_VERSION", "head_states", "HeadStates", "states_key"]

#: Version of the folder layout; part of the key.
FORMAT_VERSION = 1

_STATES = "states.npy"


@dataclass
class HeadStates:
    """A complete cached folder of :func:`head_states`, opened read-only.

    Attributes
    ----------
    path : pathlib.Path
    meta : dict
        ``meta.json``: the model's facts, ``kind``, ``position`` ("first" or "last"),
        ``n_texts``, ``max_length``, the key.
    label : str
        The model as the caller named it.
    """

    path: Path
    label: str = ""
    meta: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            self.meta = json.loads((self.path / "meta.json").read_text())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.path} holds no readable meta.json: delete the folder to "
                             "rebuild it", path=self.path, file="meta.json") from exc
        self.label = self.label or self.meta["model"]["spec"]

    @cached_property
    def states(self) -> np.ndarray:
        """Memory map of shape (layers, texts, width), float32."""
        states = np.load(self.path / _STATES, mmap_mode="r")
        expected = (self.meta["n_layers"], self.meta["n_texts"], self.meta["width"])
        if states.shape != expected:
            raise StoreError(f"{self.path / _STATES} has shape {states.shape}, meta.json says "
                             f"{expected}: delete the folder to rebuild it", path=self.path,
                             file=_STATES)
        return states

    @property
    def n_layers(self) -> int:
        """Hidden states per text (transformer blocks + 1)."""
        return int(self.meta["n_layers"])

    @property
    def kind(self) -> str:
        """``"encoder"`` or ``"decoder"``."""
        return str(self.meta["kind"])

    def layer(self, i: int) -> np.ndarray:
        """Layer ``i`` (0 = embeddings) as a (texts, width) float32 array in memory."""
        return np.array(self.states[i], dtype=np.float32)


def states_key(fingerprint: str, texts: Sequence[str], max_length: int | None) -> str:
    """sha256 naming one folder: layout version, model fingerprint, texts, ``max_length`` and
    the code that computes the states (:func:`lmgeometry.sources.key_files` of this module)."""
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()
    code = sources.code_digest(sources.key_files(__name__))
    payload = {"format": FORMAT_VERSION, "model": fingerprint, "texts": digest,
               "n": len(texts), "max_length": max_length, "code": code}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def head_states(model: str | LoadedModel, texts: Sequence[str], *,
                max_length: int | None = None, root: str | Path | None = None,
                batch_tokens: int | None = None, label: str | None = None,
                progress: bool = True) -> HeadStates:
    """Every layer's hidden state at the head's token of each text, cached.

    Parameters
    ----------
    model : str or LoadedModel
        A spec for :func:`lmgeometry.io.models.load_model` (an alias, hub id or folder, a
        fine-tuned checkpoint included) or a loaded model.
    texts : sequence of str
    max_length : int, optional
        Tokens kept per text (truncated at the end); default the model's window.
    root : str or Path, optional
        Cache root; default ``paths.cache_dir("heads")``.
    batch_tokens : int, optional
        Padded-token budget per forward pass (not part of the key).
    label : str, optional
        The model's name in tables (default the spec).
    progress : bool
        A progress bar on stderr.

    Returns
    -------
    HeadStates
        ``states[layer, text]`` is the hidden state at the text's first token (encoders) or
        last token (decoders).
    """
    texts = [str(t) for t in texts]
    if not texts or not all(t.strip() for t in texts):
        raise UsageError("head_states needs at least one text, and no empty text")
    if max_length is not None and max_length < 2:
        raise UsageError(f"max_length must be at least 2 tokens, not {max_length}")
    spec = model if isinstance(model, str) else model.spec
    fingerprint = models.resolve_fingerprint(model) if isinstance(model, str) \
        else model.fingerprint
    key = states_key(fingerprint, texts, max_length)
    base = paths.writable_folder(root if root is not None else paths.cache_dir("heads"),
                                 "the head-states root")
    name = re.sub(r"[^A-Za-z0-9_.]+", "-", Path(spec).name).strip("-.")[:40] or "model"
    final = base / f"{name}-{key[:20]}"
    if not (final / "meta.json").is_file():
        loaded = models.load_model(model) if isinstance(model, str) else model
        with paths.building(final) as tmp:
            _write(loaded, texts, max_length, tmp, batch_tokens=batch_tokens,
                   progress=progress, key=key)
    return HeadStates(final, label=label or spec)


def _write(loaded: LoadedModel, texts: list[str], max_length: int | None, out: Path, *,
           batch_tokens: int | None, progress: bool, key: str) -> None:
    """Run the model over the texts and write ``states.npy`` and ``meta.json`` into ``out``."""
    import torch
    from tqdm.std import tqdm

    position = models.head_token(loaded.kind)
    window = loaded.max_positions or max_length or 512
    limit = min(max_length, window) if max_length else window
    ids = loaded.tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
    lengths = np.array([len(x) for x in ids])
    pad = loaded.tokenizer.pad_token_id or 0
    shape = (loaded.n_layers + 1, len(texts), loaded.hidden_size)
    states = np.lib.format.open_memmap(out / _STATES, mode="w+", dtype=np.float32, shape=shape)
    net = _base_module(loaded)
    budget = batch_tokens or default_batch_tokens(loaded.device)
    start = time.perf_counter()
    with torch.inference_mode(), tqdm(total=len(texts), unit="text", disable=not progress,
                                      desc=f"head states {loaded.name}", mininterval=1.0) as bar:
        for index in releasing_memory(plan_batches(lengths, budget)):
            width = int(lengths[index].max())
            batch = torch.full((len(index), width), pad, dtype=torch.long)
            mask = torch.zeros((len(index), width), dtype=torch.long)
            for row, i in enumerate(index):
                batch[row, :lengths[i]] = torch.as_tensor(ids[i])
                mask[row, :lengths[i]] = 1
            hidden = _forward_hidden(loaded, net, batch.to(loaded.device),
                                     mask.to(loaded.device))
            rows = torch.arange(len(index))
            where = torch.zeros(len(index), dtype=torch.long) if position == "first" \
                else mask.sum(dim=1) - 1
            for layer, h in enumerate(hidden):
                states[layer, index] = h[rows, where].float().cpu().numpy()
            bar.update(len(index))
    states.flush()
    del states
    meta = {"format": FORMAT_VERSION, "key": key, "model": loaded.facts(), "kind": loaded.kind,
            "position": position, "n_layers": shape[0], "n_texts": shape[1], "width": shape[2],
            "max_length": max_length, "truncated": int((lengths >= limit).sum()),
            "seconds": round(time.perf_counter() - start, 2),
            "code": sources.key_files(__name__)}
    (out / "meta.json").write_text(json.dumps(to_jsonable(meta), indent=1) + "\n")
