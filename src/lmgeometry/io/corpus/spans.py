"""Character spans of a data set's tokens mapped onto rows of a word table (SemCor's and
WiC's target tokens), and the warning for those that map onto no single word.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

__all__ = []  # private helpers only (the builders of semcor and wic share them)


def _map_spans(words: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Map character spans of data-set tokens onto rows of a word table.

    ``spans`` has ``sentence_id``, ``start``, ``end`` and ``lemma`` (the data set's lemma of
    the token). A span maps to the single word it overlaps; if it overlaps several, to the one
    whose lowercase lemma or text equals ``lemma`` when exactly one does. Returns ``spans``
    with ``row`` (positional row in ``words``, -1 if unmapped) and ``reason`` (None if
    mapped).
    """
    by_sentence = {sid: (g.index.to_numpy(), g["start"].to_numpy(), g["end"].to_numpy())
                   for sid, g in words.groupby("sentence_id", sort=False)}
    lemma_l = words["lemma"].str.lower().to_numpy()
    text_l = words["text"].str.lower().to_numpy()
    rows, reasons = [], []
    for sid, s, e, lem in spans[["sentence_id", "start", "end", "lemma"]].itertuples(
            index=False):
        idx, starts, ends = by_sentence[sid]
        hit = idx[(starts < e) & (ends > s)]
        if len(hit) == 1:
            rows.append(int(hit[0]))
            reasons.append(None)
            continue
        if len(hit) == 0:
            rows.append(-1)
            reasons.append("no spaCy word overlaps the token")
            continue
        same = [int(r) for r in hit if lem and (lemma_l[r] == lem.lower() or
                                                text_l[r] == lem.lower())]
        if len(same) == 1:
            rows.append(same[0])
            reasons.append(None)
        else:
            rows.append(-1)
            reasons.append(f"the token spans {len(hit)} spaCy words "
                           f"({' '.join(text_l[r] for r in hit)}) and none is the lemma")
    out = spans.copy()
    out["row"] = np.asarray(rows, dtype=np.int64)
    out["reason"] = reasons
    # Two data-set tokens on one spaCy word: neither mapping can be trusted.
    dup = out["row"].ge(0) & out["row"].duplicated(keep=False)
    out.loc[dup, "reason"] = "another target token maps to the same spaCy word"
    out.loc[dup, "row"] = -1
    return out


def _warn_unmapped(where: str, unmapped: pd.DataFrame, total: int) -> None:
    if len(unmapped):
        warnings.warn(f"{where}: {len(unmapped)} of {total} target tokens could not be mapped "
                      "to exactly one spaCy word; they are listed in corpus.info"
                      "['unmapped_targets'] and not flagged", stacklevel=3)
