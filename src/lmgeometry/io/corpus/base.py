"""The :class:`Corpus` class (sentences and their word table), :func:`sentences` for your
own sentences, and what every data-set builder shares (:data:`DEFAULT_SIZES`, checks of ``n``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError
from lmgeometry.io.corpus.table import (
    WORD_COLUMNS,
    _hash_texts,
    check_texts,
    word_table,
    word_table_version,
)
from lmgeometry.io.corpus.targets import _check_targets, _flag_targets

__all__ = [
    "Corpus",
    "DEFAULT_SIZES",
    "invisible_words_dropped",
    "sentences",
]


DEFAULT_SIZES: dict[str, int] = {"mnli_polysemy": 1000, "sts": 1000, "semcor_targets": 30}
"""Default ``n`` of each builder (sentences; target words for ``semcor_targets``).

- ``mnli_polysemy``: 1,000 of the 1,842 MNLI dev-matched sentences with a target word
  (19,453 words at seed 0): each of the 51 targets gets 20 or more sentences, or all it has
  (at least 11), and a 12-layer model's hidden states of 20,000 words take about a minute on
  2 CPU cores.
- ``sts``: 1,000 sentences (14,547 words at seed 0) give 369 non-punctuation words with at
  least 5 distinct contexts (Ethayarajh's threshold): enough words for per-word
  self-similarity statistics at the cost of a 1,000-sentence extraction.
- ``semcor_targets``: 30 target lemmas (15 nouns, 15 verbs) with up to 40 sampled
  occurrences each: 1,165 sentences and 35,342 words at seed 0 (SemCor sentences are long),
  1,893 labelled target occurrences.
"""


@dataclass
class Corpus:
    """Sentences and their word table.

    Attributes
    ----------
    name : str
        Builder name (``"mnli_polysemy"``, ``"sts"``, ``"semcor_targets"``, ``"wic"``) or the
        name given to :func:`sentences`.
    sentences : list of str
        The sentences; a word's ``sentence_id`` is an index into this list.
    words : pandas.DataFrame
        One row per word, ordered by ``(sentence_id, word_index)``, with a RangeIndex (row
        ``i`` is the ``i``-th word). Columns: :data:`WORD_COLUMNS` plus builder-specific ones
        (``target`` for the target word each target row belongs to, ``sense_key`` for
        ``semcor_targets``).
    params : dict
        The builder's parameters (JSON-serialisable); part of :meth:`digest`.
    info : dict
        Facts about how the corpus was built (candidate counts, unmapped targets, sources of
        the sentences). Not part of the digest.
    """

    name: str
    sentences: list[str]
    words: pd.DataFrame
    params: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [c for c in WORD_COLUMNS if c not in self.words.columns]
        if missing:
            raise ValueError(f"Corpus {self.name!r}: the word table lacks columns {missing}; "
                             "build word tables with corpus.word_table()")
        if len(self.words) and int(self.words["sentence_id"].max()) >= len(self.sentences):
            raise ValueError(f"Corpus {self.name!r}: the word table refers to sentence "
                             f"{int(self.words['sentence_id'].max())} but there are only "
                             f"{len(self.sentences)} sentences")
        dropped = invisible_words_dropped(self)
        if dropped:
            self.params = {**self.params, "invisible_words_dropped": dropped}
            self.info = {**self.info, "invisible_words_dropped": dropped}

    def digest(self) -> str:
        """sha256 (hex) of the name, the sentences, the params and the word-table version.

        Two corpora with equal digests have identical word tables; a change of the
        tokenisation code, spaCy or its model changes :func:`word_table_version` and so the
        digest (caches keyed by it are invalidated).
        """
        h = hashlib.sha256()
        header = {"name": self.name, "params": self.params, "code": word_table_version()}
        h.update(json.dumps(header, sort_keys=True, default=str).encode("utf-8"))
        _hash_texts(h, self.sentences)
        return h.hexdigest()

    def summary(self) -> dict[str, Any]:
        """Counts worth reporting: sentences, words, target occurrences and target words."""
        w = self.words
        targets = w.loc[w["is_target"], "target"] if "target" in w else pd.Series([], dtype=str)
        return {
            "name": self.name,
            "sentences": len(self.sentences),
            "words": len(w),
            "target_occurrences": int(w["is_target"].sum()),
            "target_words": int(targets.nunique()),
            "params": self.params,
        }


def invisible_words_dropped(corpus: Corpus) -> int:
    """How many tokens of only invisible characters the word table left out.

    Counted from the table itself (runs of non-whitespace characters between words or before
    a sentence's first word), so a subset of a corpus counts its own.

    Parameters
    ----------
    corpus : Corpus

    Returns
    -------
    int
    """
    words = corpus.words
    if not len(words):
        return 0
    between = int(words["whitespace"].str.count(r"\S+").sum())
    first = words.drop_duplicates("sentence_id")
    before = sum(len(re.findall(r"\S+", corpus.sentences[sid][:start]))
                 for sid, start in zip(first["sentence_id"], first["start"], strict=True))
    return between + before


def _check_n(n: Any, where: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise CorpusError(f"{where}: n must be a positive integer, got {n!r}")
    return int(n)


def _too_few(where: str, n: int, available: int, what: str) -> CorpusError:
    return CorpusError(f"{where}: asked for n={n:,} sentences but only {available:,} {what}; "
                       f"pass n <= {available:,} (--n of `lmgeometry extract`)")


def sentences(texts: Sequence[str], name: str = "custom",
              targets: Iterable[str] | None = None) -> Corpus:
    """A corpus of your own sentences.

    Parameters
    ----------
    texts : sequence of str
        One string per sentence, kept exactly as given.
    name : str
        Corpus name (part of the digest).
    targets : iterable of str, optional
        Words to flag: rows whose lowercase lemma or text is one of them get
        ``is_target=True`` and the word in column ``target``.

    Returns
    -------
    Corpus
        ``params = {"targets": [...] or None}``.

    Raises
    ------
    ValueError
        No sentences, or an empty / whitespace-only one.
    """
    texts = check_texts(texts, f"sentences(name={name!r})")
    words = word_table(texts)
    chosen = None if targets is None else _check_targets(targets)
    words["target"] = _flag_targets(words, chosen or [])
    words["is_target"] = words["target"].notna()
    return Corpus(name=name, sentences=texts, words=words, params={"targets": chosen})
