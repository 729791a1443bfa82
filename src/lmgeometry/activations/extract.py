"""Batched hidden-state extraction: sentences -> word vectors of every layer.

:func:`encode` tokenises a corpus and aligns each word with its pieces
(:mod:`lmgeometry.activations.align`); :func:`iter_batches` runs the model once per batch of
sentences and pools the pieces of each word into one vector per layer;
:mod:`lmgeometry.activations.store` writes the batches to files.

Pooling: a word's vector is the mean of its pieces' hidden states (``pooling="mean"``), or
the hidden state of its first or last piece (``"first"``, ``"last"``). For a decoder,
``"last"`` is the only piece that has seen the whole word.

Beginning-of-sequence token
---------------------------
``prepend_bos=None`` uses the tokenizer's own template: for encoders [CLS] ... [SEP], for
decoders whatever the tokenizer adds by default (Gemma adds ``<bos>``; GPT-2 and SmolLM2 add
nothing). ``True`` / ``False`` force a decoder's BOS on or off (encoders accept only None).
Without a BOS token a decoder's first token becomes its *attention sink*: every later token
attends to it heavily and its hidden states take extreme values in the middle layers, so the
first word of every sentence looks unlike the rest. The seeds' GPT-2 runs had no BOS.

Batching
--------
Sentences are sorted by token count and packed into batches whose padded size
(sentences x longest sentence) stays under ``batch_tokens`` (default 1,024 on a CPU, 16,384
on a GPU: :func:`default_batch_tokens`); padding is on the right with an
attention mask, for encoders and decoders alike (a causal model's real tokens never see the
padding to their right; tests check batched == unbatched). The forward pass runs under
``torch.inference_mode`` in float32 on the model's device, through the model's base module
(no language-model head, whose logits would cost vocabulary x tokens memory), and pooling
is a scatter (``index_add_``) on the device; each batch's word vectors then move to the CPU,
so peak memory is set by the batch, not by the corpus (every :data:`RELEASE_EVERY` batches the
freed heap is returned to the OS: :func:`releasing_memory`).

Special tokens
--------------
The template's special tokens ([CLS] and [SEP], MPNet's ``<s>`` and ``</s>``, a decoder's BOS)
belong to no word, so no word vector contains them; their hidden states are kept apart
(:attr:`WordBatch.special`, always float32) and the store writes them to their own files, so
that no word measure can mix them in by accident.

Hidden states are what ``transformers`` returns with ``output_hidden_states=True``: layer 0
is the embedding output (for Gemma the embeddings scaled by sqrt(width)), layer L is the last
block's output, after the final normalisation for the models whose ``last_hidden_state`` has
it (GPT-2's ``ln_f``, Llama's and Gemma's final RMSNorm).
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np
import pandas as pd
import torch

from lmgeometry.activations.align import align_sentence

if TYPE_CHECKING:
    from lmgeometry.activations.align import Alignment
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.models import LoadedModel

from lmgeometry.errors import SentenceTooLongError, UsageError

__all__ = [
    "ACCELERATOR_BATCH_TOKENS",
    "block_rows",
    "CPU_BATCH_TOKENS",
    "default_batch_tokens",
    "encode",
    "EncodedSentence",
    "Encoding",
    "extract_words",
    "FLOAT16_MAX",
    "iter_batches",
    "OUTPUT_DTYPES",
    "plan_batches",
    "plan_sharded",
    "Pooling",
    "POOLINGS",
    "release_freed_memory",
    "RELEASE_EVERY",
    "releasing_memory",
    "SentenceTooLongError",
    "special_template",
    "TOO_LONG",
    "TooLong",
    "WordBatch",
]


Pooling = Literal["mean", "first", "last"]

TooLong = Literal["error", "skip"]

POOLINGS: tuple[str, ...] = ("mean", "first", "last")

TOO_LONG: tuple[str, ...] = ("error", "skip")

CPU_BATCH_TOKENS = 1024
"""Padded tokens per batch on a CPU: throughput is flat from about 512 tokens up (measured
with MiniLM on 2 cores), and small batches of length-sorted sentences waste little on padding
(98% real tokens for 3,000 STS sentences, against 91% at 4,096)."""


ACCELERATOR_BATCH_TOKENS = 16384
"""Padded tokens per batch on a GPU, where larger batches keep the device busy."""

RELEASE_EVERY = 8
"""Batches between two returns of the freed heap to the OS (:func:`releasing_memory`).
Returning it after every batch made the next batch fault its pages in again. Measured on 2
cores (STS sentences, interleaved runs in one process): MiniLM on 1,000 sentences took a
median 2.45 s against 2.73 s (faster in 10 of 10 pairs; 0.27 s against 0.63 s in the kernel),
SmolLM2-135M on 400 8.45 s against 8.75 s; the peak during a MiniLM run of 10,000 sentences
was +180 MiB against +143 MiB. Never returning it, the peak grew with the corpus (+141 MiB
for 1,000 sentences, +245 MiB for 10,000)."""

T = TypeVar("T")


#: Types :func:`iter_batches` can hand out (the model always computes in float32).
OUTPUT_DTYPES = ("float32", "float16")

FLOAT16_MAX = float(np.finfo(np.float16).max)


def default_batch_tokens(device: torch.device | str) -> int:
    """Padded-token budget per batch for a device (:data:`CPU_BATCH_TOKENS` on a CPU)."""
    return CPU_BATCH_TOKENS if torch.device(device).type == "cpu" else ACCELERATOR_BATCH_TOKENS




@dataclass(frozen=True)
class EncodedSentence:
    """One sentence ready for the model: its input ids, its word alignment and the input
    positions of its special tokens ([CLS], [SEP], BOS, ...; ascending)."""

    sentence_id: int
    input_ids: np.ndarray
    alignment: Alignment
    special_pos: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_special(self) -> int:
        """Special tokens in the model input."""
        return len(self.special_pos)

    @property
    def n_tokens(self) -> int:
        """Tokens fed to the model, special tokens included."""
        return len(self.input_ids)


@dataclass
class Encoding:
    """A corpus tokenized and aligned for one model.

    Attributes
    ----------
    sentences : list[EncodedSentence]
        The kept sentences in sentence_id order (sentences without words are left out:
        they have nothing to store).
    skipped : list[int]
        Sentence ids left out because they exceed the model's window (``too_long="skip"``).
    n_sentences : int
        Sentences in the corpus.
    bos_prepended : bool
        Whether the model input starts with a BOS (or [CLS]) token.
    add_special_tokens : bool
        Whether the tokenizer's template was applied.
    max_positions : int
        The window the lengths were checked against.
    """

    sentences: list[EncodedSentence]
    skipped: list[int]
    n_sentences: int
    bos_prepended: bool
    add_special_tokens: bool
    max_positions: int
    row_start: np.ndarray = field(init=False)
    special_start: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        counts = np.array([s.alignment.n_words for s in self.sentences], dtype=np.int64)
        self.row_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        special = np.array([s.n_special for s in self.sentences], dtype=np.int64)
        self.special_start = np.concatenate([[0], np.cumsum(special)]).astype(np.int64)

    @property
    def n_words(self) -> int:
        """Word occurrences kept (rows of the output)."""
        return int(self.row_start[-1])

    @property
    def n_special(self) -> int:
        """Special tokens of the kept sentences (rows of the special-token output)."""
        return int(self.special_start[-1])

    @property
    def n_tokens(self) -> int:
        """Model tokens over the kept sentences."""
        return int(sum(s.n_tokens for s in self.sentences))

    def kept_ids(self) -> np.ndarray:
        """Sentence ids of the kept sentences, in output order."""
        return np.array([s.sentence_id for s in self.sentences], dtype=np.int64)

    def special_columns(self, tokenizer: object | None = None) -> pd.DataFrame:
        """Per stored special token, in output order (kept sentences, then input position).

        Columns: ``sentence_id``, ``position`` (input position, 0 = the first token),
        ``n_tokens`` (the sentence's input length, so ``position == n_tokens - 1`` is its last
        token), ``token_id`` and, given the ``tokenizer``, ``token`` (its text: ``[CLS]``,
        ``</s>``, ``<bos>``).
        """
        sid = np.concatenate([np.full(s.n_special, s.sentence_id, dtype=np.int64)
                              for s in self.sentences] or [np.zeros(0, np.int64)])
        pos = np.concatenate([s.special_pos for s in self.sentences]
                             or [np.zeros(0, np.int64)]).astype(np.int32)
        n_tokens = np.concatenate([np.full(s.n_special, s.n_tokens, dtype=np.int32)
                                   for s in self.sentences] or [np.zeros(0, np.int32)])
        ids = np.concatenate([s.input_ids[s.special_pos] for s in self.sentences]
                             or [np.zeros(0, np.int64)])
        table = pd.DataFrame({"sentence_id": sid.astype(np.int32), "position": pos,
                              "n_tokens": n_tokens, "token_id": ids.astype(np.int64)})
        if tokenizer is not None:
            names = tokenizer.convert_ids_to_tokens(sorted(set(ids.tolist())))
            lookup = dict(zip(sorted(set(ids.tolist())), names, strict=True))
            table["token"] = [str(lookup[i]) for i in ids.tolist()]
        return table

    def word_columns(self) -> pd.DataFrame:
        """Per stored word: ``n_pieces``, ``first_piece`` (input position), ``shared_piece``,
        ``exact_pieces`` (see :class:`Alignment`: ``shared`` and ``exact``).

        Rows are in output order (kept sentences, then words within a sentence).
        """
        al = [s.alignment for s in self.sentences]
        if not al:
            return pd.DataFrame({"n_pieces": np.zeros(0, np.int32),
                                 "first_piece": np.zeros(0, np.int32),
                                 "shared_piece": np.zeros(0, bool),
                                 "exact_pieces": np.zeros(0, bool)})
        return pd.DataFrame({
            "n_pieces": np.concatenate([a.n_pieces for a in al]).astype(np.int32),
            "first_piece": np.concatenate([a.first_pos for a in al]).astype(np.int32),
            "shared_piece": np.concatenate([a.shared for a in al]),
            "exact_pieces": np.concatenate([a.exact for a in al]),
        })


def special_template(model: LoadedModel, prepend_bos: bool | None) -> tuple[bool, int | None]:
    """How to frame a sentence for ``model``.

    Parameters
    ----------
    model : LoadedModel
    prepend_bos : bool or None
        None: the tokenizer's default template. True/False: a decoder's BOS forced on/off.

    Returns
    -------
    (add_special_tokens, bos_id)
        Whether to apply the tokenizer's template, and a BOS id to prepend by hand (or None).
    """
    if prepend_bos is None:
        return True, None
    flag = f"prepend_bos={prepend_bos} (--prepend-bos {'yes' if prepend_bos else 'no'})"
    if model.kind != "decoder":
        raise UsageError(
            f"{flag} applies to decoders only; {model.name} is an {model.kind} and always uses "
            "its tokenizer's template ([CLS] ... [SEP]). Pass prepend_bos=None (--prepend-bos "
            "auto)."
        )
    if not prepend_bos:
        return False, None
    bos = model.tokenizer.bos_token_id
    if bos is None:
        raise UsageError(f"{flag}, but the tokenizer of {model.name} has no BOS token. Pass "
                         "prepend_bos=None (--prepend-bos auto).")
    return False, int(bos)


def _word_spans(corpus: Corpus) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start/end arrays of the word table and per-sentence boundaries into them."""
    words = corpus.words
    sid = words["sentence_id"].to_numpy(dtype=np.int64)
    widx = words["word_index"].to_numpy(dtype=np.int64)
    if len(sid) and (np.any(np.diff(sid) < 0)
                     or np.any((np.diff(sid) == 0) & (np.diff(widx) <= 0))):
        raise ValueError("corpus.words must be ordered by (sentence_id, word_index)")
    if len(sid) and (sid[0] < 0 or sid[-1] >= len(corpus.sentences)):
        raise ValueError("corpus.words has sentence ids outside corpus.sentences")
    bounds = np.searchsorted(sid, np.arange(len(corpus.sentences) + 1), side="left")
    return (words["start"].to_numpy(dtype=np.int64), words["end"].to_numpy(dtype=np.int64),
            bounds)


