"""Token-level hidden states in memory: the fast path behind :func:`lmgeometry.hidden_states`.

One forward pass per batch with ``output_hidden_states=True``, nothing written to disk, no
corpus and no word table unless words are asked for. :func:`token_states` returns a
:class:`HiddenStates`: every token's state at every layer (the special tokens [CLS], [SEP], BOS
included, flagged), as numpy or torch, and, only when asked,

* ``words=True``: word vectors pooled from the tokens' states (spaCy's tokenizer gives the
  words; :func:`lmgeometry.activations.align.align_sentence` assigns the pieces, as the store
  does, so the vectors equal the store's);
* ``pos=True``: the words' lemma, UPOS and fine tag (the spaCy parse);
* ``senses=True``: the words' WordNet 3.0 sense counts (the only option that needs the data
  files);
* ``attention=True``: every layer's attention weights per sentence (eager attention, switched
  on for the call and back);
* ``sublayers=True``: per block, the attention's and the MLP's outputs before they are added
  to the residual stream (``attn_out``, ``mlp_out``), the stream between them (``resid_mid``)
  and the block's output (``resid_post``), read by forward hooks (:mod:`.sublayers`).

Tokenisation is the store's (:func:`lmgeometry.activations.extract.encode`): the tokenizer's
own template (``prepend_bos`` as there), no truncation (a sentence longer than the model's
window raises, or is skipped with ``too_long="skip"``). Batches are planned by length
(:func:`lmgeometry.activations.extract.plan_batches`), padded on the right with an attention
mask, so a causal model's real tokens never see the padding.

The cached, word-level path (:func:`lmgeometry.activations.store.activations`, what the
chapters read) is unchanged; ``lmgeometry.hidden_states(..., cache=True)`` takes it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from lmgeometry.activations.align import align_sentence
from lmgeometry.activations.edits import Edit, edit_hooks, key_mask
from lmgeometry.activations.extract import (
    TOO_LONG,
    default_batch_tokens,
    plan_batches,
    special_template,
)
from lmgeometry.activations.sublayers import SUBLAYERS, blocks, capture_sublayers
from lmgeometry.errors import SentenceTooLongError, UsageError

if TYPE_CHECKING:
    import torch

__all__ = ["HiddenStates", "OUTPUTS", "Runner", "runner", "SUBLAYERS", "token_states", "tokenise"]

#: What the arrays of a :class:`HiddenStates` are.
OUTPUTS = ("numpy", "torch")

Output = Literal["numpy", "torch"]


@dataclass
class Runner:
    """What a forward pass needs of a model: its module, tokenizer and kind.

    Built from a :class:`~lmgeometry.io.loaded_model.LoadedModel` or from a transformers model
    and tokenizer in memory (:func:`runner`); no fingerprint, no copy, any dtype.
    """

    model: Any
    tokenizer: Any
    kind: str
    name: str
    max_positions: int

    @property
    def device(self) -> torch.device:
        """Where the model's weights are."""
        return next(self.model.parameters()).device


def runner(model: Any, tokenizer: Any = None, *, name: str | None = None) -> Runner:
    """A :class:`Runner` of a ``LoadedModel``, or of a transformers model with its tokenizer.

    Raises
    ------
    UsageError
        A tokenizer that is missing or not fast (its character offsets place the words).
    """
    from lmgeometry.io.loaded_model import LoadedModel

    if isinstance(model, LoadedModel):
        return Runner(model.model, model.tokenizer, model.kind, name or model.name,
                      int(model.max_positions))
    from lmgeometry.io.model_facts import max_positions, model_kind

    what = type(model).__name__
    if tokenizer is None or not getattr(tokenizer, "is_fast", False):
        got = "no tokenizer" if tokenizer is None else f"a slow {type(tokenizer).__name__}"
        raise UsageError(f"{what} needs its fast tokenizer (character offsets), got {got}: "
                         "pass AutoTokenizer.from_pretrained(..., use_fast=True) with it")
    config = model.config
    return Runner(model, tokenizer, model_kind(config), name or what,
                  int(max_positions(config, model, tokenizer)))


