"""Token-level hidden states, attention to the first position and LM loss, under interventions.

The attention-sink account of a decoder's first-token cluster (Xiao et al. 2024; Sun et al.
2024; Gu et al. 2025) is a causal claim: a few hidden dimensions take huge values at the
sequence's first token, every later query attends to that token, and the first token's vector
splits off from the rest. :func:`run_tokens` runs one model over a list of sentences, token by
token (no pooling into words), either intact or under one of five interventions made with
forward hooks and attention masks (:mod:`lmgeometry.activations.edits`, the same edits
:func:`lmgeometry.hidden_states` makes in memory), or with a later token cut off from its
context (a control, not an intervention on the sink):

``"massive"``, ``"massive_zero"``, ``"massive_mean"``
    At the output of every block listed in ``dims`` (layer -> hidden dimensions), the first
    position's values in those dimensions are replaced: by their mean over the sentence's
    other positions (``"massive"``: the massive values are removed, the dimensions made
    ordinary), by zero (``"massive_zero"``, Sun et al. 2024's "set to zero"), or by the
    ``values`` given (``"massive_mean"``: the caller passes each dimension's mean value *at the
    first position over many sequences*, Sun et al. 2024's "set to mean", which keeps the
    massive values but makes them the same in every sentence). The chapter passes the
    dimensions that carry massive activations at the first position in the intact run
    (:func:`lmgeometry.measures.massive.massive_dimensions`), from the layer where they appear.
``"attention"``
    Every query after the first gets no attention to the first position: a 4-D additive
    attention mask removes key 0 for queries 1..n-1, so softmax renormalises over the rest
    (position 0 still attends to itself). Decoders and encoders alike.
``"sink"``
    The sink token toggled: a decoder whose tokenizer prepends a BOS token runs without it; one
    that prepends nothing runs with its BOS token prepended (the dedicated sink token of
    Xiao et al. 2024's streaming setup).
``"isolated"``
    The queries at ``positions`` (e.g. each sentence's fifth token) attend to no key but
    themselves, in every layer: a later token that sees no context, as the first token of a
    causal model sees none. The other tokens still attend to it. With rotary positions (no
    position embedding added to the vectors) and no BOS token, such a token is computed exactly
    as the same token would be at position 0, so whether it joins the first tokens asks
    whether their cluster is one of first *positions* or of tokens without context.

Recorded per run: every hidden state of every token (layers x tokens x width, float32: the
massive activations exceed float16's range), each token's sentence, position and id; per
layer and sentence, the attention mass that queries after the first put on the first position
(mean over heads and queries, from the eager attention weights); for decoders, each sentence's
summed negative log-likelihood of its text tokens after the first (the first has no context
without a BOS token, as in :mod:`.lm_loss`).

Cache: one folder per (model fingerprint, sentences, intervention, dimensions, values, code) under
``paths.cache_dir("interventions")``, written into a temporary sibling and renamed into place
when complete (:func:`lmgeometry.io.paths.building`), its files' sha256 in ``meta.json`` and
checked on every open: a damaged folder is set aside and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from lmgeometry import sources
from lmgeometry.activations.edits import Edit, edit_hooks, key_mask
from lmgeometry.activations.sublayers import blocks
from lmgeometry.errors import StoreError, UsageError
from lmgeometry.io import checksums, models, paths
from lmgeometry.io.files import to_jsonable

__all__ = ["FORMAT_VERSION", "INTERVENTIONS", "run_key", "run_tokens", "TokenRun"]

logger = logging.getLogger(__name__)

#: Version of the folder layout; part of the key.
FORMAT_VERSION = 1

#: The interventions that replace the first position's values in ``dims``.
_MASSIVE = ("massive", "massive_zero", "massive_mean")

#: The interventions :func:`run_tokens` makes, with the words the book uses for them.
INTERVENTIONS = {
    "intact": "intact",
    "massive": "massive activations at the first position set to the sentence's mean",
    "massive_zero": "massive activations at the first position set to zero",
    "massive_mean": "massive activations at the first position set to their mean there over "
                    "the corpus",
    "attention": "no attention to the first position",
    "sink": "sink token toggled",
    "isolated": "a later token cut off from its context",
}

_ARRAYS = ("states", "sentence", "position", "token_id", "attention", "nll", "targets")

#: Sentences per forward pass (short sentences: a few thousand padded tokens).
_BATCH = 16


@dataclass
class TokenRun:
    """A complete cached folder of :func:`run_tokens`, opened read-only and checked.

    Attributes
    ----------
    path : pathlib.Path
    meta : dict
        ``meta.json``: model facts, ``intervention``, ``dims``, ``values``, ``positions``,
        ``prepend_bos``, ``n_layers``, ``n_tokens``, ``width``, ``vocab`` (token id ->
        string), ``files`` (name -> sha256), the key.
    """

    path: Path
    meta: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            self.meta = json.loads((self.path / "meta.json").read_text())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.path} holds no readable meta.json: delete the folder to "
                             "rebuild it", path=self.path, file="meta.json") from exc
        damaged = checksums.changed_files(self.path, self.meta.get("files", {}))
        if damaged or set(self.meta.get("files", {})) != {f"{a}.npy" for a in _ARRAYS}:
            raise StoreError(f"{self.path}: {', '.join(damaged) or 'its file list'} differ(s) "
                             "from what was written: delete the folder to rebuild it",
                             path=self.path, file=(damaged or ["meta.json"])[0])

    def _load(self, name: str) -> np.ndarray:
        return np.load(self.path / f"{name}.npy", mmap_mode="r")

    @cached_property
    def states(self) -> np.ndarray:
        """Memory map of shape (layers + 1, tokens, width), float32."""
        return self._load("states")

    @cached_property
    def tokens(self) -> Any:
        """One row per token: ``sentence``, ``position`` (0 = the sequence's first token),
        ``token_id``, ``token`` (its string)."""
        import pandas as pd

        vocab = {int(k): v for k, v in self.meta["vocab"].items()}
        ids = np.asarray(self._load("token_id"))
        return pd.DataFrame({"sentence": np.asarray(self._load("sentence")),
                             "position": np.asarray(self._load("position")),
                             "token_id": ids, "token": [vocab[int(i)] for i in ids]})

    @property
    def attention(self) -> np.ndarray:
        """(layers, sentences): mean attention of the queries after the first to position 0."""
        return np.asarray(self._load("attention"))

    @property
    def nll(self) -> np.ndarray:
        """(sentences,): summed loss (nats) of the text tokens after the first; NaN for an
        encoder."""
        return np.asarray(self._load("nll"))

    @property
    def targets(self) -> np.ndarray:
        """(sentences,): the tokens each ``nll`` sums over."""
        return np.asarray(self._load("targets"))

    @property
    def n_layers(self) -> int:
        """Hidden states per token (blocks + 1)."""
        return int(self.meta["n_layers"])

    @property
    def kind(self) -> str:
        """``"encoder"`` or ``"decoder"``."""
        return str(self.meta["model"]["kind"])


def run_key(fingerprint: str, texts: Sequence[str], intervention: str,
            dims: Mapping[int, Sequence[int]],
            values: Mapping[int, Sequence[float]] | None = None,
            positions: Sequence[int] = ()) -> str:
    """sha256 naming one folder: layout version, model fingerprint, sentences, intervention,
    dimensions, the values set (``"massive_mean"``; float32, exactly), the positions cut off
    (``"isolated"``) and the code that runs them (:func:`lmgeometry.sources.key_files`)."""
    payload = {"format": FORMAT_VERSION, "model": fingerprint, "n": len(texts),
               "texts": hashlib.sha256("\0".join(texts).encode()).hexdigest(),
               "intervention": intervention,
               "dims": {str(k): [int(d) for d in v] for k, v in sorted(dims.items())},
               "code": sources.code_digest(sources.key_files(__name__))}
    if values:
        payload["values"] = {str(k): np.asarray(v, dtype=np.float32).tobytes().hex()
                             for k, v in sorted(values.items())}
    if positions:
        payload["positions"] = sorted(int(p) for p in positions)
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def run_tokens(spec: str, texts: Sequence[str], intervention: str = "intact", *,
               dims: Mapping[int, Sequence[int]] | None = None,
               values: Mapping[int, Sequence[float]] | None = None,
               positions: Sequence[int] | None = None,
               root: str | Path | None = None) -> TokenRun:
    """Every token's hidden states, its attention to position 0 and the LM loss, cached.

    Parameters
    ----------
    spec : str
        A model (:func:`lmgeometry.io.models.load_model`'s specs).
    texts : sequence of str
        Sentences, each run alone (padded in batches, masked).
    intervention : {"intact", "massive", "massive_zero", "massive_mean", "attention", "sink", \
"isolated"}
        See the module docstring; all but ``"intact"`` and ``"attention"`` need a decoder.
    dims : mapping of int -> sequence of int, optional
        For the ``"massive*"`` interventions: layer (1 = the first block's output) -> the
        dimensions replaced there (their order is the order of ``values``).
    values : mapping of int -> sequence of float, optional
        For ``"massive_mean"`` only: layer -> the value each of that layer's ``dims`` is set
        to, one per dimension.
    positions : sequence of int, optional
        For ``"isolated"`` only: the token positions (0 = the sequence's first token, a BOS
        token included) whose queries see no key but themselves; at least one, none below 1.
    root : str or Path, optional
        Cache root; default ``paths.cache_dir("interventions")``.

    Returns
    -------
    TokenRun

    Raises
    ------
    UsageError
        An unknown intervention, one that needs a decoder on an encoder, a ``"massive*"``
        intervention without dimensions, ``"massive_mean"`` without one value per dimension
        (or ``values`` with another intervention), ``"isolated"`` without positions (or
        positions with another intervention), no text, or a text longer than the model's
        window.
    """
    texts = [str(t) for t in texts]
    if intervention not in INTERVENTIONS:
        raise UsageError(f"unknown intervention {intervention!r}: choose one of "
                         f"{', '.join(INTERVENTIONS)}")
    if not texts or not all(t.strip() for t in texts):
        raise UsageError("run_tokens needs at least one sentence, and no empty one")
    dims = {int(k): [int(d) for d in v] for k, v in (dims or {}).items() if len(v)}
    values = {int(k): [float(x) for x in v] for k, v in (values or {}).items()}
    if intervention in _MASSIVE and not dims:
        raise UsageError(f"the {intervention!r} intervention needs dims: layer -> dimensions "
                         "to replace")
    if (intervention == "massive_mean") != bool(values):
        raise UsageError("values (layer -> the value of each dimension) go with the "
                         "'massive_mean' intervention, and it needs them")
    if values and ({k: len(v) for k, v in values.items()}
                   != {k: len(v) for k, v in dims.items()}
                   or not np.isfinite([x for v in values.values() for x in v]).all()):
        raise UsageError("values must give one finite number per dimension of dims, for the "
                         "same layers")
    positions = sorted({int(p) for p in positions or ()})
    if (intervention == "isolated") != bool(positions) or min(positions, default=1) < 1:
        raise UsageError("positions (the tokens cut off from their context, 1 or more) go "
                         "with the 'isolated' intervention, and it needs them")
    key = run_key(models.resolve_fingerprint(spec), texts, intervention, dims, values,
                  positions)
    base = paths.writable_folder(root if root is not None else paths.cache_dir("interventions"),
                                 "the interventions root")
    name = re.sub(r"[^A-Za-z0-9_.]+", "-", Path(spec).name).strip("-.")[:40] or "model"
    final = base / f"{name}-{intervention}-{key[:20]}"
    if (final / "meta.json").is_file():
        try:
            return TokenRun(final)
        except StoreError as exc:
            aside = final.with_name(f".set-aside-{final.name}-{os.getpid()}")
            final.rename(aside)
            logger.warning("%s; set aside as %s and rebuilt", exc, aside.name)
    with paths.building(final) as tmp:
        _write(spec, texts, intervention, dims, values, positions, tmp, key)
    return TokenRun(final)


def _load(spec: str) -> tuple[Any, Any, str]:
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    location, options, kind = models.pretrained_source(spec)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tok = AutoTokenizer.from_pretrained(location, **options)
    cls = AutoModelForCausalLM if kind == "decoder" else AutoModel
    net = cls.from_pretrained(location, dtype=torch.float32, attn_implementation="eager",
                              **options).eval()
    return tok, net, kind


def _encode(tok: Any, texts: list[str], kind: str, intervention: str
            ) -> tuple[list[list[int]], list[int], bool]:
    """Token ids per sentence, the number of leading special tokens, and whether a BOS leads."""
    if kind == "encoder":
        ids = [tok(t)["input_ids"] for t in texts]
        return ids, [1] * len(ids), False
    bos = tok.bos_token_id
    first = tok("x")["input_ids"]
    prepends = bool(bos is not None and first and first[0] == bos)
    lead = not prepends if intervention == "sink" else prepends
    if lead and bos is None:
        raise UsageError("the sink intervention needs a BOS token; this tokenizer has none")
    body = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    return [([bos] if lead else []) + b for b in body], [int(lead)] * len(body), lead


def _edits(intervention: str, dims: dict[int, list[int]], values: dict[int, list[float]]
           ) -> list[Edit]:
    """The first position's edits of a ``"massive*"`` intervention (none for the others)."""
    if intervention not in _MASSIVE:
        return []
    return [Edit(layer, d, (0,), "others_mean" if intervention == "massive" else
                 "zero" if intervention == "massive_zero" else values[layer])
            for layer, d in dims.items()]


def _write(spec: str, texts: list[str], intervention: str, dims: dict[int, list[int]],
           values: dict[int, list[float]], positions: list[int], out: Path, key: str) -> None:
    """Run the model over the sentences and write the arrays and ``meta.json`` into ``out``."""
    import torch

    start = time.perf_counter()
    tok, net, kind = _load(spec)
    if kind != "decoder" and intervention not in ("intact", "attention"):
        raise UsageError(f"{spec} is an encoder: the {intervention!r} intervention needs a "
                         "decoder")
    ids, leads, lead_bos = _encode(tok, texts, kind, intervention)
    window = models.window(spec)
    if window and max(map(len, ids)) > window:
        raise UsageError(f"a sentence of {max(map(len, ids))} tokens exceeds {spec}'s window "
                         f"of {window}: shorten it")
    n_blocks = int(net.config.get_text_config().num_hidden_layers)
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    n_tokens, width = sum(map(len, ids)), int(net.config.get_text_config().hidden_size)
    states = np.lib.format.open_memmap(out / "states.npy", mode="w+", dtype=np.float32,
                                       shape=(n_blocks + 1, n_tokens, width))
    attention = np.zeros((n_blocks, len(ids)))
    nll, targets = np.full(len(ids), np.nan), np.zeros(len(ids), dtype=np.int64)
    row = 0
    found = blocks(net)  # the model's transformer blocks, hooked by the edits
    edits = _edits(intervention, dims, values)
    with torch.inference_mode():
        for begin in range(0, len(ids), _BATCH):
            batch = ids[begin:begin + _BATCH]
            lengths = torch.as_tensor([len(s) for s in batch])
            w = int(lengths.max())
            x = torch.full((len(batch), w), pad, dtype=torch.long)
            for r, s in enumerate(batch):
                x[r, :len(s)] = torch.as_tensor(s)
            mask = (key_mask(lengths, w, [0], kind == "decoder")
                    if intervention == "attention" else
                    key_mask(lengths, w, [], kind == "decoder", isolated=positions)
                    if intervention == "isolated" else
                    (torch.arange(w)[None, :] < lengths[:, None]).long())
            kwargs = {"use_cache": False} if kind == "decoder" else {}
            with edit_hooks(found, edits, lengths):
                res = net(input_ids=x, attention_mask=mask, output_hidden_states=True,
                          output_attentions=True, **kwargs)
            valid_q = (torch.arange(w)[None, :] < lengths[:, None]) & (torch.arange(w) >= 1)
            for layer, a in enumerate(res.attentions):
                mass = a[:, :, :, 0].mean(1)  # (batch, query)
                attention[layer, begin:begin + len(batch)] = (
                    (mass * valid_q).sum(1) / valid_q.sum(1).clamp(min=1)).numpy()
            for r, s in enumerate(batch):
                n = len(s)
                for layer, h in enumerate(res.hidden_states):
                    states[layer, row:row + n] = h[r, :n].float().numpy()
                row += n
            if kind == "decoder":
                logp = torch.log_softmax(res.logits.float(), -1)
                for r, s in enumerate(batch):
                    first = leads[begin + r] + 1  # the text's second token is the first target
                    target = torch.as_tensor(s[first:])
                    picked = logp[r, first - 1:len(s) - 1].gather(1, target[:, None])
                    nll[begin + r], targets[begin + r] = float(-picked.sum()), len(target)
    states.flush()
    del states
    sentence = np.repeat(np.arange(len(ids)), [len(s) for s in ids])
    position = np.concatenate([np.arange(len(s)) for s in ids])
    token_id = np.concatenate([np.asarray(s) for s in ids])
    for name, array in (("sentence", sentence), ("position", position),
                        ("token_id", token_id), ("attention", attention), ("nll", nll),
                        ("targets", targets)):
        np.save(out / f"{name}.npy", array)
    files = {f"{a}.npy": checksums.sha256_file(out / f"{a}.npy") for a in _ARRAYS}
    used = np.unique(token_id)
    meta = {"format": FORMAT_VERSION, "key": key, "model": {"spec": spec, "kind": kind},
            "intervention": intervention, "dims": {str(k): v for k, v in dims.items()},
            "values": {str(k): v for k, v in values.items()}, "positions": positions,
            "prepend_bos": lead_bos, "n_layers": n_blocks + 1, "n_tokens": n_tokens,
            "width": width, "n_sentences": len(ids),
            "vocab": dict(zip(map(str, used.tolist()), tok.convert_ids_to_tokens(used.tolist()),
                              strict=True)),
            "files": files, "seconds": round(time.perf_counter() - start, 2),
            "code": sources.key_files(__name__)}
    (out / "meta.json").write_text(json.dumps(to_jsonable(meta), indent=1) + "\n")