def encode(
    model: LoadedModel,
    corpus: Corpus,
    *,
    prepend_bos: bool | None = None,
    too_long: TooLong = "error",
    chunk: int = 1024,
    span: tuple[int, int] | None = None,
) -> Encoding:
    """Tokenize every sentence of ``corpus`` and align its pieces with its words.

    Parameters
    ----------
    model : LoadedModel
        Supplies the fast tokenizer, ``kind`` and ``max_positions``.
    corpus : Corpus
        Sentences and their word table.
    prepend_bos : bool or None
        See the module docstring.
    too_long : {"error", "skip"}
        A sentence with more tokens than ``model.max_positions`` (special tokens counted)
        raises :class:`SentenceTooLongError`, or is left out and listed in
        ``Encoding.skipped``. Nothing is ever truncated.
    chunk : int
        Sentences tokenized per tokenizer call.
    span : (int, int), optional
        Encode only sentences ``lo <= sentence_id < hi`` (one shard of the corpus; sentence
        ids stay the corpus's own); default all.

    Returns
    -------
    Encoding
    """
    if too_long not in TOO_LONG:
        raise ValueError(f"too_long must be one of {TOO_LONG}, not {too_long!r}")
    tok = model.tokenizer
    if not getattr(tok, "is_fast", False):
        raise TypeError(f"{model.name}: a fast tokenizer is required (offset mappings)")
    add_special, bos_id = special_template(model, prepend_bos)
    starts, ends, bounds = _word_spans(corpus)
    limit = int(model.max_positions)
    special_ids = set(tok.all_special_ids)
    kept: list[EncodedSentence] = []
    too_long_ids: list[tuple[int, int]] = []
    if bos_id is not None:
        bos_prepended = True
    else:
        probe = tok("a", add_special_tokens=add_special, return_special_tokens_mask=True)
        bos_prepended = bool(probe["special_tokens_mask"][0])
    first, end = (0, len(corpus.sentences)) if span is None else span
    if not 0 <= first <= end <= len(corpus.sentences):
        raise ValueError(f"span {span} is outside the corpus's {len(corpus.sentences)} sentences")
    texts = corpus.sentences
    for lo in range(first, end, chunk):
        batch = list(texts[lo:min(lo + chunk, end)])
        enc = tok(batch, add_special_tokens=add_special, return_offsets_mapping=True,
                  return_special_tokens_mask=True, return_attention_mask=False,
                  return_token_type_ids=False, truncation=False)
        for j, text in enumerate(batch):
            sid = lo + j
            ids = np.asarray(enc["input_ids"][j], dtype=np.int64)
            offsets = np.asarray(enc["offset_mapping"][j], dtype=np.int64).reshape(-1, 2)
            special = np.asarray(enc["special_tokens_mask"][j], dtype=bool)
            special |= np.isin(ids, list(special_ids)) & (offsets[:, 1] <= offsets[:, 0])
            if bos_id is not None:
                ids = np.concatenate([[bos_id], ids])
                offsets = np.concatenate([[[0, 0]], offsets])
                special = np.concatenate([[True], special])
            if len(ids) > limit:
                too_long_ids.append((sid, len(ids)))
                continue
            a, b = bounds[sid], bounds[sid + 1]
            if b == a:
                continue
            alignment = align_sentence(text, offsets, special, starts[a:b], ends[a:b],
                                       sentence_id=sid)
            kept.append(EncodedSentence(sid, ids, alignment,
                                        np.flatnonzero(special).astype(np.int64)))
    if too_long_ids and too_long == "error":
        sid, n = too_long_ids[0]
        more = f" ({len(too_long_ids) - 1} more sentences too)" if len(too_long_ids) > 1 else ""
        raise SentenceTooLongError(
            f"sentence {sid} is {n} tokens long (special tokens counted) but {model.name} "
            f"accepts at most {limit}{more}. Shorten it, or pass too_long='skip' (--too-long "
            "skip) to leave such sentences out (the count is recorded)."
        )
    return Encoding(kept, [s for s, _ in too_long_ids], end - first, bos_prepended,
                    add_special, limit)