@dataclass
class HiddenStates:
    """Every token's hidden state at every layer, in memory (:func:`token_states`).

    Rows are tokens, sentence after sentence, each sentence's tokens in input order (special
    tokens included): row ``r`` of every array is row ``r`` of :attr:`tokens`.

    Attributes
    ----------
    model : str
        The model's name.
    kind : str
        ``"encoder"`` or ``"decoder"``.
    tokens : pandas.DataFrame
        One row per token: ``sentence_id``, ``position`` (0 = the input's first token),
        ``token_id``, ``token`` (its string), ``start``, ``end`` (character offsets in the
        sentence; 0, 0 for a special token), ``special`` (bool).
    states : numpy.ndarray or torch.Tensor
        ``(n_layers, n_tokens, width)``; layer 0 is the embedding output, layer ``i`` block
        ``i``'s output (the last after the model's final norm, where it has one).
    words : pandas.DataFrame or None
        With ``words=True``: one row per word (``sentence_id``, ``word_index``, ``text``,
        ``whitespace``, ``start``, ``end``, ``is_stop``, ``is_punct``; ``lemma``, ``upos``,
        ``tag`` with ``pos=True``; ``n_senses`` with ``senses=True``), and how its token
        pieces were pooled: ``n_pieces``, ``first_token`` (its first piece's row in
        :attr:`tokens`), ``shared_piece``, ``exact_pieces`` (as the store's word table).
    word_states : numpy.ndarray or torch.Tensor or None
        ``(n_layers, n_words, width)``, rows of :attr:`words`.
    attentions : list or None
        With ``attention=True``: per sentence, ``(blocks, heads, n, n)`` attention weights
        (query, key) over its ``n`` tokens.
    sublayers : dict or None
        With ``sublayers=True``: ``attn_out``, ``mlp_out``, ``resid_mid``, ``resid_post``,
        each ``(blocks, n_tokens, width)`` (:data:`lmgeometry.activations.sublayers.SUBLAYERS`).
    skipped : list of int
        Sentences left out as too long (``too_long="skip"``).
    """

    model: str
    kind: str
    tokens: pd.DataFrame
    states: Any
    words: pd.DataFrame | None = None
    word_states: Any = None
    attentions: list[Any] | None = None
    sublayers: dict[str, Any] | None = None
    skipped: list[int] = field(default_factory=list)

    @property
    def n_layers(self) -> int:
        """Layers (blocks + 1: layer 0 is the embedding output)."""
        return int(self.states.shape[0])

    @property
    def width(self) -> int:
        """The hidden size."""
        return int(self.states.shape[-1])

    def layer(self, i: int, rows: Any = None) -> Any:
        """Layer ``i``'s token states, ``(n_tokens, width)`` (``i = -1``: the last layer);
        ``rows`` (a boolean mask or indices over :attr:`tokens`) selects tokens."""
        out = self.states[i]
        return out if rows is None else out[_rows(rows, out)]

    def word_layer(self, i: int, rows: Any = None) -> Any:
        """Layer ``i``'s word vectors, ``(n_words, width)``; needs ``words=True``."""
        if self.word_states is None:
            raise UsageError("no word vectors: call hidden_states(..., words=True)")
        out = self.word_states[i]
        return out if rows is None else out[_rows(rows, out)]

    def sentence(self, i: int) -> Any:
        """Sentence ``i``'s token states, ``(n_layers, n_i, width)``."""
        rows = np.flatnonzero(self.tokens["sentence_id"].to_numpy() == i)
        if not len(rows):
            raise UsageError(f"no sentence {i} (sentences 0-{self.tokens['sentence_id'].max()}"
                             f"{', skipped: ' + str(self.skipped) if self.skipped else ''})")
        return self.states[:, rows[0]:rows[-1] + 1]

    def attention(self, i: int) -> Any:
        """Sentence ``i``'s attention weights, ``(blocks, heads, n, n)``; needs
        ``attention=True``."""
        if self.attentions is None:
            raise UsageError("no attention weights: call hidden_states(..., attention=True)")
        kept = list(dict.fromkeys(self.tokens["sentence_id"].tolist()))
        if i not in kept:
            raise UsageError(f"no sentence {i} among the {len(kept)} kept")
        return self.attentions[kept.index(i)]


def _rows(rows: Any, out: Any) -> Any:
    """Row selection for numpy or torch ``out``."""
    if type(out).__module__.startswith("torch"):
        import torch

        return torch.as_tensor(np.asarray(rows), device=out.device)
    return np.asarray(rows)


