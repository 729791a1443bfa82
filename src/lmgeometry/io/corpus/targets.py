"""Target words: the curated polysemous list and the rows of a word table they flag.

``polysemy_targets.txt`` (in the ``io`` folder) lists the targets of :func:`mnli_polysemy`
with the counts that justified each; :func:`_flag_targets` marks the rows whose lowercase
lemma or text is a target (also for :func:`sentences`' own targets).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError

__all__ = [
    "polysemy_target_table",
    "polysemy_targets",
    "TARGETS_PATH",
]


TARGETS_PATH = Path(__file__).parent.with_name("polysemy_targets.txt")


def polysemy_target_table() -> pd.DataFrame:
    """The curated polysemous target words, with the counts that justified each.

    Returns
    -------
    pandas.DataFrame
        One row per word of ``polysemy_targets.txt``: ``word``, ``noun_senses``,
        ``verb_senses`` (WordNet 3.0 senses, as :func:`lmgeometry.io.lexical.n_senses` counts them)
        and ``mnli_sentences`` (unique MNLI dev-matched sentences in which
        :func:`mnli_polysemy` flags the word). The file's header states the selection rule.
    """
    rows = []
    for line_no, line in enumerate(TARGETS_PATH.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if fields[0] == "word":
            continue
        if len(fields) != 4:
            raise ValueError(f"{TARGETS_PATH}, line {line_no}: expected 4 fields (word "
                             f"noun_senses verb_senses mnli_sentences), got {fields}")
        rows.append((fields[0], int(fields[1]), int(fields[2]), int(fields[3])))
    return pd.DataFrame(rows, columns=["word", "noun_senses", "verb_senses", "mnli_sentences"])


def polysemy_targets() -> list[str]:
    """The curated polysemous target words of :func:`mnli_polysemy` (see the table)."""
    return polysemy_target_table()["word"].tolist()


def _check_targets(targets: Iterable[str] | None) -> list[str]:
    if targets is None:
        return polysemy_targets()
    if isinstance(targets, str):
        raise TypeError("targets must be a list of words, not one string; wrap it: [word]")
    out = sorted({str(t).strip().lower() for t in targets})
    if not out or "" in out:
        raise CorpusError("targets must be a non-empty list of non-empty words")
    bad = [t for t in out if not re.fullmatch(r"[^\W\d_]+", t)]
    if bad:
        raise CorpusError(f"targets must be single alphabetic words (spaCy tokens); got {bad}")
    return out


def _flag_targets(words: pd.DataFrame, targets: Iterable[str]) -> pd.Series:
    """Target word of each row: its lowercase lemma if a target, else its lowercase text if
    a target, else None."""
    targets = set(targets)
    lemma = words["lemma"].str.lower()
    text = words["text"].str.lower()
    out = np.where(lemma.isin(targets), lemma, np.where(text.isin(targets), text, None))
    return pd.Series(out, index=words.index, dtype=object)