def plan_batches(lengths: Sequence[int] | np.ndarray, batch_tokens: int) -> list[np.ndarray]:
    """Group sequences into batches by length.

    Sequences are sorted by length, longest first, and packed so that each batch's padded
    size (number of sequences x its longest sequence) is at most ``batch_tokens``; a single
    sequence longer than the budget gets a batch of its own.

    Parameters
    ----------
    lengths : array-like of int
        Token count of each sequence.
    batch_tokens : int
        Padded-token budget per batch.

    Returns
    -------
    list[numpy.ndarray]
        Indices into ``lengths``, one ascending array per batch; together a permutation.
    """
    if batch_tokens < 1:
        raise ValueError("batch_tokens must be positive")
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    batches: list[np.ndarray] = []
    i = 0
    while i < len(order):
        longest = max(int(lengths[order[i]]), 1)
        size = max(1, batch_tokens // longest)
        batches.append(np.sort(order[i:i + size]))
        i += size
    return batches


def plan_sharded(encoding: Encoding, batch_tokens: int,
                 shard_sentences: int | None = None) -> list[np.ndarray]:
    """:func:`plan_batches` within each shard of ``shard_sentences`` consecutive sentence ids.

    A batch never mixes sentences of two shards (sentence ids ``k * shard_sentences`` to
    ``(k + 1) * shard_sentences - 1``), so extracting one shard on its own (a Ray worker:
    :mod:`lmgeometry.activations.distributed`) forms exactly the batches the whole corpus
    forms here: the same padded inputs, hence the same bytes. ``None``: one plan over all
    sentences.

    Returns
    -------
    list[numpy.ndarray]
        Indices into ``encoding.sentences``, shard after shard.
    """
    lengths = np.array([s.n_tokens for s in encoding.sentences], dtype=np.int64)
    if shard_sentences is None:
        return plan_batches(lengths, batch_tokens)
    if shard_sentences < 1:
        raise ValueError("shard_sentences must be positive")
    shard = encoding.kept_ids() // shard_sentences
    bounds = np.flatnonzero(np.diff(shard)) + 1
    plan: list[np.ndarray] = []
    for lo, hi in zip([0, *bounds], [*bounds, len(shard)], strict=True):
        plan.extend(lo + b for b in plan_batches(lengths[lo:hi], batch_tokens))
    return plan


@dataclass(frozen=True)
class WordBatch:
    """Word vectors of one batch of sentences, and the hidden states of its special tokens.

    Attributes
    ----------
    sentence_index : numpy.ndarray
        Indices into ``Encoding.sentences`` of the batch's sentences, in block order.
    vectors : numpy.ndarray
        (layers, words, width) in the ``dtype`` asked of :func:`iter_batches` (computed in
        float32, cast on the device): the words of those sentences, sentence after sentence,
        each sentence's words in order.
    special : numpy.ndarray
        (layers, special tokens, width) float32, always (a decoder's BOS, its attention sink,
        can exceed float16's range): the special tokens of those sentences, sentence after
        sentence, each sentence's in input order (:attr:`EncodedSentence.special_pos`).
    """

    sentence_index: np.ndarray
    vectors: np.ndarray
    special: np.ndarray | None = None


def release_freed_memory() -> None:
    """Hand memory freed by the last batch back to the OS (glibc ``malloc_trim``).

    glibc raises its mmap threshold after large blocks are freed, so later batches of other
    shapes are carved from the heap and the freed space stays resident: without this call the
    resident set grows with the number of batches (measured: +450 MiB over 3,000 sentences
    instead of +80 MiB), i.e. with the corpus. A no-op where glibc is absent.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def releasing_memory(batches: Iterable[T], every: int = RELEASE_EVERY) -> Iterator[T]:
    """Yield ``batches``, calling :func:`release_freed_memory` after every ``every``-th and
    after the last.

    The call comes when the loop over the batches asks for the next one, i.e. after the
    previous batch's work (a generator's consumer included) is done.
    """
    if every < 1:
        raise ValueError("every must be positive")

    def loop() -> Iterator[T]:
        done = 0
        for done, batch in enumerate(batches, start=1):  # noqa: B007 (read after the loop)
            yield batch
            if done % every == 0:
                release_freed_memory()
        if done % every:
            release_freed_memory()

    return loop()


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _base_module(model: LoadedModel) -> torch.nn.Module:
    """The model body without a language-model head."""
    net = model.model
    return getattr(net, "base_model", net)


def _forward_hidden(model: LoadedModel, net: torch.nn.Module, ids: torch.Tensor,
                    mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    kwargs: dict[str, object] = {"input_ids": ids, "attention_mask": mask,
                                 "output_hidden_states": True, "return_dict": True}
    if model.kind == "decoder":
        kwargs["use_cache"] = False
    out = net(**kwargs)
    hidden = out.hidden_states
    if hidden is None or len(hidden) != model.n_layers + 1:
        got = None if hidden is None else len(hidden)
        raise RuntimeError(f"{model.name}: expected {model.n_layers + 1} hidden states, got {got}")
    return hidden


def iter_batches(
    model: LoadedModel,
    encoding: Encoding,
    *,
    pooling: Pooling = "mean",
    batch_tokens: int | None = None,
    progress: bool = True,
    callback: Callable[[int, int], None] | None = None,
    dtype: str = "float32",
    shard_sentences: int | None = None,
) -> Iterator[WordBatch]:
    """Run the model over an encoded corpus and yield pooled word vectors batch by batch.

    Parameters
    ----------
    model : LoadedModel
        Float32 model in eval mode.
    encoding : Encoding
        From :func:`encode` with the same model.
    pooling : {"mean", "first", "last"}
        How a word's pieces become one vector.
    batch_tokens : int, optional
        Padded-token budget per forward pass; default :func:`default_batch_tokens`.
    progress : bool
        Show a tqdm progress bar (sentences/s) on stderr.
    callback : callable, optional
        Called as ``callback(sentences_done, sentences_total)`` after each batch.
    dtype : {"float32", "float16"}
        Type of the yielded vectors. The model computes in float32 either way; float16 is
        cast on the device (half the transfer to the CPU) after checking that every value
        fits (an ``OverflowError`` names the layer otherwise).
    shard_sentences : int, optional
        Batches never cross a shard of this many sentence ids (:func:`plan_sharded`); None
        plans over the whole encoding.

    Yields
    ------
    WordBatch
        Vectors on the CPU; batches come longest sentences first.
    """
    from tqdm.std import tqdm

    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
    if dtype not in OUTPUT_DTYPES:
        raise ValueError(f"dtype must be one of {OUTPUT_DTYPES}, not {dtype!r}")
    net = _base_module(model)
    computed = next(net.parameters()).dtype
    if computed != torch.float32:
        raise TypeError(f"{model.name}: extraction computes in float32; the model is {computed}")
    device = model.device
    pad_id = model.tokenizer.pad_token_id
    pad_id = 0 if pad_id is None else int(pad_id)
    sentences = encoding.sentences
    total = len(sentences)
    if batch_tokens is None:
        batch_tokens = default_batch_tokens(device)
    batches = plan_sharded(encoding, batch_tokens, shard_sentences)
    done = 0
    bar = tqdm(total=total, unit="sent", desc=f"extract {model.name}", file=sys.stderr,
               disable=not progress, dynamic_ncols=True, mininterval=1.0)
    try:
        with torch.inference_mode():
            for index in releasing_memory(batches):
                batch = [sentences[i] for i in index]
                vectors, special = _pool_batch(model, net, batch, pooling, pad_id, device,
                                               dtype)
                yield WordBatch(index, vectors, special)
                done += len(index)
                bar.update(len(index))
                if callback is not None:
                    callback(done, total)
    finally:
        bar.close()


def _pool_batch(model: LoadedModel, net: torch.nn.Module, batch: list[EncodedSentence],
                pooling: str, pad_id: int, device: torch.device, dtype: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """Forward one batch and pool its pieces into words.

    Returns the words' (layers, words, width) vectors in ``dtype`` and the special tokens'
    (layers, special tokens, width) hidden states in float32.
    """
    width = max(s.n_tokens for s in batch)
    ids = np.full((len(batch), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    flat_parts, word_parts, count_parts, special_parts = [], [], [], []
    word_offset = 0
    for b, s in enumerate(batch):
        ids[b, :s.n_tokens] = s.input_ids
        mask[b, :s.n_tokens] = 1
        special_parts.append(b * width + s.special_pos)
        al = s.alignment
        if pooling == "mean":
            flat_parts.append(b * width + al.piece_pos)
            word_parts.append(word_offset + al.piece_word)
            count_parts.append(al.n_pieces)
        else:
            pos = al.first_pos if pooling == "first" else al.last_pos
            flat_parts.append(b * width + pos.astype(np.int64))
        word_offset += al.n_words
    hidden = _forward_hidden(model, net, torch.from_numpy(ids).to(device),
                             torch.from_numpy(mask).to(device))
    flat = torch.from_numpy(np.concatenate(flat_parts)).to(device)
    stacked = _gather_layers(hidden, flat)  # (layers, pieces or words, width)
    at = torch.from_numpy(np.concatenate(special_parts).astype(np.int64)).to(device)
    special = _gather_layers(hidden, at)
    if pooling == "mean":
        target = torch.from_numpy(np.concatenate(word_parts)).to(device)
        counts = torch.from_numpy(np.concatenate(count_parts)).to(device, torch.float32)
        sums = stacked.new_zeros((stacked.shape[0], word_offset, stacked.shape[-1]))
        sums.index_add_(1, target, stacked)
        stacked = sums.div_(counts[None, :, None])
    low, high = _layer_range(stacked)
    if not (torch.isfinite(low).all() and torch.isfinite(high).all()
            and torch.isfinite(special).all()):
        bad = sorted({int(s.sentence_id) for s in batch})
        raise FloatingPointError(
            f"{model.name} produced non-finite hidden states in a batch of sentences {bad[:10]}"
        )
    if dtype == "float16":
        peak = torch.maximum(high, -low)
        if bool((peak > FLOAT16_MAX).any()):
            layer = int(torch.nonzero(peak > FLOAT16_MAX)[0])
            raise OverflowError(
                f"{model.name}: layer {layer} has a hidden-state value of "
                f"{float(peak[layer]):.4g}, beyond float16's range (65504); "
                "rerun with dtype='float32'."
            )
        return stacked.half().cpu().numpy(), special.float().cpu().numpy()
    return stacked.float().cpu().numpy(), special.float().cpu().numpy()


def _gather_layers(hidden: Sequence[torch.Tensor], rows: torch.Tensor) -> torch.Tensor:
    """``(layers, len(rows), width)``: the given flat (batch x position) rows of every layer,
    gathered straight into one tensor."""
    out = hidden[0].new_empty((len(hidden), len(rows), hidden[0].shape[-1]))
    for layer, h in enumerate(hidden):
        torch.index_select(h.reshape(-1, h.shape[-1]), 0, rows, out=out[layer])
    return out


def _layer_range(stacked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Smallest and largest value of each layer, in one pass (NaN and infinity propagate)."""
    flat = stacked.reshape(len(stacked), -1)
    if flat.shape[1] == 0:
        return flat.new_zeros(len(flat)), flat.new_zeros(len(flat))
    return torch.aminmax(flat, dim=1)