@dataclass(frozen=True)
class _Tokenised:
    """The tokens of the kept sentences: ids, offsets and special-token masks per sentence."""

    sentence_ids: list[int]
    ids: list[np.ndarray]
    offsets: list[np.ndarray]
    special: list[np.ndarray]
    skipped: list[int]

    def table(self, tokenizer: Any) -> pd.DataFrame:
        """The token table (:attr:`HiddenStates.tokens`)."""
        sizes = [len(i) for i in self.ids]
        ids = np.concatenate(self.ids) if self.ids else np.zeros(0, np.int64)
        offsets = np.concatenate(self.offsets) if self.ids else np.zeros((0, 2), np.int64)
        return pd.DataFrame({
            "sentence_id": np.repeat(np.asarray(self.sentence_ids, np.int32), sizes),
            "position": np.concatenate([np.arange(n, dtype=np.int32) for n in sizes]
                                       or [np.zeros(0, np.int32)]),
            "token_id": ids.astype(np.int64),
            "token": [str(t) for t in tokenizer.convert_ids_to_tokens(ids.tolist())],
            "start": offsets[:, 0].astype(np.int32),
            "end": offsets[:, 1].astype(np.int32),
            "special": np.concatenate(self.special) if self.ids else np.zeros(0, bool),
        })


def tokenise(run: Runner, texts: Sequence[str], *, prepend_bos: bool | None = None,
             too_long: str = "error") -> _Tokenised:
    """Token ids, offsets and special-token masks of ``texts``, as
    :func:`lmgeometry.activations.extract.encode` makes them (the same tokenizer call, BOS
    rule and special-token test), without a word table."""
    if too_long not in TOO_LONG:
        raise UsageError(f"too_long must be one of {TOO_LONG}, not {too_long!r}")
    tok = run.tokenizer
    add_special, bos_id = special_template(run, prepend_bos)  # type: ignore[arg-type]
    enc = tok(list(texts), add_special_tokens=add_special, return_offsets_mapping=True,
              return_special_tokens_mask=True, return_attention_mask=False,
              return_token_type_ids=False, truncation=False)
    special_ids = list(set(tok.all_special_ids))
    kept: list[int] = []
    out: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    too_long_ids: list[tuple[int, int]] = []
    for sid in range(len(texts)):
        ids = np.asarray(enc["input_ids"][sid], dtype=np.int64)
        offsets = np.asarray(enc["offset_mapping"][sid], dtype=np.int64).reshape(-1, 2)
        special = np.asarray(enc["special_tokens_mask"][sid], dtype=bool)
        special |= np.isin(ids, special_ids) & (offsets[:, 1] <= offsets[:, 0])
        if bos_id is not None:
            ids = np.concatenate([[bos_id], ids])
            offsets = np.concatenate([[[0, 0]], offsets])
            special = np.concatenate([[True], special])
        if len(ids) > run.max_positions:
            too_long_ids.append((sid, len(ids)))
            continue
        kept.append(sid)
        for part, value in zip(out, (ids, offsets, special), strict=True):
            part.append(value)
    if too_long_ids and too_long == "error":
        sid, n = too_long_ids[0]
        raise SentenceTooLongError(
            f"sentence {sid} is {n} tokens long (special tokens counted) but {run.name} "
            f"accepts at most {run.max_positions}. Shorten it, or pass too_long='skip' to "
            "leave such sentences out.")
    return _Tokenised(kept, *out, skipped=[s for s, _ in too_long_ids])


@contextlib.contextmanager
def _prepared(model: Any, attention: bool) -> Iterator[None]:
    """The model in eval mode, with eager attention when its weights are asked for (sdpa and
    flash attention return none); both restored afterwards."""
    training = bool(model.training)
    before = getattr(model.config, "_attn_implementation", None)
    switch = attention and before not in (None, "eager")
    model.eval()
    try:
        if switch:
            model.set_attn_implementation("eager")
        yield
    finally:
        if switch:
            model.set_attn_implementation(before)
        model.train(training)


