"""Which token pieces make up each word: alignment from fast-tokenizer offsets.

A corpus's word table gives every word's character span ``(start, end)`` in its sentence.
The model's fast tokenizer gives every token piece's character span (``offset_mapping``).
:func:`align_sentence` joins the two; :mod:`lmgeometry.activations.extract` then pools each
word's pieces into one vector per layer.

Alignment rules (:func:`align_sentence`)
---------------------------------------
1. Special tokens ([CLS], [SEP], BOS, EOS, padding) never belong to a word: they are
   recognised by the tokenizer's ``special_tokens_mask`` (or their empty ``(0, 0)`` offsets).
2. A piece's span is trimmed of leading and trailing whitespace before matching. Byte-level
   BPE (GPT-2, SmolLM2: ``Ġword``) and some SentencePiece tokenizers (``▁word``) include the
   preceding space in the offsets; WordPiece continuation pieces (``##ing``) already report
   the span without ``##``. A piece that is only whitespace (``Ġ`` before a digit, ``▁▁`` for
   a double space) belongs to no word.
3. A piece belongs to the word its trimmed span overlaps most (ties go to the earlier
   word). Pieces that overlap no word (characters the word table does not cover) are model
   input but are pooled into no word.
4. A piece can cross a word boundary: byte-level BPE writes ``Don't`` as ``Don`` + ``'t``
   while spaCy splits ``Do`` + ``n't`` (``Don`` goes to ``Do``, 2 characters against 1);
   SentencePiece writes ``gonna`` as one piece where spaCy has ``gon`` + ``na``. If rule 3
   leaves a word with no piece, the word takes every piece that overlaps it, so that piece is
   *shared* with its neighbour (both words get its vector). Per word, ``shared`` records
   this and ``exact`` whether the word's pieces tile exactly its characters; both are
   columns of the store's word table (``shared_piece``, ``exact_pieces``), so analyses can
   leave such words out. They are rare in English text (contractions, ``gonna``, ``%.``).
5. A word that overlaps no piece at all (a whitespace-only word, or characters the
   tokenizer's normaliser deletes) is an error naming the sentence: words are never dropped
   silently. (Words of only zero-width or control characters never get this far: the word
   table leaves them out and counts them, see :mod:`lmgeometry.io.corpus`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lmgeometry.errors import AlignmentError

__all__ = [
    "align_sentence",
    "Alignment",
    "AlignmentError",
    "trim_spans",
]




@dataclass(frozen=True)
class Alignment:
    """Piece-to-word assignment of one tokenized sentence.

    Attributes
    ----------
    piece_pos : numpy.ndarray
        int64 (pairs,): position of a piece in the model input (special tokens counted).
    piece_word : numpy.ndarray
        int64 (pairs,): index of the word (within the sentence) the piece is pooled into.
        Pairs are sorted by (word, position); every word has at least one pair.
    n_pieces : numpy.ndarray
        int32 (words,): number of pieces pooled into each word.
    first_pos, last_pos : numpy.ndarray
        int32 (words,): input position of each word's first and last piece.
    shared : numpy.ndarray
        bool (words,): the word shares a piece with a neighbouring word (rule 4).
    exact : numpy.ndarray
        bool (words,): the word's pieces tile exactly its characters. False where a piece
        crosses the word's boundary (``Don`` + ``'t`` against ``Do`` + ``n't``) or a character
        of the word is in no piece of it.
    """

    piece_pos: np.ndarray
    piece_word: np.ndarray
    n_pieces: np.ndarray
    first_pos: np.ndarray
    last_pos: np.ndarray
    shared: np.ndarray
    exact: np.ndarray

    @property
    def n_words(self) -> int:
        """Number of words aligned."""
        return len(self.n_pieces)


def trim_spans(sentence: str, offsets: np.ndarray) -> np.ndarray:
    """Trim leading and trailing whitespace from piece spans.

    Parameters
    ----------
    sentence : str
        The text the offsets index into.
    offsets : numpy.ndarray
        int (pieces, 2) character spans ``[start, end)``.

    Returns
    -------
    numpy.ndarray
        int64 (pieces, 2); an all-whitespace span becomes empty (``start == end``).
    """
    out = np.array(offsets, dtype=np.int64).reshape(-1, 2)
    for i, (start, end) in enumerate(out):
        if end <= start:
            continue
        text = sentence[start:end]
        stripped = text.lstrip()
        start += len(text) - len(stripped)
        end -= len(stripped) - len(stripped.rstrip())
        out[i] = (start, max(start, end))
    return out


def align_sentence(
    sentence: str,
    offsets: np.ndarray | Sequence[tuple[int, int]],
    special: np.ndarray | Sequence[int],
    word_starts: np.ndarray | Sequence[int],
    word_ends: np.ndarray | Sequence[int],
    *,
    sentence_id: int | None = None,
) -> Alignment:
    """Assign the token pieces of one sentence to its words (rules in the module docstring).

    Parameters
    ----------
    sentence : str
        The sentence text.
    offsets : array-like
        (pieces, 2) character spans from a fast tokenizer's ``offset_mapping``.
    special : array-like
        (pieces,) nonzero for special tokens (``special_tokens_mask``).
    word_starts, word_ends : array-like
        (words,) character spans of the words, in order.
    sentence_id : int, optional
        Used in error messages.

    Returns
    -------
    Alignment

    Raises
    ------
    AlignmentError
        If a word overlaps no piece.
    """
    spans = trim_spans(sentence, np.asarray(offsets))
    special = np.asarray(special, dtype=bool).reshape(-1)
    if len(special) != len(spans):
        raise ValueError("offsets and special must have one entry per piece")
    w_start = np.asarray(word_starts, dtype=np.int64).reshape(-1)
    w_end = np.asarray(word_ends, dtype=np.int64).reshape(-1)
    n_words = len(w_start)
    if n_words == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Alignment(empty, empty, empty.astype(np.int32), empty.astype(np.int32),
                         empty.astype(np.int32), np.zeros(0, dtype=bool),
                         np.zeros(0, dtype=bool))
    usable = ~special & (spans[:, 1] > spans[:, 0])
    overlap = (np.minimum(spans[:, 1, None], w_end[None, :])
               - np.maximum(spans[:, 0, None], w_start[None, :]))
    overlap = np.where(usable[:, None], np.clip(overlap, 0, None), 0)

    best = overlap.argmax(axis=1)  # ties: first (earlier) word
    has_word = overlap.max(axis=1) > 0
    pos = np.flatnonzero(has_word)
    word = best[has_word]
    owned = np.zeros(n_words, dtype=bool)
    owned[word] = True
    shared = np.zeros(n_words, dtype=bool)
    for w in np.flatnonzero(~owned):
        extra = np.flatnonzero(overlap[:, w] > 0)
        if len(extra) == 0:
            where = f"sentence {sentence_id}" if sentence_id is not None else "sentence"
            text = sentence[w_start[w]:w_end[w]]
            raise AlignmentError(
                f"{where}: word {w} {text!r} (characters {w_start[w]}:{w_end[w]}) has no token "
                "piece: it is whitespace-only, empty, or deleted by the tokenizer's normaliser. "
                "Remove or replace those characters in the sentence, or use a model whose "
                f"tokenizer keeps them. Sentence: {sentence!r}"
            )
        pos = np.concatenate([pos, extra])
        word = np.concatenate([word, np.full(len(extra), w)])
        shared[w] = True
        shared[best[extra]] = True
    order = np.lexsort((pos, word))
    pos, word = pos[order].astype(np.int64), word[order].astype(np.int64)
    n_pieces = np.bincount(word, minlength=n_words).astype(np.int32)
    bounds = np.concatenate([[0], np.cumsum(n_pieces)])
    first = pos[bounds[:-1]].astype(np.int32)
    last = pos[bounds[1:] - 1].astype(np.int32)
    inside = (spans[pos, 0] >= w_start[word]) & (spans[pos, 1] <= w_end[word])
    covered = np.bincount(word, weights=spans[pos, 1] - spans[pos, 0], minlength=n_words)
    crossing = np.bincount(word, weights=~inside, minlength=n_words)
    exact = (crossing == 0) & (covered == w_end - w_start)
    return Alignment(pos, word, n_pieces, first, last, shared, exact)