def extract_words(
    model: LoadedModel,
    corpus: Corpus,
    *,
    pooling: Pooling = "mean",
    prepend_bos: bool | None = None,
    too_long: TooLong = "error",
    batch_tokens: int | None = None,
    progress: bool = False,
) -> tuple[np.ndarray, Encoding]:
    """Word vectors of a small corpus, in memory (the store writes large ones to disk).

    Parameters
    ----------
    model, corpus, pooling, prepend_bos, too_long, batch_tokens, progress
        As for :func:`encode` and :func:`iter_batches`.

    Returns
    -------
    vectors : numpy.ndarray
        float32 (layers, words, width), words in corpus order minus skipped sentences.
    encoding : Encoding
    """
    encoding = encode(model, corpus, prepend_bos=prepend_bos, too_long=too_long)
    out = np.zeros((model.n_layers + 1, encoding.n_words, model.hidden_size), dtype=np.float32)
    for wb in iter_batches(model, encoding, pooling=pooling, batch_tokens=batch_tokens,
                           progress=progress):
        for start, stop, lo, hi in block_rows(encoding, wb.sentence_index):
            out[:, start:stop] = wb.vectors[:, lo:hi]
    return out, encoding


def block_rows(encoding: Encoding, sentence_index: np.ndarray, *, special: bool = False
               ) -> list[tuple[int, int, int, int]]:
    """Map a batch's word block (or special-token block) to output rows.

    Parameters
    ----------
    encoding : Encoding
    sentence_index : numpy.ndarray
        ``WordBatch.sentence_index``.
    special : bool
        Map ``WordBatch.special`` to the special-token rows instead of the words.

    Returns
    -------
    list of (row_start, row_stop, block_start, block_stop)
        Contiguous runs: output rows ``row_start:row_stop`` receive block rows
        ``block_start:block_stop``. Consecutive sentences merge into one run.
    """
    runs: list[tuple[int, int, int, int]] = []
    starts = encoding.special_start if special else encoding.row_start
    lo = 0
    for i in sentence_index:
        start, stop = int(starts[i]), int(starts[i + 1])
        hi = lo + stop - start
        if runs and runs[-1][1] == start and runs[-1][3] == lo:
            runs[-1] = (runs[-1][0], stop, runs[-1][2], hi)
        else:
            runs.append((start, stop, lo, hi))
        lo = hi
    return runs