def token_states(run: Runner, texts: Sequence[str], *, output: Output = "numpy",
                 dtype: str | None = None, words: bool = False, pos: bool = False,
                 senses: bool = False, pooling: str = "mean", attention: bool = False,
                 sublayers: bool = False, prepend_bos: bool | None = None,
                 too_long: str = "error", batch_tokens: int | None = None,
                 edits: Sequence[Edit] = (), mask_keys: Sequence[int] = ()) -> HiddenStates:
    """Every token's hidden state at every layer of ``texts`` under ``run``, in memory.

    Parameters
    ----------
    run : Runner
        The model (:func:`runner`).
    texts : sequence of str
        The sentences (checked by the caller).
    output : {"numpy", "torch"}
        numpy arrays on the CPU, or torch tensors on the model's device.
    dtype : {None, "float32", "float16", "bfloat16"}
        The arrays' type. None: float32 for numpy, the model's own type for torch.
    words, pos, senses : bool
        Word vectors, their parts of speech, their WordNet sense counts (module docstring).
    pooling : {"mean", "first", "last"}
        How a word's pieces become its vector.
    attention, sublayers : bool
        Attention weights; sub-layer outputs (module docstring).
    prepend_bos, too_long
        As for :func:`lmgeometry.activations.extract.encode`.
    batch_tokens : int, optional
        Padded tokens per forward pass (default
        :func:`lmgeometry.activations.extract.default_batch_tokens`).
    edits : sequence of Edit
        Replace hidden dimensions at chosen positions of chosen blocks' outputs during the
        forward pass (:class:`lmgeometry.activations.edits.Edit`).
    mask_keys : sequence of int
        Token positions no other query may attend to (:func:`~lmgeometry.activations.edits.
        key_mask`).

    Returns
    -------
    HiddenStates
    """
    import torch

    if output not in OUTPUTS:
        raise UsageError(f"output must be one of {OUTPUTS}, not {output!r}")
    if pooling not in ("mean", "first", "last"):
        raise UsageError(f"pooling must be 'mean', 'first' or 'last', not {pooling!r}")
    target = _out_dtype(output, dtype)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tokens = tokenise(run, texts, prepend_bos=prepend_bos, too_long=too_long)
    net = getattr(run.model, "base_model", run.model)
    edits = [e if isinstance(e, Edit) else Edit(**e) for e in edits]
    mask_keys = [int(k) for k in mask_keys]
    if min(mask_keys, default=0) < 0:
        raise UsageError(f"mask_keys {mask_keys}: token positions, none negative")
    with _prepared(run.model, attention or bool(mask_keys)), torch.inference_mode():
        states, attn, subs = _forward_all(run, net, tokens, attention, sublayers,
                                          batch_tokens, edits, mask_keys)
    result = HiddenStates(run.name, run.kind, tokens.table(run.tokenizer), states,
                          attentions=attn, sublayers=subs, skipped=tokens.skipped)
    if words or pos or senses:
        result.words, result.word_states = _pool_words(texts, tokens, states, pooling,
                                                       pos=pos, senses=senses)
    return _converted(result, output, target)


def _out_dtype(output: str, dtype: str | None) -> str | None:
    allowed = ("float32", "float16") if output == "numpy" else ("float32", "float16",
                                                                 "bfloat16")
    if dtype is not None and dtype not in allowed:
        raise UsageError(f"dtype must be None or one of {allowed} for {output} output, not "
                         f"{dtype!r}" + ("; numpy has no bfloat16: pass output='torch'"
                                         if dtype == "bfloat16" else ""))
    return dtype or ("float32" if output == "numpy" else None)


def _forward_all(run: Runner, net: Any, tokens: _Tokenised, attention: bool,
                 sublayers: bool, batch_tokens: int | None, edits: Sequence[Edit] = (),
                 mask_keys: Sequence[int] = ()
                 ) -> tuple[torch.Tensor, list[Any] | None, dict[str, Any] | None]:
    """Forward every batch; the states of every kept token, stacked by layer."""
    import torch

    device = run.device
    lengths = np.array([len(i) for i in tokens.ids], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    pad = run.tokenizer.pad_token_id
    pad = 0 if pad is None else int(pad)
    states: torch.Tensor | None = None
    subs: dict[str, torch.Tensor] | None = None
    attn: list[Any] = [None] * len(lengths)
    for index in plan_batches(lengths, batch_tokens or default_batch_tokens(device)):
        width = int(lengths[index].max())
        ids = torch.full((len(index), width), pad, dtype=torch.long)
        mask = torch.zeros((len(index), width), dtype=torch.long)
        for b, i in enumerate(index):
            ids[b, :lengths[i]] = torch.from_numpy(tokens.ids[i])
            mask[b, :lengths[i]] = 1
        kwargs: dict[str, Any] = {"output_hidden_states": True, "return_dict": True,
                                  "output_attentions": attention}
        if run.kind == "decoder":
            kwargs["use_cache"] = False
        lengths_b = torch.as_tensor(lengths[index])
        if mask_keys:
            mask = key_mask(lengths_b, width, mask_keys, run.kind == "decoder")
        with capture_sublayers(net, sublayers) as captured, edit_hooks(
                blocks(net) if edits else [], edits, lengths_b):
            out = net(input_ids=ids.to(device), attention_mask=mask.to(device), **kwargs)
        hidden = out.hidden_states
        if states is None:
            states = hidden[0].new_empty((len(hidden), int(starts[-1]), hidden[0].shape[-1]))
        if sublayers and subs is None:
            subs = {k: hidden[0].new_empty((len(v), int(starts[-1]), hidden[0].shape[-1]))
                    for k, v in captured.items()}
        for b, i in enumerate(index):
            n, row = int(lengths[i]), int(starts[i])
            for layer, h in enumerate(hidden):
                states[layer, row:row + n] = h[b, :n]
            for name, per_layer in captured.items():
                for layer, h in enumerate(per_layer):
                    subs[name][layer, row:row + n] = h[b, :n]  # type: ignore[index]
            if attention:
                attn[i] = torch.stack([a[b, :, :n, :n] for a in out.attentions])
    if states is None:
        raise UsageError("no sentence left to run: every sentence was too long")
    return states, (attn if attention else None), subs


def _pool_words(texts: Sequence[str], tokens: _Tokenised, states: torch.Tensor,
                pooling: str, *, pos: bool, senses: bool
                ) -> tuple[pd.DataFrame, torch.Tensor]:
    """The kept sentences' word table and word vectors pooled from the token states."""
    import torch

    from lmgeometry.io.corpus.table import light_word_table

    table = light_word_table(list(texts), tags=pos or senses, senses=senses)
    table = table[table["sentence_id"].isin(tokens.sentence_ids)].reset_index(drop=True)
    sid = table["sentence_id"].to_numpy()
    bounds = np.searchsorted(sid, np.asarray(tokens.sentence_ids + [len(texts)]))
    token_start = np.concatenate([[0], np.cumsum([len(i) for i in tokens.ids])])
    rows, word_of, n_pieces, first, shared, exact = [], [], [], [], [], []
    for k, s in enumerate(tokens.sentence_ids):
        a, b = bounds[k], bounds[k + 1]
        al = align_sentence(texts[s], tokens.offsets[k], tokens.special[k],
                            table["start"].to_numpy()[a:b], table["end"].to_numpy()[a:b],
                            sentence_id=s)
        if pooling == "mean":
            rows.append(token_start[k] + al.piece_pos)
            word_of.append(a + al.piece_word)
        else:
            rows.append(token_start[k] + (al.first_pos if pooling == "first" else al.last_pos))
        n_pieces.append(al.n_pieces)
        first.append(token_start[k] + al.first_pos)
        shared.append(al.shared)
        exact.append(al.exact)
    table["n_pieces"] = np.concatenate(n_pieces).astype(np.int32)
    table["first_token"] = np.concatenate(first).astype(np.int64)
    table["shared_piece"] = np.concatenate(shared)
    table["exact_pieces"] = np.concatenate(exact)
    at = torch.from_numpy(np.concatenate(rows).astype(np.int64)).to(states.device)
    picked = states.index_select(1, at).float()
    if pooling != "mean":
        return table, picked
    target = torch.from_numpy(np.concatenate(word_of).astype(np.int64)).to(states.device)
    sums = picked.new_zeros((states.shape[0], len(table), states.shape[-1]))
    sums.index_add_(1, target, picked)
    counts = torch.from_numpy(table["n_pieces"].to_numpy()).to(states.device, torch.float32)
    return table, sums / counts[None, :, None]


def _converted(result: HiddenStates, output: str, dtype: str | None) -> HiddenStates:
    """The result's arrays as numpy (on the CPU) or torch tensors of ``dtype``."""
    import torch

    def convert(t: Any) -> Any:
        if t is None:
            return None
        if dtype is not None:
            t = t.to(getattr(torch, dtype))
        return t.cpu().numpy() if output == "numpy" else t

    result.states = convert(result.states)
    result.word_states = convert(result.word_states)
    if result.attentions is not None:
        result.attentions = [convert(a) for a in result.attentions]
    if result.sublayers is not None:
        result.sublayers = {k: convert(v) for k, v in result.sublayers.items()}
    return result

